/* SPDX-License-Identifier: MIT */
/*
 * Private helpers of PMU facts: names (pmu.c), the tables of counters
 * (pmu_facts.c), the trial open (pmu_trial.c), group fit (pmu_fit.c) and
 * the core PMU of each CPU on a hybrid machine (pmu_map.c).
 */
#ifndef EVPROF_LIB_PMU_H
#define EVPROF_LIB_PMU_H

#include <stdbool.h>
#include <stddef.h>

#include <evprof/pmu.h>
#include <evprof/read.h>

#include "host.h"
#include "base/base.h"

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

/*
 * Samples attr's counter alone on the calling thread, user space only,
 * over a spin of a few ms: *got samples came where *due were (its count
 * over the period); *due is 0 for an event too rare to tell. Returns 0 or
 * a negative errno (it does not open, no ring).
 */
EVPROF_HIDDEN int evprof__pmu_overflow_trial(const struct perf_event_attr *attr,
					     uint64_t *got, uint64_t *due);

/* The core PMUs a hybrid machine's recording opens groups on, at most. */
#define EVPROF__PMU_MAP_MAX 4

/*
 * Which core PMU counts on each CPU (sysfs <pmu>/cpus), for opening each
 * CPU's group with the PMU that owns the CPU, as perf does on a hybrid
 * machine. nr <= 1 (no or one core PMU): nothing is bound.
 */
struct evprof__pmu_map {
	struct evprof_core_pmu pmus[EVPROF__PMU_MAP_MAX];
	int *cpus[EVPROF__PMU_MAP_MAX]; /* each one's CPUs, ascending */
	int ncpus[EVPROF__PMU_MAP_MAX];
	size_t nr;
};

/*
 * Fills *m from the host's core PMUs (evprof_core_pmus()); on a machine
 * with more core PMUs than EVPROF__PMU_MAP_MAX the first ones. Returns 0
 * or -ENOMEM (m then empty); a PMU whose CPUs sysfs does not list is
 * left out of the map.
 */
EVPROF_HIDDEN int evprof__pmu_map_init(struct evprof__pmu_map *m);
/* Frees what m holds and empties it. */
EVPROF_HIDDEN void evprof__pmu_map_fini(struct evprof__pmu_map *m);

/*
 * Binds the generic hardware and cache events of attrs[0..nr) to the
 * core PMU that counts on cpu: its type goes into config bits 32-63 (as
 * evprof_event_spec__on_pmu()). Returns the index in m->pmus of that PMU,
 * or -1 (attrs untouched) on a machine that is not hybrid or for a CPU no
 * PMU lists.
 */
EVPROF_HIDDEN int evprof__pmu_map_bind(const struct evprof__pmu_map *m, int cpu,
				       struct perf_event_attr *attrs,
				       size_t nr);

#endif /* EVPROF_LIB_PMU_H */
