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

/* One stored sample; 48 bytes. */
struct ssample {
	uint64_t time;
	uint64_t cpu_delta; /* ns, valid with SS_HAS_CPU */
	uint64_t has;	    /* bit i: slot i has a delta */
	uint32_t pid, tid;
	uint32_t chain;	 /* word offset of [nr, ips...] in the chain arena */
	uint32_t deltas; /* first of popcount(has) packed deltas */
	uint32_t flags;
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

struct evprof_session {
	struct evprof_record_fmt fmt;
	char **counters;
	size_t nr_counters;
	char *sampler_counter;
	size_t nr_slots; /* nr_counters, +1 with a sampler_counter */
	pid_t *pids;
	size_t nr_pids;
	bool exclude_idle;

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

	uint64_t idle; /* samples of pid 0 dropped by exclude_idle */
	bool built;    /* stats and SS_KEPT come from the last build */
	struct evprof_session_stats st;
};

/* Adds len bytes to the string arena; *off receives their offset. */
EVPROF_HIDDEN int evprof__session_str(struct evprof_session *s, const void *p,
				      size_t len, uint32_t *off);

static inline const char *sess_str(const struct evprof_session *s, uint32_t off)
{
	return (const char *)s->strs.data + off;
}

#endif /* EVPROF_LIB_SESSION_INTERNAL_H */
