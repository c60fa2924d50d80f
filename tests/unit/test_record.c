// SPDX-License-Identifier: MIT
/* Record decoding from hand-built bytes: every type, trailers, bad input. */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <evprof/read.h>
#include <evprof/record.h>

#include "cases.h"
#include "recstream.h"

#define BRANCH_HW_INDEX (1ULL << 17)
#define BRANCH_COUNTERS (1ULL << 19)
#define ALL_SAMPLE_BITS ((1ULL << 25) - 1)
#define SID_BITS                                                               \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID |                 \
	 PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* Trailer values: distinct, so a field read from the wrong slot shows. */
#define SID_PID	   0x501
#define SID_TID	   0x502
#define SID_TIME   0x7000000000000001ULL
#define SID_ID	   0x1d1d
#define SID_STREAM 0x5e5e
#define SID_CPU	   3

static void rb_sample_id(struct rb *b, uint64_t st)
{
	if (st & PERF_SAMPLE_TID) {
		rb_u32(b, SID_PID);
		rb_u32(b, SID_TID);
	}
	if (st & PERF_SAMPLE_TIME)
		rb_u64(b, SID_TIME);
	if (st & PERF_SAMPLE_ID)
		rb_u64(b, SID_ID);
	if (st & PERF_SAMPLE_STREAM_ID)
		rb_u64(b, SID_STREAM);
	if (st & PERF_SAMPLE_CPU) {
		rb_u32(b, SID_CPU);
		rb_u32(b, 0);
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		rb_u64(b, SID_ID);
}

static void check_sample_id(const struct evprof_sample_id *sid, uint64_t st)
{
	assert_true(sid->present);
	assert_int_equal(sid->pid, (st & PERF_SAMPLE_TID) ? SID_PID : 0);
	assert_int_equal(sid->tid, (st & PERF_SAMPLE_TID) ? SID_TID : 0);
	assert_int_equal(sid->time, (st & PERF_SAMPLE_TIME) ? SID_TIME : 0);
	assert_int_equal(
	    sid->id,
	    (st & (PERF_SAMPLE_ID | PERF_SAMPLE_IDENTIFIER)) ? SID_ID : 0);
	assert_int_equal(sid->stream_id,
			 (st & PERF_SAMPLE_STREAM_ID) ? SID_STREAM : 0);
	assert_int_equal(sid->cpu, (st & PERF_SAMPLE_CPU) ? SID_CPU : 0);
}

static int parse(struct evprof_record *rec, struct rb *b,
		 const struct evprof_record_fmt *fmt)
{
	return evprof_record__parse(rec, b->words, b->len, fmt);
}

/*
 * Every truncation is an error, never a read past the end: lengths short
 * of header.size in an exactly sized heap copy (so ASan sees overreads),
 * and every smaller header.size that is still a multiple of 8.
 */
static void check_truncations(const struct rb *b,
			      const struct evprof_record_fmt *fmt)
{
	struct evprof_record rec;

	for (size_t len = 0; len < b->len; len++) {
		void *copy = malloc(len ? len : 1);

		assert_non_null(copy);
		memcpy(copy, b->words, len);
		assert_int_equal(evprof_record__parse(&rec, copy, len, fmt),
				 -EVPROF_ERR_TRUNCATED);
		free(copy);
	}
	for (size_t size = 8; size < b->len; size += 8) {
		uint8_t *copy = malloc(size);
		uint16_t sz = (uint16_t)size;
		int err;

		assert_non_null(copy);
		memcpy(copy, b->words, size);
		memcpy(copy + 6, &sz, sizeof(sz));
		err = evprof_record__parse(&rec, copy, size, fmt);
		assert_true(err == -EVPROF_ERR_TRUNCATED ||
			    err == -EVPROF_ERR_MALFORMED);
		free(copy);
	}
}

static const struct evprof_record_fmt sid_fmt = {
    .sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_IDENTIFIER,
    .sample_id_all = true,
};

/* ---- samples ----------------------------------------------------------- */

#define RF_GROUP                                                               \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_LOST |               \
	 PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING)

static const struct evprof_record_fmt all_fmt = {
    .sample_type = ALL_SAMPLE_BITS,
    .read_format = RF_GROUP,
    .sample_regs_user = 0xb, /* regs 0, 1, 3 */
    .sample_regs_intr = 0x6, /* regs 1, 2 */
    .branch_sample_type =
	PERF_SAMPLE_BRANCH_ANY | BRANCH_HW_INDEX | BRANCH_COUNTERS,
    .sample_id_all = true,
};

