// SPDX-License-Identifier: MIT
/*
 * Sized stats structs (include/evprof/common.h): a getter writes no byte
 * past the caller's sz, fills every byte up to it, and sets sz to what it
 * filled. Each struct is read into a buffer poisoned with a canary pattern,
 * as a caller compiled with an older (shorter), the same, or a newer
 * (longer) struct would pass it.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/recorder.h>
#include <evprof/ring.h>
#include <evprof/session.h>

#include "cases.h"
#include "perf/ring.h"

#define CANARY 0xa5
#define BUF    512

typedef int (*get_fn)(const void *obj, void *st);

static size_t sz_of(const unsigned char *buf)
{
	size_t sz;

	memcpy(&sz, buf, sizeof(sz));
	return sz;
}

/* buf poisoned with CANARY, then sz at its head. */
static void poison(unsigned char *buf, size_t sz)
{
	memset(buf, CANARY, BUF);
	memcpy(buf, &sz, sizeof(sz));
}

static void assert_canary(const unsigned char *buf, size_t from)
{
	for (size_t i = from; i < BUF; i++)
		if (buf[i] != CANARY)
			fail_msg("byte %zu written past sz %zu", i, from);
}

/*
 * The whole check for one getter of a struct of full bytes; cut is the
 * offset of a field past the first, where an older caller's struct ends.
 */
static void check_sized(get_fn get, const void *obj, size_t full, size_t cut)
{
	unsigned char ref[BUF], buf[BUF];

	assert_true(cut > sizeof(size_t) && cut < full && full < BUF);
	/* The reference: the full struct, zeroed first. */
	memset(ref, 0, sizeof(ref));
	memcpy(ref, &full, sizeof(full));
	assert_int_equal(get(obj, ref), 0);
	assert_int_equal(sz_of(ref), full);

	/* Same size: every byte written, none past it. */
	poison(buf, full);
	assert_int_equal(get(obj, buf), 0);
	assert_int_equal(sz_of(buf), full);
	assert_memory_equal(buf, ref, full);
	assert_canary(buf, full);

	/* An older caller: up to cut and no further. */
	poison(buf, cut);
	assert_int_equal(get(obj, buf), 0);
	assert_int_equal(sz_of(buf), cut);
	assert_memory_equal(buf + sizeof(size_t), ref + sizeof(size_t),
			    cut - sizeof(size_t));
	assert_canary(buf, cut);

	/* A newer caller: what this library knows, and sz says so. */
	poison(buf, full + 16);
	assert_int_equal(get(obj, buf), 0);
	assert_int_equal(sz_of(buf), full);
	assert_memory_equal(buf + sizeof(size_t), ref + sizeof(size_t),
			    full - sizeof(size_t));
	assert_canary(buf, full);

	/* An sz that does not cover sz: refused, nothing written. */
	poison(buf, sizeof(size_t) - 1);
	assert_int_equal(get(obj, buf), -EINVAL);
	assert_canary(buf, sizeof(size_t));
	assert_int_equal(get(NULL, ref), -EINVAL);
	assert_int_equal(get(obj, NULL), -EINVAL);
}

static int ring_get(const void *o, void *st)
{
	return evprof_ring__stats(o, st);
}

static int session_get(const void *o, void *st)
{
	return evprof_session__stats(o, st);
}

static int profile_get(const void *o, void *st)
{
	return evprof_profile__stats(o, st);
}

static int recorder_get(const void *o, void *st)
{
	return evprof_recorder__stats(o, st);
}

static void test_ring(void **state)
{
	static struct perf_event_mmap_page page;
	static _Alignas(8) unsigned char data[256];
	struct perf_event_header h = {.type = 9, .size = sizeof(h)};
	struct evprof_ring_stats st = {.sz = sizeof(st)};
	struct evprof_ring *r;
	const void *rec;
	size_t size;

	(void)state;
	memcpy(data, &h, sizeof(h));
	page.data_head = sizeof(h);
	r = evprof__ring_from_mem(&page, data, sizeof(data));
	assert_non_null(r);
	assert_int_equal(evprof_ring__next(r, &rec, &size), 1);
	check_sized(ring_get, r, sizeof(st),
		    offsetof(struct evprof_ring_stats, lost_samples));
	assert_int_equal(evprof_ring__stats(r, &st), 0);
	assert_int_equal(st.records, 1);
	evprof_ring__free(r);
}

static void test_session(void **state)
{
	struct evprof_session_opts o = {.sz = sizeof(o)};
	struct evprof_session *s = evprof_session__new(&o);

	(void)state;
	assert_non_null(s);
	check_sized(session_get, s, sizeof(struct evprof_session_stats),
		    offsetof(struct evprof_session_stats, reads_rejected));
	evprof_session__free(s);
}

static void test_profile(void **state)
{
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p = evprof_profile__new(NULL);

	(void)state;
	assert_non_null(p);
	assert_true(evprof_profile__add_process(p, 42, "app", 0) >= 0);
	check_sized(profile_get, p, sizeof(st),
		    offsetof(struct evprof_profile_stats, timeline_rows));
	assert_int_equal(evprof_profile__stats(p, &st), 0);
	assert_int_equal(st.processes, 1);
	evprof_profile__free(p);
}

static void test_recorder(void **state)
{
	char *const argv[] = {"true", NULL};
	struct evprof_recorder_target t = {.sz = sizeof(t), .argv = argv};
	struct evprof_recorder_opts o = {.sz = sizeof(o),
					 .mode = EVPROF_RECORDER_TASK};
	struct evprof_recorder *r;

	(void)state;
	r = evprof_recorder__new(&t, "task-clock", &o);
	if (!r)
		skip_because("no recorder on task-clock here (perf_event_open "
			     "refused)");
	check_sized(recorder_get, r, sizeof(struct evprof_recorder_stats),
		    offsetof(struct evprof_recorder_stats, start_mono_ns));
	evprof_recorder__free(r);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_ring),
	    cmocka_unit_test(test_session),
	    cmocka_unit_test(test_profile),
	    cmocka_unit_test(test_recorder),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
