/* SPDX-License-Identifier: MIT */
/*
 * The host facts the event module reads: where sysfs lists the PMUs and
 * the online and possible CPUs, where tracefs is, what CPUID answers, the
 * hard-lockup detector's state, and the trial open that tells whether a
 * group of hardware events schedules. The real host by default; tests put
 * in recorded facts of other hosts (tests/fixtures/hosts/) or made-up CPU
 * lists so that what they assert does not depend on the machine they run
 * on.
 */
#ifndef EVPROF_LIB_HOST_H
#define EVPROF_LIB_HOST_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "base/base.h"

#define EVPROF_HOST_TRACEFS_MAX 2
#define EVPROF_HOST_KCONFIG_MAX 2
#define EVPROF_HOST_CPU_ROOT	"/sys/devices/system/cpu"

/* CPUID registers, in the order the instruction's outputs are named. */
struct evprof_cpuid {
	uint32_t eax, ebx, ecx, edx;
};

/*
 * Fills *out with CPUID leaf/subleaf. Returns false when the CPU has no
 * such leaf (above the maximum of its range, basic or 0x80000000) or no
 * CPUID at all.
 */
typedef bool (*evprof_cpuid_fn)(void *ctx, uint32_t leaf, uint32_t subleaf,
				struct evprof_cpuid *out);

/* What a trial open of a group pinned on the calling thread showed. */
enum evprof_trial {
	EVPROF_TRIAL_FITS,	/* it ran */
	EVPROF_TRIAL_NO_FIT,	/* the kernel could not schedule it */
	EVPROF_TRIAL_UNDECIDED, /* it never ran here (another core type) */
	EVPROF_TRIAL_CANNOT,	/* it did not open: no PMU, not allowed */
};

/*
 * Opens the nr attrs as one group pinned on the calling thread, runs it a
 * little and reads it. pmu: the core PMU of a hybrid machine the group is
 * for, which counts only on some CPUs (NULL where there is one core PMU).
 * *err gets the open's errno for EVPROF_TRIAL_CANNOT.
 */
typedef enum evprof_trial (*evprof_trial_fn)(
    void *ctx, const struct perf_event_attr *attrs, size_t nr, const char *pmu,
    int *err);

struct evprof_host {
	/* sysfs PMU directory: <pmu>/type, <pmu>/format/, <pmu>/events/ */
	const char *pmu_root;
	/*
	 * sysfs CPU directory: its online and possible lists ("0-3,8"); NULL:
	 * the running kernel's (EVPROF_HOST_CPU_ROOT)
	 */
	const char *cpu_root;
	/* tracefs mount points tried in order; NULL entries are skipped */
	const char *tracefs[EVPROF_HOST_TRACEFS_MAX];
	evprof_cpuid_fn cpuid;
	void *cpuid_ctx;
	/* kernel.nmi_watchdog; unreadable: no hard-lockup detector */
	const char *nmi_watchdog;
	/*
	 * Kernel config files tried in order, plain or gzip; a path ending in
	 * '-' gets the running kernel's release appended (/boot/config-).
	 */
	const char *kconfig[EVPROF_HOST_KCONFIG_MAX];
	/* NULL: the real trial open (pmu_trial.c) */
	evprof_trial_fn trial;
	void *trial_ctx;
};

/* The host in use; never NULL. */
EVPROF_HIDDEN const struct evprof_host *evprof__host(void);

/*
 * Reads facts from host from now on (NULL: the real host again). host must
 * live until it is replaced. For tests: call it while no other thread
 * uses the library.
 */
EVPROF_HIDDEN void evprof__host_set(const struct evprof_host *host);

/* Counts evprof__host_set() calls: what was learnt of an older host is stale. */
EVPROF_HIDDEN unsigned long evprof__host_generation(void);

#endif /* EVPROF_LIB_HOST_H */
