/* SPDX-License-Identifier: MIT */
/*
 * The recorder's own state, shared by recorder.c (its life: options,
 * targets, start, polls, stop) and window.c (the profiles it makes). What
 * records is the engine behind r->ops (engine.h).
 */
#ifndef EVPROF_LIB_RECORDER_INTERNAL_H
#define EVPROF_LIB_RECORDER_INTERNAL_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <evprof/launch.h>
#include <evprof/recorder.h>

#include "engine.h"

struct evprof_recorder {
	struct evprof__engine_setup s; /* what the engine records */
	const struct evprof__engine_ops *ops;
	struct evprof__engine *e; /* open, or NULL */
	struct evprof__notes notes;

	struct evprof_launch *launch; /* the command, until started */
	pid_t *pids;		      /* s.pids: attached processes */
	char *product;

	/* The engine's fds, then one pidfd per process (-1: gone). */
	struct pollfd *pfd;
	size_t nr_pfd;
	size_t nr_efd; /* the engine's */
	size_t live;   /* pidfds not yet readable */

	bool started, stopped;
	uint64_t start_mono, start_wall;
	uint64_t stop_mono; /* CLOCK_MONOTONIC at the stop */

	/* opts.flat_memory: builds in parts (window.c) */
	bool flat;
	bool no_timeline;
	char *spill_dir;
	char *debug_cache;	    /* for the recorder's own symbolizers */
	struct evprof_profile *cur; /* what the parts fill, NULL: none yet */
	struct evprof_symbolizer
	    *sym;	    /* the recorder's own, made when needed */
	uint64_t win_start; /* CLOCK_MONOTONIC start of cur */
	uint64_t last_part; /* when the polls built last */
	bool part_failed;   /* said once */
	bool windows_over;  /* the last window went out */
};

/* flat_memory: a part about once a second from the polls. */
EVPROF_HIDDEN void evprof__recorder_poll_part(struct evprof_recorder *r);

#endif /* EVPROF_LIB_RECORDER_INTERNAL_H */
