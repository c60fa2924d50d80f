/* SPDX-License-Identifier: MIT */
/*
 * Profiles: one model that every producer fills and every writer reads.
 *
 * Producers (the recorder, the profile readers, later the BPF engine and
 * importers) fill it through the functions under "producing"; writers
 * (Firefox, pprof, folded, report) and users read it through the functions
 * under "reading". A producer never writes a file; a writer never
 * aggregates samples.
 *
 * The model has four parts:
 *
 * - Interned tables: strings, libs, functions, frames, and stacks as a
 *   prefix tree (a stack is a (parent stack, frame) pair). Processes and
 *   threads. Indices are small non-negative ints, stable for the profile's
 *   life.
 *
 * - Value columns: "samples" (a count), "cpu" (on-CPU ns), one column per
 *   registered counter (evprof_profile__add_counter(), event counts) and
 *   one per registered weight (evprof_profile__add_weight_type(), further
 *   times in ns such as off-CPU or preempted time). The layout is fixed
 *   once values exist.
 *
 * - The aggregated store: one entry per (thread, stack) holding the sum of
 *   every column, plus which counters any contribution carried. Samples
 *   add to it (evprof_profile__add_sample()), and so do aggregate-only
 *   producers (evprof_profile__add_aggregate()) that never had sample
 *   rows. pprof, folded and the report read only the store, so their
 *   memory does not depend on the recording's length.
 *
 * - The timeline (optional, on by default): every sample as a row (time,
 *   stack, weight, CPU delta, counter deltas) per thread, read back in time
 *   order by evprof_profile_timeline__new(). The Firefox writer reads it.
 *   With evprof_profile_opts.spill_dir set, rows beyond a budget are
 *   written, sorted per thread, to an unlinked temporary file in that
 *   directory and merged back in streaming, so memory stays flat for
 *   hours-long recordings. Without a timeline (opts.no_timeline, or a
 *   profile read from pprof) the Firefox writer writes one sample per store
 *   entry: the call tree is exact, the time axis is not.
 *
 * Times are CLOCK_MONOTONIC nanoseconds (the clock perf uses with
 * use_clockid); the writers express them relative to the profile's time
 * origin (evprof_profile_opts.start_mono_ns).
 */
#ifndef EVPROF_PROFILE_H
#define EVPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_profile;

/* Most counters one profile carries (a sample's "has value" set is a u64). */
#define EVPROF_PROFILE_MAX_COUNTERS 64
/* Most further weights (off-CPU, preempted... times) one profile carries. */
#define EVPROF_PROFILE_MAX_WEIGHTS 8

struct evprof_profile_opts {
	size_t sz;		/* sizeof(struct evprof_profile_opts) */
	const char *product;	/* e.g. "evprof ./app"; NULL: "evprof" */
	const char *os;		/* e.g. "Linux 6.18.0"; NULL: omitted */
	uint64_t start_wall_ns; /* CLOCK_REALTIME of the time origin */
	uint64_t start_mono_ns; /* CLOCK_MONOTONIC of the same instant */
	uint64_t interval_ns;	/* sampling interval; 0: 1 ms */
	/*
	 * true: keep only the aggregated store, no per-sample rows (memory
	 * independent of the sample count; Firefox output is one sample per
	 * (thread, stack)).
	 */
	bool no_timeline;
	/*
	 * A directory for the timeline's temporary file (e.g. "/var/tmp"),
	 * created unlinked (O_TMPFILE) and gone with the profile. NULL: rows
	 * stay in memory.
	 */
	const char *spill_dir;
	/*
	 * With spill_dir: timeline rows held in memory (all threads) before
	 * they are written out; 0: 65536.
	 */
	uint32_t spill_rows;
};

/*
 * Creates an empty profile; opts may be NULL (all defaults, origin 0,
 * timeline in memory). Strings are copied. Returns a profile freed with
 * evprof_profile__free(), or NULL with errno set (EINVAL for a bad
 * opts->sz, ENOMEM, or -errno of creating the spill file: ENOENT,
 * EACCES...).
 */
EVPROF_API struct evprof_profile *
evprof_profile__new(const struct evprof_profile_opts *opts);
EVPROF_API void evprof_profile__free(struct evprof_profile *p);

