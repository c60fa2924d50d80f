/* SPDX-License-Identifier: MIT */
/*
 * Private header of the Firefox Profiler writer. out_firefox.c writes the
 * document: meta, libs, the threads' tracks; out_firefox_tables.c the
 * tables the threads share; out_firefox_counters.c the counters (the
 * counter tracks the UI draws) from the same sample rows; out_firefox_waits.c
 * the waits' markers. Below them out_firefox_ahead.c makes the pieces'
 * columns ahead, out_firefox_cols.c holds a column, out_firefox_rows.c reads
 * a track's rows. Each file calls only files after it in this list, never
 * back: out_firefox, counters, tables, waits, ahead, cols, rows.
 */
#ifndef EVPROF_LIB_OUT_FIREFOX_H
#define EVPROF_LIB_OUT_FIREFOX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "json.h"
#include "profile/profile.h"

struct sym_key;

/*
 * A piece of the document whose columns are made apart (out_firefox_ahead.c):
 * a track (thread thr's own: wtype, ctr -1; else of weight type wtype or
 * counter ctr), or for thr < 0 the counter ci of process proc.
 */
struct fx_job {
	int thr, wtype, ctr;
	int proc, ci;
};

struct fx_ctx {
	const struct evprof_profile *p;
	struct evprof__json j;
	int weight_counter; /* counter index, or -1 */
	bool cpu;	    /* some sample has CPU time */
	int32_t *source_of; /* per string: source index or -1 */
	uint32_t *sources;  /* source index -> filename string */
	size_t nr_sources;
	int32_t *sym_of;	     /* per frame: native symbol index or -1 */
	uint32_t *syms;		     /* native symbol index -> defining frame */
	const struct sym_key *probe; /* what a symbol lookup looks for */
	size_t nr_syms;
	uint32_t *thread_order;
	uint64_t *proc_last; /* per process: latest sample or wait end */
	int64_t *proc_main;  /* per process: its first track's index, or -1 */
	struct fx_job *jobs; /* the tracks in document order, then counters */
	size_t nr_jobs;
};

/*
 * A column made apart from the document (out_firefox_cols.c), "[...]" in a
 * scratch file (evprof__timeline_scratch()), so that the columns of one pass over rows
 * can be written one after the other: open it, write values into j, end
 * it, evprof__json_copy() f into the document, close it (whatever
 * happened). open and end return 0 or -errno. Of the n columns open at
 * once, each holds its share of FX_COLS_MEM in memory, the rest in a file:
 * a long thread's columns (about 40 bytes a sample) stay out of memory.
 */
#define FX_COLS_MEM (256u << 10)

struct fx_col {
	FILE *f;
	struct evprof__sink s;
	struct evprof__json j;
	bool open; /* s is open */
};

EVPROF_HIDDEN int evprof__fx_col_open(const struct fx_ctx *c, struct fx_col *o,
				      size_t n);
EVPROF_HIDDEN int evprof__fx_col_end(struct fx_col *o);
EVPROF_HIDDEN void evprof__fx_col_close(struct fx_col *o);

#define FX_MAX_COLS (4 + EVPROF_PROFILE_MAX_COUNTERS)

/* A piece's columns: o[0..n), rows (or points) in them, all weighing 1. */
struct fx_made {
	struct fx_col o[FX_MAX_COLS];
	size_t n;
	uint64_t rows;
	bool ones;
	int err; /* 0 or -errno: making them failed */
};

/*
 * Makes job's columns into m, which is zeroed: sets m->n before opening
 * any, so that they are closed whatever happens. Returns 0 or -errno.
 * Runs on either thread: reads c, writes only m.
 */
typedef int (*fx_make_fn)(const struct fx_ctx *c, const struct fx_job *job,
			  struct fx_made *m);

/*
 * Columns of c->jobs made ahead of their writing, on one more thread when
 * one starts (else by the writer alone). start: NULL without memory.
 * take(i): job i's columns, in order i = 0, 1, ...: made, or m->err.
 * release(i): closes them once written. stop: joins, closes what was made
 * and not written, frees; NULL is a no-op.
 */
struct fx_ahead;
EVPROF_HIDDEN struct fx_ahead *evprof__fx_ahead_start(const struct fx_ctx *c,
						      fx_make_fn make);
EVPROF_HIDDEN struct fx_made *evprof__fx_ahead_take(struct fx_ahead *a,
						    size_t i);
