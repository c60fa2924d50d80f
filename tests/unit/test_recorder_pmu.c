// SPDX-License-Identifier: MIT
/*
 * The recorder on the PMU, on recorded hosts (tests/fixtures/hosts/): the
 * group record opens on each CPU of a hybrid machine, task mode and cpu
 * mode, and the check of that group against the PMU before it opens. The
 * expected numbers are the fixtures' own: adl is a Core i9-12900K whose
 * sysfs says cpu_core is type 4 on CPUs 0-15 and cpu_atom type 10 on CPUs
 * 16-23 (the type and cpus files under devices/cpu_core and cpu_atom);
 * CPUID leaf 0xa gives cpu_atom 6 general (EAX[15:8]) and 3 fixed
 * counters (EDX[4:0]), Linux's ALDERLAKE rule gives cpu_core 8 general
 * ones (see adl/cpuid).
 */
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
#include "recorder/open.h"
#ifdef EVPROF_HAVE_BPF
#include "recorder/engine_bpf.h"
#endif

/* One per host: the library caches PMU names per sysfs directory. */
static struct test_host adl, intel;

#define ADL_CORE_TYPE  4  /* adl/devices/cpu_core/type */
#define ADL_ATOM_TYPE  10 /* adl/devices/cpu_atom/type */
#define ADL_CPUS       24 /* cpu_core/cpus 0-15, cpu_atom/cpus 16-23 */
#define ADL_FIRST_ATOM 16

/* Nine events: 3 on fixed counters, 6 on general ones. */
#define FITS_BY_FIXED                                                          \
	"cycles,instructions,ref-cycles,branches,branch-misses,"               \
	"cache-references,cache-misses,L1-dcache-load-misses,"                 \
	"dTLB-load-misses"

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

/*
 * A ring engine as its open makes it before opening the groups, on a
 * setup as evprof_recorder__new() fills it: the events of list, the
 * hidden clock, cut and exit members, -F freq.
 */
static struct evprof__ring_engine *recorder_of(const char *list, bool per_cpu)
{
	struct evprof__ring_engine *r = calloc(1, sizeof(*r));
	struct evprof_event_list *l;

	assert_non_null(r);
	r->s = calloc(1, sizeof(*r->s));
	assert_non_null(r->s);
	assert_int_equal(evprof_event_list__parse(&l, list), 0);
	assert_true(l->nr_events <= MAX_EVENTS);
	memcpy(r->s->events, l->events, l->nr_events * sizeof(r->s->events[0]));
	r->s->nr = l->nr_events;
	evprof_event_list__free(l);
	r->s->per_cpu = per_cpu;
	r->s->child = per_cpu ? -1 : 4242; /* task mode: a launched command */
	r->s->freq = 997;
	r->s->ring_pages = RING_PAGES_DEFAULT;
	r->cpu_time_member = r->cut_member = r->exit_member = true;
	r->s->exit_attr = (struct perf_event_attr){
	    .size = sizeof(r->s->exit_attr),
	    .type = PERF_TYPE_TRACEPOINT,
	    .config = 321,
	};
	return r;
}

static void recorder_free(struct evprof__ring_engine *r)
{
	evprof__pmu_map_fini(&r->pmu_map);
	free(r->s);
	free(r);
}

static bool is_generic(const struct perf_event_attr *a)
{
	return (a->type == PERF_TYPE_HARDWARE ||
		a->type == PERF_TYPE_HW_CACHE) &&
	       !(a->config >> 32);
}

/*
 * On every CPU of adl the group gets the PMU of that CPU: each generic
 * member its type in config bits 32-63, nothing else changed; the sampler
 * keeps -F (each group samples at it on its own), the hidden software
 * and tracepoint members stay as they are.
 */