/*
 * Says when the time the profile covers ends (CLOCK_MONOTONIC, e.g. the end
 * of a window of a continuous recording; 0: at its latest sample, the
 * default). The pprof writer's duration_nanos is end_mono_ns minus the
 * profile's start_mono_ns. Returns 0, or -EINVAL for an end before the
 * start.
 */
EVPROF_API int evprof_profile__set_end(struct evprof_profile *p,
				       uint64_t end_mono_ns);
/* The end set by evprof_profile__set_end(), 0: none. */
EVPROF_API uint64_t evprof_profile__end(const struct evprof_profile *p);

/*
 * Appends a free-form note to the profile's metadata, e.g. a fallback step
 * ("cycles not supported -> cpu-clock"). The Firefox writer puts the notes
 * in meta.evprofNotes (an array of strings the Firefox Profiler ignores) and
 * in meta.extra (the "evprof" section of the profile-info panel).
 * Returns 0 or -ENOMEM.
 */
EVPROF_API int evprof_profile__add_note(struct evprof_profile *p,
					const char *note);

/*
 * Registers the counter event name (e.g. "page-faults") and returns its
 * index, the bit and slot samples use for its deltas. Registering a known
 * name returns its index again. Returns -EBUSY once samples exist (their
 * layout is fixed), -E2BIG beyond EVPROF_PROFILE_MAX_COUNTERS, -EINVAL for
 * an empty name, or -ENOMEM.
 */
EVPROF_API int evprof_profile__add_counter(struct evprof_profile *p,
					   const char *name);

/*
 * Registers a further weight, a time in nanoseconds that is neither a
 * sample count nor on-CPU time (e.g. "off-cpu", "preempted"), and returns
 * its index into evprof_profile_aggregate.weights. Registering a known name
 * returns its index again. Names are shared with counters, "samples" and
 * "cpu" (-EEXIST). Returns -EBUSY once values exist, -E2BIG beyond
 * EVPROF_PROFILE_MAX_WEIGHTS, -EINVAL for an empty name, or -ENOMEM.
 */
EVPROF_API int evprof_profile__add_weight_type(struct evprof_profile *p,
					       const char *name);

/* ---- libs, processes, threads ------------------------------------------ */

struct evprof_profile_lib {
	const char *path;     /* file path; required */
	const char *name;     /* NULL: the basename of path */
	const void *build_id; /* ELF build id bytes, or NULL */
	size_t build_id_len;  /* at most 64 */
	const char *arch;     /* e.g. "x86_64", or NULL */
};

/*
 * Interns a lib (same path and build id: same index). The Firefox writer
 * derives codeId (the build id in lowercase hex) and breakpadId (its first
 * 16 bytes as a GUID, the first u32 and the two u16 after it byte-swapped,
 * uppercase, then the age "0"; shorter ids are zero-padded).
 * Returns the lib index, -EINVAL (no path, build id over 64 bytes) or
 * -ENOMEM.
 */
EVPROF_API int evprof_profile__add_lib(struct evprof_profile *p,
				       const struct evprof_profile_lib *lib);

/*
 * Adds a process (start_ns 0: the time origin). Adding a pid again makes a
 * new process (e.g. after an exec), which the Firefox Profiler shows in the
 * same pid group. Returns the process index, -EINVAL (no name) or -ENOMEM.
 */
EVPROF_API int evprof_profile__add_process(struct evprof_profile *p, int pid,
					   const char *name, uint64_t start_ns);
/* Renames process proc (an exec). Returns 0, -EINVAL or -ENOMEM. */
EVPROF_API int evprof_profile__set_process_name(struct evprof_profile *p,
						int proc, const char *name);
/* Records the exit time of process proc. Returns 0 or -EINVAL. */
EVPROF_API int evprof_profile__end_process(struct evprof_profile *p, int proc,
					   uint64_t end_ns);

/*
 * Adds thread tid to process proc (start_ns 0: the process start). The
 * thread whose tid equals the process pid is its main thread. Returns the
 * thread index, -EINVAL (bad proc, no name) or -ENOMEM.
 */
EVPROF_API int evprof_profile__add_thread(struct evprof_profile *p, int proc,
					  int tid, const char *name,
					  uint64_t start_ns);