/* Every sample_type bit, in the order the kernel writes them. */
static void build_all_sample(struct rb *b)
{
	rb_begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(b, 0x1111);    /* IDENTIFIER */
	rb_u64(b, 0x401000);  /* IP */
	rb_u32(b, 100);	      /* pid */
	rb_u32(b, 101);	      /* tid */
	rb_u64(b, 123456789); /* TIME */
	rb_u64(b, 0xdead000); /* ADDR */
	rb_u64(b, 0x2222);    /* ID */
	rb_u64(b, 0x3333);    /* STREAM_ID */
	rb_u32(b, 1);	      /* cpu */
	rb_u32(b, 0);	      /* res */
	rb_u64(b, 4000);      /* PERIOD */
	rb_u64(b, 2);	      /* READ: nr */
	rb_u64(b, 500);	      /* enabled */
	rb_u64(b, 250);	      /* running */
	rb_u64(b, 10);	      /* leader value */
	rb_u64(b, 0x2222);    /* leader id */
	rb_u64(b, 0);	      /* leader lost */
	rb_u64(b, 20);	      /* member value */
	rb_u64(b, 0x4444);    /* member id */
	rb_u64(b, 1);	      /* member lost */
	rb_u64(b, 4);	      /* CALLCHAIN nr */
	rb_u64(b, (uint64_t)PERF_CONTEXT_KERNEL);
	rb_u64(b, 0xffffffff81000010ULL);
	rb_u64(b, (uint64_t)PERF_CONTEXT_USER);
	rb_u64(b, 0x401000);
	rb_u32(b, 12); /* RAW: 4 + 12 keeps u64 alignment */
	for (uint8_t i = 1; i <= 12; i++)
		rb_u8(b, i);
	rb_u64(b, 2);	 /* BRANCH nr */
	rb_u64(b, 7);	 /* hw_idx */
	rb_u64(b, 0x10); /* from, to, flags */
	rb_u64(b, 0x20);
	rb_u64(b, 0x1);
	rb_u64(b, 0x30);
	rb_u64(b, 0x40);
	rb_u64(b, 0x2);
	rb_u64(b, 5); /* counters */
	rb_u64(b, 6);
	rb_u64(b, PERF_SAMPLE_REGS_ABI_64); /* REGS_USER */
	rb_u64(b, 0xa0);
	rb_u64(b, 0xa1);
	rb_u64(b, 0xa3);
	rb_u64(b, 16); /* STACK_USER size */
	for (int i = 0; i < 16; i++)
		rb_u8(b, 0x55);
	rb_u64(b, 8);			    /* dyn_size */
	rb_u64(b, 0x0000000300020001ULL);   /* WEIGHT */
	rb_u64(b, 0x5080021);		    /* DATA_SRC */
	rb_u64(b, 0x7);			    /* TRANSACTION */
	rb_u64(b, PERF_SAMPLE_REGS_ABI_64); /* REGS_INTR */
	rb_u64(b, 0xb1);
	rb_u64(b, 0xb2);
	rb_u64(b, 0x1234000); /* PHYS_ADDR */
	rb_u64(b, 0xc6);      /* CGROUP */
	rb_u64(b, 4096);      /* DATA_PAGE_SIZE */
	rb_u64(b, 2097152);   /* CODE_PAGE_SIZE */
	rb_u64(b, 8);	      /* AUX size */
	rb_u64(b, 0x9999999999999999ULL);
	rb_end(b);
}

static void test_sample_all_bits(void **state)
{
	static struct rb b;
	struct evprof_record rec;
	const struct evprof_sample *s = &rec.sample;
	struct evprof_snapshot snap;
	const uint8_t *raw;
	const uint64_t *br;
	uint64_t val = 0;

	(void)state;
	build_all_sample(&b);
	assert_int_equal(parse(&rec, &b, &all_fmt), 0);
	assert_int_equal(rec.type, PERF_RECORD_SAMPLE);
	assert_int_equal(rec.misc, PERF_RECORD_MISC_USER);
	assert_int_equal(rec.size, b.len);
	assert_false(rec.sid.present);
	assert_int_equal(s->identifier, 0x1111);
	assert_int_equal(s->ip, 0x401000);
	assert_int_equal(s->pid, 100);
	assert_int_equal(s->tid, 101);
	assert_int_equal(s->time, 123456789);
	assert_int_equal(s->addr, 0xdead000);
	assert_int_equal(s->id, 0x2222); /* from ID, not IDENTIFIER */
	assert_int_equal(s->stream_id, 0x3333);
	assert_int_equal(s->cpu, 1);
	assert_int_equal(s->period, 4000);
	assert_int_equal(s->read_size, 9 * 8);
	assert_int_equal(s->callchain_nr, 4);
	assert_int_equal(s->callchain[0], (uint64_t)PERF_CONTEXT_KERNEL);
	assert_int_equal(s->callchain[1], 0xffffffff81000010ULL);
	assert_int_equal(s->callchain[3], 0x401000);
	assert_int_equal(s->raw_size, 12);
	raw = s->raw;
	assert_int_equal(raw[0], 1);
	assert_int_equal(raw[11], 12);
	assert_int_equal(s->branch_nr, 2);
	assert_int_equal(s->branch_hw_idx, 7);
	br = s->branches;
	assert_int_equal(br[0], 0x10);
	assert_int_equal(br[4], 0x40);
	assert_int_equal(br[5], 0x2);
	assert_non_null(s->branch_counters);
	assert_int_equal(s->branch_counters[0], 5);
	assert_int_equal(s->branch_counters[1], 6);
	assert_int_equal(s->regs_user_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s->regs_user_nr, 3);
	assert_int_equal(s->regs_user[0], 0xa0);
	assert_int_equal(s->regs_user[2], 0xa3);
	assert_int_equal(s->stack_user_size, 16);
	assert_int_equal(((const uint8_t *)s->stack_user)[15], 0x55);
	assert_int_equal(s->stack_user_dyn_size, 8);
	assert_int_equal(s->weight, 0x0000000300020001ULL);
	assert_int_equal(s->data_src, 0x5080021);
	assert_int_equal(s->transaction, 0x7);
	assert_int_equal(s->regs_intr_abi, PERF_SAMPLE_REGS_ABI_64);
	assert_int_equal(s->regs_intr_nr, 2);
	assert_int_equal(s->regs_intr[0], 0xb1);
	assert_int_equal(s->regs_intr[1], 0xb2);
	assert_int_equal(s->phys_addr, 0x1234000);
	assert_int_equal(s->cgroup, 0xc6);
	assert_int_equal(s->data_page_size, 4096);
	assert_int_equal(s->code_page_size, 2097152);
	assert_int_equal(s->aux_size, 8);
	assert_int_equal(*(const uint64_t *)s->aux, 0x9999999999999999ULL);

	/* The read part decodes with the read_format that sized it. */
	assert_int_equal(evprof_snapshot__parse(&snap, s->read, s->read_size,
						all_fmt.read_format),
			 9 * 8);
	assert_int_equal(evprof_snapshot__value(&snap, 0x4444, &val), 0);
	assert_int_equal(val, 40); /* 20 * 500 / 250 */
	assert_int_equal(snap.values[1].lost, 1);

	check_truncations(&b, &all_fmt);
}

