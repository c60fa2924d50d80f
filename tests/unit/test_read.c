// SPDX-License-Identifier: MIT
/* Group read decoding and scaling, on hand-built u64 arrays. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>
#include <linux/perf_event.h>

#include <evprof/read.h>

#include "cases.h"

#define ENA PERF_FORMAT_TOTAL_TIME_ENABLED
#define RUN PERF_FORMAT_TOTAL_TIME_RUNNING
#define FID PERF_FORMAT_ID
#define GRP PERF_FORMAT_GROUP
#define LST PERF_FORMAT_LOST

/* Parses from an odd address so only unaligned-safe loads pass ASan/UBSan. */
static int parse_unaligned(struct evprof_snapshot *snap, const uint64_t *words,
			   size_t len, uint64_t read_format)
{
	static uint8_t store[8 * 256 + 1];

	assert_true(len < sizeof(store));
	memcpy(store + 1, words, len);
	return evprof_snapshot__parse(snap, store + 1, len, read_format);
}

static void test_read_size(void **state)
{
	(void)state;
	assert_int_equal(evprof_read_size(0, 0), 8);
	assert_int_equal(evprof_read_size(0, 7), 8); /* nr ignored */
	assert_int_equal(evprof_read_size(ENA | RUN | FID | LST, 0), 40);
	assert_int_equal(evprof_read_size(GRP, 1), 16);
	assert_int_equal(evprof_read_size(GRP | ENA | RUN | FID, 3), 72);
	assert_int_equal(evprof_read_size(GRP | FID | LST, 2), 56);
	assert_int_equal(evprof_read_size(GRP | ENA | RUN | FID | LST, 64),
			 8 * (3 + 64 * 3));
}

/* The layout perf record uses: 3 members, leader first, all fields. */
static void test_group_full_layout(void **state)
{
	const uint64_t words[] = {
	    3,		   /* nr */
	    1000, 1000,	   /* enabled, running */
	    11,	  101,	0, /* leader: value, id, lost */
	    22,	  102,	5, /* members */
	    33,	  103,	0,
	};
	struct evprof_snapshot snap;
	const struct evprof_counter_value *v;
	uint64_t val = 0;

	(void)state;
	assert_int_equal(parse_unaligned(&snap, words, sizeof(words),
					 GRP | ENA | RUN | FID | LST),
			 sizeof(words));
	assert_int_equal(snap.nr, 3);
	assert_int_equal(snap.time_enabled, 1000);
	assert_int_equal(snap.time_running, 1000);
	assert_int_equal(snap.values[0].id, 101);
	assert_int_equal(snap.values[2].raw, 33);
	/* A non-leader member is found by its id, not its position. */
	v = evprof_snapshot__find(&snap, 102);
	assert_non_null(v);
	assert_int_equal(v->raw, 22);
	assert_int_equal(v->lost, 5);
	assert_true(v->counted);
	assert_int_equal(v->scaled, 22);
	assert_int_equal(evprof_snapshot__value(&snap, 103, &val), 0);
	assert_int_equal(val, 33);
	assert_null(evprof_snapshot__find(&snap, 104));
	assert_int_equal(evprof_snapshot__value(&snap, 104, &val), -ENOENT);
}

/* Multiplexed group: every member scaled by the group's enabled/running. */
static void test_group_scaled(void **state)
{
	const uint64_t words[] = {2, 300, 100, 7, 41, 50, 42};
	struct evprof_snapshot snap;
	uint64_t val = 0;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | ENA | RUN | FID),
	    sizeof(words));
	assert_int_equal(evprof_snapshot__value(&snap, 41, &val), 0);
	assert_int_equal(val, 21);
	assert_int_equal(evprof_snapshot__value(&snap, 42, &val), 0);
	assert_int_equal(val, 150);
	assert_int_equal(snap.values[1].raw, 50);
	assert_int_equal(snap.values[1].lost, 0);
}

