// SPDX-License-Identifier: MIT
/* evprof info: what this kernel and machine allow, and what to do. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>

#include <evprof/evprof.h>

#include "cli.h"

const char cli_info_usage[] =
    "usage: evprof info\n"
    "\n"
    "Prints the kernel version, perf_event_paranoid, the cgroup hierarchy\n"
    "--cgroup paths are resolved in, whose namespaces evprof runs in (the\n"
    "host's, or a container's), whether tracefs is readable, each core PMU\n"
    "with its general and fixed counters, what the NMI watchdog holds and\n"
    "where each number came from, what decides whether a group fits, where\n"
    "inflated debug files and the kernel's symbols are kept and what they\n"
    "take, each kernel feature probe's answer and why, and advice: inside a\n"
    "container, what it lacks and the option that gives it back.\n";

/* The hierarchy --cgroup paths are resolved in. */
static void print_cgroups(void)
{
	struct evprof_cgroup_fs fs;
	int err = evprof_cgroup_fs__find(&fs);

	if (err)
		printf("cgroups:              none for perf events (%s)\n",
		       err == -ENOENT ? "no cgroup2 and no cgroup v1 mount "
					"with the perf_event controller"
				      : strerror(-err));
	else
		printf("cgroups:              v%d at %s (--cgroup paths are "
		       "resolved there)\n",
		       fs.version, fs.mount);
}

/* Whose namespaces and /proc evprof has: the host's, or a container's. */
static void print_namespaces(void)
{
	struct evprof_confinement c = {.sz = sizeof(c)};
	int err = evprof_proc__confinement(&c);

	if (err)
		printf(
		    "namespaces:           unknown (/proc/self/ns/pid: %s)\n",
		    strerror(-err));
	else if (!c.own_pid_ns && !c.own_cgroup_ns && !c.foreign_proc)
		printf("namespaces:           the host's pid and cgroup "
		       "namespaces, and their /proc\n");
	else
		printf("namespaces:           a container's (%s%s%s%s%s)\n",
		       c.own_pid_ns ? "a pid namespace of its own" : "",
		       c.own_pid_ns && c.own_cgroup_ns ? ", " : "",
		       c.own_cgroup_ns ? "a cgroup namespace of its own" : "",
		       c.foreign_proc && (c.own_pid_ns || c.own_cgroup_ns)
			   ? ", "
			   : "",
		       c.foreign_proc ? "/proc of another pid namespace" : "");
}

/* Whether tracefs has what record asks of it. */
static bool print_tracefs(void)
{
	evprof_print_fn_t said = evprof_set_print(NULL); /* the list of names */
	struct evprof_event_spec spec;
	int err = evprof_event_spec__parse(&spec, "sched:sched_process_exit");

	evprof_set_print(said);
	if (err)
		printf("tracefs:              not readable (sched:"
		       "sched_process_exit: %s; looked for under "
		       "/sys/kernel/tracing and /sys/kernel/debug/tracing)\n",
		       evprof_strerror(err));
	else
		printf("tracefs:              readable (task exits are "
		       "sampled; tracepoint events)\n");
	return !err;
}

/*
 * Where record and import keep inflated debug files, the copy of the
 * kernel's symbols and container images, and their size.
 */
static void print_debug_cache(void)
{
	const char *dir = cli_debug_cache_dir();
	unsigned long long bytes = 0, n = 0, kbytes = 0, ibytes = 0, ni = 0;
	struct dirent *de;
	DIR *d;

	if (!dir) {
		printf(
		    "debug cache:          off (EVPROF_DEBUG_CACHE is empty)\n");
		return;
	}
	d = opendir(dir);
	while (d && (de = readdir(d))) {
		size_t len = strlen(de->d_name);
		struct stat st;

		bool dbg = len > 6 && !strcmp(de->d_name + len - 6, ".debug");
		bool ksyms = !strncmp(de->d_name, "kallsyms-", 9);
		bool image = len > 4 && !strcmp(de->d_name + len - 4, ".elf");

		if ((!dbg && !ksyms && !image) ||
		    fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) ||
		    !S_ISREG(st.st_mode))
			continue;
		if (ksyms) {
			kbytes += (unsigned long long)st.st_size;
		} else if (image) {
			ni++;
			ibytes += (unsigned long long)st.st_size;
		} else {
			n++;
			bytes += (unsigned long long)st.st_size;
		}
	}
	if (d)
		closedir(d);
	printf("debug cache:          %s (%llu files, %.1f MB", dir, n,
	       (double)bytes / 1e6);
	if (kbytes)
		printf("; kernel symbol tables, %.1f MB", (double)kbytes / 1e6);
	if (ni)
		printf("; %llu container images, %.1f MB", ni,
		       (double)ibytes / 1e6);
	printf(")\n");
}

