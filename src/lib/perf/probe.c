// SPDX-License-Identifier: MIT
/*
 * Kernel feature probes (each opens one minimal event, once, and caches
 * the answer), perf_event_paranoid, and the one translation of
 * perf_event_open errnos into advice. Above attr.c only: groups ask the
 * probes, never the reverse.
 */
#define _GNU_SOURCE /* sched_getcpu */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <evprof/event.h>

#include "attr.h"
#include "base/base.h"

/* "EINVAL", "EACCES", ... or NULL for errnos without a short name here. */
static const char *errno_name(int err)
{
	switch (err < 0 ? -err : err) {
	case EPERM:
		return "EPERM";
	case ENOENT:
		return "ENOENT";
	case ESRCH:
		return "ESRCH";
	case ENXIO:
		return "ENXIO";
	case E2BIG:
		return "E2BIG";
	case EBADF:
		return "EBADF";
	case EACCES:
		return "EACCES";
	case EBUSY:
		return "EBUSY";
	case ENODEV:
		return "ENODEV";
	case EINVAL:
		return "EINVAL";
	case EMFILE:
		return "EMFILE";
	case ENOSPC:
		return "ENOSPC";
	case ENOSYS:
		return "ENOSYS";
	case EOPNOTSUPP:
		return "EOPNOTSUPP";
	default:
		return NULL;
	}
}

int evprof_paranoid(void)
{
	char buf[32], *end;
	long v;

	if (evprof__read_file("/proc/sys/kernel/perf_event_paranoid", buf,
			      sizeof(buf)) <= 0)
		return INT_MIN;
	errno = 0;
	v = strtol(buf, &end, 10);
	if (end == buf || errno || v < INT_MIN + 1 || v > INT_MAX)
		return INT_MIN;
	return (int)v;
}

/* ---- advice ------------------------------------------------------------- */

const char *evprof_open_advice(int err, const char *name, char *buf, size_t len)
{
	int paranoid;

	if (!buf || len == 0)
		return buf;
	if (!name || !*name)
		name = "the event";
	if (err < 0)
		err = -err;
	switch (err) {
	case EACCES:
	case EPERM:
		paranoid = evprof_paranoid();
		if (paranoid == INT_MIN)
			snprintf(buf, len,
				 "%s: permission denied and "
				 "/proc/sys/kernel/perf_event_paranoid is "
				 "unreadable; a container's seccomp policy may "
				 "block perf_event_open",
				 name);
		else
			snprintf(
			    buf, len,
			    "%s: permission denied with "
			    "kernel.perf_event_paranoid=%d (2 forbids "
			    "kernel profiling, 1 CPU-wide events): run with "
			    "CAP_PERFMON (or as root), try user-space only "
			    "(:u), or run 'sysctl -w "
			    "kernel.perf_event_paranoid=1'",
			    name, paranoid);
		break;
	case ENOENT:
	case ENODEV:
	case ENXIO:
	case EOPNOTSUPP:
		snprintf(buf, len,
			 "%s is not supported by this machine (no such event "
			 "or PMU; hardware counters are often absent in VMs)",
			 name);
		break;
	case EINVAL:
		snprintf(buf, len,
			 "%s: the event attributes are not valid on this "
			 "kernel (a flag, sample type or read format it does "
			 "not know, or a combination it refuses)",
			 name);
		break;
	case EMFILE:
	case ENFILE:
		snprintf(buf, len,
			 "%s: too many open files (one per event and CPU); "
			 "raise the limit with 'ulimit -n'",
			 name);
		break;
	case ESRCH:
		snprintf(buf, len, "%s: no such process (did it exit?)", name);
		break;
	case E2BIG:
		snprintf(buf, len,
			 "%s: the attributes are newer than this kernel, or "
			 "the group is too large (its reads exceed the "
			 "kernel's size limit)",
			 name);
		break;
	case EBUSY:
		snprintf(buf, len,
			 "%s: the PMU is busy (another tool holds it "
			 "exclusively); stop other profilers and retry",
			 name);
		break;
	case ENOSYS:
		snprintf(buf, len,
			 "%s: perf_event_open is unavailable (kernel without "
			 "CONFIG_PERF_EVENTS, or blocked by seccomp)",
			 name);
		break;
	default:
		snprintf(buf, len, "%s: %s", name, evprof_strerror(err));
		break;
	}
	return buf;
}

