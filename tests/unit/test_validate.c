// SPDX-License-Identifier: MIT
/*
 * Group validation: hardware slot counting, the counter count and where it
 * comes from (environment, CPUID, default), and the oversized group error.
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

#include "capture.h"
#include "cases.h"
#include "hosts.h"

/* Counters come from the recorded Intel host, whatever runs the test. */
static struct test_host intel;

static int setup(void **state)
{
	(void)state;
	unsetenv("EVPROF_MAX_GROUP_EVENTS");
	test_host_use(&intel, "intel");
	capture_start();
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unsetenv("EVPROF_MAX_GROUP_EVENTS");
	test_host_real();
	evprof_set_print(NULL);
	return 0;
}

/* Parses a comma separated list of single events into specs[]. */
static size_t specs_of(const char *const *names, size_t nr,
		       struct evprof_event_spec *specs)
{
	for (size_t i = 0; i < nr; i++)
		assert_int_equal(evprof_event_spec__parse(&specs[i], names[i]),
				 0);
	return nr;
}

/*
 * What the recorded host says (tests/fixtures/hosts/intel/cpuid): Intel
 * architectural perfmon version 4 (CPUID.0AH:EAX[7:0]) with EAX[15:8] = 4
 * counters. Other hosts' answers are checked in test_spec.
 */
static unsigned int machine_counters(const char **source)
{
	*source = "cpuid leaf 0xa";
	return 4;
}

static void test_counters_source(void **state)
{
	const char *src = NULL, *want_src;
	unsigned int want = machine_counters(&want_src);

	(void)state;
	assert_int_equal(evprof_pmu_counters(&src), want);
	assert_string_equal(src, want_src);
	assert_int_equal(evprof_pmu_counters(NULL), want);
	assert_int_equal(nr_warn, 0);
}

static void test_env_override(void **state)
{
	const char *src = NULL, *want_src;
	unsigned int want = machine_counters(&want_src);
	static const char *const bad[] = {"",	 "0",  "-3",
					  "abc", "4x", "99999999999999999999"};

	(void)state;
	setenv("EVPROF_MAX_GROUP_EVENTS", "7", 1);
	assert_int_equal(evprof_pmu_counters(&src), 7);
	assert_string_equal(src, "EVPROF_MAX_GROUP_EVENTS");
	setenv("EVPROF_MAX_GROUP_EVENTS", "1", 1);
	assert_int_equal(evprof_pmu_counters(&src), 1);
	assert_int_equal(nr_warn, 0);

	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		setenv("EVPROF_MAX_GROUP_EVENTS", bad[i], 1);
		nr_warn = 0;
		msgs[0] = '\0';
		assert_int_equal(evprof_pmu_counters(&src), want);
		assert_string_equal(src, want_src);
		assert_int_equal(nr_warn, 1);
		assert_non_null(strstr(msgs, "EVPROF_MAX_GROUP_EVENTS"));
	}
}

static void test_slots(void **state)
{
	static const char *const names[] = {
	    "cycles",	       "cpu-clock",  "instructions", "page-faults",
	    "LLC-load-misses", "task-clock", "r1a8",	     "context-switches",
	};
	struct evprof_event_spec specs[8];
	size_t nr = specs_of(names, 8, specs);

	(void)state;
	setenv("EVPROF_MAX_GROUP_EVENTS", "8", 1);
	/* cycles, instructions, LLC-load-misses, r1a8: software takes none. */
	assert_int_equal(evprof_group__validate(specs, nr), 4);
	assert_int_equal(evprof_group__validate(specs, 2), 1);
	assert_int_equal(evprof_group__validate(specs + 1, 1), 0);
	assert_int_equal(evprof_group__validate(specs, 0), 0);
	assert_int_equal(evprof_group__validate(NULL, 0), 0);
	assert_int_equal(evprof_group__validate(NULL, 1), -EINVAL);
	/* Exactly full fits. */
	setenv("EVPROF_MAX_GROUP_EVENTS", "4", 1);
	assert_int_equal(evprof_group__validate(specs, nr), 4);
	assert_int_equal(nr_warn, 0);
}

static void test_software_only_group(void **state)
{
	static const char *const names[] = {
	    "cpu-clock",      "task-clock",   "page-faults",
	    "minor-faults",   "major-faults", "context-switches",
	    "cpu-migrations", "dummy",
	};
	struct evprof_event_spec specs[8];
	size_t nr = specs_of(names, 8, specs);

	(void)state;
	setenv("EVPROF_MAX_GROUP_EVENTS", "1", 1);
	assert_int_equal(evprof_group__validate(specs, nr), 0);
	assert_int_equal(nr_warn, 0);
}

static void test_too_big(void **state)
{
	static const char *const names[] = {
	    "cycles",	     "instructions", "cpu-clock",	 "branches",
	    "branch-misses", "cache-misses", "cache-references",
	};
	struct evprof_event_spec specs[7];
	size_t nr = specs_of(names, 7, specs);

	(void)state;
	setenv("EVPROF_MAX_GROUP_EVENTS", "5", 1);
	assert_int_equal(evprof_group__validate(specs, nr),
			 -EVPROF_ERR_GROUP_TOO_BIG);
	assert_int_equal(nr_warn, 1);
	/* Names the group, both numbers, and where the count came from. */
	assert_non_null(strstr(msgs, "{cycles,instructions,cpu-clock,branches,"
				     "branch-misses,cache-misses,"
				     "cache-references}"));
	assert_non_null(strstr(msgs, " 6 "));
	assert_non_null(strstr(msgs, " 5 "));
	assert_non_null(strstr(msgs, "EVPROF_MAX_GROUP_EVENTS"));
}

static void test_too_big_default(void **state)
{
	struct evprof_event_spec specs[100];
	const char *src;
	unsigned int counters = machine_counters(&src);
	char want[128];

	(void)state;
	if (counters >= 100)
		skip_because("a PMU this large is not one we can overflow");
	for (size_t i = 0; i < 100; i++)
		assert_int_equal(evprof_event_spec__parse(&specs[i], "cycles"),
				 0);
	assert_int_equal(evprof_group__validate(specs, 100),
			 -EVPROF_ERR_GROUP_TOO_BIG);
	/* One cycles goes to fixed counter 1 (the recorded CPUID.0AH EDX). */
	snprintf(want, sizeof(want),
		 "needs 99 general-purpose counters (1 more events on fixed "
		 "counters) and cpu has %u (%s)",
		 counters, src);
	assert_non_null(strstr(msgs, want));
	/* 100 names do not fit the message: it ends the list with "...". */
	assert_non_null(strstr(msgs, "{cycles,cycles,"));
	assert_non_null(strstr(msgs, ",...}"));
}

/* Specs built by hand, names without a NUL, must not overrun. */
static void test_hand_built(void **state)
{
	struct evprof_event_spec specs[3];

	(void)state;
	memset(specs, 'x', sizeof(specs));
	for (int i = 0; i < 3; i++)
		specs[i].hw_slot = true;
	setenv("EVPROF_MAX_GROUP_EVENTS", "2", 1);
	assert_int_equal(evprof_group__validate(specs, 3),
			 -EVPROF_ERR_GROUP_TOO_BIG);
	assert_non_null(
	    strstr(msgs, "needs 3 hardware counters but the PMU has 2"));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup_teardown(test_counters_source, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_env_override, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_slots, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_software_only_group, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_too_big, setup, teardown),
	    cmocka_unit_test_setup_teardown(test_too_big_default, setup,
					    teardown),
	    cmocka_unit_test_setup_teardown(test_hand_built, setup, teardown),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