void cli_print_features(void)
{
	printf("kernel features:\n");
	for (int f = 0; f < EVPROF_FEAT__COUNT; f++) {
		const struct evprof_probe_result *p = evprof_probe(f);

		printf("  %-22s %-3s  %s\n", p->name, p->yes ? "yes" : "no",
		       p->why);
	}
}

/* Which recording engines --engine can take here, and why. */
static void print_engines(void)
{
	char why[256];
	bool bpf = evprof_recorder__engine_available(EVPROF_RECORDER_ENGINE_BPF,
						     why, sizeof(why));

	printf("\nengines:\n");
	printf("  %-22s %-3s  %s\n", "ring", "yes",
	       "every sample copied to user space (the default)");
	printf("  %-22s %-3s  %s\n", "bpf", bpf ? "yes" : "no", why);
}

static void print_advice(bool tracefs)
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
	n += cli_say_confinement(stdout, "  - ", true, ".");
	if (!tracefs && ++n)
		printf("  - without tracefs, task exits are not sampled (a "
		       "short task's last counts stay on its last sample) and "
		       "-e sched:... cannot open: mount it (mount -t tracefs "
		       "nodev /sys/kernel/tracing; in a container, bind the "
		       "host's /sys/kernel/tracing).\n");
	if (!n)
		printf("  - nothing blocks profiling here.\n");
}

/* "instructions, cycles, ref-cycles" for EVPROF_FIXED_* bits. */
static const char *fixed_names(unsigned int mask, char *buf, size_t len)
{
	static const char *const names[] = {"instructions", "cycles",
					    "ref-cycles"};
	size_t off = 0;

	buf[0] = '\0';
	for (unsigned int i = 0; i < 3; i++)
		if (mask & 1u << i)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						off ? ", " : "", names[i]);
	return off ? buf : "none";
}

static const char *watchdog_holds(const struct evprof_core_pmu *p, char *buf,
				  size_t len)
{
	if (p->watchdog == EVPROF_WATCHDOG_OFF)
		return "off, holds no counter";
	if (p->watchdog == EVPROF_WATCHDOG_BUDDY)
		return "buddy detector, holds no counter";
	if (p->watchdog_fixed)
		snprintf(buf, len,
			 "perf detector, holds the fixed cycles counter "
			 "(user cycles take a general one; free it with "
			 "'sysctl kernel.nmi_watchdog=0')");
	else
		snprintf(buf, len,
			 "perf detector, holds %u general counter (free it "
			 "with 'sysctl kernel.nmi_watchdog=0')",
			 p->watchdog_general);
	return buf;
}

/* Per core PMU its counters and their sources; which path decides. */
static void print_pmus(void)
{
	const struct evprof_probe_result *hw = evprof_probe(EVPROF_FEAT_HW_PMU);
	struct evprof_core_pmu pmus[8];
	const char *env = getenv("EVPROF_MAX_GROUP_EVENTS");
	int n = evprof_core_pmus(pmus, 8);
	char buf[256];

	if (n <= 0) {
		printf("hardware PMU:         none: sysfs lists no core PMU "
		       "(cpu, cpu_core, cpu_atom, armv*) and %s\n",
		       hw->why);
	} else {
		printf("hardware PMU:         %d core PMU%s%s\n", n,
		       n > 1 ? "s" : "",
		       n > 1 ? " (hybrid: generic events open on each)" : "");
	}
	for (int i = 0; i < n && i < 8; i++) {
		const struct evprof_core_pmu *p = &pmus[i];

		printf("  %s (type %u):\n", p->name, p->type);
		if (p->general)
			printf("    general counters: %u (from %s)\n",
			       p->general, p->general_from);
		else
			printf("    general counters: %s\n", p->general_from);
		printf("    fixed counters:   %s (from %s)\n",
		       fixed_names(p->fixed, buf, sizeof(buf)), p->fixed_from);
		printf("    NMI watchdog:     %s\n",
		       watchdog_holds(p, buf, sizeof(buf)));
		printf("                      (from %s)\n", p->watchdog_from);
	}
	if (env)
		printf("group fit:            EVPROF_MAX_GROUP_EVENTS=%.32s "
		       "decides (it overrides the trial and the tables)\n",
		       env);
	else if (hw->yes)
		printf("group fit:            decided by a trial open of each "
		       "group pinned on this thread; the counts above explain "
		       "refusals\n");
	else if (n > 0)
		printf("group fit:            decided by the counts above (a "
		       "trial open cannot be made: %s)\n",
		       hw->why);
	else
		printf("group fit:            nothing to check: without a "
		       "hardware PMU, hardware events are <not supported>\n");
}

int cmd_info(int argc, char **argv)
{
	struct utsname u;
	bool tracefs;

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
	print_cgroups();
	print_namespaces();
	tracefs = print_tracefs();
	print_debug_cache();
	print_pmus();
	printf("\n");
	cli_print_features();
	print_engines();
	print_advice(tracefs);
	return 0;
}
