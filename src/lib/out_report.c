// SPDX-License-Identifier: MIT
/*
 * Text report: top functions by self and by total value of one column
 * (samples, CPU time or a counter), with every counter's self value and
 * ratios between counters per function. A function is a name in a lib.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

enum { COL_SAMPLES, COL_CPU, COL_COUNTERS };

/* A ratio column: num / den * scale, from self values. */
struct ratio {
	char label[48];
	int num, den; /* value columns; den COL_CPU: per second of CPU */
	double scale;
};

struct rep {
	const struct evprof_profile *p;
	FILE *f;
	uint32_t nv;	     /* value columns */
	int sort;	     /* value column sorted by */
	uint32_t *group_of;  /* per func: function group */
	uint32_t *group_rep; /* per group: a func of it */
	bool *group_kernel;
	size_t nr_groups;
	uint64_t *self, *total; /* nr_groups * nv */
	uint64_t *all;		/* nv: every sample */
	uint32_t *mark;		/* per group: sample stamp */
	uint32_t stamp;
	struct ratio ratios[EVPROF_PROFILE_MAX_COUNTERS + 1];
	size_t nr_ratios;
	uint32_t *order;
};

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

/* Functions that differ only by source file are one (name, lib). */
static int build_groups(struct rep *r)
{
	const struct evprof_profile *p = r->p;
	size_t n = p->nr_funcs, i;
	uint32_t *idx = malloc((n + 1) * sizeof(*idx));

	r->group_of = malloc((n + 1) * sizeof(*r->group_of));
	r->group_rep = malloc((n + 1) * sizeof(*r->group_rep));
	r->group_kernel = calloc(n + 1, sizeof(*r->group_kernel));
	if (!idx || !r->group_of || !r->group_rep || !r->group_kernel) {
		free(idx);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, n, sizeof(*idx), cmp_func, (void *)p);
	for (i = 0; i < n; i++) {
		if (!i || cmp_func(&idx[i - 1], &idx[i], (void *)p))
			r->group_rep[r->nr_groups++] = idx[i];
		r->group_of[idx[i]] = (uint32_t)r->nr_groups - 1;
	}
	for (i = 0; i < p->nr_frames; i++)
		if (p->frames[i].kernel)
			r->group_kernel[r->group_of[p->frames[i].func]] = true;
	free(idx);
	r->self = calloc((r->nr_groups + 1) * r->nv, sizeof(uint64_t));
	r->total = calloc((r->nr_groups + 1) * r->nv, sizeof(uint64_t));
	r->all = calloc(r->nv, sizeof(uint64_t));
	r->mark = calloc(r->nr_groups + 1, sizeof(uint32_t));
	r->order = malloc((r->nr_groups + 1) * sizeof(uint32_t));
	if (!r->self || !r->total || !r->all || !r->mark || !r->order)
		return -ENOMEM;
	return 0;
}

static void add_thread(struct rep *r, const struct evprof__thread *t)
{
	const struct evprof_profile *p = r->p;
	const struct evprof__samples *s = &t->s;
	uint32_t nc = p->nr_counters, nv = r->nv, i;
	uint64_t v[2 + EVPROF_PROFILE_MAX_COUNTERS];
	size_t k;

	for (k = 0; k < s->n; k++) {
		int32_t st = s->stack[k];
		bool leaf = true;

		v[COL_SAMPLES] = s->weight[k];
		v[COL_CPU] = s->cpu[k];
		for (i = 0; i < nc; i++)
			v[COL_COUNTERS + i] =
			    s->has[k] >> i & 1 ? s->vals[k * nc + i] : 0;
		for (i = 0; i < nv; i++)
			r->all[i] += v[i];
		/* A function counts once per sample, however deep it recurses.
		 */
		if (!++r->stamp) {
			memset(r->mark, 0, r->nr_groups * sizeof(*r->mark));
			r->stamp = 1;
		}
		for (; st >= 0; st = p->stacks[st].parent, leaf = false) {
			uint32_t g =
			    r->group_of[p->frames[p->stacks[st].frame].func];

			if (leaf)
				for (i = 0; i < nv; i++)
					r->self[g * nv + i] += v[i];
			if (r->mark[g] == r->stamp)
				continue;
			r->mark[g] = r->stamp;
			for (i = 0; i < nv; i++)
				r->total[g * nv + i] += v[i];
		}
	}
}

