// SPDX-License-Identifier: MIT
/*
 * perf.data import on hand-built files (layouts from perf's
 * perf.data-file-format.txt): pipe and file mode, one sample type per
 * event, group reads, finished-round ordering, zstd chunks that split a
 * record, unknown records, truncated and malformed files. Expected values
 * come from the records each test writes.
 */
#define _GNU_SOURCE
#include <elf.h>
#include <errno.h>
#include <link.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/perf_event.h>
#include <zstd.h>

#include <cmocka.h>

#include <evprof/perfdata.h>
#include <evprof/profile.h>

#include "cases.h"
#include "perfdata/internal.h"
#include "profile/model.h"

#define PLAIN_ST                                                               \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |                 \
	 PERF_SAMPLE_ID | PERF_SAMPLE_PERIOD)
#define READ_ST (PLAIN_ST | PERF_SAMPLE_READ)
#define READ_RF (PERF_FORMAT_GROUP | PERF_FORMAT_ID)

/* ---- a byte buffer ------------------------------------------------------ */

struct buf {
	uint8_t *b;
	size_t n, cap;
};

static void put(struct buf *b, const void *p, size_t n)
{
	if (b->n + n > b->cap) {
		b->cap = (b->n + n) * 2 + 256;
		b->b = realloc(b->b, b->cap);
		assert_non_null(b->b);
	}
	memcpy(b->b + b->n, p, n);
	b->n += n;
}

static void u64(struct buf *b, uint64_t v)
{
	put(b, &v, 8);
}

static void u32x2(struct buf *b, uint32_t lo, uint32_t hi)
{
	put(b, &lo, 4);
	put(b, &hi, 4);
}

/* Starts a record; rec_end() writes its size. */
static size_t rec_begin(struct buf *b, uint32_t type, uint16_t misc)
{
	size_t at = b->n;

	put(b, &type, 4);
	put(b, &misc, 2);
	put(b, "\0\0", 2);
	return at;
}

static void rec_end(struct buf *b, size_t at)
{
	uint16_t size = (uint16_t)(b->n - at);

	memcpy(b->b + at + 6, &size, 2);
}

static void str8(struct buf *b, const char *s)
{
	size_t n = strlen(s) + 1, pad = (8 - n % 8) % 8;

	put(b, s, n);
	put(b, "\0\0\0\0\0\0\0", pad);
}

static struct perf_event_attr attr(uint32_t type, uint64_t config,
				   uint64_t period, uint64_t st, uint64_t rf)
{
	struct perf_event_attr a;

	memset(&a, 0, sizeof(a));
	a.type = type;
	a.size = sizeof(a);
	a.config = config;
	a.sample_period = period;
	a.sample_type = st;
	a.read_format = rf;
	a.sample_id_all = 1;
	return a;
}

/* HEADER_ATTR: the attr, then its ids. */
static void header_attr(struct buf *b, const struct perf_event_attr *a,
			const uint64_t *ids, size_t nr)
{
	size_t at = rec_begin(b, 64, 0);

	put(b, a, sizeof(*a));
	for (size_t i = 0; i < nr; i++)
		u64(b, ids[i]);
	rec_end(b, at);
}

/* sample_id trailer of PLAIN_ST: TID, TIME, ID. */
static void trailer(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time,
		    uint64_t id)
{
	u32x2(b, pid, tid);
	u64(b, time);
	u64(b, id);
}

static void comm(struct buf *b, uint32_t pid, uint32_t tid, const char *name,
		 uint64_t time, uint64_t id)
{
	size_t at = rec_begin(b, PERF_RECORD_COMM, 0);

	u32x2(b, pid, tid);
	str8(b, name);
	trailer(b, pid, tid, time, id);
	rec_end(b, at);
}

static void fork_rec(struct buf *b, uint32_t pid, uint32_t tid, uint32_t ptid,
		     uint64_t time, uint64_t id)
{
	size_t at = rec_begin(b, PERF_RECORD_FORK, 0);

	u32x2(b, pid, pid);
	u32x2(b, tid, ptid);
	u64(b, time);
	trailer(b, pid, tid, time, id);
	rec_end(b, at);
}

struct val {
	uint64_t value, id;
};

/* A user-mode sample: ip, pid/tid, time, id, period[, read group]. */
static void sample(struct buf *b, uint32_t pid, uint32_t tid, uint64_t time,
		   uint64_t id, uint64_t period, const struct val *v,
		   uint64_t nr)
{
	size_t at = rec_begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);

	u64(b, 0x401000);
	u32x2(b, pid, tid);
	u64(b, time);
	u64(b, id);
	u64(b, period);
	if (v) {
		u64(b, nr);
		for (uint64_t i = 0; i < nr; i++) {
			u64(b, v[i].value);
			u64(b, v[i].id);
		}
	}
	rec_end(b, at);
}

static void empty(struct buf *b, uint32_t type)
{
	rec_end(b, rec_begin(b, type, 0));
}

static void pipe_header(struct buf *b)
{
	put(b, "PERFILE2", 8);
	u64(b, 16);
}

/* ---- reading the profile back ------------------------------------------- */

static struct evprof_profile *import(const struct buf *b,
				     struct evprof_perfdata **out)
{
	struct evprof_perfdata_opts o = {.sz = sizeof(o), .no_symbols = true};
	struct evprof_perfdata *pd = evprof_perfdata__open_mem(b->b, b->n, &o);
	struct evprof_profile *p;

	assert_non_null(pd);
	p = evprof_perfdata__import(pd);
	*out = pd;
	return p;
}

struct tsum {
	int tid, counter;
	uint64_t samples, cpu, value;
};

static int sum_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct tsum *t = ctx;

	t->samples += e->samples;
	t->cpu += e->cpu_ns;
	if (t->counter >= 0 && (e->has_counters >> t->counter) & 1)
		t->value += e->counters[t->counter];
	return 0;
}

