/* SPDX-License-Identifier: MIT */
/*
 * Session stacks, building side: a sample's callchain (its user part
 * unwound from its stack copy first, when it has one) turned into a profile
 * stack with the maps its process has at that point of the replay, each
 * distinct (mapping, address) symbolized once. Above tasks (the maps),
 * stitch (the stack copies) and the storage (the chains).
 */
#ifndef EVPROF_LIB_SESSION_STACKS_H
#define EVPROF_LIB_SESSION_STACKS_H

#include <stdint.h>

#include <evprof/profile.h>
#include <evprof/session.h>
#include <evprof/symbols.h>

#include "stitch.h"
#include "store.h"
#include "tasks.h"

struct evprof__unwinder;
struct evprof__unwind_map;
struct chain_frame;

/* Key of the frame cache: an address in a mapping (or kernel, unmapped). */
struct frame_key {
	uint64_t map, addr;
};

struct sess_stacks {
	struct sess_store *st;
	const struct sess_tasks *t;
	const struct sess_stitch *k;
	struct evprof_profile *p;
	struct evprof_symbolizer *sym; /* NULL: frames named by lib + address */
	uint64_t regs_mask;	       /* sample_regs_user of the copies */
	EVPROF_VEC(int) fidx; /* frame indices, ranges the cache names */
	EVPROF_VEC(struct chain_frame) scratch;
	EVPROF_VEC(struct evprof__unwind_map) umaps;
	struct evprof__unwinder *uw; /* made for the first stack copy */
	/* Leaves mended (leaf_key() -> offset, count, result), their pcs. */
	struct evprof_hashmap *leaves;
	EVPROF_VEC(uint64_t) leaf_pcs;
	/* index in frame_keys -> fidx offset << 32 | count */
	struct evprof_hashmap *frames;
	EVPROF_VEC(struct frame_key) frame_keys;
	struct evprof_hashmap *stacks; /* epoch << 32 | chain -> stack */
	uint32_t max_stack;	       /* frames a kernel callchain keeps */
	/* Stack copies this build unwound, those short of stack (COPY). */
	uint64_t unwound, truncated;
	uint64_t copy_needed; /* the most bytes above SP one of them wanted */
};

EVPROF_HIDDEN void evprof__stacks_free(struct sess_stacks *sk);

/*
 * The profile stack of sample x of process pr (-1: empty), its stack copy
 * unwound first (once: x->chain then holds the result); SS_CUT in x->flags
 * tells whether its user chain was cut, SS_END_MASK how its stack ended.
 * Returns 0 or a negative error of the profile (-ENOMEM).
 */
EVPROF_HIDDEN int evprof__stacks_sample(struct sess_stacks *sk,
					const struct bproc *pr,
					struct ssample *x, int *stack);

/*
 * The tasks forgot mappings (evprof__tasks_forget()): the frame cache
 * keeps those of mappings still known, under their new index map_to[old];
 * without memory for that it is emptied.
 */
EVPROF_HIDDEN void evprof__stacks_maps_moved(struct sess_stacks *sk,
					     const uint32_t *map_to);

#endif /* EVPROF_LIB_SESSION_STACKS_H */
