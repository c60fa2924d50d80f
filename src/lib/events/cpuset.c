// SPDX-License-Identifier: MIT
/*
 * Per-CPU sets: the same group opened on every online CPU, each CPU's
 * attrs adjusted where the caller asks (a hybrid machine's core PMUs).
 */
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <evprof/event.h>

#include "perf/perf.h"
#include "host.h"
#include "base/base.h"

struct set_entry {
	int cpu;
	struct evprof_group *g;
};

struct evprof_group_set {
	size_t nr;
	struct set_entry e[];
};

/* path: name (online, cpu3) in the host's sysfs CPU directory. */
static void cpu_path(char *path, size_t len, const char *name)
{
	const char *root = evprof__host()->cpu_root;

	snprintf(path, len, "%s/%s", root ? root : EVPROF_HOST_CPU_ROOT, name);
}

/*
 * Reads list (online, possible) of the host's CPU directory into cpus[max].
 * A sparse list of thousands of CPUs outgrows a page: read it whole.
 */
static int cpu_list(const char *list, int *cpus, int max)
{
	char path[PATH_MAX], *buf;
	size_t len;
	int n;

	if (!cpus && max)
		return -EINVAL;
	cpu_path(path, sizeof(path), list);
	n = evprof__read_all(path, 1 << 20, &buf, &len);
	if (n < 0)
		return n;
	n = evprof__parse_cpu_list(buf, cpus, max);
	free(buf);
	return n;
}

/* Whether the host's CPU directory has cpu<cpu>/. */
static bool cpu_exists(int cpu)
{
	char name[32], path[PATH_MAX];

	snprintf(name, sizeof(name), "cpu%d", cpu);
	cpu_path(path, sizeof(path), name);
	return access(path, F_OK) == 0;
}

int evprof_cpus_online(int *cpus, int max)
{
	return cpu_list("online", cpus, max < 0 ? 0 : max);
}

int evprof_cpus_possible(int *cpus, int max)
{
	return cpu_list("possible", cpus, max < 0 ? 0 : max);
}

/*
 * Whether pid still names a live (not zombie) process. perf_event_open
 * answers ESRCH both for a pid that is gone and, per the per-CPU open
 * helpers this follows, for a CPU that went away: this tells them apart.
 */
static bool pid_alive(pid_t pid)
{
	char path[64], buf[512];
	const char *p;
	int n;

	if (pid <= 0)
		return true; /* the caller itself, or no task at all */
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	n = evprof__read_file(path, buf, sizeof(buf));
	if (n == -ENOENT)
		return false;
	if (n < 0) /* no procfs: a signal-less kill still checks */
		return kill(pid, 0) == 0 || errno == EPERM;
	/* "pid (comm) S ...": comm may hold ')', the state follows the
	 * last one. A zombie can no longer get events. */
	p = strrchr(buf, ')');
	if (!p || p[1] != ' ')
		return true;
	return p[2] != 'Z' && p[2] != 'X';
}

static void set_close(struct evprof_group_set *set)
{
	/* Reverse order of opening, as every other cleanup path. */
	while (set->nr > 0) {
		set->nr--;
		evprof_group__free(set->e[set->nr].g);
	}
	free(set);
}

struct evprof_group_set *
evprof_group_set__open(const struct perf_event_attr *attrs, size_t nr,
		       pid_t pid, const struct evprof_group_set_opts *opts)
{
	return evprof__group_set_open(attrs, nr, pid, opts, NULL, NULL);
}

