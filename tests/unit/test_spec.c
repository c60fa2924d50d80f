// SPDX-License-Identifier: MIT
/*
 * Event specs: every kind of name against uapi values worked out by hand,
 * modifiers, tracepoint ids and sysfs PMUs read by the test itself, errors
 * and their messages, and event lists with groups.
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

#include "capture.h"
#include "spec.h"

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
		skip(); /* no sysfs: not a Linux we can test on */
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

/* msr and uprobe exist on this VM; elsewhere these checks skip. */
static void test_pmu_sysfs(void **state)
{
	char buf[256];
	uint32_t type;
	unsigned long long ev;
	struct evprof_event_spec s;

	(void)state;
	if (!pmu_type("msr", &type) || !pmu_type("uprobe", &type))
		skip();
	pmu_type("msr", &type);
	/* msr: format event = config:0-63, events/smi = "event=0x04". */
	if (!read_text(PMUS "/msr/format/event", buf, sizeof(buf)) ||
	    strcmp(buf, "config:0-63"))
		skip();
	assert_true(read_text(PMUS "/msr/events/smi", buf, sizeof(buf)));
	assert_int_equal(sscanf(buf, "event=%lli", &ev), 1);
	expect("msr/smi/", type, ev, false);
	assert_true(read_text(PMUS "/msr/events/tsc", buf, sizeof(buf)));
	assert_int_equal(sscanf(buf, "event=%lli", &ev), 1);
	expect("msr/tsc/", type, ev, false);
	expect("msr/event=0x7/", type, 7, false);
	s = parse_ok("msr/tsc/:k");
	assert_true(s.attr.exclude_user);
	msgs[0] = '\0';
	expect_err("msr/nosuchevent/", -EVPROF_ERR_UNKNOWN_EVENT);
	assert_non_null(strstr(msgs, PMUS "/msr/events/nosuchevent"));

	/* uprobe: retprobe = config:0, ref_ctr_offset = config:32-63. */
	pmu_type("uprobe", &type);
	if (!read_text(PMUS "/uprobe/format/retprobe", buf, sizeof(buf)) ||
	    strcmp(buf, "config:0"))
		skip();
	if (!read_text(PMUS "/uprobe/format/ref_ctr_offset", buf,
		       sizeof(buf)) ||
	    strcmp(buf, "config:32-63"))
		skip();
	expect("uprobe/retprobe,ref_ctr_offset=5/", type, 1 | 5ULL << 32,
	       false);
	expect("uprobe/ref_ctr_offset=0xffffffff/", type, 0xffffffffULL << 32,
	       false);
	expect_err("uprobe/ref_ctr_offset=0x100000000/", -EVPROF_ERR_BAD_SPEC);
	expect_err("uprobe/retprobe=2/", -EVPROF_ERR_BAD_SPEC);
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
		print_message(
		    "tracefs is not mounted and cannot be: skipped\n");
		skip();
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

/* libpfm4's own names: only when the library was built with it. */
static void test_libpfm(void **state)
{
	struct evprof_event_spec s;

	(void)state;
	msgs[0] = '\0';
	expect_err("NO_SUCH_PFM_EVENT_XYZ", -EVPROF_ERR_UNKNOWN_EVENT);
	if (!strstr(msgs, "libpfm4 names")) {
		print_message("built without libpfm4: skipped\n");
		skip();
	}
	/* Not found via libpfm4: said so in the one message. */
	assert_non_null(strstr(msgs, "libpfm4: "));
	/* libpfm4's generic perf:: table is present on every machine. */
	expect("perf::PERF_COUNT_SW_PAGE_FAULTS", 1, 2, false);
	expect("perf::PERF_COUNT_HW_INSTRUCTIONS", 0, 1, true);
	s = parse_ok("perf::PERF_COUNT_SW_CONTEXT_SWITCHES:u");
	assert_int_equal(s.attr.type, 1);
	assert_int_equal(s.attr.config, 3);
	assert_true(s.attr.exclude_kernel);
	assert_false(s.attr.exclude_user);
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

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_hardware, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_software, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_cache, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_raw, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_modifiers, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_format_apply, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pmu_software, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_pmu_sysfs, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_type_name, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_unknown, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_libpfm, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_list, setup, teardown),
	    /* Last: it may move the process into its own mount namespace. */
	    cmocka_unit_test_setup_teardown(test_tracepoint, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
