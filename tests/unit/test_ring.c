// SPDX-License-Identifier: MIT
/*
 * Ring reader on a fake control page + data area: the test plays the
 * kernel, writing records byte by byte and publishing data_head.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "cases.h"
#include "perf/ring.h"
#include "recorder/rings.h"

#define DATA_SIZE 256

static struct perf_event_mmap_page page;
static _Alignas(8) unsigned char data[DATA_SIZE];

static int setup(void **state)
{
	(void)state;
	memset(&page, 0, sizeof(page));
	memset(data, 0xee, sizeof(data));
	return 0;
}

/* Starts head and tail at pos, as if a reader had stopped there. */
static struct evprof_ring *ring_at(uint64_t pos)
{
	struct evprof_ring *r;

	page.data_tail = pos;
	page.data_head = pos;
	r = evprof__ring_from_mem(&page, data, DATA_SIZE);
	assert_non_null(r);
	return r;
}

/* Builds a record of type and size whose body bytes are seed, seed+1.. */
static void make_rec(unsigned char *buf, uint32_t type, uint16_t size,
		     unsigned char seed)
{
	struct perf_event_header h = {.type = type, .misc = 0, .size = size};

	memcpy(buf, &h, sizeof(h));
	for (size_t i = sizeof(h); i < size; i++)
		buf[i] = (unsigned char)(seed + i);
}

/* The "kernel": writes len bytes at free-running position pos. */
static void kwrite(uint64_t pos, const void *src, size_t len)
{
	const unsigned char *s = src;

	for (size_t i = 0; i < len; i++)
		data[(pos + i) % DATA_SIZE] = s[i];
}

static void kpublish(uint64_t head)
{
	page.data_head = head;
}

static void test_wrapped_record(void **state)
{
	unsigned char rec[48], after[16];
	struct evprof_ring *r;
	const void *got;
	size_t size;

	(void)state;
	/* 16 bytes before the end: the record's header and first 8 body
	 * bytes sit at the end, the other 32 bytes at the start. */
	r = ring_at(2 * DATA_SIZE - 16);
	make_rec(rec, PERF_RECORD_SAMPLE, sizeof(rec), 0x10);
	make_rec(after, PERF_RECORD_SAMPLE, sizeof(after), 0x80);
	kwrite(2 * DATA_SIZE - 16, rec, sizeof(rec));
	kwrite(2 * DATA_SIZE + 32, after, sizeof(after));
	kpublish(2 * DATA_SIZE + 48);
	/* Sanity of the fixture itself: it really straddles the end. */
	assert_memory_equal(data + DATA_SIZE - 16, rec, 16);
	assert_memory_equal(data, rec + 16, 32);

	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(size, sizeof(rec));
	assert_memory_equal(got, rec, sizeof(rec));
	/* A copy, not a pointer into the data area. */
	assert_true((const unsigned char *)got < data ||
		    (const unsigned char *)got >= data + DATA_SIZE);
	assert_int_equal((uintptr_t)got % 8, 0);

	/* The next one does not wrap: handed out in place. */
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(size, sizeof(after));
	assert_ptr_equal(got, data + 32);
	assert_memory_equal(got, after, sizeof(after));

	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	assert_int_equal(page.data_tail, 2 * DATA_SIZE + 48);
	evprof_ring__free(r);
}

static void test_header_wraps(void **state)
{
	unsigned char rec[24];
	struct evprof_ring *r;
	const void *got;
	size_t size;

	(void)state;
	/* Record starts exactly at the end: everything lands at offset 0. */
	r = ring_at(DATA_SIZE);
	make_rec(rec, 77, sizeof(rec), 1);
	kwrite(DATA_SIZE, rec, sizeof(rec));
	kpublish(DATA_SIZE + sizeof(rec));
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(size, sizeof(rec));
	assert_memory_equal(got, rec, sizeof(rec));
	assert_ptr_equal(got, data);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	evprof_ring__free(r);
}

