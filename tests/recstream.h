/* SPDX-License-Identifier: MIT */
/*
 * Builds perf records byte by byte, as the kernel lays them out in the ring,
 * for the tests that decode or feed them (include after <cmocka.h>):
 *
 *	struct rb b;
 *
 *	rb_begin(&b, PERF_RECORD_COMM, 0);
 *	rb_u32x2(&b, pid, tid);
 *	rb_str(&b, "name");
 *	rb_end(&b);		// header.size = b.len
 *	... b.words, b.len ...
 *
 * Fields are written in host order, as the kernel writes them. The caller
 * writes the body in the order of the ABI (perf_event.h describes each
 * record type); the builder only appends, pads and sizes, so a test's
 * expected values come from its own arguments, never from the decoder.
 */
#ifndef EVPROF_RECSTREAM_H
#define EVPROF_RECSTREAM_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <linux/perf_event.h>

struct rb {
	uint64_t words[1024]; /* u64 storage keeps the record 8-aligned */
	size_t len;	      /* bytes written, header included */
};

static inline uint8_t *rb_bytes(struct rb *b)
{
	return (uint8_t *)b->words;
}

static inline void rb_put(struct rb *b, const void *p, size_t n)
{
	assert_true(b->len + n <= sizeof(b->words));
	memcpy(rb_bytes(b) + b->len, p, n);
	b->len += n;
}

static inline void rb_u8(struct rb *b, uint8_t v)
{
	rb_put(b, &v, sizeof(v));
}

static inline void rb_u16(struct rb *b, uint16_t v)
{
	rb_put(b, &v, sizeof(v));
}

static inline void rb_u32(struct rb *b, uint32_t v)
{
	rb_put(b, &v, sizeof(v));
}

static inline void rb_u64(struct rb *b, uint64_t v)
{
	rb_put(b, &v, sizeof(v));
}

/* Two u32 in one u64 slot: pid/tid, cpu/res. */
static inline void rb_u32x2(struct rb *b, uint32_t x, uint32_t y)
{
	rb_u32(b, x);
	rb_u32(b, y);
}

static inline void rb_pad8(struct rb *b)
{
	while (b->len % 8)
		rb_u8(b, 0);
}

/* A string as the kernel writes it: NUL, then zeros up to 8 alignment. */
static inline void rb_str(struct rb *b, const char *s)
{
	rb_put(b, s, strlen(s) + 1);
	rb_pad8(b);
}

/* Starts a record: the header, its size left for rb_end. */
static inline void rb_begin(struct rb *b, uint32_t type, uint16_t misc)
{
	struct perf_event_header h = {.type = type, .misc = misc};

	b->len = 0;
	rb_put(b, &h, sizeof(h));
}

/* Writes header.size, whatever the length (to build bad records too). */
static inline void rb_set_size(struct rb *b, uint16_t size)
{
	memcpy(rb_bytes(b) + offsetof(struct perf_event_header, size), &size,
	       sizeof(size));
}

/* Ends a record: header.size is its length, a multiple of 8 as the ABI's. */
static inline void rb_end(struct rb *b)
{
	assert_int_equal(b->len % 8, 0);
	assert_true(b->len <= UINT16_MAX);
	rb_set_size(b, (uint16_t)b->len);
}

/* The sample_id trailer of a side-band record: pid, tid, time, cpu 0, id. */
static inline void rb_trailer(struct rb *b, uint32_t pid, uint32_t tid,
			      uint64_t time, uint64_t id)
{
	rb_u32x2(b, pid, tid);
	rb_u64(b, time);
	rb_u32x2(b, 0, 0);
	rb_u64(b, id);
}

/* A whole COMM record (exec: PERF_RECORD_MISC_COMM_EXEC) of event id. */
static inline void rb_comm(struct rb *b, uint32_t pid, uint32_t tid,
			   const char *name, int exec, uint64_t time,
			   uint64_t id)
{
	rb_begin(b, PERF_RECORD_COMM, exec ? PERF_RECORD_MISC_COMM_EXEC : 0);
	rb_u32x2(b, pid, tid);
	rb_str(b, name);
	rb_trailer(b, pid, tid, time, id);
	rb_end(b);
}

/* A whole FORK or EXIT record of event id. */
static inline void rb_task(struct rb *b, uint32_t type, uint32_t pid,
			   uint32_t ppid, uint32_t tid, uint32_t ptid,
			   uint64_t time, uint64_t id)
{
	rb_begin(b, type, 0);
	rb_u32x2(b, pid, ppid);
	rb_u32x2(b, tid, ptid);
	rb_u64(b, time);
	rb_trailer(b, pid, tid, time, id);
	rb_end(b);
}

#endif /* EVPROF_RECSTREAM_H */
