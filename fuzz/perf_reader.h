/* SPDX-License-Identifier: MIT */
/*
 * fuzz_session's own reader of perf records, written from the perf ABI
 * (linux/perf_event.h: struct perf_event_header, the fields of a sample in
 * sample_type order, the read_format layout, the sample_id trailer of the
 * other records) and not from evprof's parsers, so that a decoding bug
 * there cannot agree with itself. It says whether a record is well formed
 * by the rules evprof_record__parse() documents (every field within
 * header.size, size a multiple of 8, strings NUL-terminated, layouts of
 * known bits only) and decodes what the session model needs.
 *
 * The fuzzed format sets neither branch_sample_type nor sample_regs_intr:
 * branch stacks have no hw_idx nor counters, interrupt registers none.
 */
#ifndef EVPROF_FUZZ_PERF_READER_H
#define EVPROF_FUZZ_PERF_READER_H

#include <linux/perf_event.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* Layouts known: sample bits up to WEIGHT_STRUCT, read bits up to LOST. */
#define PR_SAMPLE_KNOWN	      ((1ULL << 25) - 1)
#define PR_READ_KNOWN	      ((1ULL << 5) - 1)
#define PR_CALLCHAIN_DEFERRED 22 /* Linux 6.19, newer than the header */
#define PR_LAST_TYPE	      PR_CALLCHAIN_DEFERRED
#define PR_MAX_READS	      64 /* a session refuses larger groups */
#define PR_BUILD_ID_MAX	      20

struct pr_fmt {
	uint64_t sample_type, read_format, regs_user;
	bool id_all;
};

struct pr_rec {
	uint32_t type;
	uint16_t misc;
	bool ok;	 /* well formed */
	bool id_present; /* non-samples: a sample_id trailer was read */
	/* A sample's fields, or a trailer's. */
	uint32_t pid, tid, cpu;
	uint64_t time, id;
	/* PERF_SAMPLE_READ: nr as written, up to PR_MAX_READS decoded. */
	uint64_t nr_reads;
	uint64_t read_id[PR_MAX_READS], read_val[PR_MAX_READS];
	/* FORK, EXIT */
	uint32_t t_tid;
	uint64_t t_time;
	uint32_t next_prev_tid; /* SWITCH_CPU_WIDE */
	uint64_t count;		/* LOST's lost, LOST_SAMPLES' */
};

struct pr_cur {
	const uint8_t *p, *end;
	bool bad;
};

static inline const uint8_t *pr_take(struct pr_cur *c, uint64_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return NULL;
	}
	c->p += n;
	return p;
}

/* nr elements of elem bytes, bounded before multiplying. */
static inline void pr_array(struct pr_cur *c, uint64_t nr, uint64_t elem)
{
	if (!c->bad && nr > (uint64_t)(c->end - c->p) / elem)
		c->bad = true;
	else
		pr_take(c, nr * elem);
}

static inline uint64_t pr_u64(struct pr_cur *c)
{
	const uint8_t *p = pr_take(c, 8);
	uint64_t v = 0;

	if (p)
		memcpy(&v, p, 8);
	return v;
}

/* The first u32 of a u32 pair ({pid, tid}, {cpu, res}). */
static inline uint32_t pr_u32x2(struct pr_cur *c, uint32_t *second)
{
	const uint8_t *p = pr_take(c, 8);
	uint32_t v[2] = {0, 0};

	if (p)
		memcpy(v, p, 8);
	if (second)
		*second = v[1];
	return v[0];
}

/* A NUL-terminated string filling the rest of the body. */
static inline void pr_string(struct pr_cur *c)
{
	size_t left = (size_t)(c->end - c->p);

	if (!left || !memchr(c->p, 0, left))
		c->bad = true;
	c->p = c->end;
}

/*
 * struct read_format: without GROUP {value, [enabled], [running], [id],
 * [lost]}; with it {nr, [enabled], [running], nr x {value, [id], [lost]}}.
 */
