// SPDX-License-Identifier: MIT
/*
 * Sessions, building side: replays side-band events and samples in time
 * order (records of different rings arrive out of order, and a sample must
 * see the maps and process tree of its own time) through session_tasks.c,
 * turns each sample's chain into a profile stack through session_stacks.c,
 * decides which samples the process tree keeps and fills the profile.
 * Off-CPU intervals (session_offcpu.c) become aggregates of two weights.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/session.h>

#include "session_aggr.h"
#include "session_internal.h"
#include "session_stacks.h"
#include "session_tasks.h"

#define STACK_SKIPPED (-2) /* sample of a process out of tree */

struct order { /* sort key: time, then arrival */
	uint64_t time;
	uint32_t idx;
};

struct build {
	struct evprof_session *s;
	struct evprof_profile *p;
	struct sess_tasks t;
	struct sess_stacks sk;
	int slot_counter[EVPROF_PROFILE_MAX_COUNTERS];
	int w_off, w_pre; /* weight types "off-cpu" and "preempted" */
};

static int cmp_order(const void *pa, const void *pb)
{
	const struct order *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/* n elements of elem bytes at data, whose first member is a u64 time. */
static struct order *sorted(const void *data, size_t n, size_t elem)
{
	struct order *o = malloc((n ? n : 1) * sizeof(*o));

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(&o[i].time, (const char *)data + i * elem,
		       sizeof(o[i].time));
		o[i].idx = (uint32_t)i;
	}
	qsort(o, n, sizeof(*o), cmp_order);
	return o;
}

/* Profile processes and threads for the entries that have kept samples. */
static int emit_tasks(struct build *b)
{
	const struct sess_tasks *t = &b->t;
	char buf[16];
	int err;

	for (uint32_t i = 0; i < t->procs.n; i++) {
		struct bproc *pr = evprof__tasks_proc(t, i);

		if (!pr->kept)
			continue;
		pr->prof = evprof_profile__add_process(
		    b->p, (int)pr->pid,
		    evprof__tasks_proc_name(t, pr, buf, sizeof(buf)),
		    pr->start);
		if (pr->prof < 0)
			return pr->prof;
		if (pr->end) {
			err = evprof_profile__end_process(b->p, pr->prof,
							  pr->end);
			if (err)
				return err;
		}
		b->s->st.processes++;
	}
	for (uint32_t i = 0; i < t->threads.n; i++) {
		struct bthread *th = evprof__tasks_thr(t, i);
		const struct bproc *pr = evprof__tasks_proc(t, th->proc);
		const char *name;

		if (!th->kept)
			continue;
		name = th->has_name
			   ? evprof__sstore_strp(&b->s->store, th->name)
			   : evprof__tasks_proc_name(t, pr, buf, sizeof(buf));
		th->prof = evprof_profile__add_thread(
		    b->p, pr->prof, (int)th->tid, name, th->start);
		if (th->prof < 0)
			return th->prof;
		if (th->end) {
			err =
			    evprof_profile__end_thread(b->p, th->prof, th->end);
			if (err)
				return err;
		}
		b->s->st.threads++;
	}
	return 0;
}

static int emit_sample(struct build *b, const struct ssample *x,
		       const struct bthread *th, int stack)
{
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS];
	struct evprof_profile_sample ps = {
	    .time_ns = x->time,
	    .stack = stack,
	    .cpu_delta_ns = x->flags & SS_HAS_CPU ? x->cpu_delta : 0,
	    .counters = vals,
	};

	for (size_t i = 0; i < b->s->nr_slots; i++) {
		int c = b->slot_counter[i];

		if (!(x->has & (1ULL << i)))
			continue;
		vals[c] = evprof__sstore_delta(&b->s->store, x, i);
		ps.has_counters |= 1ULL << c;
	}
	return evprof_profile__add_sample(b->p, th->prof, &ps);
}

/*
 * Sums an in-kernel aggregation made: one sample standing for all of them
 * at the time of the latest (a timeline row, so that writers that read
 * the timeline see them); sums without a sample go to the store only.
 */