/* Renames thread thr (a COMM). Returns 0, -EINVAL or -ENOMEM. */
EVPROF_API int evprof_profile__set_thread_name(struct evprof_profile *p,
					       int thr, const char *name);
/*
 * Sets thread thr's cgroup: its path from the hierarchy's root ("/a/b"),
 * the latest it ran in; NULL or "" clears it. Writers show it and what
 * it names (evprof_cgroup__container()). Returns 0, -EINVAL or -ENOMEM.
 */
EVPROF_API int evprof_profile__set_thread_cgroup(struct evprof_profile *p,
						 int thr, const char *path);
/* Thread thr's cgroup path, or NULL (none, or no such thread). */
EVPROF_API const char *
evprof_profile__thread_cgroup(const struct evprof_profile *p, int thr);
/*
 * Sets thread thr's ids in its own pid namespace, a container's view of
 * its process and itself (evprof_proc__ns_ids()); ns_tid 0: not known;
 * 0, 0 clears them. Returns 0 or -EINVAL.
 */
EVPROF_API int evprof_profile__set_thread_ns_ids(struct evprof_profile *p,
						 int thr, int ns_pid,
						 int ns_tid);
/*
 * Thread thr's ids in its own pid namespace through *ns_pid and *ns_tid.
 * Returns whether it has them.
 */
EVPROF_API bool evprof_profile__thread_ns_ids(const struct evprof_profile *p,
					      int thr, int *ns_pid,
					      int *ns_tid);
/* Records the exit time of thread thr. Returns 0 or -EINVAL. */
EVPROF_API int evprof_profile__end_thread(struct evprof_profile *p, int thr,
					  uint64_t end_ns);

/* ---- frames and stacks ------------------------------------------------- */

struct evprof_profile_frame {
	int lib;		 /* lib index, or -1 (kernel, JIT, unknown) */
	uint64_t address;	 /* lib-relative; absolute when lib < 0 */
	const char *function;	 /* NULL: named by its address, "0x1a2b" */
	const char *file;	 /* source file, or NULL */
	uint32_t line;		 /* source line, 0: unknown */
	uint16_t inline_depth;	 /* 0: the real frame, 1+: inlined into it */
	bool kernel;		 /* category Kernel instead of User */
	uint64_t symbol_address; /* lib-relative start of the symbol */
	uint64_t symbol_size;	 /* 0: symbol unknown (no nativeSymbol) */
	uint32_t function_line;	 /* the function's first line, 0: unknown */
};

/*
 * Interns a frame: the same (lib, address, function, file, line, inline
 * depth, kernel) gives the same index. The symbol fields of the first
 * registration are kept. Frames without a lib are written without an
 * address (the Firefox Profiler reads addresses relative to a lib only).
 * Returns the frame index, -EINVAL (bad lib) or -ENOMEM.
 */
EVPROF_API int evprof_profile__frame(struct evprof_profile *p,
				     const struct evprof_profile_frame *f);

/*
 * Interns the stack made of stack parent (-1: none, frame is a root) with
 * frame on top. Build a callchain root first (outermost caller first; for
 * inlined code the real frame, then depth 1, 2...). Returns the stack
 * index, -EINVAL (bad parent or frame) or -ENOMEM.
 */
EVPROF_API int evprof_profile__stack(struct evprof_profile *p, int parent,
				     int frame);

/* ---- producing: samples and aggregates ---------------------------------- */

struct evprof_profile_sample {
	uint64_t time_ns;      /* CLOCK_MONOTONIC */
	int stack;	       /* stack index, or -1: no stack */
	uint64_t weight;       /* how many samples this stands for; 0: 1 */
	uint64_t cpu_delta_ns; /* on-CPU time since the thread's last sample */
	uint64_t has_counters; /* bit i: counters[i] holds counter i's delta */
	const uint64_t *counters; /* indexed by counter; NULL if none set */
	/*
	 * Values without a sample (weight ignored, read back as 0): what a
	 * thread counted after a sample that went out before (e.g. in an
	 * earlier window), so that sample counts sum exactly.
	 */
	bool values_only;
};

