// SPDX-License-Identifier: MIT
/*
 * evprof record: sample a launched command; every sample carries the
 * values of the group's counters (PERF_SAMPLE_READ), turned into
 * per-thread deltas by the session and written as a profile.
 *
 * Per-task mode: one group per CPU on the child with inherit (an inherited
 * event cannot be mmapped with cpu == -1), enable_on_exec, one ring per
 * CPU on the leader; attached processes get such groups on each of their
 * threads. A hidden task-clock member gives each sample its thread's exact
 * CPU time.
 *
 * Per-CPU mode (kernels before 6.12, and -a): one group per CPU with
 * pid -1, no inherit, enabled explicitly; the session keeps the profiled
 * process tree. A CPU's counters are shared by every thread running there,
 * so a hidden context-switches member samples each switch-out (in the
 * context of the task switched out, Linux 6.18 as every version since the
 * event exists) and cuts the intervals: what a thread counted while it ran
 * is charged to it. The hidden clock is cpu-clock. The same cut member in
 * task mode gives a thread the counts after its last sample up to its last
 * switch-out.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <evprof/evprof.h>
#include <evprof/proc.h>
#include <evprof/profile.h>
#include <evprof/session.h>
#include <evprof/symbols.h>

#include "cli.h"
#include "launch.h"

static const char record_usage[] =
	"usage: evprof record [-e LIST] [-F HZ | -c N] [-g fp|dwarf[,SIZE]|none]\n"
	"                     [-o FILE]... [--format firefox|folded|pprof]\n"
	"                     [--weight EVENT] [--mode auto|task|cpu] [--duration S]\n"
	"                     [-p PID[,PID...] | -a [--include-idle]] [-- CMD ARGS...]\n"
	"\n"
	"  -e, --events LIST   first event samples, the others are counted with\n"
	"                      every sample (default: cycles)\n"
	"  -F, --freq HZ       samples per second of the sampling event (1000)\n"
	"  -c, --count N       sample every N events instead\n"
	"  -g, --call-graph M  fp (default): kernel + frame-pointer user stacks\n"
	"                      (user part deferred where the kernel can);\n"
	"                      dwarf[,SIZE]: user stacks unwound with DWARF CFI\n"
	"                      from SIZE-byte stack copies (8192; x86-64);\n"
	"                      none: the sampled instruction only\n"
	"  -o, --output FILE   default evprof.json.gz (evprof.folded, evprof.pb.gz);\n"
	"                      repeat to write several files of one recording\n"
	"      --format F      firefox (default), folded or pprof for every\n"
	"                      output; else each name picks (.folded, .pb.gz)\n"
	"      --weight EVENT  weigh samples by that event's deltas\n"
	"      --mode M        auto (default: task where the kernel can), task\n"
	"                      (per-task groups with inherit, Linux 6.12), cpu\n"
	"                      (per-CPU groups filtered to the process tree)\n"
	"      --duration S    stop after S seconds (the command gets SIGTERM)\n"
	"  -p, --pid PIDS      attach to running processes (all their threads)\n"
	"  -a, --all-cpus      system-wide (per-CPU mode)\n"
	"      --include-idle  with -a, keep the idle task's samples\n";

#define RING_PAGES 128
#define MAX_EVENTS (EVPROF_SNAPSHOT_MAX - 2)

struct rec {
	/* Events as they end up: [0] samples, then the extras. */
	struct evprof_event_spec events[MAX_EVENTS + 1];
	size_t nr;
	bool cpu_time_member; /* the hidden task/cpu-clock is in the group */
	bool cut_member;      /* the hidden context-switches cut is last */
	bool per_cpu;	      /* pid -1 groups instead of inherited ones */
	bool launched;	      /* task mode: enable on the command's exec */
	size_t nr_members;    /* of the group build_attrs() made */
	bool exclude_kernel;
	long freq;
	long period;
	bool callchain;
	uint32_t dwarf_stack; /* -g dwarf: bytes of user stack per sample */
	bool defer;	      /* deferred user callchains (Linux 6.19) */
	char notes[8][256];
	int nr_notes;
	struct evprof_group_set **sets; /* one, or one per attached thread */
	size_t nr_sets;
	struct evprof_ring **rings; /* one per CPU of sets[0] */
	size_t nr_rings;
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static uint64_t clock_ns(clockid_t c)
{
	struct timespec ts;

	clock_gettime(c, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Prints a fallback step once on stderr and keeps it for the profile. */
static void note(struct rec *r, const char *fmt, ...)
{
	va_list ap;
	char buf[256];

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	cli_err("%s", buf);
	if (r->nr_notes < 8)
		snprintf(r->notes[r->nr_notes++], sizeof(r->notes[0]), "%s",
			 buf);
}

#define DWARF_STACK_DEFAULT 8192
/* The sample size is a u16: the kernel refuses copies of 64 KiB. */
#define DWARF_STACK_MAX 65528

/* The sampler's callchain bits beyond PERF_SAMPLE_CALLCHAIN. */
static void set_call_graph(const struct rec *r, struct perf_event_attr *a)
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

/*
 * Fills attrs: sampler, the hidden clock, the extras, then the hidden cut.
 * Leaders open disabled: enable_on_exec for a launched command in task
 * mode, else evprof_group_set__enable().
 */
static size_t build_attrs(struct rec *r, struct perf_event_attr *attrs)
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
		a->sample_type = st;
		/* Inherited counters report per thread only with TID (6.12). */
		a->inherit = !r->per_cpu;
		a->sample_id_all = 1;
		a->use_clockid = 1;
		a->clockid = CLOCK_MONOTONIC; /* one clock for the group */
		if (r->exclude_kernel) {
			a->exclude_kernel = 1;
			a->exclude_hv = 1;
		}
		if (i == 0) {
			if (r->period) {
				a->sample_period = (uint64_t)r->period;
			} else {
				a->freq = 1;
				a->sample_freq = (uint64_t)r->freq;
			}
			a->disabled = 1;
			a->enable_on_exec = r->launched && !r->per_cpu;
			a->mmap = a->mmap2 = a->comm = a->comm_exec = 1;
			a->task = 1;
			set_call_graph(r, a);
			a->watermark = 1;
			a->wakeup_watermark = RING_PAGES * 4096 / 4;
			if (r->cpu_time_member) {
				struct perf_event_attr *t = &attrs[n++];

				*t = (struct perf_event_attr){
					.size = sizeof(*t),
					.type = PERF_TYPE_SOFTWARE,
					/* Per CPU: the CPU's time. */
					.config = r->per_cpu
						? PERF_COUNT_SW_CPU_CLOCK
						: PERF_COUNT_SW_TASK_CLOCK,
				};
				t->sample_type = st;
				t->inherit = !r->per_cpu;
				t->sample_id_all = 1;
				t->use_clockid = 1;
				t->clockid = CLOCK_MONOTONIC;
				t->exclude_kernel = a->exclude_kernel;
				t->exclude_hv = a->exclude_hv;
			}
		} else {
			a->sample_period = 0; /* counting only */
			a->freq = 0;
			a->disabled = 0;
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
			.sample_type = st,
			.inherit = !r->per_cpu,
			.sample_id_all = 1,
			.use_clockid = 1,
			.clockid = CLOCK_MONOTONIC,
		};
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

#define MEMBER_CLOCK (-1)
#define MEMBER_CUT   (-2)

/* Which event does attrs index m stand for, or MEMBER_CLOCK/MEMBER_CUT. */
static long event_of(const struct rec *r, size_t m)
{
	if (m == 0)
		return 0;
	if (r->cut_member && m == r->nr_members - 1)
		return MEMBER_CUT;
	if (r->cpu_time_member)
		return m == 1 ? MEMBER_CLOCK : (long)m - 1;
	return (long)m;
}

static void drop_event(struct rec *r, size_t e)
{
	memmove(&r->events[e], &r->events[e + 1],
		(r->nr - e - 1) * sizeof(r->events[0]));
	r->nr--;
}

static const char *member_name(const struct rec *r, long e)
{
	if (e == MEMBER_CUT)
		return "context-switches";
	if (e == MEMBER_CLOCK)
		return r->per_cpu ? "cpu-clock" : "task-clock";
	return r->events[e].name;
}

/*
 * Opens the groups on pid (-1 per CPU), walking the fallback chain:
 * without the extras that cannot open, then cpu-clock sampling with every
 * extra that opens, then without kernel samples when they are not allowed.
 * Returns the set, or NULL (errno ESRCH quietly when pid is gone and
 * quiet_gone).
 */
static struct evprof_group_set *open_groups(struct rec *r, pid_t pid,
					     bool quiet_gone)
{
	struct evprof_event_spec all[MAX_EVENTS + 1];
	size_t all_nr = r->nr;
	char advice[512];

	memcpy(all, r->events, sizeof(all));
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
		evprof_open_advice(err, member_name(r, e), advice,
				   sizeof(advice));
		if (err == EINVAL && r->defer && e == 0) {
			/* The probe said yes, the real group says no. */
			r->defer = false;
			note(r, "deferred user callchains refused (%s): "
				"user stacks inline", advice);
		} else if (e == MEMBER_CUT) {
			r->cut_member = false;
			note(r, "context switches cannot be sampled (%s): %s",
			     advice, r->per_cpu
				? "a CPU's counts go to the thread it samples "
				  "next, not exactly to the thread that ran"
				: "counts after a thread's last sample are "
				  "lost");
		} else if ((err == EACCES || err == EPERM) &&
			   !r->exclude_kernel) {
			r->exclude_kernel = true;
			note(r, "kernel samples are not allowed (%s): recording "
				"user space only", advice);
		} else if (e == MEMBER_CLOCK && cli_unsupported(err)) {
			r->cpu_time_member = false;
			note(r, "%s cannot be counted (%s): CPU time "
				"per sample is unknown", member_name(r, e), advice);
		} else if (e > 0 && cli_unsupported(err)) {
			note(r, "%s cannot be counted with %s (%s): recording "
				"without it", r->events[e].name,
			     r->events[0].name, advice);
			drop_event(r, (size_t)e);
		} else if (e == 0 && cli_unsupported(err) &&
			   !(r->events[0].attr.type == PERF_TYPE_SOFTWARE &&
			     r->events[0].attr.config ==
				     PERF_COUNT_SW_CPU_CLOCK)) {
			note(r, "%s cannot sample (%s): sampling cpu-clock, "
				"keeping every extra event that opens",
			     r->events[0].name, advice);
			memcpy(r->events, all, sizeof(all));
			r->nr = all_nr;
			if (evprof_event_spec__parse(&r->events[0],
						     "cpu-clock") < 0)
				return NULL;
		} else {
			cli_err("cannot open %s: %s", member_name(r, e), advice);
			return NULL;
		}
	}
}

/* The ring of the CPU a group was opened on (rings follow sets[0]). */
static struct evprof_ring *ring_of_cpu(const struct rec *r, int cpu)
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
static int open_rings(struct rec *r)
{
	r->nr_rings = evprof_group_set__nr(r->sets[0]);
	r->rings = calloc(r->nr_rings, sizeof(*r->rings));
	if (!r->rings)
		return -1;
	for (size_t i = 0; i < r->nr_rings; i++) {
		int fd = evprof_group__fd(evprof_group_set__group(r->sets[0], i),
					  0);

		r->rings[i] = evprof_ring__open(fd, RING_PAGES);
		if (!r->rings[i]) {
			cli_err("cannot map the ring buffer of CPU %d: %s%s",
				evprof_group_set__cpu(r->sets[0], i),
				strerror(errno),
				errno == EPERM ? " (raise "
						 "kernel.perf_event_mlock_kb)"
					       : "");
			return -1;
		}
	}
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			struct evprof_group *g =
				evprof_group_set__group(r->sets[k], i);
			struct evprof_ring *ring = ring_of_cpu(
				r, evprof_group_set__cpu(r->sets[k], i));
			int err = 0;

			if (!ring) {
				err = -ENODEV; /* a CPU that came online */
			} else {
				if (k > 0)
					err = evprof_ring__add_fd(
						ring, evprof_group__fd(g, 0));
				if (!err && r->cut_member)
					err = evprof_ring__add_fd(
						ring, evprof_group__fd(
							      g, r->nr_members -
									 1));
			}
			if (err) {
				cli_err("cannot send CPU %d's records to its "
					"ring: %s",
					evprof_group_set__cpu(r->sets[k], i),
					strerror(-err));
				return -1;
			}
		}
	}
	return 0;
}