static int emit_aggr(struct build *b, const struct ssample *x,
		     const struct bthread *th, int stack)
{
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS], has = 0;
	uint64_t n = evprof__sstore_aggr_samples(&b->s->store, x);

	for (size_t i = 0; i < b->s->nr_slots; i++) {
		int c = b->slot_counter[i];

		if (!(x->has & (1ULL << i)))
			continue;
		vals[c] = evprof__sstore_delta(&b->s->store, x, i);
		has |= 1ULL << c;
	}
	if (n)
		return evprof_profile__add_sample(
		    b->p, th->prof,
		    &(struct evprof_profile_sample){.time_ns = x->time,
						    .stack = stack,
						    .weight = n,
						    .cpu_delta_ns =
							x->cpu_delta,
						    .has_counters = has,
						    .counters = vals});
	return evprof_profile__add_aggregate(
	    b->p, th->prof,
	    &(struct evprof_profile_aggregate){.stack = stack,
					       .cpu_ns = x->cpu_delta,
					       .has_counters = has,
					       .counters = vals});
}

/* An off-CPU interval: its length on its stack, as one of two weights. */
static int emit_offcpu(struct build *b, const struct ssample *x,
		       const struct bthread *th, int stack)
{
	bool pre = x->flags & SS_PREEMPT;
	int k = pre ? b->w_pre : b->w_off;

	if (!x->cpu_delta)
		return 0; /* no interval: see evprof__offcpu_resolve() */
	if (pre)
		b->s->st.offcpu_preempted++;
	else
		b->s->st.offcpu_voluntary++;
	/*
	 * Placed at the cut, which precedes its switch-out record (where the
	 * duration starts) by the callchain walk, some us.
	 */
	return evprof_profile__add_wait(
	    b->p, th->prof,
	    &(struct evprof_profile_wait){.start_ns = x->time,
					  .duration_ns = x->cpu_delta,
					  .stack = stack,
					  .weight = k});
}

/* Merges the two time orders, side-band first at equal times. */
static int replay(struct build *b, const struct order *so,
		  const struct order *eo, uint32_t *thr, int *stacks)
{
	struct sess_store *st = &b->s->store;
	const struct sb_event *sb = st->sb.a;
	size_t ns = st->samples.n, ne = st->sb.n, i = 0, j = 0;
	int err;

	while (i < ns || j < ne) {
		struct ssample *x;
		const struct bproc *pr, *lin;

		if (j < ne && (i == ns || eo[j].time <= so[i].time)) {
			err = evprof__tasks_replay(&b->t, &sb[eo[j++].idx]);
			if (err)
				return err;
			continue;
		}
		x = evprof__sstore_samplep(st, so[i].idx);
		err = evprof__tasks_thread(&b->t, x->pid, x->tid, &thr[i]);
		if (err)
			return err;
		pr = evprof__tasks_proc(&b->t,
					evprof__tasks_thr(&b->t, thr[i])->proc);
		lin = evprof__tasks_proc(&b->t, pr->lineage);
		stacks[i] = STACK_SKIPPED;
		if (lin->in_tree || lin->pending) {
			err = evprof__stacks_sample(&b->sk, pr, x, &stacks[i]);
			if (err)
				return err;
		}
		i++;
	}
	return 0;
}