static void check_adl_groups(bool per_cpu)
{
	struct evprof__ring_engine *r = recorder_of(
	    "cycles,instructions,page-faults,LLC-load-misses", per_cpu);
	struct perf_event_attr base[EVPROF_SNAPSHOT_MAX];
	size_t n;

	assert_int_equal(evprof__recorder_map_pmus(&r->pmu_map), 0);
	assert_int_equal(r->pmu_map.nr, 2);
	n = evprof__recorder_build_attrs(r, base);
	/* sampler, clock, 3 extras, cut, exit */
	assert_int_equal(n, 7);
	for (int cpu = 0; cpu < ADL_CPUS; cpu++) {
		struct perf_event_attr a[EVPROF_SNAPSHOT_MAX];
		uint64_t type =
		    cpu < ADL_FIRST_ATOM ? ADL_CORE_TYPE : ADL_ATOM_TYPE;
		int k;

		memcpy(a, base, n * sizeof(a[0]));
		k = evprof__pmu_map_bind(&r->pmu_map, cpu, a, n);
		assert_int_equal(k, cpu < ADL_FIRST_ATOM ? 0 : 1);
		assert_int_equal(r->pmu_map.pmus[k].type, type);
		assert_true(a[0].config ==
			    (type << 32 | PERF_COUNT_HW_CPU_CYCLES));
		assert_true(a[2].config ==
			    (type << 32 | PERF_COUNT_HW_INSTRUCTIONS));
		/* LLC read misses: cache id 2, op 0, result 1 << 16. */
		assert_true(a[4].config ==
			    (type << 32 | PERF_COUNT_HW_CACHE_LL |
			     PERF_COUNT_HW_CACHE_RESULT_MISS << 16));
		for (size_t m = 0; m < n; m++) {
			struct perf_event_attr want = base[m];

			if (is_generic(&base[m]))
				want.config |= type << 32;
			assert_memory_equal(&a[m], &want, sizeof(want));
		}
		assert_int_equal(a[0].freq, 1);
		assert_int_equal(a[0].sample_freq, 997);
		assert_int_equal(a[0].inherit, !per_cpu);
		assert_int_equal(a[1].type, PERF_TYPE_SOFTWARE);
		assert_int_equal(a[1].config, per_cpu
						  ? PERF_COUNT_SW_CPU_CLOCK
						  : PERF_COUNT_SW_TASK_CLOCK);
		assert_int_equal(a[3].config, PERF_COUNT_SW_PAGE_FAULTS);
		assert_int_equal(a[6].type, PERF_TYPE_TRACEPOINT);
	}
	/* A CPU no PMU lists keeps the generic events as they are. */
	{
		struct perf_event_attr a[EVPROF_SNAPSHOT_MAX];

		memcpy(a, base, n * sizeof(a[0]));
		assert_int_equal(
		    evprof__pmu_map_bind(&r->pmu_map, ADL_CPUS, a, n), -1);
		assert_memory_equal(a, base, n * sizeof(a[0]));
	}
	/* Every member keeps its place: its ids get the same counter. */
	for (size_t m = 0; m < n; m++)
		assert_int_equal(evprof__recorder_event_of(r, m),
				 m == 0	  ? 0
				 : m == 1 ? MEMBER_CLOCK
				 : m == 5 ? MEMBER_CUT
				 : m == 6 ? MEMBER_EXIT
					  : (long)m - 1);
	recorder_free(r);
}

static void test_adl_task_mode(void **state)
{
	(void)state;
	test_host_use(&adl, "adl");
	check_adl_groups(false);
}

static void test_adl_cpu_mode(void **state)
{
	(void)state;
	test_host_use(&adl, "adl");
	check_adl_groups(true);
}

