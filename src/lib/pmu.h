/* SPDX-License-Identifier: MIT */
/* Private helpers of PMU facts (pmu.c). */
#ifndef EVPROF_LIB_PMU_H
#define EVPROF_LIB_PMU_H

#include <stdbool.h>

#include "util.h"

/* Whether the dynamic PMU named name counts on the CPU's own counters. */
EVPROF_HIDDEN bool evprof__pmu_is_cpu(const char *name);

#endif /* EVPROF_LIB_PMU_H */
