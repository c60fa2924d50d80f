// SPDX-License-Identifier: MIT
/*
 * Event specs: every kind of name against uapi values worked out by hand,
 * modifiers, sysfs PMUs, tracepoints and counter counts of recorded Intel,
 * AMD and PMU-less hosts (tests/fixtures/hosts) against what the kernel
 * and the vendors document, the live host's own PMUs and tracepoint ids
 * read by the test itself, libpfm4 names against libpfm4's own answer,
 * errors and their messages, and event lists with groups.
 */
#define _GNU_SOURCE /* unshare */
#include <dirent.h>
#include <errno.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>
#include <cmocka.h>

#include <evprof/event.h>
#ifdef EVPROF_HAVE_LIBPFM
/* After <linux/perf_event.h>: libpfm4 then skips its own copy of it. */
#include <perfmon/pfmlib_perf_event.h>
#endif

#include "capture.h"
#include "cases.h"
#include "hosts.h"
#include "events/spec_sysfs.h"

#define PMUS "/sys/bus/event_source/devices"

/* ---- message capture ----------------------------------------------------- */

static int setup(void **state)
{
	(void)state;
	capture_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	test_host_real();
	unsetenv("EVPROF_MAX_GROUP_EVENTS");
	evprof_set_print(NULL);
	return 0;
}

static struct evprof_event_spec parse_ok(const char *s)
{
	struct evprof_event_spec spec;
	int err = evprof_event_spec__parse(&spec, s);

	if (err)
		fail_msg("parse '%s': %d (%s) %s", s, err, evprof_strerror(err),
			 msgs);
	assert_string_equal(spec.name, s);
	assert_int_equal(spec.attr.size, sizeof(struct perf_event_attr));
	return spec;
}

static void expect(const char *s, uint32_t type, uint64_t config, bool slot)
{
	struct evprof_event_spec spec = parse_ok(s);

	if (spec.attr.type != type || spec.attr.config != config)
		fail_msg("'%s': type %u config %#llx, want %u %#llx", s,
			 spec.attr.type, (unsigned long long)spec.attr.config,
			 type, (unsigned long long)config);
	assert_int_equal(spec.hw_slot, slot);
	assert_false(spec.attr.exclude_user || spec.attr.exclude_kernel ||
		     spec.attr.exclude_hv);
	assert_int_equal(spec.attr.precise_ip, 0);
}

static void expect_err(const char *s, int want)
{
	struct evprof_event_spec spec;
	int err = evprof_event_spec__parse(&spec, s);

	if (err != want)
		fail_msg("parse '%s': %d, want %d (%s)", s, err, want, msgs);
}

/* Reads a small sysfs/tracefs file; false when it cannot. */
static bool read_text(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return false;
	n = fread(buf, 1, len - 1, f);
	fclose(f);
	buf[n] = '\0';
	while (n && buf[n - 1] == '\n')
		buf[--n] = '\0';
	return true;
}

/* ---- kinds -----------------------------------------------------------------
 */

static void test_hardware(void **state)
{
	(void)state;
	/* enum perf_hw_id */
	expect("cycles", 0, 0, true);
	expect("cpu-cycles", 0, 0, true);
	expect("instructions", 0, 1, true);
	expect("cache-references", 0, 2, true);
	expect("cache-misses", 0, 3, true);
	expect("branches", 0, 4, true);
	expect("branch-instructions", 0, 4, true);
	expect("branch-misses", 0, 5, true);
	expect("bus-cycles", 0, 6, true);
	expect("stalled-cycles-frontend", 0, 7, true);
	expect("idle-cycles-frontend", 0, 7, true);
	expect("stalled-cycles-backend", 0, 8, true);
	expect("idle-cycles-backend", 0, 8, true);
	expect("ref-cycles", 0, 9, true);
}

static void test_software(void **state)
{
	(void)state;
	/* enum perf_sw_ids */
	expect("cpu-clock", 1, 0, false);
	expect("task-clock", 1, 1, false);
	expect("page-faults", 1, 2, false);
	expect("faults", 1, 2, false);
	expect("context-switches", 1, 3, false);
	expect("cs", 1, 3, false);
	expect("cpu-migrations", 1, 4, false);
	expect("migrations", 1, 4, false);
	expect("minor-faults", 1, 5, false);
	expect("major-faults", 1, 6, false);
	expect("alignment-faults", 1, 7, false);
	expect("emulation-faults", 1, 8, false);
	expect("dummy", 1, 9, false);
	expect("bpf-output", 1, 10, false);
	expect("cgroup-switches", 1, 11, false);
}

