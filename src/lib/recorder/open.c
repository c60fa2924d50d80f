// SPDX-License-Identifier: MIT
/* Opening the ring engine: see open.h and include/evprof/recorder.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <time.h>
#include <unistd.h>

#include <evprof/proc.h>

#include "open.h"
#include "symbols/symbols.h"

/*
 * -g fp with leaf recovery: the user registers and a small stack copy
 * beside the kernel's chain. In a sample taken in the kernel (a switch-out)
 * they are the ones saved at its entry (perf_sample_regs_user():
 * perf_get_regs_user(), task_pt_regs()), and the copy is taken
 * from their SP.
 */
static void add_leaf_stack(const struct evprof__ring_engine *r,
			   struct perf_event_attr *a)
{
	if (!r->s->leaf_stack)
		return;
	a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	a->sample_regs_user = evprof__unwind_leaf_regs_mask();
	a->sample_stack_user = r->s->leaf_stack;
}

/* The sampler's callchain bits beyond PERF_SAMPLE_CALLCHAIN. */
static void set_call_graph(const struct evprof__ring_engine *r,
			   struct perf_event_attr *a)
{
	if (r->s->dwarf_stack) {
		/* The kernel part from the kernel, the user part unwound. */
		a->sample_type |=
		    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = evprof_session__unwind_regs();
		a->sample_stack_user = r->s->dwarf_stack;
		a->exclude_callchain_user = 1;
	}
	add_leaf_stack(r, a);
	if (r->s->defer) {
		evprof_attr__set_bit(a, EVPROF_ATTR_BIT_DEFER_CALLCHAIN, true);
		/* The records come on the side-band event: this one. */
		evprof_attr__set_bit(a, EVPROF_ATTR_BIT_DEFER_OUTPUT, true);
	}
}

/* What every member shares: format, clock, inherit, privilege. */
static void common_attr(const struct evprof__ring_engine *r,
			struct perf_event_attr *a, uint64_t sample_type)
{
	a->sample_type = sample_type;
	/* Inherited counters report per thread only with TID (6.12). */
	a->inherit = !r->s->per_cpu;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* one clock for the group */
}

static bool is_cpu_clock(const struct evprof_event_spec *s)
{
	return s->attr.type == PERF_TYPE_SOFTWARE &&
	       s->attr.config == PERF_COUNT_SW_CPU_CLOCK;
}

/*
 * The sampler's own bits: -F or -c, the side-band, the call graph. It
 * opens disabled: enable_on_exec for a command in task mode, else enabled
 * at start.
 */
static void sampler_attr(const struct evprof__ring_engine *r,
			 struct perf_event_attr *a)
{
	evprof__engine_sampler_rate(r->s, a);
	a->disabled = 1;
	/*
	 * A per-CPU cpu-clock ticks in idle too, where the scheduler
	 * tick may be stopped: the kernel counts its interrupts per
	 * tick and, past perf_event_max_sample_rate / HZ without one,
	 * throttles the group, the cut member with it (Linux 6.16),
	 * until the next tick: every switch-out in between loses its
	 * cut (off-CPU intervals, seen 16 of 200 on a sleeping
	 * thread). Idle samples are dropped anyway, and with the cut
	 * member each idle stretch ends in a cut that carries the
	 * CPU's reads.
	 */
	a->exclude_idle = r->s->per_cpu && r->cut_member &&
			  !r->s->include_idle && is_cpu_clock(&r->s->events[0]);
	a->enable_on_exec = r->s->child > 0 && !r->s->per_cpu;
	a->mmap = a->mmap2 = a->comm = a->comm_exec = 1;
	a->task = 1;
	/*
	 * Switch records: when each off-CPU interval ends; per CPU,
	 * where each thread's stretch begins when the task before it
	 * was never sampled (the cut's reads alone would give that
	 * task's time to it).
	 */
	a->context_switch = r->s->off_cpu || (r->s->per_cpu && r->cut_member);
	set_call_graph(r, a);
	a->watermark = 1;
	a->wakeup_watermark = (uint32_t)((r->s->ring_pages < RING_PAGES_SMALL
					      ? r->s->ring_pages
					      : RING_PAGES_SMALL) *
					 4096 / 4);
}