/*
 * Adds a sample of thread thr: its values to the store entry (thr,
 * s->stack) and, when the profile keeps a timeline, a row to it. Samples
 * may come slightly out of time order (merged ring buffers); the timeline
 * is read back sorted by time (stable). Counters whose bit is clear have no
 * value (JSON null in the timeline, 0 in sums). Allocates only when a new
 * (thread, stack) appears or a timeline chunk fills.
 * Returns 0, -EINVAL (bad thread or stack, a bit set for an unregistered
 * counter), -ENOMEM, or -errno of writing the spill file (e.g. -ENOSPC).
 */
EVPROF_API int
evprof_profile__add_sample(struct evprof_profile *p, int thr,
			   const struct evprof_profile_sample *s);

/* A time a thread spent off the CPU (see evprof_profile__add_wait()). */
struct evprof_profile_wait {
	uint64_t start_ns;    /* CLOCK_MONOTONIC: when it left the CPU */
	uint64_t duration_ns; /* until it ran again */
	int stack;	      /* stack index (where it waited), or -1 */
	int weight;	      /* the weight type it counts as */
};

/*
 * Adds a wait of thread thr: its duration to the store entry (thr,
 * w->stack) as weight type w->weight, as evprof_profile__add_aggregate()
 * would, and, when the profile keeps a timeline, the wait itself, so that
 * writers place it in time (the Firefox writer: a marker on the thread's
 * track and a sample of its weight track at w->start_ns). Allocates per
 * wait with a timeline (24 bytes). Returns 0, -EINVAL (bad thread, stack
 * or weight type) or -ENOMEM.
 */
EVPROF_API int evprof_profile__add_wait(struct evprof_profile *p, int thr,
					const struct evprof_profile_wait *w);

/* Values that an aggregate-only producer adds to one (thread, stack). */
struct evprof_profile_aggregate {
	int stack;	       /* stack index, or -1: no stack */
	uint64_t samples;      /* how many samples these stand for; may be 0 */
	uint64_t cpu_ns;       /* on-CPU time */
	uint64_t has_counters; /* bit i: counters[i] holds counter i's sum */
	const uint64_t *counters; /* indexed by counter; NULL if none set */
	uint64_t has_weights;	  /* bit i: weights[i] holds weight i, ns */
	const uint64_t *weights;  /* indexed by weight type; NULL if none */
};

/*
 * Adds a's values to the store entry (thr, a->stack) without a timeline
 * row: for producers that aggregate before the profile sees anything (an
 * in-kernel BPF map, a pprof file) and for values no sample carries
 * (off-CPU intervals without their times; evprof_profile__add_wait()
 * keeps those). The Firefox writer does not see their samples and
 * counters when the profile keeps a timeline. Returns 0, -EINVAL (bad thread or stack, a bit
 * set for an unregistered counter or weight) or -ENOMEM.
 */
EVPROF_API int
evprof_profile__add_aggregate(struct evprof_profile *p, int thr,
			      const struct evprof_profile_aggregate *a);

struct evprof_profile_stats {
	size_t sz;	  /* sizeof(struct evprof_profile_stats) */
	uint64_t samples; /* add_sample() calls (not weights), all threads */
	uint32_t processes;
	uint32_t threads;
	uint32_t libs;
	uint32_t frames;
	uint32_t stacks;
	uint32_t counters;
	uint32_t weights;	 /* registered weight types */
	uint64_t entries;	 /* (thread, stack) entries in the store */
	uint64_t store_bytes;	 /* bytes of the store's entries and sums */
	uint64_t timeline_rows;	 /* rows in the timeline (memory and file) */
	uint64_t timeline_bytes; /* bytes of rows held in memory */
	uint64_t spilled_bytes;	 /* bytes of rows in the spill file */
};

/*
 * Fills *st with the profile's sizes (up to st->sz bytes, set by the
 * caller) and sets st->sz to the bytes filled. Returns 0, or -EINVAL for a
 * NULL argument or an st->sz below sizeof(size_t).
 */
EVPROF_API int evprof_profile__stats(const struct evprof_profile *p,
				     struct evprof_profile_stats *st);

/* ---- reading ------------------------------------------------------------ */

/* Registered counter i's name, or NULL; lives as long as p. */
EVPROF_API const char *
evprof_profile__counter_name(const struct evprof_profile *p, int i);
/* Registered weight type i's name, or NULL; lives as long as p. */
EVPROF_API const char *
evprof_profile__weight_name(const struct evprof_profile *p, int i);