bool evprof_open_unsupported(int err)
{
	return err == ENOENT || err == ENODEV || err == ENXIO ||
	       err == EOPNOTSUPP || err == EINVAL;
}

/* ---- probes ------------------------------------------------------------- */

struct probe_target {
	pid_t pid;
	int cpu;
	bool no_retry; /* the probe is about kernel access itself */
};

typedef void (*probe_setup_fn)(struct perf_event_attr *a,
			       struct probe_target *t);

struct probe_def {
	const char *name;
	const char *what;  /* subject of the why sentence */
	const char *since; /* kernel version, or NULL */
	probe_setup_fn setup;
};

static void attr_sw(struct perf_event_attr *a, uint64_t config)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = config;
	a->disabled = 1;
}

static void setup_inherit_read(struct perf_event_attr *a,
			       struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	/* Linux 6.12 accepts inherit + READ only together with TID. */
	a->inherit = 1;
	a->sample_type = PERF_SAMPLE_READ | PERF_SAMPLE_TID;
}

static void setup_defer(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_CALLCHAIN;
	evprof_attr__set_bit(a, EVPROF_ATTR_BIT_DEFER_CALLCHAIN, true);
}

static void setup_lost(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->read_format = PERF_FORMAT_LOST;
}

static void setup_build_id(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->mmap2 = 1;
	a->build_id = 1; /* bit 34 */
}

static void setup_clockid(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->use_clockid = 1;
	a->clockid = CLOCK_MONOTONIC;
}

static void setup_switch(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->context_switch = 1;
}

static void setup_hw(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, 0);
	a->type = PERF_TYPE_HARDWARE;
	a->config = PERF_COUNT_HW_CPU_CYCLES;
}

static void setup_kernel(struct perf_event_attr *a, struct probe_target *t)
{
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_IP;
	t->no_retry = true;
}

static void setup_system_wide(struct perf_event_attr *a, struct probe_target *t)
{
	int cpu = sched_getcpu();

	attr_sw(a, PERF_COUNT_SW_CPU_CLOCK);
	/*
	 * The CPU we run on, online by definition (CPU 0 may be offline on
	 * some machines); 0 if the kernel cannot say.
	 */
	t->pid = -1;
	t->cpu = cpu >= 0 ? cpu : 0;
}

static void setup_cgroup(struct perf_event_attr *a, struct probe_target *t)
{
	(void)t;
	attr_sw(a, PERF_COUNT_SW_TASK_CLOCK);
	a->sample_period = 1000000;
	a->sample_type = PERF_SAMPLE_CGROUP;
	a->cgroup = 1;
}

static const struct probe_def probe_defs[EVPROF_FEAT__COUNT] = {
    [EVPROF_FEAT_INHERIT_SAMPLE_READ] =
	{
	    .name = "inherit+sample_read",
	    .what = "inherit with PERF_SAMPLE_READ|PERF_SAMPLE_TID on a "
		    "task-clock event",
	    .since = "Linux 6.12",
	    .setup = setup_inherit_read,
	},
    [EVPROF_FEAT_DEFER_CALLCHAIN] =
	{
	    .name = "defer_callchain",
	    .what = "defer_callchain on a task-clock event sampling "
		    "callchains",
	    .since = "Linux 6.19",
	    .setup = setup_defer,
	},
    [EVPROF_FEAT_FORMAT_LOST] =
	{
	    .name = "format_lost",
	    .what = "read_format PERF_FORMAT_LOST on task-clock",
	    .since = "Linux 6.0",
	    .setup = setup_lost,
	},
    [EVPROF_FEAT_MMAP2_BUILD_ID] =
	{
	    .name = "mmap2_build_id",
	    .what = "mmap2 with build_id on task-clock",
	    .since = "Linux 5.12",
	    .setup = setup_build_id,
	},
    [EVPROF_FEAT_CLOCKID] =
	{
	    .name = "clockid",
	    .what = "use_clockid with CLOCK_MONOTONIC on task-clock",
	    .since = "Linux 4.1",
	    .setup = setup_clockid,
	},
    [EVPROF_FEAT_CONTEXT_SWITCH] =
	{
	    .name = "context_switch",
	    .what = "context_switch records on task-clock",
	    .since = "Linux 4.3",
	    .setup = setup_switch,
	},
    [EVPROF_FEAT_HW_PMU] =
	{
	    .name = "hw_pmu",
	    .what = "a hardware cycles counter",
	    .since = NULL,
	    .setup = setup_hw,
	},
    [EVPROF_FEAT_KERNEL_SAMPLES] =
	{
	    .name = "kernel_samples",
	    .what = "a task-clock sampling event including the kernel",
	    .since = NULL,
	    .setup = setup_kernel,
	},
    [EVPROF_FEAT_SYSTEM_WIDE] =
	{
	    .name = "system_wide",
	    .what = "a CPU-wide cpu-clock event (pid -1)",
	    .since = NULL,
	    .setup = setup_system_wide,
	},
    [EVPROF_FEAT_SAMPLE_CGROUP] =
	{
	    .name = "sample_cgroup",
	    .what = "PERF_SAMPLE_CGROUP and cgroup records on task-clock",
	    .since = "Linux 5.7",
	    .setup = setup_cgroup,
	},
};

