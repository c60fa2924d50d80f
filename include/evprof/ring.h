/* SPDX-License-Identifier: MIT */
/*
 * Ring buffers: the mmap of a perf event fd, read with the acquire/release
 * protocol the kernel documents for data_head/data_tail. Records that wrap
 * around the end of the buffer are copied out whole; the space of each
 * record goes back to the kernel as soon as the reader asks for the next.
 */
#ifndef EVPROF_RING_H
#define EVPROF_RING_H

#include <stddef.h>
#include <stdint.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_ring;

struct evprof_ring_stats {
	size_t sz;	       /* sizeof(struct evprof_ring_stats) */
	uint64_t records;      /* records handed out */
	uint64_t lost_events;  /* sum of PERF_RECORD_LOST.lost */
	uint64_t lost_records; /* number of PERF_RECORD_LOST records */
	uint64_t lost_samples; /* sum of PERF_RECORD_LOST_SAMPLES.lost */
	uint64_t malformed;    /* records with an impossible size: the ring
				* is resynchronised to head */
};

/*
 * Maps 1 + data_pages pages of fd (data_pages a power of two). Returns the
 * ring or NULL with errno set (EPERM usually means perf_event_mlock_kb).
 */
EVPROF_API struct evprof_ring *evprof_ring__open(int fd, size_t data_pages);

/* Unmaps and frees. Does not close fd. Accepts NULL. */
EVPROF_API void evprof_ring__free(struct evprof_ring *ring);

/*
 * Sends fd's records into ring's buffer (PERF_EVENT_IOC_SET_OUTPUT); both
 * events must be on the same CPU. Returns 0 or -errno.
 */
EVPROF_API int evprof_ring__add_fd(struct evprof_ring *ring, int fd);

/* The fd the ring maps. */
EVPROF_API int evprof_ring__fd(const struct evprof_ring *ring);

/*
 * Hands out the next record: *rec points at its header and *size is
 * header.size. *rec points into the mapping, or, for a record that wraps
 * around the end of the buffer, into a copy the ring owns; either way the
 * bytes stay valid until the next call of evprof_ring__next() or
 * evprof_ring__free() on this ring, and no longer: copy what must live on.
 *
 * Each call first gives the space of the record handed out by the previous
 * call back to the kernel (data_tail), so a reader slower than the sampler
 * frees space record by record instead of only once it finds the ring
 * empty. Returns 1 with a record, 0 when the ring is empty (every record
 * handed out so far is then given back), or a negative error.
 */
EVPROF_API int evprof_ring__next(struct evprof_ring *ring, const void **rec,
				 size_t *size);

/* Bytes written by the kernel and not yet read. */
EVPROF_API uint64_t evprof_ring__pending(const struct evprof_ring *ring);

/*
 * Copies the counters into *st (up to st->sz bytes, set by the caller) and
 * sets st->sz to the bytes filled. Returns 0, or -EINVAL for a NULL
 * argument or an st->sz below sizeof(size_t).
 */
EVPROF_API int evprof_ring__stats(const struct evprof_ring *ring,
				  struct evprof_ring_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_RING_H */
