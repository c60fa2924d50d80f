// SPDX-License-Identifier: MIT
/*
 * The recorder: the one module that joins events, rings and the session.
 * The policy it holds is described in include/evprof/recorder.h; opening
 * is recorder_open.c's.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "engine_bpf.h"
#include "open.h"

/* Timeline rows held in memory before they spill (about 0.5 MB). */
#define SPILL_ROWS 8192

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
	r->freq = freq;
	if (max > 1 && freq > (uint64_t)max / 2) {
		evprof__recorder_note(
		    r,
		    "%llu Hz is above half of kernel.perf_event_max_sample_rate "
		    "(%ld), where the kernel may throttle the group and stop "
		    "its counters: sampling at %ld Hz",
		    (unsigned long long)freq, max, max / 2);
		r->freq = (uint64_t)max / 2;
	}
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
	r->note_fn = o->note;
	r->note_ctx = o->note_ctx;
	r->period = o->period;
	if (!r->period)
		clamp_freq(r, o->freq ? o->freq : FREQ_DEFAULT);
	r->ring_pages = o->ring_pages ? o->ring_pages : RING_PAGES_DEFAULT;
	r->ring_pages_asked = o->ring_pages;
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
	r->off_cpu = EVPROF_OPTS_GET(o, off_cpu, false);
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
	}
	r->exclude_kernel = o->user_only;
	r->include_idle = o->include_idle;
	r->system_wide = t->system_wide;
	r->cpu_time_member = r->cut_member = true;
	r->per_cpu = t->system_wide || o->mode == EVPROF_RECORDER_CPU ||
		     (o->mode == EVPROF_RECORDER_AUTO &&
		      !evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ)->yes);
	/* The BPF engine keeps exits in the kernel: no tracefs needed. */
	r->exit_member =
	    EVPROF_OPTS_GET(o, engine, EVPROF_RECORDER_ENGINE_RING) !=
		EVPROF_RECORDER_ENGINE_BPF &&
	    evprof__recorder_find_exit(r);
	/* A deferred user part comes after its sample: not within a part. */
	r->defer = r->callchain && !r->dwarf_stack && !r->flat &&
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
	/*
	 * One group on the PMU, checked before the command starts; the BPF
	 * engine opens each counter on its own (the kernel multiplexes).
	 */
	if (!err &&
	    EVPROF_OPTS_GET(opts, engine, EVPROF_RECORDER_ENGINE_RING) !=
		EVPROF_RECORDER_ENGINE_BPF)
		err = evprof__recorder_validate(r);
	if (!err && target->argv && target->argv[0]) {
		r->launch = evprof_launch__new(target->argv);
		if (!r->launch)
			err = -errno;
		else
			r->child = evprof_launch__pid(r->launch);
	}
	if (!err &&
	    EVPROF_OPTS_GET(opts, engine, EVPROF_RECORDER_ENGINE_RING) ==
		EVPROF_RECORDER_ENGINE_BPF) {
		err = evprof__bpf_open(r);
	} else if (!err) {
		err = evprof__recorder_open_target(r);
		if (!err)
			err = evprof__recorder_open_rings(r);
		if (!err)
			err = evprof__recorder_new_session(r);
	}
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
	evprof__bpf_close(r->bpf);
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
	evprof_profile__free(r->cur);
	evprof_symbolizer__free(r->sym);
	free(r->spill_dir);
	free(r->debug_cache);
	evprof__pmu_map_fini(&r->pmu_map);
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
	r->win_start = r->last_part = r->start_mono;
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
	if (r->bpf) {
		err = evprof__bpf_start(r);
		if (err)
			return err;
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
	n = evprof_recorder__consume(r);
	evprof__recorder_poll_part(r);
	return n;
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
	if (r->bpf)
		err = evprof__bpf_stop(r);
	for (size_t k = 0; k < r->nr_sets; k++) {
		int e = evprof_group_set__disable(r->sets[k]);

		if (e && !err)
			err = e;
	}
	/* Threads still off CPU now wait until the end of the recording. */
	r->stop_mono = clock_ns(CLOCK_MONOTONIC);
	evprof_session__end(r->session, r->stop_mono);
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

void evprof__recorder_note_session(struct evprof_recorder *r,
				   struct evprof_profile *p)
{
	struct evprof_session_stats st;
	char buf[256];

	evprof_session__stats(r->session, &st);
	if (st.throttled) {
		snprintf(buf, sizeof(buf),
			 "the kernel throttled sampling %llu times: a "
			 "throttled group's counters miss what happened until "
			 "the next tick",
			 (unsigned long long)st.throttled);
		evprof_profile__add_note(p, buf);
	}
	if (!r->callchain)
		return;
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
		snprintf(buf, sizeof(buf),
			 "call graph: frame pointers: %llu samples cut where "
			 "the user stack left code",
			 (unsigned long long)st.stacks_cut);
	evprof_profile__add_note(p, buf);
}

struct evprof_symbolizer *
evprof__recorder_symbolizer(const struct evprof_recorder *r)
{
	struct evprof_symbolizer_opts so = {.sz = sizeof(so),
					    .debug_cache_dir = r->debug_cache};

	return evprof_symbolizer__new(&so);
}

struct evprof_profile *evprof__recorder_new_profile(struct evprof_recorder *r,
						    uint64_t start_mono)
{
	struct evprof_profile *p;
	struct utsname u;
	char os[200];

	uname(&u);
	snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	{
		struct evprof_profile_opts po = {
		    .sz = sizeof(po),
		    .product = r->product,
		    .os = os,
		    .start_wall_ns =
			r->start_wall + (start_mono - r->start_mono),
		    .start_mono_ns = start_mono,
		    .interval_ns = r->period ? 0 : 1000000000ull / r->freq,
		    .no_timeline = r->no_timeline,
		    .spill_dir = r->spill_dir,
		    /* A small budget: memory flat within seconds. */
		    .spill_rows = SPILL_ROWS,
		};

		p = evprof_profile__new(&po);
		if (!p && r->spill_dir && errno != ENOMEM) {
			evprof__recorder_note(
			    r,
			    "cannot spill the timeline to %s (%s): it stays "
			    "in memory",
			    r->spill_dir, strerror(errno));
			free(r->spill_dir);
			r->spill_dir = NULL;
			po.spill_dir = NULL;
			p = evprof_profile__new(&po);
		}
	}
	for (size_t i = 0; p && i < r->nr_notes; i++) {
		if (evprof_profile__add_note(p, r->notes[i])) {
			evprof_profile__free(p);
			errno = ENOMEM;
			return NULL;
		}
	}
	return p;
}

struct evprof_profile *evprof_recorder__profile(struct evprof_recorder *r,
						struct evprof_symbolizer *sym)
{
	struct evprof_symbolizer *own = NULL;
	struct evprof_profile *p;
	int err;

	if (!r) {
		errno = EINVAL;
		return NULL;
	}
	if (r->flat) {
		err = evprof__recorder_part(r, sym, UINT64_MAX);
		if (err) {
			errno = -err;
			return NULL;
		}
		p = r->cur;
		r->cur = NULL;
		evprof__recorder_note_session(r, p);
		evprof__recorder_note_pmus(r, p);
		return p;
	}
	p = evprof__recorder_new_profile(r, r->start_mono);
	if (!p)
		return NULL;
	if (!sym) {
		own = sym = evprof__recorder_symbolizer(r);
		if (!own) {
			evprof_profile__free(p);
			return NULL;
		}
	}
	err = evprof_session__build(r->session, p, sym);
	evprof_symbolizer__free(own);
	if (err) {
		evprof_profile__free(p);
		errno = -err;
		return NULL;
	}
	evprof__recorder_note_session(r, p);
	evprof__recorder_note_pmus(r, p);
	return p;
}
