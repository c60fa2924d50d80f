/* SPDX-License-Identifier: MIT */
/* Private helpers of the event module (groups, per-CPU sets, probes). */
#ifndef EVPROF_LIB_EVENT_INTERNAL_H
#define EVPROF_LIB_EVENT_INTERNAL_H

#include <stdbool.h>
#include <sys/types.h>

#include <evprof/event.h>

#include "util.h"

/* perf_event_open(2) with PERF_FLAG_FD_CLOEXEC; returns fd or -1 + errno. */
EVPROF_HIDDEN int evprof__perf_open(const struct perf_event_attr *attr,
				    pid_t pid, int cpu, int group_fd);

/*
 * evprof_group__open() with one more knob: leader_disabled leaves the
 * leader disabled after the open whatever the caller's attr says (per-CPU
 * sets with deferred enable: the caller enables). failed_member may be
 * NULL.
 */
EVPROF_HIDDEN struct evprof_group *
evprof__group_open(const struct perf_event_attr *attrs, size_t nr, pid_t pid,
		   int cpu, bool leader_disabled, int *failed_member);

#endif /* EVPROF_LIB_EVENT_INTERNAL_H */
