/* SPDX-License-Identifier: MIT */
/*
 * The profile model's layout (see include/evprof/profile.h and
 * docs/architecture.md): types and inline accessors only, at the bottom of
 * the profile modules, so the parts (profile_intern.c, profile_store.c,
 * profile_timeline.c), profile.c above them, the readers (load*.c) and the
 * writers (out_*.c) share it without depending on each other. Writers only
 * read it.
 */
#ifndef EVPROF_LIB_PROFILE_MODEL_H
#define EVPROF_LIB_PROFILE_MODEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/profile.h>

#include "base/base.h"

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

/*
 * Timeline rows are u64 words: time, stack (as int64), weight, cpu delta,
 * counter presence bits, then one delta per counter.
 */
enum { ROW_TIME, ROW_STACK, ROW_WEIGHT, ROW_CPU, ROW_HAS, ROW_VALS };

/* A wait kept for the time axis (evprof_profile__add_wait()). */
struct evprof__wait {
	uint64_t start_ns;
	uint64_t dur_ns;
	int32_t stack;
	uint32_t wtype; /* weight type */
};

/* Rows of one thread written to the spill file, sorted by time. */
struct evprof__run {
	uint64_t off; /* byte offset in the spill file */
	uint64_t n;   /* rows */
};

struct evprof__thread {
	int proc;
	int tid;
	bool ended;
	char *name;
	char *cgroup;	    /* its cgroup's path, NULL: none */
	int ns_pid, ns_tid; /* in its own pid namespace, 0: the same */
	uint64_t start_ns;
	uint64_t end_ns;
	uint64_t last_ns; /* latest sample time, 0: none */
	/* Store entries of this thread, linked in insertion order; -1. */
	int64_t first_entry, last_entry;
	/* Timeline: rows in memory (added order), runs in the spill file. */
	uint64_t *rows;
	size_t nr_rows, cap_rows;
	bool unsorted; /* some row's time is below an earlier one */
	struct evprof__run *runs;
	size_t nr_runs, cap_runs;
	/* Timeline: waits in added order. */
	struct evprof__wait *waits;
	size_t nr_waits, cap_waits;
};

/*
 * Value columns of the store, in this order: samples, cpu, counters,
 * weights.
 */
enum { COL_SAMPLES, COL_CPU, COL_COUNTERS };

struct evprof__entry {
	int32_t thread;
	int32_t stack;
	int64_t next; /* the thread's next entry, or -1 */
	uint64_t has; /* counters any contribution carried */
};

/* The aggregated store: one entry per (thread, stack). */
struct evprof__store {
	size_t n, cap;
	struct evprof__entry *e;
	uint64_t *vals; /* n * nv column sums */
	uint32_t nv;	/* columns, fixed once the store has an entry */
	struct evprof_hashmap *set; /* (thread << 32 | stack) -> entry */
};

struct evprof__func {
	uint32_t name;
	int32_t lib;
	int32_t file;	     /* string index or -1 */
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
	uint64_t end_mono_ns; /* evprof_profile__set_end(), 0: none */

	size_t nr_notes, cap_notes;
	char **notes;

	uint32_t nr_counters;
	char *counters[EVPROF_PROFILE_MAX_COUNTERS];
	uint32_t nr_weights;
	char *weights[EVPROF_PROFILE_MAX_WEIGHTS];

	/* Interned strings: NUL-terminated, at chars + str_off[i]. */
	char *chars;
	size_t chars_len, chars_cap;
	size_t nr_strs, cap_strs;
	size_t *str_off;
	struct evprof_hashmap *str_map; /* index -> index, by content */

	size_t nr_libs, cap_libs;
	struct evprof__lib *libs;
	struct evprof_hashmap *lib_map; /* index -> index, by content */

	size_t nr_procs, cap_procs;
	struct evprof__process *procs;

	size_t nr_threads, cap_threads;
	struct evprof__thread *threads;

	size_t nr_funcs, cap_funcs;
	struct evprof__func *funcs;
	struct evprof_hashmap *func_map; /* index -> index, by content */

	size_t nr_frames, cap_frames;
	struct evprof__frame *frames;
	struct evprof_hashmap *frame_map; /* index -> index, by content */

	size_t nr_stacks, cap_stacks;
	struct evprof__stack *stacks;
	struct evprof_hashmap *stack_map; /* index -> index, by content */

	const void *probe; /* the element an interning lookup looks for */

	struct evprof__store store;
	uint64_t nr_samples;
	uint64_t last_ns; /* latest sample time, 0: none */
	bool has_cpu;	  /* some value carries CPU time */

	/* Timeline; rows are row_words u64 long. */
	bool timeline;
	uint32_t row_words;
	uint64_t mem_rows; /* rows in memory, all threads */
	uint64_t nr_rows;  /* rows in memory and file */
	int spill_fd;	   /* -1: no spill file */
	char *spill_dir;   /* where it is, and writers' scratch files */
	uint64_t spill_len;
	uint32_t spill_rows;
};

/* Interned string idx. */
static inline const char *evprof__pstr(const struct evprof_profile *p,
				       uint32_t idx)
{
	return p->chars + p->str_off[idx];
}

/* Column sums of store entry i. */
static inline const uint64_t *evprof__entry_vals(const struct evprof_profile *p,
						 size_t i)
{
	return &p->store.vals[i * p->store.nv];
}

#endif /* EVPROF_LIB_PROFILE_MODEL_H */
