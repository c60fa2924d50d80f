/* SPDX-License-Identifier: MIT */
/*
 * Session parts: what partial builds (evprof_session__build_until()) keep
 * from one build to the next, and the dropping of what they built, so that
 * a session's memory depends on the time between builds, not on the
 * length of the recording. Kept: the task state the side-band replay made
 * (threads, names, maps, process tree), the stack caches of the profile
 * being filled, and per thread the totals the dropped samples carried (for
 * evprof_session__thread_total()). Dropped: built samples, their deltas and
 * stack copies, replayed side-band events. Above the storage, cuts, deltas
 * and stitch, whose arrays it compacts; below session_build.c.
 *
 * Nor does the memory depend on how many tasks came and went: a thread
 * whose EXIT is older than a part's until by EVPROF__PART_GRACE_NS is
 * forgotten with everything held for it (task entries, cut state,
 * strings), and so is its process once no thread of it is left. Its
 * totals and its counter instances stay, per tid (so bounded by the tids
 * in use): they are what it counted, and evprof_session__thread_total()
 * answers them; a record of the tid that comes later still has its
 * previous value (a new thread on it restarts at its FORK). Its held cut
 * deltas went out already, in the part that replayed its EXIT, as they go
 * at the end.
 */
#ifndef EVPROF_LIB_SESSION_PART_H
#define EVPROF_LIB_SESSION_PART_H

#include <stdint.h>

#include <evprof/profile.h>

#include "cut.h"
#include "delta.h"
#include "stacks.h"
#include "stitch.h"
#include "store.h"
#include "tasks.h"

struct sess_part {
	struct sess_tasks t;	  /* kept across builds */
	struct sess_stacks sk;	  /* caches for the profile p */
	struct evprof_profile *p; /* the profile filled last, NULL: none */
	uint64_t kept, cut;	  /* samples kept, cut, over every build */
	uint64_t weight;	  /* samples the kept ones stand for */
	uint64_t own;		  /* kept SS_OWN samples */
	uint64_t ends[EVPROF_STACK_ENDS]; /* kept samples by stack end */
	uint64_t replayed;		  /* samples replayed (kept or not) */
	uint64_t trimmed;   /* replayed at the last malloc_trim() */
	size_t chains_live; /* chain words after the last compaction */
	struct evprof_hashmap *tid_tot; /* tid -> offset in tot */
	/* The last tid's offset (samples come in runs of one thread). */
	bool last_ok;
	uint32_t last_tid;
	long last_off;
	EVPROF_VEC(uint64_t) tot; /* per tid: nr_slots deltas, CPU ns */
	/* what dropped samples outside the tree carried: slots, CPU ns */
	uint64_t unkept[EVPROF_PROFILE_MAX_COUNTERS + 1];
};

EVPROF_HIDDEN void evprof__part_free(struct sess_part *pt);

/*
 * Drops the samples flagged SS_BUILT (their totals kept first), their
 * deltas and stack copies, and the side-band events of time up to until
 * among the first nr_sb (those the build replayed). Returns 0 or -ENOMEM
 * (nothing dropped then).
 */
EVPROF_HIDDEN int evprof__part_drop(struct sess_part *pt, struct sess_store *st,
				    struct sess_stitch *k, uint64_t until,
				    size_t nr_sb);

/*
 * How long after its EXIT a task's records may still be stamped: its last
 * switch-out and reads come as it dies, microseconds after the EXIT, and a
 * second is far past any scheduling delay between the two. (The margin a
 * recorder builds behind now is for their arrival, not their stamps.) A
 * record stamped later than that is kept all the same, under a thread
 * made up anew.
 */
#define EVPROF__PART_GRACE_NS 1000000000ull

/*
 * Before a part's build up to until: the held cut deltas of the threads
 * that exited by then go to their "[unsampled]" frame now, as at the end, so that they are built in the part of
 * their exit. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__part_flush_exits(struct sess_part *pt,
					   struct sess_store *st,
					   struct sess_cut *c, uint64_t until);
/*
 * After evprof__part_drop(): forgets the threads that ended
 * EVPROF__PART_GRACE_NS before until (and the processes and maps they
 * leave unused, and their cut states), and keeps in the string arena only what remaining side-band events and
 * tasks name. Returns 0 or -ENOMEM (then they stay, which is harmless).
 */
EVPROF_HIDDEN int evprof__part_forget(struct sess_part *pt,
				      struct sess_store *st, struct sess_cut *c,
				      uint64_t until);

/*
 * Total of slot (-1: CPU ns) that tid's dropped kept samples carried,
 * forgotten threads included.
 */
EVPROF_HIDDEN uint64_t evprof__part_thread_total(const struct sess_part *pt,
						 size_t nr_slots, uint32_t tid,
						 int slot);
/* Same for the dropped samples outside the tree. */
EVPROF_HIDDEN uint64_t evprof__part_unkept(const struct sess_part *pt,
					   size_t nr_slots, int slot);

#endif /* EVPROF_LIB_SESSION_PART_H */