static int counter_of(const struct evprof_profile *p, const char *name)
{
	const char *n;

	for (int i = 0; (n = evprof_profile__counter_name(p, i)); i++)
		if (!strcmp(n, name))
			return i;
	return -1;
}

/* Thread tid's sums; counter NULL: samples and CPU only. */
static struct tsum thread_sum(const struct evprof_profile *p, int tid,
			      const char *counter)
{
	struct evprof_profile_thread_info ti;
	struct tsum t = {.tid = tid, .counter = -1};

	if (counter) {
		t.counter = counter_of(p, counter);
		assert_true(t.counter >= 0);
	}
	for (int thr = 0; !evprof_profile__thread_info(p, thr, &ti); thr++)
		if (ti.tid == tid)
			evprof_profile__for_each_entry(p, thr, sum_entry, &t);
	return t;
}

static bool has_note(const struct evprof_profile *p, const char *part)
{
	for (size_t i = 0; i < p->nr_notes; i++)
		if (strstr(p->notes[i], part))
			return true;
	return false;
}

/* ---- tests -------------------------------------------------------------- */

/* Two events sampled on their own, out of time order, unknown records. */
static void test_pipe_plain(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct perf_event_attr m = attr(PERF_TYPE_SOFTWARE, 5, 1, PLAIN_ST, 0);
	struct evprof_perfdata_stats st = {.sz = sizeof(st)};
	struct buf b = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	uint64_t ida = 11, idm = 22;
	struct tsum t;
	size_t at;

	(void)state;
	pipe_header(&b);
	header_attr(&b, &a, &ida, 1);
	header_attr(&b, &m, &idm, 1);
	comm(&b, 100, 100, "main", 1, ida);
	fork_rec(&b, 100, 101, 100, 2, ida);
	comm(&b, 100, 101, "worker", 3, ida);
	/* Within a round, later records may come first. */
	sample(&b, 100, 101, 20, ida, 4, NULL, 0);
	sample(&b, 100, 100, 10, ida, 3, NULL, 0);
	sample(&b, 100, 101, 15, idm, 7, NULL, 0);
	/* A kernel record type from the future and a user one: skipped. */
	at = rec_begin(&b, 40, 0);
	u64(&b, 1);
	rec_end(&b, at);
	at = rec_begin(&b, 200, 0);
	u64(&b, 2);
	u64(&b, 3);
	rec_end(&b, at);
	empty(&b, 68);
	sample(&b, 100, 100, 30, ida, 5, NULL, 0);
	empty(&b, 68);

	p = import(&b, &pd);
	assert_non_null(p);
	t = thread_sum(p, 100, "page-faults");
	assert_int_equal(t.samples, 2);
	assert_int_equal(t.value, 3 + 5);
	t = thread_sum(p, 101, "page-faults");
	assert_int_equal(t.value, 4);
	t = thread_sum(p, 101, "minor-faults");
	assert_int_equal(t.value, 7);
	assert_int_equal(t.samples, 2);
	assert_int_equal(evprof_perfdata__stats(pd, &st), 0);
	assert_true(st.pipe);
	assert_int_equal(st.samples, 4);
	assert_int_equal(st.unknown_records, 2);
	assert_int_equal(st.nr_attrs, 2);
	assert_int_equal(st.rounds, 2);
	assert_true(has_note(p, "one sample type per event"));
	assert_true(has_note(p, "(40, 200) were skipped"));
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
}

/*
 * Group reads of a cpu-clock leader and a page-faults member, per CPU
 * instance (two ids each), no inherit; a file-mode file with a hostname.
 */
static void test_file_group(void **state)
{
	struct perf_event_attr at[2] = {
	    attr(PERF_TYPE_SOFTWARE, 0, 100000, READ_ST, READ_RF),
	    attr(PERF_TYPE_SOFTWARE, 2, 0, READ_ST, READ_RF),
	};
	const uint64_t ids[4] = {1, 2, 3, 4};
	struct buf b = {0}, data = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	uint64_t data_off, v;
	struct tsum t;

	(void)state;
	comm(&data, 100, 100, "main", 1, 1);
	sample(&data, 100, 100, 10, 1, 1000, (struct val[]){{1000, 1}, {5, 3}},
	       2);
	sample(&data, 100, 100, 20, 1, 1000, (struct val[]){{2000, 1}, {9, 3}},
	       2);
	sample(&data, 100, 100, 30, 2, 1000, (struct val[]){{1000, 2}, {4, 4}},
	       2);
	empty(&data, 68);

	/* header, attrs (attr + ids section), ids, data, features */
	data_off = 104 + 2 * (sizeof(at[0]) + 16) + 4 * 8;
	put(&b, "PERFILE2", 8);
	u64(&b, 104);
	u64(&b, sizeof(at[0]) + 16);
	u64(&b, 104);
	u64(&b, 2 * (sizeof(at[0]) + 16));
	u64(&b, data_off);
	u64(&b, data.n);
	u64(&b, 0);
	u64(&b, 0);
	u64(&b, 1ULL << 3); /* HEADER_HOSTNAME */
	u64(&b, 0);
	u64(&b, 0);
	u64(&b, 0);
	for (int i = 0; i < 2; i++) {
		put(&b, &at[i], sizeof(at[i]));
		u64(&b, 104 + 2 * (sizeof(at[0]) + 16) + 16 * (uint64_t)i);
		u64(&b, 16);
	}
	for (int i = 0; i < 4; i++)
		u64(&b, ids[i]);
	assert_int_equal(b.n, data_off);
	put(&b, data.b, data.n);
	u64(&b, b.n + 16); /* the feature table, then the section */
	u64(&b, 4 + 16);
	v = 16;
	put(&b, &v, 4);
	put(&b, "testhost\0\0\0\0\0\0\0\0", 16);

	p = import(&b, &pd);
	assert_non_null(p);
	t = thread_sum(p, 100, "page-faults");
	assert_int_equal(t.value, 9 + 4);
	assert_int_equal(t.cpu, 2000 + 1000);
	assert_int_equal(t.samples, 3);
	assert_true(has_note(p, "child threads were not recorded"));
	assert_true(has_note(p, "on testhost"));
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
	free(data.b);
}

