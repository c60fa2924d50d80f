// SPDX-License-Identifier: MIT
/*
 * Text report: top functions by self and by total value of one column
 * (samples, CPU time or a counter), with every counter's self value and
 * ratios between counters per function. A function is a name in a lib.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/cgroup.h>

#include "profile/profile.h"

/* A ratio column: num / den * scale, from self values. */
struct ratio {
	char label[48];
	int num, den; /* value columns; den COL_CPU: per second of CPU */
	double scale;
};

struct rep {
	const struct evprof_profile *p;
	FILE *f;
	uint32_t nv;		 /* value columns */
	int sort;		 /* value column sorted by */
	struct evprof__funcs fs; /* per-function sums */
	struct ratio ratios[EVPROF_PROFILE_MAX_COUNTERS + 1];
	char weight_label[EVPROF_PROFILE_MAX_WEIGHTS][48]; /* "<name>-ms" */
	size_t nr_ratios;
	uint32_t *order;
};

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

	if (bx != by)
		return bx > by ? -1 : 1;
	if (tx != ty)
		return tx > ty ? -1 : 1;
	return strcmp(evprof__funcs_name(&c->r->fs, x),
		      evprof__funcs_name(&c->r->fs, y));
}

/* Whether column c is a time in ns, printed in ms. */
static bool is_time(const struct rep *r, int c)
{
	return c == COL_CPU || c >= COL_COUNTERS + (int)r->p->nr_counters;
}

static const char *col_name(const struct rep *r, int c)
{
	int nc = (int)r->p->nr_counters;

	if (c == COL_SAMPLES)
		return "samples";
	if (c == COL_CPU)
		return "cpu-ms";
	if (c < COL_COUNTERS + nc)
		return r->p->counters[c - COL_COUNTERS];
	return r->weight_label[c - COL_COUNTERS - nc];
}

static void print_value(const struct rep *r, int c, uint64_t v)
{
	if (is_time(r, c))
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
	const struct evprof__funcs *fs = &r->fs;
	struct sort_ctx sc = {r, by_total ? fs->total : fs->self,
			      by_total ? fs->self : fs->total};
	uint64_t all = fs->all[r->sort];
	size_t n = 0, i, k;
	uint32_t c;

	for (i = 0; i < fs->n; i++)
		if (fs->total[i * r->nv + COL_SAMPLES] ||
		    fs->total[i * r->nv + (size_t)r->sort])
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
		const uint64_t *s = &fs->self[g * r->nv];
		const uint64_t *t = &fs->total[g * r->nv];
		const char *lib = evprof__funcs_lib(fs, g);

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
		fprintf(r->f, *lib == '[' ? "  %s %s\n" : "  %s [%s]\n",
			evprof__funcs_name(fs, g), lib);
	}
}

/*
 * The first instructions counter with a cycles counter of the same
 * modifiers ("instructions:u" and "cycles:u"): *ins and *cyc, or -1.
 */
static void ipc_pair(const struct evprof_profile *p, int *ins, int *cyc)
{
	char name[64];

	*ins = *cyc = -1;
	for (uint32_t i = 0; i < p->nr_counters; i++) {
		const char *n = p->counters[i];

		if (strncmp(n, "instructions", 12) ||
		    (n[12] && n[12] != ':' && n[12] != '/'))
			continue;
		snprintf(name, sizeof(name), "cycles%s", n + 12);
		*cyc = evprof__profile_counter(p, name);
		if (*cyc >= 0) {
			*ins = (int)i;
			return;
		}
	}
}

/* Ratios where both counters exist, as perf stat derives them. */
static void find_ratios(struct rep *r, bool cpu)
{
	const struct evprof_profile *p = r->p;
	int cyc, ins;
	uint32_t i;

	struct ratio *q;

	ipc_pair(p, &ins, &cyc);
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

static void print_head(struct rep *r)
{
	fprintf(r->f, "total:");
	for (uint32_t c = 0; c < r->nv; c++) {
		fprintf(r->f, " %s=", col_name(r, (int)c));
		if (is_time(r, (int)c))
			fprintf(r->f, "%.3f", (double)r->fs.all[c] / 1e6);
		else
			fprintf(r->f, "%" PRIu64, r->fs.all[c]);
	}
	fputc('\n', r->f);
}

/*
 * A thread's cgroup on its header: the path, and what it names, the
 * container's id in 12 hex digits as docker ps shows it.
 */
static void print_cgroup(const struct rep *r, const char *path)
{
	struct evprof_container c;

	if (!path)
		return;
	fprintf(r->f, " cgroup=%s", path);
	evprof_cgroup__container(path, &c);
	if (c.runtime)
		fprintf(r->f, " container=%.12s%s%s", c.id,
			*c.runtime ? " runtime=" : "", c.runtime);
	if (c.pod_uid[0])
		fprintf(r->f, " pod_uid=%s", c.pod_uid);
	if (c.qos)
		fprintf(r->f, " qos_class=%s", c.qos);
}

static int report(struct rep *r, const struct evprof_report_opts *opts)
{
	const struct evprof_profile *p = r->p;
	unsigned top = EVPROF_OPTS_GET(opts, top, 0);
	size_t i;
	int err = evprof__funcs_init(&r->fs, p);

	if (err)
		return err;
	r->order = malloc((r->fs.n + 1) * sizeof(*r->order));
	if (!r->order)
		return -ENOMEM;
	fprintf(r->f, "# evprof report: %zu threads, sorted by %s\n",
		p->nr_threads, col_name(r, r->sort));
	for (i = 0; i < p->nr_notes; i++)
		fprintf(r->f, "# note: %s\n", p->notes[i]);
	if (!EVPROF_OPTS_GET(opts, per_thread, false)) {
		for (i = 0; i < p->nr_threads; i++)
			evprof__funcs_add_thread(&r->fs, i);
		print_head(r);
		print_table(r, "by self", false, top);
		print_table(r, "by total", true, top);
		return 0;
	}
	for (i = 0; i < p->nr_threads; i++) {
		const struct evprof__thread *t = &p->threads[i];

		evprof__funcs_reset(&r->fs);
		evprof__funcs_add_thread(&r->fs, i);
		fprintf(r->f, "\n== thread %s pid=%d tid=%d", t->name,
			p->procs[t->proc].pid, t->tid);
		if (t->ns_pid)
			fprintf(r->f, " ns_pid=%d", t->ns_pid);
		if (t->ns_tid)
			fprintf(r->f, " ns_tid=%d", t->ns_tid);
		print_cgroup(r, t->cgroup);
		fputc('\n', r->f);
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
	uint32_t i;
	int err;

	if (!p || !f || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	cpu = p->has_cpu;
	r.nv = COL_COUNTERS + p->nr_counters + p->nr_weights;
	for (i = 0; i < p->nr_weights; i++)
		snprintf(r.weight_label[i], sizeof(r.weight_label[i]),
			 "%.40s-ms", p->weights[i]);
	if (!sort)
		r.sort = cpu ? COL_CPU : COL_SAMPLES;
	else if (!strcmp(sort, "cpu-ms"))
		r.sort = COL_CPU;
	else if ((r.sort = evprof__profile_column(p, sort)) < 0)
		return -ENOENT;
	find_ratios(&r, cpu);
	err = report(&r, opts);
	evprof__funcs_fini(&r.fs);
	free(r.order);
	if (!err && (fflush(f) || ferror(f)))
		err = -EIO;
	return err;
}
