/* SPDX-License-Identifier: MIT */
/*
 * Session storage, the lowest session layer: what feeding keeps until a
 * build (compact samples with packed deltas, callchains deduplicated in an
 * arena, side-band events and their strings). It knows no policy: the
 * layers above decide what to store.
 */
#ifndef EVPROF_LIB_SESSION_STORE_H
#define EVPROF_LIB_SESSION_STORE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* ssample.flags */
#define SS_HAS_CPU 0x1 /* cpu_delta is known */
#define SS_KEPT	   0x2 /* the last build kept it */
#define SS_UNWOUND 0x4 /* chain holds the user part unwound from ustack */
/*
 * A switch-out that opens an off-CPU interval, no profile sample: its
 * cpu_delta is the interval's length in ns once resolved at build.
 */
#define SS_OFFCPU  0x8
#define SS_PREEMPT 0x10 /* with SS_OFFCPU: the thread was preempted */
#define SS_CUT	   0x20 /* the last build cut its user chain (garbage) */
/* Sums of many samples (session_aggr.h): no timeline row. */
#define SS_AGGR	 0x40
#define SS_BUILT 0x80 /* a partial build filled it in: to be dropped */
/*
 * What its thread counted after its last sample, on "[unsampled]": values
 * only, no sample of its own.
 */
#define SS_UNSAMPLED 0x100
/*
 * A sample of a counter attributed by its own samples: its values on its
 * stack, no sample of time (see evprof_session_opts.own_counters).
 */
#define SS_OWN 0x200
/*
 * Its frame-pointer chain's leaf was checked against its stack copy
 * (leaf.h): gained the callers the walk skips, or not recovered.
 */
#define SS_LEAF	       0x400
#define SS_LEAF_GAINED 0x800
#define SS_LEAF_LOST   0x1000
/* How the last build found its stack to end (enum evprof_stack_end). */
#define SS_END_SHIFT 13
#define SS_END_MASK  (0x7u << SS_END_SHIFT)

#define NO_SAMPLE UINT32_MAX

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

/* Side-band event kinds (records and seeds), replayed at build. */
enum sb_kind {
	SB_SEED_PROC,	/* pid, name */
	SB_SEED_THREAD, /* pid, tid, name */
	SB_COMM,	/* pid, tid, name, exec */
	SB_FORK,	/* pid, ppid, tid, ptid */
	SB_EXIT,	/* pid, tid */
	SB_MMAP,	/* pid, addr, len, pgoff, ino, build id, name */
	SB_CGROUP,	/* pid, tid, cgroup id in addr */
	SB_NS_IDS,	/* pid, tid; ns pid in ppid, ns tid in ptid */
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

/*
 * Root-end word of a chain whose user part was unwound from its stack copy:
 * how the unwinding ended (enum evprof_stack_end; EVPROF_STACK_WHOLE: at
 * its last pc, which the build judges by its CFI). Values no kernel context
 * marker uses.
 */
#define EVPROF__CHAIN_UNWOUND(e) ((uint64_t)-4010 - (uint64_t)(e))
/*
 * The only word of the chain of what a thread counted after its last
 * sample (its whole life if it had none): a frame "[unsampled]" under the
 * thread, never the code that ran as it exited.
 */
#define EVPROF__CHAIN_UNSAMPLED ((uint64_t)-4001)

struct sess_store {
	size_t nr_slots; /* deltas a sample may carry */

	/* callchains: words [nr, ips...], deduplicated by a hash set */
	EVPROF_VEC(uint64_t) chains;
	struct evprof_hashmap *chain_set; /* offset -> offset */

	EVPROF_VEC(struct ssample) samples;
	EVPROF_VEC(uint64_t) deltas; /* packed, see ssample.deltas */
	EVPROF_VEC(struct sb_event) sb;
	EVPROF_VEC(char) strs;
	uint64_t first_time, last_time; /* of stored samples; 0: none */
};

EVPROF_HIDDEN void evprof__sstore_free(struct sess_store *st);

/* Adds len bytes to the string arena; *off receives their offset. */
EVPROF_HIDDEN int evprof__sstore_bytes(struct sess_store *st, const void *p,
				       size_t len, uint32_t *off);
/* Same for a NUL-terminated string, its NUL included. */
EVPROF_HIDDEN int evprof__sstore_str(struct sess_store *st, const char *str,
				     uint32_t *off);

/* A holder of an offset in the string arena, for compaction. */
struct sstr_ref {
	uint32_t *off;
	uint32_t len; /* bytes held; 0: a NUL-terminated string */
};

/*
 * Keeps in the arena only what refs[0..n-1] hold (offsets updated; holders
 * of one offset share the copy), so that the strings of side-band events
 * replayed and of tasks forgotten go. Offsets held elsewhere are stale
 * afterwards. Returns 0 or -ENOMEM (nothing changed).
 */
EVPROF_HIDDEN int evprof__sstore_strs_compact(struct sess_store *st,
					      const struct sstr_ref *refs,
					      size_t n);

static inline const char *evprof__sstore_strp(const struct sess_store *st,
					      uint32_t off)
{
	return st->strs.a + off;
}

/*
 * Finds or stores the chain ips[nr] (which must not lie in the arena);
 * *off receives its word offset. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__sstore_chain(struct sess_store *st,
				       const uint64_t *ips, uint64_t nr,
				       uint32_t *off);

/*
 * Keeps in the arena only the chains *refs[0..n-1] name (offsets updated:
 * every offset of a chain kept changes), so the arena holds what is still
 * referenced after a partial build dropped its samples. Offsets held
 * elsewhere are stale afterwards. Returns 0 or -ENOMEM (nothing changed).
 */
EVPROF_HIDDEN int evprof__sstore_chains_compact(struct sess_store *st,
						uint32_t *const *refs,
						size_t n);

static inline const uint64_t *evprof__sstore_chainp(const struct sess_store *st,
						    uint32_t off)
{
	return st->chains.a + off;
}

/*
 * Room for one more stored sample and its deltas: call before any state
 * changes, so evprof__sstore_sample() cannot fail. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__sstore_sample_reserve(struct sess_store *st);
/*
 * Appends a copy of x (its deltas field set here) with vals[i] packed for
 * every slot bit i of x->has, and widens the sample time range. Returns
 * the stored sample, valid until the next store.
 */
EVPROF_HIDDEN struct ssample *evprof__sstore_sample(struct sess_store *st,
						    const struct ssample *x,
						    const uint64_t *vals);

static inline struct ssample *evprof__sstore_samplep(struct sess_store *st,
						     uint32_t idx)
{
	return st->samples.a + idx;
}

/* Whether x carries a non-zero delta or CPU time. */
EVPROF_HIDDEN bool evprof__sstore_has_values(const struct sess_store *st,
					     const struct ssample *x);

/* Delta of slot of x, or 0 when x has none. */
EVPROF_HIDDEN uint64_t evprof__sstore_delta(const struct sess_store *st,
					    const struct ssample *x,
					    size_t slot);

/*
 * A new side-band event of kind at time, zeroed but for those, not yet
 * part of the store; NULL on -ENOMEM. Store its strings, then commit it.
 */
EVPROF_HIDDEN struct sb_event *
evprof__sstore_sb_new(struct sess_store *st, enum sb_kind kind, uint64_t time);
static inline void evprof__sstore_sb_commit(struct sess_store *st)
{
	st->sb.n++;
}

#endif /* EVPROF_LIB_SESSION_STORE_H */