/*
 * A member that samples on its own: at its period, with the sampler's
 * call graph, into the ring of its CPU (evprof__recorder_open_rings()).
 */
static void member_attr(const struct evprof__ring_engine *r, size_t i,
			struct perf_event_attr *a)
{
	if (!(r->s->own >> i & 1)) {
		a->sample_period = 0; /* counting only */
		a->freq = 0;
		return;
	}
	evprof__engine_member_period(r->s, &r->s->events[i], a);
	set_call_graph(r, a);
	evprof_attr__set_bit(a, EVPROF_ATTR_BIT_DEFER_OUTPUT, false);
}

/*
 * Whether an event of the group samples at a fixed period over 1, which
 * PERF_SAMPLE_PERIOD would turn into every single event for a software
 * one (one format for all: none then asks for it).
 */
static bool fixed_period(const struct perf_event_attr *attrs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!attrs[i].freq && attrs[i].sample_period > 1)
			return true;
	return false;
}

/*
 * Fills attrs: sampler, the hidden clock, the extras, then the hidden cut
 * and exit members.
 */
size_t evprof__recorder_build_attrs(struct evprof__ring_engine *r,
				    struct perf_event_attr *attrs)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
		      PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		      PERF_SAMPLE_READ;
	size_t n = 0;

	if (r->s->callchain)
		st |= PERF_SAMPLE_CALLCHAIN;
	/*
	 * Each sample's cgroup (cgroup2's id: 8 bytes a sample) and, on the
	 * side-band, a CGROUP record naming each cgroup made while recording
	 * (those made before are named from the mount at start): who ran it
	 * where /proc/PID/cgroup read later would race short tasks and
	 * migrations. Every recording, not only -a: a command may move
	 * itself, and its threads are labelled all the same.
	 */
	if (evprof_probe(EVPROF_FEAT_SAMPLE_CGROUP)->yes)
		st |= PERF_SAMPLE_CGROUP;
	for (size_t i = 0; i < r->s->nr; i++) {
		struct perf_event_attr *a = &attrs[n++];

		*a = r->s->events[i].attr;
		common_attr(r, a, st);
		if (r->s->exclude_kernel) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
		if (i > 0) {
			a->disabled = 0;
			member_attr(r, i, a);
			continue;
		}
		sampler_attr(r, a);
		a->cgroup = !!(st & PERF_SAMPLE_CGROUP);
		if (r->cpu_time_member) {
			struct perf_event_attr *t = &attrs[n++];

			*t = (struct perf_event_attr){
			    .size = sizeof(*t),
			    .type = PERF_TYPE_SOFTWARE,
			    /* Per CPU: the CPU's time. */
			    .config = r->s->per_cpu ? PERF_COUNT_SW_CPU_CLOCK
						    : PERF_COUNT_SW_TASK_CLOCK,
			};
			common_attr(r, t, st);
			t->exclude_kernel = a->exclude_kernel;
			t->exclude_hv = a->exclude_hv;
		}
	}
	if (r->cut_member) {
		struct perf_event_attr *c = &attrs[n++];

		/* Counts in the kernel's switch path: never exclude_kernel. */
		*c = (struct perf_event_attr){
		    .size = sizeof(*c),
		    .type = PERF_TYPE_SOFTWARE,
		    .config = PERF_COUNT_SW_CONTEXT_SWITCHES,
		    .sample_period = 1,
		};
		common_attr(r, c, st);
		/*
		 * Its samples are parsed with the sampler's format. Without
		 * --off-cpu the session keeps a cut's stack only for a
		 * thread that has no sample of its own, whose user part is
		 * what tells it apart: no kernel walk (always the switch
		 * path, about a third of what a switch costs with the cut,
		 * measured on the switch bench) and no stack copy.
		 */
		set_call_graph(r, c);
		evprof_attr__set_bit(c, EVPROF_ATTR_BIT_DEFER_OUTPUT, false);
		if (!r->s->off_cpu) {
			c->sample_stack_user = 0;
			c->exclude_callchain_kernel = 1;
		}
	}
	if (r->exit_member) {
		struct perf_event_attr *x = &attrs[n++];

		/*
		 * Fires in do_exit() before the task's events are torn down
		 * (perf_event_exit_task): its read holds all the task
		 * counted, also a task too short to be sampled or switched.
		 */
		*x = r->s->exit_attr;
		x->sample_period = 1;
		common_attr(r, x, st);
		set_call_graph(r, x);
		evprof_attr__set_bit(x, EVPROF_ATTR_BIT_DEFER_OUTPUT, false);
		x->sample_stack_user = 0;
	}
	r->nr_members = n;
	/*
	 * A software event with PERF_SAMPLE_PERIOD and a fixed period samples
	 * every single event, each with its own period (perf_swevent_event(),
	 * Linux 6.18 as since 2.6.33): ask for the period only when the
	 * kernel picks every one.
	 */
	if (!fixed_period(attrs, n))
		for (size_t i = 0; i < n; i++)
			attrs[i].sample_type |= PERF_SAMPLE_PERIOD;
	return n;
}

