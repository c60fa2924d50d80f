/* SPDX-License-Identifier: MIT */
/*
 * Session cuts: deltas of context-switch samples (EVPROF_SESSION_CUT) held
 * per thread until its next sample, or put on its latest one at the end.
 * Above the storage, whose samples it extends.
 */
#ifndef EVPROF_LIB_SESSION_CUT_H
#define EVPROF_LIB_SESSION_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "session_store.h"

/* What a thread counted since its last sample, up to its last cut. */
struct tstate {
	uint64_t time; /* of its latest sample or cut */
	uint64_t has;  /* pending slots (bit i: vals[vals + i]) */
	uint64_t cpu;  /* pending CPU ns, valid with has_cpu */
	uint32_t tid, pid;
	uint32_t vals;	/* offset in sess_cut.vals */
	uint32_t last;	/* its latest stored sample, or NO_SAMPLE */
	uint32_t chain; /* stack of its first cut, while last is NO_SAMPLE */
	bool has_chain, has_cpu, pending;
};

struct sess_cut {
	/* interval state held between context-switch cuts, per tid */
	EVPROF_VEC(struct tstate) ts;
	struct evprof_hashmap *by_tid; /* tid -> index in ts */
	EVPROF_VEC(uint64_t) vals;     /* nr_slots per tstate */
	EVPROF_VEC(uint32_t) exit_tid; /* per CPU: whose EXIT came last */
};

EVPROF_HIDDEN void evprof__cut_free(struct sess_cut *c);

/*
 * tid's state, made when new; valid until the next call. Returns NULL on
 * -ENOMEM.
 */
EVPROF_HIDDEN struct tstate *evprof__tstate_get(struct sess_cut *c,
						const struct sess_store *st,
						uint32_t tid);
/* Adds a cut's deltas (vals by slot, has bits) to ts's pending ones. */
EVPROF_HIDDEN void evprof__cut_hold(struct sess_cut *c,
				    const struct sess_store *st,
				    struct tstate *ts, const uint64_t *vals,
				    uint64_t has, uint64_t cpu, bool has_cpu);
/* Moves ts's pending deltas into a sample's (vals by slot, *has bits). */
EVPROF_HIDDEN void evprof__cut_take(struct sess_cut *c,
				    const struct sess_store *st,
				    struct tstate *ts, uint64_t *vals,
				    uint64_t *has, uint64_t *cpu,
				    bool *has_cpu);
/*
 * A FORK at time makes tid a new task: the old one's pending deltas go to
 * its samples. Returns 0, or -ENOMEM when they had to be dropped.
 */
EVPROF_HIDDEN int evprof__cut_fork(struct sess_cut *c, struct sess_store *st,
				   uint32_t tid, uint64_t time);
/*
 * Per CPU, an EXIT record comes before the task's last switch-out, which
 * Linux 6.18 reports with tid -1 (the thread is unhashed by then). Returns
 * 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_exit(struct sess_cut *c, uint32_t cpu,
				   uint32_t tid);
/* The tid a per-CPU record of tid -1 on cpu stands for. */
EVPROF_HIDDEN uint32_t evprof__cut_dead_tid(const struct sess_cut *c,
					    uint32_t cpu);
/*
 * Puts every pending delta on its thread's latest sample, or on a new
 * sample at its last cut. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_flush(struct sess_cut *c, struct sess_store *st);

#endif /* EVPROF_LIB_SESSION_CUT_H */