/* Two samples differing only in what follows the optional parts. */
static void test_sample_empty_regs_and_stack(void **state)
{
	struct evprof_record_fmt fmt = {
	    .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_REGS_USER |
			   PERF_SAMPLE_STACK_USER | PERF_SAMPLE_WEIGHT |
			   PERF_SAMPLE_PERIOD,
	    .sample_regs_user = 0xff0fff,
	};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	/* abi 0: no regs; size 0: neither data nor dyn_size. */
	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rb_u64(&b, 0xffffffff81000000ULL);
	rb_u64(&b, 9);	 /* PERIOD */
	rb_u64(&b, 0);	 /* regs abi: none */
	rb_u64(&b, 0);	 /* stack size */
	rb_u64(&b, 321); /* WEIGHT */
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.sample.period, 9);
	assert_int_equal(rec.sample.regs_user_abi, 0);
	assert_int_equal(rec.sample.regs_user_nr, 0);
	assert_null(rec.sample.regs_user);
	assert_int_equal(rec.sample.stack_user_size, 0);
	assert_null(rec.sample.stack_user);
	assert_int_equal(rec.sample.stack_user_dyn_size, 0);
	assert_int_equal(rec.sample.weight, 321);

	/* The perf x86_64 mask 0xff0fff has 20 registers. */
	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, 0x401000);
	rb_u64(&b, 9);
	rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
	for (uint64_t i = 0; i < 20; i++)
		rb_u64(&b, 0x100 + i);
	rb_u64(&b, 8);
	rb_u64(&b, 0x4141414141414141ULL);
	rb_u64(&b, 4);
	rb_u64(&b, 321);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.sample.regs_user_nr, 20);
	assert_int_equal(rec.sample.regs_user[19], 0x113);
	assert_int_equal(rec.sample.stack_user_size, 8);
	assert_int_equal(rec.sample.stack_user_dyn_size, 4);
	assert_int_equal(rec.sample.weight, 321);
	check_truncations(&b, &fmt);
}

static void test_sample_identifier_only(void **state)
{
	struct evprof_record_fmt fmt = {
	    .sample_type =
		PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID | PERF_SAMPLE_CPU,
	};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 0xabc);
	rb_u32(&b, 7);
	rb_u32(&b, 8);
	rb_u32(&b, 1);
	rb_u32(&b, 0xffffffff); /* res: must not leak into cpu */
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.sample.identifier, 0xabc);
	assert_int_equal(rec.sample.id, 0xabc);
	assert_int_equal(rec.sample.pid, 7);
	assert_int_equal(rec.sample.tid, 8);
	assert_int_equal(rec.sample.cpu, 1);
}

static void test_sample_branch_plain(void **state)
{
	struct evprof_record_fmt fmt = {
	    .sample_type = PERF_SAMPLE_BRANCH_STACK | PERF_SAMPLE_PERIOD,
	    .branch_sample_type = PERF_SAMPLE_BRANCH_ANY,
	};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 5); /* PERIOD */
	rb_u64(&b, 1); /* nr, no hw_idx */
	rb_u64(&b, 0xa);
	rb_u64(&b, 0xb);
	rb_u64(&b, 0xc);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.sample.branch_nr, 1);
	assert_int_equal(rec.sample.branch_hw_idx, 0);
	assert_int_equal(((const uint64_t *)rec.sample.branches)[2], 0xc);
	assert_null(rec.sample.branch_counters);
	check_truncations(&b, &fmt);
}

static void test_sample_bad_values(void **state)
{
	struct evprof_record_fmt fmt = {.sample_type = PERF_SAMPLE_RAW};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	/* RAW whose size breaks u64 alignment. */
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u32(&b, 5);
	rb_u32(&b, 0);
	rb_u64(&b, 0);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_MALFORMED);

	/* STACK_USER: dyn_size above size, and an unaligned size. */
	fmt.sample_type = PERF_SAMPLE_STACK_USER;
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 8);
	rb_u64(&b, 0);
	rb_u64(&b, 16);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_MALFORMED);
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 12);
	rb_u64(&b, 0);
	rb_u64(&b, 0);
	rb_u64(&b, 0);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_MALFORMED);

	/* A sample_type bit newer than this decoder: layout unknown. */
	fmt.sample_type = PERF_SAMPLE_IP | (1ULL << 25);
	assert_int_equal(parse(&rec, &b, &fmt), -ENOTSUP);

	/* A read_format bit newer than this decoder. */
	fmt.sample_type = PERF_SAMPLE_READ;
	fmt.read_format = 1ULL << 5;
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_MALFORMED);
}

/* Counts whose byte size wraps 64 bits must not pass a bounds check. */
static void check_huge(uint64_t sample_type, uint64_t read_format,
		       uint64_t branch_type, const uint64_t *body, size_t n)
{
	struct evprof_record_fmt fmt = {
	    .sample_type = sample_type,
	    .read_format = read_format,
	    .branch_sample_type = branch_type,
	};
	static struct rb b;
	struct evprof_record rec;

	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	for (size_t i = 0; i < n; i++)
		rb_u64(&b, body[i]);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_TRUNCATED);
}