struct sort_ctx {
	const struct rep *r;
	const uint64_t *by;
	const uint64_t *then;
};

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct sort_ctx *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	size_t nv = c->r->nv, s = (size_t)c->r->sort;
	uint64_t bx = c->by[x * nv + s], by = c->by[y * nv + s];
	uint64_t tx = c->then[x * nv + s], ty = c->then[y * nv + s];
	const struct evprof_profile *p = c->r->p;

	if (bx != by)
		return bx > by ? -1 : 1;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return strcmp(evprof__pstr(p, p->funcs[c->r->group_rep[x]].name),
		      evprof__pstr(p, p->funcs[c->r->group_rep[y]].name));
}

static const char *col_name(const struct rep *r, int c)
{
	if (c == COL_SAMPLES)
		return "samples";
	if (c == COL_CPU)
		return "cpu-ms";
	return r->p->counters[c - COL_COUNTERS];
}

static void print_value(const struct rep *r, int c, uint64_t v)
{
	if (c == COL_CPU)
		fprintf(r->f, " %14.3f", (double)v / 1e6);
	else
		fprintf(r->f, " %14" PRIu64, v);
}

static void print_pct(const struct rep *r, uint64_t v, uint64_t all)
{
	fprintf(r->f, " %6.2f%%", all ? 100.0 * (double)v / (double)all : 0.0);
}

static void print_table(struct rep *r, const char *title, bool by_total,
			unsigned top)
{
	const struct evprof_profile *p = r->p;
	struct sort_ctx sc = {r, by_total ? r->total : r->self,
			      by_total ? r->self : r->total};
	uint64_t all = r->all[r->sort];
	size_t n = 0, i, k;
	uint32_t c;

	for (i = 0; i < r->nr_groups; i++)
		if (r->total[i * r->nv + COL_SAMPLES])
			r->order[n++] = (uint32_t)i;
	qsort_r(r->order, n, sizeof(*r->order), cmp_rows, &sc);
	if (top && n > top)
		n = top;
	fprintf(r->f, "\n%s %s:\n%8s %14s %8s %14s", title,
		col_name(r, r->sort), "self%", "self", "total%", "total");
	for (c = 0; c < r->nv; c++)
		fprintf(r->f, " %14s", col_name(r, (int)c));
	for (k = 0; k < r->nr_ratios; k++)
		fprintf(r->f, " %14s", r->ratios[k].label);
	fprintf(r->f, "  function [lib]\n");
	for (i = 0; i < n; i++) {
		uint32_t g = r->order[i];
		const uint64_t *s = &r->self[g * r->nv];
		const uint64_t *t = &r->total[g * r->nv];
		const struct evprof__func *fn = &p->funcs[r->group_rep[g]];
		const char *lib;

		print_pct(r, s[r->sort], all);
		print_value(r, r->sort, s[r->sort]);
		print_pct(r, t[r->sort], all);
		print_value(r, r->sort, t[r->sort]);
		for (c = 0; c < r->nv; c++)
			print_value(r, (int)c, s[c]);
		for (k = 0; k < r->nr_ratios; k++) {
			const struct ratio *q = &r->ratios[k];

			if (s[q->den])
				fprintf(r->f, " %14.3f",
					(double)s[q->num] * q->scale /
					    (double)s[q->den]);
			else
				fprintf(r->f, " %14s", "-");
		}
		lib = fn->lib >= 0 ? evprof__pstr(p, p->libs[fn->lib].name)
		      : r->group_kernel[g] ? "[kernel]"
					   : "[?]";
		fprintf(r->f, *lib == '[' ? "  %s %s\n" : "  %s [%s]\n",
			evprof__pstr(p, fn->name), lib);
	}
}

