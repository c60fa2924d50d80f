// SPDX-License-Identifier: MIT
/*
 * Groups on real software events: values checked against page faults the
 * test takes itself (and getrusage's independent count of them).
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/event.h>
#include <evprof/read.h>

#include "cases.h"
#include "testutil.h"

#define NPAGES 2000
/* Faults the test's own code may take between two reads (stack, libc). */
#define SLACK 32

/* {task-clock, page-faults, context-switches}; leader disabled or not. */
static void three(struct perf_event_attr a[3], bool disabled)
{
	sw_attr(&a[0], PERF_COUNT_SW_TASK_CLOCK);
	sw_attr(&a[1], PERF_COUNT_SW_PAGE_FAULTS);
	sw_attr(&a[2], PERF_COUNT_SW_CONTEXT_SWITCHES);
	a[0].disabled = disabled;
}

static long minflt(void)
{
	struct rusage ru;

	assert_int_equal(getrusage(RUSAGE_THREAD, &ru), 0);
	return ru.ru_minflt;
}

static uint64_t value_of(const struct evprof_snapshot *s, uint64_t id)
{
	const struct evprof_counter_value *v = evprof_snapshot__find(s, id);

	assert_non_null(v);
	assert_true(v->counted);
	return v->raw;
}

static void test_page_faults_by_id(void **state)
{
	struct evprof_snapshot s0, s1;
	struct perf_event_attr a[3];
	struct evprof_group *g;
	uint64_t pf_id, pf0, pf1;
	long ru0, ru1;

	(void)state;
	three(a, false);
	g = evprof_group__open(a, 3, 0, -1, NULL);
	assert_non_null(g);
	assert_int_equal(evprof_group__nr(g), 3);
	pf_id = evprof_group__id(g, 1);
	assert_true(pf_id != 0);
	assert_true(pf_id != evprof_group__id(g, 0));
	assert_true(pf_id != evprof_group__id(g, 2));

	/* Read through the member's own fd: the leader still comes first. */
	assert_int_equal(evprof_group__read(g, 1, &s0), 0);
	ru0 = minflt();
	touch_pages(NPAGES);
	ru1 = minflt();
	assert_int_equal(evprof_group__read(g, 1, &s1), 0);

	assert_int_equal(s1.nr, 3);
	assert_int_equal(s1.values[0].id, evprof_group__id(g, 0));
	assert_true(s1.values[0].id != pf_id);
	pf0 = value_of(&s0, pf_id);
	pf1 = value_of(&s1, pf_id);
	print_message("page-faults delta %llu, ru_minflt delta %ld\n",
		      (unsigned long long)(pf1 - pf0), ru1 - ru0);
	assert_true(pf1 - pf0 >= NPAGES);
	assert_true(pf1 - pf0 <= NPAGES + SLACK);
	/* getrusage's span is inside the counter's span. */
	assert_true(ru1 - ru0 >= NPAGES);
	assert_true((long)(pf1 - pf0) >= ru1 - ru0);
	assert_true((long)(pf1 - pf0) <= ru1 - ru0 + SLACK);
	/* Position 0 is the leader (task-clock, ns), not the member. */
	assert_ptr_not_equal(evprof_snapshot__find(&s1, pf_id), &s1.values[0]);
	assert_true(s1.values[0].raw != pf1);
	/* Software events are never multiplexed. */
	assert_true(s1.time_enabled > 0);
	assert_int_equal(s1.time_enabled, s1.time_running);
	evprof_group__free(g);
}

static void test_enable_disable_reset(void **state)
{
	struct perf_event_attr a[3];
	struct evprof_snapshot s;
	struct evprof_group *g;
	uint64_t pf_id, v;

	(void)state;
	three(a, true);
	g = evprof_group__open(a, 3, 0, -1, NULL);
	assert_non_null(g);
	pf_id = evprof_group__id(g, 1);

	/* Never enabled: nothing ran, so no value exists. */
	touch_pages(100);
	assert_int_equal(evprof_group__read(g, 0, &s), 0);
	assert_int_equal(s.time_running, 0);
	assert_false(evprof_snapshot__find(&s, pf_id)->counted);

	assert_int_equal(evprof_group__enable(g), 0);
	touch_pages(300);
	assert_int_equal(evprof_group__disable(g), 0);
	assert_int_equal(evprof_group__read(g, 2, &s), 0);
	v = value_of(&s, pf_id);
	assert_true(v >= 300 && v <= 300 + SLACK);

	/* Disabled: faults taken now are not counted. */
	touch_pages(300);
	assert_int_equal(evprof_group__read(g, 0, &s), 0);
	assert_int_equal(value_of(&s, pf_id), v);

	/* Reset zeroes the values (not the times). */
	assert_int_equal(evprof_group__reset(g), 0);
	assert_int_equal(evprof_group__read(g, 0, &s), 0);
	assert_int_equal(value_of(&s, pf_id), 0);
	assert_int_equal(s.values[0].raw, 0);

	assert_int_equal(evprof_group__enable(g), 0);
	touch_pages(150);
	assert_int_equal(evprof_group__read(g, 1, &s), 0);
	v = value_of(&s, pf_id);
	assert_true(v >= 150 && v <= 150 + SLACK);
	evprof_group__free(g);

	/* A member the caller opened disabled counts once enabled too. */
	three(a, true);
	a[1].disabled = 1;
	g = evprof_group__open(a, 3, 0, -1, NULL);
	assert_non_null(g);
	assert_int_equal(evprof_group__enable(g), 0);
	touch_pages(200);
	assert_int_equal(evprof_group__read(g, 1, &s), 0);
	v = value_of(&s, evprof_group__id(g, 1));
	assert_true(v >= 200 && v <= 200 + SLACK);
	evprof_group__free(g);
}

