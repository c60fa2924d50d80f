/* SPDX-License-Identifier: MIT */
/*
 * What os offers the folders above it, beside the public launch, /proc and
 * cgroup readers (evprof/launch.h, evprof/proc.h, evprof/cgroup.h): a pidfd that polls readable
 * when a process exits (launch.h), the cgroups of a hierarchy.
 */
#ifndef EVPROF_LIB_OS_H
#define EVPROF_LIB_OS_H

#include <stdbool.h>
#include <stdint.h>

#include "launch.h"

/*
 * Calls cb for every cgroup of a hierarchy: with v2, cgroup2's (the ids
 * bpf_get_current_cgroup_id() gives), else the one holding the perf_event
 * controller (the ids PERF_SAMPLE_CGROUP and CGROUP records carry: a v1
 * hierarchy's where perf_event is bound to one). cb gets its id (the
 * directory's inode number) and path from the root ("/", "/a/b"), parents
 * first, until it returns non-zero. Returns cb's value, 0, -ENOENT (no
 * such hierarchy mounted) or -errno (cgroup.c).
 */
EVPROF_HIDDEN int evprof__cgroup_walk(
    bool v2, int (*cb)(uint64_t id, const char *path, void *ctx), void *ctx);

/*
 * Whether a cgroup2 mount here sees above this process's cgroup namespace
 * root (the node's hierarchy bound into a container), as the walk and
 * --cgroup then use.
 */
EVPROF_HIDDEN bool evprof__cgroup2_whole(void);

#endif /* EVPROF_LIB_OS_H */