long evprof__recorder_event_of(const struct evprof__ring_engine *r, size_t m)
{
	size_t last = r->nr_members - 1;

	if (m == 0)
		return 0;
	if (r->exit_member && m == last)
		return MEMBER_EXIT;
	if (r->cut_member && m == last - r->exit_member)
		return MEMBER_CUT;
	if (r->cpu_time_member)
		return m == 1 ? MEMBER_CLOCK : (long)m - 1;
	return (long)m;
}

static const char *member_name(const struct evprof__ring_engine *r, long e)
{
	if (e == MEMBER_CUT)
		return "context-switches";
	if (e == MEMBER_EXIT)
		return "sched:sched_process_exit";
	if (e == MEMBER_CLOCK)
		return r->s->per_cpu ? "cpu-clock" : "task-clock";
	return r->s->events[e].name;
}

/* What a recording without the exit member loses. */
static const char *exit_loss(const struct evprof__engine_setup *s)
{
	return s->per_cpu ? "what a task counts after its last switch-out goes "
			    "to the next thread on its CPU"
			  : "what a task counts after its last sample is lost";
}

/*
 * What counts nothing in user space: context switches and migrations
 * happen in the kernel. "" when no such event was asked for.
 */
static const char *kernel_only(const struct evprof__engine_setup *s)
{
	for (size_t i = 0; i < s->nr; i++) {
		const struct perf_event_attr *a = &s->events[i].attr;

		if (a->type == PERF_TYPE_SOFTWARE &&
		    (a->config == PERF_COUNT_SW_CONTEXT_SWITCHES ||
		     a->config == PERF_COUNT_SW_CPU_MIGRATIONS))
			return "; context switches and CPU migrations happen in "
			       "the kernel: they count 0 here";
	}
	return "";
}

/*
 * Takes one step down the fallback ladder after member m failed to open
 * with err. Returns false when there is no step left.
 */
