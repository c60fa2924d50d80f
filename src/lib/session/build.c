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
#include <pthread.h>
#ifdef __GLIBC__
#include <malloc.h>
#endif
#include <stdlib.h>
#include <string.h>

#include <evprof/session.h>

#include "behind.h"

#include "aggr.h"
#include "internal.h"
#include "part.h"
#include "stacks.h"
#include "tasks.h"

#define STACK_SKIPPED (-2) /* sample of a process out of tree */
/* Samples built between two malloc_trim() calls, at least. */
#define TRIM_SAMPLES 65536

struct order { /* sort key: time, then arrival */
	uint64_t time;
	uint32_t idx;
};

struct build {
	struct evprof_session *s;
	struct evprof_profile *p;
	struct sess_tasks *t;
	struct sess_stacks *sk;
	uint64_t until; /* samples and side-band events up to this time */
	/* the store's first samples and side-band events the build sees */
	size_t nr_samples, nr_sb;
	bool part; /* a partial build (sess_part): drops what it built */
	int slot_counter[EVPROF_PROFILE_MAX_COUNTERS];
	int w_off, w_pre; /* weight types "off-cpu" and "preempted" */
	uint64_t own;	  /* kept SS_OWN samples */
	/* kept samples by how their stack ended (session stack_ends) */
	uint64_t ends[EVPROF_STACK_ENDS];
};

static int cmp_order(const void *pa, const void *pb)
{
	const struct order *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

/*
 * The elements of time up to until among n of elem bytes at data (whose
 * first member is a u64 time), sorted; *out receives how many.
 */
static struct order *sorted(const void *data, size_t n, size_t elem,
			    uint64_t until, size_t *out)
{
	struct order *o = malloc((n ? n : 1) * sizeof(*o));
	bool in_order = true;
	size_t k = 0;

	if (!o)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		memcpy(&o[k].time, (const char *)data + i * elem,
		       sizeof(o[k].time));
		o[k].idx = (uint32_t)i;
		if (o[k].time <= until) {
			in_order &= !k || o[k - 1].time <= o[k].time;
			k++;
		}
	}
	/* Imports and single-ring sessions arrive in time order already. */
	if (!in_order)
		qsort(o, k, sizeof(*o), cmp_order);
	*out = k;
	return o;
}

static int rename_thread(struct build *b, const struct bthread *th)
{
	const char *name = evprof__sstore_strp(&b->s->store, th->name);
	struct evprof_profile_thread_info ti;

	if (evprof_profile__thread_info(b->p, th->prof, &ti) == 0 && ti.name &&
	    !strcmp(ti.name, name))
		return 0;
	return evprof_profile__set_thread_name(b->p, th->prof, name);
}

/* The path of cgroup id, or NULL when nothing named it. */
static const char *cgroup_path(const struct evprof_session *s, uint64_t id)
{
	long v;

	if (!s->cg_names || !evprof__hashmap_find(s->cg_names, (long)id, &v))
		return NULL;
	return (const char *)v;
}

/*
 * What profile thread prof takes from th, its latest entry: its end, its
 * cgroup (the last it ran in), its ids in its pid namespace and its name.
 */
static int latest_entry(struct build *b, const struct bthread *th, int prof)
{
	struct bthread named = *th;
	int err;

	if (th->end && (err = evprof_profile__end_thread(b->p, prof, th->end)))
		return err;
	if (th->cgroup && (err = evprof_profile__set_thread_cgroup(
			       b->p, prof, cgroup_path(b->s, th->cgroup))))
		return err;
	if (th->ns_pid && (err = evprof_profile__set_thread_ns_ids(
			       b->p, prof, (int)th->ns_pid, (int)th->ns_tid)))
		return err;
	named.prof = prof;
	return th->has_name ? rename_thread(b, &named) : 0;
}

/*
 * Profile processes and threads for the entries that have kept samples in
 * this build and none in p yet; end times of those p has. The session
 * keeps an entry per exec image of a process (its maps); the profile has
 * one process per kernel process (a lineage: fork to exit, across execs)
 * and one thread per task, its exec'ing task one thread across images
 * (bthread.prev), named by its latest image, as perf and the Firefox
 * Profiler show an exec: a forked child is no process of its own until
 * it execs.
 */
