// SPDX-License-Identifier: MIT
/*
 * Deferred user callchains (Linux 6.19) on hand-built record streams: each
 * sample whose callchain ends in PERF_CONTEXT_USER_DEFERRED + cookie must
 * end up with the user ips of its thread's CALLCHAIN_DEFERRED with that
 * cookie, whatever order the rings delivered the records in. Stacks are
 * checked in the built profile's folded text (no symbolizer: frames are
 * named by address, return addresses as addr - 1).
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#include "cases.h"
#include "recstream.h"

#define ST_BITS                                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_CALLCHAIN)
#define KCTX  ((uint64_t)PERF_CONTEXT_KERNEL)
#define UCTX  ((uint64_t)PERF_CONTEXT_USER)
#define DEFER EVPROF_CONTEXT_USER_DEFERRED
#define PID   100

static void feed(struct evprof_session *s, struct rb *b)
{
	rb_end(b);
	assert_int_equal(evprof_session__feed(s, b->words, b->len), 0);
}

/* A sample in the kernel (leaf kip) whose user part is deferred. */
static void sample_deferred(struct evprof_session *s, uint32_t tid,
			    uint64_t time, uint64_t kip, uint64_t cookie)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	rb_u64(&b, 1);	 /* IDENTIFIER */
	rb_u64(&b, kip); /* IP */
	rb_u32x2(&b, PID, tid);
	rb_u64(&b, time);
	rb_u32x2(&b, 0, 0); /* CPU */
	rb_u64(&b, 4);
	rb_u64(&b, KCTX);
	rb_u64(&b, kip);
	rb_u64(&b, DEFER);
	rb_u64(&b, cookie);
	feed(s, &b);
}

/* A user-mode sample with its user stack inline (leaf, caller). */
static void sample_inline(struct evprof_session *s, uint32_t tid, uint64_t time,
			  uint64_t leaf, uint64_t caller)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, 1);
	rb_u64(&b, leaf);
	rb_u32x2(&b, PID, tid);
	rb_u64(&b, time);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 3);
	rb_u64(&b, UCTX);
	rb_u64(&b, leaf);
	rb_u64(&b, caller);
	feed(s, &b);
}

/* CALLCHAIN_DEFERRED of tid: user ips leaf, caller. */
static void deferred(struct evprof_session *s, uint32_t tid, uint64_t time,
		     uint64_t cookie, uint64_t leaf, uint64_t caller)
{
	struct rb b;

	rb_begin(&b, EVPROF_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	rb_u64(&b, cookie);
	rb_u64(&b, 2);
	rb_u64(&b, leaf);
	rb_u64(&b, caller);
	rb_u32x2(&b, PID, tid); /* sample_id: TID TIME CPU IDENTIFIER */
	rb_u64(&b, time);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1);
	feed(s, &b);
}

static void comm(struct evprof_session *s, uint32_t tid, const char *name)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_COMM, 0);
	rb_u32x2(&b, PID, tid);
	rb_str(&b, name);
	rb_u32x2(&b, PID, tid);
	rb_u64(&b, 1);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1);
	feed(s, &b);
}

static struct evprof_session *new_session(void)
{
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = ST_BITS, .sample_id_all = true},
	};
	struct evprof_session *s = evprof_session__new(&o);

	assert_non_null(s);
	for (uint32_t t = 101; t <= 106; t++) {
		char name[8];

		snprintf(name, sizeof(name), "t%u", t);
		comm(s, t, name);
	}
	return s;
}

/* Builds s and returns its folded text (static buffer). */
static const char *build_folded(struct evprof_session *s)
{
	static char buf[8192];
	struct evprof_profile *p = evprof_profile__new(NULL);
	FILE *f = tmpfile();
	size_t n;

	assert_non_null(p);
	assert_non_null(f);
	assert_int_equal(evprof_session__build(s, p, NULL), 0);
	assert_int_equal(evprof_profile__write_folded_file(p, f, NULL), 0);
	rewind(f);
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	evprof_profile__free(p);
	return buf;
}

static void has_line(const char *text, const char *line)
{
	char want[256];

	snprintf(want, sizeof(want), "%s\n", line);
	if (!strstr(text, want))
		fail_msg("missing line '%s' in:\n%s", line, text);
}

static void stats(struct evprof_session *s, uint64_t deferred,
		  uint64_t unstitched)
{
	struct evprof_session_stats st = {.sz = sizeof(st)};

	evprof_session__stats(s, &st);
	assert_int_equal(st.deferred_samples, deferred);
	assert_int_equal(st.deferred_unstitched, unstitched);
}

static int lines(const char *text)
{
	int n = 0;

	for (; *text; text++)
		n += *text == '\n';
	return n;
}

/*
 * Two threads, the same cookie value on both (cookies are per task): each
 * sample takes its own thread's record, whichever comes first.
 */
