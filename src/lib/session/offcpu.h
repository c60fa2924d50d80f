/* SPDX-License-Identifier: MIT */
/*
 * Session off-CPU intervals (EVPROF_SESSION_SWITCH_OUT): each switch-out
 * cut is stored as a sample flagged SS_OFFCPU that holds its stack; the
 * switch records fed here and the side-band FORK and EXIT events give each
 * one its start, end and kind at build. The start is the switch-out
 * record's time, not the cut's: the cut's time is read before its
 * callchain is walked, which the thread's task-clock still counts as on
 * CPU (about 10 us a switch on a VM), and the out record follows it. Records
 * of different rings arrive out of order (a thread leaves one CPU and comes
 * back on another), so nothing is matched while feeding. Above the
 * storage, whose samples it completes.
 */
#ifndef EVPROF_LIB_SESSION_OFFCPU_H
#define EVPROF_LIB_SESSION_OFFCPU_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* A switch record kept for matching. */
struct soff_switch {
	uint64_t time;
	uint32_t tid;
	bool in;      /* a switch-in; else a switch-out */
	bool preempt; /* a switch-out of a task still runnable */
};

/* n switch-outs without their cut, counted at sample idx. */
struct soff_lost {
	uint32_t idx;
	uint32_t n;
};

struct sess_offcpu {
	EVPROF_VEC(struct soff_switch) sw;
	uint64_t last_time; /* latest time any record carried */
	uint64_t end_time;  /* evprof_session__end(), 0: not given */
	/* intervals the last resolve found reopened before their end */
	uint64_t unmatched;
	/*
	 * Switch-outs the last resolve found without their cut (a lost or
	 * throttled sample: intervals missing with their stack), counted at
	 * a cut of the same task (tid, between forks) so that a build counts
	 * those of kept threads only; by idx.
	 */
	EVPROF_VEC(struct soff_lost) lost;
};

EVPROF_HIDDEN void evprof__offcpu_free(struct sess_offcpu *o);

/* Keeps a switch record of tid at time. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__offcpu_switch(struct sess_offcpu *o, uint32_t tid,
					uint64_t time, bool in, bool preempt);

/*
 * Gives every SS_OFFCPU sample of st its duration (cpu_delta, ns; 0: no
 * interval, e.g. the switch-out of a task after its EXIT) and SS_PREEMPT
 * when it was preempted. May be called again after more records. Returns
 * 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__offcpu_resolve(struct sess_offcpu *o,
					 struct sess_store *st);

/* The switch-outs without their cut the last resolve counted at idx. */
EVPROF_HIDDEN uint32_t evprof__offcpu_lost_at(const struct sess_offcpu *o,
					      uint32_t idx);

#endif /* EVPROF_LIB_SESSION_OFFCPU_H */