EVPROF_HIDDEN void evprof__fx_ahead_release(struct fx_ahead *a, size_t i);
EVPROF_HIDDEN void evprof__fx_ahead_stop(struct fx_ahead *a);

/*
 * Categories of meta.categories, in the order out_firefox.c writes them:
 * frames are user or kernel, the waits' markers FX_CAT_WAIT.
 */
enum { FX_CAT_OTHER, FX_CAT_USER, FX_CAT_KERNEL, FX_CAT_WAIT };

/*
 * Derives the shared tables' sources and native symbols into c (the
 * caller frees them, whatever is returned). Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__fx_build_tables(struct fx_ctx *c);
/* Writes "shared": the tables all threads share, their strings first. */
EVPROF_HIDDEN void evprof__fx_write_shared(struct fx_ctx *c);

/* Nanoseconds since the time origin, written as ms. */
static inline void evprof__fx_ms(struct fx_ctx *c, uint64_t t_ns)
{
	evprof__json_fixed(&c->j, (int64_t)(t_ns - c->p->start_mono_ns), 6);
}

/*
 * A thread's samples, read once per track: its timeline in time order, or,
 * for a profile without one, one sample per store entry that has samples,
 * at the thread's start (the call tree is exact, the time axis is not).
 */
struct fx_rows {
	const struct evprof_profile *p;
	const struct evprof__thread *t;
	struct evprof_profile_timeline *tl;
	int64_t entry; /* the next store entry, without a timeline */
	int wtype; /* >= 0: that weight type's waits or entries, as weight */
	int ctr;   /* >= 0: samples with a delta of it, as weight */
	uint32_t *waits; /* a weight track's waits by time, or NULL */
	size_t nr_waits, next_wait;
};

/*
 * Thread thr's waits (of weight type wtype, or all for -1), as indices into
 * its waits sorted by start, in *out (to free; NULL for none), n of them.
 * Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__fx_wait_order(const struct evprof_profile *p, int thr,
					int wtype, uint32_t **out, size_t *n);

/* Opens thread thr's rows (wtype, ctr: see struct fx_rows). 0 or -errno. */
EVPROF_HIDDEN int evprof__fx_rows_open(struct fx_rows *r,
				       const struct evprof_profile *p, int thr,
				       int wtype, int ctr);
/* The next row in s: 1, 0 at the end, or -errno. */
EVPROF_HIDDEN int evprof__fx_rows_next(struct fx_rows *r,
				       struct evprof_profile_sample *s);
EVPROF_HIDDEN void evprof__fx_rows_close(struct fx_rows *r);
/* Thread thr's latest sample or wait end, at least its start. */
EVPROF_HIDDEN uint64_t evprof__fx_thread_last(const struct evprof_profile *p,
					      int thr);
/* Whether thread thr has a track of weight type wtype or counter ctr. */
EVPROF_HIDDEN bool evprof__fx_has_track(const struct evprof_profile *p, int thr,
					int wtype, int ctr);

/* Writes meta's "markerSchema": the waits' marker schema, if any. */
EVPROF_HIDDEN void evprof__fx_write_marker_schema(struct fx_ctx *c);
/*
 * Writes the weight types' names, the waits' marker names, after the
 * profile's strings in stringArray: weight type i is string nr_strs + i.
 */
EVPROF_HIDDEN void evprof__fx_write_wait_names(struct fx_ctx *c);
/*
 * Writes "markers" of thread thr's track: its waits for its own track
 * (own), else none. Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__fx_write_markers(struct fx_ctx *c, int thr, bool own);

/*
 * Whether process proc gets counter tracks: it has a thread track and the
 * profile a timeline (without one, samples have no times to draw).
 */
static inline bool evprof__fx_has_counters(const struct fx_ctx *c, int proc)
{
	return c->p->timeline && c->proc_main[proc] >= 0;
}
/* The make function of a counter's job: its points' times and counts. */
EVPROF_HIDDEN int evprof__fx_make_points(const struct fx_ctx *c,
					 const struct fx_job *job,
					 struct fx_made *m);
/*
 * Writes "counters": per process, one counter per registered counter that
 * its samples carry, drawn by the profiler as a track of the process, from
 * jobs first.. of a (evprof__fx_make_points()). Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__fx_write_counters(struct fx_ctx *c,
					    struct fx_ahead *a, size_t first);

#endif /* EVPROF_LIB_OUT_FIREFOX_H */
