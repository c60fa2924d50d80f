// SPDX-License-Identifier: MIT
/*
 * PMU slots as the hardware has them, on recorded hosts
 * (tests/fixtures/hosts/, sources cited in each cpuid file): Intel fixed
 * counters, the NMI watchdog, AMD Zen 2-4, hybrid Intel, arm64, counter
 * constraints; and the trial open that decides, through the host seam
 * (refusal) and for real with software events (success).
 */
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <evprof/event.h>
#include <evprof/pmu.h>

#include "capture.h"
#include "cases.h"
#include "hosts.h"
#include "events/pmu.h"

/* One per host: the library caches PMU names per sysfs directory. */
static struct test_host intel, client, adl, zen2, zen3, zen4, arm64, nopmu;

static int setup(void **state)
{
	(void)state;
	unsetenv("EVPROF_MAX_GROUP_EVENTS");
	capture_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	test_host_real();
	evprof_set_print(NULL);
	return 0;
}

/* The recorded registers of leaf (subleaf 0), to vary them. */
static struct evprof_cpuid *leaf_of(struct test_host *t, uint32_t leaf)
{
	for (size_t i = 0; i < t->nr_leaves; i++)
		if (t->leaves[i].leaf == leaf && !t->leaves[i].subleaf)
			return &t->leaves[i].r;
	fail_msg("host %s has no leaf %#x", t->dir, leaf);
	return NULL;
}

#define MAX_SPECS 16

/* A group parsed from a comma separated list of event names. */
struct group {
	struct evprof_event_spec specs[MAX_SPECS];
	size_t nr;
};

static struct group group_of(const char *list)
{
	struct group g = {.nr = 0};
	char buf[512], *save = NULL;

	snprintf(buf, sizeof(buf), "%s", list);
	for (char *t = strtok_r(buf, ",", &save); t;
	     t = strtok_r(NULL, ",", &save)) {
		assert_true(g.nr < MAX_SPECS);
		if (evprof_event_spec__parse(&g.specs[g.nr++], t))
			fail_msg("cannot parse '%s'", t);
	}
	return g;
}

/* Validates list, expecting it to fit or to be refused. */
static void expect_fit(const char *list, bool fits)
{
	struct group g = group_of(list);
	int rc, slots = 0;

	for (size_t i = 0; i < g.nr; i++)
		slots += g.specs[i].hw_slot;
	msgs[0] = '\0';
	rc = evprof_group__validate(g.specs, g.nr);
	/* Fits: the number of hardware events, software ones take none. */
	if (fits && rc != slots)
		fail_msg("%s: %d, want it to fit (%s)", list, rc, msgs);
	if (!fits && rc != -EVPROF_ERR_GROUP_TOO_BIG)
		fail_msg("%s: %d, want it refused", list, rc);
}

static void expect_msg(const char *part)
{
	if (!strstr(msgs, part))
		fail_msg("message lacks '%s': %s", part, msgs);
}

/* The core PMUs of the host in use; fails unless there are want. */
static int pmus_of(struct evprof_core_pmu *pmus, int want)
{
	int n = evprof_core_pmus(pmus, 4);

	assert_int_equal(n, want);
	return n;
}

/* Four generic events that never use a fixed counter. */
#define GENERIC4 "branches,branch-misses,cache-references,cache-misses"

/*
 * Intel, watchdog off: {cycles,instructions,ref-cycles} go to fixed
 * counters 1, 0, 2 (CPUID.0AH EDX[4:0] = 3), 4 more on the 4 general
 * counters (EAX[15:8]): 7 events fit where the old count refused them.
 * Server (Skylake-SP) and client (Coffee Lake) alike.
 */