static void test_sample_huge_counts(void **state)
{
	const uint64_t nrs[] = {UINT64_MAX, 1ULL << 61, (1ULL << 61) + 1,
				1ULL << 63, 100};

	(void)state;
	for (size_t i = 0; i < sizeof(nrs) / sizeof(nrs[0]); i++) {
		uint64_t body[] = {nrs[i], 1, 2};

		check_huge(PERF_SAMPLE_CALLCHAIN, 0, 0, body, 3);
		/* nr * 24 wraps to 0 at 2^61 */
		check_huge(PERF_SAMPLE_BRANCH_STACK, 0,
			   BRANCH_HW_INDEX | BRANCH_COUNTERS, body, 3);
		/* 1 + nr * 3 words wraps too */
		check_huge(PERF_SAMPLE_READ,
			   PERF_FORMAT_GROUP | PERF_FORMAT_ID |
			       PERF_FORMAT_LOST,
			   0, body, 3);
		check_huge(PERF_SAMPLE_AUX, 0, 0, body, 3);
	}
	{
		uint64_t body[] = {0xfffffffffffffff8ULL, 1, 2};

		check_huge(PERF_SAMPLE_STACK_USER, 0, 0, body, 3);
	}
	{
		uint64_t body[] = {0xfffffffc, 1}; /* RAW size 2^32 - 4 */

		check_huge(PERF_SAMPLE_RAW, 0, 0, body, 2);
	}
}

/* ---- sample_id trailers ------------------------------------------------ */

static void test_trailer_every_combination(void **state)
{
	static struct rb b;

	(void)state;
	for (uint64_t mask = 0; mask < 64; mask++) {
		struct evprof_record_fmt fmt = {.sample_id_all = true};
		struct evprof_record rec;
		const uint64_t bits[] = {
		    PERF_SAMPLE_TID, PERF_SAMPLE_TIME,
		    PERF_SAMPLE_ID,  PERF_SAMPLE_STREAM_ID,
		    PERF_SAMPLE_CPU, PERF_SAMPLE_IDENTIFIER,
		};

		for (int i = 0; i < 6; i++)
			if (mask & (1ULL << i))
				fmt.sample_type |= bits[i];
		/* Sample-only bits must not change the trailer. */
		fmt.sample_type |= PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN;
		rb_begin(&b, PERF_RECORD_LOST, 0);
		rb_u64(&b, 0x77);
		rb_u64(&b, 12);
		rb_sample_id(&b, fmt.sample_type);
		rb_end(&b);
		assert_int_equal(parse(&rec, &b, &fmt), 0);
		assert_int_equal(rec.lost.id, 0x77);
		assert_int_equal(rec.lost.lost, 12);
		if (mask)
			check_sample_id(&rec.sid, fmt.sample_type);
		else
			assert_false(rec.sid.present);
		check_truncations(&b, &fmt);
	}
}

/* Without sample_id_all nothing at the end is taken for a trailer. */
static void test_no_sample_id_all(void **state)
{
	struct evprof_record_fmt fmt = {
	    .sample_type = SID_BITS,
	    .sample_id_all = false,
	};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_COMM, 0);
	rb_u32(&b, 1);
	rb_u32(&b, 2);
	rb_str(&b, "a-name-of-15-ch");
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_false(rec.sid.present);
	assert_string_equal(rec.comm.comm, "a-name-of-15-ch");
}

/* ---- side-band records ------------------------------------------------- */

static void test_mmap(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_MMAP, PERF_RECORD_MISC_USER);
	rb_u32(&b, 10);
	rb_u32(&b, 11);
	rb_u64(&b, 0x400000);
	rb_u64(&b, 0x2000);
	rb_u64(&b, 0x1000);
	rb_str(&b, "/usr/bin/true");
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.type, PERF_RECORD_MMAP);
	assert_int_equal(rec.mmap.pid, 10);
	assert_int_equal(rec.mmap.tid, 11);
	assert_int_equal(rec.mmap.addr, 0x400000);
	assert_int_equal(rec.mmap.len, 0x2000);
	assert_int_equal(rec.mmap.pgoff, 0x1000);
	assert_string_equal(rec.mmap.filename, "/usr/bin/true");
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);
}

static void test_mmap2_inode(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	rb_u32(&b, 10);
	rb_u32(&b, 12);
	rb_u64(&b, 0x7f0000000000ULL);
	rb_u64(&b, 0x1c000);
	rb_u64(&b, 0x3000);
	rb_u32(&b, 8);	    /* maj */
	rb_u32(&b, 1);	    /* min */
	rb_u64(&b, 0x1234); /* ino */
	rb_u64(&b, 7);	    /* ino_generation */
	rb_u32(&b, 5);	    /* prot */
	rb_u32(&b, 2);	    /* flags */
	rb_str(&b, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.mmap.tid, 12);
	assert_int_equal(rec.mmap.addr, 0x7f0000000000ULL);
	assert_int_equal(rec.mmap.pgoff, 0x3000);
	assert_int_equal(rec.mmap.maj, 8);
	assert_int_equal(rec.mmap.min, 1);
	assert_int_equal(rec.mmap.ino, 0x1234);
	assert_int_equal(rec.mmap.ino_generation, 7);
	assert_int_equal(rec.mmap.build_id_size, 0);
	assert_null(rec.mmap.build_id);
	assert_int_equal(rec.mmap.prot, 5);
	assert_int_equal(rec.mmap.flags, 2);
	assert_string_equal(rec.mmap.filename,
			    "/usr/lib/x86_64-linux-gnu/libc.so.6");
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);
}

