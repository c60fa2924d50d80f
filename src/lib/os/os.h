/* SPDX-License-Identifier: MIT */
/*
 * What os offers the folders above it, beside the public launch, /proc and
 * cgroup readers (evprof/launch.h, evprof/proc.h, evprof/cgroup.h): a pidfd that polls readable
 * when a process exits (launch.h), the cgroup2 hierarchy's cgroups.
 */
#ifndef EVPROF_LIB_OS_H
#define EVPROF_LIB_OS_H

#include <stdint.h>

#include "launch.h"

/*
 * Calls cb for every cgroup of the cgroup2 hierarchy (the one whose ids
 * PERF_SAMPLE_CGROUP carries, whatever holds perf_event): its id (the
 * directory's inode number) and path from the root ("/", "/a/b"), parents
 * first, until cb returns non-zero. Returns cb's value, 0, -ENOENT (no
 * cgroup2 mounted) or -errno (cgroup.c).
 */
EVPROF_HIDDEN int evprof__cgroup2_walk(int (*cb)(uint64_t id, const char *path,
						 void *ctx),
				       void *ctx);

#endif /* EVPROF_LIB_OS_H */
