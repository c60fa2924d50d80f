// SPDX-License-Identifier: MIT
/*
 * Session aggregates (session_aggr.h), as the BPF engine feeds them: a sum
 * with samples becomes one weighted sample (store and timeline), a sum
 * without samples a store entry only, a thread outside the process tree is
 * left out, and the stats count samples, not sums.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#include "cases.h"
#include "session/aggr.h"

#define UCTX ((uint64_t)PERF_CONTEXT_USER)
#define KCTX ((uint64_t)PERF_CONTEXT_KERNEL)

static const char *const counter_names[] = {"page-faults"};

static struct evprof_session *new_session(const pid_t *pids, size_t nr)
{
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		    .sample_id_all = true},
	    .counters = counter_names,
	    .nr_counters = 1,
	    .pids = pids,
	    .nr_pids = nr,
	    .per_cpu = true,
	};
	struct evprof_session *s = evprof_session__new(&o);

	assert_non_null(s);
	return s;
}

static void seed(struct evprof_session *s, pid_t pid, pid_t t0, pid_t t1)
{
	const struct evprof_session_thread_seed th[] = {{t0, "main"},
							{t1, "worker"}};
	struct evprof_session_seed sd = {
	    .sz = sizeof(sd),
	    .pid = pid,
	    .name = "app",
	    .threads = th,
	    .nr_threads = 2,
	};

	assert_int_equal(evprof_session__seed(s, &sd), 0);
}

static int add(struct evprof_session *s, uint32_t pid, uint32_t tid,
	       const uint64_t *ips, uint64_t nr, uint64_t samples, uint64_t cpu,
	       uint64_t faults)
{
	const uint64_t c[1] = {faults};
	struct evprof_session_aggr a = {
	    .time = 1000 + samples,
	    .pid = pid,
	    .tid = tid,
	    .ips = ips,
	    .nr = nr,
	    .samples = samples,
	    .cpu_ns = cpu,
	    .has = 1,
	    .counters = c,
	};

	return evprof__session_aggregate(s, &a);
}

struct sums {
	int thr;
	uint64_t samples, cpu, faults;
	int entries;
};

static int sum_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct sums *t = ctx;

	t->samples += e->samples;
	t->cpu += e->cpu_ns;
	t->faults += e->counters[0];
	t->entries++;
	return 0;
}

/* An aggregate with slot 1 set: a session of one slot refuses it. */
static void refuse_second_slot(struct evprof_session *s)
{
	const uint64_t c[2] = {1, 2};
	struct evprof_session_aggr bad = {
	    .pid = 100, .tid = 101, .has = 3, .counters = c};

	assert_int_equal(evprof__session_aggregate(s, &bad), -EINVAL);
}

/* Sums of the profile thread whose tid is tid. */
static struct sums thread_sums(const struct evprof_profile *p, int tid)
{
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	struct sums t = {.thr = -1};

	evprof_profile__stats(p, &st);
	for (int i = 0; i < (int)st.threads; i++) {
		struct evprof_profile_thread_info ti;

		assert_int_equal(evprof_profile__thread_info(p, i, &ti), 0);
		if (ti.tid == tid)
			t.thr = i;
	}
	if (t.thr >= 0)
		evprof_profile__for_each_entry(p, t.thr, sum_entry, &t);
	return t;
}

static int timeline_rows(const struct evprof_profile *p, int thr,
			 uint64_t *weight)
{
	struct evprof_profile_timeline *it =
	    evprof_profile_timeline__new(p, thr);
	struct evprof_profile_sample smp;
	int n = 0;

	assert_non_null(it);
	*weight = 0;
	while (evprof_profile_timeline__next(it, &smp) == 1) {
		*weight += smp.weight;
		n++;
	}
	evprof_profile_timeline__free(it);
	return n;
}

static void test_aggregates(void **state)
{
	static const uint64_t stack[] = {KCTX, 0xffffffff81000010ull, UCTX,
					 0x401000, 0x402000};
	const pid_t root = 100;
	struct evprof_session *s = new_session(&root, 1);
	struct evprof_profile_opts po = {.sz = sizeof(po)};
	struct evprof_profile *p = evprof_profile__new(&po);
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct sums w, m, out;
	uint64_t weight;

	(void)state;
	assert_non_null(p);
	seed(s, 100, 100, 101);
	seed(s, 200, 200, 201);
	/* The worker: 5 samples on one stack, then its tail on it. */
	assert_int_equal(add(s, 100, 101, stack, 5, 5, 5000000, 700), 0);
	assert_int_equal(add(s, 100, 101, stack, 5, 0, 40000, 3), 0);
	/* main never sampled: a sum without samples or stack. */
	assert_int_equal(add(s, 100, 100, NULL, 0, 0, 90000, 11), 0);
	/* Outside the tree. */
	assert_int_equal(add(s, 200, 201, stack, 5, 4, 4000000, 9), 0);
	/* A counter the session does not have. */
	refuse_second_slot(s);
	assert_int_equal(evprof_session__build(s, p, NULL), 0);

	w = thread_sums(p, 101);
	assert_true(w.thr >= 0);
	assert_int_equal(w.samples, 5);
	assert_int_equal(w.cpu, 5040000);
	assert_int_equal(w.faults, 703);
	assert_int_equal(w.entries, 1); /* the same (thread, stack) */
	/*
	 * One weighted row; the tail, without samples, a values-only row
	 * (writers that read the timeline must see its counts).
	 */
	assert_int_equal(timeline_rows(p, w.thr, &weight), 2);
	assert_int_equal(weight, 5);

	m = thread_sums(p, 100);
	assert_true(m.thr >= 0);
	assert_int_equal(m.samples, 0);
	assert_int_equal(m.cpu, 90000);
	assert_int_equal(m.faults, 11);
	assert_int_equal(timeline_rows(p, m.thr, &weight), 1);
	assert_int_equal(weight, 0);

	out = thread_sums(p, 201);
	assert_int_equal(out.thr, -1);

	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 5);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * The sampling event as a counter (sampler_counter, -e page-faults alone):
 * its slot after the counters, none here, carries its sums.
 */
static void test_sampler_slot(void **state)
{
	static const uint64_t stack[] = {UCTX, 0x401000};
	const pid_t root = 100;
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
				   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
		    .sample_id_all = true},
	    .sampler_counter = "page-faults",
	    .pids = &root,
	    .nr_pids = 1,
	    .per_cpu = true,
	};
	struct evprof_session *s = evprof_session__new(&o);
	struct evprof_profile_opts po = {.sz = sizeof(po)};
	struct evprof_profile *p = evprof_profile__new(&po);
	struct sums w;

	(void)state;
	assert_non_null(s);
	assert_non_null(p);
	seed(s, 100, 100, 101);
	assert_int_equal(add(s, 100, 101, stack, 2, 3, 3000, 48), 0);
	assert_int_equal(add(s, 100, 101, stack, 2, 0, 0, 7), 0);
	refuse_second_slot(s);
	assert_int_equal(evprof_session__build(s, p, NULL), 0);
	w = thread_sums(p, 101);
	assert_true(w.thr >= 0);
	assert_int_equal(w.samples, 3);
	assert_int_equal(w.faults, 55);
	evprof_profile__free(p);
	evprof_session__free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_aggregates),
	    cmocka_unit_test(test_sampler_slot),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
