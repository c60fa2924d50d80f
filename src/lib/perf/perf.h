/* SPDX-License-Identifier: MIT */
/*
 * What perf offers the folders above it, beside the public event, ring and
 * record API: perf_event_open(2) on one attr (attr.h), and
 * groups opened on a task or a CPU (group.h).
 */
#ifndef EVPROF_LIB_PERF_H
#define EVPROF_LIB_PERF_H

#include "attr.h"
#include "group.h"

#endif /* EVPROF_LIB_PERF_H */
