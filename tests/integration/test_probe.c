// SPDX-License-Identifier: MIT
/*
 * Feature probes against what this kernel is (uname) and against raw
 * perf_event_open calls the test makes itself; open-error advice.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/event.h>

#include "cases.h"
#include "testutil.h"

#define NTHREADS 4

/* Opens attr itself; returns 0 or errno. */
static int raw_open(struct perf_event_attr *a, pid_t pid, int cpu)
{
	long fd =
	    syscall(SYS_perf_event_open, a, pid, cpu, -1, PERF_FLAG_FD_CLOEXEC);

	if (fd < 0)
		return errno;
	close((int)fd);
	return 0;
}

static const struct evprof_probe_result *seen[NTHREADS][EVPROF_FEAT__COUNT];

static void *probe_all(void *arg)
{
	const struct evprof_probe_result **out = arg;

	for (int f = EVPROF_FEAT__COUNT - 1; f >= 0; f--)
		out[f] = evprof_probe((enum evprof_feature)f);
	return NULL;
}

/* First test: nothing is cached yet, the threads race to probe. */
static void test_threads_share_one_answer(void **state)
{
	pthread_t t[NTHREADS];

	(void)state;
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(
		    pthread_create(&t[i], NULL, probe_all, seen[i]), 0);
	for (int i = 0; i < NTHREADS; i++)
		assert_int_equal(pthread_join(t[i], NULL), 0);
	for (int f = 0; f < EVPROF_FEAT__COUNT; f++)
		for (int i = 1; i < NTHREADS; i++)
			assert_ptr_equal(seen[i][f], seen[0][f]);
}

static void test_every_probe_answers(void **state)
{
	(void)state;
	for (int f = 0; f < EVPROF_FEAT__COUNT; f++) {
		const struct evprof_probe_result *p = evprof_probe(f);

		assert_non_null(p);
		assert_ptr_equal(p, evprof_probe(f)); /* cached */
		assert_non_null(p->name);
		assert_true(p->name[0] != '\0');
		assert_true(p->why[0] != '\0');
		assert_non_null(memchr(p->why, '\0', sizeof(p->why)));
		if (p->yes)
			assert_int_equal(p->err, 0);
		else
			assert_true(p->err > 0);
		print_message("%-20s %s: %s\n", p->name, p->yes ? "yes" : "no",
			      p->why);
	}
	assert_null(evprof_probe(EVPROF_FEAT__COUNT));
}

static void test_versions(void **state)
{
	const struct evprof_probe_result *p;

	(void)state;
	p = evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ);
	assert_int_equal(p->yes, kernel_at_least(6, 12));
	if (p->yes)
		assert_non_null(strstr(p->why, "6.12+"));
	else if (p->err == EINVAL)
		assert_non_null(strstr(p->why, "needs Linux 6.12"));

	p = evprof_probe(EVPROF_FEAT_DEFER_CALLCHAIN);
	if (!kernel_at_least(6, 19)) {
		assert_false(p->yes);
		assert_int_equal(p->err, EINVAL);
		assert_non_null(strstr(p->why, "EINVAL, needs Linux 6.19"));
	}
	assert_int_equal(evprof_probe(EVPROF_FEAT_FORMAT_LOST)->yes,
			 kernel_at_least(6, 0));
	assert_int_equal(evprof_probe(EVPROF_FEAT_MMAP2_BUILD_ID)->yes,
			 kernel_at_least(5, 12));
	assert_int_equal(evprof_probe(EVPROF_FEAT_CLOCKID)->yes,
			 kernel_at_least(4, 1));
	assert_int_equal(evprof_probe(EVPROF_FEAT_CONTEXT_SWITCH)->yes,
			 kernel_at_least(4, 3));
}

static void test_hw_pmu_matches_raw_open(void **state)
{
	const struct evprof_probe_result *p = evprof_probe(EVPROF_FEAT_HW_PMU);
	struct perf_event_attr a;
	int err;

	(void)state;
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_HARDWARE;
	a.config = PERF_COUNT_HW_CPU_CYCLES;
	a.disabled = 1;
	a.exclude_kernel = 1; /* so paranoid cannot be the reason */
	a.exclude_hv = 1;
	err = raw_open(&a, 0, -1);
	assert_int_equal(p->yes, err == 0);
	if (err == ENOENT) {
		assert_int_equal(p->err, ENOENT);
		assert_non_null(strstr(p->why, "no hardware PMU"));
	}
}

