// SPDX-License-Identifier: MIT
/* The real host's facts, and the switch tests use to substitute others. */
#include <stddef.h>
#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include "host.h"

static bool real_cpuid(void *ctx, uint32_t leaf, uint32_t subleaf,
		       struct evprof_cpuid *out)
{
	(void)ctx;
#if defined(__x86_64__) || defined(__i386__)
	unsigned int a, b, c, d;

	/* Checks leaf against the maximum of its range first. */
	if (!__get_cpuid_count(leaf, subleaf, &a, &b, &c, &d))
		return false;
	out->eax = a;
	out->ebx = b;
	out->ecx = c;
	out->edx = d;
	return true;
#else
	(void)leaf;
	(void)subleaf;
	(void)out;
	return false;
#endif
}

static const struct evprof_host real_host = {
    .pmu_root = "/sys/bus/event_source/devices",
    .cpu_root = EVPROF_HOST_CPU_ROOT,
    .tracefs =
	{
	    "/sys/kernel/tracing",
	    "/sys/kernel/debug/tracing", /* before 4.1, or not remounted */
	},
    .cpuid = real_cpuid,
    .cpuid_ctx = NULL,
    .nmi_watchdog = "/proc/sys/kernel/nmi_watchdog",
    .kconfig = {"/boot/config-", "/proc/config.gz"},
    .trial = NULL,
    .trial_ctx = NULL,
};

static const struct evprof_host *current_host = &real_host;
static unsigned long generation;

const struct evprof_host *evprof__host(void)
{
	return __atomic_load_n(&current_host, __ATOMIC_ACQUIRE);
}

void evprof__host_set(const struct evprof_host *host)
{
	__atomic_store_n(&current_host, host ? host : &real_host,
			 __ATOMIC_RELEASE);
	__atomic_add_fetch(&generation, 1, __ATOMIC_RELEASE);
}

unsigned long evprof__host_generation(void)
{
	return __atomic_load_n(&generation, __ATOMIC_ACQUIRE);
}