static void test_group_no_id_no_times(void **state)
{
	const uint64_t words[] = {2, 5, 6};
	struct evprof_snapshot snap;

	(void)state;
	assert_int_equal(parse_unaligned(&snap, words, sizeof(words), GRP),
			 sizeof(words));
	assert_int_equal(snap.nr, 2);
	assert_int_equal(snap.values[0].raw, 5);
	assert_int_equal(snap.values[1].raw, 6);
	assert_int_equal(snap.values[1].id, 0);
	assert_int_equal(snap.values[1].scaled, 6);
	assert_true(snap.values[1].counted);
	assert_int_equal(snap.time_enabled, 0);
	/* Without ids nothing can be looked up, not even id 0. */
	assert_null(evprof_snapshot__find(&snap, 0));
}

static void test_group_lost_only(void **state)
{
	const uint64_t words[] = {2, 5, 9, 6, 10};
	struct evprof_snapshot snap;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | LST),
	    sizeof(words));
	assert_int_equal(snap.values[0].lost, 9);
	assert_int_equal(snap.values[1].raw, 6);
	assert_int_equal(snap.values[1].lost, 10);
}

static void test_group_enabled_only(void **state)
{
	const uint64_t words[] = {1, 500, 8, 77};
	struct evprof_snapshot snap;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | ENA | FID),
	    sizeof(words));
	assert_int_equal(snap.time_enabled, 500);
	assert_int_equal(snap.time_running, 0);
	assert_int_equal(snap.values[0].id, 77);
	/* No running time to scale by: the raw value stands. */
	assert_true(snap.values[0].counted);
	assert_int_equal(snap.values[0].scaled, 8);
}

static void test_group_running_only_zero(void **state)
{
	const uint64_t words[] = {1, 0, 8, 77};
	struct evprof_snapshot snap;
	uint64_t val = 1;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | RUN | FID),
	    sizeof(words));
	assert_false(snap.values[0].counted);
	assert_int_equal(evprof_snapshot__value(&snap, 77, &val),
			 -EVPROF_ERR_NOT_COUNTED);
}

/* Every non-group layout: value, then enabled, running, id, lost. */
static void test_single_layouts(void **state)
{
	struct evprof_snapshot snap;
	const uint64_t all[] = {900, 40, 20, 12345, 3};
	const uint64_t value_only[] = {900};
	const uint64_t value_id[] = {900, 12345};
	const uint64_t value_times[] = {900, 40, 20};
	const uint64_t value_lost[] = {900, 3};
	uint64_t val = 0;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, all, sizeof(all), ENA | RUN | FID | LST),
	    40);
	assert_int_equal(snap.nr, 1);
	assert_int_equal(snap.values[0].raw, 900);
	assert_int_equal(snap.time_enabled, 40);
	assert_int_equal(snap.time_running, 20);
	assert_int_equal(snap.values[0].id, 12345);
	assert_int_equal(snap.values[0].lost, 3);
	assert_int_equal(evprof_snapshot__value(&snap, 12345, &val), 0);
	assert_int_equal(val, 1800);

	assert_int_equal(parse_unaligned(&snap, value_only, 8, 0), 8);
	assert_int_equal(snap.values[0].raw, 900);
	assert_int_equal(snap.values[0].scaled, 900);

	assert_int_equal(parse_unaligned(&snap, value_id, 16, FID), 16);
	assert_int_equal(snap.values[0].id, 12345);

	assert_int_equal(parse_unaligned(&snap, value_times, 24, ENA | RUN),
			 24);
	assert_int_equal(snap.values[0].scaled, 1800);

	assert_int_equal(parse_unaligned(&snap, value_lost, 16, LST), 16);
	assert_int_equal(snap.values[0].lost, 3);
	assert_int_equal(snap.values[0].id, 0);

	/* A longer buffer is fine: only the layout's bytes are consumed. */
	assert_int_equal(parse_unaligned(&snap, all, sizeof(all), 0), 8);
}