/*
 * Group reads of inherited events: cumulative values per (id, thread)
 * that a round delivers out of time order still give deltas in time
 * order (else the older, smaller value would read as a reset).
 */
static void test_round_order(void **state)
{
	struct perf_event_attr at[2] = {
	    attr(PERF_TYPE_SOFTWARE, 0, 100000, READ_ST, READ_RF),
	    attr(PERF_TYPE_SOFTWARE, 2, 0, READ_ST, READ_RF),
	};
	uint64_t l = 1, mm = 3;
	struct buf b = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	struct tsum t;

	(void)state;
	at[0].inherit = at[1].inherit = 1;
	pipe_header(&b);
	header_attr(&b, &at[0], &l, 1);
	header_attr(&b, &at[1], &mm, 1);
	sample(&b, 100, 100, 200, 1, 1, (struct val[]){{2000, 1}, {10, 3}}, 2);
	empty(&b, 68);
	sample(&b, 100, 100, 100, 1, 1, (struct val[]){{1000, 1}, {4, 3}}, 2);
	empty(&b, 68);
	empty(&b, 68);

	p = import(&b, &pd);
	assert_non_null(p);
	t = thread_sum(p, 100, "page-faults");
	assert_int_equal(t.value, 10);
	assert_int_equal(t.cpu, 2000);
	assert_true(has_note(p, "inherited events"));
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
}

/*
 * Group reads of per-CPU events (-a: ID_INDEX says tid -1): the values
 * between two samples of a CPU are not charged to threads, their per-CPU
 * totals go to a note; the sampled event's own period still is.
 */
static void test_per_cpu_reads(void **state)
{
	struct perf_event_attr at[2] = {
	    attr(PERF_TYPE_SOFTWARE, 0, 1000, READ_ST, READ_RF),
	    attr(PERF_TYPE_SOFTWARE, 2, 0, READ_ST, READ_RF),
	};
	uint64_t l = 1, m = 3;
	struct buf b = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	struct tsum t;
	size_t at_;

	(void)state;
	pipe_header(&b);
	header_attr(&b, &at[0], &l, 1);
	header_attr(&b, &at[1], &m, 1);
	at_ = rec_begin(&b, 69, 0); /* ID_INDEX: {id, idx, cpu, tid} */
	u64(&b, 2);
	u64(&b, 1);
	u64(&b, 0);
	u64(&b, 0);
	u64(&b, (uint64_t)-1);
	u64(&b, 3);
	u64(&b, 0);
	u64(&b, 0);
	u64(&b, (uint64_t)-1);
	rec_end(&b, at_);
	/* Two threads sharing CPU 0: the member's value is the CPU's. */
	sample(&b, 100, 100, 10, 1, 1000, (struct val[]){{1000, 1}, {40, 3}},
	       2);
	sample(&b, 200, 200, 20, 1, 1000, (struct val[]){{2000, 1}, {70, 3}},
	       2);
	sample(&b, 100, 100, 30, 1, 1000, (struct val[]){{3000, 1}, {75, 3}},
	       2);
	empty(&b, 68);

	p = import(&b, &pd);
	assert_non_null(p);
	assert_int_equal(counter_of(p, "page-faults"), -1);
	t = thread_sum(p, 100, NULL);
	assert_int_equal(t.samples, 2);
	assert_int_equal(t.cpu, 2000); /* cpu-clock: the sample periods */
	t = thread_sum(p, 200, NULL);
	assert_int_equal(t.cpu, 1000);
	assert_true(has_note(p, "not charged to threads"));
	assert_true(has_note(p, "page-faults cpu0=75;"));
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
}

/*
 * One zstd stream in two COMPRESSED records, the cut inside a record;
 * type 83 (COMPRESSED2, perf 6.16) has a data size and pads to 8 bytes.
 */
static void compressed_case(uint32_t type)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct evprof_perfdata_stats st = {.sz = sizeof(st)};
	struct buf b = {0}, inner = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	ZSTD_CStream *cs = ZSTD_createCStream();
	uint64_t id = 7, total = 0;
	size_t cut;
	struct tsum t;

	assert_non_null(cs);
	ZSTD_initCStream(cs, 1);
	comm(&inner, 100, 100, "main", 1, id);
	for (uint64_t i = 1; i <= 40; i++) {
		sample(&inner, 100, 100, 10 + i, id, i, NULL, 0);
		total += i;
	}
	cut = inner.n / 2 + 3; /* not at a record boundary */
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	for (int k = 0; k < 2; k++) {
		uint8_t out[65000];
		ZSTD_inBuffer in = {inner.b + (k ? cut : 0),
				    k ? inner.n - cut : cut, 0};
		ZSTD_outBuffer o = {out, sizeof(out), 0};
		size_t at;

		while (in.pos < in.size)
			assert_false(
			    ZSTD_isError(ZSTD_compressStream(cs, &o, &in)));
		assert_int_equal(ZSTD_flushStream(cs, &o), 0);
		/* perf's COMPRESSED records are not padded to 8 bytes. */
		at = rec_begin(&b, type, 0);
		if (type == 83)
			u64(&b, o.pos);
		put(&b, out, o.pos);
		if (type == 83)
			put(&b, "\0\0\0\0\0\0\0", (8 - o.pos % 8) % 8);
		rec_end(&b, at);
	}
	empty(&b, 68);
	ZSTD_freeCStream(cs);

	p = import(&b, &pd);
	assert_non_null(p);
	t = thread_sum(p, 100, "page-faults");
	assert_int_equal(t.samples, 40);
	assert_int_equal(t.value, total);
	evprof_perfdata__stats(pd, &st);
	assert_int_equal(st.compressed, 2);
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
	free(inner.b);
}

static void test_compressed(void **state)
{
	(void)state;
	compressed_case(81);
	compressed_case(83);
}

