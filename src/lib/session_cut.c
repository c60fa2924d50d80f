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

#include "session_internal.h"

#define MAX_CPUS 65536 /* bounds what an untrusted record can make us allocate */

static size_t ts_slot(const struct tstate *tab, size_t cap, uint32_t tid)
{
	size_t mask = cap - 1;
	size_t i = (tid * 0x9e3779b1u) & mask;

	while (tab[i].used && tab[i].tid != tid)
		i = (i + 1) & mask;
	return i;
}

struct tstate *evprof__tstate_get(struct evprof_session *s, uint32_t tid)
{
	struct tstate *e;
	size_t i;

	if ((s->nr_ts + 1) * 2 > s->ts_cap) {
		size_t cap = s->ts_cap ? s->ts_cap * 2 : 64;
		struct tstate *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return NULL;
		for (size_t k = 0; k < s->ts_cap; k++)
			if (s->ts[k].used)
				tab[ts_slot(tab, cap, s->ts[k].tid)] = s->ts[k];
		free(s->ts);
		s->ts = tab;
		s->ts_cap = cap;
	}
	i = ts_slot(s->ts, s->ts_cap, tid);
	e = &s->ts[i];
	if (e->used)
		return e;
	if (s->ts_vals.len + s->nr_slots > UINT32_MAX ||
	    evprof__vec_reserve(&s->ts_vals, sizeof(uint64_t), s->nr_slots))
		return NULL;
	*e = (struct tstate){.tid = tid,
			     .vals = (uint32_t)s->ts_vals.len,
			     .last = NO_SAMPLE,
			     .used = true};
	s->ts_vals.len += s->nr_slots;
	s->nr_ts++;
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

void evprof__cut_hold(struct evprof_session *s, struct tstate *ts,
		      const uint64_t *vals, uint64_t has, uint64_t cpu,
		      bool has_cpu)
{
	add_slots((uint64_t *)s->ts_vals.data + ts->vals, &ts->has, vals, has,
		  s->nr_slots);
	add_cpu(&ts->cpu, &ts->has_cpu, cpu, has_cpu);
	ts->pending = true;
}

void evprof__cut_take(struct evprof_session *s, struct tstate *ts,
		      uint64_t *vals, uint64_t *has, uint64_t *cpu,
		      bool *has_cpu)
{
	if (!ts->pending)
		return;
	add_slots(vals, has, (const uint64_t *)s->ts_vals.data + ts->vals,
		  ts->has, s->nr_slots);
	add_cpu(cpu, has_cpu, ts->cpu, ts->has_cpu);
	clear_pending(ts);
}

/* Adds ts's pending deltas to its latest sample, in place. */
static void add_to_last(struct evprof_session *s, struct tstate *ts)
{
	struct ssample *x = (struct ssample *)s->samples.data + ts->last;
	uint64_t *d = (uint64_t *)s->deltas.data + x->deltas;
	const uint64_t *pend = (const uint64_t *)s->ts_vals.data + ts->vals;
	int n = 0;

	/*
	 * Deltas are packed by the sample's slots; every sample of a thread
	 * reads the same group, so a slot it lacks has nothing pending.
	 */
	for (size_t i = 0; i < s->nr_slots; i++) {
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
static int add_sample(struct evprof_session *s, struct tstate *ts)
{
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS], has = 0, cpu = 0;
	bool has_cpu = false;

	if (evprof__sample_reserve(s))
		return -ENOMEM;
	evprof__cut_take(s, ts, vals, &has, &cpu, &has_cpu);
	ts->last = (uint32_t)s->samples.len;
	evprof__sample_store(s,
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

static int flush_one(struct evprof_session *s, struct tstate *ts)
{
	if (!ts->pending)
		return 0;
	if (ts->last == NO_SAMPLE)
		return add_sample(s, ts);
	add_to_last(s, ts);
	clear_pending(ts);
	return 0;
}

void evprof__cut_fork(struct evprof_session *s, uint32_t tid, uint64_t time)
{
	struct tstate *ts;

	if (!s->ts_cap)
		return;
	ts = &s->ts[ts_slot(s->ts, s->ts_cap, tid)];
	/* Records of the new task may have come first from another ring. */
	if (!ts->used || ts->time >= time)
		return;
	/* Without memory the old task's tail is dropped, not misfiled. */
	if (flush_one(s, ts))
		clear_pending(ts);
	ts->has_chain = false;
	ts->last = NO_SAMPLE;
}

int evprof__cut_exit(struct evprof_session *s, uint32_t cpu, uint32_t tid)
{
	if (cpu >= MAX_CPUS)
		return 0;
	if (cpu >= s->nr_exit_cpus) {
		size_t n = cpu + 1;
		uint32_t *t = realloc(s->exit_tid, n * sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = s->nr_exit_cpus; i < n; i++)
			t[i] = UINT32_MAX;
		s->exit_tid = t;
		s->nr_exit_cpus = n;
	}
	s->exit_tid[cpu] = tid;
	return 0;
}

uint32_t evprof__cut_dead_tid(const struct evprof_session *s, uint32_t cpu)
{
	return cpu < s->nr_exit_cpus ? s->exit_tid[cpu] : UINT32_MAX;
}

int evprof__cut_flush(struct evprof_session *s)
{
	for (size_t i = 0; i < s->ts_cap; i++) {
		int err;

		if (!s->ts[i].used)
			continue;
		err = flush_one(s, &s->ts[i]);
		if (err)
			return err;
	}
	return 0;
}
