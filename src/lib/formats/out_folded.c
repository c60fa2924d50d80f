// SPDX-License-Identifier: MIT
/*
 * Folded stacks ("thread;root;...;leaf N"), the input of FlameGraph's
 * flamegraph.pl and of many other tools.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "folded.h"
#include "json.h"
#include "profile/profile.h"

/* Appends name with the separators of the format replaced. */
static int put_name(struct evprof__folded *f, const char *name,
		    const char *suffix)
{
	size_t n = strlen(name), k = strlen(suffix), i;
	char *d;

	if (evprof__vec_grow((void **)&f->arena, &f->arena_cap, 1,
			     f->arena_len + n + k + 2, SIZE_MAX))
		return -ENOMEM;
	d = f->arena + f->arena_len;
	for (i = 0; i < n; i++) {
		char c = name[i];

		d[i] = c == ';' || c == '\n' || c == '\r' ? '_' : c;
	}
	memcpy(d + n, suffix, k);
	f->arena_len += n + k;
	return 0;
}

static int add_line(struct evprof__folded *f, const char *thread, int32_t stack,
		    uint64_t sum)
{
	const struct evprof_profile *p = f->p;
	size_t depth = 0, off = f->arena_len;
	int err;

	for (; stack >= 0; stack = p->stacks[stack].parent)
		f->chain[depth++] = p->stacks[stack].frame;
	err = put_name(f, thread, "");
	while (!err && depth--) {
		const struct evprof__frame *fr = &p->frames[f->chain[depth]];

		f->arena[f->arena_len++] = ';';
		err = put_name(f, evprof__pstr(p, p->funcs[fr->func].name),
			       fr->kernel ? "_[k]" : "");
	}
	if (err ||
	    evprof__vec_grow((void **)&f->lines, &f->cap_lines,
			     sizeof(*f->lines), f->nr_lines + 1, SIZE_MAX))
		return -ENOMEM;
	f->arena[f->arena_len++] = 0;
	f->lines[f->nr_lines++] = (struct evprof__folded_line){off, sum};
	return 0;
}

/* Sums thread t's store entries into f->sum per stack. */
static void accumulate(struct evprof__folded *f, const struct evprof__thread *t)
{
	const struct evprof_profile *p = f->p;
	int64_t i;

	for (i = t->first_entry; i >= 0; i = p->store.e[i].next) {
		uint32_t slot = (uint32_t)(p->store.e[i].stack + 1);

		if (f->mark[slot] != f->group) {
			f->mark[slot] = f->group;
			f->touched[f->nr_touched++] = slot;
		}
		f->sum[slot] += evprof__entry_vals(p, (size_t)i)[f->col];
	}
}

static int cmp_name(const void *a, const void *b, void *ctx)
{
	const struct evprof_profile *p = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	int c = strcmp(p->threads[x].name, p->threads[y].name);

	return c ? c : (x < y ? -1 : x > y);
}

static int cmp_line(const void *a, const void *b, void *ctx)
{
	const char *arena = ctx;

	return strcmp(arena + ((const struct evprof__folded_line *)a)->off,
		      arena + ((const struct evprof__folded_line *)b)->off);
}

int evprof__fold(struct evprof__folded *f)
{
	const struct evprof_profile *p = f->p;
	size_t nslots = p->nr_stacks + 1, i, k, start;
	uint32_t *order;
	int err = 0;

	order = malloc((p->nr_threads + 1) * sizeof(*order));
	f->sum = calloc(nslots, sizeof(*f->sum));
	f->mark = calloc(nslots, sizeof(*f->mark));
	f->touched = malloc(nslots * sizeof(*f->touched));
	f->chain = malloc(nslots * sizeof(*f->chain));
	if (!order || !f->sum || !f->mark || !f->touched || !f->chain) {
		free(order);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_threads; i++)
		order[i] = (uint32_t)i;
	if (p->nr_threads)
		qsort_r(order, p->nr_threads, sizeof(*order), cmp_name,
			(void *)p);

	/* Threads sharing a name share lines, as in stackcollapse-perf. */
	for (start = 0; start < p->nr_threads && !err; start = i) {
		const char *name = p->threads[order[start]].name;

		f->nr_touched = 0;
		f->group++;
		for (i = start; i < p->nr_threads &&
				!strcmp(p->threads[order[i]].name, name);
		     i++)
			accumulate(f, &p->threads[order[i]]);
		for (k = 0; k < f->nr_touched; k++) {
			uint32_t slot = f->touched[k];

			if (!err && f->sum[slot])
				err = add_line(f, name, (int32_t)slot - 1,
					       f->sum[slot]);
			f->sum[slot] = 0;
		}
	}
	free(order);
	if (err)
		return err;

	/* Different frames (addresses, libs) can print the same text. */
	if (!f->nr_lines)
		return 0; /* qsort_r wants a non-NULL base even for 0 */
	qsort_r(f->lines, f->nr_lines, sizeof(*f->lines), cmp_line, f->arena);
	for (i = 0, k = 0; i < f->nr_lines; i++) {
		if (k && !strcmp(f->arena + f->lines[k - 1].off,
				 f->arena + f->lines[i].off))
			f->lines[k - 1].sum += f->lines[i].sum;
		else
			f->lines[k++] = f->lines[i];
	}
	f->nr_lines = k;
	return 0;
}

void evprof__fold_fini(struct evprof__folded *f)
{
	free(f->arena);
	free(f->lines);
	free(f->sum);
	free(f->mark);
	free(f->touched);
	free(f->chain);
}

static int write_folded(const struct evprof_profile *p,
			struct evprof__sink *out,
			const struct evprof_folded_opts *opts)
{
	const char *wname = EVPROF_OPTS_GET(opts, weight_counter, NULL);
	struct evprof__folded f = {.p = p, .col = COL_SAMPLES};
	size_t i;
	int err;

	if (wname) {
		f.col = evprof__profile_column(p, wname);
		if (f.col < 0)
			return -ENOENT;
	}
	err = evprof__fold(&f);
	for (i = 0; !err && i < f.nr_lines; i++) {
		const char *text = f.arena + f.lines[i].off;

		evprof__sink_write(out, text, strlen(text));
		evprof__sink_putc(out, ' ');
		evprof__sink_u64(out, f.lines[i].sum);
		evprof__sink_putc(out, '\n');
		err = out->err;
	}
	evprof__fold_fini(&f);
	return err;
}

int evprof_profile__write_folded(const struct evprof_profile *p,
				 const char *path,
				 const struct evprof_folded_opts *opts)
{
	struct evprof__sink out;
	int err, cerr;

	if (!p || !path || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	if (EVPROF_OPTS_GET(opts, weight_counter, NULL) &&
	    evprof__profile_column(p, opts->weight_counter) < 0)
		return -ENOENT;
	err = evprof__sink_open(&out, path);
	if (err)
		return err;
	err = write_folded(p, &out, opts);
	cerr = evprof__sink_close(&out, !err);
	return err ? err : cerr;
}

int evprof_profile__write_folded_file(const struct evprof_profile *p, FILE *fp,
				      const struct evprof_folded_opts *opts)
{
	struct evprof__sink out;
	int err, cerr;

	if (!p || !fp || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	err = evprof__sink_open_file(&out, fp);
	if (err)
		return err;
	err = write_folded(p, &out, opts);
	cerr = evprof__sink_close(&out, !err);
	return err ? err : cerr;
}