/* Depth of the deepest stack thread tid has. */
static int depth_entry(const struct evprof_profile_entry *e, void *ctx)
{
	const struct evprof_profile *p = ((void **)ctx)[0];
	int *max = ((void **)ctx)[1], d = 0, st = e->stack;

	while (st >= 0) {
		d++;
		assert_int_equal(evprof_profile__stack_info(p, st, &st, NULL),
				 0);
	}
	if (d > *max)
		*max = d;
	return 0;
}

/*
 * A deferred user callchain (Linux 6.19): the sample's chain ends in
 * PERF_CONTEXT_USER_DEFERRED and a cookie, a later CALLCHAIN_DEFERRED of
 * the thread with that cookie brings the user part.
 */
static void test_deferred(void **state)
{
	struct perf_event_attr a =
	    attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST | PERF_SAMPLE_CALLCHAIN, 0);
	struct buf b = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	uint64_t id = 9, cookie = 0xb00000006ULL;
	int max = 0;
	void *ctx[2];
	size_t at;

	(void)state;
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	comm(&b, 100, 100, "main", 1, id);
	at = rec_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&b, 0xffffffff81001000ULL);
	u32x2(&b, 100, 100);
	u64(&b, 10);
	u64(&b, id);
	u64(&b, 1);
	u64(&b, 4);
	u64(&b, (uint64_t)PERF_CONTEXT_KERNEL);
	u64(&b, 0xffffffff81001000ULL);
	u64(&b, (uint64_t)-640); /* PERF_CONTEXT_USER_DEFERRED */
	u64(&b, cookie);
	rec_end(&b, at);
	at = rec_begin(&b, 22, PERF_RECORD_MISC_USER);
	u64(&b, cookie);
	u64(&b, 2);
	u64(&b, 0x401234);
	u64(&b, 0x401100);
	trailer(&b, 100, 100, 12, id);
	rec_end(&b, at);
	empty(&b, 68);

	p = import(&b, &pd);
	assert_non_null(p);
	assert_true(has_note(p, "1 deferred samples, 0 left unstitched"));
	ctx[0] = p;
	ctx[1] = &max;
	evprof_profile__for_each_entry(p, -1, depth_entry, ctx);
	assert_int_equal(max, 3); /* two user frames, one kernel frame */
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
}

/* The leaf frame's function of the first entry with a stack. */
static int leaf_entry(const struct evprof_profile_entry *e, void *ctx)
{
	const struct evprof_profile *p = ((void **)ctx)[0];
	char *out = ((void **)ctx)[1];
	struct evprof_profile_frame f;
	int fr;

	if (e->stack < 0)
		return 0;
	assert_int_equal(evprof_profile__stack_info(p, e->stack, NULL, &fr), 0);
	assert_int_equal(evprof_profile__frame_info(p, fr, &f), 0);
	snprintf(out, 128, "%s", f.function);
	return 1;
}

static void write_file(const char *path, const void *b, size_t n)
{
	FILE *f = fopen(path, "wb");

	assert_non_null(f);
	assert_int_equal(fwrite(b, 1, n, f), n);
	fclose(f);
}

/* An MMAP2 with the build id of its file (perf record --buildid-mmap). */
static void mmap2_bid_len(struct buf *b, uint32_t pid, uint64_t addr,
			  uint64_t len, uint64_t pgoff, const uint8_t *bid,
			  uint8_t bid_len, const char *path, uint64_t id)
{
	uint8_t b20[20] = {0};

	size_t at = rec_begin(b, PERF_RECORD_MMAP2,
			      (pid == (uint32_t)-1 ? PERF_RECORD_MISC_KERNEL
						   : PERF_RECORD_MISC_USER) |
				  PERF_RECORD_MISC_MMAP_BUILD_ID);

	u32x2(b, pid, pid == (uint32_t)-1 ? 0 : pid);
	u64(b, addr);
	u64(b, len);
	u64(b, pgoff);
	memcpy(b20, bid, bid_len);
	put(b, &bid_len, 1); /* build_id_size, reserved */
	put(b, "\0\0\0", 3);
	put(b, b20, 20);
	u32x2(b, 5, 2); /* PROT_READ | PROT_EXEC, MAP_PRIVATE */
	str8(b, path);
	trailer(b, pid, pid == (uint32_t)-1 ? 0 : pid, 0, id);
	rec_end(b, at);
}

static void mmap2_bid(struct buf *b, uint32_t pid, uint64_t addr, uint64_t len,
		      uint64_t pgoff, const uint8_t *bid, const char *path,
		      uint64_t id)
{
	mmap2_bid_len(b, pid, addr, len, pgoff, bid, 20, path, id);
}

/*
 * Kernel frames are named only from the kernel that recorded: its build
 * id (HEADER_BUILD_ID, else the kernel MMAP2's with --buildid-mmap) must
 * be the running one's (the notes file) and its _text (the kernel map's
 * pgoff) where kallsyms puts it now.
 */