static void test_many_records(void **state)
{
	unsigned char rec[64];
	struct evprof_ring_stats st = {.sz = sizeof(st)};
	struct evprof_ring *r;
	uint64_t pos = 40; /* not at a power-of-two boundary */
	unsigned int n = 0;

	(void)state;
	r = ring_at(pos);
	/* 30 batches of 5 records (sizes 8..64): the ring wraps many
	 * times; each batch is at most 5 * 64 = 320 > 256 bytes, so batches
	 * are cut to what fits, as a kernel writer would. */
	for (int batch = 0; batch < 30; batch++) {
		uint64_t start = pos;
		unsigned int first = n, k;

		for (k = 0; k < 5; k++) {
			uint16_t sz = (uint16_t)(8 * (1 + (n + k) % 8));

			if (pos + sz - start > DATA_SIZE)
				break;
			make_rec(rec, 100 + (n + k) % 7, sz,
				 (unsigned char)(n + k));
			kwrite(pos, rec, sz);
			pos += sz;
		}
		kpublish(pos);
		assert_int_equal(evprof_ring__pending(r), pos - start);
		for (unsigned int j = first; j < first + k; j++) {
			uint16_t sz = (uint16_t)(8 * (1 + j % 8));
			const void *got;
			size_t size;

			make_rec(rec, 100 + j % 7, sz, (unsigned char)j);
			assert_int_equal(evprof_ring__next(r, &got, &size), 1);
			assert_int_equal(size, sz);
			assert_memory_equal(got, rec, sz);
		}
		n += k;
		{
			const void *got;
			size_t size;

			assert_int_equal(evprof_ring__next(r, &got, &size), 0);
		}
		assert_int_equal(page.data_tail, pos);
		assert_int_equal(evprof_ring__pending(r), 0);
	}
	evprof_ring__stats(r, &st);
	assert_int_equal(st.records, n);
	assert_true(n >= 100);
	assert_int_equal(st.malformed, 0);
	evprof_ring__free(r);
}

static void test_malformed_size(void **state)
{
	unsigned char good[16], bad[16];
	struct evprof_ring_stats st = {.sz = sizeof(st)};
	struct evprof_ring *r;
	const void *got;
	size_t size;

	(void)state;
	r = ring_at(0);
	make_rec(good, PERF_RECORD_SAMPLE, sizeof(good), 3);
	kwrite(0, good, sizeof(good));
	/* size 4 < header: the rest cannot be framed, skipped to head. */
	make_rec(bad, PERF_RECORD_SAMPLE, 16, 9);
	((struct perf_event_header *)bad)->size = 4;
	kwrite(16, bad, sizeof(bad));
	kwrite(32, good, sizeof(good));
	kpublish(48);
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_memory_equal(got, good, sizeof(good));
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	assert_int_equal(page.data_tail, 48);
	evprof_ring__stats(r, &st);
	assert_int_equal(st.malformed, 1);
	assert_int_equal(st.records, 1);

	/* size larger than what the kernel published. */
	make_rec(bad, PERF_RECORD_SAMPLE, 16, 9);
	((struct perf_event_header *)bad)->size = 200;
	kwrite(48, bad, sizeof(bad));
	kpublish(64);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	assert_int_equal(page.data_tail, 64);

	/* size 0 and a size that is not a multiple of 8. */
	((struct perf_event_header *)bad)->size = 0;
	kwrite(64, bad, sizeof(bad));
	kpublish(80);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	((struct perf_event_header *)bad)->size = 12;
	kwrite(80, bad, sizeof(bad));
	kpublish(96);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);

	/* A head that ran more than a whole buffer past the tail. */
	kpublish(96 + DATA_SIZE + 8);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);

	/* Reading resumes at the next well-formed record. */
	kwrite(96 + DATA_SIZE + 8, good, sizeof(good));
	kpublish(96 + DATA_SIZE + 24);
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_memory_equal(got, good, sizeof(good));

	evprof_ring__stats(r, &st);
	assert_int_equal(st.malformed, 5);
	assert_int_equal(st.records, 2);
	evprof_ring__free(r);
}

