// SPDX-License-Identifier: MIT
/*
 * Sessions, feeding side: decodes each record and hands it to the layers
 * below: reads to deltas (session_delta.c), context-switch cuts to the held
 * deltas (session_cut.c), switch-outs that open off-CPU intervals and the
 * switch records that end them to session_offcpu.c, samples and side-band events (COMM, FORK, EXIT,
 * MMAP, seeds) to the storage (session_store.c) for the time-ordered
 * replay at build, stack copies and deferred callchains to
 * session_stitch.c. Pure: no syscalls; nothing on the per-sample path
 * allocates except the amortised growth of its arrays and tables.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <evprof/read.h>
#include <evprof/session.h>

#include "internal.h"
#include "part.h"
#include "session.h"

#ifndef PERF_RECORD_MISC_MMAP_DATA
#define PERF_RECORD_MISC_MMAP_DATA (1 << 13)
#endif

/* ---- lifecycle ---------------------------------------------------------- */

void evprof_session__free(struct evprof_session *s)
{
	if (!s)
		return;
	/* A build behind that nobody settled: its result goes too. */
	if (s->behind) {
		pthread_join(s->behind_th, NULL);
		free(s->behind);
	}
	for (size_t i = 0; i < s->nr_counters; i++)
		free(s->counters[i]);
	free(s->counters);
	free(s->sampler_counter);
	free(s->pids);
	evprof__delta_free(&s->delta);
	evprof__cut_free(&s->cut);
	evprof__stitch_free(&s->stitch);
	evprof__offcpu_free(&s->off);
	evprof__sstore_free(&s->store);
	if (s->cg_names) {
		struct evprof_hashmap_entry *cur;
		size_t bkt;

		EVPROF_HASHMAP_FOR_EACH(s->cg_names, cur, bkt)
		free((char *)cur->value);
	}
	evprof__hashmap_free(s->cg_names);
	evprof__hashmap_free(s->cg_last);
	if (s->part)
		evprof__part_free(s->part);
	free(s->part);
	free(s);
}

