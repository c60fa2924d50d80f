/* SPDX-License-Identifier: MIT */
/*
 * Group reads: one snapshot type for read(2) buffers and for the
 * PERF_SAMPLE_READ part of samples (the kernel uses the same layout for
 * both, and for PERF_RECORD_READ).
 *
 * With PERF_FORMAT_GROUP the kernel lists the group leader first whichever
 * member's fd was read, so a member's own value must be looked up by its
 * kernel id (PERF_EVENT_IOC_ID), never by position.
 */
#ifndef EVPROF_READ_H
#define EVPROF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Most members a snapshot holds; larger groups are rejected at parse. */
#define EVPROF_SNAPSHOT_MAX 64

struct evprof_counter_value {
	uint64_t id;	 /* kernel id; 0 when PERF_FORMAT_ID was not set */
	uint64_t raw;	 /* the count as the kernel gave it */
	uint64_t scaled; /* raw * enabled / running; raw without times */
	uint64_t lost;	 /* lost samples; 0 without PERF_FORMAT_LOST */
	bool counted;	 /* false when time_running was 0 */
};

struct evprof_snapshot {
	uint64_t read_format;  /* the layout these values were parsed with */
	uint64_t time_enabled; /* 0 without TOTAL_TIME_ENABLED */
	uint64_t time_running; /* 0 without TOTAL_TIME_RUNNING */
	uint32_t nr;	       /* members present, leader first */
	struct evprof_counter_value values[EVPROF_SNAPSHOT_MAX];
};

/*
 * Size in bytes of a read with read_format covering nr members (nr is
 * ignored without PERF_FORMAT_GROUP).
 */
EVPROF_API size_t evprof_read_size(uint64_t read_format, uint32_t nr);

/*
 * Parses len bytes laid out per read_format into *snap and fills each
 * member's scaled value. Returns the number of bytes consumed, or
 * -EVPROF_ERR_TRUNCATED when buf is shorter than the layout,
 * -EVPROF_ERR_MALFORMED for a group with nr == 0 or unknown format bits,
 * -E2BIG when nr exceeds EVPROF_SNAPSHOT_MAX. buf needs no alignment.
 * Only values[0..nr) are written (the rest keep what they held); on an
 * error nr is 0.
 */
EVPROF_API int evprof_snapshot__parse(struct evprof_snapshot *snap,
				      const void *buf, size_t len,
				      uint64_t read_format);

/*
 * Returns the entry whose kernel id is id, or NULL when absent. The pointer
 * lives as long as snap.
 */
EVPROF_API const struct evprof_counter_value *
evprof_snapshot__find(const struct evprof_snapshot *snap, uint64_t id);

/*
 * Stores in *value the scaled value of the member with kernel id id.
 * Returns 0, -ENOENT when no member has that id, or -EVPROF_ERR_NOT_COUNTED
 * when the group never ran (the value is then unknown, not zero).
 */
EVPROF_API int evprof_snapshot__value(const struct evprof_snapshot *snap,
				      uint64_t id, uint64_t *value);

/*
 * Scales raw by enabled / running with a 128-bit intermediate, saturating
 * at UINT64_MAX. Returns 0, or -EVPROF_ERR_NOT_COUNTED when running == 0
 * (*out is then 0). running >= enabled returns raw unchanged.
 */
EVPROF_API int evprof_scale(uint64_t raw, uint64_t enabled, uint64_t running,
			    uint64_t *out);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_READ_H */