static void test_cache(void **state)
{
	(void)state;
	/* id | op << 8 | result << 16; L1D 0 L1I 1 LL 2 DTLB 3 ITLB 4 BPU 5
	 * NODE 6; READ 0 WRITE 1 PREFETCH 2; ACCESS 0 MISS 1. */
	expect("L1-dcache-load-misses", 3, 0 | 0 << 8 | 1 << 16, true);
	expect("L1-dcache-loads", 3, 0, true);
	expect("L1-dcache-stores", 3, 0 | 1 << 8, true);
	expect("L1-icache-load-misses", 3, 1 | 0 << 8 | 1 << 16, true);
	expect("L1-icache-prefetches", 3, 1 | 2 << 8, true);
	expect("LLC-loads", 3, 2, true);
	expect("LLC-load-misses", 3, 2 | 1 << 16, true);
	expect("LLC-store-misses", 3, 2 | 1 << 8 | 1 << 16, true);
	expect("LLC-prefetch-miss", 3, 2 | 2 << 8 | 1 << 16, true);
	expect("dTLB-load-misses", 3, 3 | 1 << 16, true);
	expect("dTLB-store-misses", 3, 3 | 1 << 8 | 1 << 16, true);
	expect("iTLB-load-misses", 3, 4 | 1 << 16, true);
	expect("branch-loads", 3, 5, true);
	expect("branch-load-misses", 3, 5 | 1 << 16, true);
	expect("bpu-loads", 3, 5, true);
	expect("node-loads", 3, 6, true);
	expect("node-store-misses", 3, 6 | 1 << 8 | 1 << 16, true);
	expect("l1d-load-miss", 3, 0 | 1 << 16, true);
	expect("L1-dcache-load", 3, 0, true);
	/* Not cache events: */
	expect_err("LLC", -EVPROF_ERR_UNKNOWN_EVENT);
	expect_err("LLC-bogus-misses", -EVPROF_ERR_UNKNOWN_EVENT);
	expect_err("LLC-load-hits", -EVPROF_ERR_UNKNOWN_EVENT);
}

static void test_raw(void **state)
{
	(void)state;
	expect("r1a8", 4, 0x1a8, true);
	expect("rC0", 4, 0xc0, true);
	expect("rffffffffffffffff", 4, UINT64_MAX, true);
	expect_err("r1ffffffffffffffff", -EVPROF_ERR_BAD_SPEC);
	expect_err("r", -EVPROF_ERR_UNKNOWN_EVENT);
	expect_err("r12g", -EVPROF_ERR_UNKNOWN_EVENT);
}

static void test_modifiers(void **state)
{
	struct evprof_event_spec s;

	(void)state;
	s = parse_ok("cycles:u");
	assert_false(s.attr.exclude_user);
	assert_true(s.attr.exclude_kernel);
	assert_true(s.attr.exclude_hv);
	s = parse_ok("cycles:k");
	assert_true(s.attr.exclude_user);
	assert_false(s.attr.exclude_kernel);
	assert_true(s.attr.exclude_hv);
	s = parse_ok("cycles:h");
	assert_true(s.attr.exclude_user);
	assert_true(s.attr.exclude_kernel);
	assert_false(s.attr.exclude_hv);
	/* As perf: naming levels excludes the unnamed one (hv) only. */
	s = parse_ok("instructions:uk");
	assert_false(s.attr.exclude_user);
	assert_false(s.attr.exclude_kernel);
	assert_true(s.attr.exclude_hv);
	s = parse_ok("cycles:ukh");
	assert_false(s.attr.exclude_user || s.attr.exclude_kernel ||
		     s.attr.exclude_hv);
	s = parse_ok("cycles:p");
	assert_int_equal(s.attr.precise_ip, 1);
	assert_false(s.attr.exclude_kernel);
	s = parse_ok("cycles:pp");
	assert_int_equal(s.attr.precise_ip, 2);
	s = parse_ok("cycles:ppp");
	assert_int_equal(s.attr.precise_ip, 3);
	s = parse_ok("cpu-clock:upp");
	assert_int_equal(s.attr.type, 1);
	assert_int_equal(s.attr.precise_ip, 2);
	assert_true(s.attr.exclude_kernel);
	s = parse_ok("L1-dcache-load-misses:k");
	assert_int_equal(s.attr.config, 1 << 16);
	assert_true(s.attr.exclude_user);
	s = parse_ok("r1a8:u");
	assert_int_equal(s.attr.config, 0x1a8);
	assert_true(s.attr.exclude_kernel);

	expect_err("cycles:pppp", -EVPROF_ERR_BAD_SPEC);
	msgs[0] = '\0';
	expect_err("cycles:x", -EVPROF_ERR_BAD_SPEC);
	assert_non_null(strstr(msgs, "'x'"));
	expect_err("cycles:uS", -EVPROF_ERR_BAD_SPEC);
	expect_err("cycles:", -EVPROF_ERR_BAD_SPEC);
	expect_err("task-clock:G", -EVPROF_ERR_BAD_SPEC);
}