static bool fall_back(struct evprof__ring_engine *r, long e, int err,
		      const struct evprof_event_spec *all, size_t all_nr,
		      uint64_t all_own)
{
	char advice[512];

	evprof_open_advice(err, member_name(r, e), advice, sizeof(advice));
	if (e == 0 && r->auto_precise && r->s->events[0].attr.precise_ip &&
	    (err == EINVAL || err == EOPNOTSUPP)) {
		/* As perf's :P: the highest the PMU takes, quietly. */
		r->s->events[0].attr.precise_ip--;
	} else if (err == EINVAL && r->s->defer && e == 0) {
		/* The probe said yes, the real group says no. */
		r->s->defer = false;
		evprof__note(
		    r->s->notes,
		    "deferred user callchains refused (%s): user stacks "
		    "inline",
		    advice);
	} else if (e == MEMBER_EXIT) {
		r->exit_member = false;
		evprof__note(r->s->notes,
			     "task exits cannot be sampled (%s): %s", advice,
			     exit_loss(r->s));
	} else if (e == MEMBER_CUT && r->s->off_cpu) {
		/* No interval without its start: refuse, do not fall back. */
		pr_warn("--off-cpu samples every context switch, in the "
			"kernel: %s\n",
			advice);
		return false;
	} else if (e == MEMBER_CUT) {
		r->cut_member = false;
		evprof__note(r->s->notes,
			     "context switches cannot be sampled (%s): %s",
			     advice,
			     r->s->per_cpu
				 ? "a CPU's counts go to the thread it samples "
				   "next, not exactly to the thread that ran"
				 : "counts after a thread's last sample are "
				   "lost");
	} else if (e > 0 && (r->s->own >> e & 1) &&
		   (err == EINVAL || evprof_open_unsupported(err))) {
		/* Counting may still work where sampling does not. */
		evprof__engine_ride(r->s, (size_t)e, advice);
	} else if ((err == EACCES || err == EPERM) && !r->s->exclude_kernel) {
		r->s->exclude_kernel = true;
		evprof__note(
		    r->s->notes,
		    "kernel samples are not allowed (%s): recording user "
		    "space only%s",
		    advice, kernel_only(r->s));
	} else if (e == MEMBER_CLOCK && evprof_open_unsupported(err)) {
		r->cpu_time_member = false;
		evprof__note(
		    r->s->notes,
		    "%s cannot be counted (%s): CPU time per sample is "
		    "unknown",
		    member_name(r, e), advice);
	} else if (e > 0 && evprof_open_unsupported(err)) {
		evprof__note(
		    r->s->notes,
		    "%s cannot be counted with %s (%s): recording without "
		    "it",
		    r->s->events[e].name, r->s->events[0].name, advice);
		evprof__engine_drop_event(r->s, (size_t)e);
	} else if (e == 0 && evprof_open_unsupported(err) &&
		   !is_cpu_clock(&r->s->events[0])) {
		evprof__note(
		    r->s->notes,
		    "%s cannot sample (%s): sampling cpu-clock, keeping "
		    "every extra event that opens",
		    r->s->events[0].name, advice);
		memcpy(r->s->events, all, all_nr * sizeof(*all));
		r->s->nr = all_nr;
		r->s->own = all_own;
		return evprof_event_spec__parse(&r->s->events[0],
						"cpu-clock") == 0;
	} else {
		pr_warn("cannot open %s: %s\n", member_name(r, e), advice);
		return false;
	}
	return true;
}

/*
 * Opens the groups on pid (-1: per CPU), walking the fallback ladder.
 * Returns the set, or NULL with errno set (ESRCH quietly when pid is gone
 * and quiet_gone).
 */