static void test_intel_fixed(void **state)
{
	struct test_host *hosts[] = {&intel, &client};
	const char *names[] = {"intel", "intel_client"};
	struct evprof_core_pmu p[4];

	(void)state;
	for (int i = 0; i < 2; i++) {
		test_host_use(hosts[i], names[i]);
		pmus_of(p, 1);
		assert_string_equal(p[0].name, "cpu");
		assert_int_equal(p[0].type, 4);
		assert_false(p[0].hybrid);
		assert_int_equal(p[0].general, 4);
		assert_string_equal(p[0].general_from, "cpuid leaf 0xa");
		assert_int_equal(p[0].fixed, EVPROF_FIXED_INSTRUCTIONS |
						 EVPROF_FIXED_CYCLES |
						 EVPROF_FIXED_REF_CYCLES);
		assert_string_equal(p[0].fixed_from, "cpuid leaf 0xa edx[4:0]");
		/* Not hybrid: sysfs has no cpus file, the PMU is every CPU's. */
		assert_int_equal(evprof_core_pmu__cpus(&p[0], NULL, 0),
				 -ENOENT);
		/* No nmi_watchdog file recorded: no hard-lockup detector. */
		assert_int_equal(p[0].watchdog, EVPROF_WATCHDOG_OFF);
		assert_int_equal(p[0].watchdog_fixed, 0);
		expect_fit("cycles,instructions,ref-cycles," GENERIC4, true);
		expect_fit("cycles,instructions,ref-cycles,cpu-clock," GENERIC4
			   ",LLC-load-misses",
			   false);
		expect_msg("does not fit cpu; it needs 5 general-purpose "
			   "counters (3 more events on fixed counters) and cpu "
			   "has 4 (cpuid leaf 0xa)");
		/* Their raw encodings match the fixed constraints too. */
		expect_fit("r3c,rc0,r300," GENERIC4, true);
	}
}

/* Fixed counters from the SDM's rules, by CPUID variant. */
static void test_intel_fixed_cpuid(void **state)
{
	struct evprof_core_pmu p[4];

	(void)state;
	test_host_use(&client, "intel_client");
	/* Version 5: ECX marks counters beyond EDX[4:0] (here only 0, 2). */
	leaf_of(&client, 0xa)->eax = 0x07300405;
	leaf_of(&client, 0xa)->edx = 0;
	leaf_of(&client, 0xa)->ecx = 0x5;
	pmus_of(p, 1);
	assert_int_equal(p[0].fixed,
			 EVPROF_FIXED_INSTRUCTIONS | EVPROF_FIXED_REF_CYCLES);
	expect_fit("cycles," GENERIC4, false); /* cycles needs a general one */
	expect_fit("instructions,ref-cycles," GENERIC4, true);
	/* EBX bit 0: core cycles absent, so no fixed counter for them. */
	leaf_of(&client, 0xa)->ecx = 0x7;
	leaf_of(&client, 0xa)->ebx = 1;
	pmus_of(p, 1);
	assert_int_equal(p[0].fixed,
			 EVPROF_FIXED_INSTRUCTIONS | EVPROF_FIXED_REF_CYCLES);
	/* Version 4 reporting no fixed counters on bare metal: 3 assumed. */
	leaf_of(&client, 0xa)->eax = 0x07300404;
	leaf_of(&client, 0xa)->ebx = 0;
	leaf_of(&client, 0xa)->ecx = 0;
	pmus_of(p, 1);
	assert_int_equal(p[0].fixed, 7);
	assert_non_null(strstr(p[0].fixed_from, "assumes 3"));
	/* ... but not under a hypervisor (CPUID.1 ECX bit 31). */
	leaf_of(&client, 1)->ecx |= 1u << 31;
	pmus_of(p, 1);
	assert_int_equal(p[0].fixed, 0);
	/* Version 1: no fixed counters at all. */
	leaf_of(&client, 0xa)->eax = 0x07300401;
	leaf_of(&client, 0xa)->edx = 0x603;
	pmus_of(p, 1);
	assert_int_equal(p[0].fixed, 0);
}

/*
 * The perf NMI watchdog's pinned cycles event holds Intel's fixed counter
 * 1, so a user's cycles takes a general counter; the buddy detector holds
 * none; kernel.nmi_watchdog = 0 holds none.
 */