/* Ratios where both counters exist, as perf stat derives them. */
static void find_ratios(struct rep *r, bool cpu)
{
	const struct evprof_profile *p = r->p;
	int cyc = evprof__profile_counter(p, "cycles");
	int ins = evprof__profile_counter(p, "instructions");
	uint32_t i;

	struct ratio *q;

	if (cyc >= 0 && ins >= 0) {
		q = &r->ratios[r->nr_ratios++];
		*q = (struct ratio){"", COL_COUNTERS + ins, COL_COUNTERS + cyc,
				    1};
		snprintf(q->label, sizeof(q->label), "insn/cycle");
	}
	for (i = 0; i < p->nr_counters; i++) {
		const char *n = p->counters[i];
		size_t len = strlen(n);

		q = &r->ratios[r->nr_ratios];
		if (ins >= 0 && len > 6 && !strcmp(n + len - 6, "misses")) {
			*q = (struct ratio){"", COL_COUNTERS + (int)i,
					    COL_COUNTERS + ins, 1000};
			snprintf(q->label, sizeof(q->label), "%.40s/kinsn", n);
		} else if (cpu && len >= 6 && !strcmp(n + len - 6, "faults")) {
			*q = (struct ratio){"", COL_COUNTERS + (int)i, COL_CPU,
					    1e9};
			snprintf(q->label, sizeof(q->label), "%.40s/cpu-s", n);
		} else {
			continue;
		}
		r->nr_ratios++;
	}
}

static void reset(struct rep *r)
{
	size_t n = (r->nr_groups + 1) * r->nv;

	memset(r->self, 0, n * sizeof(*r->self));
	memset(r->total, 0, n * sizeof(*r->total));
	memset(r->all, 0, r->nv * sizeof(*r->all));
}

static void print_head(struct rep *r)
{
	fprintf(r->f, "total:");
	for (uint32_t c = 0; c < r->nv; c++) {
		fprintf(r->f, " %s=", col_name(r, (int)c));
		if (c == COL_CPU)
			fprintf(r->f, "%.3f", (double)r->all[c] / 1e6);
		else
			fprintf(r->f, "%" PRIu64, r->all[c]);
	}
	fputc('\n', r->f);
}

static int report(struct rep *r, const struct evprof_report_opts *opts)
{
	const struct evprof_profile *p = r->p;
	unsigned top = EVPROF_OPTS_GET(opts, top, 0);
	size_t i;
	int err = build_groups(r);

	if (err)
		return err;
	fprintf(r->f, "# evprof report: %zu threads, sorted by %s\n",
		p->nr_threads, col_name(r, r->sort));
	for (i = 0; i < p->nr_notes; i++)
		fprintf(r->f, "# note: %s\n", p->notes[i]);
	if (!EVPROF_OPTS_GET(opts, per_thread, false)) {
		for (i = 0; i < p->nr_threads; i++)
			add_thread(r, &p->threads[i]);
		print_head(r);
		print_table(r, "by self", false, top);
		print_table(r, "by total", true, top);
		return 0;
	}
	for (i = 0; i < p->nr_threads; i++) {
		const struct evprof__thread *t = &p->threads[i];

		reset(r);
		add_thread(r, t);
		fprintf(r->f, "\n== thread %s pid=%d tid=%d\n", t->name,
			p->procs[t->proc].pid, t->tid);
		print_head(r);
		print_table(r, "by self", false, top);
		print_table(r, "by total", true, top);
	}
	return 0;
}

int evprof_profile__write_report(const struct evprof_profile *p, FILE *f,
				 const struct evprof_report_opts *opts)
{
	const char *sort = EVPROF_OPTS_GET(opts, sort, NULL);
	struct rep r = {.p = p, .f = f};
	bool cpu;
	int err;

	if (!p || !f || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	cpu = evprof__profile_has_cpu(p);
	r.nv = COL_COUNTERS + p->nr_counters;
	if (!sort)
		r.sort = cpu ? COL_CPU : COL_SAMPLES;
	else if (!strcmp(sort, "samples"))
		r.sort = COL_SAMPLES;
	else if (!strcmp(sort, "cpu") || !strcmp(sort, "cpu-ms"))
		r.sort = COL_CPU;
	else if ((r.sort = evprof__profile_counter(p, sort)) >= 0)
		r.sort += COL_COUNTERS;
	else
		return -ENOENT;
	find_ratios(&r, cpu);
	err = report(&r, opts);
	free(r.group_of);
	free(r.group_rep);
	free(r.group_kernel);
	free(r.self);
	free(r.total);
	free(r.all);
	free(r.mark);
	free(r.order);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}