/* pid: or a cgroup's fd, with cgroup. */
static struct evprof_group_set *open_groups(struct evprof__ring_engine *r,
					    pid_t pid, bool quiet_gone,
					    bool cgroup)
{
	struct evprof_event_spec all[MAX_EVENTS + 1];
	size_t all_nr = r->s->nr;
	uint64_t all_own = r->s->own;

	memcpy(all, r->s->events, all_nr * sizeof(all[0]));
	/*
	 * A hardware sampler without :p asks for the least skid the PMU has
	 * (PEBS, IBS): precise_ip 3, lowered as the kernel refuses. Members
	 * keep theirs: a precise event may not take a fixed counter, and the
	 * group fitted the PMU without.
	 */
	if (!r->nr_sets && r->s->events[0].hw_slot &&
	    !r->s->events[0].attr.precise_ip) {
		r->s->events[0].attr.precise_ip = 3;
		r->auto_precise = true;
	}
	for (;;) {
		struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
		int failed_member = -1, failed_cpu = -1, err;
		struct evprof_group_set_opts o = {
		    .sz = sizeof(o),
		    .failed_member = &failed_member,
		    .failed_cpu = &failed_cpu,
		    .cgroup = cgroup,
		};
		size_t n = evprof__recorder_build_attrs(r, attrs);
		struct evprof_group_set *set;
		long e;

		set = evprof__recorder_open_set(&r->pmu_map, attrs, n, pid, &o);
		if (set)
			return set;
		err = errno;
		if (err == ESRCH && quiet_gone)
			return NULL;
		e = failed_member < 0
			? 0
			: evprof__recorder_event_of(r, (size_t)failed_member);
		if (!fall_back(r, e, err, all, all_nr, all_own)) {
			errno = err;
			return NULL;
		}
	}
}

static int add_set(struct evprof__ring_engine *r, struct evprof_group_set *set)
{
	struct evprof_group_set **sets =
	    realloc(r->sets, (r->nr_sets + 1) * sizeof(*sets));

	if (!sets) {
		evprof_group_set__free(set);
		return -ENOMEM;
	}
	r->sets = sets;
	r->sets[r->nr_sets++] = set;
	return 0;
}

static bool seen_tid(const pid_t *tids, size_t n, pid_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (tids[i] == tid)
			return true;
	return false;
}

/* Opens groups on one attached thread: the first walks the ladder. */
static int open_thread(struct evprof__ring_engine *r, pid_t tid)
{
	struct evprof_group_set *set;

	if (r->nr_sets) {
		struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
		struct evprof_group_set_opts o = {.sz = sizeof(o)};

		set = evprof__recorder_open_set(
		    &r->pmu_map, attrs, evprof__recorder_build_attrs(r, attrs),
		    tid, &o);
	} else {
		set = open_groups(r, tid, true, false);
	}
	if (!set && errno == ESRCH)
		return 0; /* it exited meanwhile */
	if (!set) {
		int err = errno;

		if (r->nr_sets)
			pr_warn("cannot open the events on thread %d: %s\n",
				tid, strerror(err));
		return -err;
	}
	return add_set(r, set) < 0 ? -ENOMEM : 1;
}

/*
 * Task mode on running processes: groups with inherit on every thread
 * (their later threads and children inherit them). Threads created while
 * we open are caught by scanning /proc again until nothing is new.
 */
static int open_threads(struct evprof__ring_engine *r)
{
	pid_t *done = NULL;
	size_t nr_done = 0;
	bool again = true;
	int ret = 0;

	while (again && !ret) {
		again = false;
		for (size_t p = 0; p < r->s->nr_pids && !ret; p++) {
			int *tids = NULL;
			int n = evprof_proc__read_tids(r->s->pids[p], &tids);

			for (int i = 0; i < n && !ret; i++) {
				pid_t *d;
				int opened;

				if (seen_tid(done, nr_done, tids[i]))
					continue;
				d = realloc(done, (nr_done + 1) * sizeof(*d));
				if (!d) {
					ret = -ENOMEM;
					break;
				}
				done = d;
				done[nr_done++] = tids[i];
				opened = open_thread(r, tids[i]);
				if (opened < 0)
					ret = opened;
				again |= opened > 0;
			}
			free(tids);
		}
	}
	free(done);
	if (!ret && !r->nr_sets) {
		pr_warn("no thread of the given processes is left\n");
		ret = -ESRCH;
	}
	return ret;
}

/* Whether member m samples: the hidden cut and exit, own counters. */
static bool member_samples(const struct evprof__ring_engine *r, size_t m)
{
	long e = evprof__recorder_event_of(r, m);

	return e == MEMBER_CUT || e == MEMBER_EXIT ||
	       (e > 0 && r->s->own >> e & 1);
}

