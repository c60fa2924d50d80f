// SPDX-License-Identifier: MIT
/* perf's JIT map files: reading, ownership check, lookups. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jitmap.h"

#define MAX_JIT_SYMS (1u << 24)

/* A hex number with an optional 0x, ended by a space; NULL when not. */
static const char *parse_hex(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; *p != ' '; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			return NULL;
		if (digits >= 16)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return digits ? p + 1 : NULL;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct evprof__jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Same start: file order, so that the later line wins. */
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * perf reads a JIT map only when it is ours or root's, since anyone can
 * write /tmp; the profiled process's own user may write it too.
 */
static bool jit_owner_ok(uid_t owner, int pid)
{
	char path[32];
	struct stat st;

	if (owner == 0 || owner == geteuid())
		return true;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) == 0 && st.st_uid == owner;
}

/* The lines of f that parse, in file order, names in n; sets *nr. */
static struct evprof__jit_sym *read_lines(struct evprof__names *n, FILE *f,
					  size_t *nr)
{
	struct evprof__jit_sym *syms = NULL, *ns;
	size_t cap = 0, lcap = 0;
	char *line = NULL, *text;
	ssize_t l;

	*nr = 0;
	while ((l = getline(&line, &lcap, f)) > 0) {
		struct evprof__jit_sym js;
		const char *p;

		if (line[l - 1] == '\n')
			line[--l] = '\0';
		p = parse_hex(line, &js.start);
		if (p)
			p = parse_hex(p, &js.size);
		if (!p || !*p || !js.size || js.start + js.size < js.start)
			continue;
		if (*nr == cap) {
			if (cap >= MAX_JIT_SYMS)
				break;
			cap = cap ? cap * 2 : 1024;
			ns = realloc(syms, cap * sizeof(*syms));
			if (!ns)
				goto fail;
			syms = ns;
		}
		text = evprof__names_alloc(n, strlen(p) + 1);
		if (!text)
			goto fail;
		strcpy(text, p);
		js.name = text;
		js.line = *nr;
		syms[(*nr)++] = js;
	}
	free(line);
	return syms;
fail:
	free(line);
	free(syms);
	*nr = 0;
	return NULL;
}

struct evprof__jitmap *evprof__jitmap_load(struct evprof__names *n, int pid,
					   bool *read)
{
	struct evprof__jitmap *jm = NULL;
	struct evprof__jit_sym *syms;
	const char *slash;
	char path[64];
	struct stat st;
	size_t nr;
	FILE *f;
	int fd;

	*read = false;
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !jit_owner_ok(st.st_uid, pid)) {
		pr_warn("symbols: %s is not owned by us, root or the process's "
			"user; JIT frames stay unknown\n",
			path);
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return NULL;
	}
	*read = true;
	syms = read_lines(n, f, &nr);
	fclose(f);
	if (!nr)
		goto out;
	jm = evprof__names_alloc(n, sizeof(*jm));
	if (!jm)
		goto out;
	jm->syms = evprof__names_alloc(n, nr * sizeof(*syms));
	jm->path = evprof__names_intern(n, path);
	if (!jm->syms || !jm->path) {
		jm = NULL;
		goto out;
	}
	qsort(syms, nr, sizeof(*syms), cmp_jit);
	memcpy(jm->syms, syms, nr * sizeof(*syms));
	jm->nr = nr;
	slash = strrchr(jm->path, '/');
	jm->name = slash + 1;
out:
	free(syms);
	return jm;
}

const struct evprof__jit_sym *
evprof__jitmap_find(const struct evprof__jitmap *jm, uint64_t addr)
{
	size_t lo, steps;

	lo = evprof__count_le(jm->syms, jm->nr, sizeof(*jm->syms), addr);
	/* Overlapping entries (code freed and reused) are few: look back. */
	for (steps = 0; lo > 0 && steps < 64; lo--, steps++) {
		const struct evprof__jit_sym *j = &jm->syms[lo - 1];

		if (addr - j->start < j->size)
			return j;
	}
	return NULL;
}

bool evprof__jit_candidate(const char *path)
{
	static const char *const anon[] = {"//anon", "/anon_hugepage",
					   "/dev/zero", "/memfd:"};
	size_t i;

	if (path[0] != '/')
		return strcmp(path, "[vdso]") != 0;
	for (i = 0; i < ARRAY_SIZE(anon); i++)
		if (!strncmp(path, anon[i], strlen(anon[i])))
			return true;
	return false;
}
