// SPDX-License-Identifier: MIT
/* Libs whose unnamed code holds much of a profile: where symbols lack. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* Whether frame f is named by its address: "0x..." or "LIB+0x...". */
static bool unnamed(const struct evprof_profile *p,
		    const struct evprof__frame *f)
{
	const char *fn = evprof__pstr(p, p->funcs[f->func].name);
	const char *lib = evprof__pstr(p, p->libs[f->lib].name);
	size_t n = strlen(lib);

	return !strncmp(fn, "0x", 2) ||
	       (!strncmp(fn, lib, n) && !strncmp(fn + n, "+0x", 3));
}

static int by_weight(const void *a, const void *b, void *ctx)
{
	const uint64_t *w = ctx;
	uint64_t x = w[*(const uint32_t *)a], y = w[*(const uint32_t *)b];

	return x > y ? -1 : x < y;
}

int evprof_profile__unnamed_libs(const struct evprof_profile *p,
				 const char *column, double min_share,
				 struct evprof_profile_unnamed *out, size_t max)
{
	uint64_t *w, all = 0;
	uint32_t *order;
	size_t n = 0;
	int col;

	if (!p || (max && !out))
		return -EINVAL;
	/* As the report's sort column. */
	if (!column)
		col = p->has_cpu ? COL_CPU : COL_SAMPLES;
	else if (!strcmp(column, "cpu-ms"))
		col = COL_CPU;
	else
		col = evprof__profile_column(p, column);
	if (col < 0)
		return col;
	w = calloc(p->nr_libs + 1, sizeof(*w));
	order = malloc((p->nr_libs + 1) * sizeof(*order));
	if (!w || !order) {
		free(w);
		free(order);
		return -ENOMEM;
	}
	for (size_t i = 0; i < p->store.n; i++) {
		uint64_t v = evprof__entry_vals(p, i)[col];
		int32_t st = p->store.e[i].stack;
		const struct evprof__frame *f;

		all += v;
		if (st < 0)
			continue;
		f = &p->frames[p->stacks[st].frame];
		if (f->lib >= 0 && !f->kernel && unnamed(p, f))
			w[f->lib] += v;
	}
	for (uint32_t i = 0; i < p->nr_libs; i++)
		if (all && w[i] && (double)w[i] >= min_share * (double)all)
			order[n++] = i;
	qsort_r(order, n, sizeof(*order), by_weight, w);
	for (size_t i = 0; i < n && i < max; i++) {
		const struct evprof__lib *l = &p->libs[order[i]];

		out[i] = (struct evprof_profile_unnamed){
		    .lib = (int)order[i],
		    .path = l->path,
		    .name = evprof__pstr(p, l->name),
		    .build_id = l->build_id_len ? l->build_id : NULL,
		    .build_id_len = l->build_id_len,
		    .column = col == COL_CPU	   ? "cpu"
			      : col == COL_SAMPLES ? "samples"
						   : column,
		    .share = (double)w[order[i]] / (double)all,
		};
	}
	free(w);
	free(order);
	return (int)n;
}
