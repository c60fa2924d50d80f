/* SPDX-License-Identifier: MIT */
/*
 * Private interface between session.c (feeding: deltas, compact samples,
 * side-band events) and session_build.c (time-ordered replay, process tree,
 * maps, symbolization, profile).
 */
#ifndef EVPROF_LIB_SESSION_INTERNAL_H
#define EVPROF_LIB_SESSION_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/session.h>

#include "util.h"

/* A growable array; elements are malloc'ed in one block. */
struct evprof__vec {
	void *data;
	size_t len, cap;
};

/* Makes room for n more elements of size elem. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__vec_reserve(struct evprof__vec *v, size_t elem,
				      size_t n);

/* ssample.flags */
#define SS_HAS_CPU 0x1 /* cpu_delta is known */
#define SS_KEPT	   0x2 /* the last build kept it */
#define SS_UNWOUND 0x4 /* chain holds the user part unwound from ustack */

/* One stored sample; 48 bytes. */
struct ssample {
	uint64_t time;
	uint64_t cpu_delta; /* ns, valid with SS_HAS_CPU */
	uint64_t has;	    /* bit i: slot i has a delta */
	uint32_t pid, tid;
	uint32_t chain;	 /* word offset of [nr, ips...] in the chain arena */
	uint32_t deltas; /* first of popcount(has) packed deltas */
	uint32_t flags;
	uint32_t ustack; /* word offset + 1 of its stack copy, 0: none */
};

/* Side-band event kinds (records and /proc seeds), replayed at build. */
enum sb_kind {
	SB_SEED_PROC,	/* pid, name */
	SB_SEED_THREAD, /* pid, tid, name */
	SB_COMM,	/* pid, tid, name, exec */
	SB_FORK,	/* pid, ppid, tid, ptid */
	SB_EXIT,	/* pid, tid */
	SB_MMAP,	/* pid, addr, len, pgoff, ino, build id, name */
};

struct sb_event {
	uint64_t time;
	uint8_t kind;
	uint8_t exec;
	uint8_t build_id_len;
	uint32_t pid, tid, ppid, ptid;
	uint32_t str;	   /* offset of a NUL-terminated string in strs */
	uint32_t build_id; /* offset of build_id_len bytes in strs */
	uint64_t addr, len, pgoff, ino;
};

/* A PERF_RECORD_CALLCHAIN_DEFERRED, kept for stitching at build. */
struct sdeferred {
	uint64_t time;
	uint64_t cookie;
	uint32_t tid;
	uint32_t chain; /* its user ips [nr, ips...] in the chain arena */
};

/*
 * Root-end word of a chain whose user part stopped at the end of the stack
 * copy; a value no kernel context marker uses.
 */
#define EVPROF__CHAIN_TRUNCATED ((uint64_t)-4000)

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

	/* kernel id -> role; open addressing, power-of-two size */
	struct role_ent *roles;
	size_t roles_cap, nr_roles;
	uint64_t *ids; /* the declared ids, for per-tid resets */

	/* (id, tid) -> last raw value */
	struct last_ent *last;
	size_t last_cap, nr_last;

	/* callchains: words [nr, ips...], deduplicated by a hash set */
	struct evprof__vec chains; /* uint64_t */
	uint32_t *chain_set;	   /* offsets + 1; 0: empty */
	size_t chain_set_cap, nr_chain_set;

	struct evprof__vec samples; /* struct ssample */
	struct evprof__vec deltas;  /* uint64_t */
	struct evprof__vec sb;	    /* struct sb_event */
	struct evprof__vec strs;    /* char */

	/* stack copies: [dyn_size, size, nr_regs, regs..., stack words] */
	struct evprof__vec ustacks; /* uint64_t */
	size_t max_stack_bytes;
	struct evprof__vec deferred; /* struct sdeferred */

	/* tid -> interval state held between context-switch cuts */
	struct tstate *ts;
	size_t ts_cap, nr_ts;
	struct evprof__vec ts_vals; /* uint64_t: nr_slots per tstate */
	uint32_t *exit_tid; /* per CPU: the task whose EXIT came last */
	size_t nr_exit_cpus;

	uint64_t idle; /* samples of pid 0 dropped by exclude_idle */
	bool built;    /* stats and SS_KEPT come from the last build */
	struct evprof_session_stats st;
};

#define NO_SAMPLE UINT32_MAX