static void test_format_apply(void **state)
{
	struct perf_event_attr a;

	(void)state;
	memset(&a, 0, sizeof(a));
	/* 0xabc: low 8 bits 0xbc to 0-7, next 4 bits 0xa to 32-35. */
	assert_int_equal(
	    evprof__pmu_format_apply(&a, "config:0-7,32-35\n", 0xabc), 0);
	assert_int_equal(a.config, 0xbcULL | 0xaULL << 32);
	assert_int_equal(
	    evprof__pmu_format_apply(&a, "config:0-7,32-35", 0x1abc),
	    -EVPROF_ERR_BAD_SPEC); /* 13 bits into 12 */
	assert_int_equal(evprof__pmu_format_apply(&a, "config1:3", 1), 0);
	assert_int_equal(a.config1, 8);
	assert_int_equal(evprof__pmu_format_apply(&a, "config1:3", 2),
			 -EVPROF_ERR_BAD_SPEC);
	assert_int_equal(
	    evprof__pmu_format_apply(&a, "config2:0-63", UINT64_MAX), 0);
	assert_int_equal(a.config2, UINT64_MAX);
	/* Rewriting a field replaces its bits, keeps the others. */
	assert_int_equal(evprof__pmu_format_apply(&a, "config:8-15", 0x12), 0);
	assert_int_equal(a.config, 0xbcULL | 0x12ULL << 8 | 0xaULL << 32);
	assert_int_equal(evprof__pmu_format_apply(&a, "config:0-7", 0x34), 0);
	assert_int_equal(a.config, 0x34ULL | 0x12ULL << 8 | 0xaULL << 32);
	assert_int_equal(evprof__pmu_format_apply(&a, "config:5-4", 0),
			 -EVPROF_ERR_BAD_SPEC);
	assert_int_equal(evprof__pmu_format_apply(&a, "config:0-64", 0),
			 -EVPROF_ERR_BAD_SPEC);
	assert_int_equal(evprof__pmu_format_apply(&a, "config3:0-7", 0),
			 -EVPROF_ERR_BAD_SPEC);
	assert_int_equal(evprof__pmu_format_apply(&a, "config", 0),
			 -EVPROF_ERR_BAD_SPEC);
	assert_int_equal(evprof__pmu_format_apply(&a, "config:1-", 0),
			 -EVPROF_ERR_BAD_SPEC);
}

static bool pmu_type(const char *pmu, uint32_t *type)
{
	char path[256], buf[32];

	snprintf(path, sizeof(path), PMUS "/%s/type", pmu);
	if (!read_text(path, buf, sizeof(buf)))
		return false;
	*type = (uint32_t)strtoul(buf, NULL, 10);
	return true;
}

static void test_pmu_software(void **state)
{
	struct evprof_event_spec s;
	uint32_t type;

	(void)state;
	if (!pmu_type("software", &type))
		skip_because("no software PMU in sysfs");
	assert_int_equal(type, PERF_TYPE_SOFTWARE);
	expect("software/config=2/", PERF_TYPE_SOFTWARE, 2, false);
	expect("software/config=0x3,config1=7/", PERF_TYPE_SOFTWARE, 3, false);
	s = parse_ok("software/config=2/:u");
	assert_true(s.attr.exclude_kernel);
	expect_err("software/config=1", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/config=1/x", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/config=1/:q", -EVPROF_ERR_BAD_SPEC);
	expect_err("software//", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/config=1,,config1=2/", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/config=zz/", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/config=1/config1=2/", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/bogus=1/", -EVPROF_ERR_BAD_SPEC);
	expect_err("../software/config=1/", -EVPROF_ERR_BAD_SPEC);
	expect_err("software/../type/", -EVPROF_ERR_BAD_SPEC);
	msgs[0] = '\0';
	expect_err("nosuchpmu/config=1/", -EVPROF_ERR_UNKNOWN_EVENT);
	assert_non_null(strstr(msgs, PMUS "/nosuchpmu/type"));
}

/* s parsed; its name must read name (sampling terms dropped). */
static struct evprof_event_spec parse_named(const char *s, const char *name)
{
	struct evprof_event_spec spec;
	int err = evprof_event_spec__parse(&spec, s);

	if (err)
		fail_msg("parse '%s': %d %s", s, err, msgs);
	assert_string_equal(spec.name, name);
	return spec;
}