/* One core PMU (Skylake-SP): nothing is bound, on any CPU. */
static void test_not_hybrid(void **state)
{
	struct evprof__ring_engine *r =
	    recorder_of("cycles,instructions", false);
	struct perf_event_attr base[EVPROF_SNAPSHOT_MAX],
	    a[EVPROF_SNAPSHOT_MAX];
	size_t n;

	(void)state;
	test_host_use(&intel, "intel");
	assert_int_equal(evprof__recorder_map_pmus(&r->pmu_map), 0);
	assert_true(r->pmu_map.nr < 2);
	n = evprof__recorder_build_attrs(r, base);
	for (int cpu = 0; cpu < 4; cpu++) {
		memcpy(a, base, n * sizeof(a[0]));
		assert_int_equal(evprof__pmu_map_bind(&r->pmu_map, cpu, a, n),
				 -1);
		assert_memory_equal(a, base, n * sizeof(a[0]));
	}
	recorder_free(r);
}

/*
 * The BPF engine on adl: its sampler and each counter on a CPU count on
 * that CPU's core PMU too; software events stay as they are.
 */
static void test_adl_bpf_engine(void **state)
{
#ifdef EVPROF_HAVE_BPF
	struct evprof__ring_engine *r =
	    recorder_of("cycles,instructions,page-faults", true);

	(void)state;
	test_host_use(&adl, "adl");
	assert_int_equal(evprof__recorder_map_pmus(&r->pmu_map), 0);
	for (int cpu = 0; cpu < ADL_CPUS; cpu++) {
		uint64_t type =
		    cpu < ADL_FIRST_ATOM ? ADL_CORE_TYPE : ADL_ATOM_TYPE;
		struct perf_event_attr a[3];

		for (size_t e = 0; e < 3; e++)
			evprof__bpf_attr(r->s, &r->pmu_map, e, cpu, &a[e]);
		assert_true(a[0].config ==
			    (type << 32 | PERF_COUNT_HW_CPU_CYCLES));
		assert_int_equal(a[0].sample_freq, 997);
		assert_true(a[1].config ==
			    (type << 32 | PERF_COUNT_HW_INSTRUCTIONS));
		assert_int_equal(a[1].inherit, 0);
		assert_int_equal(a[2].type, PERF_TYPE_SOFTWARE);
		assert_true(a[2].config == PERF_COUNT_SW_PAGE_FAULTS);
	}
	recorder_free(r);
#else
	(void)state;
	skip_because("the BPF engine is not built in");
#endif
}

/*
 * The BPF engine's counters keep an event's own :u and :k, and take the
 * setup's exclude_kernel on top; a context-switches event that excludes
 * the kernel (which counts nothing: switches are kernel mode) is no switch
 * slot, in either engine.
 */
static void test_bpf_modifiers(void **state)
{
#ifdef EVPROF_HAVE_BPF
	struct evprof__ring_engine *r = recorder_of(
	    "cpu-clock,page-faults:u,page-faults:k,context-switches:u,"
	    "context-switches:k",
	    true);
	struct perf_event_attr a[5];

	(void)state;
	test_host_use(&intel, "intel");
	assert_int_equal(evprof__recorder_map_pmus(&r->pmu_map), 0);
	for (size_t e = 0; e < 5; e++)
		evprof__bpf_attr(r->s, &r->pmu_map, e, 0, &a[e]);
	assert_int_equal(a[0].exclude_kernel | a[0].exclude_user, 0);
	assert_int_equal(a[1].exclude_kernel, 1);
	assert_int_equal(a[1].exclude_user, 0);
	assert_int_equal(a[2].exclude_kernel, 0);
	assert_int_equal(a[2].exclude_user, 1);
	/* Slot i - 1 counts event i: context-switches:k's alone. */
	assert_int_equal(evprof__engine_switch_slots(r->s), 1u << 3);
	r->s->exclude_kernel = true; /* user space only (paranoid 2) */
	evprof__bpf_attr(r->s, &r->pmu_map, 2, 0, &a[2]);
	assert_int_equal(a[2].exclude_kernel & a[2].exclude_user, 1);
	assert_int_equal(evprof__engine_switch_slots(r->s), 0);
	recorder_free(r);
#else
	(void)state;
	skip_because("the BPF engine is not built in");
#endif
}