static void build_mmap2_build_id(struct rb *b, uint8_t size)
{
	rb_begin(b, PERF_RECORD_MMAP2,
		 PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	rb_u32(b, 10);
	rb_u32(b, 10);
	rb_u64(b, 0x555555554000ULL);
	rb_u64(b, 0x1000);
	rb_u64(b, 0);
	rb_u8(b, size);
	rb_u8(b, 0);
	rb_u16(b, 0);
	for (uint8_t i = 0; i < 20; i++)
		rb_u8(b, 0xb0 + i);
	rb_u32(b, 5);
	rb_u32(b, 0x1002);
	rb_str(b, "/bin/x");
	rb_sample_id(b, sid_fmt.sample_type);
	rb_end(b);
}

static void test_mmap2_build_id(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	build_mmap2_build_id(&b, 20);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.mmap.build_id_size, 20);
	assert_non_null(rec.mmap.build_id);
	assert_int_equal(rec.mmap.build_id[0], 0xb0);
	assert_int_equal(rec.mmap.build_id[19], 0xb0 + 19);
	assert_int_equal(rec.mmap.maj, 0);
	assert_int_equal(rec.mmap.ino, 0);
	assert_int_equal(rec.mmap.prot, 5);
	assert_int_equal(rec.mmap.flags, 0x1002);
	assert_string_equal(rec.mmap.filename, "/bin/x");
	check_truncations(&b, &sid_fmt);

	build_mmap2_build_id(&b, 21);
	assert_int_equal(parse(&rec, &b, &sid_fmt), -EVPROF_ERR_MALFORMED);
}

static void test_comm(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC);
	rb_u32(&b, 42);
	rb_u32(&b, 42);
	rb_str(&b, "evprof");
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_true(rec.comm.exec);
	assert_int_equal(rec.comm.pid, 42);
	assert_int_equal(rec.comm.tid, 42);
	assert_string_equal(rec.comm.comm, "evprof");
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);

	/* A thread rename (prctl) is not an exec. */
	rb_begin(&b, PERF_RECORD_COMM, 0);
	rb_u32(&b, 42);
	rb_u32(&b, 43);
	rb_str(&b, "worker-1");
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &(struct evprof_record_fmt){0}), 0);
	assert_false(rec.comm.exec);
	assert_int_equal(rec.comm.tid, 43);
	assert_string_equal(rec.comm.comm, "worker-1");
}

static void test_fork_exit(void **state)
{
	static struct rb b;
	struct evprof_record rec;
	const uint32_t types[] = {PERF_RECORD_FORK, PERF_RECORD_EXIT};

	(void)state;
	for (int i = 0; i < 2; i++) {
		rb_begin(&b, types[i], 0);
		rb_u32(&b, 200);
		rb_u32(&b, 100);
		rb_u32(&b, 201);
		rb_u32(&b, 101);
		rb_u64(&b, 999);
		rb_sample_id(&b, sid_fmt.sample_type);
		rb_end(&b);
		assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
		assert_int_equal(rec.type, types[i]);
		assert_int_equal(rec.task.pid, 200);
		assert_int_equal(rec.task.ppid, 100);
		assert_int_equal(rec.task.tid, 201);
		assert_int_equal(rec.task.ptid, 101);
		assert_int_equal(rec.task.time, 999);
		check_sample_id(&rec.sid, sid_fmt.sample_type);
		check_truncations(&b, &sid_fmt);
	}
}

static void test_lost_and_lost_samples(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 0x55);
	rb_u64(&b, 257750);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.lost.id, 0x55);
	assert_int_equal(rec.lost.lost, 257750);

	rb_begin(&b, PERF_RECORD_LOST_SAMPLES, 0);
	rb_u64(&b, 31);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.lost_samples, 31);
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);
}

static void test_throttle(void **state)
{
	static struct rb b;
	struct evprof_record rec;
	const uint32_t types[] = {PERF_RECORD_THROTTLE, PERF_RECORD_UNTHROTTLE};

	(void)state;
	for (int i = 0; i < 2; i++) {
		rb_begin(&b, types[i], 0);
		rb_u64(&b, 5555);
		rb_u64(&b, 0x66);
		rb_u64(&b, 0x67);
		rb_sample_id(&b, sid_fmt.sample_type);
		rb_end(&b);
		assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
		assert_int_equal(rec.throttle.time, 5555);
		assert_int_equal(rec.throttle.id, 0x66);
		assert_int_equal(rec.throttle.stream_id, 0x67);
		check_truncations(&b, &sid_fmt);
	}
}

static void test_read_record(void **state)
{
	struct evprof_record_fmt fmt = sid_fmt;
	static struct rb b;
	struct evprof_record rec;
	struct evprof_snapshot snap;
	uint64_t val = 0;

	(void)state;
	fmt.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			  PERF_FORMAT_TOTAL_TIME_RUNNING | PERF_FORMAT_ID;
	rb_begin(&b, PERF_RECORD_READ, 0);
	rb_u32(&b, 300);
	rb_u32(&b, 301);
	rb_u64(&b, 1000); /* value */
	rb_u64(&b, 90);	  /* enabled */
	rb_u64(&b, 30);	  /* running */
	rb_u64(&b, 0x99); /* id */
	rb_sample_id(&b, fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.read.pid, 300);
	assert_int_equal(rec.read.tid, 301);
	assert_int_equal(rec.read.read_size, 32);
	assert_int_equal(evprof_snapshot__parse(&snap, rec.read.read,
						rec.read.read_size,
						fmt.read_format),
			 32);
	assert_int_equal(evprof_snapshot__value(&snap, 0x99, &val), 0);
	assert_int_equal(val, 3000);
	check_sample_id(&rec.sid, fmt.sample_type);
	check_truncations(&b, &fmt);

	/* A group read: its size comes from nr inside the record. */
	fmt.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	rb_begin(&b, PERF_RECORD_READ, 0);
	rb_u32(&b, 300);
	rb_u32(&b, 301);
	rb_u64(&b, 2);
	rb_u64(&b, 1);
	rb_u64(&b, 0x10);
	rb_u64(&b, 2);
	rb_u64(&b, 0x11);
	rb_sample_id(&b, fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.read.read_size, 40);
	check_truncations(&b, &fmt);
}

