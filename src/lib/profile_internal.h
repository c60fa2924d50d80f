/* SPDX-License-Identifier: MIT */
/* The profile model's layout, shared by profile.c and the writers. */
#ifndef EVPROF_LIB_PROFILE_INTERNAL_H
#define EVPROF_LIB_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stdint.h>

#include <evprof/profile.h>

#include "util.h"

/*
 * Open-addressing hash set of indices into some table; the table owns the
 * keys. A slot holds the key's hash and index + 1 (0: empty).
 */
struct evprof__hslot {
	uint32_t hash;
	uint32_t idx1;
};

struct evprof__hset {
	struct evprof__hslot *slots;
	uint32_t mask; /* capacity - 1; capacity is a power of two */
	uint32_t used;
};

typedef bool (*evprof__heq_fn)(const void *ctx, uint32_t idx, const void *key);

/* Returns the index whose key equals key (per eq), or -1. */
EVPROF_HIDDEN int64_t evprof__hset_find(const struct evprof__hset *h,
					uint32_t hash, evprof__heq_fn eq,
					const void *ctx, const void *key);
/* Adds idx under hash (not already present). Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__hset_add(struct evprof__hset *h, uint32_t hash,
				   uint32_t idx);
EVPROF_HIDDEN void evprof__hset_free(struct evprof__hset *h);

EVPROF_HIDDEN uint32_t evprof__hash_bytes(const void *b, size_t n,
					  uint64_t seed);
EVPROF_HIDDEN uint32_t evprof__hash_u64(uint64_t v);

/*
 * Makes room for need elements of elem bytes in *arr of capacity *cap
 * (growing by half again, at least 16). Returns 0 or -ENOMEM (*arr is
 * unchanged then).
 */
EVPROF_HIDDEN int evprof__grow(void *arr, size_t *cap, size_t need,
			       size_t elem);

struct evprof__lib {
	char *path;
	char *arch;
	uint32_t name; /* string index */
	uint8_t build_id_len;
	uint8_t build_id[64];
};

struct evprof__process {
	int pid;
	bool ended;
	char *name;
	uint64_t start_ns;
	uint64_t end_ns;
};

struct evprof__samples {
	size_t n, cap;
	uint64_t *time;
	int32_t *stack;
	uint64_t *weight;
	uint64_t *cpu;
	uint64_t *has;	/* counter presence bits; NULL without counters */
	uint64_t *vals; /* n * counters deltas; NULL without counters */
	bool unsorted;	/* some time is below an earlier one */
};

struct evprof__thread {
	int proc;
	int tid;
	bool ended;
	char *name;
	uint64_t start_ns;
	uint64_t end_ns;
	struct evprof__samples s;
};

struct evprof__func {
	uint32_t name;
	int32_t lib;
	int32_t file; /* string index or -1 */
	uint32_t start_line; /* not part of its identity; 0: unknown */
};

struct evprof__frame {
	uint32_t func;
	int32_t lib;
	uint64_t address;
	uint32_t line;
	uint16_t inline_depth;
	bool kernel;
	uint64_t symbol_address;
	uint64_t symbol_size;
};

struct evprof__stack {
	int32_t parent;
	int32_t frame;
};

struct evprof_profile {
	char *product;
	char *os;
	uint64_t start_wall_ns;
	uint64_t start_mono_ns;
	uint64_t interval_ns;

	size_t nr_notes, cap_notes;
	char **notes;

	uint32_t nr_counters;
	char *counters[EVPROF_PROFILE_MAX_COUNTERS];

	/* Interned strings: NUL-terminated, at chars + str_off[i]. */
	char *chars;
	size_t chars_len, chars_cap;
	size_t nr_strs, cap_strs;
	size_t *str_off;
	struct evprof__hset str_set;

	size_t nr_libs, cap_libs;
	struct evprof__lib *libs;
	struct evprof__hset lib_set;

	size_t nr_procs, cap_procs;
	struct evprof__process *procs;

	size_t nr_threads, cap_threads;
	struct evprof__thread *threads;

	size_t nr_funcs, cap_funcs;
	struct evprof__func *funcs;
	struct evprof__hset func_set;

	size_t nr_frames, cap_frames;
	struct evprof__frame *frames;
	struct evprof__hset frame_set;

	size_t nr_stacks, cap_stacks;
	struct evprof__stack *stacks;
	struct evprof__hset stack_set;

	uint64_t nr_samples;
};

static inline const char *evprof__pstr(const struct evprof_profile *p,
				       uint32_t idx)
{
	return p->chars + p->str_off[idx];
}

/* Writes n bytes of b as 2 * n hex digits and a NUL into out. */
EVPROF_HIDDEN void evprof__hex(char *out, const uint8_t *b, size_t n,
			       bool upper);

/* Whether some sample of p carries CPU time. */
EVPROF_HIDDEN bool evprof__profile_has_cpu(const struct evprof_profile *p);

/* Index of the registered counter name, or -ENOENT. */
EVPROF_HIDDEN int evprof__profile_counter(const struct evprof_profile *p,
					  const char *name);

/*
 * Time order of thread t's samples: NULL when already sorted (or on
 * allocation failure, with *err = -ENOMEM), else an array of sample
 * indices stably sorted by time that the caller frees.
 */
EVPROF_HIDDEN uint32_t *evprof__samples_order(const struct evprof__thread *t,
					      int *err);

#endif /* EVPROF_LIB_PROFILE_INTERNAL_H */