static void drain(struct rec *r, struct evprof_session *s)
{
	for (size_t i = 0; i < r->nr_rings; i++) {
		const void *rec;
		size_t size;

		while (evprof_ring__next(r->rings[i], &rec, &size) == 1)
			evprof_session__feed(s, rec, size);
	}
}

static int declare_ids(struct rec *r, struct evprof_session *s)
{
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			struct evprof_group *g =
				evprof_group_set__group(r->sets[k], i);

			for (size_t m = 0; m < evprof_group__nr(g); m++) {
				long e = event_of(r, m);
				int role = e == 0 ? EVPROF_SESSION_SAMPLER
					   : e == MEMBER_CLOCK
						   ? EVPROF_SESSION_CPU_TIME
					   : e == MEMBER_CUT
						   ? EVPROF_SESSION_CUT
						   : (int)e - 1;

				if (evprof_session__set_id(
					    s, evprof_group__id(g, m), role) <
				    0)
					return -1;
			}
		}
	}
	return 0;
}

/* What is recorded: a launched command, attached processes, or all. */
struct target {
	pid_t child; /* the launched command, or -1 */
	pid_t *pids; /* -p */
	size_t nr_pids;
	bool system_wide;
	bool include_idle;
};

/* Groups on one more attached thread, as the first one was opened. */
static struct evprof_group_set *open_more(struct rec *r, pid_t tid)
{
	struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
	struct evprof_group_set_opts o = { .sz = sizeof(o) };
	size_t n = build_attrs(r, attrs);