/* Validates list as record does; rc is what it returns. */
static int validate(const char *list)
{
	struct evprof__ring_engine *r = recorder_of(list, false);
	int rc;

	msgs[0] = '\0';
	rc = evprof__recorder_validate(r->s->events, r->s->nr);
	recorder_free(r);
	return rc;
}

static void expect_msg(const char *part, bool present)
{
	if (!strstr(msgs, part) == present)
		fail_msg("message %s '%s': %s", present ? "lacks" : "has", part,
			 msgs);
}

/*
 * adl, watchdog off: nine events fit both core types only thanks to the
 * 3 fixed counters (6 general ones left on cpu_atom, which has 6); a
 * tenth generic event needs 7 of cpu_atom's 6 and is refused, though
 * cpu_core's 8 would hold it. No watchdog hint: it is not the reason.
 */
static void test_validate_adl(void **state)
{
	(void)state;
	test_host_use(&adl, "adl");
	test_host_watchdog(&adl, "off", NULL);
	if (validate(FITS_BY_FIXED) != 0)
		fail_msg("refused: %s", msgs);
	assert_int_equal(validate(FITS_BY_FIXED ",LLC-load-misses"),
			 -EVPROF_ERR_GROUP_TOO_BIG);
	expect_msg("does not fit cpu_atom; it needs 7 general-purpose counters "
		   "(3 more events on fixed counters) and cpu_atom has 6 "
		   "(cpuid leaf 0xa)",
		   true);
	expect_msg("nmi_watchdog", false);
	/* Software events take no counter. */
	if (validate(FITS_BY_FIXED ",page-faults,cpu-clock") != 0)
		fail_msg("refused: %s", msgs);
}

/*
 * adl as recorded: the perf NMI watchdog holds fixed counter 1 on both
 * core types, so cycles needs a general counter and the nine events need
 * 7 of cpu_atom's 6; the message says how to free it.
 */
static void test_validate_watchdog(void **state)
{
	(void)state;
	test_host_use(&adl, "adl");
	assert_int_equal(validate(FITS_BY_FIXED), -EVPROF_ERR_GROUP_TOO_BIG);
	expect_msg("does not fit cpu_atom; it needs 7 general-purpose counters "
		   "(2 more events on fixed counters) and cpu_atom has 6",
		   true);
	expect_msg("because the NMI watchdog holds the fixed cycles counter",
		   true);
	expect_msg("sysctl kernel.nmi_watchdog=0", true);
}

/* The trial decides over the tables; the user's count over both. */
static void test_validate_trial_env(void **state)
{
	(void)state;
	test_host_use(&adl, "adl");
	test_host_watchdog(&adl, "off", NULL);
	adl.trial = EVPROF_TRIAL_NO_FIT;
	assert_int_equal(validate("cycles,branches"),
			 -EVPROF_ERR_GROUP_TOO_BIG);
	expect_msg("cannot be scheduled on cpu_core: a trial open", true);
	assert_true(adl.nr_trials >= 1);

	test_host_use(&adl, "adl");
	setenv("EVPROF_MAX_GROUP_EVENTS", "1", 1);
	assert_int_equal(validate("cycles,instructions"),
			 -EVPROF_ERR_GROUP_TOO_BIG);
	expect_msg("needs 2 hardware counters but the PMU has 1 (from "
		   "EVPROF_MAX_GROUP_EVENTS)",
		   true);
	assert_int_equal(validate("cycles,page-faults,task-clock"), 0);
	unsetenv("EVPROF_MAX_GROUP_EVENTS");
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_adl_task_mode, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_adl_cpu_mode, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_not_hybrid, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_adl_bpf_engine, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_bpf_modifiers, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_validate_adl, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_validate_watchdog, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_validate_trial_env, setup,
					    teardown),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
