// SPDX-License-Identifier: MIT
/*
 * The aggregated store: one entry per (thread, stack) with the sum of every
 * value column (samples, CPU time, counters, weights). Samples and
 * aggregate-only producers add to it; pprof, folded and the report read
 * only it. Its size depends on the distinct (thread, stack) pairs, never on
 * how many samples were added.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"
#include "timeline.h"

#define MAX_COLS                                                               \
	(COL_COUNTERS + EVPROF_PROFILE_MAX_COUNTERS +                          \
	 EVPROF_PROFILE_MAX_WEIGHTS)

/* The entry of (thr, stack), created with zero sums. Returns it or -errno. */
static int64_t entry_of(struct evprof_profile *p, int thr, int stack)
{
	struct evprof__store *s = &p->store;
	struct evprof__thread *t = &p->threads[thr];
	long key = (long)((uint64_t)(uint32_t)thr << 32 | (uint32_t)stack);
	size_t cap;
	long idx;

	if (s->set && evprof__hashmap_find(s->set, key, &idx))
		return idx;
	if (!s->set) {
		s->set = evprof__hashmap_new(evprof__hashmap_u64_hash,
					     evprof__hashmap_u64_equal, NULL);
		if (!s->set)
			return -ENOMEM;
	}
	if (!s->n)
		s->nv = COL_COUNTERS + p->nr_counters + p->nr_weights;
	if (s->n >= INT32_MAX)
		return -E2BIG;
	cap = s->cap;
	if (evprof__vec_grow((void **)&s->e, &cap, sizeof(*s->e), s->n + 1,
			     SIZE_MAX))
		return -ENOMEM;
	if (cap != s->cap) {
		uint64_t *v = realloc(s->vals, cap * s->nv * sizeof(*v));

		if (!v)
			return -ENOMEM;
		s->vals = v;
		s->cap = cap;
	}
	if (evprof__hashmap_add(s->set, key, (long)s->n))
		return -ENOMEM;
	idx = (long)s->n++;
	s->e[idx] = (struct evprof__entry){thr, stack, -1, 0};
	memset(&s->vals[(size_t)idx * s->nv], 0, s->nv * sizeof(*s->vals));
	if (t->last_entry >= 0)
		s->e[t->last_entry].next = idx;
	else
		t->first_entry = idx;
	t->last_entry = idx;
	return idx;
}

/* Adds the values v (store.nv columns, counters present in has). */
static int store_add(struct evprof_profile *p, int thr, int stack,
		     const uint64_t *v, uint64_t has)
{
	int64_t idx = entry_of(p, thr, stack);
	uint64_t *sum;
	uint32_t i;

	if (idx < 0)
		return (int)idx;
	sum = &p->store.vals[(size_t)idx * p->store.nv];
	for (i = 0; i < p->store.nv; i++)
		sum[i] += v[i];
	p->store.e[idx].has |= has;
	if (v[COL_CPU])
		p->has_cpu = true;
	return 0;
}

void evprof__store_free(struct evprof__store *st)
{
	free(st->e);
	free(st->vals);
	evprof__hashmap_free(st->set);
	memset(st, 0, sizeof(*st));
}

/* Whether thr and stack name a thread and a stack (or -1) of p. */
static bool valid(const struct evprof_profile *p, int thr, int stack)
{
	return thr >= 0 && (size_t)thr < p->nr_threads && stack >= -1 &&
	       (stack < 0 || (size_t)stack < p->nr_stacks);
}

/* Whether has names only registered columns and vals is there for it. */
static bool valid_bits(uint64_t has, const uint64_t *vals, uint32_t n)
{
	return !has || (vals && (n >= 64 || !(has >> n)));
}