	return evprof_group_set__open(attrs, n, tid, &o);
}

static int add_set(struct rec *r, struct evprof_group_set *set)
{
	struct evprof_group_set **sets =
		realloc(r->sets, (r->nr_sets + 1) * sizeof(*sets));

	if (!sets) {
		evprof_group_set__close(set);
		return -1;
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

/*
 * Task mode on running processes: groups with inherit on every thread
 * (their later threads and children inherit them). Threads created while
 * we open are caught by scanning /proc again until nothing is new.
 */
static int open_threads(struct rec *r, const struct target *tg)
{
	pid_t *done = NULL;
	size_t nr_done = 0;
	bool again = true;
	int ret = -1;

	while (again) {
		again = false;
		for (size_t p = 0; p < tg->nr_pids; p++) {
			int *tids = NULL;
			int n = evprof_proc__read_tids(tg->pids[p], &tids);

			for (int i = 0; i < n; i++) {
				struct evprof_group_set *set;
				pid_t *d;

				if (seen_tid(done, nr_done, tids[i]))
					continue;
				d = realloc(done, (nr_done + 1) * sizeof(*d));
				if (!d) {
					free(tids);
					goto out;
				}
				done = d;
				done[nr_done++] = tids[i];
				set = r->nr_sets ? open_more(r, tids[i])
						 : open_groups(r, tids[i], true);
				if (!set && errno == ESRCH)
					continue; /* it exited meanwhile */
				if (!set || add_set(r, set) < 0) {
					if (r->nr_sets)
						cli_err("cannot open the events "
							"on thread %d: %s",
							tids[i],
							strerror(errno));
					free(tids);
					goto out;
				}
				again = true;
			}
			free(tids);
		}
	}
	if (!r->nr_sets)
		cli_err("no thread of the given processes is left");
	else
		ret = 0;
out:
	free(done);
	return ret;
}

static int open_target(struct rec *r, const struct target *tg)
{
	struct evprof_group_set *set;

	if (!r->per_cpu && tg->child < 0)
		return open_threads(r, tg);
	set = open_groups(r, r->per_cpu ? -1 : tg->child, false);
	return set ? add_set(r, set) : -1;
}

static int enable_all(struct rec *r)
{
	for (size_t k = 0; k < r->nr_sets; k++) {
		int err = evprof_group_set__enable(r->sets[k]);

		if (err) {
			cli_err("cannot enable the events: %s", strerror(-err));
			return -1;
		}
	}
	return 0;
}

/* Learns from /proc what runs already: the attached or every process. */
static void seed_processes(struct evprof_session *s, const struct target *tg)
{
	struct dirent *d;
	DIR *dir;

	for (size_t i = 0; i < tg->nr_pids; i++)
		evprof_session__seed_process(s, tg->pids[i]);
	if (!tg->system_wide)
		return;
	dir = opendir("/proc");
	while (dir && (d = readdir(dir))) {
		char *end;
		long pid = strtol(d->d_name, &end, 10);

		/* Processes gone meanwhile are no error. */
		if (!*end && pid > 0)
			evprof_session__seed_process(s, (pid_t)pid);
	}
	if (dir)
		closedir(dir);
}

/*
 * Records until the command exits (or every attached process), Ctrl-C, or
 * the duration ends. Returns the command's wait status, 0 without one.
 */
static int record_loop(struct rec *r, struct evprof_session *s,
		       const struct target *tg, double duration)
{
	size_t nfd = r->nr_rings + (tg->child > 0 ? 1 : tg->nr_pids);
	struct pollfd *pfd = calloc(nfd, sizeof(*pfd));
	uint64_t end = duration > 0 ? clock_ns(CLOCK_MONOTONIC) +
					      (uint64_t)(duration * 1e9)
				    : 0;
	pid_t child = tg->child;
	bool stopping = false;
	int status = 0;
	size_t live = 0;
	uint64_t stop_deadline = 0;

	if (!pfd)
		return -1;
	for (size_t i = 0; i < r->nr_rings; i++) {
		pfd[i].fd = evprof_ring__fd(r->rings[i]);
		pfd[i].events = POLLIN;
	}
	for (size_t i = r->nr_rings; i < nfd; i++) {
		pid_t pid = child > 0 ? child : tg->pids[i - r->nr_rings];

		/* A process already gone reads as exited: fd -1. */
		pfd[i].fd = launch_pidfd(pid);
		pfd[i].events = POLLIN;
		live += pfd[i].fd >= 0;
	}
	for (;;) {
		uint64_t now;
		int n = poll(pfd, nfd, 100);

		drain(r, s);
		for (size_t i = r->nr_rings; n > 0 && i < nfd; i++) {
			if (pfd[i].fd >= 0 && (pfd[i].revents & POLLIN)) {
				close(pfd[i].fd);
				pfd[i].fd = -1;
				live--;
			}
		}
		if (nfd > r->nr_rings && !live)
			break; /* the command, or every attached process, exited */
		now = clock_ns(CLOCK_MONOTONIC);
		if (child <= 0) {
			/* Attached or system-wide: never signal anyone. */
			if (end && now >= end)
				cli_err("duration reached");
			if ((end && now >= end) || interrupted)
				break;
			continue;
		}
		if (end && now >= end && !stopping) {
			cli_err("duration reached: stopping the command");
			kill(child, SIGTERM);
			stopping = true;
			stop_deadline = now + 2000000000ull;
		}
		if (interrupted && !stopping) {
			/* The command decides what Ctrl-C means to it. */
			kill(child, SIGINT);
			stopping = true;
			stop_deadline = now + 2000000000ull;
		}
		if (stopping && now >= stop_deadline) {
			kill(child, SIGKILL);
			stop_deadline = UINT64_MAX;
		}
	}
	for (size_t k = 0; k < r->nr_sets; k++)
		evprof_group_set__disable(r->sets[k]);
	drain(r, s);
	for (size_t i = r->nr_rings; i < nfd; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	free(pfd);
	if (child > 0)
		waitpid(child, &status, 0);
	return status;
}

static void summary(struct rec *r, struct evprof_session *s,
		    const char *path, double secs)
{
	struct evprof_session_stats st;
	uint64_t lost = 0, lost_samples = 0, lost_recs = 0;

	evprof_session__stats(s, &st);
	for (size_t i = 0; i < r->nr_rings; i++) {
		struct evprof_ring_stats rs;

		evprof_ring__stats(r->rings[i], &rs);
		lost += rs.lost_events;
		lost_recs += rs.lost_records;
		lost_samples += rs.lost_samples;
	}
	fprintf(stderr,
		"evprof: %llu samples of %s, %u threads in %u processes, "
		"%.3f s; lost %llu records (%llu LOST records), %llu samples; "
		"wrote %s\n",
		(unsigned long long)st.samples, r->events[0].name, st.threads,
		st.processes, secs, (unsigned long long)lost,
		(unsigned long long)lost_recs,
		(unsigned long long)lost_samples, path);
	if (r->dwarf_stack)
		fprintf(stderr,
			"evprof: call graph dwarf: %llu stacks unwound, %llu "
			"truncated at %u bytes, %llu copies dropped\n",
			(unsigned long long)st.stacks_unwound,
			(unsigned long long)st.stacks_truncated,
			r->dwarf_stack,
			(unsigned long long)st.stacks_dropped);
	else if (r->defer)
		fprintf(stderr,
			"evprof: call graph fp, deferred user part: %llu "
			"deferred samples, %llu left unstitched\n",
			(unsigned long long)st.deferred_samples,
			(unsigned long long)st.deferred_unstitched);
}

static int parse_events(struct rec *r, const char *list)
{
	struct evprof_event_list *l;
	int err = evprof_event_list__parse(&l, list);

	if (err) {
		cli_err("bad event list '%s': %s", list, evprof_strerror(err));
		return -1;
	}
	if (l->nr_events > MAX_EVENTS) {
		cli_err("at most %d events", MAX_EVENTS);
		evprof_event_list__free(l);
		return -1;
	}
	/* Braces do not matter here: every event joins the sampler's group. */
	memcpy(r->events, l->events, l->nr_events * sizeof(r->events[0]));
	r->nr = l->nr_events;
	evprof_event_list__free(l);
	return 0;
}

/* -g fp | dwarf[,SIZE] | none */
static int parse_call_graph(struct rec *r, const char *arg)
{
	char *end;
	long size;

	r->callchain = strcmp(arg, "none") != 0;
	r->dwarf_stack = 0;
	if (!strcmp(arg, "fp") || !strcmp(arg, "none"))
		return 0;
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ',')) {
		cli_err("-g takes fp, dwarf[,SIZE] or none");
		return -1;
	}
	if (!evprof_session__unwind_regs()) {
		cli_err("-g dwarf: DWARF unwinding is only implemented for "
			"x86-64");
		return -1;
	}
	size = DWARF_STACK_DEFAULT;
	if (arg[5]) {
		errno = 0;
		size = strtol(arg + 6, &end, 0);
		if (errno || *end || size < 8 || size > DWARF_STACK_MAX) {
			cli_err("-g dwarf,SIZE: SIZE from 8 to %d bytes",
				DWARF_STACK_MAX);
			return -1;
		}
	}
	r->dwarf_stack = (uint32_t)(size & ~7L); /* the kernel wants u64s */
	return 0;
}

/* Says which unwinding made the user stacks, and how it went. */
static void note_call_graph(struct rec *r, struct evprof_profile *p,
			    const struct evprof_session_stats *st)
{
	char buf[256];

	if (!r->callchain)
		return;
	if (r->dwarf_stack)
		snprintf(buf, sizeof(buf),
			 "call graph: dwarf (%u-byte user stack copies "
			 "unwound with libdw): %llu stacks unwound, %llu "
			 "truncated, %llu copies dropped",
			 r->dwarf_stack,
			 (unsigned long long)st->stacks_unwound,
			 (unsigned long long)st->stacks_truncated,
			 (unsigned long long)st->stacks_dropped);
	else if (r->defer)
		snprintf(buf, sizeof(buf),
			 "call graph: frame pointers, user part deferred: "
			 "%llu deferred samples, %llu left unstitched",
			 (unsigned long long)st->deferred_samples,
			 (unsigned long long)st->deferred_unstitched);
	else
		snprintf(buf, sizeof(buf), "call graph: frame pointers");
	evprof_profile__add_note(p, buf);
}

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "events", required_argument, NULL, 'e' },
		{ "freq", required_argument, NULL, 'F' },
		{ "count", required_argument, NULL, 'c' },
		{ "call-graph", required_argument, NULL, 'g' },
		{ "output", required_argument, NULL, 'o' },
		{ "format", required_argument, NULL, 'f' },
		{ "weight", required_argument, NULL, 'w' },
		{ "mode", required_argument, NULL, 'm' },
		{ "duration", required_argument, NULL, 'd' },
		{ "pid", required_argument, NULL, 'p' },
		{ "all-cpus", no_argument, NULL, 'a' },
		{ "include-idle", no_argument, NULL, 'I' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	static const char *const default_out[] = { "evprof.json.gz",
						   "evprof.folded",
						   "evprof.pb.gz" };
	const char *events = "cycles", *outs[8], *weight = NULL;
	const char *mode = "auto", *format = NULL;
	struct rec r = { .freq = 1000, .callchain = true,
			 .cpu_time_member = true, .cut_member = true };
	struct target tg = { .child = -1 };
	const char *pid_list = NULL;
	struct launch l = { .pid = -1, .go_fd = -1, .err_fd = -1 };
	struct sigaction sa = { .sa_handler = on_sigint };
	struct evprof_session *s = NULL;
	struct evprof_profile *prof = NULL;
	struct evprof_symbolizer *sym = NULL;
	const char *counters[MAX_EVENTS];
	double duration = 0;
	int fmt = -1, nr_outs = 0;
	int c, err, status, ret = 1;
	uint64_t t_mono, t_wall;
	char product[512], os[200];
	struct utsname u;

	while ((c = getopt_long(argc, argv, "+e:F:c:g:o:p:ah", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'e':
			events = optarg;
			break;
		case 'F':
			r.freq = atol(optarg);
			if (r.freq <= 0) {
				cli_err("-F needs a positive frequency");
				return 2;
			}
			break;
		case 'c':
			r.period = atol(optarg);
			if (r.period <= 0) {
				cli_err("-c needs a positive count");
				return 2;
			}
			break;
		case 'g':
			if (parse_call_graph(&r, optarg) < 0)
				return 2;
			break;
		case 'o':
			if (nr_outs == (int)(sizeof(outs) / sizeof(outs[0]))) {
				cli_err("at most %d outputs", nr_outs);
				return 2;
			}
			outs[nr_outs++] = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'w':
			weight = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'd':
			duration = atof(optarg);
			break;
		case 'p':
			pid_list = optarg;
			break;
		case 'a':
			tg.system_wide = true;
			break;
		case 'I':
			tg.include_idle = true;
			break;
		case 'h':
			fputs(record_usage, stdout);
			return 0;
		default:
			fputs(record_usage, stderr);
			return 2;
		}
	}
	argv += optind;
	argc -= optind;
	if (argc == 0 && !pid_list && !tg.system_wide) {
		cli_err("record needs a command to run, -p PID or -a");
		fputs(record_usage, stderr);
		return 2;
	}
	if (pid_list && (argc || tg.system_wide)) {
		cli_err("-p cannot be combined with -a or a command");
		return 2;
	}
	if (format && (fmt = out_parse_format(format)) < 0) {
		cli_err("--format takes firefox, folded or pprof");
		return 2;
	}
	if (!nr_outs)
		outs[nr_outs++] = default_out[fmt < 0 ? OUT_FIREFOX : fmt];
	if (strcmp(mode, "auto") && strcmp(mode, "task") &&
	    strcmp(mode, "cpu")) {
		cli_err("--mode takes auto, task or cpu");
		return 2;
	}
	if (tg.system_wide && !strcmp(mode, "task")) {
		cli_err("-a records per CPU: --mode task does not apply");
		return 2;
	}
	r.per_cpu = tg.system_wide || !strcmp(mode, "cpu") ||
		    (!strcmp(mode, "auto") &&
		     !evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ)->yes);
	if (parse_events(&r, events) < 0)
		return 2;
	r.defer = r.callchain && !r.dwarf_stack &&
		  evprof_probe(EVPROF_FEAT_DEFER_CALLCHAIN)->yes;
	if (pid_list) {
		int n = launch_parse_pids(pid_list, &tg.pids);

		if (n < 0)
			return 2;
		tg.nr_pids = (size_t)n;
	}

	if (argc) {
		err = launch_prepare(&l, argv);
		if (err) {
			cli_err("cannot start '%s': %s", argv[0],
				strerror(-err));
			return 1;
		}
		tg.child = l.pid;
		r.launched = true;
	}
	if (open_target(&r, &tg) < 0 || open_rings(&r) < 0)
		goto out_abort;
	for (size_t i = 1; i < r.nr; i++)
		counters[i - 1] = r.events[i].name;
	{
		struct evprof_session_opts so = {
			.sz = sizeof(so),
			.counters = counters,
			.nr_counters = r.nr - 1,
			/* -a keeps everything, else the targets' trees. */
			.pids = tg.system_wide ? NULL
				: tg.child > 0 ? &tg.child : tg.pids,
			.nr_pids = tg.system_wide ? 0
				   : tg.child > 0 ? 1 : tg.nr_pids,
			.exclude_idle = r.per_cpu && !tg.include_idle,
			.per_cpu = r.per_cpu,
		};
		struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];

		build_attrs(&r, attrs);
		attrs[0].read_format = evprof_group__read_format(
			evprof_group_set__group(r.sets[0], 0));
		evprof_record_fmt__from_attr(&so.fmt, &attrs[0]);
		s = evprof_session__new(&so);
	}
	if (!s || declare_ids(&r, s) < 0) {
		cli_err("cannot set up the session: %s", strerror(errno));
		goto out_abort;
	}
	if (weight) {
		bool found = false;

		for (size_t i = 1; i < r.nr; i++)
			found |= !strcmp(r.events[i].name, weight);
		if (!found) {
			note(&r, "--weight %s: no such counter in this "
				 "recording, weighing by samples", weight);
			weight = NULL;
		}
	}

	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	seed_processes(s, &tg);
	t_mono = clock_ns(CLOCK_MONOTONIC);
	t_wall = clock_ns(CLOCK_REALTIME);
	/* Task mode on a command: enable_on_exec; else enabled here. */
	if ((!r.launched || r.per_cpu) && enable_all(&r) < 0)
		goto out_abort;
	if (r.launched) {
		err = launch_go(&l);
		if (err) {
			cli_err("cannot run '%s': %s", argv[0], strerror(-err));
			ret = 127;
			goto out;
		}
	}
	status = record_loop(&r, s, &tg, duration);
	ret = r.launched ? launch_exit_code(status) : 0;

	uname(&u);
	snprintf(os, sizeof(os), "%s %s", u.sysname, u.release);
	{
		size_t off = (size_t)snprintf(product, sizeof(product),
					      "evprof");

		for (int i = 0; i < argc && off < sizeof(product); i++)
			off += (size_t)snprintf(product + off,
						sizeof(product) - off, " %s",
						argv[i]);
	}
	{
		struct evprof_profile_opts po = {
			.sz = sizeof(po),
			.product = product,
			.os = os,
			.start_wall_ns = t_wall,
			.start_mono_ns = t_mono,
			.interval_ns = r.period ? 0 : 1000000000ull /
							      (uint64_t)r.freq,
		};

		prof = evprof_profile__new(&po);
	}
	sym = evprof_symbolizer__new(NULL);
	if (!prof || !sym) {
		cli_err("out of memory");
		ret = ret ? ret : 1;
		goto out;
	}
	for (int i = 0; i < r.nr_notes; i++)
		evprof_profile__add_note(prof, r.notes[i]);
	err = evprof_session__build(s, prof, sym);
	if (!err) {
		struct evprof_session_stats st;

		evprof_session__stats(s, &st);
		note_call_graph(&r, prof, &st);
	}
	if (err) {
		cli_err("cannot build the profile: %s", evprof_strerror(err));
		ret = ret ? ret : 1;
		goto out;
	}
	for (int i = 0; i < nr_outs; i++) {
		err = out_write(prof, outs[i],
				   fmt < 0 ? out_format_of(outs[i])
					   : (enum out_format)fmt,
				   weight);
		if (err) {
			cli_err("cannot write %s: %s", outs[i],
				evprof_strerror(err));
			ret = ret ? ret : 1;
			goto out;
		}
	}
	summary(&r, s, outs[nr_outs - 1],
		(double)(clock_ns(CLOCK_MONOTONIC) - t_mono) / 1e9);
	goto out;

out_abort:
	if (r.launched)
		launch_abort(&l);
out:
	evprof_symbolizer__free(sym);
	evprof_profile__free(prof);
	evprof_session__free(s);
	for (size_t i = 0; i < r.nr_rings; i++)
		evprof_ring__close(r.rings[i]);
	free(r.rings);
	for (size_t k = 0; k < r.nr_sets; k++)
		evprof_group_set__close(r.sets[k]);
	free(r.sets);
	free(tg.pids);
	return ret;
}
