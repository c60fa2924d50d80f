/* SPDX-License-Identifier: MIT */
/*
 * Session deltas: what each kernel event id means (its role) and the last
 * value of every counter instance, turning the cumulative values samples
 * read into deltas. Beside the storage at the bottom of the session layers;
 * it knows nothing of samples.
 *
 * Task mode (inherit): key (id, tid), one instance per thread, starting at
 * 0. A value below the instance's last one means the tid now names a new
 * thread whose FORK was not seen (lost, or in a ring not read yet): a new
 * instance, counted in counter_resets. Per-CPU mode: key id, one instance
 * per CPU that never restarts, so a value below the last one is a record
 * out of ring order or a corrupt one: it is rejected (no delta, the last
 * value stays) and counted in reads_rejected. Either way, per key the
 * deltas taken sum to the instances' last values.
 */
#ifndef EVPROF_LIB_SESSION_DELTA_H
#define EVPROF_LIB_SESSION_DELTA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct delta_id {
	uint64_t id;
	int role;
};

/* The counter instance of one thread (or CPU) on one kernel id. */
struct delta_inst {
	uint64_t last; /* raw value at the latest read */
	uint64_t time; /* of that read, or of the FORK that reset it */
	bool read;     /* read at least once */
};

/*
 * A recent (id, tid) -> (index in ids, instance): most samples come from a
 * few threads reading a few ids.
 */
struct delta_hit {
	uint64_t id;
	long k, inst;
	uint32_t tid;
	bool valid;
};

#define DELTA_HITS 64 /* a power of two */

struct sess_delta {
	bool per_cpu;
	struct delta_hit hits[DELTA_HITS];
	EVPROF_VEC(struct delta_id) ids;
	struct evprof_hashmap *by_id; /* kernel id -> index in ids */
	EVPROF_VEC(struct delta_inst) inst;
	/* index in ids << 32 | tid -> index in inst */
	struct evprof_hashmap *by_key;
	uint64_t counter_resets, reads_rejected;
};

EVPROF_HIDDEN void evprof__delta_free(struct sess_delta *d);

/* Sets (or changes) id's role. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__delta_set_role(struct sess_delta *d, uint64_t id,
					 int role);
/* True when id was declared; then *role is its role. */
EVPROF_HIDDEN bool evprof__delta_role(const struct sess_delta *d, uint64_t id,
				      int *role);

/* A read prepared: its id's role and the instance it goes to. */
struct delta_ref {
	int role;
	long inst; /* index in inst; -1: an undeclared id */
};

/*
 * Makes the instance a read of id by thread tid goes to, so that taking
 * its delta cannot fail, and sets *ref (inst -1 for an undeclared id);
 * the ref stays valid for the session's life. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__delta_prepare(struct sess_delta *d, uint64_t id,
					uint32_t tid, struct delta_ref *ref);
/*
 * The delta of value raw of a prepared read at time. Returns false when
 * the read is rejected (per-CPU mode, below the last value).
 */
EVPROF_HIDDEN bool evprof__delta_take(struct sess_delta *d,
				      const struct delta_ref *ref, uint64_t raw,
				      uint64_t time, uint64_t *delta);
/*
 * Keeps raw, of a prepared read at time, as its instance's last value when
 * no delta of it is taken (the cut members'), for evprof__delta_moved();
 * per CPU, only a value not below the last one. Returns what it counted
 * since that last value, UINT64_MAX when not known (no last value, or
 * raw below it).
 */
EVPROF_HIDDEN uint64_t evprof__delta_note(struct sess_delta *d,
					  const struct delta_ref *ref,
					  uint64_t raw, uint64_t time);
/*
 * True when raw, the value of a prepared read, differs from its instance's
 * last value (from 0 when it has none): its event counted since.
 */
EVPROF_HIDDEN bool evprof__delta_moved(const struct sess_delta *d,
				       const struct delta_ref *ref,
				       uint64_t raw);
/*
 * A FORK at time makes tid a new thread (task mode): its instances last
 * read before then start again at 0.
 */
EVPROF_HIDDEN void evprof__delta_fork(struct sess_delta *d, uint32_t tid,
				      uint64_t time);

#endif /* EVPROF_LIB_SESSION_DELTA_H */
