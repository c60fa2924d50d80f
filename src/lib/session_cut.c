// SPDX-License-Identifier: MIT
/*
 * Sessions, context-switch cuts: a member sampling every switch-out reads
 * the group at the end of each thread's stretch on a CPU. Its deltas are
 * not a profile sample; they are held per thread and ride on the thread's
 * next sample, or on its latest one when no other comes (the stretch after
 * a thread's last sample, up to its exit). With per-CPU groups this is what
 * makes attribution exact: without the cut, what thread X counted would go
 * to whichever thread the CPU samples next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/profile.h>

#include "session_cut.h"

#define MAX_CPUS 65536 /* bounds what an untrusted record can make us allocate */

static size_t ts_slot(const struct tstate *tab, size_t cap, uint32_t tid)
{
	size_t mask = cap - 1;
	size_t i = (tid * 0x9e3779b1u) & mask;

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & mask;
	return i;
}

void evprof__cut_free(struct sess_cut *c)
{
	free(c->ts);
	free(c->vals.data);
	free(c->exit_tid);
}

struct tstate *evprof__tstate_get(struct sess_cut *c,
				  const struct sess_store *st, uint32_t tid)
{
	struct tstate *e;
	size_t i;

	if ((c->nr_ts + 1) * 2 > c->ts_cap) {
		size_t cap = c->ts_cap ? c->ts_cap * 2 : 64;
		struct tstate *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (size_t k = 0; k < c->ts_cap; k++)
			if (c->ts[k].used)
				tab[ts_slot(tab, cap, c->ts[k].tid)] = c->ts[k];
		free(c->ts);
		c->ts = tab;
		c->ts_cap = cap;
	}
	i = ts_slot(c->ts, c->ts_cap, tid);
	e = &c->ts[i];
	if (e->used)
		return e;
	if (c->vals.len + st->nr_slots > UINT32_MAX ||
	    evprof__vec_reserve(&c->vals, sizeof(uint64_t), st->nr_slots))
		return NULL;
	*e = (struct tstate){.tid = tid,
			     .vals = (uint32_t)c->vals.len,
			     .last = NO_SAMPLE,
			     .used = true};
	c->vals.len += st->nr_slots;
	c->nr_ts++;
	return e;
}

/*
 * dst[i] += src[i] for every slot of src_has; a slot new to *dst_has
 * starts at 0.
 */
static void add_slots(uint64_t *dst, uint64_t *dst_has, const uint64_t *src,
		      uint64_t src_has, size_t nr_slots)
{
	for (size_t i = 0; i < nr_slots; i++) {
		if (!(src_has & (1ULL << i)))
			continue;
		dst[i] = (*dst_has & (1ULL << i) ? dst[i] : 0) + src[i];
	}
	*dst_has |= src_has;
}

static void add_cpu(uint64_t *dst, bool *dst_has, uint64_t src, bool src_has)
{
	if (!src_has)
		return;
	*dst = *dst_has ? *dst + src : src;
	*dst_has = true;
}

static void clear_pending(struct tstate *ts)
{
	ts->has = 0;
	ts->has_cpu = false;
	ts->pending = false;
}

void evprof__cut_hold(struct sess_cut *c, const struct sess_store *st,
		      struct tstate *ts, const uint64_t *vals, uint64_t has,
		      uint64_t cpu, bool has_cpu)
{
	add_slots((uint64_t *)c->vals.data + ts->vals, &ts->has, vals, has,
		  st->nr_slots);
	add_cpu(&ts->cpu, &ts->has_cpu, cpu, has_cpu);
	ts->pending = true;
}

void evprof__cut_take(struct sess_cut *c, const struct sess_store *st,
		      struct tstate *ts, uint64_t *vals, uint64_t *has,
		      uint64_t *cpu, bool *has_cpu)
{
	if (!ts->pending)
		return;
	add_slots(vals, has, (const uint64_t *)c->vals.data + ts->vals,
		  ts->has, st->nr_slots);
	add_cpu(cpu, has_cpu, ts->cpu, ts->has_cpu);
	clear_pending(ts);
}

