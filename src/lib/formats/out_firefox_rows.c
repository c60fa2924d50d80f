// SPDX-License-Identifier: MIT
/*
 * The sample rows of the Firefox writer's tracks: a thread's timeline in
 * time order, its store entries where there is none, a counter track's
 * rows that moved the counter, a weight track's waits in time order (or
 * its store entries, for a profile without them).
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdlib.h>

#include "out_firefox.h"

/* Store column of what rows of r give: samples, or a weight type. */
static size_t rows_col(const struct evprof_profile *p, int wtype)
{
	return wtype < 0 ? COL_SAMPLES
			 : COL_COUNTERS + p->nr_counters + (size_t)wtype;
}

static int cmp_wait(const void *a, const void *b, void *ctx)
{
	const struct evprof__wait *w = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (w[x].start_ns != w[y].start_ns)
		return w[x].start_ns < w[y].start_ns ? -1 : 1;
	return x < y ? -1 : x > y;
}

int evprof__fx_wait_order(const struct evprof_profile *p, int thr, int wtype,
			  uint32_t **out, size_t *n)
{
	const struct evprof__thread *t = &p->threads[thr];
	uint32_t *o;
	size_t i;

	*out = NULL;
	*n = 0;
	if (!t->nr_waits)
		return 0;
	o = malloc(t->nr_waits * sizeof(*o));
	if (!o)
		return -ENOMEM;
	for (i = 0; i < t->nr_waits; i++)
		if (wtype < 0 || t->waits[i].wtype == (uint32_t)wtype)
			o[(*n)++] = (uint32_t)i;
	if (*n)
		qsort_r(o, *n, sizeof(*o), cmp_wait, t->waits);
	*out = o;
	return 0;
}

int evprof__fx_rows_open(struct fx_rows *r, const struct evprof_profile *p,
			 int thr, int wtype, int ctr)
{
	int err;

	*r = (struct fx_rows){.p = p,
			      .t = &p->threads[thr],
			      .entry = p->threads[thr].first_entry,
			      .wtype = wtype,
			      .ctr = ctr};
	if (wtype >= 0) {
		err = evprof__fx_wait_order(p, thr, wtype, &r->waits,
					    &r->nr_waits);
		if (!err && !r->nr_waits) {
			free(r->waits);
			r->waits = NULL;
		}
		return err;
	}
	if (!p->timeline)
		return 0;
	r->tl = evprof_profile_timeline__new(p, thr);
	return r->tl ? 0 : -errno;
}

/* The next row, whatever its counters. */
static int rows_any(struct fx_rows *r, struct evprof_profile_sample *s)
{
	const struct evprof_profile *p = r->p;

	if (r->tl)
		return evprof_profile_timeline__next(r->tl, s);
	if (r->waits) {
		const struct evprof__wait *w;

		if (r->next_wait == r->nr_waits)
			return 0;
		w = &r->t->waits[r->waits[r->next_wait++]];
		*s = (struct evprof_profile_sample){.time_ns = w->start_ns,
						    .stack = w->stack,
						    .weight = w->dur_ns};
		return 1;
	}
	for (; r->entry >= 0; r->entry = p->store.e[r->entry].next) {
		const uint64_t *v = evprof__entry_vals(p, (size_t)r->entry);

		if (!v[rows_col(p, r->wtype)])
			continue;
		*s = (struct evprof_profile_sample){
		    .time_ns = r->t->start_ns,
		    .stack = p->store.e[r->entry].stack,
		    .weight = v[rows_col(p, r->wtype)],
		    .cpu_delta_ns = v[COL_CPU],
		    .has_counters = p->store.e[r->entry].has,
		    .counters = &v[COL_COUNTERS],
		};
		r->entry = p->store.e[r->entry].next;
		return 1;
	}
	return 0;
}

int evprof__fx_rows_next(struct fx_rows *r, struct evprof_profile_sample *s)
{
	int ret;

	while ((ret = rows_any(r, s)) > 0) {
		if (r->ctr < 0)
			return ret;
		/* A counter track: the rows that moved it, weighing that. */
		if (s->has_counters >> r->ctr & 1 && s->counters[r->ctr]) {
			s->weight = s->counters[r->ctr];
			return ret;
		}
	}
	return ret;
}

void evprof__fx_rows_close(struct fx_rows *r)
{
	evprof_profile_timeline__free(r->tl);
	free(r->waits);
}

bool evprof__fx_has_track(const struct evprof_profile *p, int thr, int wtype,
			  int ctr)
{
	size_t col = ctr >= 0 ? COL_COUNTERS + (size_t)ctr : rows_col(p, wtype);
	int64_t k;

	for (k = p->threads[thr].first_entry; k >= 0; k = p->store.e[k].next)
		if (evprof__entry_vals(p, (size_t)k)[col])
			return true;
	return false;
}

uint64_t evprof__fx_thread_last(const struct evprof_profile *p, int thr)
{
	const struct evprof__thread *t = &p->threads[thr];
	uint64_t last = t->last_ns > t->start_ns ? t->last_ns : t->start_ns;
	size_t i;

	for (i = 0; i < t->nr_waits; i++)
		if (t->waits[i].start_ns + t->waits[i].dur_ns > last)
			last = t->waits[i].start_ns + t->waits[i].dur_ns;
	return last;
}
