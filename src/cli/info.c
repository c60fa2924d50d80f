// SPDX-License-Identifier: MIT
/* evprof info: what this kernel and machine allow, and what to do. */
#include <stdio.h>
#include <string.h>
#include <sys/utsname.h>

#include <evprof/evprof.h>

#include "cli.h"

const char cli_info_usage[] =
    "usage: evprof info\n"
    "\n"
    "Prints the kernel version, perf_event_paranoid, the PMU and its\n"
    "counters, each kernel feature probe's answer and why, and advice.\n";

void cli_print_features(void)
{
	printf("kernel features:\n");
	for (int f = 0; f < EVPROF_FEAT__COUNT; f++) {
		const struct evprof_probe_result *p = evprof_probe(f);

		printf("  %-22s %-3s  %s\n", p->name, p->yes ? "yes" : "no",
		       p->why);
	}
}

static void print_advice(void)
{
	const struct evprof_probe_result *hw = evprof_probe(EVPROF_FEAT_HW_PMU);
	const struct evprof_probe_result *isr =
	    evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ);
	const struct evprof_probe_result *ks =
	    evprof_probe(EVPROF_FEAT_KERNEL_SAMPLES);
	const struct evprof_probe_result *sw =
	    evprof_probe(EVPROF_FEAT_SYSTEM_WIDE);
	int paranoid = evprof_paranoid();
	int n = 0;

	printf("\nadvice:\n");
	if (!hw->yes) {
		printf(
		    "  - no hardware counters: record falls back to cpu-clock "
		    "sampling and software counters (page-faults, "
		    "context-switches, ...). On a VM, enable the virtual PMU "
		    "(e.g. QEMU/KVM '-cpu host', VMware 'virtualize CPU "
		    "performance counters') to get cycles/instructions.\n");
		n++;
	}
	if (!isr->yes) {
		printf("  - counters cannot be read per thread in inherited "
		       "sampling groups before Linux 6.12: record uses per-CPU "
		       "system-wide groups (--mode cpu), which need "
		       "perf_event_paranoid <= 0 or CAP_PERFMON.\n");
		n++;
	}
	if (!ks->yes || !sw->yes) {
		printf(
		    "  - profiling is restricted (perf_event_paranoid = %d): "
		    "run as root, grant CAP_PERFMON, or lower it with "
		    "'sysctl kernel.perf_event_paranoid=-1'.\n",
		    paranoid);
		n++;
	}
	if (!n)
		printf("  - nothing blocks profiling here.\n");
}

int cmd_info(int argc, char **argv)
{
	struct utsname u;
	const char *src;
	unsigned int counters;

	if (argc > 1 &&
	    (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(cli_info_usage, stdout);
		return 0;
	}
	if (argc > 1) {
		cli_err("info takes no arguments");
		return 2;
	}
	uname(&u);
	printf("kernel:               %s %s %s\n", u.sysname, u.release,
	       u.machine);
	printf("perf_event_paranoid:  %d\n", evprof_paranoid());
	counters = evprof_pmu_counters(&src);
	printf("hardware PMU:         %s\n",
	       evprof_probe(EVPROF_FEAT_HW_PMU)->yes ? "yes" : "no");
	printf("counters per group:   %u (from %s)\n", counters, src);
	printf("\n");
	cli_print_features();
	print_advice();
	return 0;
}
