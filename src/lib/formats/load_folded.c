// SPDX-License-Identifier: MIT
/*
 * Folded stacks ("thread;root;...;leaf N", as out_folded.c and FlameGraph's
 * stackcollapse scripts write them) into a profile: the first name is the
 * thread, the others frames, root first; a name ending in "_[k]" is a
 * kernel frame. N goes to the samples column (a folded file does not say
 * what it weighed). Lines sharing a thread name share one thread; there
 * are no times, so the store is all there is.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "load_common.h"

#define MALFORMED (-EVPROF_ERR_MALFORMED)

struct folded_rd {
	struct evprof_profile *p;
	int proc;
	char **names; /* thread names, index = thread */
	size_t nr_names, cap_names;
	char *tmp; /* one name, NUL-terminated */
	size_t cap_tmp;
};

/* Copies [s, e) into r->tmp. Returns it or NULL (ENOMEM). */
static char *name_of(struct folded_rd *r, const char *s, const char *e)
{
	size_t n = (size_t)(e - s);

	if (evprof__vec_grow((void **)&r->tmp, &r->cap_tmp, 1, n + 1, SIZE_MAX))
		return NULL;
	memcpy(r->tmp, s, n);
	r->tmp[n] = 0;
	return r->tmp;
}

static int thread_of(struct folded_rd *r, const char *name)
{
	size_t i;
	int thr;

	/* Few threads in practice: a linear scan beats a map's setup. */
	for (i = 0; i < r->nr_names; i++)
		if (!strcmp(r->names[i], name))
			return (int)i;
	if (evprof__vec_grow((void **)&r->names, &r->cap_names,
			     sizeof(*r->names), r->nr_names + 1, SIZE_MAX))
		return -ENOMEM;
	r->names[r->nr_names] = strdup(name);
	if (!r->names[r->nr_names])
		return -ENOMEM;
	r->nr_names++;
	thr = evprof_profile__add_thread(r->p, r->proc, (int)i, name, 0);
	return thr;
}

/* One line [s, e) without its newline; blank lines are skipped. */
static int read_line(struct folded_rd *r, const char *s, const char *e)
{
	struct evprof_profile_aggregate a = {.stack = -1};
	const char *sp = e, *c, *semi;
	uint64_t n = 0;
	int thr, frame, stack = -1;

	if (s < e && e[-1] == '\r')
		e--;
	if (s == e)
		return 0;
	while (sp > s && sp[-1] != ' ')
		sp--;
	if (sp == e || sp == s)
		return MALFORMED;
	for (c = sp; c < e; c++) {
		if (*c < '0' || *c > '9' || n > (UINT64_MAX - 9) / 10)
			return MALFORMED;
		n = n * 10 + (uint64_t)(*c - '0');
	}
	e = sp - 1; /* the stack, before the space */
	semi = memchr(s, ';', (size_t)(e - s));
	if (!semi)
		semi = e;
	if (!name_of(r, s, semi))
		return -ENOMEM;
	thr = thread_of(r, r->tmp);
	if (thr < 0)
		return thr;
	for (s = semi; s < e; s = semi) {
		struct evprof_profile_frame f = {.lib = -1};
		size_t len;

		s++;
		semi = memchr(s, ';', (size_t)(e - s));
		if (!semi)
			semi = e;
		if (semi == s)
			return MALFORMED;
		if (!name_of(r, s, semi))
			return -ENOMEM;
		len = strlen(r->tmp);
		if (len > 4 && !strcmp(r->tmp + len - 4, "_[k]")) {
			r->tmp[len - 4] = 0;
			f.kernel = true;
		}
		f.function = r->tmp;
		frame = evprof_profile__frame(r->p, &f);
		if (frame < 0)
			return frame;
		stack = evprof_profile__stack(r->p, stack, frame);
		if (stack < 0)
			return stack;
	}
	a.stack = stack;
	a.samples = n;
	return evprof_profile__add_aggregate(r->p, thr, &a);
}

bool evprof__looks_folded(const uint8_t *buf, size_t len)
{
	const uint8_t *nl = memchr(buf, '\n', len), *e = nl ? nl : buf + len;

	if (e > buf && e[-1] == '\r')
		e--;
	/* Text, then " <digits>" at the line's end. */
	if (e - buf < 3 || buf[0] < 0x20 || !(e[-1] >= '0' && e[-1] <= '9'))
		return false;
	while (e > buf && e[-1] >= '0' && e[-1] <= '9')
		e--;
	return e > buf + 1 && e[-1] == ' ';
}

int evprof__load_folded(const char *buf, size_t len,
			struct evprof_profile **out)
{
	struct evprof_profile_opts opts = {.sz = sizeof(opts),
					   .no_timeline = true};
	struct folded_rd r = {.p = evprof_profile__new(&opts)};
	const char *s = buf, *e = buf + len, *nl;
	size_t line = 1, i;
	int err = 0;

	if (!r.p)
		return -ENOMEM;
	r.proc = evprof__load_process(r.p, 0, "folded");
	if (r.proc < 0)
		err = r.proc;
	for (; !err && s < e; line++) {
		nl = memchr(s, '\n', (size_t)(e - s));
		if (!nl)
			nl = e;
		err = read_line(&r, s, nl);
		s = nl < e ? nl + 1 : e;
	}
	if (err == MALFORMED)
		evprof__print(EVPROF_WARN,
			      "folded stacks: line %zu is not 'a;b;c N'\n",
			      line - 1);
	for (i = 0; i < r.nr_names; i++)
		free(r.names[i]);
	free(r.names);
	free(r.tmp);
	if (err) {
		evprof_profile__free(r.p);
		return err;
	}
	*out = r.p;
	return 0;
}
