/* SPDX-License-Identifier: MIT */
/*
 * The host facts the event module reads: where sysfs lists the PMUs, where
 * tracefs is, and what CPUID answers. The real host by default; tests put
 * in recorded facts of other hosts (tests/fixtures/hosts/) so that what
 * they assert does not depend on the machine they run on.
 */
#ifndef EVPROF_LIB_HOST_H
#define EVPROF_LIB_HOST_H

#include <stdbool.h>
#include <stdint.h>

#include "util.h"

#define EVPROF_HOST_TRACEFS_MAX 2

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

struct evprof_host {
	/* sysfs PMU directory: <pmu>/type, <pmu>/format/, <pmu>/events/ */
	const char *pmu_root;
	/* tracefs mount points tried in order; NULL entries are skipped */
	const char *tracefs[EVPROF_HOST_TRACEFS_MAX];
	evprof_cpuid_fn cpuid;
	void *cpuid_ctx;
};

/* The host in use; never NULL. */
EVPROF_HIDDEN const struct evprof_host *evprof__host(void);

/*
 * Reads facts from host from now on (NULL: the real host again). host must
 * live until it is replaced. For tests: call it while no other thread
 * uses the library.
 */
EVPROF_HIDDEN void evprof__host_set(const struct evprof_host *host);

#endif /* EVPROF_LIB_HOST_H */