struct evprof_session *
evprof_session__new(const struct evprof_session_opts *opts)
{
	struct evprof_session *s;

	/* Fields are read directly below: sz must cover them all. */
	if (!EVPROF_OPTS_VALID(opts, false) || opts->sz < sizeof(*opts) ||
	    (opts->nr_counters && !opts->counters) ||
	    (opts->nr_pids && !opts->pids) ||
	    opts->nr_counters + !!opts->sampler_counter >
		EVPROF_PROFILE_MAX_COUNTERS) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < opts->nr_counters; i++) {
		if (!opts->counters[i] || !*opts->counters[i]) {
			errno = EINVAL;
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->fmt = opts->fmt;
	s->exclude_idle = opts->exclude_idle;
	s->max_stack = opts->max_stack ? opts->max_stack : 127;
	s->per_cpu = opts->per_cpu;
	/* Bits beyond the counters would name the sampler's slot. */
	s->own =
	    opts->own_counters &
	    (opts->nr_counters < 64 ? (1ULL << opts->nr_counters) - 1 : ~0ULL);
	s->nr_slots = opts->nr_counters + !!opts->sampler_counter;
	s->switch_slots = opts->switch_counters;
	s->store.nr_slots = s->nr_slots;
	s->delta.per_cpu = opts->per_cpu;
	s->stitch.sample_type = opts->fmt.sample_type;
	s->stitch.regs_mask = opts->fmt.sample_regs_user;
	s->stitch.stack_top = opts->stack_top;
	s->stitch.stack_top_ctx = opts->stack_top_ctx;
	s->stitch.max_stack_bytes =
	    opts->max_stack_bytes ? opts->max_stack_bytes : (size_t)1 << 30;
	if (opts->nr_counters) {
		s->counters = calloc(opts->nr_counters, sizeof(*s->counters));
		if (!s->counters)
			goto nomem;
		for (size_t i = 0; i < opts->nr_counters; i++) {
			s->counters[i] = strdup(opts->counters[i]);
			if (!s->counters[i])
				goto nomem;
			s->nr_counters++;
		}
	}
	if (opts->sampler_counter) {
		s->sampler_counter = strdup(opts->sampler_counter);
		if (!s->sampler_counter)
			goto nomem;
	}
	if (opts->nr_pids) {
		s->pids = malloc(opts->nr_pids * sizeof(*s->pids));
		if (!s->pids)
			goto nomem;
		memcpy(s->pids, opts->pids, opts->nr_pids * sizeof(*s->pids));
		s->nr_pids = opts->nr_pids;
	}
	return s;
nomem:
	evprof_session__free(s);
	errno = ENOMEM;
	return NULL;
}

int evprof_session__set_id(struct evprof_session *s, uint64_t id, int role)
{
	int err;

	if (!s ||
	    (role != EVPROF_SESSION_SAMPLER &&
	     role != EVPROF_SESSION_CPU_TIME && role != EVPROF_SESSION_CUT &&
	     role != EVPROF_SESSION_SWITCH_OUT &&
	     (role < 0 || (size_t)role >= s->nr_counters)))
		return -EINVAL;
	err = evprof__delta_set_role(&s->delta, id, role);
	if (!err) {
		s->has_cut |= role == EVPROF_SESSION_CUT ||
			      role == EVPROF_SESSION_SWITCH_OUT;
		s->has_switch |= role == EVPROF_SESSION_SWITCH_OUT;
	}
	return err;
}

/* ---- samples ------------------------------------------------------------ */

/* The sample's callchain, or its ip alone in the context cpumode names. */
static void sample_chain(const struct evprof_session *s,
			 const struct evprof_record *r, uint64_t one[2],
			 const uint64_t **ips, uint64_t *nr)
{
	const struct evprof_sample *smp = &r->sample;

	*ips = smp->callchain;
	*nr = smp->callchain_nr;
	if ((s->fmt.sample_type & PERF_SAMPLE_CALLCHAIN) && *nr)
		return;
	*nr = 0;
	if (s->fmt.sample_type & PERF_SAMPLE_IP) {
		bool k = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			 PERF_RECORD_MISC_KERNEL;

		one[0] = k ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
		one[1] = smp->ip;
		*ips = one;
		*nr = 2;
	}
}

static bool is_cut_role(int role)
{
	return role == EVPROF_SESSION_CUT || role == EVPROF_SESSION_SWITCH_OUT;
}

/*
 * The role of a cut sample's id (known: the sample's id is declared, with
 * role), or 0 for a profile sample. A software
 * event or tracepoint firing for several perf sessions on a CPU shares one
 * perf_sample_data between them (do_perf_sw_event(), perf_tp_event(),
 * Linux 6.18): the fields the first event filled are not filled again
 * (data->sample_flags), so our sample may carry the IDENTIFIER of another
 * session's event (the newest opened comes first). Its READ part is read
 * from our own group: the sampling member that counted since the group's
 * last read is the one that fired. (Its TIME and CALLCHAIN are that
 * session's too: the same instant and stack unless its clock or call
 * graph options differ, which cannot be undone here.)
 */
static int cut_role(const struct evprof_session *s, bool known, int role,
		    const struct evprof_snapshot *snap,
		    const struct delta_ref *refs)
{
	if (!s->has_cut)
		return 0;
	if (known)
		return is_cut_role(role) ? role : 0;
	for (uint32_t i = 0; i < snap->nr; i++)
		if (refs[i].inst >= 0 && is_cut_role(refs[i].role) &&
		    evprof__delta_moved(&s->delta, &refs[i],
					snap->values[i].raw))
			return refs[i].role;
	return 0;
}

/*
 * The deltas a sample's reads give, by slot (vals, *has) and CPU time;
 * with cut_read, what its cut members counted since their last read, less
 * the sample's own one when it is a cut (UINT64_MAX: not known).
 */
struct sample_deltas {
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t has, cpu, switched;
	bool has_cpu, cut_read;
};

/* Deltas no sample carries: the idle task's, a gap's. */
static void drop_deltas(struct evprof_session *s,
			const struct sample_deltas *sd)
{
	for (size_t i = 0; i < s->nr_slots; i++)
		if (sd->has & (1ULL << i))
			s->dropped[i] += sd->vals[i];
	if (sd->has_cpu)
		s->dropped_cpu += sd->cpu;
}

/*
 * A per-CPU read: what a stretch no read ended (cut.h) put in sd comes
 * out, its CPU time, and its switch-outs from the context-switch slots.
 * The first read after a LOST record holds what the CPU counted in the
 * gap, for threads only the lost records named: no thread's, unless the
 * same task read last and no cut member counted since (it ran all through).
 */
static void unseen_stretch(struct evprof_session *s, struct cpu_state *cs,
			   const struct evprof_sample *smp, uint32_t read_tid,
			   uint32_t tid, struct sample_deltas *sd)
{
	uint32_t sw;

	if (cs->lost && (sd->has || sd->has_cpu)) {
		cs->lost = false;
		if (!sd->cut_read || sd->switched || !cs->read ||
		    cs->read_tid != read_tid) {
			drop_deltas(s, sd);
			sd->has = 0;
			sd->has_cpu = false;
			sd->cpu = 0;
			s->st.reads_after_lost++;
		}
	}
	s->dropped_cpu +=
	    evprof__cut_cpu_read(cs, read_tid, tid, smp->time, &sd->cpu, &sw);
	for (size_t k = 0; sw && k < s->nr_slots; k++)
		if ((s->switch_slots & sd->has) >> k & 1)
			sd->vals[k] -= sd->vals[k] < sw ? sd->vals[k] : sw;
}

static void take_deltas(struct evprof_session *s,
			const struct evprof_snapshot *snap,
			const struct delta_ref *refs, uint64_t time, bool cut,
			struct sample_deltas *sd)
{
	for (uint32_t i = 0; i < snap->nr; i++) {
		const struct delta_ref *ref = &refs[i];
		uint64_t d, raw = snap->values[i].raw;
		int slot;

		if (ref->inst < 0) {
			s->st.unknown_ids++;
			continue;
		}
		if (is_cut_role(ref->role)) {
			d = evprof__delta_note(&s->delta, ref, raw, time);
			sd->switched =
			    d == UINT64_MAX || sd->switched == UINT64_MAX
				? UINT64_MAX
				: sd->switched + d;
			sd->cut_read = true;
			continue;
		}
		if (ref->role == EVPROF_SESSION_SAMPLER && !s->sampler_counter)
			continue;
		if (!evprof__delta_take(&s->delta, ref, raw, time, &d))
			continue;
		if (ref->role == EVPROF_SESSION_CPU_TIME) {
			sd->cpu += d;
			sd->has_cpu = true;
			continue;
		}
		slot = ref->role == EVPROF_SESSION_SAMPLER ? (int)s->nr_counters
							   : ref->role;
		if (!(sd->has & (1ULL << slot)))
			sd->vals[slot] = 0;
		sd->vals[slot] += d;
		sd->has |= 1ULL << slot;
	}
	if (sd->switched != UINT64_MAX)
		sd->switched =
		    sd->switched >= cut ? sd->switched - cut : UINT64_MAX;
}

/*
 * Whose sample one of an id of role (known: declared) is: a counter's
 * attributed by its own samples, or the sampler's (any other).
 */
static int sample_owner(const struct evprof_session *s, bool known, int role)
{
	if (!known || role < 0 || !(s->own >> role & 1))
		return EVPROF_SESSION_SAMPLER;
	return role;
}

/*
 * The slots (bits) a sample whose id has role takes, and whether its CPU
 * time: a counter's own sample takes its counter, the sampler's the rest.
 */
static uint64_t owned_slots(const struct evprof_session *s, int role, bool *cpu)
{
	*cpu = role < 0;
	return role >= 0 ? 1ULL << role : ~s->own;
}

/*
 * Holds what sd has that a sample of role does not take, then adds what
 * the thread held for it.
 */
static void settle_deltas(struct evprof_session *s, struct tstate *ts, int role,
			  struct sample_deltas *sd)
{
	bool cpu_mine;
	uint64_t mine = owned_slots(s, role, &cpu_mine);
	uint64_t other = sd->has & ~mine;
	bool other_cpu = sd->has_cpu && !cpu_mine;

	if (other || other_cpu) {
		evprof__cut_hold(&s->cut, &s->store, ts, sd->vals, other,
				 sd->cpu, other_cpu);
		sd->has &= mine;
		if (other_cpu) {
			sd->cpu = 0;
			sd->has_cpu = false;
		}
	}
	evprof__cut_take(&s->cut, &s->store, ts, mine, cpu_mine, sd->vals,
			 &sd->has, &sd->cpu, &sd->has_cpu);
}

/*
 * The task a sample names, per CPU the one the CPU's latest switch-in
 * record names where the two differ (cs: the CPU's state, NULL for none),
 * and the tid the CPU's reads go by; true when that task replaced the
 * sample's. Linux fills the sample data of a software event or a
 * tracepoint once for every event that counts it, and keeps the first
 * one's task ids (perf_prepare_sample(), data->sample_flags; seen on
 * 6.18): a session in another pid namespace counting the same event gives
 * its own numbers to ours, 0 for a task it cannot see, which would go as
 * the idle task's. Switch records are written per event.
 * Per CPU, tid -1 is a dead task's: the one whose EXIT the CPU saw last,
 * with its pid when that is -1 too (its process reaped before its last
 * switch-out, often by a parent on another CPU): what it held would go to
 * no process else.
 */
static bool sample_task(const struct evprof_session *s,
			const struct evprof_sample *smp,
			const struct cpu_state *cs, uint32_t *pid,
			uint32_t *tid, uint32_t *read_tid)
{
	bool moved = cs && cs->on && smp->tid != UINT32_MAX &&
		     (smp->tid != cs->in_tid || smp->pid != cs->in_pid);

	*pid = moved ? cs->in_pid : smp->pid;
	*tid = moved ? cs->in_tid : smp->tid;
	*read_tid = *tid;
	if (*tid != UINT32_MAX || !s->per_cpu)
		return moved;
	*tid = evprof__cut_dead_tid(&s->cut, smp->cpu);
	if (*pid == UINT32_MAX)
		*pid = evprof__cut_dead_pid(&s->cut, smp->cpu);
	return false;
}

/* ---- cgroups ------------------------------------------------------------ */

#define CG_LAST_MAX 65536 /* threads whose last cgroup id is kept */

static struct evprof_hashmap *u64_map(struct evprof_hashmap **m)
{
	if (!*m)
		*m = evprof__hashmap_new(evprof__hashmap_u64_hash,
					 evprof__hashmap_u64_equal, NULL);
	return *m;
}

int evprof_session__name_cgroup(struct evprof_session *s, uint64_t id,
				const char *path)
{
	long old;
	char *p;
	int ret;

	if (!s || !path)
		return -EINVAL;
	if (!u64_map(&s->cg_names))
		return -ENOMEM;
	if (evprof__hashmap_find(s->cg_names, (long)id, &old) &&
	    !strcmp((const char *)old, path))
		return 0;
	p = strdup(path);
	if (!p)
		return -ENOMEM;
	/* An id named again (a CGROUP record after the walk): the latest. */
	ret = evprof__hashmap_set(s->cg_names, (long)id, (long)p, NULL, &old);
	if (ret < 0) {
		free(p);
		return -ENOMEM;
	}
	if (ret == 1)
		free((char *)old);
	return 0;
}

int evprof_session__name_ns_ids(struct evprof_session *s, uint64_t time,
				pid_t pid, pid_t tid, pid_t ns_pid,
				pid_t ns_tid)
{
	struct sb_event *e;

	if (!s || pid <= 0 || tid <= 0 || ns_pid <= 0 || ns_tid <= 0)
		return -EINVAL;
	e = evprof__sstore_sb_new(&s->store, SB_NS_IDS, time);
	if (!e)
		return -ENOMEM;
	e->pid = (uint32_t)pid;
	e->tid = (uint32_t)tid;
	e->ppid = (uint32_t)ns_pid;
	e->ptid = (uint32_t)ns_tid;
	evprof__sstore_sb_commit(&s->store);
	return 0;
}

bool evprof__session_cgroup_named(const struct evprof_session *s, uint64_t id)
{
	return s->cg_names && evprof__hashmap_find(s->cg_names, (long)id, NULL);
}

/* Task tid of pid is in cgroup id from time on. */
static int sb_cgroup(struct evprof_session *s, uint64_t time, uint32_t pid,
		     uint32_t tid, uint64_t id)
{
	struct sb_event *e = evprof__sstore_sb_new(&s->store, SB_CGROUP, time);

	if (!e)
		return -ENOMEM;
	e->pid = pid;
	e->tid = tid;
	e->addr = id;
	evprof__sstore_sb_commit(&s->store);
	return 0;
}

int evprof__session_note_cgroup(struct evprof_session *s, uint64_t time,
				uint32_t pid, uint32_t tid, uint64_t id)
{
	long last;
	int err;

	if (!id)
		return 0;
	/*
	 * Bounded over a long recording's tid churn: forgetting only costs
	 * one more event for each thread's next sample.
	 */
	if (s->cg_last && evprof__hashmap_size(s->cg_last) >= CG_LAST_MAX) {
		evprof__hashmap_free(s->cg_last);
		s->cg_last = NULL;
	}
	if (!u64_map(&s->cg_last))
		return -ENOMEM;
	if (evprof__hashmap_find(s->cg_last, (long)tid, &last) &&
	    (uint64_t)last == id)
		return 0;
	err = sb_cgroup(s, time, pid, tid, id);
	if (!err && evprof__hashmap_set(s->cg_last, (long)tid, (long)id, NULL,
					NULL) < 0)
		err = -ENOMEM;
	return err;
}

static int feed_sample(struct evprof_session *s, const struct evprof_record *r)
{
	const struct evprof_sample *smp = &r->sample;
	uint32_t pid, tid;
	struct evprof_snapshot snap;
	struct delta_ref refs[EVPROF_SNAPSHOT_MAX];
	struct sample_deltas sd = {.has = 0};
	uint64_t one[2];
	const uint64_t *ips;
	uint64_t nr;
	struct ssample *ss;
	struct tstate *ts = NULL;
	struct cpu_state *cs = NULL;
	int role, own, id_role = 0;
	bool cut, off, known, idle, moved;
	uint32_t chain = 0, read_tid;
	int err = 0;

	if (s->per_cpu && (s->fmt.sample_type & PERF_SAMPLE_CPU))
		err = evprof__cut_cpu(&s->cut, smp->cpu, &cs);
	if (err)
		return err;
	moved = sample_task(s, smp, cs, &pid, &tid, &read_tid);
	/* Per-CPU values must follow every read, the idle task's too. */
	idle = s->exclude_idle && (s->fmt.sample_type & PERF_SAMPLE_TID) &&
	       pid == 0;
	if (idle && !s->per_cpu) {
		s->idle++;
		return 0;
	}
	if (!idle && (s->fmt.sample_type & PERF_SAMPLE_CGROUP)) {
		err = evprof__session_note_cgroup(s, smp->time, pid, tid,
						  smp->cgroup);
		if (err)
			return err;
	}
	snap.nr = 0;
	if (s->fmt.sample_type & PERF_SAMPLE_READ) {
		err = evprof_snapshot__parse(&snap, smp->read, smp->read_size,
					     s->fmt.read_format);
		if (err < 0)
			return err;
	}
	err = 0;
	/* Everything that can fail comes before the state changes. */
	for (uint32_t i = 0; !err && i < snap.nr; i++)
		err = evprof__delta_prepare(&s->delta, snap.values[i].id, tid,
					    &refs[i]);
	if (err)
		return err;
	/* The sample's own id, looked up once for both questions. */
	known = (s->has_cut || s->own) &&
		evprof__delta_role(&s->delta, smp->id, &id_role);
	role = cut_role(s, known, id_role, &snap, refs);
	cut = role != 0;
	own = cut ? EVPROF_SESSION_SAMPLER : sample_owner(s, known, id_role);
	/* A switch-out that opens an off-CPU interval keeps its own stack. */
	off = role == EVPROF_SESSION_SWITCH_OUT;
	if (!err && (s->has_cut || s->own) && !idle) {
		ts = evprof__tstate_get(&s->cut, &s->store, tid);
		if (!ts)
			err = -ENOMEM;
	}
	if (!err && !idle && (!cut || off)) {
		sample_chain(s, r, one, &ips, &nr);
		err = evprof__sstore_chain(&s->store, ips, nr, &chain);
	}
	if (!err && !idle && (!cut || off))
		err = evprof__sstore_sample_reserve(&s->store);
	if (err)
		return err;

	s->st.samples_moved += moved;
	take_deltas(s, &snap, refs, smp->time, cut, &sd);
	if (cs)
		unseen_stretch(s, cs, smp, read_tid, tid, &sd);
	if (idle) {
		drop_deltas(s, &sd);
		s->idle += !cut;
		return 0;
	}
	if (ts) {
		ts->pid = pid;
		ts->time = smp->time;
	}
	if (cut) {
		evprof__cut_hold(&s->cut, &s->store, ts, sd.vals, sd.has,
				 sd.cpu, sd.has_cpu);
		if (off) {
			ss = evprof__sstore_sample(&s->store,
						   &(struct ssample){
						       .time = smp->time,
						       .pid = pid,
						       .tid = tid,
						       .chain = chain,
						       .flags = SS_OFFCPU,
						   },
						   NULL);
			evprof__stitch_sample(&s->stitch, smp, ss);
			s->nr_offcpu++;
		}
		return 0;
	}
	if (ts)
		settle_deltas(s, ts, own, &sd);

	ss = evprof__sstore_sample(&s->store,
				   &(struct ssample){
				       .time = smp->time,
				       .cpu_delta = sd.cpu,
				       .has = sd.has,
				       .pid = pid,
				       .tid = tid,
				       .chain = chain,
				       .flags = (sd.has_cpu ? SS_HAS_CPU : 0) |
						(own >= 0 ? SS_OWN : 0),
				   },
				   sd.vals);
	evprof__stitch_sample(&s->stitch, smp, ss);
	return 0;
}

/* ---- side-band records -------------------------------------------------- */

/* A THROTTLE record, counted by the role of the event it names. */
static void count_throttle(struct evprof_session *s, uint64_t id)
{
	int role;

	s->st.throttled++;
	if (!evprof__delta_role(&s->delta, id, &role))
		return;
	if (role >= 0 && (size_t)role < s->nr_counters)
		s->st.throttled_by[role]++;
	else if (role == EVPROF_SESSION_SAMPLER &&
		 s->nr_counters < EVPROF_PROFILE_MAX_COUNTERS)
		s->st.throttled_by[s->nr_counters]++;
	else
		s->st.throttled_hidden++;
}

static int feed_comm(struct evprof_session *s, const struct evprof_record *r)
{
	struct sb_event *e =
	    evprof__sstore_sb_new(&s->store, SB_COMM, r->sid.time);
	uint32_t off;

	if (!e || evprof__sstore_str(&s->store, r->comm.comm, &off))
		return -ENOMEM;
	e->pid = r->comm.pid;
	e->tid = r->comm.tid;
	e->exec = r->comm.exec;
	e->str = off;
	evprof__sstore_sb_commit(&s->store);
	return 0;
}

static int feed_task(struct evprof_session *s, const struct evprof_record *r)
{
	bool fork = r->type == PERF_RECORD_FORK;
	struct sb_event *e = evprof__sstore_sb_new(
	    &s->store, fork ? SB_FORK : SB_EXIT, r->task.time);

	if (!e)
		return -ENOMEM;
	e->pid = r->task.pid;
	e->ppid = r->task.ppid;
	e->tid = r->task.tid;
	e->ptid = r->task.ptid;
	evprof__sstore_sb_commit(&s->store);
	if (fork) {
		evprof__delta_fork(&s->delta, r->task.tid, r->task.time);
		return evprof__cut_fork(&s->cut, &s->store, r->task.tid,
					r->task.time);
	}
	if (s->per_cpu && r->sid.present &&
	    (s->fmt.sample_type & PERF_SAMPLE_CPU))
		return evprof__cut_exit(&s->cut, r->sid.cpu, r->task.pid,
					r->task.tid);
	return 0;
}

/*
 * A switch record: the switch-out starts its thread's off-CPU interval
 * (and says whether it was preempted), the switch-in ends it; per CPU, a
 * switch-in also says where its thread's stretch began and who runs until
 * the next switch-out (cut.h). The sample id
 * names the task switching (out: the one leaving, in: the one coming), in
 * both record types.
 */
static int feed_switch(struct evprof_session *s, const struct evprof_record *r)
{
	uint32_t tid = r->sid.tid;
	int err;

	if (!r->sid.present || !(s->fmt.sample_type & PERF_SAMPLE_TID) ||
	    !(s->fmt.sample_type & PERF_SAMPLE_TIME))
		return 0;
	if (s->per_cpu && r->type == PERF_RECORD_SWITCH_CPU_WIDE &&
	    (s->fmt.sample_type & PERF_SAMPLE_CPU)) {
		err = r->sw.out
			  ? evprof__cut_unknown(&s->cut, r->sid.cpu, false)
			  : evprof__cut_switch_in(
				&s->cut, r->sid.cpu, r->sid.pid, tid,
				r->sw.next_prev_tid, r->sid.time);
		if (err)
			return err;
	}
	/* The idle task and dead tasks (tid -1) have no interval to end. */
	if (!s->has_switch || !tid || tid == UINT32_MAX)
		return 0;
	return evprof__offcpu_switch(&s->off, tid, r->sid.time, !r->sw.out,
				     r->sw.preempt);
}

static int feed_mmap(struct evprof_session *s, const struct evprof_record *r)
{
	const struct evprof_record_mmap *m = &r->mmap;
	struct sb_event *e;
	uint32_t off, bid = 0;

	/* Only code matters for stacks. */
	if (r->type == PERF_RECORD_MMAP2
		? !(m->prot & PROT_EXEC)
		: (r->misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	/* pid -1: kernel images, symbolized from kallsyms. */
	if (m->pid == UINT32_MAX || !m->len || m->addr + m->len < m->addr)
		return 0;
	e = evprof__sstore_sb_new(&s->store, SB_MMAP, r->sid.time);
	if (!e || evprof__sstore_str(&s->store, m->filename, &off) ||
	    (m->build_id_size && evprof__sstore_bytes(&s->store, m->build_id,
						      m->build_id_size, &bid)))
		return -ENOMEM;
	e->pid = m->pid;
	e->tid = m->tid;
	e->addr = m->addr;
	e->len = m->len;
	e->pgoff = m->pgoff;
	e->ino = m->ino;
	e->str = off;
	e->build_id = bid;
	e->build_id_len = m->build_id_size;
	evprof__sstore_sb_commit(&s->store);
	return 0;
}

int evprof_session__feed(struct evprof_session *s, const void *rec, size_t size)
{
	struct evprof_record r;
	int err;

	if (!s || !rec)
		return -EINVAL;
	s->st.records++;
	err = evprof_record__parse(&r, rec, size, &s->fmt);
	if (err == -ENOTSUP && r.type != PERF_RECORD_SAMPLE)
		return 0; /* a newer record type: nothing we use */
	if (err < 0) {
		s->st.malformed++;
		return err;
	}
	if (s->has_switch) {
		uint64_t t = r.type == PERF_RECORD_SAMPLE ? r.sample.time
			     : r.sid.present		  ? r.sid.time
							  : 0;

		if (t > s->off.last_time)
			s->off.last_time = t;
	}
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		err = feed_sample(s, &r);
		break;
	case PERF_RECORD_SWITCH:
	case PERF_RECORD_SWITCH_CPU_WIDE:
		err = feed_switch(s, &r);
		break;
	case PERF_RECORD_COMM:
		err = feed_comm(s, &r);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		err = feed_task(s, &r);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		err = feed_mmap(s, &r);
		break;
	case PERF_RECORD_LOST:
		s->st.lost_records++;
		s->st.lost_events += r.lost.lost;
		if (s->per_cpu && r.sid.present &&
		    (s->fmt.sample_type & PERF_SAMPLE_CPU))
			err = evprof__cut_unknown(&s->cut, r.sid.cpu, true);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		s->st.lost_samples += r.lost_samples;
		break;
	case PERF_RECORD_THROTTLE:
		count_throttle(s, r.throttle.id);
		break;
	case EVPROF_RECORD_CALLCHAIN_DEFERRED:
		err = evprof__stitch_deferred(&s->stitch, &s->store, &r);
		break;
	case PERF_RECORD_CGROUP:
		err =
		    evprof_session__name_cgroup(s, r.cgroup.id, r.cgroup.path);
		break;
	default:
		break;
	}
	if (err < 0 && err != -ENOMEM)
		s->st.malformed++;
	return err;
}

/* ---- seeds -------------------------------------------------------------- */

static int seed_name(struct evprof_session *s, enum sb_kind kind, pid_t pid,
		     pid_t tid, const char *name)
{
	/* Seeds come before every record: time 0. */
	struct sb_event *e = evprof__sstore_sb_new(&s->store, kind, 0);
	uint32_t off;

	if (!e || evprof__sstore_str(&s->store, name, &off))
		return -ENOMEM;
	e->pid = (uint32_t)pid;
	e->tid = (uint32_t)tid;
	e->str = off;
	evprof__sstore_sb_commit(&s->store);
	return 0;
}

static int seed_map(struct evprof_session *s, pid_t pid,
		    const struct evprof_map *m)
{
	struct sb_event *e;
	uint32_t off;

	if (!(m->prot & EVPROF_MAP_EXEC) || m->end <= m->start)
		return 0;
	e = evprof__sstore_sb_new(&s->store, SB_MMAP, 0);
	if (!e || evprof__sstore_str(&s->store, m->path ? m->path : "", &off))
		return -ENOMEM;
	e->pid = (uint32_t)pid;
	e->tid = (uint32_t)pid;
	e->addr = m->start;
	e->len = m->end - m->start;
	e->pgoff = m->pgoff;
	e->ino = m->inode;
	e->str = off;
	evprof__sstore_sb_commit(&s->store);
	return 0;
}

int evprof_session__seed(struct evprof_session *s,
			 const struct evprof_session_seed *seed)
{
	size_t mark, strs;
	int err = 0;

	const char *cgroup =
	    seed && seed->sz >= offsetof(struct evprof_session_seed, cgroup) +
				    sizeof(seed->cgroup)
		? seed->cgroup
		: NULL;

	if (!s || !seed ||
	    seed->sz < offsetof(struct evprof_session_seed, cgroup) ||
	    seed->pid <= 0 || (seed->nr_threads && !seed->threads) ||
	    (seed->nr_maps && !seed->maps))
		return -EINVAL;
	mark = s->store.sb.n;
	strs = s->store.strs.n;
	if (seed->name)
		err = seed_name(s, SB_SEED_PROC, seed->pid, seed->pid,
				seed->name);
	for (size_t i = 0; !err && i < seed->nr_threads; i++) {
		const struct evprof_session_thread_seed *t = &seed->threads[i];

		if (t->name)
			err = seed_name(s, SB_SEED_THREAD, seed->pid, t->tid,
					t->name);
	}
	for (size_t i = 0; !err && i < seed->nr_maps; i++)
		err = seed_map(s, seed->pid, &seed->maps[i]);
	if (!err && cgroup && *cgroup) {
		/* A made-up id: no inode number has the top bit. */
		uint64_t id = 1ULL << 63 | ++s->seed_cgroup;

		err = evprof_session__name_cgroup(s, id, cgroup);
		if (!err)
			err = sb_cgroup(s, 0, (uint32_t)seed->pid,
					(uint32_t)seed->pid, id);
		for (size_t i = 0; !err && i < seed->nr_threads; i++)
			if (seed->threads[i].tid != seed->pid)
				err = sb_cgroup(s, 0, (uint32_t)seed->pid,
						(uint32_t)seed->threads[i].tid,
						id);
	}
	if (err) {
		/* all or nothing */
		s->store.sb.n = mark;
		s->store.strs.n = strs;
	}
	return err;
}

/* ---- queries ------------------------------------------------------------ */

void evprof_session__end(struct evprof_session *s, uint64_t time_ns)
{
	if (s)
		s->off.end_time = time_ns;
}

int evprof_session__stats(const struct evprof_session *s,
			  struct evprof_session_stats *st)
{
	struct evprof_session_stats full;

	if (!s)
		return -EINVAL;
	full = s->st;
	full.counter_resets = s->delta.counter_resets;
	full.reads_rejected = s->delta.reads_rejected;
	full.stacks_dropped = s->stitch.stacks_dropped;
	full.offcpu_unmatched = s->off.unmatched;
	full.deferred_samples = s->stitch.deferred_samples;
	full.deferred_unstitched = s->stitch.deferred_unstitched;
	full.first_time = s->store.first_time;
	full.last_time = s->store.last_time;
	if (!s->built) {
		full.samples =
		    s->store.samples.n - s->nr_offcpu - s->cut.nr_unsampled;
		full.samples_filtered = s->idle;
	}
	return EVPROF_STATS_COPY(st, &full);
}

/* The slot of counter, -1 for CPU time; false for no such counter. */
static bool counter_slot(const struct evprof_session *s, int counter, int *slot)
{
	*slot = counter;
	if (counter == EVPROF_SESSION_SAMPLER) {
		*slot = (int)s->nr_counters;
		return s->sampler_counter;
	}
	if (counter == EVPROF_SESSION_CPU_TIME) {
		*slot = -1;
		return true;
	}
	return counter >= 0 && (size_t)counter < s->nr_counters;
}

static uint64_t sample_delta(const struct evprof_session *s,
			     const struct ssample *x, int slot)
{
	if (slot < 0)
		return x->flags & SS_HAS_CPU ? x->cpu_delta : 0;
	return evprof__sstore_delta(&s->store, x, (size_t)slot);
}

uint64_t evprof_session__thread_total(const struct evprof_session *s, pid_t tid,
				      int counter)
{
	const struct ssample *ss = s->store.samples.a;
	uint64_t sum;
	int slot;

	if (!counter_slot(s, counter, &slot))
		return 0;
	sum = evprof__part_thread_total(s->part, s->nr_slots, (uint32_t)tid,
					slot);
	for (size_t i = 0; i < s->store.samples.n; i++) {
		const struct ssample *x = &ss[i];

		if (x->tid != (uint32_t)tid ||
		    (s->built && !(x->flags & SS_KEPT)))
			continue;
		sum += sample_delta(s, x, slot);
	}
	return sum;
}

uint64_t evprof_session__unattributed(const struct evprof_session *s,
				      int counter)
{
	const struct ssample *ss = s->store.samples.a;
	uint64_t sum;
	int slot;

	if (!counter_slot(s, counter, &slot))
		return 0;
	sum = slot < 0 ? s->dropped_cpu : s->dropped[slot];
	sum += evprof__part_unkept(s->part, s->nr_slots, slot);
	for (size_t i = 0; s->built && i < s->store.samples.n; i++)
		if (!(ss[i].flags & SS_KEPT))
			sum += sample_delta(s, &ss[i], slot);
	return sum;
}
