// SPDX-License-Identifier: MIT
/*
 * Whether a counter's overflows come when they are due. A counter that
 * samples on its own is placed by its overflows: one that raises them
 * late (QEMU's emulated arm64 PMU does for instructions: 3 samples where
 * 58 were due, unless something reads the counter) piles its counts on
 * whatever runs when one finally comes. The trial samples the counter
 * alone on this thread over a spin and counts the samples its ring got
 * against count / period.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>

#include <evprof/event.h>
#include <evprof/ring.h>

#include "pmu.h"

/*
 * Overflows asked for per second: far below the kernel's throttle
 * (kernel.perf_event_max_sample_rate, lowered where interrupts take long,
 * as in an emulator), which would stop the counter after the first few.
 */
#define RATE_HZ	   4000
#define CALIB_NS   500000  /* counting alone first, to find the period */
#define SPIN_NS	   4000000 /* then sampling: 16 overflows due */
#define RING_PAGES 4	   /* 16 KiB: the samples (24 bytes each) fit */
#define SPIN_CHUNK 4096

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static void spin_until(uint64_t end)
{
	volatile uint64_t sink = 0;

	while (now_ns() < end)
		for (int i = 0; i < SPIN_CHUNK; i++)
			sink = sink + (uint64_t)i;
}

static int count_of(struct evprof_group *g, uint64_t *count)
{
	struct evprof_snapshot snap;
	int rc = evprof_group__read(g, 0, &snap);

	*count = rc < 0 ? 0 : snap.values[0].raw;
	return rc < 0 ? rc : 0;
}

int evprof__pmu_overflow_trial(const struct perf_event_attr *from,
			       uint64_t *got, uint64_t *due)
{
	struct perf_event_attr a = {
	    .size = sizeof(a),
	    .type = from->type,
	    .config = from->config,
	    .config1 = from->config1,
	    .config2 = from->config2,
	    .sample_period = UINT64_C(1) << 62, /* counting, for now */
	    .sample_type = PERF_SAMPLE_IP,
	    .disabled = 1,
	    .exclude_kernel = 1,
	    .exclude_hv = 1,
	};
	const struct perf_event_header *h;
	struct evprof_group *g;
	struct evprof_ring *ring;
	uint64_t t0, count = 0, start = 0, period;
	const void *rec;
	size_t size;
	int rc;

	*got = *due = 0;
	g = evprof_group__open(&a, 1, 0, -1, NULL);
	if (!g)
		return -errno;
	ring = evprof_ring__open(evprof_group__fd(g, 0), RING_PAGES);
	if (!ring) {
		rc = -errno;
		goto out;
	}
	t0 = now_ns();
	rc = evprof_group__enable(g);
	spin_until(t0 + CALIB_NS);
	if (!rc)
		rc = count_of(g, &start);
	/* The period that overflows RATE_HZ times a second here. */
	period = start * (1000000000u / RATE_HZ) / (now_ns() - t0 + 1);
	if (rc || period < 2)
		goto done; /* too rare an event to tell in a trial */
	if (ioctl(evprof_group__fd(g, 0), PERF_EVENT_IOC_PERIOD, &period)) {
		rc = -errno;
		goto done;
	}
	/*
	 * No read while it runs: reading the counter is what makes QEMU
	 * raise an instructions overflow that is due.
	 */
	spin_until(now_ns() + SPIN_NS);
	rc = count_of(g, &count);
	*due = (count - start) / period;
done:
	evprof_group__disable(g);
	while (!rc && (rc = evprof_ring__next(ring, &rec, &size)) > 0) {
		h = rec;
		if (h->type == PERF_RECORD_SAMPLE)
			(*got)++;
		rc = 0;
	}
	evprof_ring__free(ring);
out:
	evprof_group__free(g);
	return rc < 0 ? rc : 0;
}
