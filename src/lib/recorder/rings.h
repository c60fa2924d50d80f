/* SPDX-License-Identifier: MIT */
/*
 * One ring per CPU on the leaders of a group set, read into a session:
 * what both engines map (the ring engine its samples and side-band, the
 * BPF engine its side-band only).
 */
#ifndef EVPROF_LIB_RECORDER_RINGS_H
#define EVPROF_LIB_RECORDER_RINGS_H

#include <evprof/ring.h>

#include "perf/perf.h"
#include "engine.h"

struct evprof__rings {
	struct evprof_ring **v; /* one per CPU of the set */
	size_t n;
	const struct evprof_group_set *set; /* whose leaders they map */
};

/*
 * Maps a ring of s->ring_pages on each leader of set; without a size asked
 * for, the default falls back to RING_PAGES_SMALL (s->ring_pages lowered,
 * a note) where the locked-memory limit refuses it. Returns 0 or -errno
 * after a message; what was mapped stays for evprof__rings_close().
 */
EVPROF_HIDDEN int evprof__rings_map(struct evprof__rings *rs,
				    const struct evprof_group_set *set,
				    struct evprof__engine_setup *s);
/* The ring of cpu, NULL if none (a CPU came online). */
EVPROF_HIDDEN struct evprof_ring *
evprof__rings_of_cpu(const struct evprof__rings *rs, int cpu);
/* Feeds every record come into session; returns how many. */
EVPROF_HIDDEN int evprof__rings_feed(struct evprof__rings *rs,
				     struct evprof_session *session);
/* Their fds into fds[max]; returns how many rings there are. */
EVPROF_HIDDEN size_t evprof__rings_fds(const struct evprof__rings *rs, int *fds,
				       size_t max);
/* Adds their losses and skips to st. */
EVPROF_HIDDEN void evprof__rings_stats(const struct evprof__rings *rs,
				       struct evprof_recorder_stats *st);
EVPROF_HIDDEN void evprof__rings_close(struct evprof__rings *rs);

#endif /* EVPROF_LIB_RECORDER_RINGS_H */