/*
 * Maps one ring per CPU on the leaders of sets[0]; every other leader and
 * every cut member sends its records into the ring of its CPU.
 */
int evprof__recorder_open_rings(struct evprof__ring_engine *r)
{
	int ret = evprof__rings_map(&r->rings, r->sets[0], r->s);

	if (ret)
		return ret;
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			struct evprof_group *g =
			    evprof_group_set__group(r->sets[k], i);
			int cpu = evprof_group_set__cpu(r->sets[k], i);
			struct evprof_ring *ring =
			    evprof__rings_of_cpu(&r->rings, cpu);
			int err = ring ? 0 : -ENODEV; /* a CPU came online */

			if (!err && k > 0)
				err = evprof_ring__add_fd(
				    ring, evprof_group__fd(g, 0));
			for (size_t m = 1; !err && m < r->nr_members; m++)
				if (member_samples(r, m))
					err = evprof_ring__add_fd(
					    ring, evprof_group__fd(g, m));
			if (err) {
				pr_warn("cannot send CPU %d's records to its "
					"ring: %s\n",
					cpu, strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

static int declare_ids(struct evprof__ring_engine *r)
{
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			struct evprof_group *g =
			    evprof_group_set__group(r->sets[k], i);

			for (size_t m = 0; m < evprof_group__nr(g); m++) {
				long e = evprof__recorder_event_of(r, m);
				int role = e == 0 ? EVPROF_SESSION_SAMPLER
					   : e == MEMBER_CLOCK
					       ? EVPROF_SESSION_CPU_TIME
					   : e == MEMBER_CUT && r->s->off_cpu
					       ? EVPROF_SESSION_SWITCH_OUT
					   : e == MEMBER_CUT || e == MEMBER_EXIT
					       ? EVPROF_SESSION_CUT
					       : (int)e - 1;
				int err = evprof_session__set_id(
				    r->e.session, evprof_group__id(g, m), role);

				if (err)
					return err;
			}
		}
	}
	return 0;
}

int evprof__recorder_new_session(struct evprof__ring_engine *r)
{
	const char *counters[MAX_EVENTS];
	struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
	struct evprof_session_opts so;

	evprof__engine_session_opts(r->s, counters, &so);
	so.exclude_idle = r->s->per_cpu && !r->s->include_idle;
	so.per_cpu = r->s->per_cpu;
	evprof__recorder_build_attrs(r, attrs);
	attrs[0].read_format =
	    evprof_group__read_format(evprof_group_set__group(r->sets[0], 0));
	evprof_record_fmt__from_attr(&so.fmt, &attrs[0]);
	r->e.session = evprof_session__new(&so);
	if (!r->e.session)
		return -errno;
	return declare_ids(r);
}

/*
 * The sched_process_exit tracepoint, whose id lives in tracefs: mounted
 * here when it is not and we may (as perf does), before the name is
 * resolved, so that what resolving says stays true. Without it, a note.
 */
void evprof__recorder_find_exit(struct evprof__engine_setup *s)
{
	struct evprof_event_spec spec;
	int err, e1, e2;

	if (access("/sys/kernel/tracing/events", F_OK) &&
	    access("/sys/kernel/debug/tracing/events", F_OK) &&
	    !access("/sys/kernel/tracing", F_OK))
		mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL);
	/* Unreadable (tracefs is root's): said once, here, not by the parser. */
	e1 = access("/sys/kernel/tracing/events", R_OK | X_OK) ? errno : 0;
	e2 =
	    access("/sys/kernel/debug/tracing/events", R_OK | X_OK) ? errno : 0;
	if (e1 && e2 && (e1 == EACCES || e2 == EACCES)) {
		evprof__note(s->notes,
			     "task exits cannot be sampled (tracefs, where "
			     "sched:sched_process_exit is, is not readable "
			     "here): %s",
			     exit_loss(s));
		return;
	}
	err = evprof_event_spec__parse(&spec, "sched:sched_process_exit");
	if (err) {
		evprof__note(
		    s->notes,
		    "task exits cannot be sampled (sched:sched_process_exit: "
		    "%s; tracefs is needed): %s",
		    evprof_strerror(err), exit_loss(s));
		return;
	}
	s->exit_attr = spec.attr;
	s->exit_event = true;
}

