// SPDX-License-Identifier: MIT
/*
 * The recorder: the one module that joins events, rings and the session.
 * The policy it holds is described in include/evprof/recorder.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <poll.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include <evprof/event.h>
#include <evprof/launch.h>
#include <evprof/proc.h>
#include <evprof/recorder.h>
#include <evprof/ring.h>

#include "util.h"

#define RING_PAGES_DEFAULT 128
#define FREQ_DEFAULT 1000
/* Two members are hidden: the CPU clock and the cut. */
#define MAX_EVENTS (EVPROF_SNAPSHOT_MAX - 2)

/* Members that are not one of the user's events (event_of()). */
#define MEMBER_CLOCK (-1)
#define MEMBER_CUT (-2)

struct evprof_recorder {
	/* Events as they end up: [0] samples, then the counters. */
	struct evprof_event_spec events[MAX_EVENTS + 1];
	size_t nr;
	bool cpu_time_member; /* the hidden task/cpu-clock is in the group */
	bool cut_member;      /* the hidden context-switches cut is last */
	bool per_cpu;	      /* pid -1 groups instead of inherited ones */
	bool exclude_kernel;
	bool callchain;
	bool defer;	      /* deferred user callchains (Linux 6.19) */
	uint32_t dwarf_stack; /* bytes of user stack per sample, 0: none */
	size_t nr_members;    /* of the group build_attrs() makes */
	uint64_t freq, period;
	size_t ring_pages;

	evprof_recorder_note_fn note_fn;
	void *note_ctx;
	char **notes;
	size_t nr_notes;

	struct evprof_launch *launch; /* the command, until started */
	pid_t child;		      /* its pid, or -1 */
	pid_t *pids;		      /* attached processes */
	size_t nr_pids;
	bool system_wide, include_idle;
	char *product;

	struct evprof_group_set **sets; /* one, or one per attached thread */
	size_t nr_sets;
	struct evprof_ring **rings; /* one per CPU of sets[0] */
	size_t nr_rings;
	struct evprof_session *session;

	/* Rings, then one pidfd per command or attached process (-1: gone). */
	struct pollfd *pfd;
	size_t nr_pfd;
	size_t live; /* pidfds not yet readable */

	bool started, stopped;
	uint64_t start_mono, start_wall;
};

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Reports a fallback step through the callback and keeps it. */
__attribute__((format(printf, 2, 3))) static void note(struct evprof_recorder *r,
						       const char *fmt, ...)
{
	char buf[512], **n;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (r->note_fn)
		r->note_fn(buf, r->note_ctx);
	n = realloc(r->notes, (r->nr_notes + 1) * sizeof(*n));
	if (!n)
		return;
	r->notes = n;
	r->notes[r->nr_notes] = strdup(buf);
	if (r->notes[r->nr_notes])
		r->nr_notes++;
}

/* perf_event_open errnos that mean "no such event, or not together". */
static bool unsupported(int err)
{
	return err == ENOENT || err == ENODEV || err == ENXIO ||
	       err == EOPNOTSUPP || err == EINVAL;
}

/* The sampler's callchain bits beyond PERF_SAMPLE_CALLCHAIN. */
static void set_call_graph(const struct evprof_recorder *r,
			   struct perf_event_attr *a)
{
	if (r->dwarf_stack) {
		/* The kernel part from the kernel, the user part unwound. */
		a->sample_type |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		a->sample_regs_user = evprof_session__unwind_regs();
		a->sample_stack_user = r->dwarf_stack;
		a->exclude_callchain_user = 1;
	}
	if (r->defer) {
		evprof_attr__set_bit(a, EVPROF_ATTR_BIT_DEFER_CALLCHAIN, true);
		/* The records come on the side-band event: this one. */
		evprof_attr__set_bit(a, EVPROF_ATTR_BIT_DEFER_OUTPUT, true);
	}
}

/* What every member shares: format, clock, inherit, privilege. */
static void common_attr(const struct evprof_recorder *r,
			struct perf_event_attr *a, uint64_t sample_type)
{
	a->sample_type = sample_type;
	/* Inherited counters report per thread only with TID (6.12). */
	a->inherit = !r->per_cpu;
	a->sample_id_all = 1;
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC; /* one clock for the group */
}

