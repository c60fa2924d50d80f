// SPDX-License-Identifier: MIT
/*
 * Ring buffers of perf events: the control page's data_head/data_tail
 * protocol, records wrapping the end of the data area, lost counts.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <evprof/ring.h>

#include "ring.h"
#include "base/base.h"

struct evprof_ring {
	int fd;	   /* -1 for memory rings */
	void *map; /* NULL for memory rings */
	size_t map_len;
	struct perf_event_mmap_page *pg;
	const unsigned char *data;
	uint64_t size;	     /* power of two */
	uint64_t tail;	     /* end of the last record handed out */
	uint64_t released;   /* data_tail as last stored */
	uint64_t head;	     /* data_head as last loaded */
	unsigned char *copy; /* EVPROF__RING_MAX_RECORD bytes */
	struct evprof_ring_stats stats;
};

/*
 * data_head: the kernel writes a record's bytes, then issues smp_wmb()
 * and stores data_head (perf_output_put_handle). Our acquire load pairs
 * with that barrier: every byte before the head we see is visible once
 * we read it after this load.
 */
static inline uint64_t ring_read_head(const struct perf_event_mmap_page *pg)
{
	return __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
}

/*
 * data_tail: the kernel reads data_tail and then, ordered by a full
 * barrier, overwrites the space before it (perf_output_begin). Our release
 * store makes every read of the records we are giving back complete before
 * the kernel can see the new tail and reuse their space.
 */
