/* SPDX-License-Identifier: MIT */
/*
 * The folded stacks of a profile in memory (out_folded.c), for the writers
 * built on them: folded text and the SVG flame graph.
 */
#ifndef EVPROF_LIB_FOLDED_H
#define EVPROF_LIB_FOLDED_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct evprof_profile;

struct evprof__folded_line {
	size_t off; /* text in the arena, NUL-terminated */
	uint64_t sum;
};

struct evprof__folded {
	const struct evprof_profile *p; /* set by the caller */
	int col;			/* store column summed: set too */
	char *arena;
	size_t arena_len, arena_cap;
	struct evprof__folded_line *lines;
	size_t nr_lines, cap_lines;
	/* working state */
	uint64_t *sum;	   /* per stack + 1 (slot 0: no stack) */
	uint32_t *mark;	   /* per slot: group + 1 that last touched it */
	uint32_t group;	   /* current group of same-name threads, from 1 */
	uint32_t *touched; /* slots touched by the current group */
	size_t nr_touched;
	int32_t *chain; /* frames of one stack, leaf first */
};

/*
 * One line per distinct (thread name, stack) text, "thread;root;...;leaf"
 * with its sum of column col, in byte order, zero sums left out. Returns 0
 * or -ENOMEM; evprof__fold_fini() frees either way.
 */
EVPROF_HIDDEN int evprof__fold(struct evprof__folded *f);
EVPROF_HIDDEN void evprof__fold_fini(struct evprof__folded *f);

#endif /* EVPROF_LIB_FOLDED_H */
