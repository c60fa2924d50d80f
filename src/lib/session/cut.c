// SPDX-License-Identifier: MIT
/*
 * Sessions, context-switch cuts: a member sampling every switch-out reads
 * the group at the end of each thread's stretch on a CPU. Its deltas are
 * not a profile sample; they are held per thread and ride on the thread's
 * next sample; when no other comes (the stretch after a thread's last
 * sample, up to its exit) they go to the thread's "[unsampled]" frame. With per-CPU groups this is what
 * makes attribution exact: without the cut, what thread X counted would go
 * to whichever thread the CPU samples next.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/profile.h>

#include "cut.h"

#define MAX_CPUS                                                               \
	65536 /* bounds what an untrusted record can make us allocate */

void evprof__cut_free(struct sess_cut *c)
{
	EVPROF_VEC_FREE(&c->ts);
	evprof__hashmap_free(c->by_tid);
	EVPROF_VEC_FREE(&c->vals);
	EVPROF_VEC_FREE(&c->cpus);
}

static struct tstate *find(const struct sess_cut *c, uint32_t tid)
{
	long i;

	if (!c->by_tid || !evprof__hashmap_find(c->by_tid, (long)tid, &i))
		return NULL;
	return &c->ts.a[i];
}

struct tstate *evprof__tstate_get(struct sess_cut *c,
				  const struct sess_store *st, uint32_t tid)
{
	struct tstate *e = find(c, tid);

	if (e)
		return e;
	if (!c->by_tid) {
		c->by_tid = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
		if (!c->by_tid)
			return NULL;
	}
	if (c->vals.n + st->nr_slots > UINT32_MAX ||
	    EVPROF_VEC_RESERVE(&c->vals, c->vals.n + st->nr_slots) ||
	    EVPROF_VEC_RESERVE(&c->ts, c->ts.n + 1) ||
	    evprof__hashmap_add(c->by_tid, (long)tid, (long)c->ts.n))
		return NULL;
	e = &c->ts.a[c->ts.n++];
	*e = (struct tstate){.tid = tid, .vals = (uint32_t)c->vals.n};
	c->vals.n += st->nr_slots;
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
	add_slots(c->vals.a + ts->vals, &ts->has, vals, has, st->nr_slots);
	add_cpu(&ts->cpu, &ts->has_cpu, cpu, has_cpu);
	ts->pending = true;
}

void evprof__cut_take(struct sess_cut *c, const struct sess_store *st,
		      struct tstate *ts, uint64_t slots, bool with_cpu,
		      uint64_t *vals, uint64_t *has, uint64_t *cpu,
		      bool *has_cpu)
{
	if (!ts->pending)
		return;
	add_slots(vals, has, c->vals.a + ts->vals, ts->has & slots,
		  st->nr_slots);
	ts->has &= ~slots;
	if (with_cpu) {
		add_cpu(cpu, has_cpu, ts->cpu, ts->has_cpu);
		ts->has_cpu = false;
	}
	ts->pending = ts->has || ts->has_cpu;
}

/*
 * What ts counted after its last sample (its whole life if it had none)
 * was caused by no stack the thread showed: it goes to a sample of its own
 * on the "[unsampled]" frame under the thread, never on the stack of the
 * exit path its last cut read, nor on its last sample's.
 */
static int flush_one(struct sess_cut *c, struct sess_store *st,
		     struct tstate *ts)
{
	static const uint64_t unsampled = EVPROF__CHAIN_UNSAMPLED;
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS], has = 0, cpu = 0;
	bool has_cpu = false;
	uint32_t chain;

	if (!ts->pending)
		return 0;
	if (evprof__sstore_chain(st, &unsampled, 1, &chain) ||
	    evprof__sstore_sample_reserve(st))
		return -ENOMEM;
	evprof__cut_take(c, st, ts, ~0ULL, true, vals, &has, &cpu, &has_cpu);
	evprof__sstore_sample(
	    st,
	    &(struct ssample){
		.time = ts->time,
		.cpu_delta = cpu,
		.has = has,
		.pid = ts->pid,
		.tid = ts->tid,
		.chain = chain,
		.flags = SS_UNSAMPLED | (has_cpu ? SS_HAS_CPU : 0),
	    },
	    vals);
	c->nr_unsampled++;
	return 0;
}

int evprof__cut_fork(struct sess_cut *c, struct sess_store *st, uint32_t tid,
		     uint64_t time)
{
	struct tstate *ts = find(c, tid);
	int err;

	/* Records of the new task may have come first from another ring. */
	if (!ts || ts->time >= time)
		return 0;
	/* Without memory the old task's tail is dropped, not misfiled. */
	err = flush_one(c, st, ts);
	if (err)
		clear_pending(ts);
	return err;
}

int evprof__cut_flush_tid(struct sess_cut *c, struct sess_store *st,
			  uint32_t tid, uint64_t until)
{
	struct tstate *ts = find(c, tid);

	if (!ts || ts->time > until)
		return 0;
	return flush_one(c, st, ts);
}