static void kernel_case(const char *kallsyms, const uint8_t *now_id, bool mmap2,
			const char *want_frame, const char *want_note)
{
	static const uint8_t rec_id[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	char dir[] = "/tmp/evprof-pd.XXXXXX", ks[64], notes[64], leaf[128] = "";
	struct evprof_perfdata_opts o = {.sz = sizeof(o)};
	struct buf b = {0}, n = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	uint64_t id = 3;
	void *ctx[2] = {NULL, leaf};
	size_t at;

	assert_non_null(mkdtemp(dir));
	snprintf(ks, sizeof(ks), "%s/kallsyms", dir);
	snprintf(notes, sizeof(notes), "%s/notes", dir);
	write_file(ks, kallsyms, strlen(kallsyms));
	u32x2(&n, 4, 20); /* namesz, descsz, type 3 (NT_GNU_BUILD_ID) */
	put(&n, &(uint32_t){3}, 4);
	put(&n, "GNU", 4);
	put(&n, now_id, 20);
	write_file(notes, n.b, n.n);

	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	if (mmap2) {
		mmap2_bid(&b, -1, 0xffffffff81000000ULL, 0x1000000,
			  0xffffffff81000000ULL, rec_id,
			  "[kernel.kallsyms]_text", id);
		/* A user binary whose build id only its MMAP2 gives. */
		mmap2_bid(&b, 100, 0x400000, 0x2000, 0, rec_id,
			  "/nonexistent/evprof-test/lib.so", id);
	} else {
		/* HEADER_BUILD_ID, then the kernel MMAP */
		at = rec_begin(&b, 67, PERF_RECORD_MISC_KERNEL);
		put(&b, &(int32_t){-1}, 4);
		put(&b, rec_id, 20);
		put(&b, "\0\0\0\0", 4);
		str8(&b, "[kernel.kallsyms]");
		rec_end(&b, at);
		at = rec_begin(&b, PERF_RECORD_MMAP, PERF_RECORD_MISC_KERNEL);
		u32x2(&b, -1, 0);
		u64(&b, 0xffffffff81000000ULL);
		u64(&b, 0x1000000);
		u64(&b, 0xffffffff81000000ULL);
		str8(&b, "[kernel.kallsyms]_text");
		trailer(&b, -1, 0, 0, id);
		rec_end(&b, at);
	}
	comm(&b, 100, 100, "main", 1, id);
	at = rec_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_KERNEL);
	u64(&b, 0xffffffff81000123ULL);
	u32x2(&b, 100, 100);
	u64(&b, 10);
	u64(&b, id);
	u64(&b, 1);
	rec_end(&b, at);
	empty(&b, 68);

	o.kallsyms_path = ks;
	o.kernel_notes_path = notes;
	o.buildid_dir = dir; /* no copy of kallsyms there */
	pd = evprof_perfdata__open_mem(b.b, b.n, &o);
	assert_non_null(pd);
	p = evprof_perfdata__import(pd);
	assert_non_null(p);
	ctx[0] = p;
	evprof_profile__for_each_entry(p, -1, leaf_entry, ctx);
	assert_string_equal(leaf, want_frame);
	assert_true(has_note(p, want_note));
	if (mmap2) {
		assert_true(has_note(p, "binary not found: "
					"/nonexistent/evprof-test/lib.so "
					"(build id 0102030405060708090a0000"));
		assert_false(has_note(p, "records no build ids"));
	}
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	unlink(ks);
	unlink(notes);
	rmdir(dir);
	free(b.b);
	free(n.b);
}

static void test_kernel_of_this_boot(void **state)
{
	static const uint8_t same[20] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10};
	static const uint8_t other[20] = {9, 9, 9};
	const char *here = "ffffffff81000000 T _text\n"
			   "ffffffff81000100 T recorded_fn\n"
			   "ffffffff81000200 T next_fn\n";
	const char *moved = "ffffffff8a000000 T _text\n"
			    "ffffffff8a000100 T recorded_fn\n";

	(void)state;
	for (int mmap2 = 0; mmap2 < 2; mmap2++) {
		kernel_case(here, same, mmap2, "recorded_fn",
			    "kernel frames named from");
		kernel_case(here, other, mmap2, "[kernel.kallsyms]+0x123",
			    "another kernel (build id differs)");
		kernel_case(moved, same, mmap2, "[kernel.kallsyms]+0x123",
			    "another address in this boot (KASLR)");
	}
}

/* File-mode header of a file perf did not finish: data size 0. */
static void killed_header(struct buf *b, const struct perf_event_attr *a,
			  uint64_t id)
{
	uint64_t attrs = 104 + 8, data_off = attrs + sizeof(*a) + 16;

	put(b, "PERFILE2", 8);
	u64(b, 104);
	u64(b, sizeof(*a) + 16);
	u64(b, attrs);
	u64(b, sizeof(*a) + 16);
	u64(b, data_off);
	u64(b, 0);
	for (int i = 0; i < 6; i++)
		u64(b, 0);
	u64(b, id); /* the ids, before the attrs */
	put(b, a, sizeof(*a));
	u64(b, 104);
	u64(b, 8);
}

static void test_truncated(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct evprof_perfdata_stats st = {.sz = sizeof(st)};
	struct buf b = {0};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	struct tsum t;

	(void)state;
	killed_header(&b, &a, 5);
	comm(&b, 100, 100, "main", 1, 5);
	for (int i = 0; i < 3; i++)
		sample(&b, 100, 100, 10 + i, 5, 1, NULL, 0);
	empty(&b, 68);
	sample(&b, 100, 100, 20, 5, 1, NULL, 0);
	b.n -= 12; /* the last record is cut */

	p = import(&b, &pd);
	assert_non_null(p);
	t = thread_sum(p, 100, "page-faults");
	assert_int_equal(t.samples, 3);
	evprof_perfdata__stats(pd, &st);
	assert_true(st.truncated);
	assert_true(has_note(p, "truncated"));
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
}

