/* SPDX-License-Identifier: MIT */
/*
 * DWARF unwinding of user stacks from a sample's copy of the stack
 * (PERF_SAMPLE_STACK_USER) and its user registers (PERF_SAMPLE_REGS_USER),
 * with elfutils' libdwfl reading the CFI (.eh_frame, .debug_frame) of the
 * mapped files. x86-64 and arm64.
 */
#ifndef EVPROF_LIB_UNWIND_H
#define EVPROF_LIB_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* Most frames one unwinding returns. */
#define EVPROF__UNWIND_MAX_FRAMES 256
/* Most frames evprof__unwind_fp_owner() walks to meet the frame pointer. */
#define EVPROF__UNWIND_LEAF_FRAMES 8

/* One executable file mapping of the process. */
struct evprof__unwind_map {
	const char *path;
	uint64_t start, end, pgoff;
};

/* What one sample carries. */
struct evprof__unwind_input {
	uint32_t pid, tid;
	uint64_t regs_mask;   /* sample_regs_user */
	const uint64_t *regs; /* ascending bit order of the mask */
	uint32_t nr_regs;
	const void *stack;  /* the copy, starting at the sampled SP */
	uint64_t stack_len; /* dyn_size: bytes actually copied */
	bool stack_full;    /* the copy has the size asked for: more of the
			     * stack may lie above it */
};

/* Where an unwinding stopped, when not at a frame of its own choosing. */
struct evprof__unwind_end {
	/*
	 * It needed stack above the copy: at least this many bytes from the
	 * sampled SP (the furthest read it tried); 0 when it did not.
	 */
	uint64_t copy_needed;
	bool depth; /* it stopped at EVPROF__UNWIND_MAX_FRAMES */
};

struct evprof__unwinder;

/* sample_regs_user unwinding needs here; 0 on other architectures. */
EVPROF_HIDDEN uint64_t evprof__unwind_regs_mask(void);

/* The registers leaf recovery needs (pc, sp, fp; lr on arm64); 0 on others. */
EVPROF_HIDDEN uint64_t evprof__unwind_leaf_regs_mask(void);

/* The sampled stack pointer of in; false when its registers lack it. */
EVPROF_HIDDEN bool evprof__unwind_sp(const struct evprof__unwind_input *in,
				     uint64_t *sp);

/* Returns an unwinder or NULL with errno set (ENOMEM, ENOTSUP). */
EVPROF_HIDDEN struct evprof__unwinder *evprof__unwinder_new(void);
EVPROF_HIDDEN void evprof__unwinder_free(struct evprof__unwinder *u);

/*
 * Unwinds in into pcs (leaf first: the sampled pc, then return addresses),
 * at most EVPROF__UNWIND_MAX_FRAMES. maps are the process's executable
 * mappings at the sample's time; maps_key names that set of maps (the
 * files are opened once per key and kept for a few keys). *end says
 * whether it stopped for want of stack or frames; otherwise the last pc
 * is where it ended (its CFI tells whether that is a thread's first).
 * Returns the number of pcs (at least 1 when the registers hold a pc),
 * -EINVAL (no SP/IP register), -ENOTSUP (neither x86-64 nor arm64) or
 * -ENOMEM.
 */
EVPROF_HIDDEN int evprof__unwind(struct evprof__unwinder *u, uint64_t maps_key,
				 const struct evprof__unwind_map *maps,
				 size_t nr_maps,
				 const struct evprof__unwind_input *in,
				 uint64_t *pcs, struct evprof__unwind_end *end);

/*
 * As evprof__unwind(), at most EVPROF__UNWIND_LEAF_FRAMES + 1 frames into
 * pcs; *owner is the index of the frame the sampled frame pointer stands
 * for (whose frame record it points at, where the kernel's frame-pointer
 * walk of the user stack starts), -1 when none of them is or the sample
 * has no frame pointer. Returns the number of pcs or a negative error.
 */
EVPROF_HIDDEN int evprof__unwind_fp_owner(struct evprof__unwinder *u,
					  uint64_t maps_key,
					  const struct evprof__unwind_map *maps,
					  size_t nr_maps,
					  const struct evprof__unwind_input *in,
					  uint64_t *pcs, int *owner);

/*
 * A hash of what the unwinding up to the frame pointer's frame reads
 * besides the maps: the PC (and LR on arm64), FP - SP and the stack from
 * SP up to the end of that frame record. Samples with the same key, maps
 * and kernel chain mend their leaf alike. 0 without those registers.
 */
EVPROF_HIDDEN uint64_t
evprof__unwind_leaf_key(const struct evprof__unwind_input *in);

#endif /* EVPROF_LIB_UNWIND_H */
