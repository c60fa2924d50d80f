// SPDX-License-Identifier: MIT
/*
 * Who ran it, in the session: samples carrying their cgroup id
 * (PERF_SAMPLE_CGROUP), ids named by CGROUP records or
 * evprof_session__name_cgroup(), each profile thread labelled with its
 * latest sample's cgroup in time order (not in arrival order), an exec
 * keeping it, an id nothing names labelling nothing, and a seed's
 * /proc path as the fallback of a session without the sample field.
 * Aggregates (the BPF engine's) carry their thread's cgroup id the same
 * way, in a session whose records have no such field.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#include "cases.h"
#include "sessfeed.h"
#include "session/aggr.h"

#define SAMPLER 10
#define ST_CG                                                                  \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CGROUP)

static struct evprof_session *session(uint64_t sample_type)
{
	struct evprof_session_opts o = {.sz = sizeof(o)};
	struct evprof_session *s;

	o.fmt.sample_type = sample_type;
	o.fmt.sample_id_all = true;
	s = evprof_session__new(&o);
	assert_non_null(s);
	assert_int_equal(
	    evprof_session__set_id(s, SAMPLER, EVPROF_SESSION_SAMPLER), 0);
	return s;
}

/* A sample of tid in pid at time, in cgroup cg (with ST_CG). */
static void sample(struct evprof_session *s, uint64_t st, uint32_t pid,
		   uint32_t tid, uint64_t time, uint64_t cg)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, SAMPLER);
	rb_u64(&b, 0x401000);
	rb_u32x2(&b, pid, tid);
	rb_u64(&b, time);
	rb_u32x2(&b, 0, 0);
	if (st & PERF_SAMPLE_CGROUP)
		rb_u64(&b, cg);
	assert_int_equal(rb_feed(s, &b), 0);
}

static void cgroup_record(struct evprof_session *s, uint64_t id,
			  const char *path, uint64_t time)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_CGROUP, 0);
	rb_u64(&b, id);
	rb_str(&b, path);
	rb_trailer(&b, 1, 1, time, SAMPLER);
	assert_int_equal(rb_feed(s, &b), 0);
}

/* The cgroup of the profile thread of tid (NULL: none); it must exist. */
static const char *cgroup_of(const struct evprof_profile *p, int tid)
{
	struct evprof_profile_stats st = {.sz = sizeof(st)};

	assert_int_equal(evprof_profile__stats(p, &st), 0);
	for (int i = 0; i < (int)st.threads; i++) {
		struct evprof_profile_thread_info ti;

		assert_int_equal(evprof_profile__thread_info(p, i, &ti), 0);
		if (ti.tid == tid)
			return evprof_profile__thread_cgroup(p, i);
	}
	fail_msg("no thread %d", tid);
	return NULL;
}

static struct evprof_profile *build(struct evprof_session *s)
{
	struct evprof_profile *p = evprof_profile__new(NULL);

	assert_non_null(p);
	assert_int_equal(evprof_session__build(s, p, NULL), 0);
	return p;
}

static void test_latest_sample(void **state)
{
	struct evprof_session *s = session(ST_CG);
	struct evprof_profile *p;
	struct rb b;

	(void)state;
	/* Named before recording (the walk), and while (a record). */
	assert_int_equal(evprof_session__name_cgroup(s, 7, "/a"), 0);
	cgroup_record(s, 8, "/kubepods/besteffort/podx/b", 15);
	rb_comm(&b, 100, 100, "app", 0, 1, SAMPLER);
	assert_int_equal(rb_feed(s, &b), 0);
	sample(s, ST_CG, 100, 100, 10, 7);
	sample(s, ST_CG, 100, 100, 20, 8); /* moved */
	/* Read late from another CPU's ring: an older sample. */
	sample(s, ST_CG, 100, 100, 5, 7);
	/* Another thread stays in /a; a third in a cgroup nothing names. */
	sample(s, ST_CG, 100, 101, 12, 7);
	sample(s, ST_CG, 102, 102, 12, 9);
	/* An exec keeps its task's cgroup. */
	sample(s, ST_CG, 103, 103, 10, 7);
	rb_comm(&b, 103, 103, "newimage", 1, 11, SAMPLER);
	assert_int_equal(rb_feed(s, &b), 0);
	sample(s, ST_CG, 103, 103, 12, 7);
	/* A name given again: the latest. */
	cgroup_record(s, 7, "/a2", 30);
	p = build(s);
	assert_string_equal(cgroup_of(p, 100), "/kubepods/besteffort/podx/b");
	assert_string_equal(cgroup_of(p, 101), "/a2");
	assert_null(cgroup_of(p, 102));
	assert_string_equal(cgroup_of(p, 103), "/a2");
	evprof_profile__free(p);
	evprof_session__free(s);
}