static void test_malformed(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct buf b = {0};
	struct evprof_perfdata *pd;
	uint64_t id = 5;
	size_t at, bad;
	char want[64];

	(void)state;
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	sample(&b, 100, 100, 10, 5, 1, NULL, 0);
	bad = b.n;
	at = rec_begin(&b, PERF_RECORD_SAMPLE, 0);
	u64(&b, 0);
	rec_end(&b, at);
	memcpy(b.b + bad + 6, &(uint16_t){4}, 2);
	assert_null(import(&b, &pd));
	assert_int_equal(errno, EVPROF_ERR_BAD_PERFDATA);
	snprintf(want, sizeof(want), "at offset 0x%zx", bad);
	assert_non_null(strstr(evprof_perfdata__error(pd), want));
	evprof_perfdata__free(pd);

	/* A sample too short for its attr's layout. */
	b.n = bad;
	at = rec_begin(&b, PERF_RECORD_SAMPLE, 0);
	u64(&b, 0);
	rec_end(&b, at);
	assert_null(import(&b, &pd));
	assert_non_null(strstr(evprof_perfdata__error(pd), want));
	evprof_perfdata__free(pd);

	/* Its time is where it should be, its period is missing. */
	b.n = bad;
	at = rec_begin(&b, PERF_RECORD_SAMPLE, 0);
	u64(&b, 0x401000);
	u32x2(&b, 100, 100);
	u64(&b, 11);
	u64(&b, 5);
	rec_end(&b, at);
	empty(&b, 68);
	assert_null(import(&b, &pd));
	assert_int_equal(errno, EVPROF_ERR_BAD_PERFDATA);
	assert_non_null(strstr(evprof_perfdata__error(pd), "malformed SAMPLE"));
	assert_non_null(strstr(evprof_perfdata__error(pd), want));
	evprof_perfdata__free(pd);

	/* perf.data version 1 (before Linux 2.6.35). */
	memcpy(b.b, "PERFFILE", 8);
	assert_null(import(&b, &pd));
	assert_non_null(strstr(evprof_perfdata__error(pd), "version 1"));
	evprof_perfdata__free(pd);

	/* Not a perf.data file at all. */
	memcpy(b.b, "PERFILE3", 8);
	assert_null(import(&b, &pd));
	assert_non_null(strstr(evprof_perfdata__error(pd), "magic"));
	evprof_perfdata__free(pd);
	free(b.b);
}

/*
 * MMAP2 as kernels 3.12 to 3.15 (and RHEL 7's 3.10) wrote it: no prot and
 * flags, the file name at byte 64; data maps told by MISC_MMAP_DATA.
 */
static void old_mmap2(struct buf *b, uint16_t misc, uint64_t addr,
		      const char *path, uint64_t id)
{
	size_t at = rec_begin(b, PERF_RECORD_MMAP2, misc);

	u32x2(b, 100, 100);
	u64(b, addr);
	u64(b, 0x10000);
	u64(b, 0);
	u32x2(b, 253, 1); /* maj, min */
	u64(b, 42);	  /* ino */
	u64(b, 0);	  /* ino_generation */
	str8(b, path);
	trailer(b, 100, 100, 1, id);
	rec_end(b, at);
}

static void test_old_mmap2(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct evprof_perfdata_opts o = {.sz = sizeof(o)};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	struct buf b = {0};
	char leaf[128] = "", want[64];
	uint64_t id = 7;
	size_t bad;

	(void)state;
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	comm(&b, 100, 100, "true", 1, id);
	old_mmap2(&b, PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_DATA,
		  0x7fff0000, "[stack]", id);
	old_mmap2(&b, PERF_RECORD_MISC_USER, 0x400000,
		  "/nonexistent/evprof-old-mmap2", id);
	sample(&b, 100, 100, 10, id, 1, NULL, 0);
	sample(&b, 100, 100, 11, id, 1, NULL, 0);
	empty(&b, 68);
	pd = evprof_perfdata__open_mem(b.b, b.n, &o);
	assert_non_null(pd);
	p = evprof_perfdata__import(pd);
	if (!p)
		fail_msg("%s", evprof_perfdata__error(pd));
	assert_int_equal(thread_sum(p, 100, NULL).samples, 2);
	evprof_profile__for_each_entry(p, 0, leaf_entry, (void *[]){p, leaf});
	/* The name read from byte 64, the sample placed in its map. */
	assert_string_equal(leaf, "evprof-old-mmap2+0x1000");
	evprof_profile__free(p);
	evprof_perfdata__free(pd);

	/* A name with no end fits neither layout: refused where it is. */
	b.n = 0;
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	bad = b.n;
	old_mmap2(&b, PERF_RECORD_MISC_USER, 0x400000, "/abcdefghijklmn", id);
	b.b[bad + 64 + 15] = 'o';
	assert_null(import(&b, &pd));
	snprintf(want, sizeof(want), "malformed MMAP2 record at offset 0x%zx",
		 bad);
	assert_string_equal(evprof_perfdata__error(pd), want);
	evprof_perfdata__free(pd);
	free(b.b);
}

/*
 * A side-band record at the largest size (65528) of an event without
 * sample_id_all: rewritten with the session's trailer it would pass 64
 * KiB, so it is refused as too long, naming its offset (it once wrote past
 * the rewrite buffer).
 */
static void long_sideband_case(uint32_t type)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct buf b = {0};
	struct evprof_perfdata *pd;
	uint64_t id = 5;
	size_t at;
	char want[96];

	a.sample_id_all = 0;
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	sample(&b, 100, 100, 10, 5, 1, NULL, 0);
	at = rec_begin(&b, type, 0);
	if (type == PERF_RECORD_COMM) {
		u32x2(&b, 100, 100);
		str8(&b, "main");
	} else {
		u64(&b, id);
		u64(&b, 3);
	}
	while (b.n - at < 65528)
		u64(&b, 0);
	rec_end(&b, at);
	empty(&b, 68);
	assert_null(import(&b, &pd));
	assert_int_equal(errno, EVPROF_ERR_BAD_PERFDATA);
	snprintf(want, sizeof(want),
		 "%s record too long to rewrite at offset 0x%zx",
		 type == PERF_RECORD_COMM ? "COMM" : "LOST", at);
	assert_string_equal(evprof_perfdata__error(pd), want);
	evprof_perfdata__free(pd);

	/* 32 bytes shorter, body and trailer fit: the import goes on. */
	memmove(b.b + at + 65496, b.b + at + 65528, b.n - at - 65528);
	b.n -= 32;
	memcpy(b.b + at + 6, &(uint16_t){65496}, 2);
	{
		struct evprof_profile *p = import(&b, &pd);

		assert_non_null(p);
		assert_int_equal(thread_sum(p, 100, NULL).samples, 1);
		evprof_profile__free(p);
	}
	evprof_perfdata__free(pd);
	free(b.b);
}