static int emit_tasks(struct build *b)
{
	const struct sess_tasks *t = b->t;
	size_t np = t->procs.n, nt = t->threads.n;
	int *lin_prof = malloc((np + 1) * sizeof(*lin_prof));
	uint32_t *lin_last = malloc((np + 1) * sizeof(*lin_last));
	int *chain_prof = malloc((nt + 1) * sizeof(*chain_prof));
	bool *has_next = calloc(nt + 1, sizeof(*has_next));
	char buf[16];
	int err = -ENOMEM;

	if (!lin_prof || !lin_last || !chain_prof || !has_next)
		goto out;
	/* What earlier builds of p made, and each lineage's latest entry. */
	for (uint32_t i = 0; i < np; i++)
		lin_prof[i] = -1;
	for (uint32_t i = 0; i < np; i++) {
		const struct bproc *pr = evprof__tasks_proc(t, i);

		lin_last[pr->lineage] = i;
		if (pr->prof >= 0)
			lin_prof[pr->lineage] = pr->prof;
	}
	for (uint32_t i = 0; i < np; i++) {
		struct bproc *pr = evprof__tasks_proc(t, i);
		struct bproc *lin = evprof__tasks_proc(t, pr->lineage);

		if (!pr->kept || pr->prof >= 0)
			continue;
		if (lin_prof[pr->lineage] >= 0) {
			pr->prof = lin_prof[pr->lineage]; /* a later image */
			continue;
		}
		pr->prof = evprof_profile__add_process(
		    b->p, (int)pr->pid,
		    evprof__tasks_proc_name(t, pr, buf, sizeof(buf)),
		    pr->start);
		if ((err = pr->prof) < 0)
			goto out;
		lin_prof[pr->lineage] = pr->prof;
		/* Counted once per kernel process, also across parts. */
		b->s->st.processes += !lin->counted;
		lin->counted = true;
	}
	for (uint32_t i = 0; i < np; i++) {
		const struct bproc *pr = evprof__tasks_proc(t, i);
		int prof = lin_prof[pr->lineage];

		/* Named by its latest image, ending with it. */
		if (prof < 0 || lin_last[pr->lineage] != i)
			continue;
		if (pr->has_name &&
		    (err = evprof_profile__set_process_name(
			 b->p, prof,
			 evprof__tasks_proc_name(t, pr, buf, sizeof(buf)))))
			goto out;
		if (pr->end &&
		    (err = evprof_profile__end_process(b->p, prof, pr->end)))
			goto out;
	}
	/* A task's entries before its execs come first (prev < i). */
	for (uint32_t i = 0; i < nt; i++) {
		const struct bthread *th = evprof__tasks_thr(t, i);

		if (th->prev != NO_INDEX)
			has_next[th->prev] = true;
	}
	for (uint32_t i = 0; i < nt; i++) {
		struct bthread *th = evprof__tasks_thr(t, i);
		const struct bproc *pr = evprof__tasks_proc(t, th->proc);
		const struct bthread *pv = th->prev != NO_INDEX
					       ? evprof__tasks_thr(t, th->prev)
					       : NULL;
		const char *name;

		chain_prof[i] = pv ? chain_prof[th->prev] : -1;
		/* Counted once per task across its images, also in parts. */
		if (pv && pv->counted)
			th->counted = true;
		if (th->prof >= 0) {
			chain_prof[i] = th->prof;
		} else if (th->kept && chain_prof[i] >= 0) {
			th->prof = chain_prof[i]; /* went on in a new image */
		} else if (th->kept) {
			name = th->has_name
				   ? evprof__sstore_strp(&b->s->store, th->name)
				   : evprof__tasks_proc_name(t, pr, buf,
							     sizeof(buf));
			th->prof = evprof_profile__add_thread(
			    b->p, lin_prof[pr->lineage], (int)th->tid, name,
			    th->start);
			if ((err = th->prof) < 0)
				goto out;
			chain_prof[i] = th->prof;
			b->s->st.threads += !th->counted;
			th->counted = true;
		}
		/* Its end and name go to its thread from its latest entry. */
		if (has_next[i] || chain_prof[i] < 0)
			continue;
		if ((err = latest_entry(b, th, chain_prof[i])))
			goto out;
	}
	err = 0;
out:
	free(lin_prof);
	free(lin_last);
	free(chain_prof);
	free(has_next);
	return err;
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
	    .values_only = x->flags & (SS_UNSAMPLED | SS_OWN),
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
 * the timeline see them); sums without a sample (counters' own samples,
 * what a thread counted after its last) a values-only row.
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
	return evprof_profile__add_sample(
	    b->p, th->prof,
	    &(struct evprof_profile_sample){.time_ns = x->time,
					    .stack = stack,
					    .weight = n,
					    .values_only = !n,
					    .cpu_delta_ns = x->cpu_delta,
					    .has_counters = has,
					    .counters = vals});
}