struct evprof_profile_thread_info {
	int proc; /* process index */
	int pid;  /* the process's pid */
	int tid;
	const char *name; /* lives until the thread is renamed or p freed */
};

/* Fills *info for thread thr. Returns 0 or -EINVAL. */
EVPROF_API int
evprof_profile__thread_info(const struct evprof_profile *p, int thr,
			    struct evprof_profile_thread_info *info);

/*
 * The parent of stack st (-1: st is a root) through *parent and its frame
 * through *frame (either may be NULL). Returns 0 or -EINVAL.
 */
EVPROF_API int evprof_profile__stack_info(const struct evprof_profile *p,
					  int st, int *parent, int *frame);

/*
 * Fills *f with frame fr as it was interned; function (never NULL: an
 * unnamed frame reads "0x..."), and file point into p and live as long as
 * p. Returns 0 or -EINVAL.
 */
EVPROF_API int evprof_profile__frame_info(const struct evprof_profile *p,
					  int fr,
					  struct evprof_profile_frame *f);

/* One store entry: the sums of every column for (thread, stack). */
struct evprof_profile_entry {
	int thread;
	int stack;		  /* -1: samples without a stack */
	uint64_t samples;	  /* summed sample weights */
	uint64_t cpu_ns;	  /* summed on-CPU time */
	uint64_t has_counters;	  /* bit i: some contribution had counter i */
	const uint64_t *counters; /* per counter: summed deltas */
	const uint64_t *weights;  /* per weight type: summed ns */
};

/* Return 0 to go on, anything else to stop (and have it returned). */
typedef int (*evprof_profile_entry_fn)(const struct evprof_profile_entry *e,
				       void *ctx);

/*
 * Calls fn for every store entry of thread thr (-1: every thread, in
 * thread order), each thread's entries in the order they first got
 * values. The entry and its arrays live until fn returns. Returns 0, what
 * fn returned, or -EINVAL.
 */
EVPROF_API int evprof_profile__for_each_entry(const struct evprof_profile *p,
					      int thr,
					      evprof_profile_entry_fn fn,
					      void *ctx);

/* A lib whose code no symbol names holds a share of a profile. */
struct evprof_profile_unnamed {
	int lib;	      /* lib index */
	const char *path;     /* the lib's path; lives as long as p */
	const char *name;     /* its name */
	const void *build_id; /* ELF build id bytes, or NULL */
	size_t build_id_len;  /* 0: none */
	const char *column;   /* "cpu", "samples", a counter or weight type */
	double share;	      /* of column's total, 0..1 */
};

/*
 * The libs whose frames no symbol names ("LIB+0x...", as an image without
 * symbols is named, or "0x...") are the leaves of at least min_share
 * (0..1) of column's total, heaviest first: up to max of them into out.
 * column: "samples", "cpu", a counter or a weight type; NULL: cpu when
 * values carry CPU time, else samples. Returns how many libs qualify
 * (which may exceed max), -ENOENT (column names none), -EINVAL or
 * -ENOMEM.
 */
EVPROF_API int evprof_profile__unnamed_libs(const struct evprof_profile *p,
					    const char *column,
					    double min_share,
					    struct evprof_profile_unnamed *out,
					    size_t max);

struct evprof_profile_timeline;

/*
 * Opens thread thr's timeline for reading in time order (stable: equal
 * times in the order added), from memory and the spill file. Several may
 * be open at once; p must not change while they are. Returns an iterator
 * freed with evprof_profile_timeline__free(), or NULL with errno set:
 * ENODATA (the profile keeps no timeline), EINVAL, ENOMEM.
 */
EVPROF_API struct evprof_profile_timeline *
evprof_profile_timeline__new(const struct evprof_profile *p, int thr);

/*
 * Reads the next row into *s; s->counters points into the iterator and
 * lives until the next call. Returns 1 for a row, 0 at the end, or -errno
 * of reading the spill file (-EIO for a short read).
 */
EVPROF_API int evprof_profile_timeline__next(struct evprof_profile_timeline *it,
					     struct evprof_profile_sample *s);