int evprof__cut_forget(struct sess_cut *c, const struct sess_store *st,
		       evprof__gone_fn gone, void *ctx)
{
	struct evprof_hashmap_entry *cur, *tmp;
	size_t n = c->ts.n, w = 0, bkt;
	uint32_t *to;

	if (!c->by_tid)
		return 0;
	to = malloc((n ? n : 1) * sizeof(*to));
	if (!to)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		struct tstate *ts = &c->ts.a[i];

		if (!ts->pending && gone(ts->tid, ts->time, ctx)) {
			to[i] = NO_SAMPLE;
			continue;
		}
		/* Each state's values follow it down, in order (none, and
		 * no array, where only the sampler's time is kept). */
		if (st->nr_slots)
			memmove(c->vals.a + w * st->nr_slots,
				c->vals.a + ts->vals,
				st->nr_slots * sizeof(uint64_t));
		ts->vals = (uint32_t)(w * st->nr_slots);
		c->ts.a[w] = *ts;
		to[i] = (uint32_t)w++;
	}
	EVPROF_HASHMAP_FOR_EACH_SAFE(c->by_tid, cur, tmp, bkt)
	{
		if (to[cur->value] == NO_SAMPLE)
			evprof__hashmap_delete(c->by_tid, cur->key, NULL, NULL);
		else
			cur->value = to[cur->value];
	}
	c->ts.n = w;
	c->vals.n = w * st->nr_slots;
	free(to);
	return 0;
}

int evprof__cut_cpu(struct sess_cut *c, uint32_t cpu, struct cpu_state **cs)
{
	*cs = NULL;
	if (cpu >= MAX_CPUS)
		return 0;
	if (cpu >= c->cpus.n) {
		if (EVPROF_VEC_RESERVE(&c->cpus, (size_t)cpu + 1))
			return -ENOMEM;
		while (c->cpus.n <= cpu)
			c->cpus.a[c->cpus.n++] = (struct cpu_state){
			    .exit_pid = UINT32_MAX, .exit_tid = UINT32_MAX};
	}
	*cs = &c->cpus.a[cpu];
	return 0;
}

int evprof__cut_exit(struct sess_cut *c, uint32_t cpu, uint32_t pid,
		     uint32_t tid)
{
	struct cpu_state *cs;
	int err = evprof__cut_cpu(c, cpu, &cs);

	if (cs) {
		cs->exit_pid = pid;
		cs->exit_tid = tid;
	}
	return err;
}

uint32_t evprof__cut_dead_tid(const struct sess_cut *c, uint32_t cpu)
{
	return cpu < c->cpus.n ? c->cpus.a[cpu].exit_tid : UINT32_MAX;
}

uint32_t evprof__cut_dead_pid(const struct sess_cut *c, uint32_t cpu)
{
	return cpu < c->cpus.n ? c->cpus.a[cpu].exit_pid : UINT32_MAX;
}

int evprof__cut_switch_in(struct sess_cut *c, uint32_t cpu, uint32_t pid,
			  uint32_t tid, uint32_t prev_tid, uint64_t time)
{
	struct cpu_state *cs;
	int err = evprof__cut_cpu(c, cpu, &cs);

	if (!cs)
		return err;
	/*
	 * prev's switch-out read comes before this record in the CPU's ring
	 * (prepare_task_switch() samples it, finish_task_switch() writes
	 * this): a read of prev last means nothing ran unseen.
	 */
	cs->gap = !cs->read || cs->read_tid != prev_tid;
	cs->unseen += cs->gap;
	cs->in_pid = pid;
	cs->in_tid = tid;
	cs->in_time = time;
	cs->on = true;
	return 0;
}

int evprof__cut_unknown(struct sess_cut *c, uint32_t cpu, bool lost)
{
	struct cpu_state *cs;
	int err = evprof__cut_cpu(c, cpu, &cs);

	if (cs) {
		cs->on = false;
		cs->lost |= lost;
	}
	return err;
}

uint64_t evprof__cut_cpu_read(struct cpu_state *cs, uint32_t sample_tid,
			      uint32_t tid, uint64_t time, uint64_t *cpu_ns,
			      uint32_t *switches)
{
	uint64_t unseen = 0;

	*switches = 0;
	/* Another thread reading first: a record was lost, nothing known. */
	if (cs->gap && cs->in_tid == tid) {
		uint64_t own = time > cs->in_time ? time - cs->in_time : 0;

		if (*cpu_ns > own) {
			unseen = *cpu_ns - own;
			*cpu_ns = own;
		}
		*switches = cs->unseen;
	}
	cs->gap = false;
	cs->unseen = 0;
	cs->read = true;
	cs->read_tid = sample_tid;
	return unseen;
}

int evprof__cut_flush(struct sess_cut *c, struct sess_store *st)
{
	for (size_t i = 0; i < c->ts.n; i++) {
		int err = flush_one(c, st, &c->ts.a[i]);

		if (err)
			return err;
	}
	return 0;
}