/* perf's period= and freq= terms, after a PMU or after a name. */
static void test_sample_terms(void **state)
{
	struct evprof_event_spec s;

	(void)state;
	s = parse_named("page-faults/period=64/", "page-faults");
	assert_int_equal(s.attr.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(s.attr.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(s.attr.sample_period, 64);
	assert_false(s.attr.freq);
	s = parse_named("instructions/freq=4000/:u", "instructions:u");
	assert_int_equal(s.attr.config, PERF_COUNT_HW_INSTRUCTIONS);
	assert_true(s.attr.freq);
	assert_int_equal(s.attr.sample_freq, 4000);
	assert_true(s.attr.exclude_kernel);
	s = parse_named("context-switches/freq=10,period=0x10/",
			"context-switches");
	assert_false(s.attr.freq); /* the last term wins, as in perf */
	assert_int_equal(s.attr.sample_period, 16);
	s = parse_ok("page-faults");
	assert_int_equal(s.attr.sample_period, 0);
	assert_false(s.attr.freq);
	expect_err("page-faults/period=0/", -EVPROF_ERR_BAD_SPEC);
	expect_err("page-faults/umask=1/", -EVPROF_ERR_BAD_SPEC);
	expect_err("page-faults/period/", -EVPROF_ERR_BAD_SPEC);
	expect_err("page-faults/period=x/", -EVPROF_ERR_BAD_SPEC);
	expect_err("no-such-event/period=1/", -EVPROF_ERR_UNKNOWN_EVENT);
}

static void test_pmu_sample_terms(void **state)
{
	struct evprof_event_spec s;
	uint32_t type;

	(void)state;
	if (!pmu_type("software", &type))
		skip_because("no software PMU in sysfs");
	s = parse_ok("software/config=2,period=1000/");
	assert_int_equal(s.attr.config, 2);
	assert_int_equal(s.attr.sample_period, 1000);
	s = parse_ok("software/config=2,freq=99/");
	assert_true(s.attr.freq);
	assert_int_equal(s.attr.sample_freq, 99);
}

/* ---- recorded hosts -------------------------------------------------------
 */

/* One per host: the library caches PMU names per sysfs directory. */
static struct test_host intel, amd, nopmu;

static struct evprof_event_spec expect_full(const char *s, uint32_t type,
					    uint64_t config, uint64_t config1,
					    bool slot)
{
	struct evprof_event_spec spec = parse_ok(s);

	if (spec.attr.type != type || spec.attr.config != config ||
	    spec.attr.config1 != config1)
		fail_msg(
		    "'%s': type %u config %#llx config1 %#llx, want %u "
		    "%#llx %#llx",
		    s, spec.attr.type, (unsigned long long)spec.attr.config,
		    (unsigned long long)spec.attr.config1, type,
		    (unsigned long long)config, (unsigned long long)config1);
	assert_int_equal(spec.hw_slot, slot);
	return spec;
}

static void expect_counters(unsigned int want, const char *want_src)
{
	const char *src = NULL;

	unsetenv("EVPROF_MAX_GROUP_EVENTS");
	assert_int_equal(evprof_pmu_counters(&src), want);
	assert_string_equal(src, want_src);
}

/* Names that read nothing from the host resolve alike on every host. */
static void expect_host_independent(void)
{
	expect("cycles", 0, 0, true);
	expect("page-faults", 1, 2, false);
	expect("r1a8", 4, 0x1a8, true);
	expect("LLC-load-misses", 3, 2 | 1 << 16, true);
	expect("dTLB-store-misses", 3, 3 | 1 << 8 | 1 << 16, true);
}

/*
 * The CPUID entry for leaf, to change a recorded host into a kindred one
 * (an older part, the same part in a VM).
 */
static struct evprof_cpuid *leaf_of(struct test_host *t, uint32_t leaf)
{
	for (size_t i = 0; i < t->nr_leaves; i++)
		if (t->leaves[i].leaf == leaf)
			return &t->leaves[i].r;
	fail_msg("host %s has no leaf %#x", t->dir, leaf);
	return NULL;
}

static void test_host_intel(void **state)
{
	struct evprof_event_spec s;
	char path[PATH_MAX + 64];

	(void)state;
	test_host_use(&intel, "intel");
	expect_host_independent();
	/* The core PMU is PERF_TYPE_RAW (4); Intel's event is config:0-7. */
	expect("cpu/event=0x3c,umask=0/", 4, 0x3c, true);
	expect("cpu/event=0xd1,umask=0x20,cmask=1,inv,edge/", 4,
	       0xd1 | 0x20 << 8 | 1 << 18 | 1 << 23 | 1ULL << 24, true);
	expect("cpu/event=0xc0,in_tx/", 4, 0xc0 | 1ULL << 32, true);
	expect_err("cpu/event=0x1c0/", -EVPROF_ERR_BAD_SPEC); /* 9 bits */
	/* Aliases: intel_perfmon_event_map as events_sysfs_show() writes. */
	expect("cpu/cpu-cycles/", 4, 0x3c, true);
	expect("cpu/ref-cycles/", 4, 0x0300, true);
	expect("cpu/cache-misses/", 4, 0x412e, true);
	expect_full("cpu/mem-loads/", 4, 0x01cd, 3, true); /* ldlat=3 */
	expect_full("cpu/event=0xb7,umask=0x1,offcore_rsp=0x10003c0091/", 4,
		    0x01b7, 0x10003c0091ULL, true);
	s = parse_ok("cpu/cpu-cycles/:u");
	assert_true(s.attr.exclude_kernel && s.attr.exclude_hv);
	assert_false(s.attr.exclude_user);
	/* msr: the free-running MSRs (arch/x86/events/msr.c), no counter. */
	expect("msr/smi/", 9, 4, false);
	expect("msr/pperf/", 9, 3, false);
	expect("msr/event=0x7/", 9, 7, false);
	msgs[0] = '\0';
	expect_err("msr/nosuchevent/", -EVPROF_ERR_UNKNOWN_EVENT);
	snprintf(path, sizeof(path), "%s/msr/events/nosuchevent",
		 intel.pmu_root);
	assert_non_null(strstr(msgs, path));
	/* A file beside the alias, not an event: never a path component. */
	expect_err("msr/cpu_thermal_margin.snapshot/", -EVPROF_ERR_BAD_SPEC);
	expect("kprobe/retprobe/", 6, 1, false);
	assert_string_equal(evprof_attr__type_name(9), "msr");
	assert_string_equal(evprof_attr__type_name(6), "kprobe");
	expect("sched:sched_switch", PERF_TYPE_TRACEPOINT, 316, false);
	s = parse_ok("syscalls:sys_enter_openat:u");
	assert_int_equal(s.attr.config, 640);
	assert_true(s.attr.exclude_kernel);
	/* Arch perfmon v4: EAX[15:8] = 4 general purpose counters. */
	expect_counters(4, "cpuid leaf 0xa");
	/* The same part in a VM without a virtual PMU: version 0. */
	leaf_of(&intel, 0xa)->eax = 0;
	expect_counters(4, "default");
	leaf_of(&intel, 0xa)->eax = 0x07300804; /* HT off: 8 counters */
	expect_counters(8, "cpuid leaf 0xa");
}

static void test_host_amd(void **state)
{
	struct evprof_event_spec s;

	(void)state;
	test_host_use(&amd, "amd");
	expect_host_independent();
	expect("cpu/event=0x3c,umask=0/", 4, 0x3c, true);
	/* AMD's event select has 12 bits: 0-7 and 32-35. */
	expect("cpu/event=0x1c0/", 4, 0xc0 | 1ULL << 32, true);
	expect("cpu/event=0xfff,umask=0xff/", 4,
	       0xff | 0xff << 8 | 0xfULL << 32, true);
	expect_err("cpu/event=0x1000/", -EVPROF_ERR_BAD_SPEC);
	expect_err("cpu/event=0x76,any=1/", -EVPROF_ERR_BAD_SPEC); /* Intel */
	/* amd_zen2_perfmon_event_map. */
	expect("cpu/cpu-cycles/", 4, 0x76, true);
	expect("cpu/cache-misses/", 4, 0x0964, true);
	expect("cpu/branch-instructions/", 4, 0xc2, true);
	/* IBS counts on its own hardware, not the core counters. */
	expect("ibs_op/cnt_ctl=1/", 9, 1 << 19, false);
	expect("ibs_fetch/rand_en/", 8, 1ULL << 57, false);
	/* No SMI counter on AMD; IRPERF instead. */
	expect("msr/irperf/", 10, 6, false);
	s = parse_ok("msr/tsc/:k");
	assert_int_equal(s.attr.config, 0);
	assert_true(s.attr.exclude_user);
	expect_err("msr/smi/", -EVPROF_ERR_UNKNOWN_EVENT);
	assert_string_equal(evprof_attr__type_name(9), "ibs_op");
	assert_string_equal(evprof_attr__type_name(10), "msr");
	expect("sched:sched_switch", PERF_TYPE_TRACEPOINT, 287, false);
	/* Zen 4: PerfMonV2, CPUID 0x80000022 EBX[3:0] = 6. */
	expect_counters(6, "cpuid leaf 0x80000022");
	/* Zen 2/3: no leaf 0x80000022; PerfCtrExtCore means 6. */
	leaf_of(&amd, 0x80000000)->eax = 0x80000021;
	expect_counters(6, "cpuid leaf 0x80000001");
	/* A VM that hides the PMU clears PerfCtrExtCore: nothing known. */
	leaf_of(&amd, 0x80000001)->ecx &= ~(1u << 23);
	expect_counters(4, "default");
}

static void test_host_nopmu(void **state)
{
	struct evprof_event_spec s;
	char path[PATH_MAX + 64];

	(void)state;
	test_host_use(&nopmu, "nopmu");
	/* Parsing needs no PMU: opening cycles is what fails there. */
	expect_host_independent();
	msgs[0] = '\0';
	expect_err("cpu/event=0x3c/", -EVPROF_ERR_UNKNOWN_EVENT);
	snprintf(path, sizeof(path), "no PMU cpu (%s/cpu/type)",
		 nopmu.pmu_root);
	assert_non_null(strstr(msgs, path));
	expect("msr/tsc/", 9, 0, false);
	expect_err("msr/smi/", -EVPROF_ERR_UNKNOWN_EVENT);
	expect_err("msr/aperf/", -EVPROF_ERR_UNKNOWN_EVENT);
	/* uprobe: retprobe = config:0, ref_ctr_offset = config:32-63. */
	expect("uprobe/retprobe,ref_ctr_offset=5/", 8, 1 | 5ULL << 32, false);
	expect("uprobe/ref_ctr_offset=0xffffffff/", 8, 0xffffffffULL << 32,
	       false);
	expect_err("uprobe/ref_ctr_offset=0x100000000/", -EVPROF_ERR_BAD_SPEC);
	expect_err("uprobe/retprobe=2/", -EVPROF_ERR_BAD_SPEC);
	s = parse_ok("software/config=2/:u");
	assert_int_equal(s.attr.type, 1);
	assert_string_equal(evprof_attr__type_name(8), "uprobe");
	assert_string_equal(evprof_attr__type_name(6), "pmu-6");
	/* tracefs not mounted: said so, with where it was looked for. */
	msgs[0] = '\0';
	nr_warn = 0;
	expect_err("sched:sched_switch", -EVPROF_ERR_UNKNOWN_EVENT);
	snprintf(path, sizeof(path), "tracefs is not mounted at %s",
		 nopmu.tracefs);
	assert_non_null(strstr(msgs, path));
	assert_int_equal(nr_warn, 1);
	expect_counters(4, "default");
}

static void test_type_name(void **state)
{
	DIR *d;
	struct dirent *e;
	int dynamic = 0;
	const char *a, *b;

	(void)state;
	assert_string_equal(evprof_attr__type_name(0), "hardware");
	assert_string_equal(evprof_attr__type_name(1), "software");
	assert_string_equal(evprof_attr__type_name(2), "tracepoint");
	assert_string_equal(evprof_attr__type_name(3), "hw-cache");
	assert_string_equal(evprof_attr__type_name(4), "raw");
	assert_string_equal(evprof_attr__type_name(5), "breakpoint");
	a = evprof_attr__type_name(0xfffffff0u);
	assert_string_equal(a, "pmu-4294967280");
	b = evprof_attr__type_name(0xfffffff0u);
	assert_ptr_equal(a, b); /* cached, lives on */
	assert_string_equal(evprof_attr__type_name(0xfffffff1u),
			    "pmu-4294967281");
	assert_string_equal(a, "pmu-4294967280");

	/* Every dynamic PMU in sysfs is named after its directory. */
	d = opendir(PMUS);
	if (!d)
		return;
	while ((e = readdir(d))) {
		uint32_t type;

		if (e->d_name[0] == '.' || !pmu_type(e->d_name, &type) ||
		    type < PERF_TYPE_MAX)
			continue;
		assert_string_equal(evprof_attr__type_name(type), e->d_name);
		dynamic++;
	}
	closedir(d);
	print_message("checked %d dynamic PMU names\n", dynamic);
}

/*
 * tracefs at its usual places, else mounted in a mount namespace of our
 * own (containers often leave it unmounted). NULL when truly absent.
 */
static const char *tracefs(void)
{
	if (!access("/sys/kernel/tracing/events", F_OK))
		return "/sys/kernel/tracing";
	if (!access("/sys/kernel/debug/tracing/events", F_OK))
		return "/sys/kernel/debug/tracing";
	if (unshare(CLONE_NEWNS) ||
	    mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) ||
	    mount("nodev", "/sys/kernel/tracing", "tracefs", 0, NULL))
		return NULL;
	return access("/sys/kernel/tracing/events", F_OK)
		   ? NULL
		   : "/sys/kernel/tracing";
}

static void test_tracepoint(void **state)
{
	const char *root = tracefs();
	char path[512], buf[32];
	unsigned long long id;
	struct evprof_event_spec s;

	(void)state;
	if (!root) {
		skip_because("tracefs is not mounted and cannot be");
	}
	snprintf(path, sizeof(path), "%s/events/sched/sched_switch/id", root);
	assert_true(read_text(path, buf, sizeof(buf)));
	id = strtoull(buf, NULL, 10);
	assert_true(id > 0);
	expect("sched:sched_switch", PERF_TYPE_TRACEPOINT, id, false);
	s = parse_ok("sched:sched_switch:u");
	assert_int_equal(s.attr.config, id);
	assert_true(s.attr.exclude_kernel);
	assert_false(s.attr.exclude_user);
	s = parse_named("sched:sched_switch/period=4/", "sched:sched_switch");
	assert_int_equal(s.attr.config, id);
	assert_int_equal(s.attr.sample_period, 4);

	msgs[0] = '\0';
	nr_warn = 0;
	expect_err("sched:no_such_event", -EVPROF_ERR_UNKNOWN_EVENT);
	snprintf(path, sizeof(path), "%s/events/sched/no_such_event/id", root);
	assert_non_null(strstr(msgs, path));
	assert_int_equal(nr_warn, 1);
	expect_err("sched:sched_switch:x", -EVPROF_ERR_BAD_SPEC);
	expect_err("sched:../../../etc", -EVPROF_ERR_BAD_SPEC);
	expect_err("sched:..", -EVPROF_ERR_UNKNOWN_EVENT);
	expect_err(":sched_switch", -EVPROF_ERR_UNKNOWN_EVENT);
}

static void test_unknown(void **state)
{
	(void)state;
	msgs[0] = '\0';
	nr_warn = 0;
	expect_err("no-such-event", -EVPROF_ERR_UNKNOWN_EVENT);
	assert_int_equal(nr_warn, 1);
	assert_non_null(strstr(msgs, "'no-such-event'"));
	assert_non_null(strstr(msgs, "cycles"));
	assert_non_null(strstr(msgs, "instructions"));
	assert_non_null(strstr(msgs, "cpu-clock"));
	assert_non_null(strstr(msgs, "page-faults"));
	assert_non_null(strstr(msgs, "L1-dcache"));
	assert_non_null(strstr(msgs, "sys:name"));
	assert_non_null(strstr(msgs, "rNNNN"));
	expect_err("", -EVPROF_ERR_BAD_SPEC);
	expect_err("cyclez", -EVPROF_ERR_UNKNOWN_EVENT);
	{
		char longname[300];

		memset(longname, 'a', sizeof(longname) - 1);
		longname[sizeof(longname) - 1] = '\0';
		expect_err(longname, -EVPROF_ERR_BAD_SPEC);
	}
	assert_int_equal(evprof_event_spec__parse(NULL, "cycles"), -EINVAL);
}

#ifdef EVPROF_HAVE_LIBPFM
/*
 * libpfm4's own encoding of name on this host, asked as evprof asks (user
 * and kernel): the truth for its names, whose exclude bits depend on the
 * PMU libpfm4 picks here. False when libpfm4 has no such event here.
 */
static bool pfm_truth(const char *name, struct perf_event_attr *a)
{
	pfm_perf_encode_arg_t arg;

	if (pfm_initialize() != PFM_SUCCESS)
		return false;
	memset(a, 0, sizeof(*a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = a;
	arg.size = sizeof(arg);
	return pfm_get_os_event_encoding(name, PFM_PLM0 | PFM_PLM3,
					 PFM_OS_PERF_EVENT_EXT,
					 &arg) == PFM_SUCCESS;
}

/* name resolves to libpfm4's attr; false when libpfm4 does not know it. */
static bool expect_pfm(const char *name)
{
	struct perf_event_attr want;
	struct evprof_event_spec s;

	if (!pfm_truth(name, &want)) {
		print_message("libpfm4 has no %s here: skipped\n", name);
		return false;
	}
	s = parse_ok(name);
	if (s.attr.type != want.type || s.attr.config != want.config ||
	    s.attr.config1 != want.config1 ||
	    s.attr.exclude_user != want.exclude_user ||
	    s.attr.exclude_kernel != want.exclude_kernel ||
	    s.attr.exclude_hv != want.exclude_hv)
		fail_msg("%s: type %u config %#llx excl u%d k%d h%d, libpfm4 "
			 "says %u %#llx u%d k%d h%d",
			 name, s.attr.type, (unsigned long long)s.attr.config,
			 s.attr.exclude_user, s.attr.exclude_kernel,
			 s.attr.exclude_hv, want.type,
			 (unsigned long long)want.config, want.exclude_user,
			 want.exclude_kernel, want.exclude_hv);
	return true;
}

/* The first event of each core PMU libpfm4 finds on this host. */
static int check_pfm_core_pmus(void)
{
	int checked = 0;

	for (int p = PFM_PMU_NONE; p < PFM_PMU_MAX; p++) {
		pfm_pmu_info_t pinfo;
		pfm_event_info_t einfo;
		char name[256];

		memset(&pinfo, 0, sizeof(pinfo));
		pinfo.size = sizeof(pinfo);
		if (pfm_get_pmu_info((pfm_pmu_t)p, &pinfo) != PFM_SUCCESS ||
		    !pinfo.is_present || pinfo.type != PFM_PMU_TYPE_CORE ||
		    pinfo.first_event < 0)
			continue;
		memset(&einfo, 0, sizeof(einfo));
		einfo.size = sizeof(einfo);
		if (pfm_get_event_info(pinfo.first_event, PFM_OS_PERF_EVENT_EXT,
				       &einfo) != PFM_SUCCESS)
			continue;
		snprintf(name, sizeof(name), "%s::%s", pinfo.name, einfo.name);
		if (strlen(name) >= EVPROF_EVENT_NAME_MAX)
			continue;
		checked += expect_pfm(name);
	}
	return checked;
}
#endif

/* libpfm4's own names: only when the library was built with it. */
static void test_libpfm(void **state)
{
	(void)state;
	msgs[0] = '\0';
	expect_err("NO_SUCH_PFM_EVENT_XYZ", -EVPROF_ERR_UNKNOWN_EVENT);
#ifdef EVPROF_HAVE_LIBPFM
	{
		struct evprof_event_spec s;
		struct perf_event_attr want;

		/* Not found via libpfm4: said so in the one message. */
		assert_non_null(strstr(msgs, "libpfm4 names"));
		assert_non_null(strstr(msgs, "libpfm4: "));
		/* libpfm4's generic perf:: table, against the uapi. */
		if (expect_pfm("perf::PERF_COUNT_SW_PAGE_FAULTS"))
			expect_full("perf::PERF_COUNT_SW_PAGE_FAULTS", 1, 2, 0,
				    false);
		if (expect_pfm("perf::PERF_COUNT_HW_INSTRUCTIONS"))
			expect_full("perf::PERF_COUNT_HW_INSTRUCTIONS", 0, 1, 0,
				    true);
		/* :u narrows whatever libpfm4 chose, as for every kind. */
		if (pfm_truth("perf::PERF_COUNT_SW_CONTEXT_SWITCHES", &want)) {
			s = parse_ok("perf::PERF_COUNT_SW_CONTEXT_SWITCHES:u");
			assert_int_equal(s.attr.type, 1);
			assert_int_equal(s.attr.config, 3);
			assert_true(s.attr.exclude_kernel);
			assert_false(s.attr.exclude_user);
			assert_true(s.attr.exclude_hv);
		}
		print_message("libpfm4 core PMUs checked: %d\n",
			      check_pfm_core_pmus());
	}
#else
	assert_null(strstr(msgs, "libpfm4"));
	skip_because("built without libpfm4");
#endif
}

/* ---- lists -----------------------------------------------------------------
 */

static struct evprof_event_list *list_ok(const char *s)
{
	struct evprof_event_list *l = NULL;
	int err = evprof_event_list__parse(&l, s);

	if (err)
		fail_msg("list '%s': %d %s", s, err, msgs);
	assert_non_null(l);
	return l;
}

static void list_err(const char *s, int want)
{
	struct evprof_event_list *l = (void *)1;
	int err = evprof_event_list__parse(&l, s);

	if (err != want)
		fail_msg("list '%s': %d, want %d (%s)", s, err, want, msgs);
	assert_null(l);
}

static void test_list(void **state)
{
	struct evprof_event_list *l;

	(void)state;
	l = list_ok("cycles,instructions");
	assert_int_equal(l->nr_events, 2);
	assert_int_equal(l->nr_groups, 2);
	assert_int_equal(l->groups[1].first, 1);
	assert_int_equal(l->groups[1].nr, 1);
	assert_int_equal(l->events[1].attr.config, 1);
	evprof_event_list__free(l);

	l = list_ok("{cycles,instructions},cpu-clock, {page-faults}");
	assert_int_equal(l->nr_events, 4);
	assert_int_equal(l->nr_groups, 3);
	assert_int_equal(l->groups[0].first, 0);
	assert_int_equal(l->groups[0].nr, 2);
	assert_int_equal(l->groups[1].first, 2);
	assert_int_equal(l->groups[1].nr, 1);
	assert_int_equal(l->groups[2].first, 3);
	assert_int_equal(l->groups[2].nr, 1);
	assert_string_equal(l->events[2].name, "cpu-clock");
	assert_string_equal(l->events[3].name, "page-faults");
	assert_int_equal(l->events[3].attr.config, 2);
	evprof_event_list__free(l);

	/* A group modifier reaches every member, after its own. */
	l = list_ok("{cycles,instructions:k,cpu-clock}:u,task-clock");
	assert_int_equal(l->nr_events, 4);
	assert_int_equal(l->nr_groups, 2);
	for (int i = 0; i < 3; i++) {
		assert_false(l->events[i].attr.exclude_user);
		assert_true(l->events[i].attr.exclude_kernel);
	}
	assert_string_equal(l->events[0].name, "cycles:u");
	assert_string_equal(l->events[1].name, "instructions:k:u");
	assert_false(l->events[3].attr.exclude_kernel);
	evprof_event_list__free(l);

	/* Commas between a PMU's slashes do not split. */
	l = list_ok("software/config=2,config1=0/,{cpu-clock,software/"
		    "config=3,config2=1/}");
	assert_int_equal(l->nr_events, 3);
	assert_int_equal(l->nr_groups, 2);
	assert_string_equal(l->events[0].name, "software/config=2,config1=0/");
	assert_int_equal(l->events[2].attr.config, 3);
	assert_int_equal(l->events[2].attr.config2, 1);
	assert_int_equal(l->groups[1].nr, 2);
	evprof_event_list__free(l);

	evprof_event_list__free(NULL);
	list_err("", -EVPROF_ERR_BAD_SPEC);
	list_err(",cycles", -EVPROF_ERR_BAD_SPEC);
	list_err("cycles,", -EVPROF_ERR_BAD_SPEC);
	list_err("cycles,,instructions", -EVPROF_ERR_BAD_SPEC);
	list_err("{}", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles,}", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles,{instructions}}", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles", -EVPROF_ERR_BAD_SPEC);
	list_err("cycles}", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles}}", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles}x", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles}:", -EVPROF_ERR_BAD_SPEC);
	list_err("{cycles}:z", -EVPROF_ERR_BAD_SPEC);
	list_err("cycles{instructions}", -EVPROF_ERR_BAD_SPEC);
	list_err("software/config=1,cycles", -EVPROF_ERR_BAD_SPEC);
	list_err("cycles,nope", -EVPROF_ERR_UNKNOWN_EVENT);
	assert_int_equal(evprof_event_list__parse(NULL, "cycles"), -EINVAL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_hardware, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_software, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_raw, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_modifiers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_format_apply, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pmu_software, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_sample_terms, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pmu_sample_terms, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_host_intel, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_host_amd, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_host_nopmu, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_type_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_libpfm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list, setup, teardown),
	    /* Last: it may move the process into its own mount namespace. */
	    cmocka_unit_test_setup_teardown(test_tracepoint, setup, teardown),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