EVPROF_API void
evprof_profile_timeline__free(struct evprof_profile_timeline *it);

/* ---- writers ------------------------------------------------------------ */

struct evprof_firefox_opts {
	size_t sz; /* sizeof(struct evprof_firefox_opts) */
	/*
	 * NULL: sample weights are the samples' own weights. A counter name:
	 * each sample weighs that counter's delta (no value: 0), so the call
	 * tree sums e.g. instructions. The Firefox Profiler knows only the
	 * weight types "samples", "tracing-ms" and "bytes" and sums weights
	 * as plain numbers; counts fit none of the units, so weightType stays
	 * "samples" and the call tree labels counts "samples".
	 */
	const char *weight_counter;
};

/*
 * Writes the Firefox Profiler processed format (preprocessedProfileVersion
 * 66: shared tables, stackTable.prefixOffset, resourceTable.lib),
 * symbolicated, one process per process, threads grouped by process, the
 * main thread first. Samples are the timeline's rows in time order; a
 * profile without a timeline gets one sample per store entry that has
 * samples, at its thread's start (call tree exact, no time axis). Values
 * added only as aggregates to a profile with a timeline are not written,
 * but weight types are: each thread's entries with a weight type (e.g.
 * off-cpu) make a track of their own after the thread's, named "<thread>
 * <weight>" and marked "evprofWeight": <weight>, weighing ns as weightType
 * "tracing-ms": one sample per wait (evprof_profile__add_wait()) at its
 * start, or, for a thread without waits, per store entry at the thread's
 * start (call tree exact in ms, no time axis); each wait is also an
 * interval marker of the thread's own track named after its weight type,
 * its cause the wait's stack (marker schema "OffCPU"). Samples carry
 * threadCPUDelta (µs; the column is left
 * out when no sample has CPU time) and, when counters are registered,
 * samples.samplyEventDeltas: {counter name: [delta or null per sample]}.
 * Per registered counter, each process gets an entry of "counters" (the
 * deltas of its threads' samples in time order, with a "line-rate"
 * display config: a graph track; only with a timeline) and each thread
 * whose samples moved it a track "<thread> <counter> (count)", marked
 * "evprofCounter": <counter>, whose sample weights are the deltas (a call
 * tree by that counter).
 * path ending in ".gz" is gzip-compressed. A regular file is written as
 * path.tmp and renamed over path when complete, so a failed write leaves
 * neither a partial path nor path.tmp (through a symbolic link: the file it
 * names, the link kept); "/dev/stdout" is the process's standard output,
 * written in place through its descriptor (to a file the shell opened, or
 * appends to), and so are other files (pipes, devices). opts may be NULL.
 * Returns 0, -ENOENT (weight_counter not registered), -EINVAL or -errno of
 * the failed open/write/close/rename (e.g. -ENOSPC).
 */
EVPROF_API int
evprof_profile__write_firefox(const struct evprof_profile *p, const char *path,
			      const struct evprof_firefox_opts *opts);

struct evprof_folded_opts {
	size_t sz; /* sizeof(struct evprof_folded_opts) */
	/*
	 * NULL: weigh by samples; "cpu" (ns), a counter name (its deltas,
	 * none: 0) or a weight type name (ns): by that column of the store.
	 */
	const char *weight_counter;
};

/*
 * Writes folded stacks from the store, one line per distinct (thread
 * name, stack):
 * "thread;root;...;leaf N" where N sums the weights, lines in byte order,
 * zero sums left out. Kernel frames end in "_[k]" (as FlameGraph's
 * stackcollapse-perf writes them); ';' and line breaks in names become '_'.
 * Files as evprof_profile__write_firefox() (".gz" compresses, atomic
 * rename). Returns 0, -ENOENT (weight_counter names no column), -EINVAL or
 * -errno.
 */
EVPROF_API int
evprof_profile__write_folded(const struct evprof_profile *p, const char *path,
			     const struct evprof_folded_opts *opts);

/*
 * As evprof_profile__write_folded() into an open stream (e.g. stdout),
 * flushed but not closed. Returns 0 or -errno (-EIO for a stream error
 * without errno).
 */
EVPROF_API int
evprof_profile__write_folded_file(const struct evprof_profile *p, FILE *f,
				  const struct evprof_folded_opts *opts);