/* Every GROUP layout, built word by word from the format bits. */
static void test_every_group_layout(void **state)
{
	(void)state;
	for (uint64_t bits = 0; bits < 16; bits++) {
		uint64_t rf = GRP | ((bits & 1) ? ENA : 0) |
			      ((bits & 2) ? RUN : 0) | ((bits & 4) ? FID : 0) |
			      ((bits & 8) ? LST : 0);
		uint64_t words[32];
		size_t n = 0;
		struct evprof_snapshot snap;

		words[n++] = 3;
		if (rf & ENA)
			words[n++] = 90;
		if (rf & RUN)
			words[n++] = 30;
		for (int i = 0; i < 3; i++) {
			words[n++] = 1000 + i;
			if (rf & FID)
				words[n++] = 500 + i;
			if (rf & LST)
				words[n++] = 7 + i;
		}
		assert_int_equal(parse_unaligned(&snap, words, n * 8, rf),
				 n * 8);
		assert_int_equal(evprof_read_size(rf, 3), n * 8);
		assert_int_equal(snap.nr, 3);
		for (int i = 0; i < 3; i++) {
			const struct evprof_counter_value *v = &snap.values[i];

			assert_int_equal(v->raw, 1000 + i);
			assert_int_equal(v->id, (rf & FID) ? 500 + i : 0);
			assert_int_equal(v->lost, (rf & LST) ? 7 + i : 0);
			/* Scaled by 90/30 only when both times are there. */
			assert_int_equal(v->scaled,
					 (rf & ENA) && (rf & RUN)
					     ? 3 * (1000 + (uint64_t)i)
					     : 1000 + (uint64_t)i);
			assert_true(v->counted);
		}
		if (rf & FID) {
			const struct evprof_counter_value *v =
			    evprof_snapshot__find(&snap, 501);

			assert_ptr_equal(v, &snap.values[1]);
		}
		/* Every length short of the layout is refused. */
		for (size_t len = 0; len < n * 8; len++)
			assert_int_equal(parse_unaligned(&snap, words, len, rf),
					 -EVPROF_ERR_TRUNCATED);
	}
}

static void test_single_truncated(void **state)
{
	const uint64_t all[] = {900, 40, 20, 12345, 3};
	struct evprof_snapshot snap;

	(void)state;
	for (size_t len = 0; len < sizeof(all); len++)
		assert_int_equal(
		    parse_unaligned(&snap, all, len, ENA | RUN | FID | LST),
		    -EVPROF_ERR_TRUNCATED);
}

static void test_group_nr_bounds(void **state)
{
	static uint64_t words[1 + 65 * 2];
	struct evprof_snapshot snap;

	(void)state;
	words[0] = 0;
	assert_int_equal(parse_unaligned(&snap, words, 8, GRP),
			 -EVPROF_ERR_MALFORMED);
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | FID),
	    -EVPROF_ERR_MALFORMED);

	for (int i = 0; i < 65; i++) {
		words[1 + 2 * i] = (uint64_t)i * 10;
		words[2 + 2 * i] = 9000 + (uint64_t)i;
	}
	words[0] = EVPROF_SNAPSHOT_MAX + 1;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | FID), -E2BIG);
	words[0] = UINT64_MAX;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | FID), -E2BIG);

	/* Exactly the maximum is accepted; the last member is reachable. */
	words[0] = EVPROF_SNAPSHOT_MAX;
	assert_int_equal(
	    parse_unaligned(&snap, words, 8 * (1 + 64 * 2), GRP | FID),
	    8 * (1 + 64 * 2));
	assert_int_equal(snap.nr, 64);
	assert_int_equal(evprof_snapshot__find(&snap, 9063)->raw, 630);
}

static void test_unknown_format_bits(void **state)
{
	const uint64_t words[] = {1, 2, 3, 4, 5, 6, 7, 8};
	struct evprof_snapshot snap;

	(void)state;
	assert_int_equal(parse_unaligned(&snap, words, sizeof(words), 1U << 5),
			 -EVPROF_ERR_MALFORMED);
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | (1ULL << 63)),
	    -EVPROF_ERR_MALFORMED);
}

