/* SPDX-License-Identifier: MIT */
/* Private helpers of groups of open fds (group.c) and of per-CPU sets. */
#ifndef EVPROF_LIB_GROUP_H
#define EVPROF_LIB_GROUP_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#include <evprof/event.h>

#include "base/base.h"

/*
 * evprof_group__open() with more knobs in flags: EVPROF__GROUP_DISABLED
 * leaves the leader disabled after the open whatever the caller's attr
 * says (per-CPU sets with deferred enable: the caller enables);
 * EVPROF__GROUP_CGROUP takes pid as a cgroup directory's fd. failed_member
 * may be NULL.
 */
#define EVPROF__GROUP_DISABLED 0x1u
#define EVPROF__GROUP_CGROUP   0x2u

EVPROF_HIDDEN struct evprof_group *
evprof__group_open(const struct perf_event_attr *attrs, size_t nr, pid_t pid,
		   int cpu, unsigned flags, int *failed_member);

/*
 * Adjusts attrs[0..nr), a copy of a set's attrs, for its group on cpu
 * (on a hybrid machine: the core PMU that owns the CPU).
 */
typedef void (*evprof__cpu_attrs_fn)(void *ctx, int cpu,
				     struct perf_event_attr *attrs, size_t nr);

/*
 * evprof_group_set__open() with each CPU's attrs adjusted by fn (NULL:
 * the same attrs on every CPU).
 */
EVPROF_HIDDEN struct evprof_group_set *
evprof__group_set_open(const struct perf_event_attr *attrs, size_t nr,
		       pid_t pid, const struct evprof_group_set_opts *opts,
		       evprof__cpu_attrs_fn fn, void *ctx);

#endif /* EVPROF_LIB_GROUP_H */