int evprof_profile__add_sample(struct evprof_profile *p, int thr,
			       const struct evprof_profile_sample *smp)
{
	uint64_t v[MAX_COLS], row[ROW_VALS + EVPROF_PROFILE_MAX_COUNTERS];
	uint32_t nc = p->nr_counters, i;
	uint64_t has;
	int err;

	if (!smp || !valid(p, thr, smp->stack) ||
	    !valid_bits(smp->has_counters, smp->counters, nc))
		return -EINVAL;
	/* The columns in use only: all of them are 600 bytes per sample. */
	memset(v, 0, (COL_COUNTERS + nc + p->nr_weights) * sizeof(*v));
	has = smp->has_counters;
	v[COL_SAMPLES] = smp->values_only ? 0 : smp->weight ? smp->weight : 1;
	v[COL_CPU] = smp->cpu_delta_ns;
	for (i = 0; i < nc; i++)
		if (has >> i & 1)
			v[COL_COUNTERS + i] = smp->counters[i];
	err = store_add(p, thr, smp->stack, v, has);
	if (!err && p->timeline) {
		row[ROW_TIME] = smp->time_ns;
		row[ROW_STACK] = (uint64_t)(int64_t)smp->stack;
		row[ROW_WEIGHT] = v[COL_SAMPLES];
		row[ROW_CPU] = v[COL_CPU];
		row[ROW_HAS] = has;
		memcpy(&row[ROW_VALS], &v[COL_COUNTERS], nc * sizeof(*v));
		err = evprof__timeline_add(p, thr, row);
	}
	if (err)
		return err;
	if (smp->time_ns > p->threads[thr].last_ns)
		p->threads[thr].last_ns = smp->time_ns;
	if (smp->time_ns > p->last_ns)
		p->last_ns = smp->time_ns;
	p->nr_samples++;
	return 0;
}

int evprof_profile__add_aggregate(struct evprof_profile *p, int thr,
				  const struct evprof_profile_aggregate *a)
{
	uint64_t v[MAX_COLS] = {0};
	uint32_t nc = p->nr_counters, i;

	if (!a || !valid(p, thr, a->stack) ||
	    !valid_bits(a->has_counters, a->counters, nc) ||
	    !valid_bits(a->has_weights, a->weights, p->nr_weights))
		return -EINVAL;
	v[COL_SAMPLES] = a->samples;
	v[COL_CPU] = a->cpu_ns;
	for (i = 0; i < nc; i++)
		if (a->has_counters >> i & 1)
			v[COL_COUNTERS + i] = a->counters[i];
	for (i = 0; i < p->nr_weights; i++)
		if (a->has_weights >> i & 1)
			v[COL_COUNTERS + nc + i] = a->weights[i];
	return store_add(p, thr, a->stack, v, a->has_counters);
}

int evprof_profile__add_wait(struct evprof_profile *p, int thr,
			     const struct evprof_profile_wait *w)
{
	uint64_t v[EVPROF_PROFILE_MAX_WEIGHTS] = {0};
	struct evprof__thread *t;
	int err;

	if (!w || w->weight < 0 || (uint32_t)w->weight >= p->nr_weights)
		return -EINVAL;
	v[w->weight] = w->duration_ns;
	err = evprof_profile__add_aggregate(
	    p, thr,
	    &(struct evprof_profile_aggregate){.stack = w->stack,
					       .has_weights = 1ULL << w->weight,
					       .weights = v});
	if (err || !p->timeline)
		return err;
	t = &p->threads[thr];
	if (evprof__vec_grow((void **)&t->waits, &t->cap_waits,
			     sizeof(*t->waits), t->nr_waits + 1, SIZE_MAX))
		return -ENOMEM;
	t->waits[t->nr_waits++] = (struct evprof__wait){
	    w->start_ns, w->duration_ns, w->stack, (uint32_t)w->weight};
	return 0;
}

int evprof_profile__for_each_entry(const struct evprof_profile *p, int thr,
				   evprof_profile_entry_fn fn, void *ctx)
{
	size_t t = thr < 0 ? 0 : (size_t)thr;
	size_t end = thr < 0 ? p->nr_threads : t + 1;
	int64_t i;
	int ret;

	if (!fn || thr < -1 || end > p->nr_threads)
		return -EINVAL;
	for (; t < end; t++) {
		for (i = p->threads[t].first_entry; i >= 0;
		     i = p->store.e[i].next) {
			const uint64_t *v = evprof__entry_vals(p, (size_t)i);
			struct evprof_profile_entry e = {
			    .thread = (int)t,
			    .stack = p->store.e[i].stack,
			    .samples = v[COL_SAMPLES],
			    .cpu_ns = v[COL_CPU],
			    .has_counters = p->store.e[i].has,
			    .counters = &v[COL_COUNTERS],
			    .weights = &v[COL_COUNTERS + p->nr_counters],
			};

			ret = fn(&e, ctx);
			if (ret)
				return ret;
		}
	}
	return 0;
}