static inline void pr_read(struct pr_cur *c, uint64_t rf, struct pr_rec *r)
{
	uint64_t entry =
	    1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	uint64_t times = !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
			 !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);

	if (rf & ~PR_READ_KNOWN) {
		c->bad = true;
		return;
	}
	if (!(rf & PERF_FORMAT_GROUP)) {
		r->nr_reads = 1;
		r->read_val[0] = pr_u64(c);
		pr_array(c, times, 8);
		r->read_id[0] = rf & PERF_FORMAT_ID ? pr_u64(c) : 0;
		if (rf & PERF_FORMAT_LOST)
			pr_u64(c);
		return;
	}
	r->nr_reads = pr_u64(c);
	pr_array(c, times, 8);
	if (c->bad || r->nr_reads > (uint64_t)(c->end - c->p) / 8 / entry) {
		c->bad = true;
		return;
	}
	for (uint64_t i = 0; i < r->nr_reads; i++) {
		uint64_t v = pr_u64(c);
		uint64_t id = rf & PERF_FORMAT_ID ? pr_u64(c) : 0;

		if (rf & PERF_FORMAT_LOST)
			pr_u64(c);
		if (i < PR_MAX_READS) {
			r->read_val[i] = v;
			r->read_id[i] = id;
		}
	}
}

/* {abi, regs[popcount(mask)]}, no registers when abi is 0. */
static inline void pr_regs(struct pr_cur *c, uint64_t mask)
{
	if (pr_u64(c))
		pr_array(c, (uint64_t)__builtin_popcountll(mask), 8);
}

static inline void pr_sample(struct pr_cur *c, const struct pr_fmt *f,
			     struct pr_rec *r)
{
	uint64_t st = f->sample_type, ident = 0, n;

	if (st & ~PR_SAMPLE_KNOWN) {
		c->bad = true;
		return;
	}
	if (st & PERF_SAMPLE_IDENTIFIER)
		ident = pr_u64(c);
	if (st & PERF_SAMPLE_IP)
		pr_u64(c);
	if (st & PERF_SAMPLE_TID)
		r->pid = pr_u32x2(c, &r->tid);
	if (st & PERF_SAMPLE_TIME)
		r->time = pr_u64(c);
	if (st & PERF_SAMPLE_ADDR)
		pr_u64(c);
	r->id = st & PERF_SAMPLE_ID ? pr_u64(c) : ident;
	if (st & PERF_SAMPLE_STREAM_ID)
		pr_u64(c);
	if (st & PERF_SAMPLE_CPU)
		r->cpu = pr_u32x2(c, NULL);
	if (st & PERF_SAMPLE_PERIOD)
		pr_u64(c);
	if (st & PERF_SAMPLE_READ)
		pr_read(c, f->read_format, r);
	if (st & PERF_SAMPLE_CALLCHAIN)
		pr_array(c, pr_u64(c), 8);
	if (st & PERF_SAMPLE_RAW) {
		const uint8_t *p = pr_take(c, 4);
		uint32_t size = 0;

		if (p)
			memcpy(&size, p, 4);
		/* The kernel pads {u32 size; data} to u64s. */
		if ((4 + (uint64_t)size) % 8)
			c->bad = true;
		pr_array(c, size, 1);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK)
		pr_array(c, pr_u64(c), 24); /* {from, to, flags} */
	if (st & PERF_SAMPLE_REGS_USER)
		pr_regs(c, f->regs_user);
	if ((st & PERF_SAMPLE_STACK_USER) && (n = pr_u64(c))) {
		if (n % 8)
			c->bad = true;
		pr_array(c, n, 1);
		if (pr_u64(c) > n) /* dyn_size: bytes copied */
			c->bad = true;
	}
	if (st & (PERF_SAMPLE_WEIGHT | PERF_SAMPLE_WEIGHT_STRUCT))
		pr_u64(c);
	if (st & PERF_SAMPLE_DATA_SRC)
		pr_u64(c);
	if (st & PERF_SAMPLE_TRANSACTION)
		pr_u64(c);
	if (st & PERF_SAMPLE_REGS_INTR)
		pr_regs(c, 0);
	/* The kernel's order from here (perf_output_sample, 5.11+). */
	if (st & PERF_SAMPLE_PHYS_ADDR)
		pr_u64(c);
	if (st & PERF_SAMPLE_CGROUP)
		pr_u64(c);
	if (st & PERF_SAMPLE_DATA_PAGE_SIZE)
		pr_u64(c);
	if (st & PERF_SAMPLE_CODE_PAGE_SIZE)
		pr_u64(c);
	if (st & PERF_SAMPLE_AUX)
		pr_array(c, pr_u64(c), 1);
}

/* sample_id_all: {pid, tid} time id stream_id {cpu, res} identifier. */
static inline void pr_trailer(struct pr_cur *c, const struct pr_fmt *f,
			      struct pr_rec *r)
{
	const uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			      PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;
	uint64_t st = f->sample_type;
	uint64_t size = 8 * (uint64_t)__builtin_popcountll(st & bits);
	struct pr_cur t;