/*
 * Fills attrs: sampler, the hidden clock, the extras, then the hidden cut.
 * Leaders open disabled: enable_on_exec for a command in task mode, else
 * enabled at start.
 */
static size_t build_attrs(struct evprof_recorder *r,
			  struct perf_event_attr *attrs)
{
	uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
		      PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_CPU |
		      PERF_SAMPLE_PERIOD | PERF_SAMPLE_READ;
	size_t n = 0;

	if (r->callchain)
		st |= PERF_SAMPLE_CALLCHAIN;
	for (size_t i = 0; i < r->nr; i++) {
		struct perf_event_attr *a = &attrs[n++];

		*a = r->events[i].attr;
		common_attr(r, a, st);
		if (r->exclude_kernel) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
		if (i > 0) {
			a->sample_period = 0; /* counting only */
			a->freq = 0;
			a->disabled = 0;
			continue;
		}
		if (r->period) {
			a->sample_period = r->period;
		} else {
			a->freq = 1;
			a->sample_freq = r->freq;
		}
		a->disabled = 1;
		a->enable_on_exec = r->child > 0 && !r->per_cpu;
		a->mmap = a->mmap2 = a->comm = a->comm_exec = 1;
		a->task = 1;
		set_call_graph(r, a);
		a->watermark = 1;
		a->wakeup_watermark = (uint32_t)(r->ring_pages * 4096 / 4);
		if (r->cpu_time_member) {
			struct perf_event_attr *t = &attrs[n++];

			*t = (struct perf_event_attr){
				.size = sizeof(*t),
				.type = PERF_TYPE_SOFTWARE,
				/* Per CPU: the CPU's time. */
				.config = r->per_cpu ? PERF_COUNT_SW_CPU_CLOCK
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
		 * Its samples are parsed with the sampler's format, but the
		 * session keeps no stack of a cut: copy 0 bytes of it.
		 */
		set_call_graph(r, c);
		evprof_attr__set_bit(c, EVPROF_ATTR_BIT_DEFER_OUTPUT, false);
		c->sample_stack_user = 0;
	}
	r->nr_members = n;
	return n;
}

/* Which event attrs index m stands for, or MEMBER_CLOCK/MEMBER_CUT. */
static long event_of(const struct evprof_recorder *r, size_t m)
{
	if (m == 0)
		return 0;
	if (r->cut_member && m == r->nr_members - 1)
		return MEMBER_CUT;
	if (r->cpu_time_member)
		return m == 1 ? MEMBER_CLOCK : (long)m - 1;
	return (long)m;
}

static const char *member_name(const struct evprof_recorder *r, long e)
{
	if (e == MEMBER_CUT)
		return "context-switches";
	if (e == MEMBER_CLOCK)
		return r->per_cpu ? "cpu-clock" : "task-clock";
	return r->events[e].name;
}

static void drop_event(struct evprof_recorder *r, size_t e)
{
	memmove(&r->events[e], &r->events[e + 1],
		(r->nr - e - 1) * sizeof(r->events[0]));
	r->nr--;
}

static bool is_cpu_clock(const struct evprof_event_spec *s)
{
	return s->attr.type == PERF_TYPE_SOFTWARE &&
	       s->attr.config == PERF_COUNT_SW_CPU_CLOCK;
}

/*
 * Takes one step down the fallback ladder after member m failed to open
 * with err. Returns false when there is no step left.
 */
static bool fall_back(struct evprof_recorder *r, long e, int err,
		      const struct evprof_event_spec *all, size_t all_nr)
{
	char advice[512];

	evprof_open_advice(err, member_name(r, e), advice, sizeof(advice));
	if (err == EINVAL && r->defer && e == 0) {
		/* The probe said yes, the real group says no. */
		r->defer = false;
		note(r, "deferred user callchains refused (%s): user stacks "
			"inline", advice);
	} else if (e == MEMBER_CUT) {
		r->cut_member = false;
		note(r, "context switches cannot be sampled (%s): %s", advice,
		     r->per_cpu ? "a CPU's counts go to the thread it samples "
				  "next, not exactly to the thread that ran"
				: "counts after a thread's last sample are "
				  "lost");
	} else if ((err == EACCES || err == EPERM) && !r->exclude_kernel) {
		r->exclude_kernel = true;
		note(r, "kernel samples are not allowed (%s): recording user "
			"space only", advice);
	} else if (e == MEMBER_CLOCK && unsupported(err)) {
		r->cpu_time_member = false;
		note(r, "%s cannot be counted (%s): CPU time per sample is "
			"unknown", member_name(r, e), advice);
	} else if (e > 0 && unsupported(err)) {
		note(r, "%s cannot be counted with %s (%s): recording without "
			"it", r->events[e].name, r->events[0].name, advice);
		drop_event(r, (size_t)e);
	} else if (e == 0 && unsupported(err) && !is_cpu_clock(&r->events[0])) {
		note(r, "%s cannot sample (%s): sampling cpu-clock, keeping "
			"every extra event that opens", r->events[0].name,
		     advice);
		memcpy(r->events, all, all_nr * sizeof(*all));
		r->nr = all_nr;
		return evprof_event_spec__parse(&r->events[0], "cpu-clock") == 0;
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
static struct evprof_group_set *open_groups(struct evprof_recorder *r,
					     pid_t pid, bool quiet_gone)
{
	struct evprof_event_spec all[MAX_EVENTS + 1];
	size_t all_nr = r->nr;

	memcpy(all, r->events, all_nr * sizeof(all[0]));
	for (;;) {
		struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
		int failed_member = -1, failed_cpu = -1, err;
		struct evprof_group_set_opts o = {
			.sz = sizeof(o),
			.failed_member = &failed_member,
			.failed_cpu = &failed_cpu,
		};
		size_t n = build_attrs(r, attrs);
		struct evprof_group_set *set;
		long e;

		set = evprof_group_set__open(attrs, n, pid, &o);
		if (set)
			return set;
		err = errno;
		if (err == ESRCH && quiet_gone)
			return NULL;
		e = failed_member < 0 ? 0 : event_of(r, (size_t)failed_member);
		if (!fall_back(r, e, err, all, all_nr)) {
			errno = err;
			return NULL;
		}
	}
}

static int add_set(struct evprof_recorder *r, struct evprof_group_set *set)
{
	struct evprof_group_set **sets =
		realloc(r->sets, (r->nr_sets + 1) * sizeof(*sets));

	if (!sets) {
		evprof_group_set__close(set);
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
static int open_thread(struct evprof_recorder *r, pid_t tid)
{
	struct evprof_group_set *set;

	if (r->nr_sets) {
		struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
		struct evprof_group_set_opts o = { .sz = sizeof(o) };

		set = evprof_group_set__open(attrs, build_attrs(r, attrs), tid,
					     &o);
	} else {
		set = open_groups(r, tid, true);
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
static int open_threads(struct evprof_recorder *r)
{
	pid_t *done = NULL;
	size_t nr_done = 0;
	bool again = true;
	int ret = 0;

	while (again && !ret) {
		again = false;
		for (size_t p = 0; p < r->nr_pids && !ret; p++) {
			int *tids = NULL;
			int n = evprof_proc__read_tids(r->pids[p], &tids);

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

/* The ring of the CPU a group was opened on (rings follow sets[0]). */
static struct evprof_ring *ring_of_cpu(const struct evprof_recorder *r,
				       int cpu)
{
	for (size_t i = 0; i < r->nr_rings; i++)
		if (evprof_group_set__cpu(r->sets[0], i) == cpu)
			return r->rings[i];
	return NULL;
}

/*
 * Maps one ring per CPU on the leaders of sets[0]; every other leader and
 * every cut member sends its records into the ring of its CPU.
 */
static int open_rings(struct evprof_recorder *r)
{
	r->nr_rings = evprof_group_set__nr(r->sets[0]);
	r->rings = calloc(r->nr_rings, sizeof(*r->rings));
	if (!r->rings)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_rings; i++) {
		struct evprof_group *g = evprof_group_set__group(r->sets[0], i);

		r->rings[i] = evprof_ring__open(evprof_group__fd(g, 0),
						r->ring_pages);
		if (!r->rings[i]) {
			int err = errno;

			pr_warn("cannot map the ring buffer of CPU %d: %s%s\n",
				evprof_group_set__cpu(r->sets[0], i),
				strerror(err),
				err == EPERM ? " (raise kernel.perf_event_mlock_kb)"
					     : "");
			return -err;
		}
	}
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			struct evprof_group *g =
				evprof_group_set__group(r->sets[k], i);
			int cpu = evprof_group_set__cpu(r->sets[k], i);
			struct evprof_ring *ring = ring_of_cpu(r, cpu);
			int err = ring ? 0 : -ENODEV; /* a CPU came online */

			if (!err && k > 0)
				err = evprof_ring__add_fd(ring,
							  evprof_group__fd(g, 0));
			if (!err && r->cut_member)
				err = evprof_ring__add_fd(
					ring,
					evprof_group__fd(g, r->nr_members - 1));
			if (err) {
				pr_warn("cannot send CPU %d's records to its "
					"ring: %s\n", cpu, strerror(-err));
				return err;
			}
		}
	}
	return 0;
}

static int declare_ids(struct evprof_recorder *r)
{
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			struct evprof_group *g =
				evprof_group_set__group(r->sets[k], i);

			for (size_t m = 0; m < evprof_group__nr(g); m++) {
				long e = event_of(r, m);
				int role = e == 0	      ? EVPROF_SESSION_SAMPLER
					   : e == MEMBER_CLOCK ? EVPROF_SESSION_CPU_TIME
					   : e == MEMBER_CUT   ? EVPROF_SESSION_CUT
							       : (int)e - 1;
				int err = evprof_session__set_id(
					r->session, evprof_group__id(g, m),
					role);

				if (err)
					return err;
			}
		}
	}
	return 0;
}

static int new_session(struct evprof_recorder *r)
{
	const char *counters[MAX_EVENTS];
	struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
	bool launched = r->child > 0;
	struct evprof_session_opts so = {
		.sz = sizeof(so),
		.counters = counters,
		.nr_counters = r->nr - 1,
		/* System-wide keeps everything, else the targets' trees. */
		.pids = r->system_wide ? NULL : launched ? &r->child : r->pids,
		.nr_pids = r->system_wide ? 0 : launched ? 1 : r->nr_pids,
		.exclude_idle = r->per_cpu && !r->include_idle,
		.per_cpu = r->per_cpu,
	};

	for (size_t i = 1; i < r->nr; i++)
		counters[i - 1] = r->events[i].name;
	build_attrs(r, attrs);
	attrs[0].read_format = evprof_group__read_format(
		evprof_group_set__group(r->sets[0], 0));
	evprof_record_fmt__from_attr(&so.fmt, &attrs[0]);
	r->session = evprof_session__new(&so);
	if (!r->session)
		return -errno;
	return declare_ids(r);
}

static int parse_events(struct evprof_recorder *r, const char *list)
{
	struct evprof_event_list *l;
	int err = evprof_event_list__parse(&l, list);

	if (err) {
		pr_warn("bad event list '%s': %s\n", list, evprof_strerror(err));
		return err;
	}
	if (l->nr_events > MAX_EVENTS) {
		pr_warn("at most %d events\n", MAX_EVENTS);
		evprof_event_list__free(l);
		return -E2BIG;
	}
	/* Braces do not matter here: every event joins the sampler's group. */
	memcpy(r->events, l->events, l->nr_events * sizeof(r->events[0]));
	r->nr = l->nr_events;
	evprof_event_list__free(l);
	return 0;
}

/* "evprof ARGV..." for the profile's product name. */
static char *product_of(char *const *argv)
{
	size_t len = sizeof("evprof");
	char *s;

	for (size_t i = 0; argv && argv[i]; i++)
		len += strlen(argv[i]) + 1;
	s = malloc(len);
	if (!s)
		return NULL;
	strcpy(s, "evprof");
	for (size_t i = 0; argv && argv[i]; i++) {
		strcat(s, " ");
		strcat(s, argv[i]);
	}
	return s;
}

static int set_options(struct evprof_recorder *r,
		       const struct evprof_recorder_target *t,
		       const struct evprof_recorder_opts *o)
{
	bool has_cmd = t->argv && t->argv[0];

	if ((has_cmd || t->system_wide) && t->nr_pids)
		return -EINVAL;
	if (!has_cmd && !t->system_wide && (!t->nr_pids || !t->pids))
		return -EINVAL;
	if (o->mode > EVPROF_RECORDER_CPU ||
	    o->call_graph > EVPROF_CALL_GRAPH_DWARF)
		return -EINVAL;
	if (t->system_wide && o->mode == EVPROF_RECORDER_TASK)
		return -EINVAL;
	if (o->ring_pages & (o->ring_pages - 1))
		return -EINVAL;
	r->freq = o->freq ? o->freq : FREQ_DEFAULT;
	r->period = o->period;
	r->ring_pages = o->ring_pages ? o->ring_pages : RING_PAGES_DEFAULT;
	r->callchain = o->call_graph != EVPROF_CALL_GRAPH_NONE;
	if (o->call_graph == EVPROF_CALL_GRAPH_DWARF) {
		uint32_t sz = o->stack_size ? o->stack_size
					    : EVPROF_RECORDER_STACK_DEFAULT;

		if (!evprof_session__unwind_regs())
			return -EOPNOTSUPP;
		if (sz < 8 || sz > EVPROF_RECORDER_STACK_MAX)
			return -EINVAL;
		r->dwarf_stack = sz & ~7u; /* the kernel wants u64s */
	}
	r->exclude_kernel = o->user_only;
	r->include_idle = o->include_idle;
	r->system_wide = t->system_wide;
	r->note_fn = o->note;
	r->note_ctx = o->note_ctx;
	r->cpu_time_member = r->cut_member = true;
	r->per_cpu = t->system_wide || o->mode == EVPROF_RECORDER_CPU ||
		     (o->mode == EVPROF_RECORDER_AUTO &&
		      !evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ)->yes);
	r->defer = r->callchain && !r->dwarf_stack &&
		   evprof_probe(EVPROF_FEAT_DEFER_CALLCHAIN)->yes;
	if (t->nr_pids) {
		r->pids = malloc(t->nr_pids * sizeof(*r->pids));
		if (!r->pids)
			return -ENOMEM;
		memcpy(r->pids, t->pids, t->nr_pids * sizeof(*r->pids));
		r->nr_pids = t->nr_pids;
	}
	r->product = product_of(has_cmd ? t->argv : NULL);
	return r->product ? 0 : -ENOMEM;
}

static int open_pidfds(struct evprof_recorder *r)
{
	size_t nr_procs = r->child > 0 ? 1 : r->nr_pids;

	r->nr_pfd = r->nr_rings + nr_procs;
	r->pfd = calloc(r->nr_pfd, sizeof(*r->pfd));
	if (!r->pfd)
		return -ENOMEM;
	for (size_t i = 0; i < r->nr_pfd; i++) {
		r->pfd[i].fd = -1;
		r->pfd[i].events = POLLIN;
	}
	for (size_t i = 0; i < r->nr_rings; i++)
		r->pfd[i].fd = evprof_ring__fd(r->rings[i]);
	for (size_t i = 0; i < nr_procs; i++) {
		pid_t pid = r->child > 0 ? r->child : r->pids[i];
		int fd = evprof_pidfd_open(pid);

		/* A process already gone reads as exited: fd -1. */
		r->pfd[r->nr_rings + i].fd = fd < 0 ? -1 : fd;
		r->live += fd >= 0;
	}
	return 0;
}

struct evprof_recorder *
evprof_recorder__new(const struct evprof_recorder_target *target,
		     const char *events,
		     const struct evprof_recorder_opts *opts)
{
	static const struct evprof_recorder_opts defaults = {
		.sz = sizeof(defaults),
	};
	struct evprof_recorder *r;
	int err;

	if (!target || target->sz < sizeof(size_t) ||
	    (opts && opts->sz < sizeof(size_t))) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->child = -1;
	err = set_options(r, target, opts ? opts : &defaults);
	if (!err)
		err = parse_events(r, events ? events : "cycles");
	if (!err && target->argv && target->argv[0]) {
		r->launch = evprof_launch__new(target->argv);
		if (!r->launch)
			err = -errno;
		else
			r->child = evprof_launch__pid(r->launch);
	}
	if (!err) {
		if (!r->per_cpu && r->child < 0) {
			err = open_threads(r);
		} else {
			struct evprof_group_set *set =
				open_groups(r, r->per_cpu ? -1 : r->child,
					    false);

			err = set ? add_set(r, set) : -errno;
		}
	}
	if (!err)
		err = open_rings(r);
	if (!err)
		err = new_session(r);
	if (!err)
		err = open_pidfds(r);
	if (err) {
		evprof_recorder__free(r);
		errno = -err;
		return NULL;
	}
	return r;
}

void evprof_recorder__free(struct evprof_recorder *r)
{
	if (!r)
		return;
	evprof_launch__free(r->launch);
	for (size_t i = r->nr_rings; r->pfd && i < r->nr_pfd; i++)
		if (r->pfd[i].fd >= 0)
			close(r->pfd[i].fd);
	free(r->pfd);
	evprof_session__free(r->session);
	for (size_t i = 0; i < r->nr_rings; i++)
		evprof_ring__close(r->rings[i]);
	free(r->rings);
	for (size_t k = 0; k < r->nr_sets; k++)
		evprof_group_set__close(r->sets[k]);
	free(r->sets);
	for (size_t i = 0; i < r->nr_notes; i++)
		free(r->notes[i]);
	free(r->notes);
	free(r->pids);
	free(r->product);
	free(r);
}

/* Learns from /proc what runs already: the attached or every process. */
static void seed_processes(struct evprof_recorder *r)
{
	struct dirent *d;
	DIR *dir;

	for (size_t i = 0; i < r->nr_pids; i++)
		evprof_session__seed_process(r->session, r->pids[i]);
	if (!r->system_wide)
		return;
	dir = opendir("/proc");
	while (dir && (d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		/* Processes gone meanwhile are no error. */
		if (!*end && pid > 0)
			evprof_session__seed_process(r->session, (pid_t)pid);
	}
	if (dir)
		closedir(dir);
}

int evprof_recorder__start(struct evprof_recorder *r)
{
	int err = 0;

	if (!r || r->started)
		return -EINVAL;
	r->started = true;
	seed_processes(r);
	r->start_mono = clock_ns(CLOCK_MONOTONIC);
	r->start_wall = clock_ns(CLOCK_REALTIME);
	/* Task mode on a command: enable_on_exec; else enabled here. */
	if (r->child < 0 || r->per_cpu) {
		for (size_t k = 0; k < r->nr_sets && !err; k++)
			err = evprof_group_set__enable(r->sets[k]);
		if (err) {
			pr_warn("cannot enable the events: %s\n",
				strerror(-err));
			return err;
		}
	}
	if (r->launch) {
		err = evprof_launch__go(r->launch);
		evprof_launch__free(r->launch);
		r->launch = NULL;
	}
	return err;
}

int evprof_recorder__consume(struct evprof_recorder *r)
{
	int n = 0;

	for (size_t i = 0; r && i < r->nr_rings; i++) {
		const void *rec;
		size_t size;

		while (evprof_ring__next(r->rings[i], &rec, &size) == 1) {
			evprof_session__feed(r->session, rec, size);
			n++;
		}
	}
	return n;
}

int evprof_recorder__poll(struct evprof_recorder *r, int timeout_ms)
{
	int n;

	if (!r)
		return -EINVAL;
	n = poll(r->pfd, r->nr_pfd, timeout_ms);
	if (n < 0)
		return -errno;
	for (size_t i = r->nr_rings; n > 0 && i < r->nr_pfd; i++) {
		if (r->pfd[i].fd >= 0 && (r->pfd[i].revents & POLLIN)) {
			close(r->pfd[i].fd);
			r->pfd[i].fd = -1;
			r->live--;
		}
	}
	return evprof_recorder__consume(r);
}

bool evprof_recorder__done(struct evprof_recorder *r)
{
	return r && r->nr_pfd > r->nr_rings && !r->live;
}

size_t evprof_recorder__fds(const struct evprof_recorder *r, int *fds,
			    size_t max)
{
	size_t n = 0;

	for (size_t i = 0; r && i < r->nr_pfd; i++) {
		if (r->pfd[i].fd < 0)
			continue;
		if (n < max)
			fds[n] = r->pfd[i].fd;
		n++;
	}
	return n;
}

int evprof_recorder__stop(struct evprof_recorder *r)
{
	int err = 0;

	if (!r)
		return -EINVAL;
	if (r->stopped)
		return 0;
	r->stopped = true;
	for (size_t k = 0; k < r->nr_sets; k++) {
		int e = evprof_group_set__disable(r->sets[k]);

		if (e && !err)
			err = e;
	}
	evprof_recorder__consume(r);
	return err;
}

pid_t evprof_recorder__pid(const struct evprof_recorder *r)
{
	return r ? r->child : -1;
}

size_t evprof_recorder__nr_events(const struct evprof_recorder *r)
{
	return r ? r->nr : 0;
}

const char *evprof_recorder__event(const struct evprof_recorder *r, size_t i)
{
	return r && i < r->nr ? r->events[i].name : NULL;
}

bool evprof_recorder__per_cpu(const struct evprof_recorder *r)
{
	return r && r->per_cpu;
}

struct evprof_session *evprof_recorder__session(struct evprof_recorder *r)
{
	return r ? r->session : NULL;
}

void evprof_recorder__stats(const struct evprof_recorder *r,
			    struct evprof_recorder_stats *st)
{
	memset(st, 0, sizeof(*st));
	if (!r)
		return;
	evprof_session__stats(r->session, &st->session);
	for (size_t i = 0; i < r->nr_rings; i++) {
		struct evprof_ring_stats rs;

		evprof_ring__stats(r->rings[i], &rs);
		st->ring_lost_events += rs.lost_events;
		st->ring_lost_records += rs.lost_records;
		st->ring_lost_samples += rs.lost_samples;
	}
	st->start_mono_ns = r->start_mono;
	st->start_wall_ns = r->start_wall;
	st->stack_size = r->dwarf_stack;
	st->deferred = r->defer;
}

/* Says which unwinding made the user stacks, and how it went. */
static void note_call_graph(const struct evprof_recorder *r,
			    struct evprof_profile *p)
{
	struct evprof_session_stats st;
	char buf[256];

	if (!r->callchain)
		return;
	evprof_session__stats(r->session, &st);
	if (r->dwarf_stack)
		snprintf(buf, sizeof(buf),
			 "call graph: dwarf (%u-byte user stack copies unwound "
			 "with libdw): %llu stacks unwound, %llu truncated, "
			 "%llu copies dropped",
			 r->dwarf_stack, (unsigned long long)st.stacks_unwound,
			 (unsigned long long)st.stacks_truncated,
			 (unsigned long long)st.stacks_dropped);
	else if (r->defer)
		snprintf(buf, sizeof(buf),
			 "call graph: frame pointers, user part deferred: %llu "
			 "deferred samples, %llu left unstitched",
			 (unsigned long long)st.deferred_samples,
			 (unsigned long long)st.deferred_unstitched);
	else
		snprintf(buf, sizeof(buf), "call graph: frame pointers");
	evprof_profile__add_note(p, buf);
}

struct evprof_profile *evprof_recorder__profile(struct evprof_recorder *r,
						struct evprof_symbolizer *sym)
{
	struct evprof_symbolizer *own = NULL;
	struct evprof_profile *p;
	struct utsname u;
	char os[200];
	int err;

	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	uname(&u);
	snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	{
		struct evprof_profile_opts po = {
			.sz = sizeof(po),
			.product = r->product,
			.os = os,
			.start_wall_ns = r->start_wall,
			.start_mono_ns = r->start_mono,
			.interval_ns = r->period ? 0 : 1000000000ull / r->freq,
		};

		p = evprof_profile__new(&po);
	}
	if (!p)
		return NULL;
	if (!sym) {
		own = sym = evprof_symbolizer__new(NULL);
		if (!own) {
			evprof_profile__free(p);
			return NULL;
		}
	}
	for (size_t i = 0; i < r->nr_notes; i++)
		evprof_profile__add_note(p, r->notes[i]);
	err = evprof_session__build(r->session, p, sym);
	evprof_symbolizer__free(own);
	if (err) {
		evprof_profile__free(p);
		errno = -err;
		return NULL;
	}
	note_call_graph(r, p);
	return p;
}
