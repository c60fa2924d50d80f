// SPDX-License-Identifier: MIT
/*
 * Rewrites the records of a perf.data file into the one format the
 * session decodes (PD_SAMPLE_TYPES, PD_READ_FORMAT, sample_id_all): the
 * events of a file may each have their own sample type, and samples of
 * events without group reads get their period as a counter entry, so that
 * one decoder and one delta path serve them all. Fields the session does
 * not use (addresses, raw data, branch stacks, weights) are dropped.
 */
#include <errno.h>
#include <string.h>

#include "internal.h"

/* Largest record: the header's u16 size, 8-byte aligned. */
#define MAX_SIZE 65528u
/* The session's sample_id trailer: pid/tid, time, id, cpu. */
#define SID_WORDS 4

size_t evprof__pd_sid_size(const struct evprof_record_fmt *fmt)
{
	const uint64_t bits = PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			      PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |
			      PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER;

	if (!fmt->sample_id_all)
		return 0;
	return 8 * (size_t)__builtin_popcountll(fmt->sample_type & bits);
}

void evprof__pd_xcode_init(struct pd_xcode *x, bool stacks, uint64_t regs_mask)
{
	memset(&x->out, 0, sizeof(x->out));
	x->out.sample_type = PD_SAMPLE_TYPES;
	if (stacks) {
		x->out.sample_type |=
		    PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
		x->out.sample_regs_user = regs_mask;
	}
	x->out.read_format = PD_READ_FORMAT;
	x->out.sample_id_all = true;
	x->rebase_kernel = false;
	x->ktext = 0;
}

static void put_hdr(uint64_t *w, uint32_t type, uint16_t misc, size_t size)
{
	uint8_t *b = (uint8_t *)w;

	memcpy(b, &type, 4);
	memcpy(b + 4, &misc, 2);
	b[6] = (uint8_t)size;
	b[7] = (uint8_t)(size >> 8);
}

static uint64_t pair(uint32_t lo, uint32_t hi)
{
	return (uint64_t)hi << 32 | lo;
}

/* The callchain entries, or [context, ip] for a sample without one. */
static size_t put_chain(struct pd_xcode *x, uint64_t *w,
			const struct evprof_record *r,
			const struct evprof_record_fmt *in)
{
	const struct evprof_sample *s = &r->sample;
	bool kernel = false;
	size_t n = 0;

	if ((in->sample_type & PERF_SAMPLE_CALLCHAIN) && s->callchain_nr) {
		w[n++] = s->callchain_nr;
		memcpy(w + n, s->callchain, s->callchain_nr * 8);
	} else if (in->sample_type & PERF_SAMPLE_IP) {
		bool k = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			 PERF_RECORD_MISC_KERNEL;

		w[n++] = 2;
		w[n] = k ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
		w[n + 1] = s->ip;
	} else {
		w[n++] = 0;
	}
	if (x->rebase_kernel) {
		/* Another boot's kernel: offsets from its _text mean more. */
		for (uint64_t i = 0; i < w[0]; i++) {
			uint64_t *ip = &w[n + i];

			if (*ip >= (uint64_t)PERF_CONTEXT_MAX)
				kernel = *ip == (uint64_t)PERF_CONTEXT_KERNEL;
			else if (kernel)
				*ip -= x->ktext;
		}
	}
	return n + w[0];
}