static void test_intel_watchdog(void **state)
{
	const char *g7 = "cycles,instructions,ref-cycles," GENERIC4;
	struct evprof_core_pmu p[4];

	(void)state;
	test_host_use(&client, "intel_client");
	test_host_watchdog(&client, "on", "kconfig_perf");
	pmus_of(p, 1);
	assert_int_equal(p[0].watchdog, EVPROF_WATCHDOG_PERF);
	assert_int_equal(p[0].watchdog_fixed, EVPROF_FIXED_CYCLES);
	assert_int_equal(p[0].watchdog_general, 0);
	expect_fit(g7, false);
	expect_msg("it needs 5 general-purpose counters (2 more events on "
		   "fixed counters) and cpu has 4");
	expect_msg("the NMI watchdog holds the fixed cycles counter");
	expect_msg("sysctl kernel.nmi_watchdog=0");
	expect_fit("instructions,ref-cycles," GENERIC4, true);
	/* Refused without cycles: the watchdog is not the reason. */
	expect_fit("instructions,ref-cycles," GENERIC4 ",LLC-load-misses",
		   false);
	assert_null(strstr(msgs, "nmi_watchdog"));

	/* The buddy detector, from a gzip'd config as /proc/config.gz. */
	test_host_watchdog(&client, "on", "kconfig_buddy.gz");
	pmus_of(p, 1);
	assert_int_equal(p[0].watchdog, EVPROF_WATCHDOG_BUDDY);
	assert_int_equal(p[0].watchdog_fixed, 0);
	expect_fit(g7, true);

	test_host_watchdog(&client, "off", "kconfig_perf");
	pmus_of(p, 1);
	assert_int_equal(p[0].watchdog, EVPROF_WATCHDOG_OFF);
	assert_string_equal(p[0].watchdog_from, "kernel.nmi_watchdog = 0");
	expect_fit(g7, true);

	/* On, config unreadable: the perf detector, the x86 default. */
	test_host_watchdog(&client, "on", NULL);
	pmus_of(p, 1);
	assert_int_equal(p[0].watchdog, EVPROF_WATCHDOG_PERF);
	assert_non_null(strstr(p[0].watchdog_from, "assumed"));
}

/*
 * AMD Zen 2 and 3: 6 counters from PerfCtrExtCore (0x80000001 ECX bit 23);
 * Zen 4: 6 from PerfMonV2 (0x80000022 EBX[3:0]). No fixed counters for
 * these events; the perf watchdog takes a general counter.
 */
static void test_amd_zen(void **state)
{
	struct {
		struct test_host *t;
		const char *name, *from;
	} zen[] = {
	    {&zen2, "zen2", "cpuid leaf 0x80000001"},
	    {&zen3, "zen3", "cpuid leaf 0x80000001"},
	    {&zen4, "amd", "cpuid leaf 0x80000022"},
	};
	const char *g6 = "cycles,instructions," GENERIC4;
	struct evprof_core_pmu p[4];

	(void)state;
	for (size_t i = 0; i < sizeof(zen) / sizeof(zen[0]); i++) {
		test_host_use(zen[i].t, zen[i].name);
		pmus_of(p, 1);
		assert_int_equal(p[0].general, 6);
		assert_string_equal(p[0].general_from, zen[i].from);
		assert_int_equal(p[0].fixed, 0);
		expect_fit(g6, true);
		expect_fit("cycles,instructions,ref-cycles," GENERIC4, false);
		expect_msg("it needs 7 general-purpose counters (0 more events "
			   "on fixed counters) and cpu has 6");

		test_host_watchdog(zen[i].t, "on", "kconfig_perf");
		pmus_of(p, 1);
		assert_int_equal(p[0].watchdog_general, 1);
		assert_int_equal(p[0].watchdog_fixed, 0);
		expect_fit(g6, false);
		expect_msg("of which the NMI watchdog holds 1");
		expect_msg("sysctl kernel.nmi_watchdog=0");
		expect_fit("cycles,instructions,branches,branch-misses,"
			   "cache-misses",
			   true);
	}
}

/*
 * Alder Lake: cpu_core (8 general, 4 fixed) and cpu_atom (6 general, 3
 * fixed); a generic event counts on each, so a group is checked on both.
 */
