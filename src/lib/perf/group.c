// SPDX-License-Identifier: MIT
/*
 * Groups of open perf event fds: a leader and its members, opened with the
 * one read_format libevprof reads, each member's kernel id recorded. Above
 * attr.c and probe.c (the read_format asks whether PERF_FORMAT_LOST is
 * there), below cpuset.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <evprof/event.h>
#include <evprof/read.h>

#include "attr.h"
#include "group.h"
#include "base/base.h"

struct group_member {
	int fd;
	uint64_t id;
};

struct evprof_group {
	uint64_t read_format;
	size_t nr;
	struct group_member m[]; /* m[0] is the leader */
};

void evprof_attr__set_read_format(struct perf_event_attr *attr)
{
	attr->size = sizeof(*attr);
	attr->read_format |= PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			     PERF_FORMAT_TOTAL_TIME_ENABLED |
			     PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (evprof_probe(EVPROF_FEAT_FORMAT_LOST)->yes)
		attr->read_format |= PERF_FORMAT_LOST;
}

static void group_close_from(struct evprof_group *g, size_t nr)
{
	/* Members first: closing a leader first would turn them into
	 * singleton groups that keep counting until closed. */
	while (nr-- > 0) {
		if (g->m[nr].fd >= 0)
			close(g->m[nr].fd);
		g->m[nr].fd = -1;
	}
}

struct evprof_group *evprof__group_open(const struct perf_event_attr *attrs,
					size_t nr, pid_t pid, int cpu,
					unsigned flags, int *failed_member)
{
	struct evprof_group *g;
	bool enable_after;
	const char *what = NULL;
	size_t i;
	int err = 0;

	if (!attrs || nr == 0) {
		errno = EINVAL;
		return NULL;
	}
	/* A read of a bigger group could not be parsed into a snapshot. */
	if (nr > EVPROF_SNAPSHOT_MAX) {
		errno = E2BIG;
		return NULL;
	}
	g = calloc(1, sizeof(*g) + nr * sizeof(g->m[0]));
	if (!g)
		return NULL;
	g->nr = nr;
	for (i = 0; i < nr; i++)
		g->m[i].fd = -1;

	/*
	 * The leader is always opened disabled and, when the caller wanted it
	 * counting, enabled once every member is in. A member added to a
	 * group already counting on a running task is only scheduled in at
	 * that task's next context switch (seen on Linux 6.18: page-faults
	 * read 0 after 2000 faults), and this way all members count from the
	 * same instant.
	 */
	enable_after = !(flags & EVPROF__GROUP_DISABLED) && !attrs[0].disabled;
	for (i = 0; i < nr; i++) {
		struct perf_event_attr a = attrs[i];
		int fd;

		/* One layout for the whole group: a read through any fd and
		 * the leader's samples then parse alike. */
		if (i == 0) {
			evprof_attr__set_read_format(&a);
			g->read_format = a.read_format;
			a.disabled = 1;
		} else {
			a.size = sizeof(a);
			a.read_format = g->read_format;
		}
		fd = evprof__perf_open(
		    &a, pid, cpu, i ? g->m[0].fd : -1,
		    flags & EVPROF__GROUP_CGROUP ? PERF_FLAG_PID_CGROUP : 0);
		if (fd < 0) {
			err = errno;
			what = "perf_event_open";
			break;
		}
		g->m[i].fd = fd;
		if (ioctl(fd, PERF_EVENT_IOC_ID, &g->m[i].id) < 0) {
			err = errno;
			what = "PERF_EVENT_IOC_ID";
			break;
		}
	}
	if (!err && enable_after) {
		err = -evprof_group__enable(g);
		what = "PERF_EVENT_IOC_ENABLE";
		i = 0;
	}
	if (err) {
		/* The caller decides whether this is fatal (fallbacks to
		 * other events are normal), so only a debug note. */
		pr_debug("%s of group member %zu (type %u config %#llx) on "
			 "pid %d cpu %d failed: %s\n",
			 what, i, attrs[i].type,
			 (unsigned long long)attrs[i].config, (int)pid, cpu,
			 evprof_strerror(err));
		if (failed_member)
			*failed_member = (int)i;
		group_close_from(g, nr);
		free(g);
		errno = err;
		return NULL;
	}
	return g;
}

struct evprof_group *evprof_group__open(const struct perf_event_attr *attrs,
					size_t nr, pid_t pid, int cpu,
					const struct evprof_group_opts *opts)
{
	if (!EVPROF_OPTS_VALID(opts, true)) {
		errno = EINVAL;
		return NULL;
	}
	return evprof__group_open(
	    attrs, nr, pid, cpu,
	    EVPROF_OPTS_GET(opts, cgroup, false) ? EVPROF__GROUP_CGROUP : 0,
	    EVPROF_OPTS_GET(opts, failed_member, NULL));
}

void evprof_group__free(struct evprof_group *g)
{
	if (!g)
		return;
	group_close_from(g, g->nr);
	free(g);
}

size_t evprof_group__nr(const struct evprof_group *g)
{
	return g ? g->nr : 0;
}

int evprof_group__fd(const struct evprof_group *g, size_t i)
{
	return g && i < g->nr ? g->m[i].fd : -1;
}

uint64_t evprof_group__id(const struct evprof_group *g, size_t i)
{
	return g && i < g->nr ? g->m[i].id : 0;
}

uint64_t evprof_group__read_format(const struct evprof_group *g)
{
	return g ? g->read_format : 0;
}

/*
 * Enable and disable do not use PERF_IOC_FLAG_GROUP. On Linux 6.18, once
 * the members of a group led by task-clock (its own PMU) were disabled
 * with the flag, enabling them again while the leader is on does not
 * schedule them: they read frozen until the task next switches. Members
 * only count while their leader does, so perf's way works everywhere:
 * members stay enabled and only the leader is toggled; on enable, members
 * (which a caller may have opened disabled) go first, then the leader
 * schedules the whole group in.
 */
int evprof_group__enable(struct evprof_group *g)
{
	if (!g)
		return -EINVAL;
	for (size_t i = g->nr; i-- > 0;)
		if (ioctl(g->m[i].fd, PERF_EVENT_IOC_ENABLE, 0) < 0)
			return -errno;
	return 0;
}

int evprof_group__disable(struct evprof_group *g)
{
	if (!g)
		return -EINVAL;
	if (ioctl(g->m[0].fd, PERF_EVENT_IOC_DISABLE, 0) < 0)
		return -errno;
	return 0;
}

int evprof_group__reset(struct evprof_group *g)
{
	if (!g)
		return -EINVAL;
	if (ioctl(g->m[0].fd, PERF_EVENT_IOC_RESET, PERF_IOC_FLAG_GROUP) < 0)
		return -errno;
	return 0;
}

int evprof_group__read(struct evprof_group *g, size_t i,
		       struct evprof_snapshot *snap)
{
	/* nr <= EVPROF_SNAPSHOT_MAX, each entry at most value, id, lost. */
	uint64_t buf[3 + 3 * EVPROF_SNAPSHOT_MAX];
	size_t want;
	ssize_t n;
	int ret;

	if (!g || i >= g->nr || !snap)
		return -EINVAL;
	want = evprof_read_size(g->read_format, (uint32_t)g->nr);
	if (want == 0 || want > sizeof(buf))
		return -EINVAL;
	do
		n = read(g->m[i].fd, buf, want);
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if ((size_t)n < want)
		return -EVPROF_ERR_TRUNCATED;
	ret = evprof_snapshot__parse(snap, buf, (size_t)n, g->read_format);
	return ret < 0 ? ret : 0;
}