/* Whether e is the kernel event a hidden member samples every time. */
static bool twin_of_hidden(const struct evprof__ring_engine *r,
			   const struct perf_event_attr *e)
{
	return (r->cut_member && e->type == PERF_TYPE_SOFTWARE &&
		e->config == PERF_COUNT_SW_CONTEXT_SWITCHES) ||
	       (r->exit_member && e->type == r->s->exit_attr.type &&
		e->config == r->s->exit_attr.config);
}

/*
 * Two sampling events of one software or tracepoint event share the
 * kernel's sample data, its id included (perf_sample_data.sample_flags,
 * Linux 6.18): the second one's samples carry the first one's id. A user
 * event that is a hidden member's twin does not sample then: as a member
 * it rides along; as the sampler, cpu-clock samples and it counts.
 */
static int untwin(struct evprof__ring_engine *r)
{
	for (size_t i = 1; i < r->s->nr; i++) {
		if (!(r->s->own >> i & 1) ||
		    !twin_of_hidden(r, &r->s->events[i].attr))
			continue;
		r->s->own &= ~(1ULL << i);
		evprof__note(r->s->notes,
			     "%s does not sample on its own beside the hidden "
			     "member that samples it every time (the kernel "
			     "gives both one sample's data): its counts ride "
			     "on %s's samples",
			     r->s->events[i].name, r->s->events[0].name);
	}
	if (!twin_of_hidden(r, &r->s->events[0].attr))
		return 0;
	if (r->s->nr > MAX_EVENTS - 1) {
		pr_warn("%s cannot sample beside the hidden member that "
			"samples it every time, and there is no room for "
			"cpu-clock to sample instead\n",
			r->s->events[0].name);
		return -EINVAL;
	}
	memmove(&r->s->events[1], &r->s->events[0],
		r->s->nr * sizeof(r->s->events[0]));
	r->s->nr++;
	r->s->own <<= 1;
	evprof__note(r->s->notes,
		     "%s cannot sample beside the hidden member that samples "
		     "it every time (the kernel gives both one sample's data): "
		     "sampling cpu-clock, %s counted in its group",
		     r->s->events[1].name, r->s->events[1].name);
	return evprof_event_spec__parse(&r->s->events[0], "cpu-clock");
}

int evprof__recorder_open_target(struct evprof__ring_engine *r)
{
	struct evprof_group_set *set;
	int err = untwin(r);

	if (!err)
		err = evprof__recorder_map_pmus(&r->pmu_map);

	if (err)
		return err;
	if (!r->s->per_cpu && r->s->child < 0)
		return open_threads(r);
	/* One group per CPU and cgroup: each counts its cgroup's tasks. */
	for (size_t i = 0; i < r->s->nr_cgroups; i++) {
		set = open_groups(r, r->s->cgroup_fds[i], false, true);
		err = set ? add_set(r, set) : -errno;
		if (err)
			return err;
	}
	if (r->s->nr_cgroups) {
		evprof__note(r->s->notes,
			     "%zu groups of %zu events on %zu CPUs: %zu "
			     "perf event fds for %zu cgroup%s",
			     r->nr_sets * evprof_group_set__nr(r->sets[0]),
			     r->nr_members, evprof_group_set__nr(r->sets[0]),
			     r->nr_sets * evprof_group_set__nr(r->sets[0]) *
				 r->nr_members,
			     r->s->nr_cgroups,
			     r->s->nr_cgroups == 1 ? "" : "s");
		return 0;
	}
	set = open_groups(r, r->s->per_cpu ? -1 : r->s->child, false, false);
	return set ? add_set(r, set) : -errno;
}
