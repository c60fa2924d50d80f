// SPDX-License-Identifier: MIT
/* Per-function self and total sums of a profile's store. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "funcs.h"

static int cmp_func(const void *a, const void *b, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__func *x = &p->funcs[*(const uint32_t *)a];
	const struct evprof__func *y = &p->funcs[*(const uint32_t *)b];
	int c = strcmp(evprof__pstr(p, x->name), evprof__pstr(p, y->name));

	if (c)
		return c;
	return x->lib < y->lib ? -1 : x->lib > y->lib;
}

int evprof__funcs_init(struct evprof__funcs *fs, const struct evprof_profile *p)
{
	size_t n = p->nr_funcs, i;
	uint32_t *idx = malloc((n + 1) * sizeof(*idx));

	memset(fs, 0, sizeof(*fs));
	fs->p = p;
	fs->nv = COL_COUNTERS + p->nr_counters + p->nr_weights;
	fs->group_of = malloc((n + 1) * sizeof(*fs->group_of));
	fs->rep = malloc((n + 1) * sizeof(*fs->rep));
	fs->kernel = calloc(n + 1, sizeof(*fs->kernel));
	if (!idx || !fs->group_of || !fs->rep || !fs->kernel) {
		free(idx);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof(*idx), cmp_func, (void *)p);
	for (i = 0; i < n; i++) {
		if (!i || cmp_func(&idx[i - 1], &idx[i], (void *)p))
			fs->rep[fs->n++] = idx[i];
		fs->group_of[idx[i]] = (uint32_t)fs->n - 1;
	}
	for (i = 0; i < p->nr_frames; i++)
		if (p->frames[i].kernel)
			fs->kernel[fs->group_of[p->frames[i].func]] = true;
	free(idx);
	fs->self = calloc((fs->n + 1) * fs->nv, sizeof(uint64_t));
	fs->total = calloc((fs->n + 1) * fs->nv, sizeof(uint64_t));
	fs->all = calloc(fs->nv, sizeof(uint64_t));
	fs->mark = calloc(fs->n + 1, sizeof(uint32_t));
	if (!fs->self || !fs->total || !fs->all || !fs->mark)
		return -ENOMEM;
	return 0;
}

void evprof__funcs_add_thread(struct evprof__funcs *fs, size_t thr)
{
	const struct evprof_profile *p = fs->p;
	uint32_t nv = fs->nv, i;
	int64_t k;

	for (k = p->threads[thr].first_entry; k >= 0; k = p->store.e[k].next) {
		const uint64_t *v = evprof__entry_vals(p, (size_t)k);
		int32_t st = p->store.e[k].stack;
		bool leaf = true;

		for (i = 0; i < nv; i++)
			fs->all[i] += v[i];
		/* A function counts once per stack, however deep it recurses. */
		if (!++fs->stamp) {
			memset(fs->mark, 0, fs->n * sizeof(*fs->mark));
			fs->stamp = 1;
		}
		for (; st >= 0; st = p->stacks[st].parent, leaf = false) {
			uint32_t g =
			    fs->group_of[p->frames[p->stacks[st].frame].func];

			if (leaf)
				for (i = 0; i < nv; i++)
					fs->self[g * nv + i] += v[i];
			if (fs->mark[g] == fs->stamp)
				continue;
			fs->mark[g] = fs->stamp;
			for (i = 0; i < nv; i++)
				fs->total[g * nv + i] += v[i];
		}
	}
}

void evprof__funcs_reset(struct evprof__funcs *fs)
{
	size_t n = (fs->n + 1) * fs->nv;

	memset(fs->self, 0, n * sizeof(*fs->self));
	memset(fs->total, 0, n * sizeof(*fs->total));
	memset(fs->all, 0, fs->nv * sizeof(*fs->all));
}

void evprof__funcs_fini(struct evprof__funcs *fs)
{
	free(fs->group_of);
	free(fs->rep);
	free(fs->kernel);
	free(fs->self);
	free(fs->total);
	free(fs->all);
	free(fs->mark);
	memset(fs, 0, sizeof(*fs));
}

const char *evprof__funcs_name(const struct evprof__funcs *fs, size_t g)
{
	return evprof__pstr(fs->p, fs->p->funcs[fs->rep[g]].name);
}

const char *evprof__funcs_lib(const struct evprof__funcs *fs, size_t g)
{
	const struct evprof_profile *p = fs->p;
	int32_t lib = p->funcs[fs->rep[g]].lib;

	if (lib >= 0)
		return evprof__pstr(p, p->libs[lib].name);
	return fs->kernel[g] ? "[kernel]" : "[?]";
}