static void test_interleaved_threads(void **state)
{
	struct evprof_session *s = new_session();
	const char *t;

	(void)state;
	sample_deferred(s, 101, 10, 0xffffffff81000010, 7);
	sample_deferred(s, 102, 11, 0xffffffff81000020, 7);
	deferred(s, 102, 12, 7, 0x402000, 0x502000);
	deferred(s, 101, 13, 7, 0x401000, 0x501000);
	t = build_folded(s);
	has_line(t, "t101;0x500fff;0x401000;0xffffffff81000010_[k] 1");
	has_line(t, "t102;0x501fff;0x402000;0xffffffff81000020_[k] 1");
	assert_int_equal(lines(t), 2);
	stats(s, 2, 0);
	evprof_session__free(s);
}

/* One kernel entry, several samples, one record for them all. */
static void test_several_wait_on_one_cookie(void **state)
{
	struct evprof_session *s = new_session();
	const char *t;

	(void)state;
	sample_deferred(s, 101, 20, 0xffffffff81000030, 0xb00000006);
	sample_deferred(s, 101, 21, 0xffffffff81000030, 0xb00000006);
	sample_deferred(s, 101, 22, 0xffffffff81000040, 0xb00000006);
	deferred(s, 101, 25, 0xb00000006, 0x403000, 0x503000);
	t = build_folded(s);
	has_line(t, "t101;0x502fff;0x403000;0xffffffff81000030_[k] 2");
	has_line(t, "t101;0x502fff;0x403000;0xffffffff81000040_[k] 1");
	assert_int_equal(lines(t), 2);
	stats(s, 3, 0);
	evprof_session__free(s);
}

/* The record never comes (lost, or the task exited): kernel part kept. */
static void test_missing_record(void **state)
{
	struct evprof_session *s = new_session();
	const char *t;

	(void)state;
	sample_deferred(s, 102, 30, 0xffffffff81000050, 9);
	sample_deferred(s, 101, 31, 0xffffffff81000060, 9);
	deferred(s, 101, 32, 9, 0x404000, 0x504000);
	t = build_folded(s);
	has_line(t, "t102;0xffffffff81000050_[k] 1");
	has_line(t, "t101;0x503fff;0x404000;0xffffffff81000060_[k] 1");
	stats(s, 2, 1);
	/* A second build gives the same answer. */
	t = build_folded(s);
	has_line(t, "t102;0xffffffff81000050_[k] 1");
	stats(s, 2, 1);
	evprof_session__free(s);
}

/*
 * The thread's next samples (one of the same kernel entry, one in user
 * mode with its stack inline) come before the record: the record still
 * completes every sample that waits on its cookie, and leaves the inline
 * one alone.
 */
static void test_record_after_next_sample(void **state)
{
	struct evprof_session *s = new_session();
	const char *t;

	(void)state;
	sample_deferred(s, 103, 40, 0xffffffff81000070, 0x21);
	sample_deferred(s, 103, 41, 0xffffffff81000080, 0x21);
	sample_inline(s, 103, 42, 0x405500, 0x505500);
	deferred(s, 103, 43, 0x21, 0x405000, 0x505000);
	t = build_folded(s);
	has_line(t, "t103;0x504fff;0x405000;0xffffffff81000070_[k] 1");
	has_line(t, "t103;0x504fff;0x405000;0xffffffff81000080_[k] 1");
	has_line(t, "t103;0x5054ff;0x405500 1");
	assert_int_equal(lines(t), 3);
	stats(s, 2, 0);
	evprof_session__free(s);
}

/*
 * A record with another cookie means the waiting sample's own record was
 * lost: it is released with its kernel part, and a late record with its
 * cookie does not claim it any more (it is another kernel entry's).
 */
static void test_cookie_mismatch(void **state)
{
	struct evprof_session *s = new_session();
	const char *t;

	(void)state;
	sample_deferred(s, 104, 50, 0xffffffff81000090, 0x31);
	deferred(s, 104, 51, 0x32, 0x406000, 0x506000);
	deferred(s, 104, 52, 0x31, 0x407000, 0x507000);
	sample_deferred(s, 104, 53, 0xffffffff810000a0, 0x33);
	deferred(s, 104, 54, 0x33, 0x408000, 0x508000);
	t = build_folded(s);
	has_line(t, "t104;0xffffffff81000090_[k] 1");
	has_line(t, "t104;0x507fff;0x408000;0xffffffff810000a0_[k] 1");
	assert_int_equal(lines(t), 2);
	stats(s, 2, 1);
	evprof_session__free(s);
}

/*
 * Per-CPU rings drained one after the other: the record (written on the
 * CPU where the task returned to user space) arrives before the samples it
 * completes, and a later kernel entry's samples arrive before older ones.
 */