	if (!f->id_all || !size)
		return;
	if (size > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		return;
	}
	t = (struct pr_cur){c->end - size, c->end, false};
	c->end = t.p;
	if (st & PERF_SAMPLE_TID)
		r->pid = pr_u32x2(&t, &r->tid);
	if (st & PERF_SAMPLE_TIME)
		r->time = pr_u64(&t);
	if (st & PERF_SAMPLE_ID)
		r->id = pr_u64(&t);
	if (st & PERF_SAMPLE_STREAM_ID)
		pr_u64(&t);
	if (st & PERF_SAMPLE_CPU)
		r->cpu = pr_u32x2(&t, NULL);
	if ((st & PERF_SAMPLE_IDENTIFIER) && !(st & PERF_SAMPLE_ID))
		r->id = pr_u64(&t);
	r->id_present = true;
}

static inline void pr_other(struct pr_cur *c, struct pr_rec *r,
			    const struct pr_fmt *f)
{
	const uint8_t *p;

	switch (r->type) {
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		pr_array(c, 4, 8); /* {pid, tid}, addr, len, pgoff */
		if (r->type == PERF_RECORD_MMAP2) {
			/* {maj, min, ino, ino_generation} or a build id */
			p = pr_take(c, 24);
			if (p && (r->misc & PERF_RECORD_MISC_MMAP_BUILD_ID) &&
			    p[0] > PR_BUILD_ID_MAX)
				c->bad = true;
			pr_u64(c); /* prot, flags */
		}
		pr_string(c);
		break;
	case PERF_RECORD_LOST:
		pr_u64(c);
		r->count = pr_u64(c);
		break;
	case PERF_RECORD_COMM:
		pr_u64(c);
		pr_string(c);
		break;
	case PERF_RECORD_EXIT:
	case PERF_RECORD_FORK:
		pr_u64(c); /* pid, ppid */
		r->t_tid = pr_u32x2(c, NULL);
		r->t_time = pr_u64(c);
		break;
	case PERF_RECORD_THROTTLE:
	case PERF_RECORD_UNTHROTTLE:
	case PERF_RECORD_AUX:
		pr_array(c, 3, 8);
		break;
	case PERF_RECORD_READ:
		pr_u64(c);
		pr_read(c, f->read_format, &(struct pr_rec){0});
		break;
	case PERF_RECORD_ITRACE_START:
	case PERF_RECORD_AUX_OUTPUT_HW_ID:
		pr_u64(c);
		break;
	case PERF_RECORD_LOST_SAMPLES:
		r->count = pr_u64(c);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		pr_u32x2(c, &r->next_prev_tid);
		break;
	case PERF_RECORD_NAMESPACES:
		pr_u64(c);
		pr_array(c, pr_u64(c), 16); /* {dev, inode} */
		break;
	case PERF_RECORD_KSYMBOL:
		pr_array(c, 2, 8); /* addr, {len, type, flags} */
		pr_string(c);
		break;
	case PERF_RECORD_BPF_EVENT:
		pr_array(c, 2, 8);
		break;
	case PERF_RECORD_CGROUP:
		pr_u64(c);
		pr_string(c);
		break;
	case PERF_RECORD_TEXT_POKE:
		pr_u64(c);
		p = pr_take(c, 4);
		if (p) {
			uint16_t lens[2];

			memcpy(lens, p, 4);
			pr_array(c, (uint64_t)lens[0] + lens[1], 1);
		}
		break;
	case PR_CALLCHAIN_DEFERRED:
		pr_u64(c); /* cookie */
		pr_array(c, pr_u64(c), 8);
		break;
	}
}

/* Decodes the record of size bytes at buf into *r. */
static inline void pr_parse(struct pr_rec *r, const uint8_t *buf, size_t size,
			    const struct pr_fmt *f)
{
	struct perf_event_header h;
	struct pr_cur c = {buf + sizeof(h), buf + size, false};

	memset(r, 0, sizeof(*r));
	memcpy(&h, buf, sizeof(h));
	r->type = h.type;
	r->misc = h.misc;
	if (h.size != size || size < sizeof(h) || size % 8)
		return;
	if (h.type == PERF_RECORD_SAMPLE) {
		pr_sample(&c, f, r);
	} else if (h.type >= PERF_RECORD_MMAP && h.type <= PR_LAST_TYPE) {
		pr_trailer(&c, f, r);
		if (!c.bad)
			pr_other(&c, r, f);
	}
	r->ok = !c.bad;
}

#endif /* EVPROF_FUZZ_PERF_READER_H */