/*
 * The recorder's stats add each ring's skips to what they hold: record
 * says them (a ring that lost its boundaries is not skipped in silence).
 */
static void test_rings_stats_malformed(void **state)
{
	unsigned char bad[16];
	struct evprof_recorder_stats st = {.sz = sizeof(st),
					   .ring_malformed = 2};
	struct evprof_ring *r = ring_at(0);
	struct evprof__rings rs = {.v = &r, .n = 1};
	const void *got;
	size_t size;

	(void)state;
	make_rec(bad, PERF_RECORD_SAMPLE, 16, 9);
	((struct perf_event_header *)bad)->size = 12;
	kwrite(0, bad, sizeof(bad));
	kpublish(16);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	evprof__rings_stats(&rs, &st);
	assert_int_equal(st.ring_malformed, 3);
	assert_int_equal(st.ring_lost_events, 0);
	evprof_ring__free(r);
}

/*
 * A kernel that keeps to the protocol: with the ring as full as data_tail
 * lets it be, it may write anywhere from head up to data_tail + size.
 * Scribbles over all of that, as a fast writer would.
 */
static void kscribble_free(uint64_t head)
{
	for (uint64_t pos = head; pos < page.data_tail + DATA_SIZE; pos++)
		data[pos % DATA_SIZE] = 0xa5;
}

static void test_tail_advances_mid_batch(void **state)
{
	unsigned char a[32], b[24];
	struct evprof_ring *r;
	const void *got;
	size_t size;

	(void)state;
	r = ring_at(8);
	make_rec(a, PERF_RECORD_SAMPLE, sizeof(a), 0x40);
	make_rec(b, PERF_RECORD_COMM, sizeof(b), 0x60);
	kwrite(8, a, sizeof(a));
	kwrite(40, b, sizeof(b));
	kpublish(64);

	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	/* a is ours until the next call: its space is not given back. */
	assert_int_equal(page.data_tail, 8);
	kscribble_free(64);
	assert_memory_equal(got, a, sizeof(a));
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	/* a is released though b is still unread by the caller and the
	 * ring is not empty; b's bytes stay valid. */
	assert_int_equal(page.data_tail, 40);
	assert_int_equal(page.data_head, 64);
	kscribble_free(64);
	assert_memory_equal(got, b, sizeof(b));
	/* The kernel appends while we read: never empty, yet b goes back
	 * as soon as the next record is asked for. */
	kwrite(64, a, sizeof(a));
	kpublish(96);
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(page.data_tail, 64);
	kscribble_free(96);
	assert_memory_equal(got, a, sizeof(a));
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	assert_int_equal(page.data_tail, 96);
	/* Empty again: no store while nothing moves. */
	page.data_tail = 12345;
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	assert_int_equal(page.data_tail, 12345);
	evprof_ring__free(r);
}

static void test_wrapped_record_valid_until_next_call(void **state)
{
	unsigned char rec[48], after[16];
	struct evprof_ring *r;
	const void *got;
	size_t size;

	(void)state;
	/* rec straddles the end (16 + 32 bytes), after follows in place. */
	r = ring_at(2 * DATA_SIZE - 16);
	make_rec(rec, PERF_RECORD_SAMPLE, sizeof(rec), 0x20);
	make_rec(after, PERF_RECORD_SAMPLE, sizeof(after), 0x90);
	kwrite(2 * DATA_SIZE - 16, rec, sizeof(rec));
	kwrite(2 * DATA_SIZE + 32, after, sizeof(after));
	kpublish(2 * DATA_SIZE + 48);

	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(size, sizeof(rec));
	/* Held: its space is not released, whatever the kernel writes
	 * into the free part leaves it (and its copy) whole. */
	assert_int_equal(page.data_tail, 2 * DATA_SIZE - 16);
	kscribble_free(2 * DATA_SIZE + 48);
	assert_memory_equal(got, rec, sizeof(rec));
	assert_memory_equal(data + DATA_SIZE - 16, rec, 16);

	/* The next call releases the wrapped record, and only it. */
	assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(page.data_tail, 2 * DATA_SIZE + 32);
	assert_ptr_equal(got, data + 32);
	kscribble_free(2 * DATA_SIZE + 48);
	assert_memory_equal(got, after, sizeof(after));
	/* The kernel may now reuse the wrapped record's space. */
	assert_int_equal(data[0], 0xa5);
	assert_int_equal(data[DATA_SIZE - 16], 0xa5);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	assert_int_equal(page.data_tail, 2 * DATA_SIZE + 48);
	evprof_ring__free(r);
}

