/* SPDX-License-Identifier: MIT */
/* Private helpers of event specs (spec.c) and PMU facts (pmu.c). */
#ifndef EVPROF_LIB_SPEC_H
#define EVPROF_LIB_SPEC_H

#include <stdbool.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "util.h"

/*
 * Places value into attr as the sysfs format text describes it
 * ("config:0-7,32-35": the value's low 8 bits go to config bits 0-7, the
 * next 4 to bits 32-35). Returns 0, or -EVPROF_ERR_BAD_SPEC when the text
 * is malformed or the value has bits the format cannot hold (no message).
 */
EVPROF_HIDDEN int evprof__pmu_format_apply(struct perf_event_attr *attr,
					   const char *format, uint64_t value);

/* Whether the dynamic PMU named name counts on the CPU's own counters. */
EVPROF_HIDDEN bool evprof__pmu_is_cpu(const char *name);

#endif /* EVPROF_LIB_SPEC_H */
