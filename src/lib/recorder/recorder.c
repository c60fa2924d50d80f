// SPDX-License-Identifier: MIT
/*
 * The recorder: the one module that joins events, an engine and the
 * session. The policy it holds is described in include/evprof/recorder.h;
 * the engines behind it in engine.h, the profiles it makes in window.c.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "events/events.h"
#include "internal.h"
#include "os/os.h"
#include "symbols/symbols.h"

/* The engines, by enum evprof_recorder_engine. */
static const struct evprof__engine_ops *const engines[] = {
    [EVPROF_RECORDER_ENGINE_RING] = &evprof__engine_ring,
    [EVPROF_RECORDER_ENGINE_BPF] = &evprof__engine_bpf,
};

bool evprof_recorder__engine_available(enum evprof_recorder_engine e, char *why,
				       size_t len)
{
	char tmp[1];

	if (!why || !len) {
		why = tmp;
		len = sizeof(tmp);
	}
	if ((size_t)e >= ARRAY_SIZE(engines)) {
		snprintf(why, len, "no such engine");
		return false;
	}
	return engines[e]->available(why, len);
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static int parse_events(struct evprof_recorder *r, const char *list)
{
	struct evprof_event_list *l;
	int err = evprof_event_list__parse(&l, list);

	if (err) {
		pr_warn("bad event list '%s': %s\n", list,
			evprof_strerror(err));
		return err;
	}
	if (l->nr_events > MAX_EVENTS) {
		pr_warn("at most %d events\n", MAX_EVENTS);
		evprof_event_list__free(l);
		return -E2BIG;
	}
	/* Braces do not matter here: every event joins the sampler's group. */
	memcpy(r->s.events, l->events, l->nr_events * sizeof(r->s.events[0]));
	r->s.nr = l->nr_events;
	evprof_event_list__free(l);
	return 0;
}

/*
 * A hardware counter whose overflows come late (QEMU's emulated PMU raises
 * those of instructions long after they are due) piles its counts on
 * whatever runs when one comes: it rides along instead. A late sampler
 * only gets said.
 */
static void late_overflows(struct evprof_recorder *r)
{
	const struct evprof_event_spec *e;
	uint64_t got, due;
	char why[128];

	for (size_t i = 0; i < r->s.nr; i++) {
		e = &r->s.events[i];
		if (!e->hw_slot || (i && !(r->s.own & 1ULL << i)) ||
		    evprof__pmu_overflow_trial(&e->attr, &got, &due) ||
		    due < 4 || got * 2 >= due)
			continue;
		snprintf(why, sizeof(why),
			 "its overflows come late: %llu samples where %llu "
			 "were due in a trial",
			 (unsigned long long)got, (unsigned long long)due);
		if (i)
			evprof__engine_ride(&r->s, i, why);
		else
			evprof__note(&r->notes,
				     "%s samples few and late (%s): sample on "
				     "an event whose overflows come in time "
				     "and count it beside",
				     e->name, why);
	}
}

/* Which counters sample on their own: all that can, unless told not to. */
static void own_counters(struct evprof_recorder *r,
			 const struct evprof_recorder_opts *o)
{
	bool ride = EVPROF_OPTS_GET(o, ride_along, false);

	if (!ride && r->s.nr > 1 && !r->ops->caps.counter_samples) {
		evprof__note(&r->notes,
			     "this engine cannot sample counters on their own: "
			     "each counter's counts ride on %s's samples "
			     "(--attribution ride)",
			     r->s.events[0].name);
		ride = true;
	}
	evprof__engine_own_counters(&r->s, ride);
	late_overflows(r);
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

/*
 * The kernel refuses sample_freq above kernel.perf_event_max_sample_rate
 * (and lowers that maximum itself when sampling takes too long). It also
 * throttles a sampler past max / HZ interrupts in one tick, and since
 * Linux 6.16 the whole group with it: its counters stop counting until
 * the next tick. At the maximum itself, timer jitter puts one interrupt
 * too many in a tick now and then (at 1000 Hz with a maximum of 1000,
 * threads lost up to a fifth of their page faults): sample at half of it
 * at most, and say so.
 */
static void clamp_freq(struct evprof_recorder *r, uint64_t freq)
{
	char buf[32];
	long max = 0;

	if (evprof__read_file("/proc/sys/kernel/perf_event_max_sample_rate",
			      buf, sizeof(buf)) > 0)
		max = strtol(buf, NULL, 10);
	r->s.freq = freq;
	if (max > 1 && freq > (uint64_t)max / 2) {
		evprof__note(
		    &r->notes,
		    "%llu Hz is above half of kernel.perf_event_max_sample_rate "
		    "(%ld), where the kernel may throttle the group and stop "
		    "its counters: sampling at %ld Hz",
		    (unsigned long long)freq, max, max / 2);
		r->s.freq = (uint64_t)max / 2;
	}
}

/*
 * -g fp mends frameless leaves where the engine can (a small stack copy per
 * sample); one that cannot says so.
 */
static void set_leaf_stack(struct evprof_recorder *r,
			   const struct evprof_recorder_opts *o)
{
	if (o->call_graph != EVPROF_CALL_GRAPH_FP ||
	    !evprof__unwind_leaf_regs_mask())
		return;
	if (r->ops->caps.unwinders & EVPROF__UNWIND_FP_LEAF) {
		r->s.leaf_stack = EVPROF__LEAF_STACK;
		/*
		 * Samples twice as large: rings twice as large, or a churning
		 * tree recorded per CPU loses records while a slow reader
		 * (ASan, a window's build) catches up.
		 */
		if (!o->ring_pages)
			r->s.ring_pages = 2 * RING_PAGES_DEFAULT;
	} else
		evprof__note(&r->notes,
			     "this engine keeps frame-pointer stacks as the "
			     "kernel walks them: a leaf without a frame "
			     "(libc's syscall wrappers) loses its caller; "
			     "the ring engine recovers it");
}

static int set_options(struct evprof_recorder *r,
		       const struct evprof_recorder_target *t,
		       const struct evprof_recorder_opts *o)
{
	bool has_cmd = t->argv && t->argv[0];
	int err;

	if ((has_cmd || t->system_wide) && t->nr_pids)
		return -EINVAL;
	if (!has_cmd && !t->system_wide && (!t->nr_pids || !t->pids))
		return -EINVAL;
	if (o->mode > EVPROF_RECORDER_CPU ||
	    o->call_graph > EVPROF_CALL_GRAPH_FP_NOLEAF)
		return -EINVAL;
	if (t->system_wide && o->mode == EVPROF_RECORDER_TASK)
		return -EINVAL;
	if (o->ring_pages & (o->ring_pages - 1))
		return -EINVAL;
	r->notes.fn = o->note;
	r->notes.ctx = o->note_ctx;
	r->s.period = o->period;
	r->s.rate_asked = o->period || o->freq;
	if (!r->s.period)
		clamp_freq(r, o->freq ? o->freq : FREQ_DEFAULT);
	r->s.ring_pages = o->ring_pages ? o->ring_pages : RING_PAGES_DEFAULT;
	r->s.ring_pages_asked = o->ring_pages;
	r->s.callchain = o->call_graph != EVPROF_CALL_GRAPH_NONE;
	if (o->call_graph == EVPROF_CALL_GRAPH_DWARF) {
		uint32_t sz = o->stack_size ? o->stack_size
					    : EVPROF_RECORDER_STACK_DEFAULT;

		if (!evprof_session__unwind_regs())
			return -EOPNOTSUPP;
		if (sz < 8 || sz > EVPROF_RECORDER_STACK_MAX)
			return -EINVAL;
		r->s.dwarf_stack = sz & ~7u; /* the kernel wants u64s */
	}
	set_leaf_stack(r, o);
	r->s.off_cpu = EVPROF_OPTS_GET(o, off_cpu, false);
	r->flat = EVPROF_OPTS_GET(o, flat_memory, false);
	r->no_timeline = EVPROF_OPTS_GET(o, no_timeline, false);
	if (EVPROF_OPTS_GET(o, spill_dir, NULL)) {
		r->spill_dir = strdup(o->spill_dir);
		if (!r->spill_dir)
			return -ENOMEM;
	}
	if (EVPROF_OPTS_GET(o, debug_cache_dir, NULL)) {
		r->debug_cache = strdup(o->debug_cache_dir);
		if (!r->debug_cache)
			return -ENOMEM;
		/* Container images are copied there while they run. */
		evprof__dso_keep_in(r->debug_cache);
	}
	r->s.exclude_kernel = o->user_only;
	r->s.include_idle = o->include_idle;
	r->s.system_wide = t->system_wide;
	err = evprof__engine_cgroups(&r->s, t);
	if (err)
		return err;
	r->s.per_cpu = t->system_wide || o->mode == EVPROF_RECORDER_CPU ||
		       (o->mode == EVPROF_RECORDER_AUTO &&
			!evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ)->yes);
	r->ops->prepare(&r->s);
	/* A deferred user part comes after its sample: not within a part. */
	r->s.defer = r->s.callchain && !r->s.dwarf_stack && !r->flat &&
		     evprof_probe(EVPROF_FEAT_DEFER_CALLCHAIN)->yes;
	if (t->nr_pids) {
		r->pids = malloc(t->nr_pids * sizeof(*r->pids));
		if (!r->pids)
			return -ENOMEM;
		memcpy(r->pids, t->pids, t->nr_pids * sizeof(*r->pids));
		r->s.pids = r->pids;
		r->s.nr_pids = t->nr_pids;
	}
	r->product = product_of(has_cmd ? t->argv : NULL);
	return r->product ? 0 : -ENOMEM;
}

/* The engine's fds, then a pidfd per process. */
static int open_pidfds(struct evprof_recorder *r)
{
	size_t nr_procs = r->s.child > 0 ? 1 : r->s.nr_pids;
	int *efd;

	r->nr_efd = r->e->ops->fds(r->e, NULL, 0);
	r->nr_pfd = r->nr_efd + nr_procs;
	r->pfd = calloc(r->nr_pfd, sizeof(*r->pfd));
	efd = calloc(r->nr_efd + 1, sizeof(*efd));
	if (!r->pfd || !efd) {
		free(efd);
		return -ENOMEM;
	}
	r->e->ops->fds(r->e, efd, r->nr_efd);
	for (size_t i = 0; i < r->nr_pfd; i++) {
		r->pfd[i].fd = i < r->nr_efd ? efd[i] : -1;
		r->pfd[i].events = POLLIN;
	}
	free(efd);
	for (size_t i = 0; i < nr_procs; i++) {
		pid_t pid = r->s.child > 0 ? r->s.child : r->pids[i];
		int fd = evprof__pidfd_open(pid);

		/* A process already gone reads as exited: fd -1. */
		r->pfd[r->nr_efd + i].fd = fd < 0 ? -1 : fd;
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
	size_t engine =
	    EVPROF_OPTS_GET(opts, engine, EVPROF_RECORDER_ENGINE_RING);
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
	/* Any other value: the ring engine. */
	r->ops = engine < ARRAY_SIZE(engines)
		     ? engines[engine]
		     : engines[EVPROF_RECORDER_ENGINE_RING];
	r->s.notes = &r->notes;
	r->s.child = -1;
	err = set_options(r, target, opts ? opts : &defaults);
	if (!err)
		err = parse_events(r, events ? events : "cycles");
	if (!err)
		own_counters(r, opts ? opts : &defaults);
	if (!err)
		err = r->ops->check(&r->s);
	if (!err && target->argv && target->argv[0]) {
		r->launch = evprof_launch__new(target->argv);
		if (!r->launch)
			err = -errno;
		else
			r->s.child = evprof_launch__pid(r->launch);
	}
	if (!err)
		err = r->ops->open(&r->s, &r->e);
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
	if (r->e)
		r->e->ops->close(r->e);
	for (size_t i = r->nr_efd; r->pfd && i < r->nr_pfd; i++)
		if (r->pfd[i].fd >= 0)
			close(r->pfd[i].fd);
	free(r->pfd);
	evprof__notes_fini(&r->notes);
	evprof__engine_cgroups_close(&r->s);
	free(r->pids);
	free(r->product);
	evprof_profile__free(r->cur);
	evprof_symbolizer__free(r->sym);
	free(r->spill_dir);
	free(r->debug_cache);
	free(r);
}

static int name_cgroup(uint64_t id, const char *path, void *ctx)
{
	return evprof_session__name_cgroup(ctx, id, path);
}

/* Learns from /proc what runs already: the attached or every process. */
static void seed_processes(struct evprof_recorder *r)
{
	struct dirent *d;
	DIR *dir;

	/*
	 * Samples name their cgroup by id: the CGROUP records name those
	 * made while recording, this walk those made before (as perf
	 * synthesizes them). A cgroup unnamed labels nothing.
	 */
	if (evprof_probe(EVPROF_FEAT_SAMPLE_CGROUP)->yes)
		evprof__cgroup_walk(r->ops->caps.cgroup_v2_ids, name_cgroup,
				    r->e->session);

	for (size_t i = 0; i < r->s.nr_pids; i++)
		evprof_session__seed_process(r->e->session, r->s.pids[i]);
	if (!r->s.system_wide)
		return;
	dir = opendir("/proc");
	while (dir && (d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		/* Processes gone meanwhile are no error. */
		if (!*end && pid > 0)
			evprof_session__seed_process(r->e->session, (pid_t)pid);
	}
	if (dir)
		closedir(dir);
}

int evprof_recorder__start(struct evprof_recorder *r)
{
	int err;

	if (!r || r->started)
		return -EINVAL;
	r->started = true;
	seed_processes(r);
	r->start_mono = clock_ns(CLOCK_MONOTONIC);
	r->start_wall = clock_ns(CLOCK_REALTIME);
	r->win_start = r->last_part = r->start_mono;
	err = r->e->ops->start(r->e);
	if (err)
		return err;
	if (r->launch) {
		err = evprof_launch__go(r->launch);
		evprof_launch__free(r->launch);
		r->launch = NULL;
	}
	return err;
}

int evprof_recorder__consume(struct evprof_recorder *r)
{
	return r ? r->e->ops->poll(r->e) : 0;
}

int evprof_recorder__poll(struct evprof_recorder *r, int timeout_ms)
{
	int n;

	if (!r)
		return -EINVAL;
	n = poll(r->pfd, r->nr_pfd, timeout_ms);
	if (n < 0)
		return -errno;
	for (size_t i = r->nr_efd; n > 0 && i < r->nr_pfd; i++) {
		if (r->pfd[i].fd >= 0 && (r->pfd[i].revents & POLLIN)) {
			close(r->pfd[i].fd);
			r->pfd[i].fd = -1;
			r->live--;
		}
	}
	n = evprof_recorder__consume(r);
	evprof__recorder_poll_part(r);
	return n;
}

bool evprof_recorder__done(struct evprof_recorder *r)
{
	return r && r->nr_pfd > r->nr_efd && !r->live;
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
	int err;

	if (!r)
		return -EINVAL;
	if (r->stopped)
		return 0;
	r->stopped = true;
	err = r->e->ops->stop(r->e);
	/* Threads still off CPU now wait until the end of the recording. */
	r->stop_mono = clock_ns(CLOCK_MONOTONIC);
	evprof_session__end(r->e->session, r->stop_mono);
	evprof_recorder__consume(r);
	return err;
}

pid_t evprof_recorder__pid(const struct evprof_recorder *r)
{
	return r ? r->s.child : -1;
}

size_t evprof_recorder__nr_events(const struct evprof_recorder *r)
{
	return r ? r->s.nr : 0;
}

const char *evprof_recorder__event(const struct evprof_recorder *r, size_t i)
{
	return r && i < r->s.nr ? r->s.events[i].name : NULL;
}

bool evprof_recorder__per_cpu(const struct evprof_recorder *r)
{
	return r && r->s.per_cpu;
}

struct evprof_session *evprof_recorder__session(struct evprof_recorder *r)
{
	return r ? r->e->session : NULL;
}

int evprof_recorder__stats(const struct evprof_recorder *r,
			   struct evprof_recorder_stats *st)
{
	struct evprof_recorder_stats full;
	struct perf_event_attr a;

	if (!r)
		return -EINVAL;
	memset(&full, 0, sizeof(full)); /* padding too: it is copied out */
	r->e->ops->stats(r->e, &full);
	full.start_mono_ns = r->start_mono;
	full.start_wall_ns = r->start_wall;
	full.stack_size = r->s.dwarf_stack;
	full.deferred = r->s.defer;
	/* The rate the engines open the sampler with. */
	a = r->s.events[0].attr;
	evprof__engine_sampler_rate(&r->s, &a);
	full.sample_freq = a.freq ? a.sample_freq : 0;
	full.sample_period = a.freq ? 0 : a.sample_period;
	full.sample_time = evprof__event_is_time(&r->s.events[0]);
	return EVPROF_STATS_COPY(st, &full);
}
