/* SPDX-License-Identifier: MIT */
/* Private helpers of one perf_event_attr (attr.c). */
#ifndef EVPROF_LIB_ATTR_H
#define EVPROF_LIB_ATTR_H

#include <sys/types.h>
#include <linux/perf_event.h>

#include "base/base.h"

/* perf_event_open(2) with PERF_FLAG_FD_CLOEXEC; returns fd or -1 + errno. */
EVPROF_HIDDEN int evprof__perf_open(const struct perf_event_attr *attr,
				    pid_t pid, int cpu, int group_fd,
				    unsigned long flags);

#endif /* EVPROF_LIB_ATTR_H */