static void test_switch(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_SWITCH,
		 PERF_RECORD_MISC_SWITCH_OUT |
		     PERF_RECORD_MISC_SWITCH_OUT_PREEMPT);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_true(rec.sw.out);
	assert_true(rec.sw.preempt);
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);

	rb_begin(&b, PERF_RECORD_SWITCH, 0);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &(struct evprof_record_fmt){0}), 0);
	assert_false(rec.sw.out);
	assert_false(rec.sw.preempt);

	rb_begin(&b, PERF_RECORD_SWITCH_CPU_WIDE, PERF_RECORD_MISC_SWITCH_OUT);
	rb_u32(&b, 77);
	rb_u32(&b, 78);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_true(rec.sw.out);
	assert_false(rec.sw.preempt);
	assert_int_equal(rec.sw.next_prev_pid, 77);
	assert_int_equal(rec.sw.next_prev_tid, 78);
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);
}

static void test_ksymbol(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_KSYMBOL, 0);
	rb_u64(&b, 0xffffffffc0001000ULL);
	rb_u32(&b, 0x1a0);
	rb_u16(&b, PERF_RECORD_KSYMBOL_TYPE_BPF);
	rb_u16(&b, PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	rb_str(&b, "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.ksymbol.addr, 0xffffffffc0001000ULL);
	assert_int_equal(rec.ksymbol.len, 0x1a0);
	assert_int_equal(rec.ksymbol.ksym_type, PERF_RECORD_KSYMBOL_TYPE_BPF);
	assert_int_equal(rec.ksymbol.flags,
			 PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER);
	assert_string_equal(rec.ksymbol.name,
			    "bpf_prog_6deef7357e7b4530_sd_fw_egress");
	check_truncations(&b, &sid_fmt);
}

static void build_deferred(struct rb *b, uint64_t nr, uint64_t st)
{
	rb_begin(b, EVPROF_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	rb_u64(b, 0xb00000006ULL);
	rb_u64(b, nr);
	rb_u64(b, 0x401100);
	rb_u64(b, 0x401200);
	rb_u64(b, 0x401300);
	rb_sample_id(b, st);
	rb_end(b);
}

static void test_callchain_deferred(void **state)
{
	struct evprof_record_fmt fmt = {
	    .sample_type = SID_BITS | PERF_SAMPLE_CALLCHAIN,
	    .sample_id_all = true,
	};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	build_deferred(&b, 3, fmt.sample_type);
	assert_int_equal(parse(&rec, &b, &fmt), 0);
	assert_int_equal(rec.type, EVPROF_RECORD_CALLCHAIN_DEFERRED);
	assert_int_equal(rec.deferred.cookie, 0xb00000006ULL);
	assert_int_equal(rec.deferred.nr, 3);
	assert_int_equal(rec.deferred.ips[0], 0x401100);
	assert_int_equal(rec.deferred.ips[2], 0x401300);
	check_sample_id(&rec.sid, fmt.sample_type);
	check_truncations(&b, &fmt);

	/* nr counting into the trailer is refused: ips end at the body. */
	build_deferred(&b, 4, fmt.sample_type);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_TRUNCATED);
	/* 2^61 * 8 wraps to 0; 2^61 + 1 wraps to 8. */
	build_deferred(&b, 1ULL << 61, fmt.sample_type);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_TRUNCATED);
	build_deferred(&b, (1ULL << 61) + 1, fmt.sample_type);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_TRUNCATED);
	build_deferred(&b, UINT64_MAX, fmt.sample_type);
	assert_int_equal(parse(&rec, &b, &fmt), -EVPROF_ERR_TRUNCATED);
}

static void test_aux_itrace_hwid(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_AUX, 0);
	rb_u64(&b, 0x10000);
	rb_u64(&b, 0x800);
	rb_u64(&b, PERF_AUX_FLAG_TRUNCATED | PERF_AUX_FLAG_COLLISION);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.aux.aux_offset, 0x10000);
	assert_int_equal(rec.aux.aux_size, 0x800);
	assert_int_equal(rec.aux.flags, 9);
	check_truncations(&b, &sid_fmt);

	rb_begin(&b, PERF_RECORD_ITRACE_START, 0);
	rb_u32(&b, 61);
	rb_u32(&b, 62);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.itrace_start.pid, 61);
	assert_int_equal(rec.itrace_start.tid, 62);
	check_truncations(&b, &sid_fmt);

	rb_begin(&b, PERF_RECORD_AUX_OUTPUT_HW_ID, 0);
	rb_u64(&b, 0x4242);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.aux_output_hw_id, 0x4242);
	check_sample_id(&rec.sid, sid_fmt.sample_type);
	check_truncations(&b, &sid_fmt);
}

