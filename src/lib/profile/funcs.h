/* SPDX-License-Identifier: MIT */
/*
 * Per-function sums of a profile's store, what the report and the diff
 * show. A function here is a name in a lib: the model's functions that
 * differ only by source file are one. Self values go to a stack's leaf,
 * total values to every function on the stack, once per stack however
 * often it recurses.
 */
#ifndef EVPROF_LIB_PROFILE_FUNCS_H
#define EVPROF_LIB_PROFILE_FUNCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

struct evprof__funcs {
	const struct evprof_profile *p;
	uint32_t nv;		/* value columns of p's store */
	size_t n;		/* functions */
	uint32_t *group_of;	/* per model function: its function here */
	uint32_t *rep;		/* per function: a model function of it */
	bool *kernel;		/* per function: some frame of it is kernel */
	uint64_t *self, *total; /* n * nv sums */
	uint64_t *all;		/* nv: sums of every entry added */
	uint32_t *mark;		/* per function: the entry that last had it */
	uint32_t stamp;
};

/*
 * Groups p's functions, sums zeroed. Returns 0 or -ENOMEM; fs is to be
 * released with evprof__funcs_fini() either way.
 */
EVPROF_HIDDEN int evprof__funcs_init(struct evprof__funcs *fs,
				     const struct evprof_profile *p);
/* Adds the store entries of thread thr (an index into p->threads). */
EVPROF_HIDDEN void evprof__funcs_add_thread(struct evprof__funcs *fs,
					    size_t thr);
/* Zeroes every sum. */
EVPROF_HIDDEN void evprof__funcs_reset(struct evprof__funcs *fs);
EVPROF_HIDDEN void evprof__funcs_fini(struct evprof__funcs *fs);

/* Function g's name; lives as long as the profile. */
EVPROF_HIDDEN const char *evprof__funcs_name(const struct evprof__funcs *fs,
					     size_t g);
/* Function g's lib name, or "[kernel]" or "[?]" for frames without one. */
EVPROF_HIDDEN const char *evprof__funcs_lib(const struct evprof__funcs *fs,
					    size_t g);

#endif /* EVPROF_LIB_PROFILE_FUNCS_H */