static void test_failed_member_closes_all(void **state)
{
	struct perf_event_attr a[3];
	struct evprof_group_opts opts = {.sz = sizeof(opts)};
	int before, failed = -1;
	bool hw = evprof_probe(EVPROF_FEAT_HW_PMU)->yes;

	(void)state;
	three(a, false);
	/* A member that cannot open: cycles where there is no PMU (this
	 * VM), else a software config that does not exist. */
	if (!hw) {
		a[2].type = PERF_TYPE_HARDWARE;
		a[2].config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a[2].config = 1000;
	}
	opts.failed_member = &failed;
	before = count_fds();
	errno = 0;
	assert_null(evprof_group__open(a, 3, 0, -1, &opts));
	if (!hw)
		assert_true(errno == ENOENT || errno == ENODEV ||
			    errno == EOPNOTSUPP);
	else
		assert_int_equal(errno, ENOENT);
	assert_int_equal(failed, 2);
	assert_int_equal(count_fds(), before);

	/* Failing at the first member closes the leader too. */
	a[1] = a[2];
	failed = -1;
	assert_null(evprof_group__open(a, 3, 0, -1, &opts));
	assert_int_equal(failed, 1);
	assert_int_equal(count_fds(), before);

	/* No such process: the leader itself fails. */
	three(a, false);
	failed = -1;
	errno = 0;
	assert_null(evprof_group__open(a, 3, 0x3fffffff, -1, &opts));
	assert_int_equal(errno, ESRCH);
	assert_int_equal(failed, 0);
	assert_int_equal(count_fds(), before);
}

static void test_read_format(void **state)
{
	struct perf_event_attr a[3], copy[3];
	struct evprof_group *g;
	uint64_t rf, base = PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			    PERF_FORMAT_TOTAL_TIME_ENABLED |
			    PERF_FORMAT_TOTAL_TIME_RUNNING;
	bool lost = evprof_probe(EVPROF_FEAT_FORMAT_LOST)->yes;
	struct evprof_snapshot s;

	(void)state;
	three(a, false);
	memcpy(copy, a, sizeof(a));
	g = evprof_group__open(a, 3, 0, -1, NULL);
	assert_non_null(g);
	/* The caller's attrs are left alone. */
	assert_memory_equal(a, copy, sizeof(a));
	rf = evprof_group__read_format(g);
	assert_int_equal(rf & base, base);
	assert_int_equal(!!(rf & PERF_FORMAT_LOST), lost);
	/* PERF_FORMAT_LOST is Linux 6.0. */
	assert_int_equal(lost, kernel_at_least(6, 0));
	assert_int_equal(evprof_group__read(g, 0, &s), 0);
	assert_int_equal(s.read_format, rf);
	assert_int_equal(evprof_group__read(g, 3, &s), -EINVAL);
	assert_int_equal(evprof_group__fd(g, 3), -1);
	evprof_group__free(g);
	evprof_group__free(NULL);
}

static void test_attr_set_bit(void **state)
{
	struct perf_event_attr a;
	unsigned char raw[sizeof(a)];

	(void)state;
	memset(&a, 0, sizeof(a));
	/* Against the uapi bitfields the compiler lays out itself. */
	evprof_attr__set_bit(&a, 0, true);
	assert_int_equal(a.disabled, 1);
	evprof_attr__set_bit(&a, 34, true);
	assert_int_equal(a.build_id, 1);
	evprof_attr__set_bit(&a, 15, true);
	assert_int_equal(a.precise_ip, 1);
	evprof_attr__set_bit(&a, 0, false);
	assert_int_equal(a.disabled, 0);
	/* Bit 38 (defer_callchain) is byte 44 bit 6. */
	evprof_attr__set_bit(&a, EVPROF_ATTR_BIT_DEFER_CALLCHAIN, true);
	memcpy(raw, &a, sizeof(a));
	assert_int_equal(raw[44], 0x40 | 0x04); /* 38 and 34 */
	assert_int_equal(raw[41], 0x80);	/* 15 */
	assert_int_equal(raw[40], 0);
	/* Out of range: ignored. */
	evprof_attr__set_bit(&a, 64, true);
	assert_memory_equal(raw, &a, sizeof(a));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page_faults_by_id),
	    cmocka_unit_test(test_enable_disable_reset),
	    cmocka_unit_test(test_failed_member_closes_all),
	    cmocka_unit_test(test_read_format),
	    cmocka_unit_test(test_attr_set_bit),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