static void test_namespaces(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_NAMESPACES, 0);
	rb_u32(&b, 5);
	rb_u32(&b, 6);
	rb_u64(&b, 2);
	rb_u64(&b, 4); /* dev, inode */
	rb_u64(&b, 0xf0000001);
	rb_u64(&b, 4);
	rb_u64(&b, 0xf0000002);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.namespaces.pid, 5);
	assert_int_equal(rec.namespaces.tid, 6);
	assert_int_equal(rec.namespaces.nr, 2);
	assert_int_equal(rec.namespaces.link_info[1], 0xf0000001);
	assert_int_equal(rec.namespaces.link_info[3], 0xf0000002);
	check_truncations(&b, &sid_fmt);

	/* nr * 16 wraps to 0 at 2^60. */
	rb_begin(&b, PERF_RECORD_NAMESPACES, 0);
	rb_u32(&b, 5);
	rb_u32(&b, 6);
	rb_u64(&b, 1ULL << 60);
	rb_u64(&b, 4);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &(struct evprof_record_fmt){0}),
			 -EVPROF_ERR_TRUNCATED);
}

static void test_bpf_event(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_BPF_EVENT, 0);
	rb_u16(&b, PERF_BPF_EVENT_PROG_LOAD);
	rb_u16(&b, 0);
	rb_u32(&b, 42);
	for (uint8_t i = 0; i < 8; i++)
		rb_u8(&b, 0xe0 + i);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.bpf_event.type, PERF_BPF_EVENT_PROG_LOAD);
	assert_int_equal(rec.bpf_event.flags, 0);
	assert_int_equal(rec.bpf_event.id, 42);
	assert_int_equal(rec.bpf_event.tag[0], 0xe0);
	assert_int_equal(rec.bpf_event.tag[7], 0xe7);
	check_truncations(&b, &sid_fmt);
}

static void test_cgroup(void **state)
{
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	rb_begin(&b, PERF_RECORD_CGROUP, 0);
	rb_u64(&b, 0x1a2b);
	rb_str(&b, "/system.slice/ssh.service");
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.cgroup.id, 0x1a2b);
	assert_string_equal(rec.cgroup.path, "/system.slice/ssh.service");
	check_truncations(&b, &sid_fmt);
}

static void test_text_poke(void **state)
{
	static struct rb b;
	struct evprof_record rec;
	const uint8_t bytes[] = {0x0f, 0x1f, 0x44, 0xe9, 1, 2, 3, 4};

	(void)state;
	rb_begin(&b, PERF_RECORD_TEXT_POKE, 0);
	rb_u64(&b, 0xffffffff81234567ULL);
	rb_u16(&b, 3);
	rb_u16(&b, 5);
	rb_put(&b, bytes, sizeof(bytes));
	rb_pad8(&b);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), 0);
	assert_int_equal(rec.text_poke.addr, 0xffffffff81234567ULL);
	assert_int_equal(rec.text_poke.old_len, 3);
	assert_int_equal(rec.text_poke.new_len, 5);
	assert_memory_equal(rec.text_poke.bytes, bytes, sizeof(bytes));
	check_truncations(&b, &sid_fmt);

	/* Lengths past the body. */
	rb_begin(&b, PERF_RECORD_TEXT_POKE, 0);
	rb_u64(&b, 0);
	rb_u16(&b, 0xffff);
	rb_u16(&b, 0xffff);
	rb_u32(&b, 0);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &(struct evprof_record_fmt){0}),
			 -EVPROF_ERR_TRUNCATED);
}

/* ---- malformed input --------------------------------------------------- */

static void test_unterminated_strings(void **state)
{
	static struct rb b;
	struct evprof_record rec;
	struct evprof_record_fmt none = {0};

	(void)state;
	rb_begin(&b, PERF_RECORD_COMM, 0);
	rb_u32(&b, 1);
	rb_u32(&b, 1);
	rb_put(&b, "abcdefgh", 8);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_MALFORMED);

	/* The NUL must lie in the body, not in the trailer after it. */
	rb_begin(&b, PERF_RECORD_COMM, 0);
	rb_u32(&b, 1);
	rb_u32(&b, 1);
	rb_put(&b, "abcdefgh", 8);
	rb_sample_id(&b, sid_fmt.sample_type);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &sid_fmt), -EVPROF_ERR_MALFORMED);

	rb_begin(&b, PERF_RECORD_MMAP, 0);
	for (int i = 0; i < 4; i++)
		rb_u64(&b, 0x4141414141414141ULL);
	rb_put(&b, "/a/b/c/d", 8);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_MALFORMED);

	rb_begin(&b, PERF_RECORD_KSYMBOL, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_put(&b, "bpf_prog", 8);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_MALFORMED);

	rb_begin(&b, PERF_RECORD_CGROUP, 0);
	rb_u64(&b, 1);
	rb_put(&b, "/sys/fs/", 8);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_MALFORMED);

	/* No room at all for the string. */
	rb_begin(&b, PERF_RECORD_CGROUP, 0);
	rb_u64(&b, 1);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_TRUNCATED);
}

static void test_bad_headers(void **state)
{
	static struct rb b;
	struct evprof_record rec;
	struct evprof_record_fmt none = {0};
	uint64_t store[8] = {0};
	uint16_t size;

	(void)state;
	rb_begin(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_end(&b);

	/* header.size larger than the bytes given. */
	assert_int_equal(evprof_record__parse(&rec, b.words, 16, &none),
			 -EVPROF_ERR_TRUNCATED);
	assert_int_equal(rec.size, 24);

	/* size below the header or not a multiple of 8. */
	for (size = 0; size < 8; size++) {
		rb_set_size(&b, size);
		assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_MALFORMED);
	}
	size = 20;
	rb_set_size(&b, size);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_MALFORMED);

	/* A misaligned record. */
	rb_end(&b);
	memcpy((uint8_t *)store + 4, b.words, b.len);
	assert_int_equal(
	    evprof_record__parse(&rec, (uint8_t *)store + 4, b.len, &none),
	    -EVPROF_ERR_MALFORMED);
	assert_int_equal(rec.type, PERF_RECORD_LOST);

	/* A fixed body larger than the record. */
	rb_begin(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 1);
	rb_end(&b);
	assert_int_equal(parse(&rec, &b, &none), -EVPROF_ERR_TRUNCATED);
}