/* An off-CPU interval: its length on its stack, as one of two weights. */
static int emit_offcpu(struct build *b, const struct ssample *x,
		       const struct bthread *th, int stack)
{
	bool pre = x->flags & SS_PREEMPT;
	int k = pre ? b->w_pre : b->w_off;

	b->s->st.offcpu_unstarted += evprof__offcpu_lost_at(
	    &b->s->off, (uint32_t)(x - b->s->store.samples.a));
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
static int replay(struct build *b, const struct order *so, size_t ns,
		  const struct order *eo, size_t ne, uint32_t *thr, int *stacks)
{
	struct sess_store *st = &b->s->store;
	const struct sb_event *sb = st->sb.a;
	size_t i = 0, j = 0;
	int err;

	while (i < ns || j < ne) {
		struct ssample *x;
		const struct bproc *pr, *lin;

		if (j < ne && (i == ns || eo[j].time <= so[i].time)) {
			err = evprof__tasks_replay(b->t, &sb[eo[j++].idx]);
			if (err)
				return err;
			continue;
		}
		x = evprof__sstore_samplep(st, so[i].idx);
		err = evprof__tasks_thread(b->t, x->pid, x->tid, &thr[i]);
		if (err)
			return err;
		pr = evprof__tasks_proc(b->t,
					evprof__tasks_thr(b->t, thr[i])->proc);
		lin = evprof__tasks_proc(b->t, pr->lineage);
		stacks[i] = STACK_SKIPPED;
		if (lin->in_tree || lin->pending) {
			err = evprof__stacks_sample(b->sk, pr, x, &stacks[i]);
			if (err)
				return err;
		}
		i++;
	}
	return 0;
}

/* Column index of counter name in p, registered when p lacks it. */
static int counter_of(struct evprof_profile *p, const char *name)
{
	const char *c;

	for (int i = 0; (c = evprof_profile__counter_name(p, i)); i++)
		if (!strcmp(c, name))
			return i;
	return evprof_profile__add_counter(p, name);
}

static int weight_of(struct evprof_profile *p, const char *name)
{
	const char *w;

	for (int i = 0; (w = evprof_profile__weight_name(p, i)); i++)
		if (!strcmp(w, name))
			return i;
	return evprof_profile__add_weight_type(p, name);
}

/* Columns, off-CPU intervals and deferred chains, before the replay. */
static int prepare(struct build *b)
{
	struct evprof_session *s = b->s;
	int err;

	for (size_t i = 0; i < s->nr_slots; i++) {
		const char *name =
		    i < s->nr_counters ? s->counters[i] : s->sampler_counter;
		int c = counter_of(b->p, name);

		if (c < 0)
			return c;
		b->slot_counter[i] = c;
	}
	if (s->has_switch) {
		b->w_off = weight_of(b->p, "off-cpu");
		if (b->w_off < 0)
			return b->w_off;
		b->w_pre = weight_of(b->p, "preempted");
		if (b->w_pre < 0)
			return b->w_pre;
		err = evprof__offcpu_resolve(&s->off, &s->store);
		if (err)
			return err;
	}
	return evprof__stitch_resolve(&s->stitch, &s->store);
}

/*
 * Samples of threads whose process is in the tree: SS_KEPT, counted
 * (stand-ins are no samples: kept when they carry values, not counted).
 */
/* What kept sample x carries per counter, into the stats. */
static void count_kept(struct evprof_session *s, const struct ssample *x)
{
	if (x->flags & SS_OFFCPU)
		return;
	for (size_t i = 0; i < s->nr_slots; i++) {
		uint64_t d;

		if (!(x->has >> i & 1))
			continue;
		d = evprof__sstore_delta(&s->store, x, i);
		s->st.counted[i] += d;
		if (x->flags & SS_UNSAMPLED)
			s->st.unsampled[i] += d;
	}
}

static void keep(struct build *b, const struct order *so, size_t ns,
		 const uint32_t *thr, uint64_t *kept, uint64_t *weight,
		 uint64_t *cut)
{
	struct evprof_session *s = b->s;

	for (size_t i = 0; i < ns; i++) {
		struct bthread *th = evprof__tasks_thr(b->t, thr[i]);
		struct ssample *x =
		    evprof__sstore_samplep(&s->store, so[i].idx);

		x->flags &= ~SS_KEPT;
		if (b->part)
			x->flags |= SS_BUILT;
		if (!evprof__tasks_lineage(b->t, th->proc)->in_tree)
			continue;
		if ((x->flags & SS_UNSAMPLED) &&
		    !evprof__sstore_has_values(&s->store, x))
			continue;
		x->flags |= SS_KEPT;
		count_kept(s, x);
		th->kept++;
		evprof__tasks_proc(b->t, th->proc)->kept++;
		*kept += !(x->flags & (SS_OFFCPU | SS_UNSAMPLED));
		b->own += !!(x->flags & SS_OWN);
		/* An aggregate stands for its count of samples. */
		*weight +=
		    x->flags & SS_AGGR
			? evprof__sstore_aggr_samples(&s->store, x)
			: !(x->flags & (SS_OFFCPU | SS_UNSAMPLED | SS_OWN));
		*cut +=
		    (x->flags & (SS_OFFCPU | SS_CUT | SS_UNSAMPLED)) == SS_CUT;
		if (!(x->flags & (SS_OFFCPU | SS_UNSAMPLED)))
			b->ends[(x->flags & SS_END_MASK) >> SS_END_SHIFT] +=
			    x->flags & SS_AGGR
				? evprof__sstore_aggr_samples(&s->store, x)
				: 1;
	}
}

/*
 * Replays the samples and side-band events of time up to b->until (of the
 * first b->nr_samples and b->nr_sb: a build behind the feeding sees only
 * what was stored when it began; prepare() came first) and
 * fills b->p with the kept samples; *nr, *kept and *cut receive how many
 * samples were replayed, kept, and cut, *weight how many samples the kept
 * ones stand for (an aggregate stands for its count).
 */
static int build(struct build *b, size_t *nr, uint64_t *kept, uint64_t *weight,
		 uint64_t *cut)
{
	struct evprof_session *s = b->s;
	struct order *so = NULL, *eo = NULL;
	uint32_t *thr = NULL;
	int *stacks = NULL;
	size_t ns = 0, ne = 0;
	int err = -ENOMEM;

	so = sorted(s->store.samples.a, b->nr_samples, sizeof(struct ssample),
		    b->until, &ns);
	eo = sorted(s->store.sb.a, b->nr_sb, sizeof(struct sb_event), b->until,
		    &ne);
	thr = malloc((ns ? ns : 1) * sizeof(*thr));
	stacks = malloc((ns ? ns : 1) * sizeof(*stacks));
	if (!so || !eo || !thr || !stacks)
		goto out;
	err = replay(b, so, ns, eo, ne, thr, stacks);
	s->st.stacks_unwound += b->sk->unwound;
	s->st.stacks_truncated += b->sk->truncated;
	if (b->sk->copy_needed > s->st.stack_copy_needed)
		s->st.stack_copy_needed = b->sk->copy_needed;
	b->sk->unwound = b->sk->truncated = 0;
	if (err)
		goto out;

	/* Tree membership is final now (for a part: as far as it knows). */
	keep(b, so, ns, thr, kept, weight, cut);
	err = emit_tasks(b);
	*nr = 0;
	for (size_t i = 0; i < ns; i++)
		*nr += !(evprof__sstore_samplep(&s->store, so[i].idx)->flags &
			 SS_UNSAMPLED);
	s->st.leaf_checked = s->st.leaf_gained = s->st.leaf_lost = 0;
	for (size_t i = 0; !err && i < ns; i++) {
		const struct ssample *x =
		    evprof__sstore_samplep(&s->store, so[i].idx);
		const struct bthread *th = evprof__tasks_thr(b->t, thr[i]);

		if (!(x->flags & SS_KEPT))
			continue;
		s->st.leaf_checked += !!(x->flags & SS_LEAF);
		s->st.leaf_gained += !!(x->flags & SS_LEAF_GAINED);
		s->st.leaf_lost += !!(x->flags & SS_LEAF_LOST);
		err = x->flags & SS_OFFCPU ? emit_offcpu(b, x, th, stacks[i])
		      : x->flags & SS_AGGR ? emit_aggr(b, x, th, stacks[i])
					   : emit_sample(b, x, th, stacks[i]);
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
	struct sess_tasks t;
	struct sess_stacks sk;
	struct build b = {
	    .s = s, .p = p, .t = &t, .sk = &sk, .until = UINT64_MAX};
	uint64_t kept = 0, weight = 0, cut = 0;
	size_t ns = 0;
	int err;

	if (!s || !p)
		return -EINVAL;
	/* What earlier parts built (and dropped) cannot be built again. */
	if (s->part)
		return -EBUSY;
	err = evprof__cut_flush(&s->cut, &s->store);
	if (err)
		return err;
	if (s->store.samples.n >= NO_INDEX || s->store.sb.n >= NO_INDEX)
		return -ENOMEM;
	t = (struct sess_tasks){
	    .st = &s->store, .roots = s->pids, .nr_roots = s->nr_pids};
	sk = (struct sess_stacks){.st = &s->store,
				  .t = &t,
				  .k = &s->stitch,
				  .p = p,
				  .sym = sym,
				  .regs_mask = s->fmt.sample_regs_user,
				  .max_stack = s->max_stack};
	s->st.processes = s->st.threads = 0;
	s->st.offcpu_voluntary = s->st.offcpu_preempted = 0;
	s->st.offcpu_unstarted = 0;
	memset(s->st.counted, 0, sizeof(s->st.counted));
	memset(s->st.unsampled, 0, sizeof(s->st.unsampled));
	b.nr_samples = s->store.samples.n;
	b.nr_sb = s->store.sb.n;
	err = prepare(&b);
	if (!err)
		err = build(&b, &ns, &kept, &weight, &cut);
	if (!err) {
		s->built = true;
		s->st.samples = weight;
		s->st.counter_samples = b.own;
		s->st.stacks_cut = cut;
		memcpy(s->st.stack_ends, b.ends, sizeof(b.ends));
		s->st.samples_filtered = s->idle + (ns - s->nr_offcpu) - kept;
	}
	evprof__stacks_free(&sk);
	evprof__tasks_free(&t);
	return err;
}

/* Makes s's part state, or readies it for profile p. */
static int part_for(struct evprof_session *s, struct evprof_profile *p,
		    struct evprof_symbolizer *sym)
{
	struct sess_part *pt = s->part;
	struct evprof_profile_stats ps = {.sz = sizeof(ps)};

	if (!pt) {
		pt = calloc(1, sizeof(*pt));
		if (!pt)
			return -ENOMEM;
		pt->t = (struct sess_tasks){
		    .st = &s->store, .roots = s->pids, .nr_roots = s->nr_pids};
		s->part = pt;
	}
	evprof_profile__stats(p, &ps);
	/* A new profile (maybe at a freed one's address) has no thread. */
	if (p != pt->p || !ps.threads) {
		evprof__stacks_free(&pt->sk);
		for (size_t i = 0; i < pt->t.procs.n; i++)
			pt->t.procs.a[i].prof = -1;
		for (size_t i = 0; i < pt->t.threads.n; i++)
			pt->t.threads.a[i].prof = -1;
		pt->sk =
		    (struct sess_stacks){.st = &s->store,
					 .t = &pt->t,
					 .k = &s->stitch,
					 .regs_mask = s->fmt.sample_regs_user,
					 .max_stack = s->max_stack};
		pt->p = p;
	}
	pt->sk.p = p;
	pt->sk.sym = sym;
	for (size_t i = 0; i < pt->t.procs.n; i++)
		pt->t.procs.a[i].kept = 0;
	for (size_t i = 0; i < pt->t.threads.n; i++)
		pt->t.threads.a[i].kept = 0;
	return 0;
}

/*
 * A part's build up to until, before the replay: what it needs ready (the
 * part state, held deltas of exited threads, columns, deferred chains) and
 * the store it sees, in *b.
 */
static int part_begin(struct evprof_session *s, struct evprof_profile *p,
		      struct evprof_symbolizer *sym, uint64_t until,
		      struct build *b)
{
	int err;

	if (!s || !p)
		return -EINVAL;
	/*
	 * An off-CPU interval ends, and a deferred user chain comes, after
	 * its sample: not within one part.
	 */
	if (s->has_switch && (until != UINT64_MAX || s->part))
		return -EOPNOTSUPP;
	if (s->stitch.deferred_samples && until != UINT64_MAX)
		return -EOPNOTSUPP;
	if (until == UINT64_MAX) {
		err = evprof__cut_flush(&s->cut, &s->store);
		if (err)
			return err;
	}
	if (s->store.samples.n >= NO_INDEX || s->store.sb.n >= NO_INDEX)
		return -ENOMEM;
	err = part_for(s, p, sym);
	if (!err && until != UINT64_MAX)
		err = evprof__part_flush_exits(s->part, &s->store, &s->cut,
					       until);
	if (err)
		return err;
	*b = (struct build){.s = s,
			    .p = p,
			    .t = &s->part->t,
			    .sk = &s->part->sk,
			    .until = until,
			    .nr_samples = s->store.samples.n,
			    .nr_sb = s->store.sb.n,
			    .part = true};
	return prepare(b);
}

/* A part's build done (err its result): what it built dropped, stats. */
static int part_end(struct evprof_session *s, const struct build *b, int err,
		    size_t ns, uint64_t kept, uint64_t weight, uint64_t cut)
{
	if (!err)
		err = evprof__part_drop(s->part, &s->store, &s->stitch,
					b->until, b->nr_sb);
	if (err) {
		/* Whatever was half built is built again next time. */
		for (size_t i = 0; i < s->store.samples.n; i++)
			s->store.samples.a[i].flags &= ~(uint32_t)SS_BUILT;
		return err;
	}
	/* Without memory for it, what is done stays: no harm. */
	if (b->until != UINT64_MAX)
		evprof__part_forget(s->part, &s->store, &s->cut, b->until);
#ifdef __GLIBC__
	/*
	 * Each part frees what it built amid what stays: glibc keeps those
	 * pages (RSS grew ~30 bytes a sample in bench/flat_memory.sh) unless
	 * asked to give free pages back; a trim walks the whole heap, so not
	 * after every small part.
	 */
	if (s->part->replayed + ns - s->part->trimmed >= TRIM_SAMPLES) {
		malloc_trim(0);
		s->part->trimmed = s->part->replayed + ns;
	}
#endif
	s->built = true;
	s->part->kept += kept;
	s->part->weight += weight;
	s->part->own += b->own;
	s->part->cut += cut;
	for (int i = 0; i < EVPROF_STACK_ENDS; i++)
		s->part->ends[i] += b->ends[i];
	memcpy(s->st.stack_ends, s->part->ends, sizeof(s->part->ends));
	s->part->replayed += ns;
	s->st.samples = s->part->weight;
	s->st.counter_samples = s->part->own;
	s->st.stacks_cut = s->part->cut;
	s->st.samples_filtered =
	    s->idle + (s->part->replayed - s->nr_offcpu) - s->part->kept;
	return 0;
}

int evprof_session__build_until(struct evprof_session *s,
				struct evprof_profile *p,
				struct evprof_symbolizer *sym,
				uint64_t until_ns)
{
	struct build b;
	uint64_t kept = 0, weight = 0, cut = 0;
	size_t ns = 0;
	int err = evprof__session_settle(s);

	if (!err)
		err = part_begin(s, p, sym, until_ns, &b);
	if (err)
		return err;
	err = build(&b, &ns, &kept, &weight, &cut);
	return part_end(s, &b, err, ns, kept, weight, cut);
}

/* ---- a part built behind the feeding ----------------------------------- */

struct behind_job {
	struct build b;
	int done; /* atomic: the build returned */
	int err;
	size_t ns;
	uint64_t kept, weight, cut;
};

static void *behind_main(void *arg)
{
	struct behind_job *j = arg;

	j->err = build(&j->b, &j->ns, &j->kept, &j->weight, &j->cut);
	__atomic_store_n(&j->done, 1, __ATOMIC_RELEASE);
	return NULL;
}

/*
 * Room in every array a build reads, so that records fed meanwhile do not
 * move them: a part's worth of samples (and their chains), side-band
 * events and strings. A record that finds too little waits for the build.
 */
#define BEHIND_SAMPLES 65536
#define BEHIND_WORDS   (BEHIND_SAMPLES * 16)
#define BEHIND_SB      4096
#define BEHIND_STRS    (1u << 20)

static int behind_room(struct evprof_session *s)
{
	struct sess_store *st = &s->store;

	if (EVPROF_VEC_RESERVE(&st->samples, st->samples.n + BEHIND_SAMPLES) ||
	    EVPROF_VEC_RESERVE(&st->deltas,
			       st->deltas.n +
				   BEHIND_SAMPLES * (st->nr_slots + 1)) ||
	    EVPROF_VEC_RESERVE(&st->chains, st->chains.n + BEHIND_WORDS) ||
	    EVPROF_VEC_RESERVE(&st->sb, st->sb.n + BEHIND_SB) ||
	    EVPROF_VEC_RESERVE(&st->strs, st->strs.n + BEHIND_STRS))
		return -ENOMEM;
	return 0;
}

int evprof__session_build_behind(struct evprof_session *s,
				 struct evprof_profile *p,
				 struct evprof_symbolizer *sym,
				 uint64_t until_ns)
{
	struct behind_job *j;
	int err;

	if (!s || !p)
		return -EINVAL;
	/* Still building: what came since waits for a later call. */
	if (s->behind && !__atomic_load_n(&s->behind->done, __ATOMIC_ACQUIRE))
		return 0;
	err = evprof__session_settle(s);
	if (err)
		return err;
	/*
	 * Cuts change stored samples as later records come, and unwinding
	 * stores the chains it makes: those build here.
	 */
	if (s->has_cut || (s->fmt.sample_type & PERF_SAMPLE_STACK_USER))
		return evprof_session__build_until(s, p, sym, until_ns);
	/* Room first: nothing the part will read moves after it begins. */
	err = behind_room(s);
	if (err)
		return err;
	j = calloc(1, sizeof(*j));
	if (!j)
		return -ENOMEM;
	err = part_begin(s, p, sym, until_ns, &j->b);
	if (!err && pthread_create(&s->behind_th, NULL, behind_main, j)) {
		behind_main(j); /* no thread: built here */
		err = part_end(s, &j->b, j->err, j->ns, j->kept, j->weight,
			       j->cut);
	} else if (!err) {
		s->behind = j;
		return 0;
	}
	free(j);
	return err;
}

int evprof__session_settle(struct evprof_session *s)
{
	struct behind_job *j = s ? s->behind : NULL;
	int err;

	if (!j)
		return 0;
	pthread_join(s->behind_th, NULL);
	s->behind = NULL;
	err = part_end(s, &j->b, j->err, j->ns, j->kept, j->weight, j->cut);
	free(j);
	return err;
}

bool evprof__session_room(const struct evprof_session *s, size_t size)
{
	const struct sess_store *st = &s->store;
	/* What one record of size bytes can add, at most, to each array. */
	size_t words = size / sizeof(uint64_t) + 4;

	return !s->behind ||
	       (st->samples.cap - st->samples.n >= 2 &&
		st->deltas.cap - st->deltas.n >= st->nr_slots + 2 &&
		st->chains.cap - st->chains.n >= words &&
		st->sb.cap - st->sb.n >= 2 &&
		st->strs.cap - st->strs.n >= size + 2);
}