static void test_per_cpu_out_of_order(void **state)
{
	struct evprof_session *s = new_session();
	const char *t;

	(void)state;
	/* CPU 1's ring: both records, and the later entry's sample. */
	deferred(s, 105, 61, 0x41, 0x409000, 0x509000);
	sample_deferred(s, 105, 70, 0xffffffff810000c0, 0x42);
	deferred(s, 105, 72, 0x42, 0x40a000, 0x50a000);
	/* CPU 0's ring: the first entry's samples, and another thread. */
	sample_deferred(s, 105, 60, 0xffffffff810000b0, 0x41);
	sample_deferred(s, 106, 60, 0xffffffff810000d0, 0x41);
	sample_deferred(s, 105, 71, 0xffffffff810000e0, 0x42);
	deferred(s, 106, 65, 0x41, 0x40b000, 0x50b000);
	t = build_folded(s);
	has_line(t, "t105;0x508fff;0x409000;0xffffffff810000b0_[k] 1");
	has_line(t, "t105;0x509fff;0x40a000;0xffffffff810000c0_[k] 1");
	has_line(t, "t105;0x509fff;0x40a000;0xffffffff810000e0_[k] 1");
	has_line(t, "t106;0x50afff;0x40b000;0xffffffff810000d0_[k] 1");
	assert_int_equal(lines(t), 4);
	stats(s, 4, 0);
	evprof_session__free(s);
}

/* A record without sample_id cannot be matched: samples stay waiting. */
static void test_record_without_sample_id(void **state)
{
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = ST_BITS},
	};
	struct evprof_session *s = evprof_session__new(&o);
	struct rb b;

	(void)state;
	assert_non_null(s);
	sample_deferred(s, 101, 10, 0xffffffff81000010, 5);
	rb_begin(&b, EVPROF_RECORD_CALLCHAIN_DEFERRED, PERF_RECORD_MISC_USER);
	rb_u64(&b, 5);
	rb_u64(&b, 1);
	rb_u64(&b, 0x401000);
	feed(s, &b);
	has_line(build_folded(s), "100;0xffffffff81000010_[k] 1");
	stats(s, 1, 1);
	evprof_session__free(s);
}

/*
 * Stack copies for DWARF unwinding are kept up to max_stack_bytes (only
 * the dyn_size bytes the kernel copied); the others are counted and keep
 * their kernel part. Registers point nowhere known: the sampled pc alone.
 */
static void test_stack_copies_capped(void **state)
{
	/* One copy: header 3 + 17 regs + 5 words of the 40 copied bytes. */
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = ST_BITS | PERF_SAMPLE_REGS_USER |
				   PERF_SAMPLE_STACK_USER,
		    .sample_regs_user = evprof_session__unwind_regs(),
		    .sample_id_all = true},
	    .max_stack_bytes = 25 * 8,
	};
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct evprof_session *s;
	const char *t;

	(void)state;
	if (!o.fmt.sample_regs_user)
		skip_because("no unwinder on this architecture");
	s = evprof_session__new(&o);
	assert_non_null(s);
	for (int k = 0; k < 2; k++) {
		struct rb b;

		rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
		rb_u64(&b, 1);
		rb_u64(&b, 0x401000 + (uint64_t)k);
		rb_u32x2(&b, PID, 101);
		rb_u64(&b, 10 + (uint64_t)k);
		rb_u32x2(&b, 0, 0);
		rb_u64(&b, 0); /* callchain: none (exclude_callchain_user) */
		rb_u64(&b, PERF_SAMPLE_REGS_ABI_64);
		for (int r = 0; r < 17; r++) /* IP (8): the sampled pc */
			rb_u64(&b, r == 8 ? 0x401000 + (uint64_t)k : 0x7f00);
		rb_u64(&b, 48); /* size asked; 40 bytes copied */
		for (int w = 0; w < 6; w++)
			rb_u64(&b, 0);
		rb_u64(&b, 40);
		feed(s, &b);
	}
	evprof_session__stats(s, &st);
	assert_int_equal(st.stacks_dropped, 1);
	t = build_folded(s);
	has_line(t, "100;0x401000 1");
	has_line(t, "100;0x401001 1");
	evprof_session__stats(s, &st);
	assert_int_equal(st.stacks_unwound, 1);
	assert_int_equal(st.stacks_truncated, 0);
	evprof_session__free(s);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interleaved_threads),
	    cmocka_unit_test(test_several_wait_on_one_cookie),
	    cmocka_unit_test(test_missing_record),
	    cmocka_unit_test(test_record_after_next_sample),
	    cmocka_unit_test(test_cookie_mismatch),
	    cmocka_unit_test(test_per_cpu_out_of_order),
	    cmocka_unit_test(test_record_without_sample_id),
	    cmocka_unit_test(test_stack_copies_capped),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