static void test_long_sideband(void **state)
{
	(void)state;
	long_sideband_case(PERF_RECORD_COMM);
	long_sideband_case(PERF_RECORD_LOST);
}

struct emitted {
	size_t n, during_add;
	uint64_t last_time, off_sum;
	bool adding, in_order;
};

static int count_emit(void *ctx, const uint64_t *rec, uint32_t size,
		      uint64_t off)
{
	struct emitted *e = ctx;

	assert_int_equal(size, 64);
	if (rec[1] < e->last_time)
		e->in_order = false;
	e->last_time = rec[1];
	e->n++;
	e->during_add += e->adding;
	e->off_sum += off;
	return 0;
}

/*
 * Records without any FINISHED_ROUND: the queue never holds more than its
 * cap (the older half goes on first), every record comes out once, and
 * records out of order by less than half the queue still come out sorted.
 */
static void test_order_cap(void **state)
{
	struct pd_order o = {.max_bytes = 16384};
	struct emitted e = {.in_order = true};
	uint64_t rec[8] = {0}, n = 2000;

	(void)state;
	e.adding = true;
	for (uint64_t i = 0; i < n; i++) {
		rec[1] = 1000 + (i ^ 7); /* out of order in groups of 8 */
		assert_int_equal(evprof__pd_order_add(&o, rec, sizeof(rec),
						      rec[1], i, count_emit,
						      &e),
				 0);
		assert_true(evprof__pd_order_bytes(&o) <= o.max_bytes);
	}
	e.adding = false;
	assert_true(e.during_add > 0);
	assert_int_equal(evprof__pd_order_flush(&o, count_emit, &e), 0);
	assert_int_equal(e.n, n);
	assert_int_equal(e.off_sum, n * (n - 1) / 2);
	assert_true(e.in_order);
	evprof__pd_order_free(&o);
}

/* Emitted records' offsets, in order. */
struct offs {
	uint64_t *a;
	size_t n;
};

static int offs_emit(void *ctx, const uint64_t *rec, uint32_t size,
		     uint64_t off)
{
	struct offs *o = ctx;

	(void)rec;
	(void)size;
	o->a[o->n++] = off;
	return 0;
}

static uint64_t ref_time[4096];

/* (time, file offset): the order every record must come out in. */
static int cmp_ref(const void *pa, const void *pb)
{
	uint64_t a = *(const uint64_t *)pa, b = *(const uint64_t *)pb;

	if (ref_time[a] != ref_time[b])
		return ref_time[a] < ref_time[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * Rounds as perf writes them: each pass reads every ring in turn (runs in
 * time order, ties between rings), a ring read late holding records older
 * than others': the records come out in (time, file order), exactly as a
 * sort of the whole file says, round by round and at the end.
 */
static void test_order_runs(void **state)
{
	struct pd_order o = {0};
	struct offs got = {.a = calloc(4096, sizeof(uint64_t))};
	uint64_t want[4096], rec[8] = {0}, n = 0, seed = 7;

	(void)state;
	assert_non_null(got.a);
	for (int round = 0; round < 20; round++) {
		/* 2 to 6 rings: odd and even counts of runs to merge. */
		for (int ring = 0; ring < 2 + round % 5; ring++) {
			/* A run: ascending from a base per ring, the rings'
			 * runs overlapping, not read in base order. */
			uint64_t t = 1000 * (uint64_t)round +
				     7 * (uint64_t)(ring * 3 % 5);
			int len = (int)(seed % 40);

			for (int k = 0; k < len && n < 4096; k++) {
				seed = seed * 6364136223846793005ull + 1;
				t += (seed >> 60) % 16; /* ties too */
				ref_time[n] = rec[1] = t;
				assert_int_equal(
				    evprof__pd_order_add(&o, rec, sizeof(rec),
							 t, n, offs_emit, &got),
				    0);
				n++;
			}
			seed = seed * 6364136223846793005ull + 1;
		}
		assert_int_equal(evprof__pd_order_round(&o, offs_emit, &got),
				 0);
	}
	assert_int_equal(evprof__pd_order_flush(&o, offs_emit, &got), 0);
	assert_true(n > 1000);
	assert_int_equal(got.n, n);
	for (uint64_t i = 0; i < n; i++)
		want[i] = i;
	qsort(want, n, sizeof(*want), cmp_ref);
	for (uint64_t i = 0; i < n; i++)
		assert_int_equal(got.a[i], want[i]);
	free(got.a);
	evprof__pd_order_free(&o);
}

static size_t notes_with(const struct evprof_profile *p, const char *part)
{
	size_t n = 0;

	for (size_t i = 0; i < p->nr_notes; i++)
		n += strstr(p->notes[i], part) != NULL;
	return n;
}

/* 15 binaries not found: 10 notes name one each, one says the rest. */
static void test_many_missing(void **state)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct evprof_perfdata_opts o = {.sz = sizeof(o),
					 .buildid_dir = "/nonexistent"};
	uint8_t bid[20] = {0xee};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	struct buf b = {0};
	uint64_t id = 4;
	char path[64];

	(void)state;
	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	for (int i = 0; i < 15; i++) {
		bid[1] = (uint8_t)i;
		snprintf(path, sizeof(path),
			 "/nonexistent/evprof-test/lib%d.so", i);
		mmap2_bid(&b, 100, 0x400000 + 0x10000 * (uint64_t)i, 0x2000, 0,
			  bid, path, id);
	}
	sample(&b, 100, 100, 10, id, 1, NULL, 0);
	empty(&b, 68);
	pd = evprof_perfdata__open_mem(b.b, b.n, &o);
	assert_non_null(pd);
	p = evprof_perfdata__import(pd);
	assert_non_null(p);
	assert_int_equal(notes_with(p, "binary not found: "), 10);
	assert_true(has_note(p, "lib9.so"));
	assert_false(has_note(p, "lib10.so"));
	assert_int_equal(notes_with(p, "and 5 more binaries not found"), 1);
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
}

/* The main program's GNU build id, from its PT_NOTE in memory. */
static int exe_note(struct dl_phdr_info *info, size_t sz, void *ctx)
{
	struct buf *id = ctx;

	(void)sz;
	if (info->dlpi_name[0])
		return 0;
	for (int i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		const uint8_t *p =
		    (const uint8_t *)(info->dlpi_addr + ph->p_vaddr);
		size_t off = 0;

		if (ph->p_type != PT_NOTE)
			continue;
		while (off + 12 <= ph->p_memsz) {
			uint32_t nsz, dsz, type;

			memcpy(&nsz, p + off, 4);
			memcpy(&dsz, p + off + 4, 4);
			memcpy(&type, p + off + 8, 4);
			off += 12;
			if (type == NT_GNU_BUILD_ID && nsz == 4 &&
			    !memcmp(p + off, "GNU", 4)) {
				put(id, p + off + 4, dsz);
				return 1;
			}
			off += ((nsz + 3) & ~3u) + ((dsz + 3) & ~3u);
		}
	}
	return 1;
}

/* Whether an exec mapping of exe, recorded with build id bid, differs. */
static bool exe_differs(const char *exe, const uint8_t *bid, uint8_t len)
{
	struct perf_event_attr a = attr(PERF_TYPE_SOFTWARE, 2, 1, PLAIN_ST, 0);
	struct evprof_perfdata_opts o = {.sz = sizeof(o),
					 .buildid_dir = "/nonexistent"};
	struct evprof_perfdata *pd;
	struct evprof_profile *p;
	struct buf b = {0};
	uint64_t id = 4;
	bool differs;

	pipe_header(&b);
	header_attr(&b, &a, &id, 1);
	mmap2_bid_len(&b, 100, 0x400000, 0x2000, 0, bid, len, exe, id);
	sample(&b, 100, 100, 10, id, 1, NULL, 0);
	empty(&b, 68);
	pd = evprof_perfdata__open_mem(b.b, b.n, &o);
	assert_non_null(pd);
	p = evprof_perfdata__import(pd);
	assert_non_null(p);
	assert_false(has_note(p, "binary not found"));
	differs = has_note(p, "differs from the one recorded");
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	free(b.b);
	return differs;
}

/*
 * A binary is the recorded one only when its build id is the recorded
 * one whole: a recorded id that is a prefix of the file's is another.
 */
static void test_build_id_exact(void **state)
{
	struct buf id = {0};
	char exe[4096];
	ssize_t n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);

	(void)state;
	assert_true(n > 0);
	exe[n] = '\0';
	dl_iterate_phdr(exe_note, &id);
	if (id.n < 9 || id.n > 20) {
		free(id.b);
		skip_because("this test binary has no usable build id");
	}
	assert_false(exe_differs(exe, id.b, (uint8_t)id.n));
	assert_true(exe_differs(exe, id.b, 8));
	id.b[0] ^= 0xff;
	assert_true(exe_differs(exe, id.b, (uint8_t)id.n));
	free(id.b);
}