static void test_hybrid(void **state)
{
	struct evprof_core_pmu p[4];
	struct evprof_event_spec s, on;
	struct group g;

	(void)state;
	test_host_use(&adl, "adl");
	test_host_watchdog(&adl, "off", NULL);
	pmus_of(p, 2);
	assert_string_equal(p[0].name, "cpu_core");
	assert_int_equal(p[0].type, 4);
	assert_int_equal(p[0].general, 8);
	assert_non_null(strstr(p[0].general_from, "hybrid rule"));
	assert_int_equal(p[0].fixed, 7);
	assert_string_equal(p[1].name, "cpu_atom");
	assert_int_equal(p[1].type, 10);
	assert_int_equal(p[1].general, 6);
	assert_string_equal(p[1].general_from, "cpuid leaf 0xa");
	assert_true(p[0].hybrid && p[1].hybrid);
	/* Their CPUs, from the recorded <pmu>/cpus. */
	{
		int cpus[32];

		assert_int_equal(evprof_core_pmu__cpus(&p[0], cpus, 32), 16);
		assert_int_equal(cpus[0], 0);
		assert_int_equal(cpus[15], 15);
		assert_int_equal(evprof_core_pmu__cpus(&p[1], cpus, 4), 8);
		assert_int_equal(cpus[0], 16);
		assert_int_equal(cpus[3], 19);
		assert_int_equal(evprof_core_pmu__cpus(&p[1], NULL, 0), 8);
	}

	expect_fit("cycles,instructions," GENERIC4 ",L1-dcache-load-misses,"
		   "dTLB-load-misses",
		   true);
	expect_fit("cycles,instructions," GENERIC4 ",L1-dcache-load-misses,"
		   "dTLB-load-misses,LLC-load-misses",
		   false);
	expect_msg("does not fit cpu_atom; it needs 7 general-purpose counters "
		   "(2 more events on fixed counters) and cpu_atom has 6");

	/* Bound to a core PMU: its type in config bits 32-63, as perf. */
	s = group_of("branches").specs[0];
	assert_true(evprof_event_spec__is_generic(&s));
	assert_int_equal(evprof_event_spec__on_pmu(&on, &s, &p[1]), 0);
	assert_true(on.attr.config ==
		    (10ULL << 32 | PERF_COUNT_HW_BRANCH_INSTRUCTIONS));
	assert_string_equal(on.name, "cpu_atom/branches/");
	assert_false(evprof_event_spec__is_generic(&on));
	s = group_of("page-faults").specs[0];
	assert_int_equal(evprof_event_spec__on_pmu(&on, &s, &p[1]), 0);
	assert_memory_equal(&on, &s, sizeof(s));
	assert_int_equal(evprof_event_spec__on_pmu(NULL, &s, &p[1]), -EINVAL);

	/* Seven events bound to cpu_core only fit its 8 counters. */
	g = group_of(GENERIC4 ",L1-dcache-load-misses,dTLB-load-misses,"
			      "LLC-load-misses");
	for (size_t i = 0; i < g.nr; i++) {
		s = g.specs[i];
		evprof_event_spec__on_pmu(&g.specs[i], &s, &p[0]);
	}
	assert_int_equal(evprof_group__validate(g.specs, g.nr), (int)g.nr);

	/* The recorded watchdog (perf detector) holds fixed 1 on both. */
	test_host_use(&adl, "adl");
	pmus_of(p, 2);
	assert_int_equal(p[0].watchdog_fixed, EVPROF_FIXED_CYCLES);
	assert_int_equal(p[1].watchdog_fixed, EVPROF_FIXED_CYCLES);
}

/*
 * arm64: the counter count is not in sysfs, so the trial decides; the
 * cycle counter is dedicated to cycles.
 */
static void test_arm64(void **state)
{
	const char *g9 = "cycles,instructions," GENERIC4
			 ",L1-dcache-load-misses,dTLB-load-misses,"
			 "LLC-load-misses";
	struct evprof_core_pmu p[4];
	unsigned int n;

	(void)state;
	test_host_use(&arm64, "arm64");
	pmus_of(p, 1);
	assert_string_equal(p[0].name, "armv8_pmuv3_0");
	assert_int_equal(p[0].type, 8);
	assert_int_equal(p[0].general, 0);
	assert_non_null(strstr(p[0].general_from, "not in sysfs"));
	assert_int_equal(p[0].fixed, EVPROF_FIXED_CYCLES);
	/* No trial possible, count unknown: the kernel decides at open. */
	expect_fit(g9, true);
	/* The trial refuses: refused, saying the count is unknown. */
	test_host_use(&arm64, "arm64");
	arm64.trial = EVPROF_TRIAL_NO_FIT;
	expect_fit(g9, false);
	expect_msg("cannot be scheduled on armv8_pmuv3_0: a trial open");
	expect_msg("how many armv8_pmuv3_0 has is unknown");
	/* Every trial runs: as many as PMUv3 allows, and the group fits. */
	test_host_use(&arm64, "arm64");
	arm64.trial = EVPROF_TRIAL_FITS;
	pmus_of(p, 1);
	assert_int_equal(p[0].general, 31);
	n = arm64.nr_trials;
	expect_fit(g9, true);
	assert_int_equal(arm64.nr_trials, n + 1);
	/*
	 * Trials that fit up to 6 members (QEMU's PMUv3 has 6 general
	 * counters and the cycle counter): 6 general ones, found by groups
	 * of inst_retired; 9 events need 8 of them.
	 */
	test_host_use(&arm64, "arm64");
	arm64.max_group = 6;
	pmus_of(p, 1);
	assert_int_equal(p[0].general, 6);
	assert_non_null(strstr(p[0].general_from, "trial"));
	assert_int_equal(arm64.nr_trials, 7);
	expect_fit(g9, false);
	expect_msg("it needs 8 general-purpose counters (1 more events on "
		   "fixed counters) and armv8_pmuv3_0 has 6 (trial");
	expect_msg("fixed counters: PMUv3 cycle counter (PMCCNTR_EL0)");
	/* The perf watchdog takes the cycle counter. */
	test_host_watchdog(&arm64, "on", "kconfig_perf");
	pmus_of(p, 1);
	assert_int_equal(p[0].watchdog_fixed, EVPROF_FIXED_CYCLES);
}

