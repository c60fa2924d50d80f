/* SPDX-License-Identifier: MIT */
/*
 * The session object, shared by the two top session modules: session.c
 * (feeding) and session_build.c (building), which never call each other.
 * Each layer below has its own header and state and includes, and calls,
 * only layers below it (lower ones get what they need as arguments):
 *
 *   session_proc.c: /proc reader, on the public API only
 *   session.c ----------> delta, cut, offcpu, stitch, store
 *   session_build.c ----> part, stacks, tasks, cut, offcpu, stitch, store
 *   session_part.c -----> stacks, tasks, cut, delta, stitch, store
 *   session_stacks.c ---> tasks, stitch, store (+ unwind, profile)
 *   session_cut.c, session_offcpu.c, session_stitch.c,
 *   session_tasks.c ---> store
 *   session_delta.c, session_store.c ---> util
 */
#ifndef EVPROF_LIB_SESSION_INTERNAL_H
#define EVPROF_LIB_SESSION_INTERNAL_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/session.h>

#include "cut.h"
#include "delta.h"
#include "offcpu.h"
#include "stitch.h"
#include "store.h"
#include "base/base.h"

struct sess_part;
struct behind_job;

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
	uint64_t own; /* opts.own_counters: slots attributed by own samples */
	uint64_t switch_slots; /* opts.switch_counters */
	bool has_cut; /* an id has role EVPROF_SESSION_CUT or SWITCH_OUT */
	uint32_t max_stack; /* opts.max_stack */
	bool has_switch;    /* an id has role EVPROF_SESSION_SWITCH_OUT */

	struct sess_store store;
	struct sess_delta delta;
	struct sess_cut cut;
	struct sess_stitch stitch;
	struct sess_offcpu off;
	uint64_t nr_offcpu; /* stored SS_OFFCPU samples, no profile samples */

	uint64_t idle; /* samples of pid 0 dropped by exclude_idle */
	/* Deltas taken from reads that no stored sample carries (idle). */
	uint64_t dropped[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t dropped_cpu;
	bool built; /* stats and SS_KEPT come from the last build */
	/* state kept across partial builds, NULL before the first */
	struct sess_part *part;
	/* a partial build on its own thread (session_behind.h), or NULL */
	struct behind_job *behind;
	pthread_t behind_th;
	struct evprof_session_stats st;
	/*
	 * Cgroups: id -> its path (malloc'd), from CGROUP records and
	 * evprof_session__name_cgroup(); tid -> the cgroup id its latest
	 * sample carried, so a change alone becomes an SB_CGROUP event.
	 * Seeds' paths get made-up ids from seed_cgroup (top bit set).
	 */
	struct evprof_hashmap *cg_names;
	struct evprof_hashmap *cg_last;
	uint64_t seed_cgroup;
};

/*
 * Thread tid of pid ran in cgroup id (0: none known) at time, as its
 * latest sample says: an SB_CGROUP event when its thread's changed.
 * Returns 0 or -ENOMEM (session.c).
 */
EVPROF_HIDDEN int evprof__session_note_cgroup(struct evprof_session *s,
					      uint64_t time, uint32_t pid,
					      uint32_t tid, uint64_t id);

#endif /* EVPROF_LIB_SESSION_INTERNAL_H */
