// SPDX-License-Identifier: MIT
/*
 * Per-CPU sets on real software events: count, deferred enable, rollback,
 * each CPU's own attrs.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/event.h>
#include <evprof/read.h>

#include "cases.h"
#include "perf/group.h"
#include "testutil.h"

#define SLACK 32

static void three(struct perf_event_attr a[3])
{
	sw_attr(&a[0], PERF_COUNT_SW_TASK_CLOCK);
	sw_attr(&a[1], PERF_COUNT_SW_PAGE_FAULTS);
	sw_attr(&a[2], PERF_COUNT_SW_CONTEXT_SWITCHES);
}

/* Page faults summed over every CPU's group; *counted: any CPU ran. */
static uint64_t faults(struct evprof_group_set *set, bool *counted)
{
	uint64_t sum = 0;

	*counted = false;
	for (size_t i = 0; i < evprof_group_set__nr(set); i++) {
		struct evprof_group *g = evprof_group_set__group(set, i);
		const struct evprof_counter_value *v;
		struct evprof_snapshot s;

		assert_int_equal(evprof_group__read(g, 1, &s), 0);
		v = evprof_snapshot__find(&s, evprof_group__id(g, 1));
		assert_non_null(v);
		sum += v->raw;
		*counted |= v->counted;
	}
	return sum;
}

/* The online CPUs, as many as there are; *n gets how many. */
static int *online(int *n)
{
	int *cpus;

	*n = evprof_cpus_online(NULL, 0);
	assert_true(*n > 0);
	cpus = calloc((size_t)*n, sizeof(*cpus));
	assert_non_null(cpus);
	assert_int_equal(evprof_cpus_online(cpus, *n), *n);
	return cpus;
}

static void test_online(void **state)
{
	long onln = sysconf(_SC_NPROCESSORS_ONLN);
	int n, *cpus;

	(void)state;
	n = evprof_cpus_online(NULL, 0);
	assert_int_equal(n, onln);
	cpus = calloc((size_t)n, sizeof(*cpus));
	assert_non_null(cpus);
	assert_int_equal(evprof_cpus_online(cpus, n), n);
	for (int i = 1; i < n; i++)
		assert_true(cpus[i] > cpus[i - 1]);
	/* A short array still learns the full count. */
	if (n > 1)
		assert_int_equal(evprof_cpus_online(cpus, 1), n);
	free(cpus);
}

static void test_set_counts(void **state)
{
	long onln = sysconf(_SC_NPROCESSORS_ONLN);
	int n, *cpus = online(&n);
	struct perf_event_attr a[3];
	struct evprof_group_set *set;
	uint64_t before, after;
	bool counted;

	(void)state;
	three(a);
	set = evprof_group_set__open(a, 3, 0, NULL);
	assert_non_null(set);
	assert_int_equal(evprof_group_set__nr(set), onln);
	for (int i = 0; i < n; i++) {
		assert_int_equal(evprof_group_set__cpu(set, (size_t)i),
				 cpus[i]);
		assert_int_equal(
		    evprof_group__nr(evprof_group_set__group(set, i)), 3);
	}
	assert_null(evprof_group_set__group(set, (size_t)n));
	/* Each CPU's group has ids of its own. */
	if (n > 1)
		assert_true(
		    evprof_group__id(evprof_group_set__group(set, 0), 1) !=
		    evprof_group__id(evprof_group_set__group(set, 1), 1));

	before = faults(set, &counted);
	touch_pages(1000);
	after = faults(set, &counted);
	assert_true(counted);
	assert_true(after - before >= 1000 && after - before <= 1000 + SLACK);
	evprof_group_set__free(set);
	evprof_group_set__free(NULL);
	free(cpus);
}

static void test_deferred_enable(void **state)
{
	struct evprof_group_set_opts opts = {.sz = sizeof(opts),
					     .deferred_enable = true};
	struct perf_event_attr a[3];
	struct evprof_group_set *set;
	uint64_t v;
	bool counted;

	(void)state;
	three(a); /* leader not disabled: the set does it */
	set = evprof_group_set__open(a, 3, 0, &opts);
	assert_non_null(set);
	touch_pages(500);
	v = faults(set, &counted);
	assert_int_equal(v, 0);
	assert_false(counted);

	assert_int_equal(evprof_group_set__enable(set), 0);
	touch_pages(700);
	assert_int_equal(evprof_group_set__disable(set), 0);
	v = faults(set, &counted);
	assert_true(counted);
	assert_true(v >= 700 && v <= 700 + SLACK);
	touch_pages(300);
	assert_int_equal(faults(set, &counted), v);
	evprof_group_set__free(set);
}

static void test_rollback(void **state)
{
	struct evprof_group_set_opts opts = {.sz = sizeof(opts)};
	int n, *cpus = online(&n), fcpu = -1, fmember = -1, before;
	bool hw = evprof_probe(EVPROF_FEAT_HW_PMU)->yes;
	struct perf_event_attr a[3];

	(void)state;
	three(a);
	if (!hw) {
		a[2].type = PERF_TYPE_HARDWARE;
		a[2].config = PERF_COUNT_HW_CPU_CYCLES;
	} else {
		a[2].config = 1000; /* no such software event */
	}
	opts.failed_cpu = &fcpu;
	opts.failed_member = &fmember;
	before = count_fds();
	errno = 0;
	assert_null(evprof_group_set__open(a, 3, 0, &opts));
	assert_true(errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP);
	assert_int_equal(fcpu, cpus[0]);
	assert_int_equal(fmember, 2);
	assert_int_equal(count_fds(), before);
	free(cpus);
}