static void put_u64(unsigned char *p, uint64_t v)
{
	memcpy(p, &v, sizeof(v));
}

static void test_lost_counting(void **state)
{
	unsigned char lost[24], lost_s[16], sample[16];
	struct evprof_ring_stats st = {.sz = sizeof(st)};
	struct evprof_ring *r;
	const void *got;
	size_t size;
	uint64_t pos = 0;

	(void)state;
	r = ring_at(0);
	make_rec(lost, PERF_RECORD_LOST, sizeof(lost), 0);
	put_u64(lost + 8, 1234); /* id */
	put_u64(lost + 16, 5);	 /* lost */
	kwrite(pos, lost, sizeof(lost));
	pos += sizeof(lost);
	put_u64(lost + 16, 7);
	kwrite(pos, lost, sizeof(lost));
	pos += sizeof(lost);
	make_rec(lost_s, PERF_RECORD_LOST_SAMPLES, sizeof(lost_s), 0);
	put_u64(lost_s + 8, 3);
	kwrite(pos, lost_s, sizeof(lost_s));
	pos += sizeof(lost_s);
	make_rec(sample, PERF_RECORD_SAMPLE, sizeof(sample), 0);
	kwrite(pos, sample, sizeof(sample));
	pos += sizeof(sample);
	kpublish(pos);

	for (int i = 0; i < 4; i++)
		assert_int_equal(evprof_ring__next(r, &got, &size), 1);
	assert_int_equal(evprof_ring__next(r, &got, &size), 0);
	evprof_ring__stats(r, &st);
	assert_int_equal(st.records, 4);
	assert_int_equal(st.lost_records, 2);
	assert_int_equal(st.lost_events, 12);
	assert_int_equal(st.lost_samples, 3);
	assert_int_equal(st.malformed, 0);
	evprof_ring__free(r);
}

static void test_bad_sizes_rejected(void **state)
{
	(void)state;
	errno = 0;
	assert_null(evprof__ring_from_mem(&page, data, 100));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(evprof__ring_from_mem(&page, data, 0));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(evprof__ring_from_mem(&page, data, 4));
	assert_int_equal(errno, EINVAL);
	errno = 0;
	assert_null(evprof_ring__open(-1, 1));
	assert_int_equal(errno, EINVAL);
	/* 3 data pages: not a power of two, refused before any mmap. */
	errno = 0;
	assert_null(evprof_ring__open(0, 3));
	assert_int_equal(errno, EINVAL);
	evprof_ring__free(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test_setup(test_wrapped_record, setup),
	    cmocka_unit_test_setup(test_header_wraps, setup),
	    cmocka_unit_test_setup(test_many_records, setup),
	    cmocka_unit_test_setup(test_malformed_size, setup),
	    cmocka_unit_test_setup(test_rings_stats_malformed, setup),
	    cmocka_unit_test_setup(test_tail_advances_mid_batch, setup),
	    cmocka_unit_test_setup(test_wrapped_record_valid_until_next_call,
				   setup),
	    cmocka_unit_test_setup(test_lost_counting, setup),
	    cmocka_unit_test_setup(test_bad_sizes_rejected, setup),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
