/* SPDX-License-Identifier: MIT */
/*
 * Session cuts: deltas of context-switch samples (EVPROF_SESSION_CUT) held
 * per thread until its next sample, or put on a frame "[unsampled]" under
 * the thread when no other comes.
 * Above the storage, whose samples it extends.
 */
#ifndef EVPROF_LIB_SESSION_CUT_H
#define EVPROF_LIB_SESSION_CUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "store.h"

/* What a thread counted since its last sample, up to its last cut. */
struct tstate {
	uint64_t time; /* of its latest sample or cut */
	uint64_t has;  /* pending slots (bit i: vals[vals + i]) */
	uint64_t cpu;  /* pending CPU ns, valid with has_cpu */
	uint32_t tid, pid;
	uint32_t vals; /* offset in sess_cut.vals */
	bool has_cpu, pending;
};

/*
 * Who ran on a CPU, from its records (per-CPU mode). A stretch no read
 * ends (a task whose switch-out the kernel does not sample: the idle task
 * of some CPUs, some tasks of a VM's host agent on Linux 6.18) would go
 * whole into the next read: the next task's switch-in record tells where
 * it began.
 */
struct cpu_state {
	uint64_t in_time; /* of in_tid's switch-in, valid with gap */
	uint32_t unseen; /* switch-ins after no read of prev since the latest */
	uint32_t exit_pid, exit_tid; /* whose EXIT came last */
	uint32_t read_tid; /* sample tid of the latest read, valid with read */
	uint32_t in_pid, in_tid; /* the latest switched in (after an unseen
				    stretch with gap) */
	bool read, gap;
	bool on;   /* in_tid runs: no switch-out or LOST record since */
	bool lost; /* a LOST record since the latest read */
};

struct sess_cut {
	/* interval state held between context-switch cuts, per tid */
	EVPROF_VEC(struct tstate) ts;
	struct evprof_hashmap *by_tid; /* tid -> index in ts */
	EVPROF_VEC(uint64_t) vals;     /* nr_slots per tstate */
	EVPROF_VEC(struct cpu_state) cpus;
	size_t nr_unsampled; /* "[unsampled]" samples made, not samples taken */
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
/*
 * Moves ts's pending deltas of slots (bits), and its CPU time with
 * with_cpu, into a sample's (vals by slot, *has bits); the rest stays
 * pending.
 */
EVPROF_HIDDEN void
evprof__cut_take(struct sess_cut *c, const struct sess_store *st,
		 struct tstate *ts, uint64_t slots, bool with_cpu,
		 uint64_t *vals, uint64_t *has, uint64_t *cpu, bool *has_cpu);
/*
 * A FORK at time makes tid a new task: the old one's pending deltas go to
 * its "[unsampled]" frame. Returns 0, or -ENOMEM when they had to be dropped.
 */
EVPROF_HIDDEN int evprof__cut_fork(struct sess_cut *c, struct sess_store *st,
				   uint32_t tid, uint64_t time);
/*
 * Sets *cs to cpu's state, made when new, valid until the next call; NULL
 * for a CPU number past any machine's (an untrusted record). Returns 0 or
 * -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_cpu(struct sess_cut *c, uint32_t cpu,
				  struct cpu_state **cs);
/*
 * Per CPU, an EXIT record of pid/tid comes before the task's last
 * switch-out, which Linux 6.18 reports with tid -1 (the thread is
 * unhashed by then), and pid -1 too when its process was reaped before
 * (by a parent on another CPU, often on a many-CPU host). Returns 0 or
 * -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_exit(struct sess_cut *c, uint32_t cpu,
				   uint32_t pid, uint32_t tid);
/* The tid a per-CPU record of tid -1 on cpu stands for. */
EVPROF_HIDDEN uint32_t evprof__cut_dead_tid(const struct sess_cut *c,
					    uint32_t cpu);
/* The pid a per-CPU record of pid -1 and tid -1 on cpu stands for. */
EVPROF_HIDDEN uint32_t evprof__cut_dead_pid(const struct sess_cut *c,
					    uint32_t cpu);
/*
 * A switch-in of pid/tid at time on cpu, after prev_tid (PERF_RECORD_
 * SWITCH_CPU_WIDE): tid runs there (on) until the CPU's next switch-out.
 * When the CPU's latest read was not prev_tid's, or it had none, what ran
 * before time was never read: tid's first read must not take it. Returns
 * 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_switch_in(struct sess_cut *c, uint32_t cpu,
					uint32_t pid, uint32_t tid,
					uint32_t prev_tid, uint64_t time);
/*
 * Nothing is known of who runs on cpu until its next switch-in: after a
 * switch-out record (the CPU runs prev up to switch_to(), and past a
 * cgroup filter no record names the task coming) and a LOST record (lost:
 * it may have held switches, and who ran since the latest read is not
 * known). Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_unknown(struct sess_cut *c, uint32_t cpu,
				      bool lost);
/*
 * A read of cpu at time, by a sample of sample_tid (tid once resolved),
 * whose CPU time delta is *cpu_ns. After an unseen stretch, the part of
 * *cpu_ns before tid's switch-in is taken out: returns it (0 for none).
 * Per-CPU clocks count wall time, so that part is the time from the
 * previous read to the switch-in; *switches gets the switch-outs no read
 * counted (one per switch-in after one), which a context-switch counter's
 * delta holds; the other counters of the stretch cannot be split and stay
 * with tid.
 */
EVPROF_HIDDEN uint64_t evprof__cut_cpu_read(struct cpu_state *cs,
					    uint32_t sample_tid, uint32_t tid,
					    uint64_t time, uint64_t *cpu_ns,
					    uint32_t *switches);
/*
 * Puts tid's pending deltas on its "[unsampled]" frame now, as at the end, when its last cut is at or before until: its
 * task exited, and they go out in the part where it ended. Returns 0 or
 * -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_flush_tid(struct sess_cut *c,
					struct sess_store *st, uint32_t tid,
					uint64_t until);
/*
 * Callback of the forgetting functions: whether tid, of a state last
 * changed at time, names a task gone for good.
 */
typedef bool (*evprof__gone_fn)(uint32_t tid, uint64_t time, void *ctx);
/*
 * Forgets the states of the threads gone() says are gone and that hold no
 * pending delta. Indices in ts change. Returns 0 or -ENOMEM (nothing
 * changed).
 */
EVPROF_HIDDEN int evprof__cut_forget(struct sess_cut *c,
				     const struct sess_store *st,
				     evprof__gone_fn gone, void *ctx);
/*
 * Puts every pending delta on its thread's "[unsampled]" frame. Returns 0
 * or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_flush(struct sess_cut *c, struct sess_store *st);

#endif /* EVPROF_LIB_SESSION_CUT_H */