/* What the per-CPU attrs callback saw, and the CPU it breaks the group on. */
struct per_cpu {
	int *seen; /* one per online CPU */
	int nr, max;
	int break_cpu;
};

/*
 * Each call gets the caller's attrs afresh (what it did on the CPU before
 * does not leak); on break_cpu it makes member 2 an event that does not
 * exist, so the set fails there if, and only if, the CPU's attrs are used.
 */
static void per_cpu_attrs(void *ctx, int cpu, struct perf_event_attr *a,
			  size_t nr)
{
	struct per_cpu *p = ctx;

	assert_int_equal(nr, 3);
	assert_int_equal(a[2].config, PERF_COUNT_SW_CONTEXT_SWITCHES);
	if (p->nr < p->max)
		p->seen[p->nr++] = cpu;
	a[2].config = cpu == p->break_cpu ? 1000 : a[2].config;
}

static void test_per_cpu_attrs(void **state)
{
	struct evprof_group_set_opts opts = {.sz = sizeof(opts)};
	int n, *cpus = online(&n), fcpu = -1, fmember = -1, before;
	int *seen = calloc((size_t)n, sizeof(*seen));
	struct per_cpu p = {.seen = seen, .max = n, .break_cpu = -1};
	struct perf_event_attr a[3], orig[3];
	struct evprof_group_set *set;

	(void)state;
	assert_non_null(seen);
	three(a);
	memcpy(orig, a, sizeof(a));
	set = evprof__group_set_open(a, 3, 0, NULL, per_cpu_attrs, &p);
	assert_non_null(set);
	assert_int_equal(p.nr, n);
	assert_memory_equal(p.seen, cpus, (size_t)n * sizeof(int));
	assert_int_equal(evprof_group_set__nr(set), n);
	evprof_group_set__free(set);
	assert_memory_equal(a, orig, sizeof(a));

	/* Broken on the last CPU: fails there, everything closed. */
	p = (struct per_cpu){.seen = seen, .max = n, .break_cpu = cpus[n - 1]};
	opts.failed_cpu = &fcpu;
	opts.failed_member = &fmember;
	before = count_fds();
	errno = 0;
	assert_null(evprof__group_set_open(a, 3, 0, &opts, per_cpu_attrs, &p));
	assert_true(errno == ENOENT || errno == ENODEV || errno == EOPNOTSUPP ||
		    errno == EINVAL);
	assert_int_equal(fcpu, cpus[n - 1]);
	assert_int_equal(fmember, 2);
	assert_int_equal(count_fds(), before);
	assert_memory_equal(a, orig, sizeof(a));
	free(seen);
	free(cpus);
}

static int nskipped;

static int count_skips(enum evprof_print_level level, const char *fmt,
		       va_list ap)
{
	(void)level;
	(void)ap;
	if (strstr(fmt, "skipped"))
		nskipped++;
	return 0;
}

static void test_vanished_pid(void **state)
{
	struct evprof_group_set_opts opts = {.sz = sizeof(opts)};
	struct perf_event_attr a[3];
	int before, fcpu = -1, status;
	pid_t child;

	(void)state;
	three(a);
	opts.failed_cpu = &fcpu;
	before = count_fds();

	/* A zombie: ESRCH on every CPU, which must not read as "offline". */
	child = fork();
	assert_true(child >= 0);
	if (child == 0)
		_exit(0);
	/* Wait until it is a zombie without reaping it. */
	{
		siginfo_t si;

		memset(&si, 0, sizeof(si));
		assert_int_equal(
		    waitid(P_PID, (id_t)child, &si, WEXITED | WNOWAIT), 0);
	}
	/* The first CPU's ESRCH already fails the set: the task is gone,
	 * so no CPU is taken for offline (none is "skipped"). */
	nskipped = 0;
	evprof_set_print(count_skips);
	errno = 0;
	assert_null(evprof_group_set__open(a, 3, child, &opts));
	assert_int_equal(errno, ESRCH);
	evprof_set_print(NULL);
	assert_int_equal(nskipped, 0);
	assert_true(fcpu >= 0);
	assert_int_equal(count_fds(), before);

	/* Reaped: no such pid at all. */
	assert_int_equal(waitpid(child, &status, 0), child);
	errno = 0;
	assert_null(evprof_group_set__open(a, 3, child, &opts));
	assert_int_equal(errno, ESRCH);
	assert_int_equal(count_fds(), before);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_online),
	    cmocka_unit_test(test_set_counts),
	    cmocka_unit_test(test_deferred_enable),
	    cmocka_unit_test(test_rollback),
	    cmocka_unit_test(test_per_cpu_attrs),
	    cmocka_unit_test(test_vanished_pid),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
