/* SPDX-License-Identifier: MIT */
/*
 * Private helpers of PMU facts: names (pmu.c), the tables of counters
 * (pmu_facts.c), the trial open (pmu_trial.c) and group fit (pmu_fit.c).
 */
#ifndef EVPROF_LIB_PMU_H
#define EVPROF_LIB_PMU_H

#include <stdbool.h>
#include <stddef.h>

#include <evprof/pmu.h>
#include <evprof/read.h>

#include "host.h"
#include "util.h"

/* Whether the dynamic PMU named name counts on the CPU's own counters. */
EVPROF_HIDDEN bool evprof__pmu_is_cpu(const char *name);

/*
 * General purpose counters CPUID tells of (Intel leaf 0xa, AMD leaves
 * 0x80000022 and 0x80000001), 0 when it tells nothing; *source then
 * untouched.
 */
EVPROF_HIDDEN unsigned int evprof__pmu_cpuid_counters(const char **source);

/*
 * The real trial open (evprof_trial_fn, see host.h). For a hybrid core
 * PMU it runs on a thread of its own bound to the PMU's CPUs (sysfs
 * <pmu>/cpus), so that the group meets its PMU.
 */
EVPROF_HIDDEN enum evprof_trial
evprof__pmu_trial(void *ctx, const struct perf_event_attr *attrs, size_t nr,
		  const char *pmu, int *err);

/*
 * What a trial's read says: rc from evprof_group__read() and its snapshot.
 * A pinned group the kernel cannot schedule goes into error state, and
 * reads 0 bytes (-EVPROF_ERR_TRUNCATED) or, on older kernels, zero running
 * time.
 */
EVPROF_HIDDEN enum evprof_trial
evprof__pmu_trial_verdict(int rc, const struct evprof_snapshot *snap,
			  bool hybrid);

/*
 * The host's trial for the group, cached per group shape (each member's
 * type, config*, precise_ip) until the host changes.
 */
EVPROF_HIDDEN enum evprof_trial
evprof__pmu_trial_cached(const struct perf_event_attr *attrs, size_t nr,
			 const char *pmu, int *err);

/* Drops the cached trials: the host changed (evprof__host_set()). */
EVPROF_HIDDEN void evprof__pmu_trial_forget(void);

#endif /* EVPROF_LIB_PMU_H */