static pthread_mutex_t probe_lock = PTHREAD_MUTEX_INITIALIZER;
static bool probe_done[EVPROF_FEAT__COUNT];
static struct evprof_probe_result probe_res[EVPROF_FEAT__COUNT];

static int try_open(const struct perf_event_attr *a,
		    const struct probe_target *t)
{
	int fd = evprof__perf_open(a, t->pid, t->cpu, -1, 0);

	if (fd < 0)
		return errno;
	close(fd);
	return 0;
}

static void errno_text(int err, char *buf, size_t len)
{
	const char *n = errno_name(err);

	snprintf(buf, len, "%s", n ? n : evprof_strerror(err));
}

static void run_probe(enum evprof_feature f, struct evprof_probe_result *r)
{
	const struct probe_def *d = &probe_defs[f];
	struct probe_target t = {.pid = 0, .cpu = -1};
	struct perf_event_attr a;
	const char *retried = "";
	char ename[64];
	int err;

	d->setup(&a, &t);
	err = try_open(&a, &t);
	/*
	 * Like perf, do not let perf_event_paranoid hide a feature: a refusal
	 * for lack of privilege is retried on user space only.
	 */
	if ((err == EACCES || err == EPERM) && !t.no_retry) {
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		err = try_open(&a, &t);
		retried = " (user space only)";
	}
	r->name = d->name;
	r->yes = err == 0;
	r->err = err;
	if (!err) {
		if (d->since)
			snprintf(r->why, sizeof(r->why), "%s opened%s (%s+)",
				 d->what, retried, d->since);
		else
			snprintf(r->why, sizeof(r->why), "%s opened%s", d->what,
				 retried);
		return;
	}
	errno_text(err, ename, sizeof(ename));
	if (f == EVPROF_FEAT_HW_PMU && (err == ENOENT || err == ENODEV ||
					err == EOPNOTSUPP || err == ENXIO))
		snprintf(r->why, sizeof(r->why),
			 "%s: %s, no hardware PMU (a VM or container?)",
			 d->what, ename);
	else if (err == EACCES || err == EPERM)
		snprintf(r->why, sizeof(r->why),
			 "%s: %s with perf_event_paranoid=%d (CAP_PERFMON "
			 "lifts it)",
			 d->what, ename, evprof_paranoid());
	else if (err == EINVAL && d->since)
		snprintf(r->why, sizeof(r->why), "%s: %s, needs %s", d->what,
			 ename, d->since);
	else
		snprintf(r->why, sizeof(r->why), "%s: %s", d->what, ename);
}

const struct evprof_probe_result *evprof_probe(enum evprof_feature f)
{
	if ((unsigned int)f >= EVPROF_FEAT__COUNT)
		return NULL;
	/* Probes do not call evprof_probe(), so one plain lock is enough. */
	pthread_mutex_lock(&probe_lock);
	if (!probe_done[f]) {
		run_probe(f, &probe_res[f]);
		probe_done[f] = true;
	}
	pthread_mutex_unlock(&probe_lock);
	return &probe_res[f];
}