struct evprof_svg_opts {
	size_t sz; /* sizeof(struct evprof_svg_opts) */
	/* as evprof_folded_opts.weight_counter: NULL weighs by samples */
	const char *weight_counter;
	const char *title; /* NULL: "Flame graph" */
};

/*
 * Writes a flame graph of the folded stacks (evprof_profile__write_folded())
 * as one SVG file, laid out as FlameGraph's flamegraph.pl does: "all" at
 * the bottom, the thread names above it, each frame as wide as its share
 * of the weight, its name, weight and share in its tooltip (<title>);
 * frames narrower than 0.1 of its 1200 pixels are left out. Files as
 * evprof_profile__write_firefox() (atomic rename, ".gz" compresses).
 * Returns 0, -ENOENT (weight_counter names no column), -EINVAL or -errno.
 */
EVPROF_API int evprof_profile__write_svg(const struct evprof_profile *p,
					 const char *path,
					 const struct evprof_svg_opts *opts);

struct evprof_pprof_opts {
	size_t sz; /* sizeof(struct evprof_pprof_opts) */
	/*
	 * The sample type viewers show first: "samples", "cpu", a counter or
	 * a weight type. NULL: "cpu" when values carry CPU time, else
	 * "samples".
	 */
	const char *default_type;
	/* Sample labels: enum evprof_pprof_labels; 0 (THREAD) by default. */
	int labels;
	/*
	 * The labels of a thread's cgroup (enum evprof_pprof_cgroup_labels
	 * bits): 0, the default, is all of them with THREAD labels and none
	 * with PROCESS labels (ids change at every restart: a backend that
	 * makes a series per label set should ask for them).
	 */
	int cgroup_labels;
};

enum evprof_pprof_cgroup_labels {
	EVPROF_PPROF_CGROUP = 1,       /* "cgroup": the path */
	EVPROF_PPROF_CONTAINER_ID = 2, /* "container_id": the full id */
	EVPROF_PPROF_POD_UID = 4,      /* "pod_uid": with dashes */
	EVPROF_PPROF_QOS_CLASS = 8,    /* "qos_class": guaranteed, ... */
	EVPROF_PPROF_CGROUP_ALL = 15,
};

enum evprof_pprof_labels {
	/* pid and tid (numbers) and thread (the thread's name). */
	EVPROF_PPROF_LABELS_THREAD = 0,
	/*
	 * Only process_name (the process's name, else its thread's): for
	 * backends such as Pyroscope that make one series per distinct set
	 * of sample labels, where pid and tid would make one per thread.
	 */
	EVPROF_PPROF_LABELS_PROCESS = 1,
};

/*
 * Writes a pprof profile (google/pprof profile.proto). Sample types are
 * samples/count, cpu/nanoseconds, then <counter>/count for every counter
 * and <weight>/nanoseconds for every weight type; one Sample per store
 * entry (thread, stack) with its sums and the labels opts->labels
 * chooses (pid, tid and thread by default), and its thread's cgroup,
 * container_id, pod_uid and qos_class where it has them
 * (opts->cgroup_labels; evprof_cgroup__container()). Each lib is a
 * Mapping (path, build id in lowercase hex, has_functions; addresses are
 * lib-relative as in the Firefox output), kernel frames share a
 * "[kernel.kallsyms]" mapping; inlined frames are several Lines of one
 * Location, innermost first. The profile's notes become comments.
 * Files as evprof_profile__write_firefox(): a name ending in ".gz" is
 * gzip-compressed (as pprof files on disk should be).
 * Returns 0, -ENOENT (default_type is no sample type), -EINVAL or -errno.
 */
EVPROF_API int
evprof_profile__write_pprof(const struct evprof_profile *p, const char *path,
			    const struct evprof_pprof_opts *opts);

/*
 * As evprof_profile__write_pprof() into memory, not compressed (e.g. for
 * evprof_pusher__push()). On success *buf is a malloc'd buffer of *len
 * bytes that the caller frees with free(). Returns 0, -ENOENT, -EINVAL or
 * -ENOMEM; *buf and *len are untouched on failure.
 */