/* A group that never ran has no value: not 0, not a division by zero. */
static void test_not_counted(void **state)
{
	const uint64_t words[] = {2, 0, 0, 0, 41, 0, 42};
	struct evprof_snapshot snap;
	uint64_t val = 99;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | ENA | RUN | FID),
	    sizeof(words));
	assert_false(snap.values[0].counted);
	assert_false(snap.values[1].counted);
	assert_int_equal(evprof_snapshot__value(&snap, 42, &val),
			 -EVPROF_ERR_NOT_COUNTED);
	assert_int_equal(val, 99); /* untouched */

	val = 99;
	assert_int_equal(evprof_scale(123, 1000, 0, &val),
			 -EVPROF_ERR_NOT_COUNTED);
	assert_int_equal(val, 0);
	assert_int_equal(evprof_scale(0, 0, 0, &val), -EVPROF_ERR_NOT_COUNTED);
}

static void test_scale(void **state)
{
	uint64_t out = 0;

	(void)state;
	/* running >= enabled: raw unchanged. */
	assert_int_equal(evprof_scale(UINT64_MAX, 1000, 1001, &out), 0);
	assert_int_equal(out, UINT64_MAX);
	assert_int_equal(evprof_scale(77, 50, 50, &out), 0);
	assert_int_equal(out, 77);
	/* running > enabled (rounding of the two clocks): still raw. */
	assert_int_equal(evprof_scale(10, 3, 4, &out), 0);
	assert_int_equal(out, 10);
	/* 10 * 4 / 3 = 13.33..., truncated. */
	assert_int_equal(evprof_scale(10, 4, 3, &out), 0);
	assert_int_equal(out, 13);
	/*
	 * 2^63 * 6 overflows 64 bits; the result 2^63 * 6 / 4 = 3 * 2^62 =
	 * 0xc000000000000000 does not.
	 */
	assert_int_equal(evprof_scale(1ULL << 63, 6, 4, &out), 0);
	assert_int_equal(out, 0xc000000000000000ULL);
	/* 10^18 * 30 = 3 * 10^19 > 2^64; / 7 = 4285714285714285714.28... */
	assert_int_equal(evprof_scale(1000000000000000000ULL, 30, 7, &out), 0);
	assert_int_equal(out, 4285714285714285714ULL);
	/* 2^63 * 4 / 1 = 2^65: saturates. */
	assert_int_equal(evprof_scale(1ULL << 63, 4, 1, &out), 0);
	assert_int_equal(out, UINT64_MAX);
	/* (2^64 - 1) * 3 / 2 saturates too. */
	assert_int_equal(evprof_scale(UINT64_MAX, 3, 2, &out), 0);
	assert_int_equal(out, UINT64_MAX);
}

/* Snapshot members carry the scaled value, saturated the same way. */
static void test_snapshot_scaled_overflow(void **state)
{
	const uint64_t words[] = {2, 6, 4, 1ULL << 63, 1, UINT64_MAX, 2};
	struct evprof_snapshot snap;
	uint64_t val = 0;

	(void)state;
	assert_int_equal(
	    parse_unaligned(&snap, words, sizeof(words), GRP | ENA | RUN | FID),
	    sizeof(words));
	assert_int_equal(evprof_snapshot__value(&snap, 1, &val), 0);
	assert_int_equal(val, 0xc000000000000000ULL);
	assert_int_equal(evprof_snapshot__value(&snap, 2, &val), 0);
	assert_int_equal(val, UINT64_MAX);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_read_size),
	    cmocka_unit_test(test_group_full_layout),
	    cmocka_unit_test(test_group_scaled),
	    cmocka_unit_test(test_group_no_id_no_times),
	    cmocka_unit_test(test_group_lost_only),
	    cmocka_unit_test(test_group_enabled_only),
	    cmocka_unit_test(test_group_running_only_zero),
	    cmocka_unit_test(test_single_layouts),
	    cmocka_unit_test(test_every_group_layout),
	    cmocka_unit_test(test_single_truncated),
	    cmocka_unit_test(test_group_nr_bounds),
	    cmocka_unit_test(test_unknown_format_bits),
	    cmocka_unit_test(test_not_counted),
	    cmocka_unit_test(test_scale),
	    cmocka_unit_test(test_snapshot_scaled_overflow),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
