/* SPDX-License-Identifier: MIT */
/*
 * The session object, shared by the two top session modules: session.c
 * (feeding) and session_build.c (building). Each layer below has its own
 * header and state, and includes only the layers below it:
 *
 *   session.c          session_build.c           session_proc.c (/proc)
 *     |  \      \        |     \        \             | (public API only)
 *     |   \      \     session_stacks.c  \
 *     |    \      \     /     |     \     \
 *     |  session_cut.c  session_tasks.c  session_stitch.c   session_delta.c
 *     |        \              |              /
 *     +------- session_store.c (samples, chains, side-band events)
 */
#ifndef EVPROF_LIB_SESSION_INTERNAL_H
#define EVPROF_LIB_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/session.h>

#include "session_cut.h"
#include "session_delta.h"
#include "session_stitch.h"
#include "session_store.h"
#include "util.h"

struct evprof_session {
	struct evprof_record_fmt fmt;
	char **counters;
	size_t nr_counters;
	char *sampler_counter;
	size_t nr_slots; /* nr_counters, +1 with a sampler_counter */
	pid_t *pids;
	size_t nr_pids;
	bool exclude_idle;
	bool per_cpu;
	bool has_cut; /* an id has role EVPROF_SESSION_CUT */

	struct sess_store store;
	struct sess_delta delta;
	struct sess_cut cut;
	struct sess_stitch stitch;

	uint64_t idle; /* samples of pid 0 dropped by exclude_idle */
	/* Deltas taken from reads that no stored sample carries (idle). */
	uint64_t dropped[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t dropped_cpu;
	bool built; /* stats and SS_KEPT come from the last build */
	struct evprof_session_stats st;
};

#endif /* EVPROF_LIB_SESSION_INTERNAL_H */