/* Adds ts's pending deltas to its latest sample, in place. */
static void add_to_last(struct sess_cut *c, struct sess_store *st,
			struct tstate *ts)
{
	struct ssample *x = evprof__store_samplep(st, ts->last);
	uint64_t *d = (uint64_t *)st->deltas.data + x->deltas;
	const uint64_t *pend = (const uint64_t *)c->vals.data + ts->vals;
	int n = 0;

	for (size_t i = 0; i < st->nr_slots; i++) {
		if (!(x->has & (1ULL << i)))
			continue;
		if (ts->has & (1ULL << i))
			d[n] += pend[i];
		n++;
	}
	if (ts->has_cpu) {
		x->cpu_delta = x->flags & SS_HAS_CPU ? x->cpu_delta + ts->cpu
						     : ts->cpu;
		x->flags |= SS_HAS_CPU;
	}
}

/* A sample at the thread's last cut, on the stack of its first. */
static int add_sample(struct sess_cut *c, struct sess_store *st,
		      struct tstate *ts)
{
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS], has = 0, cpu = 0;
	bool has_cpu = false;

	if (evprof__store_sample_reserve(st))
		return -ENOMEM;
	evprof__cut_take(c, st, ts, vals, &has, &cpu, &has_cpu);
	ts->last = (uint32_t)st->samples.len;
	evprof__store_sample(st,
			     &(struct ssample){
				 .time = ts->time,
				 .cpu_delta = cpu,
				 .has = has,
				 .pid = ts->pid,
				 .tid = ts->tid,
				 .chain = ts->chain,
				 .flags = has_cpu ? SS_HAS_CPU : 0,
			     },
			     vals);
	return 0;
}

static int flush_one(struct sess_cut *c, struct sess_store *st,
		     struct tstate *ts)
{
	if (!ts->pending)
		return 0;
	if (ts->last == NO_SAMPLE)
		return add_sample(c, st, ts);
	/*
	 * Deltas are packed by the sample's slots: a slot the latest sample
	 * lacks (its cuts read ids its samples did not) needs a sample of its
	 * own, on the same stack.
	 */
	if (ts->has & ~evprof__store_samplep(st, ts->last)->has) {
		ts->chain = evprof__store_samplep(st, ts->last)->chain;
		return add_sample(c, st, ts);
	}
	add_to_last(c, st, ts);
	clear_pending(ts);
	return 0;
}

int evprof__cut_fork(struct sess_cut *c, struct sess_store *st, uint32_t tid,
		     uint64_t time)
{
	struct tstate *ts;
	int err;

	if (!c->ts_cap)
		return 0;
	ts = &c->ts[ts_slot(c->ts, c->ts_cap, tid)];
	/* Records of the new task may have come first from another ring. */
	if (!ts->used || ts->time >= time)
		return 0;
	/* Without memory the old task's tail is dropped, not misfiled. */
	err = flush_one(c, st, ts);
	if (err)
		clear_pending(ts);
	ts->has_chain = false;
	ts->last = NO_SAMPLE;
	return err;
}

int evprof__cut_exit(struct sess_cut *c, uint32_t cpu, uint32_t tid)
{
	if (cpu >= MAX_CPUS)
		return 0;
	if (cpu >= c->nr_exit_cpus) {
		size_t n = cpu + 1;
		uint32_t *t = realloc(c->exit_tid, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = c->nr_exit_cpus; i < n; i++)
			t[i] = UINT32_MAX;
		c->exit_tid = t;
		c->nr_exit_cpus = n;
	}
	c->exit_tid[cpu] = tid;
	return 0;
}

uint32_t evprof__cut_dead_tid(const struct sess_cut *c, uint32_t cpu)
{
	return cpu < c->nr_exit_cpus ? c->exit_tid[cpu] : UINT32_MAX;
}

int evprof__cut_flush(struct sess_cut *c, struct sess_store *st)
{
	for (size_t i = 0; i < c->ts_cap; i++) {
		int err;

		if (!c->ts[i].used)
			continue;
		err = flush_one(c, st, &c->ts[i]);
		if (err)
			return err;
	}
	return 0;
}