static void test_unknown_type(void **state)
{
	const uint32_t types[] = {0, 23, 64, 68, 0xffffffff};
	static struct rb b;
	struct evprof_record rec;

	(void)state;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++) {
		rb_begin(&b, types[i], 0x1234);
		rb_u64(&b, 1);
		rb_end(&b);
		memset(&rec, 0xa5, sizeof(rec));
		assert_int_equal(parse(&rec, &b, &sid_fmt), -ENOTSUP);
		assert_int_equal(rec.type, types[i]);
		assert_int_equal(rec.misc, 0x1234);
		assert_int_equal(rec.size, 16);
		/* The view is zeroed, not left with stale bytes. */
		assert_false(rec.sid.present);
		assert_int_equal(rec.lost.id, 0);
	}
}

static void test_identifier(void **state)
{
	static struct rb b;
	uint64_t id = 0;

	(void)state;
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, 0xfeed);
	rb_u64(&b, 0x401000);
	rb_end(&b);
	assert_int_equal(evprof_record__identifier(b.words, b.len, &id), 0);
	assert_int_equal(id, 0xfeed);

	rb_begin(&b, PERF_RECORD_MMAP2, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 2);
	rb_u64(&b, 0xbeef); /* IDENTIFIER ends the trailer */
	rb_end(&b);
	assert_int_equal(evprof_record__identifier(b.words, b.len, &id), 0);
	assert_int_equal(id, 0xbeef);

	assert_int_equal(evprof_record__identifier(b.words, b.len - 1, &id),
			 -EVPROF_ERR_TRUNCATED);
	assert_int_equal(evprof_record__identifier(b.words, 7, &id),
			 -EVPROF_ERR_TRUNCATED);
	rb_begin(&b, PERF_RECORD_SWITCH, 0);
	rb_end(&b);
	assert_int_equal(evprof_record__identifier(b.words, b.len, &id),
			 -EVPROF_ERR_TRUNCATED);
}

static void test_type_name_and_fmt(void **state)
{
	struct perf_event_attr attr;
	struct evprof_record_fmt fmt;

	(void)state;
	assert_string_equal(evprof_record_type_name(PERF_RECORD_SAMPLE),
			    "SAMPLE");
	assert_string_equal(evprof_record_type_name(PERF_RECORD_MMAP2),
			    "MMAP2");
	assert_string_equal(evprof_record_type_name(PERF_RECORD_MMAP), "MMAP");
	assert_string_equal(
	    evprof_record_type_name(PERF_RECORD_AUX_OUTPUT_HW_ID),
	    "AUX_OUTPUT_HW_ID");
	assert_string_equal(
	    evprof_record_type_name(EVPROF_RECORD_CALLCHAIN_DEFERRED),
	    "CALLCHAIN_DEFERRED");
	assert_string_equal(evprof_record_type_name(0), "UNKNOWN");
	assert_string_equal(evprof_record_type_name(23), "UNKNOWN");
	assert_string_equal(evprof_record_type_name(0xffffffff), "UNKNOWN");

	memset(&attr, 0, sizeof(attr));
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_READ;
	attr.read_format = PERF_FORMAT_GROUP;
	attr.sample_regs_user = 0xff0fff;
	attr.sample_regs_intr = 3;
	attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
	attr.sample_id_all = 1;
	evprof_record_fmt__from_attr(&fmt, &attr);
	assert_int_equal(fmt.sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_READ);
	assert_int_equal(fmt.read_format, PERF_FORMAT_GROUP);
	assert_int_equal(fmt.sample_regs_user, 0xff0fff);
	assert_int_equal(fmt.sample_regs_intr, 3);
	assert_int_equal(fmt.branch_sample_type, PERF_SAMPLE_BRANCH_ANY);
	assert_true(fmt.sample_id_all);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_sample_all_bits),
	    cmocka_unit_test(test_sample_empty_regs_and_stack),
	    cmocka_unit_test(test_sample_identifier_only),
	    cmocka_unit_test(test_sample_branch_plain),
	    cmocka_unit_test(test_sample_bad_values),
	    cmocka_unit_test(test_sample_huge_counts),
	    cmocka_unit_test(test_trailer_every_combination),
	    cmocka_unit_test(test_no_sample_id_all),
	    cmocka_unit_test(test_mmap),
	    cmocka_unit_test(test_mmap2_inode),
	    cmocka_unit_test(test_mmap2_build_id),
	    cmocka_unit_test(test_comm),
	    cmocka_unit_test(test_fork_exit),
	    cmocka_unit_test(test_lost_and_lost_samples),
	    cmocka_unit_test(test_throttle),
	    cmocka_unit_test(test_read_record),
	    cmocka_unit_test(test_switch),
	    cmocka_unit_test(test_ksymbol),
	    cmocka_unit_test(test_callchain_deferred),
	    cmocka_unit_test(test_aux_itrace_hwid),
	    cmocka_unit_test(test_namespaces),
	    cmocka_unit_test(test_bpf_event),
	    cmocka_unit_test(test_cgroup),
	    cmocka_unit_test(test_text_poke),
	    cmocka_unit_test(test_unterminated_strings),
	    cmocka_unit_test(test_bad_headers),
	    cmocka_unit_test(test_unknown_type),
	    cmocka_unit_test(test_identifier),
	    cmocka_unit_test(test_type_name_and_fmt),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