int evprof__pd_xcode_sample(struct pd_xcode *x, const struct evprof_record *r,
			    const struct evprof_record_fmt *in,
			    const struct pd_value *vals, uint32_t nr)
{
	const struct evprof_sample *s = &r->sample;
	uint64_t *w = x->buf;
	uint64_t chain_nr, stack = 0, dyn = 0;
	size_t n = 1, fixed;
	bool regs = false;

	chain_nr = (in->sample_type & PERF_SAMPLE_CALLCHAIN) && s->callchain_nr
		       ? s->callchain_nr
		       : 2;
	fixed = 8 * (1 + 6 + 1 + 2 * (size_t)nr + 1 + (size_t)chain_nr);
	if (x->out.sample_type & PERF_SAMPLE_REGS_USER) {
		regs = (in->sample_type & PERF_SAMPLE_REGS_USER) &&
		       s->regs_user_abi &&
		       in->sample_regs_user == x->out.sample_regs_user;
		fixed += 8 + (regs ? 8 * (size_t)s->regs_user_nr : 0) + 8;
		if ((in->sample_type & PERF_SAMPLE_STACK_USER) &&
		    s->stack_user_size) {
			stack = s->stack_user_size;
			dyn = s->stack_user_dyn_size;
			fixed += 8;
		}
	}
	if (fixed > MAX_SIZE)
		return -E2BIG;
	/* A stack copy that no longer fits is cut at its top end. */
	if (stack > MAX_SIZE - fixed) {
		stack = (MAX_SIZE - fixed) & ~7ull;
		if (dyn > stack)
			dyn = stack;
	}
	w[n++] = s->ip;
	w[n++] = pair(s->pid, s->tid);
	w[n++] = s->time;
	w[n++] = s->id;
	w[n++] = s->cpu;
	w[n++] = s->period;
	w[n++] = nr;
	for (uint32_t i = 0; i < nr; i++) {
		w[n++] = vals[i].value;
		w[n++] = vals[i].id;
	}
	n += put_chain(x, w + n, r, in);
	if (x->out.sample_type & PERF_SAMPLE_REGS_USER) {
		w[n++] = regs ? s->regs_user_abi : 0;
		if (regs) {
			memcpy(w + n, s->regs_user,
			       8 * (size_t)s->regs_user_nr);
			n += s->regs_user_nr;
		}
		w[n++] = stack;
		if (stack) {
			memcpy(w + n, s->stack_user, (size_t)stack);
			n += (size_t)stack / 8;
			w[n++] = dyn;
		}
	}
	put_hdr(w, PERF_RECORD_SAMPLE, r->misc, n * 8);
	return (int)(n * 8);
}

static size_t put_string(uint64_t *w, const char *s)
{
	size_t len = strlen(s) + 1, words = (len + 7) / 8;

	w[words - 1] = 0;
	memcpy(w, s, len);
	return words;
}

int evprof__pd_xcode_sideband(struct pd_xcode *x, const uint64_t *rec,
			      const struct evprof_record *r,
			      const struct evprof_record_fmt *in,
			      const char *filename, const uint8_t *bid,
			      size_t bid_len)
{
	size_t sid = evprof__pd_sid_size(in), body, n;
	uint16_t misc = r->misc;
	uint64_t *w = x->buf;

	if (r->size < 8 + sid || r->size % 8)
		return -EVPROF_ERR_MALFORMED;
	body = (r->size - 8 - sid) / 8;
	if (r->type == PERF_RECORD_MMAP2 && (filename || bid_len)) {
		/* pid/tid, addr, len, pgoff; ids or build id; prot, flags */
		if (!filename)
			filename = r->mmap.filename;
		if (8 * 8 + strlen(filename) + 1 + 8 + 32 > MAX_SIZE)
			return -E2BIG;
		memcpy(w + 1, rec + 1, 4 * 8);
		if (bid_len) {
			uint8_t *b = (uint8_t *)(w + 5);

			memset(b, 0, 24);
			b[0] = (uint8_t)(bid_len > 20 ? 20 : bid_len);
			memcpy(b + 4, bid, b[0]);
			misc |= PERF_RECORD_MISC_MMAP_BUILD_ID;
		} else {
			memcpy(w + 5, rec + 5, 3 * 8);
		}
		w[8] = pair(r->mmap.prot, r->mmap.flags);
		n = 9 + put_string(w + 9, filename);
	} else if (r->type == PERF_RECORD_MMAP && filename) {
		if (5 * 8 + strlen(filename) + 1 + 8 + 32 > MAX_SIZE)
			return -E2BIG;
		memcpy(w + 1, rec + 1, 4 * 8);
		n = 5 + put_string(w + 5, filename);
	} else {
		/*
		 * The trailer replaces the record's own (0 to 6 words): a
		 * body near 64 KiB leaves no room for it. No record the
		 * session takes is that long (COMM, FORK, LOST, ... are a
		 * few words; paths end at PATH_MAX), so it is a bad one.
		 */
		if (8 * (1 + body + SID_WORDS) > MAX_SIZE)
			return -E2BIG;
		memcpy(w + 1, rec + 1, body * 8);
		n = 1 + body;
	}
	w[n++] = pair(r->sid.pid, r->sid.tid);
	w[n++] = r->sid.time;
	w[n++] = r->sid.id;
	w[n++] = r->sid.cpu;
	put_hdr(w, r->type, misc, n * 8);
	return (int)(n * 8);
}
