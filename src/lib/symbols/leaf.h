/* SPDX-License-Identifier: MIT */
/*
 * Leaf recovery for frame-pointer stacks: the kernel's walk of a user stack
 * starts at the frame the frame pointer stands for, so a leaf without a
 * frame of its own (libc's syscall wrappers, memcpy, ld.so; on arm64 every
 * leaf GCC compiles) loses its caller. The sample's registers and a small
 * copy of the stack, unwound with the CFI, give the frames below that one.
 */
#ifndef EVPROF_LIB_LEAF_H
#define EVPROF_LIB_LEAF_H

#include "unwind.h"

/* Bytes of user stack copied per sample for leaf recovery. */
#define EVPROF__LEAF_STACK 512

enum evprof__leaf_result {
	EVPROF__LEAF_COMPLETE, /* the kernel's chain had every frame */
	EVPROF__LEAF_GAINED,   /* frames added below the kernel's chain */
	EVPROF__LEAF_LOST,     /* no frame met the FP's: the chain as it was */
};

/*
 * user[0..nr) is the kernel's user chain of the sample in (leaf first: the
 * sampled ip, then the return addresses the frame pointers give). Unwinds
 * in with the CFI up to the frame the frame pointer stands for and writes
 * to out (room for nr + EVPROF__UNWIND_LEAF_FRAMES) the frames unwound up
 * to that one, then the kernel's from its caller on. *res says how it
 * went. Returns the length of out, or -ENOMEM.
 */
EVPROF_HIDDEN int
evprof__leaf_splice(struct evprof__unwinder *u, uint64_t maps_key,
		    const struct evprof__unwind_map *maps, size_t nr_maps,
		    const struct evprof__unwind_input *in, const uint64_t *user,
		    size_t nr, uint64_t *out, enum evprof__leaf_result *res);

#endif /* EVPROF_LIB_LEAF_H */
