/* SPDX-License-Identifier: MIT */
/*
 * Private header of profile_timeline.c: the store adds rows, profile.c
 * opens and frees the spill file.
 */
#ifndef EVPROF_LIB_PROFILE_TIMELINE_H
#define EVPROF_LIB_PROFILE_TIMELINE_H

#include <stdint.h>
#include <stdio.h>

#include "model.h"

/* Appends a timeline row (row_words long) to thread thr. */
EVPROF_HIDDEN int evprof__timeline_add(struct evprof_profile *p, int thr,
				       const uint64_t *row);
/* Opens the spill file in dir. Returns 0 or -errno. */
EVPROF_HIDDEN int evprof__timeline_spill_open(struct evprof_profile *p,
					      const char *dir);
/*
 * A scratch stream for a writer, gone when closed: its first mem bytes in
 * memory, the rest in a file beside the spill file when the timeline
 * spills (memory stays flat), else in memory as the rows are. Written from
 * the start, then rewound and read (a C library's cookie stream may report
 * a stale position after a seek back and a write). NULL with errno set.
 */
EVPROF_HIDDEN FILE *evprof__timeline_scratch(const struct evprof_profile *p,
					     size_t mem);
EVPROF_HIDDEN void evprof__timeline_free(struct evprof_profile *p);

#endif /* EVPROF_LIB_PROFILE_TIMELINE_H */
