/* SPDX-License-Identifier: MIT */
/*
 * Core PMUs as the hardware has them: general purpose and fixed counters,
 * what the kernel's hard-lockup detector holds, and where each number came
 * from. Hybrid machines (Intel cpu_core + cpu_atom, Arm big.LITTLE) have one
 * core PMU per core type; a generic hardware event counts on one of them
 * only unless it is opened once per core PMU, as perf does.
 */
#ifndef EVPROF_PMU_H
#define EVPROF_PMU_H

#include <stdbool.h>
#include <stdint.h>

#include <evprof/event.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Fixed counters that generic events can use (struct evprof_core_pmu). */
#define EVPROF_FIXED_INSTRUCTIONS (1u << 0) /* Intel fixed counter 0 */
#define EVPROF_FIXED_CYCLES	  (1u << 1) /* Intel fixed 1; Arm PMCCNTR */
#define EVPROF_FIXED_REF_CYCLES	  (1u << 2) /* Intel fixed counter 2 */

/* The kernel's hard-lockup detector, as far as it concerns counters. */
enum evprof_watchdog {
	EVPROF_WATCHDOG_OFF,   /* none, or kernel.nmi_watchdog = 0 */
	EVPROF_WATCHDOG_PERF,  /* perf NMI watchdog: a pinned cycles event */
	EVPROF_WATCHDOG_BUDDY, /* buddy (hrtimer) detector: no counter */
};

#define EVPROF_PMU_NAME_MAX 32

struct evprof_core_pmu {
	char name[EVPROF_PMU_NAME_MAX]; /* "cpu", "cpu_core", "armv8_pmuv3_0" */
	uint32_t type;			/* sysfs <name>/type */
	bool
	    hybrid; /* one of several core PMUs: see evprof_event_spec__on_pmu */
	/* General purpose counters per logical CPU; 0 when not known. */
	unsigned int general;
	/* Fixed counters generic events can use: EVPROF_FIXED_* bits. */
	unsigned int fixed;
	enum evprof_watchdog watchdog;
	unsigned int watchdog_general; /* general counters the watchdog holds */
	unsigned int watchdog_fixed;   /* EVPROF_FIXED_* bits it holds */
	/*
	 * Where each number came from, static strings: a CPUID leaf, a sysfs
	 * or /proc file, the kernel's driver rule, or "unknown".
	 */
	const char *general_from, *fixed_from, *watchdog_from;
};

/*
 * Fills pmus[] with the core PMUs of this machine from CPUID, sysfs and
 * the watchdog's state, the big cores' PMU first. Returns how many there
 * are (0: no hardware PMU; may exceed max: call again with a larger array)
 * or -errno. The tables behind it explain evprof_group__validate()'s
 * answers; a trial open of the group decides where one can be made.
 */
EVPROF_API int evprof_core_pmus(struct evprof_core_pmu *pmus, int max);

/*
 * Fills cpus[] with the CPUs core PMU pmu counts on (sysfs <name>/cpus, as
 * hybrid PMUs have it), ascending. Returns how many (may exceed max: call
 * again with a larger array), -ENOENT where sysfs does not say (a PMU of
 * every CPU), or -errno.
 */
EVPROF_API int evprof_core_pmu__cpus(const struct evprof_core_pmu *pmu,
				     int *cpus, int max);

/*
 * Whether spec is a generic hardware or cache event (PERF_TYPE_HARDWARE or
 * PERF_TYPE_HW_CACHE without a PMU type in config bits 32-63), which on a
 * hybrid machine counts only on the core type the kernel picks (the first
 * core PMU's) unless opened once per core PMU.
 */
EVPROF_API bool
evprof_event_spec__is_generic(const struct evprof_event_spec *spec);

/*
 * Copies spec to *out bound to core PMU pmu: a generic event gets the
 * PMU's type in config bits 32-63 (the kernel's extended type, Linux 5.13
 * for x86 hybrid) and a name "cpu_core/cycles/"; any other event is copied
 * unchanged. Returns 0, or -EINVAL for NULL arguments.
 */
EVPROF_API int evprof_event_spec__on_pmu(struct evprof_event_spec *out,
					 const struct evprof_event_spec *spec,
					 const struct evprof_core_pmu *pmu);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_PMU_H */