/*
 * Counter constraints: a precise cycles samples through PEBS on general
 * counters, not fixed counter 1; ref-cycles exists only on fixed counter
 * 2, so a second one never fits.
 */
static void test_constraints(void **state)
{
	(void)state;
	test_host_use(&intel, "intel");
	expect_fit("cycles:pp,instructions,ref-cycles,branches,branch-misses,"
		   "cache-references",
		   true);
	expect_fit("cycles:pp,instructions,ref-cycles," GENERIC4, false);
	expect_msg("1 precise (:p) events may use only some counters");
	expect_fit("ref-cycles,ref-cycles", false);
	expect_msg("ref-cycles counts only on fixed counter 2, which another "
		   "ref-cycles holds");
}

/*
 * The trial decides over the tables, both ways, and is asked once per
 * group shape.
 */
static void test_trial_decides(void **state)
{
	(void)state;
	test_host_use(&intel, "intel");
	intel.trial = EVPROF_TRIAL_NO_FIT;
	expect_fit("cycles,branches", false);
	expect_msg("group {cycles,branches} cannot be scheduled on cpu: a "
		   "trial open pinned on this thread never ran; it needs 1 "
		   "general-purpose counters (1 more events on fixed "
		   "counters) and cpu has 4");
	assert_int_equal(intel.nr_trials, 1);
	expect_fit("cycles,branches", false);
	assert_int_equal(intel.nr_trials, 1);
	/* Software members do not change the shape. */
	expect_fit("cycles,page-faults,branches", false);
	assert_int_equal(intel.nr_trials, 1);
	expect_fit("cycles,branch-misses", false);
	assert_int_equal(intel.nr_trials, 2);
	/* Ran: fits, whatever the tables say. */
	test_host_use(&intel, "intel");
	intel.trial = EVPROF_TRIAL_FITS;
	expect_fit("cycles,instructions,ref-cycles,cpu-clock," GENERIC4
		   ",LLC-load-misses",
		   true);
	/* Undecided: the tables decide. */
	test_host_use(&intel, "intel");
	intel.trial = EVPROF_TRIAL_UNDECIDED;
	expect_fit("cycles,instructions,ref-cycles,cpu-clock," GENERIC4
		   ",LLC-load-misses",
		   false);
}

/* No hardware PMU: nothing to place; opening says <not supported>. */
static void test_nopmu(void **state)
{
	struct evprof_core_pmu p[4];

	(void)state;
	test_host_use(&nopmu, "nopmu");
	assert_int_equal(evprof_core_pmus(p, 4), 0);
	assert_int_equal(evprof_core_pmus(NULL, 0), 0);
	assert_int_equal(evprof_core_pmus(NULL, 1), -EINVAL);
	expect_fit("cycles,instructions,ref-cycles,cpu-clock," GENERIC4
		   ",LLC-load-misses",
		   true);
}