static void test_permission_probes(void **state)
{
	struct perf_event_attr a;
	int cpu0 = 0, err;

	(void)state;
	/* Kernel samples: a sampling task-clock without exclude_kernel. */
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.disabled = 1;
	a.sample_period = 100000;
	err = raw_open(&a, 0, -1);
	assert_int_equal(evprof_probe(EVPROF_FEAT_KERNEL_SAMPLES)->yes,
			 err == 0);
	if (err == EACCES)
		assert_non_null(
		    strstr(evprof_probe(EVPROF_FEAT_KERNEL_SAMPLES)->why,
			   "perf_event_paranoid="));

	/* System wide: cpu-clock on pid -1. */
	assert_true(evprof_cpus_online(&cpu0, 1) > 0);
	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_CPU_CLOCK;
	a.disabled = 1;
	err = raw_open(&a, -1, cpu0);
	if (err == EACCES || err == EPERM) {
		a.exclude_kernel = 1;
		a.exclude_hv = 1;
		err = raw_open(&a, -1, cpu0);
	}
	assert_int_equal(evprof_probe(EVPROF_FEAT_SYSTEM_WIDE)->yes, err == 0);
}

static void test_paranoid(void **state)
{
	FILE *f = fopen("/proc/sys/kernel/perf_event_paranoid", "r");
	int v = INT_MIN;

	(void)state;
	if (f) {
		assert_int_equal(fscanf(f, "%d", &v), 1);
		fclose(f);
	}
	assert_int_equal(evprof_paranoid(), v);
}

static void test_advice(void **state)
{
	char buf[512], want[64], small[8];

	(void)state;
	evprof_open_advice(EACCES, "cycles", buf, sizeof(buf));
	snprintf(want, sizeof(want), "perf_event_paranoid=%d",
		 evprof_paranoid());
	if (evprof_paranoid() != INT_MIN)
		assert_non_null(strstr(buf, want));
	assert_non_null(strstr(buf, "CAP_PERFMON"));
	assert_non_null(strstr(buf, "sysctl"));
	assert_non_null(strstr(
	    evprof_open_advice(-EPERM, "x", buf, sizeof(buf)), "CAP_PERFMON"));

	const int unsupported[] = {ENOENT, ENODEV, ENXIO, EOPNOTSUPP};
	for (size_t i = 0; i < 4; i++) {
		evprof_open_advice(unsupported[i], "cycles", buf, sizeof(buf));
		assert_non_null(
		    strstr(buf, "cycles is not supported by this machine"));
		assert_non_null(strstr(buf, "VMs"));
	}
	assert_non_null(
	    strstr(evprof_open_advice(EINVAL, "e", buf, sizeof(buf)),
		   "not valid on this kernel"));
	assert_non_null(strstr(
	    evprof_open_advice(EMFILE, "e", buf, sizeof(buf)), "ulimit -n"));
	assert_non_null(
	    strstr(evprof_open_advice(-ESRCH, "e", buf, sizeof(buf)),
		   "no such process"));
	assert_non_null(strstr(evprof_open_advice(E2BIG, "e", buf, sizeof(buf)),
			       "too large"));
	assert_non_null(
	    strstr(evprof_open_advice(EBUSY, "e", buf, sizeof(buf)), "busy"));
	assert_non_null(strstr(evprof_open_advice(EIO, "e", buf, sizeof(buf)),
			       strerror(EIO)));
	assert_non_null(strstr(
	    evprof_open_advice(EINVAL, NULL, buf, sizeof(buf)), "the event"));
	/* Cut to the buffer, always terminated. */
	assert_ptr_equal(
	    evprof_open_advice(ENOENT, "cycles", small, sizeof(small)), small);
	assert_int_equal(strlen(small), sizeof(small) - 1);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_threads_share_one_answer),
	    cmocka_unit_test(test_every_probe_answers),
	    cmocka_unit_test(test_versions),
	    cmocka_unit_test(test_hw_pmu_matches_raw_open),
	    cmocka_unit_test(test_permission_probes),
	    cmocka_unit_test(test_paranoid),
	    cmocka_unit_test(test_advice),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