/* What a thread counted since its last sample, up to its last cut. */
struct tstate {
	uint64_t time;	  /* of its latest sample or cut */
	uint64_t has;	  /* pending slots (bit i: ts_vals[vals + i]) */
	uint64_t cpu;	  /* pending CPU ns, valid with has_cpu */
	uint32_t tid, pid;
	uint32_t vals;	  /* offset in ts_vals */
	uint32_t last;	  /* its latest stored sample, or NO_SAMPLE */
	uint32_t chain;	  /* stack of its first cut, while last is NO_SAMPLE */
	bool has_cpu, has_chain, used, pending;
};

/* tid's state, made when new. Returns NULL on -ENOMEM. */
EVPROF_HIDDEN struct tstate *evprof__tstate_get(struct evprof_session *s,
						uint32_t tid);
/* Adds a cut's deltas to ts's pending ones. */
EVPROF_HIDDEN void evprof__cut_hold(struct evprof_session *s, struct tstate *ts,
				    const uint64_t *vals, uint64_t has,
				    uint64_t cpu, bool has_cpu);
/* Moves ts's pending deltas into a sample's (vals by slot, *has bits). */
EVPROF_HIDDEN void evprof__cut_take(struct evprof_session *s,
				    struct tstate *ts, uint64_t *vals,
				    uint64_t *has, uint64_t *cpu, bool *has_cpu);
/* A FORK at time makes tid a new task: the old one's pending is flushed. */
EVPROF_HIDDEN void evprof__cut_fork(struct evprof_session *s, uint32_t tid,
				    uint64_t time);
/*
 * Per CPU, an EXIT record comes before the task's last switch-out, which
 * Linux 6.18 reports with tid -1 (the thread is unhashed by then). Returns
 * 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_exit(struct evprof_session *s, uint32_t cpu,
				   uint32_t tid);
/* The tid a per-CPU record of tid -1 on cpu stands for. */
EVPROF_HIDDEN uint32_t evprof__cut_dead_tid(const struct evprof_session *s,
					    uint32_t cpu);
/*
 * Puts every pending delta on its thread's latest sample, or on a new
 * sample at its last cut. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__cut_flush(struct evprof_session *s);

/*
 * Room for one more stored sample and its deltas: call before any state
 * changes, so evprof__sample_store() cannot fail. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__sample_reserve(struct evprof_session *s);
/*
 * Appends a copy of x (its deltas field set here) with vals[i] packed for
 * every slot bit i of x->has, and widens the sample time range. Returns
 * the stored sample, valid until the next store.
 */
EVPROF_HIDDEN struct ssample *evprof__sample_store(struct evprof_session *s,
						   const struct ssample *x,
						   const uint64_t *vals);

/* Adds len bytes to the string arena; *off receives their offset. */
EVPROF_HIDDEN int evprof__session_str(struct evprof_session *s, const void *p,
				      size_t len, uint32_t *off);

/* Finds or stores the chain ips[nr] (not in the arena itself). */
EVPROF_HIDDEN int evprof__session_chain(struct evprof_session *s,
					const uint64_t *ips, uint64_t nr,
					uint32_t *off);

/*
 * session_stitch.c. At feed: keeps the sample's stack copy and registers
 * (sets ss->ustack; a copy that does not fit is counted, not an error),
 * counts deferred samples; stores a CALLCHAIN_DEFERRED record.
 */
EVPROF_HIDDEN void evprof__session_sample_ext(struct evprof_session *s,
					      const struct evprof_sample *smp,
					      struct ssample *ss);
EVPROF_HIDDEN int evprof__session_feed_deferred(struct evprof_session *s,
						const struct evprof_record *r);
/*
 * At build, before the replay: gives each sample waiting on a deferred
 * user part the one its thread's CALLCHAIN_DEFERRED with its cookie
 * carries, in time order. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__session_stitch(struct evprof_session *s);

struct evprof__unwinder;
struct evprof__unwind_map;
/*
 * At build, in the replay: replaces the user part of x's chain by the one
 * unwound from its stack copy with the process's maps of that time (key:
 * that set of maps). Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__session_unwind(struct evprof_session *s,
					 struct evprof__unwinder *u,
					 uint64_t maps_key,
					 const struct evprof__unwind_map *maps,
					 size_t nr_maps, struct ssample *x);

static inline const char *sess_str(const struct evprof_session *s, uint32_t off)
{
	return (const char *)s->strs.data + off;
}

#endif /* EVPROF_LIB_SESSION_INTERNAL_H */