/* What a trial's read means. */
static void test_trial_verdict(void **state)
{
	struct evprof_snapshot s = {.time_enabled = 0};

	(void)state;
	assert_int_equal(
	    evprof__pmu_trial_verdict(-EVPROF_ERR_TRUNCATED, &s, false),
	    EVPROF_TRIAL_NO_FIT);
	assert_int_equal(evprof__pmu_trial_verdict(-EBADF, &s, false),
			 EVPROF_TRIAL_CANNOT);
	s.time_enabled = 1000;
	s.time_running = 1000;
	assert_int_equal(evprof__pmu_trial_verdict(0, &s, false),
			 EVPROF_TRIAL_FITS);
	s.time_running = 0;
	assert_int_equal(evprof__pmu_trial_verdict(0, &s, false),
			 EVPROF_TRIAL_NO_FIT);
	assert_int_equal(evprof__pmu_trial_verdict(0, &s, true),
			 EVPROF_TRIAL_UNDECIDED);
	s.time_enabled = 0;
	assert_int_equal(evprof__pmu_trial_verdict(0, &s, false),
			 EVPROF_TRIAL_UNDECIDED);
}

/* The real trial on software events, which always schedule. */
static void test_trial_software(void **state)
{
	struct perf_event_attr a[3];
	const uint64_t sw[3] = {PERF_COUNT_SW_TASK_CLOCK,
				PERF_COUNT_SW_PAGE_FAULTS,
				PERF_COUNT_SW_CONTEXT_SWITCHES};
	enum evprof_trial t;
	int err = -1;

	(void)state;
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 3; i++) {
		a[i].size = sizeof(a[i]);
		a[i].type = PERF_TYPE_SOFTWARE;
		a[i].config = sw[i];
	}
	t = evprof__pmu_trial(NULL, a, 3, NULL, &err);
	if (t == EVPROF_TRIAL_CANNOT &&
	    (err == EACCES || err == EPERM || err == ENOSYS))
		skip_because("perf_event_open is forbidden here (seccomp?)");
	assert_int_equal(t, EVPROF_TRIAL_FITS);
	assert_int_equal(err, 0);
	/* A type no kernel has: cannot, with the open's errno. */
	a[1].type = 0x7ffffff0;
	assert_int_equal(evprof__pmu_trial(NULL, a, 3, NULL, &err),
			 EVPROF_TRIAL_CANNOT);
	assert_true(err == ENOENT || err == EINVAL);
}

/*
 * A hybrid core PMU's trial runs on a thread bound to the PMU's CPUs
 * (recorded: cpu_core 0-15, cpu_atom 16-23), or here where none of them is
 * online; software events schedule either way.
 */
static void test_trial_hybrid(void **state)
{
	struct perf_event_attr a[2];
	const char *pmus[] = {"cpu_core", "cpu_atom", "nosuch"};
	int err = -1;

	(void)state;
	memset(a, 0, sizeof(a));
	for (int i = 0; i < 2; i++) {
		a[i].size = sizeof(a[i]);
		a[i].type = PERF_TYPE_SOFTWARE;
		a[i].config =
		    i ? PERF_COUNT_SW_PAGE_FAULTS : PERF_COUNT_SW_TASK_CLOCK;
	}
	if (evprof__pmu_trial(NULL, a, 2, NULL, &err) != EVPROF_TRIAL_FITS)
		skip_because("software events do not open here (see "
			     "test_trial_software)");
	test_host_use(&adl, "adl");
	for (int i = 0; i < 3; i++) {
		assert_int_equal(evprof__pmu_trial(NULL, a, 2, pmus[i], &err),
				 EVPROF_TRIAL_FITS);
		assert_int_equal(err, 0);
	}
}

/* This machine's core PMUs are the core PMU directories sysfs lists. */
static void test_real_host(void **state)
{
	struct evprof_core_pmu p[8];
	DIR *d = opendir("/sys/bus/event_source/devices");
	struct dirent *e;
	int want = 0;

	(void)state;
	if (!d)
		skip_because("no /sys/bus/event_source/devices");
	while ((e = readdir(d)))
		want += !strcmp(e->d_name, "cpu") ||
			!strcmp(e->d_name, "cpu_core") ||
			!strcmp(e->d_name, "cpu_atom") ||
			!strncmp(e->d_name, "armv", 4);
	closedir(d);
	assert_int_equal(evprof_core_pmus(p, 8), want);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_intel_fixed, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_intel_fixed_cpuid, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_intel_watchdog, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_amd_zen, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_hybrid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_arm64, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_constraints, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trial_decides, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_nopmu, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_trial_verdict, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_trial_software, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_trial_hybrid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_real_host, setup, teardown),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