static int build(struct build *b)
{
	struct evprof_session *s = b->s;
	size_t ns = s->store.samples.n;
	struct order *so = NULL, *eo = NULL;
	uint32_t *thr = NULL;
	int *stacks = NULL;
	uint64_t kept = 0, weight = 0, cut = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < s->nr_slots; i++) {
		const char *name =
		    i < s->nr_counters ? s->counters[i] : s->sampler_counter;
		int c = evprof_profile__add_counter(b->p, name);

		if (c < 0)
			return c;
		b->slot_counter[i] = c;
	}
	if (s->has_switch) {
		b->w_off = evprof_profile__add_weight_type(b->p, "off-cpu");
		if (b->w_off < 0)
			return b->w_off;
		b->w_pre = evprof_profile__add_weight_type(b->p, "preempted");
		if (b->w_pre < 0)
			return b->w_pre;
		err = evprof__offcpu_resolve(&s->off, &s->store);
		if (err)
			return err;
	}
	err = evprof__stitch_resolve(&s->stitch, &s->store);
	if (err)
		return err;
	err = -ENOMEM;
	so = sorted(s->store.samples.a, ns, sizeof(struct ssample));
	eo = sorted(s->store.sb.a, s->store.sb.n, sizeof(struct sb_event));
	thr = malloc((ns ? ns : 1) * sizeof(*thr));
	stacks = malloc((ns ? ns : 1) * sizeof(*stacks));
	if (!so || !eo || !thr || !stacks)
		goto out;
	err = replay(b, so, eo, thr, stacks);
	s->st.stacks_unwound += b->sk.unwound;
	s->st.stacks_truncated += b->sk.truncated;
	if (err)
		goto out;

	/* Tree membership is final now. */
	for (size_t i = 0; i < ns; i++) {
		struct bthread *th = evprof__tasks_thr(&b->t, thr[i]);
		struct ssample *x =
		    evprof__sstore_samplep(&s->store, so[i].idx);

		x->flags &= ~SS_KEPT;
		if (!evprof__tasks_lineage(&b->t, th->proc)->in_tree)
			continue;
		x->flags |= SS_KEPT;
		th->kept++;
		evprof__tasks_proc(&b->t, th->proc)->kept++;
		kept += !(x->flags & SS_OFFCPU);
		/* An aggregate stands for its count of samples. */
		weight += x->flags & SS_AGGR
			      ? evprof__sstore_aggr_samples(&s->store, x)
			      : !(x->flags & SS_OFFCPU);
		cut += (x->flags & (SS_OFFCPU | SS_CUT)) == SS_CUT;
	}
	s->st.processes = s->st.threads = 0;
	s->st.offcpu_voluntary = s->st.offcpu_preempted = 0;
	err = emit_tasks(b);
	for (size_t i = 0; !err && i < ns; i++) {
		const struct ssample *x =
		    evprof__sstore_samplep(&s->store, so[i].idx);
		const struct bthread *th = evprof__tasks_thr(&b->t, thr[i]);

		if (!(x->flags & SS_KEPT))
			continue;
		err = x->flags & SS_OFFCPU ? emit_offcpu(b, x, th, stacks[i])
		      : x->flags & SS_AGGR ? emit_aggr(b, x, th, stacks[i])
					   : emit_sample(b, x, th, stacks[i]);
	}
	if (!err) {
		s->built = true;
		s->st.samples = weight;
		s->st.stacks_cut = cut;
		s->st.samples_filtered = s->idle + (ns - s->nr_offcpu) - kept;
	}
out:
	free(so);
	free(eo);
	free(thr);
	free(stacks);
	return err;
}

int evprof_session__build(struct evprof_session *s, struct evprof_profile *p,
			  struct evprof_symbolizer *sym)
{
	struct build b = {.s = s, .p = p};
	int err;

	if (!s || !p)
		return -EINVAL;
	err = evprof__cut_flush(&s->cut, &s->store);
	if (err)
		return err;
	if (s->store.samples.n >= NO_INDEX || s->store.sb.n >= NO_INDEX)
		return -ENOMEM;
	b.t = (struct sess_tasks){
	    .st = &s->store, .roots = s->pids, .nr_roots = s->nr_pids};
	b.sk = (struct sess_stacks){.st = &s->store,
				    .t = &b.t,
				    .k = &s->stitch,
				    .p = p,
				    .sym = sym,
				    .regs_mask = s->fmt.sample_regs_user};
	err = build(&b);
	evprof__stacks_free(&b.sk);
	evprof__tasks_free(&b.t);
	return err;
}
