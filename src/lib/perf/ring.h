/* SPDX-License-Identifier: MIT */
/* Private side of the ring module: rings over plain memory, for tests. */
#ifndef EVPROF_LIB_RING_H
#define EVPROF_LIB_RING_H

#include <stddef.h>
#include <linux/perf_event.h>

#include <evprof/ring.h>

#include "base/base.h"

/*
 * Largest record: header.size is a u16. A record that wraps around the
 * end of the data area is copied into a buffer of this size.
 */
#define EVPROF__RING_MAX_RECORD 65536

/*
 * A ring over memory the caller owns: pg plays the control page (only
 * data_head and data_tail are used) and data the data area of data_size
 * bytes (a power of two, at least 8). The ring reads and writes them
 * exactly as it does a kernel mapping; evprof_ring__free() frees the
 * ring but not the memory. Returns NULL + errno (EINVAL for a bad size).
 */
EVPROF_HIDDEN struct evprof_ring *
evprof__ring_from_mem(struct perf_event_mmap_page *pg, void *data,
		      size_t data_size);

#endif /* EVPROF_LIB_RING_H */