EVPROF_API int
evprof_profile__write_pprof_mem(const struct evprof_profile *p, void **buf,
				size_t *len,
				const struct evprof_pprof_opts *opts);

struct evprof_speedscope_opts {
	size_t sz; /* sizeof(struct evprof_speedscope_opts) */
	/*
	 * The profile speedscope opens first: the heaviest thread's profile
	 * of "cpu", a counter or a weight type. NULL: of the first column.
	 */
	const char *default_type;
};

/*
 * Writes a speedscope file (https://www.speedscope.app/file-format-schema.json):
 * one "sampled" profile per thread and column of the store, named
 * "<thread> (tid N) <column>": CPU time (nanoseconds) when samples carry
 * it, then each counter (unit "none": weights are its deltas) and each
 * weight type (nanoseconds); "samples" only when there is none of these.
 * A profile's samples are its thread's store entries with a non-zero value
 * (one per distinct stack, so its time-order view is in stack order),
 * frames are functions (their source file, else their lib, as "file").
 * Files as evprof_profile__write_firefox() (".gz" compresses, atomic
 * rename). Returns 0, -ENOENT (default_type names no profile), -EINVAL or
 * -errno.
 */
EVPROF_API int
evprof_profile__write_speedscope(const struct evprof_profile *p,
				 const char *path,
				 const struct evprof_speedscope_opts *opts);

struct evprof_report_opts {
	size_t sz; /* sizeof(struct evprof_report_opts) */
	/* "samples", "cpu", a counter or a weight type; NULL: cpu when known. */
	const char *sort;
	unsigned top;	 /* rows per table; 0: every function */
	bool per_thread; /* one report per thread instead of one in all */
};

/*
 * Writes a text report to f: the totals, then two tables of functions
 * (a function is a name in a lib), sorted by the self and by the total
 * value of the sort column, from the store. Each row: self% and self,
 * total% and total of the sort column, then every column's self value
 * (samples, CPU time in ms, each counter, each weight type in ms as
 * "<name>-ms"), then ratios of self values where both counters
 * exist: instructions per cycle, <x>-misses per 1000 instructions,
 * <x>faults per second of CPU time ("-" for no denominator). Total counts
 * a function once per stack (so once per sample), however often it
 * recurses.
 * Returns 0, -ENOENT (sort names no column), -EINVAL, -ENOMEM or -EIO.
 */
EVPROF_API int
evprof_profile__write_report(const struct evprof_profile *p, FILE *f,
			     const struct evprof_report_opts *opts);

/* ---- readers ------------------------------------------------------------ */

/*
 * Reads a profile written by evprof_profile__write_firefox() or
 * evprof_profile__write_pprof(), gzip-compressed or not (told by the
 * bytes, not the name), into a new profile: libs, frames, stacks,
 * processes, threads, and values. A Firefox profile's samples come back
 * through evprof_profile__add_sample() (a timeline in memory), its
 * evprofWeight tracks as weight types of their thread through
 * evprof_profile__add_aggregate(). A pprof
 * profile has no sample times: its Samples become aggregates of the store
 * (no timeline), the sample count their samples/count (each Sample counts
 * 1 in files without that type). Other pprof files load too when their
 * samples carry the labels; sample types in nanoseconds other than
 * cpu/nanoseconds become weight types, the others counters. Folded stacks
 * (evprof_profile__write_folded(), FlameGraph's stackcollapse output) load
 * too: the first name of a line is the thread, "_[k]" marks kernel frames,
 * the count goes to samples (no timeline). Returns a profile freed with
 * evprof_profile__free(), or NULL with errno set: ENOENT, EACCES... from
 * the file, EVPROF_ERR_MALFORMED for bytes that are neither (or a type named both
 * as a count and in ns), EVPROF_ERR_NEGATIVE for a pprof file with negative
 * values (a difference profile), E2BIG beyond EVPROF_PROFILE_MAX_COUNTERS or
 * EVPROF_PROFILE_MAX_WEIGHTS, ENOMEM.
 */
EVPROF_API struct evprof_profile *evprof_profile__load(const char *path);

/* As evprof_profile__load() from len bytes at buf (not kept). */
EVPROF_API struct evprof_profile *evprof_profile__load_buf(const void *buf,
							   size_t len);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_PROFILE_H */
