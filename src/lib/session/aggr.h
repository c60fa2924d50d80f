/* SPDX-License-Identifier: MIT */
/*
 * Aggregates fed to a session by producers that sum in the kernel (the
 * BPF engine): one stored sample flagged SS_AGGR per (thread, stack) with
 * its sample count, CPU time and counter sums. The build replays it like
 * a sample (so its stack sees the maps and process tree of its time) and
 * adds it to the profile with evprof_profile__add_aggregate(). Above the
 * storage; the count rides in the word after the sample's packed deltas.
 */
#ifndef EVPROF_LIB_SESSION_AGGR_H
#define EVPROF_LIB_SESSION_AGGR_H

#include <stdbool.h>
#include <stdint.h>

#include <evprof/session.h>

#include "store.h"

struct evprof_session_aggr {
	uint64_t time; /* CLOCK_MONOTONIC: the maps its stack is read with */
	uint32_t pid, tid;
	/* perf callchain words (PERF_CONTEXT_* markers), leaf first */
	const uint64_t *ips;
	uint64_t nr;
	uint64_t samples;
	uint64_t cpu_ns;
	/* bit i: counters[i] is counter i's sum (i = nr_counters: the
	 * sampler_counter's) */
	uint64_t has;
	const uint64_t *counters; /* indexed by counter */
	/*
	 * The cgroup (v2 id) its thread ran in at time, 0: none known. Only
	 * a change from the id fed before for the thread is kept, so give it
	 * in time order: on the thread's latest aggregate of each batch.
	 */
	uint64_t cgroup;
	/*
	 * What the thread counted after its last sample: stored on the
	 * "[unsampled]" frame under the thread (ips ignored), no samples.
	 */
	bool unsampled;
};

/*
 * Stores a into session s (created with its counters). Returns 0, -EINVAL
 * (a bit for a counter the session does not have) or -ENOMEM.
 */
EVPROF_HIDDEN int
evprof__session_aggregate(struct evprof_session *s,
			  const struct evprof_session_aggr *a);

/* The sample count of SS_AGGR sample x. */
static inline uint64_t evprof__sstore_aggr_samples(const struct sess_store *st,
						   const struct ssample *x)
{
	return st->deltas.a[x->deltas + __builtin_popcountll(x->has)];
}

#endif /* EVPROF_LIB_SESSION_AGGR_H */