static void test_seed_fallback(void **state)
{
	uint64_t st = ST_CG & ~(uint64_t)PERF_SAMPLE_CGROUP;
	struct evprof_session *s = session(st);
	struct evprof_session_thread_seed th[] = {{200, "main"}, {201, "w"}};
	struct evprof_session_seed seed = {
	    .sz = sizeof(seed),
	    .pid = 200,
	    .name = "old",
	    .threads = th,
	    .nr_threads = 2,
	    .cgroup = "/system.slice/docker-"
		      "0123456789abcdef0123456789abcdef0123456789abcdef"
		      "0123456789abcdef.scope",
	};
	struct evprof_profile *p;

	(void)state;
	assert_int_equal(evprof_session__seed(s, &seed), 0);
	sample(s, st, 200, 200, 10, 0);
	sample(s, st, 200, 201, 11, 0);
	sample(s, st, 300, 300, 12, 0); /* no seed: nothing known */
	p = build(s);
	assert_string_equal(cgroup_of(p, 200), seed.cgroup);
	assert_string_equal(cgroup_of(p, 201), seed.cgroup);
	assert_null(cgroup_of(p, 300));
	evprof_profile__free(p);
	evprof_session__free(s);

	/* A seed of an older caller, without the field: still taken. */
	s = session(st);
	seed.sz = offsetof(struct evprof_session_seed, cgroup);
	assert_int_equal(evprof_session__seed(s, &seed), 0);
	sample(s, st, 200, 200, 10, 0);
	p = build(s);
	assert_null(cgroup_of(p, 200));
	evprof_profile__free(p);
	evprof_session__free(s);
}

/* An aggregate of tid in pid at time, its thread in cgroup cg (0: none). */
static void aggregate(struct evprof_session *s, uint32_t pid, uint32_t tid,
		      uint64_t time, uint64_t cg)
{
	const uint64_t ips[] = {(uint64_t)PERF_CONTEXT_USER, 0x401000};
	struct evprof_session_aggr a = {
	    .time = time,
	    .pid = pid,
	    .tid = tid,
	    .ips = ips,
	    .nr = 2,
	    .samples = 3,
	    .cpu_ns = 3000,
	    .cgroup = cg,
	};

	assert_int_equal(evprof__session_aggregate(s, &a), 0);
}

static void test_aggregates(void **state)
{
	uint64_t st = ST_CG & ~(uint64_t)PERF_SAMPLE_CGROUP;
	struct evprof_session *s = session(st);
	struct evprof_profile *p;
	struct rb b;

	(void)state;
	assert_int_equal(evprof_session__name_cgroup(s, 7, "/a"), 0);
	/* Made while recording: named by the side-band's record. */
	cgroup_record(s, 8, "/kubepods/burstable/podx/b", 15);
	rb_comm(&b, 100, 100, "app", 0, 1, SAMPLER);
	assert_int_equal(rb_feed(s, &b), 0);
	/* One batch, then a later one where the thread has moved. */
	aggregate(s, 100, 100, 10, 7);
	aggregate(s, 100, 101, 11, 7);
	aggregate(s, 100, 100, 20, 8);
	/* No cgroup (an "[unsampled]" sum): the thread keeps its own. */
	aggregate(s, 100, 101, 25, 0);
	aggregate(s, 102, 102, 12, 9); /* nothing names 9 */
	aggregate(s, 103, 103, 12, 0);
	p = build(s);
	assert_non_null(cgroup_of(p, 100));
	assert_non_null(cgroup_of(p, 101));
	assert_string_equal(cgroup_of(p, 100), "/kubepods/burstable/podx/b");
	assert_string_equal(cgroup_of(p, 101), "/a");
	assert_null(cgroup_of(p, 102));
	assert_null(cgroup_of(p, 103));
	evprof_profile__free(p);
	evprof_session__free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_latest_sample),
	    cmocka_unit_test(test_seed_fallback),
	    cmocka_unit_test(test_aggregates),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
