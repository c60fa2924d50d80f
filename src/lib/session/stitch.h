/* SPDX-License-Identifier: MIT */
/*
 * Session user stacks, feeding side: the stack copies samples carry (kept
 * for DWARF unwinding at build) and the deferred user callchains (Linux
 * 6.19) stitched onto their samples before the build replays them. Above
 * the storage, whose samples and chains it extends.
 */
#ifndef EVPROF_LIB_SESSION_STITCH_H
#define EVPROF_LIB_SESSION_STITCH_H

#include <stdint.h>
#include <sys/types.h>

#include <evprof/record.h>

#include "store.h"

/* A PERF_RECORD_CALLCHAIN_DEFERRED, kept for stitching at build. */
struct sdeferred {
	uint64_t time;
	uint64_t cookie;
	uint32_t tid;
	uint32_t chain; /* its user ips [nr, ips...] in the chain arena */
};

struct sess_stitch {
	uint64_t sample_type;
	uint64_t regs_mask; /* sample_regs_user */
	size_t max_stack_bytes;
	/* stack copies: [dyn_size, size, nr_regs, regs..., stack words] */
	EVPROF_VEC(uint64_t) ustacks;
	EVPROF_VEC(struct sdeferred) deferred;
	uint64_t deferred_samples, stacks_dropped, deferred_unstitched;
	/* opts.stack_top, and its answers: tid -> top of its stack */
	uint64_t (*stack_top)(void *ctx, pid_t pid, pid_t tid, uint64_t sp);
	void *stack_top_ctx;
	struct evprof_hashmap *tops;
};

EVPROF_HIDDEN void evprof__stitch_free(struct sess_stitch *k);

/*
 * Keeps the stack copy and registers of smp, stored as ss (sets
 * ss->ustack; a copy that does not fit is counted, not an error), and
 * counts smp when it waits for a deferred user callchain.
 */
EVPROF_HIDDEN void evprof__stitch_sample(struct sess_stitch *k,
					 const struct evprof_sample *smp,
					 struct ssample *ss);
/* Stores a CALLCHAIN_DEFERRED record. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__stitch_deferred(struct sess_stitch *k,
					  struct sess_store *st,
					  const struct evprof_record *r);
/*
 * Gives each sample waiting on a deferred user part the one its thread's
 * CALLCHAIN_DEFERRED with its cookie carries, in time order. Returns 0 or
 * -ENOMEM.
 */
EVPROF_HIDDEN int evprof__stitch_resolve(struct sess_stitch *k,
					 struct sess_store *st);

/* The top of tid's stack the caller told, 0: unknown. */
EVPROF_HIDDEN uint64_t evprof__stitch_top(const struct sess_stitch *k,
					  uint32_t tid);

/* The stack copy of x, 0: none: [dyn_size, size, nr_regs, regs..., stack] */
static inline const uint64_t *evprof__stitch_ustack(const struct sess_stitch *k,
						    const struct ssample *x)
{
	return k->ustacks.a + x->ustack - 1;
}

#endif /* EVPROF_LIB_SESSION_STITCH_H */