struct evprof_group_set *
evprof__group_set_open(const struct perf_event_attr *attrs, size_t nr,
		       pid_t pid, const struct evprof_group_set_opts *opts,
		       evprof__cpu_attrs_fn fn, void *ctx)
{
	unsigned flags =
	    (EVPROF_OPTS_GET(opts, deferred_enable, false)
		 ? EVPROF__GROUP_DISABLED
		 : 0) |
	    (EVPROF_OPTS_GET(opts, cgroup, false) ? EVPROF__GROUP_CGROUP : 0);
	int *failed_cpu = EVPROF_OPTS_GET(opts, failed_cpu, NULL);
	int *failed_member = EVPROF_OPTS_GET(opts, failed_member, NULL);
	struct evprof_group_set *set = NULL;
	struct perf_event_attr *own = NULL; /* a CPU's attrs, with fn */
	int *cpus = NULL, ncpus, skipped_err = 0, err;

	if (!attrs || nr == 0 || !EVPROF_OPTS_VALID(opts, true)) {
		errno = EINVAL;
		return NULL;
	}
	ncpus = evprof_cpus_online(NULL, 0);
	if (ncpus <= 0) {
		pr_warn("cannot read the online CPUs: %s\n",
			evprof_strerror(ncpus ? ncpus : -ENODEV));
		errno = ncpus ? -ncpus : ENODEV;
		return NULL;
	}
	cpus = calloc((size_t)ncpus, sizeof(*cpus));
	set = calloc(1, sizeof(*set) + (size_t)ncpus * sizeof(set->e[0]));
	if (fn)
		own = malloc(nr * sizeof(*own));
	if (!cpus || !set || (fn && !own))
		goto fail_errno;
	/* A CPU that came online since the count is opened next time. */
	if (evprof_cpus_online(cpus, ncpus) < 0)
		goto fail_errno;

	for (int i = 0; i < ncpus; i++) {
		struct evprof_group *g;
		int member = -1;

		if (fn) {
			memcpy(own, attrs, nr * sizeof(*own));
			fn(ctx, cpus[i], own, nr);
		}
		g = evprof__group_open(own ? own : attrs, nr, pid, cpus[i],
				       flags, &member);
		if (g) {
			set->e[set->nr].cpu = cpus[i];
			set->e[set->nr].g = g;
			set->nr++;
			continue;
		}
		err = errno;
		/*
		 * ENODEV: the CPU went offline after we read the list.
		 * EINVAL for a CPU without a directory: not one the kernel
		 * has (beyond nr_cpu_ids), a list out of step with it; any
		 * other EINVAL (attrs, a PMU bound to some CPUs) fails.
		 * ESRCH is ambiguous: it may also mean the task exited. We
		 * only skip the CPU when the task still exists; otherwise
		 * this open cannot succeed on any CPU and the caller must
		 * hear ESRCH.
		 */
		if (err == ENODEV || (err == EINVAL && !cpu_exists(cpus[i])) ||
		    (err == ESRCH && pid_alive(pid))) {
			pr_debug("cpu %d skipped (offline?): %s\n", cpus[i],
				 evprof_strerror(err));
			skipped_err = err;
			continue;
		}
		if (failed_cpu)
			*failed_cpu = cpus[i];
		if (failed_member)
			*failed_member = member;
		set_close(set);
		free(own);
		free(cpus);
		errno = err;
		return NULL;
	}
	free(own);
	free(cpus);
	if (set->nr == 0) {
		/* Every CPU was skipped: nothing to count on. */
		set_close(set);
		errno = skipped_err ? skipped_err : ENODEV;
		return NULL;
	}
	return set;

fail_errno:
	err = errno;
	free(own);
	free(cpus);
	if (set)
		set_close(set);
	errno = err;
	return NULL;
}

void evprof_group_set__free(struct evprof_group_set *set)
{
	if (set)
		set_close(set);
}

size_t evprof_group_set__nr(const struct evprof_group_set *set)
{
	return set ? set->nr : 0;
}

struct evprof_group *evprof_group_set__group(const struct evprof_group_set *set,
					     size_t i)
{
	return set && i < set->nr ? set->e[i].g : NULL;
}

int evprof_group_set__cpu(const struct evprof_group_set *set, size_t i)
{
	return set && i < set->nr ? set->e[i].cpu : -1;
}

static int set_for_each(struct evprof_group_set *set,
			int (*fn)(struct evprof_group *g))
{
	int first = 0;

	if (!set)
		return -EINVAL;
	/* Try every group, so one failure does not leave the rest idle. */
	for (size_t i = 0; i < set->nr; i++) {
		int ret = fn(set->e[i].g);

		if (ret < 0 && !first)
			first = ret;
	}
	return first;
}

int evprof_group_set__enable(struct evprof_group_set *set)
{
	return set_for_each(set, evprof_group__enable);
}

int evprof_group_set__disable(struct evprof_group_set *set)
{
	return set_for_each(set, evprof_group__disable);
}