static inline void ring_write_tail(struct perf_event_mmap_page *pg,
				   uint64_t tail)
{
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static bool is_pow2(uint64_t v)
{
	return v && !(v & (v - 1));
}

static struct evprof_ring *ring_new(struct perf_event_mmap_page *pg,
				    const unsigned char *data, size_t size)
{
	struct evprof_ring *r;

	if (!is_pow2(size) || size < sizeof(struct perf_event_header)) {
		errno = EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->copy = malloc(EVPROF__RING_MAX_RECORD);
	if (!r->copy) {
		free(r);
		errno = ENOMEM;
		return NULL;
	}
	r->fd = -1;
	r->pg = pg;
	r->data = data;
	r->size = size;
	/* Start where a previous reader of this buffer stopped. */
	r->tail = __atomic_load_n(&pg->data_tail, __ATOMIC_RELAXED);
	r->released = r->tail;
	r->head = r->tail;
	return r;
}

struct evprof_ring *evprof__ring_from_mem(struct perf_event_mmap_page *pg,
					  void *data, size_t data_size)
{
	if (!pg || !data) {
		errno = EINVAL;
		return NULL;
	}
	return ring_new(pg, data, data_size);
}

struct evprof_ring *evprof_ring__open(int fd, size_t data_pages)
{
	long psz = sysconf(_SC_PAGESIZE);
	struct perf_event_mmap_page *pg;
	uint64_t off, size;
	struct evprof_ring *r;
	size_t len;
	void *map;
	int err;

	if (fd < 0 || psz <= 0 || !is_pow2(data_pages) ||
	    data_pages > (SIZE_MAX / (size_t)psz) - 1) {
		errno = EINVAL;
		return NULL;
	}
	len = (1 + data_pages) * (size_t)psz;
	map = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (map == MAP_FAILED) {
		err = errno;
		pr_debug("mmap of %zu bytes on perf fd %d failed: %s\n", len,
			 fd, evprof_strerror(err));
		errno = err;
		return NULL;
	}
	pg = map;
	/* data_offset/data_size exist since Linux 4.1; before, the data
	 * area is simply every page after the first. */
	off = pg->data_offset;
	size = pg->data_size;
	if (size == 0) {
		off = (uint64_t)psz;
		size = (uint64_t)data_pages * (uint64_t)psz;
	}
	if (off > len || size > len - off) {
		munmap(map, len);
		errno = EINVAL;
		return NULL;
	}
	r = ring_new(pg, (const unsigned char *)map + off, size);
	if (!r) {
		err = errno;
		munmap(map, len);
		errno = err;
		return NULL;
	}
	r->fd = fd;
	r->map = map;
	r->map_len = len;
	return r;
}

void evprof_ring__free(struct evprof_ring *ring)
{
	if (!ring)
		return;
	if (ring->map)
		munmap(ring->map, ring->map_len);
	free(ring->copy);
	free(ring);
}

int evprof_ring__add_fd(struct evprof_ring *ring, int fd)
{
	if (!ring || ring->fd < 0)
		return -EINVAL;
	if (ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, ring->fd) < 0)
		return -errno;
	return 0;
}

int evprof_ring__fd(const struct evprof_ring *ring)
{
	return ring ? ring->fd : -1;
}

/* Copies len bytes from ring position pos, wrapping at the end. */
static void ring_copy(const struct evprof_ring *r, uint64_t pos, void *dst,
		      size_t len)
{
	size_t off = (size_t)(pos & (r->size - 1));
	size_t first = len;

	if (first > r->size - off)
		first = (size_t)(r->size - off);
	memcpy(dst, r->data + off, first);
	memcpy((unsigned char *)dst + first, r->data, len - first);
}

static void count_record(struct evprof_ring *r, const unsigned char *rec,
			 size_t size)
{
	struct perf_event_header h;

	memcpy(&h, rec, sizeof(h));
	r->stats.records++;
	/* LOST: header, u64 id, u64 lost. LOST_SAMPLES: header, u64 lost. */
	if (h.type == PERF_RECORD_LOST && size >= sizeof(h) + 16) {
		r->stats.lost_records++;
		r->stats.lost_events += evprof__load_u64(rec + sizeof(h) + 8);
	} else if (h.type == PERF_RECORD_LOST_SAMPLES &&
		   size >= sizeof(h) + 8) {
		r->stats.lost_samples += evprof__load_u64(rec + sizeof(h));
	}
}

/* Gives the kernel back the space of everything before our tail. */
static void ring_release(struct evprof_ring *r)
{
	if (r->released != r->tail) {
		ring_write_tail(r->pg, r->tail);
		r->released = r->tail;
	}
}

int evprof_ring__next(struct evprof_ring *ring, const void **rec, size_t *size)
{
	struct perf_event_header h;
	uint64_t avail;
	size_t off;

	if (!ring || !rec || !size)
		return -EINVAL;
	/*
	 * The caller is done with the record of the previous call: give its
	 * space back now, not once the ring is found empty. A reader slower
	 * than the sampler may never find it empty, and the kernel would see
	 * a full ring and drop samples until it did. One release store per
	 * record, to the cache line the kernel writes data_head to anyway.
	 */
	ring_release(ring);
	for (;;) {
		if (ring->tail == ring->head) {
			ring->head = ring_read_head(ring->pg);
			if (ring->tail == ring->head) {
				/* Records skipped as malformed. */
				ring_release(ring);
				return 0;
			}
		}
		avail = ring->head - ring->tail;
		if (avail > ring->size || avail < sizeof(h)) {
			/* The head ran over our tail, or is not at a record
			 * boundary: nothing in between can be trusted. */
			ring->stats.malformed++;
			ring->tail = ring->head;
			continue;
		}
		ring_copy(ring, ring->tail, &h, sizeof(h));
		/* The kernel writes 8-byte multiples; anything else means
		 * we lost the record boundaries. */
		if (h.size < sizeof(h) || h.size > avail || h.size % 8) {
			ring->stats.malformed++;
			ring->tail = ring->head;
			continue;
		}
		break;
	}
	off = (size_t)(ring->tail & (ring->size - 1));
	if (off + h.size <= ring->size) {
		*rec = ring->data + off;
	} else {
		ring_copy(ring, ring->tail, ring->copy, h.size);
		*rec = ring->copy;
	}
	*size = h.size;
	/* The space stays ours until the next call releases it. */
	ring->tail += h.size;
	count_record(ring, *rec, h.size);
	return 1;
}

uint64_t evprof_ring__pending(const struct evprof_ring *ring)
{
	if (!ring)
		return 0;
	return ring_read_head(ring->pg) - ring->tail;
}

int evprof_ring__stats(const struct evprof_ring *ring,
		       struct evprof_ring_stats *st)
{
	if (!ring)
		return -EINVAL;
	return EVPROF_STATS_COPY(st, &ring->stats);
}