static size_t heap_in_use(void)
{
	struct mallinfo2 m = mallinfo2();

	return m.hblkhd + m.uordblks;
}

/*
 * One small COMPRESSED payload that inflates to 16 MiB of records: they
 * come out one by one while the heap stays far below what the whole
 * output would take (it once grew to hold it all, up to 2 GiB).
 */
static void test_unzip_bounded(void **state)
{
	const size_t n = (size_t)16 << 20, rsz = 4096;
	uint8_t *plain = calloc(1, n), *zbuf;
	size_t zn, base, peak = 0, got = 0;
	struct pd_unzip *z;
	struct pd_rec r;
	char err[128] = "";
	int ret;

	(void)state;
	assert_non_null(plain);
	for (size_t o = 0; o < n; o += rsz) {
		plain[o] = 100; /* a user type nobody knows */
		plain[o + 6] = (uint8_t)rsz;
		plain[o + 7] = (uint8_t)(rsz >> 8);
	}
	zbuf = malloc(ZSTD_compressBound(n));
	assert_non_null(zbuf);
	zn = ZSTD_compress(zbuf, ZSTD_compressBound(n), plain, n, 1);
	assert_false(ZSTD_isError(zn));
	assert_true(zn < 65536 - 8); /* fits one COMPRESSED record */
	free(plain);
	z = evprof__pd_unzip_new();
	assert_non_null(z);
	base = heap_in_use();
	evprof__pd_unzip_feed(z, zbuf, zn);
	while ((ret = evprof__pd_unzip_next(z, &r, err, sizeof(err))) > 0) {
		size_t now = heap_in_use();

		assert_int_equal(r.type, 100);
		assert_int_equal(r.size, rsz);
		got++;
		if (now > base && now - base > peak)
			peak = now - base;
	}
	assert_int_equal(ret, 0);
	assert_string_equal(err, "");
	assert_int_equal(got, n / rsz);
	assert_int_equal(evprof__pd_unzip_left(z), 0);
	/* zstd's window (512 KiB at level 1) and no output to speak of. */
	print_message("heap growth while draining 16 MiB: %zu bytes\n", peak);
	assert_true(peak < ((size_t)4 << 20));
	evprof__pd_unzip_free(z);
	free(zbuf);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_pipe_plain),
	    cmocka_unit_test(test_file_group),
	    cmocka_unit_test(test_round_order),
	    cmocka_unit_test(test_order_runs),
	    cmocka_unit_test(test_per_cpu_reads),
	    cmocka_unit_test(test_compressed),
	    cmocka_unit_test(test_deferred),
	    cmocka_unit_test(test_kernel_of_this_boot),
	    cmocka_unit_test(test_truncated),
	    cmocka_unit_test(test_malformed),
	    cmocka_unit_test(test_old_mmap2),
	    cmocka_unit_test(test_long_sideband),
	    cmocka_unit_test(test_order_cap),
	    cmocka_unit_test(test_unzip_bounded),
	    cmocka_unit_test(test_many_missing),
	    cmocka_unit_test(test_build_id_exact),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
