// SPDX-License-Identifier: MIT
/* Session deltas: id roles and counter instances (see session_delta.h). */
#include <errno.h>
#include <stdlib.h>

#include "delta.h"

/* The key of per-CPU instances: no task has this tid. */
#define PER_CPU_TID UINT32_MAX

void evprof__delta_free(struct sess_delta *d)
{
	EVPROF_VEC_FREE(&d->ids);
	evprof__hashmap_free(d->by_id);
	EVPROF_VEC_FREE(&d->inst);
	evprof__hashmap_free(d->by_key);
}

static struct delta_id *find_id(const struct sess_delta *d, uint64_t id)
{
	long k;

	if (!d->by_id || !evprof__hashmap_find(d->by_id, (long)id, &k))
		return NULL;
	return &d->ids.a[k];
}

bool evprof__delta_role(const struct sess_delta *d, uint64_t id, int *role)
{
	const struct delta_id *e = find_id(d, id);

	if (e)
		*role = e->role;
	return e;
}

int evprof__delta_set_role(struct sess_delta *d, uint64_t id, int role)
{
	struct delta_id *e = find_id(d, id);

	if (e) {
		e->role = role;
		return 0;
	}
	if (!d->by_id) {
		d->by_id = evprof__hashmap_new(evprof__hashmap_u64_hash,
					       evprof__hashmap_u64_equal, NULL);
		if (!d->by_id)
			return -ENOMEM;
	}
	/* The key holds the index in 32 bits. */
	if (d->ids.n >= UINT32_MAX ||
	    EVPROF_VEC_RESERVE(&d->ids, d->ids.n + 1) ||
	    evprof__hashmap_add(d->by_id, (long)id, (long)d->ids.n))
		return -ENOMEM;
	d->ids.a[d->ids.n++] = (struct delta_id){id, role};
	return 0;
}

static long inst_key(long k, uint32_t tid)
{
	return (long)((uint64_t)k << 32 | tid);
}

static struct delta_hit *hit_slot(struct sess_delta *d, uint64_t id,
				  uint32_t tid)
{
	uint64_t h = (id ^ (uint64_t)tid << 32 ^ tid) * 0x9e3779b97f4a7c15ULL;

	return &d->hits[h >> 58 & (DELTA_HITS - 1)];
}

int evprof__delta_prepare(struct sess_delta *d, uint64_t id, uint32_t tid,
			  struct delta_ref *ref)
{
	/* Every thread continues the CPU's one instance. */
	uint32_t t = d->per_cpu ? PER_CPU_TID : tid;
	struct delta_hit *hit = hit_slot(d, id, t);
	long k, key;

	if (hit->valid && hit->id == id && hit->tid == t) {
		ref->role = d->ids.a[hit->k].role;
		ref->inst = hit->inst;
		return 0;
	}
	ref->inst = -1;
	if (!d->by_id || !evprof__hashmap_find(d->by_id, (long)id, &k))
		return 0;
	ref->role = d->ids.a[k].role;
	key = inst_key(k, t);
	if (!d->by_key) {
		d->by_key = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
		if (!d->by_key)
			return -ENOMEM;
	}
	if (!evprof__hashmap_find(d->by_key, key, &ref->inst)) {
		if (EVPROF_VEC_RESERVE(&d->inst, d->inst.n + 1) ||
		    evprof__hashmap_add(d->by_key, key, (long)d->inst.n))
			return -ENOMEM;
		ref->inst = (long)d->inst.n;
		d->inst.a[d->inst.n++] = (struct delta_inst){0};
	}
	*hit = (struct delta_hit){id, k, ref->inst, t, true};
	return 0;
}

/* A first read carries the whole value, counted since the instance began. */
bool evprof__delta_take(struct sess_delta *d, const struct delta_ref *ref,
			uint64_t raw, uint64_t time, uint64_t *delta)
{
	struct delta_inst *e;

	if (ref->inst < 0)
		return false; /* undeclared */
	e = &d->inst.a[ref->inst];
	if (!e->read || raw >= e->last) {
		*delta = raw - (e->read ? e->last : 0);
	} else if (d->per_cpu) {
		d->reads_rejected++;
		return false;
	} else {
		d->counter_resets++;
		*delta = raw;
	}
	e->read = true;
	e->last = raw;
	e->time = time;
	return true;
}

uint64_t evprof__delta_note(struct sess_delta *d, const struct delta_ref *ref,
			    uint64_t raw, uint64_t time)
{
	struct delta_inst *e;
	uint64_t since;

	if (ref->inst < 0)
		return UINT64_MAX;
	e = &d->inst.a[ref->inst];
	if (d->per_cpu && e->read && raw < e->last)
		return UINT64_MAX;
	since = e->read && raw >= e->last ? raw - e->last : UINT64_MAX;
	e->read = true;
	e->last = raw;
	e->time = time;
	return since;
}

bool evprof__delta_moved(const struct sess_delta *d,
			 const struct delta_ref *ref, uint64_t raw)
{
	const struct delta_inst *e;

	if (ref->inst < 0)
		return false;
	e = &d->inst.a[ref->inst];
	return raw != (e->read ? e->last : 0);
}

/*
 * Only instances last read before the fork restart: reads of the new
 * thread may already have come from another ring.
 */
void evprof__delta_fork(struct sess_delta *d, uint32_t tid, uint64_t time)
{
	if (!d->by_key || d->per_cpu)
		return;
	for (size_t k = 0; k < d->ids.n; k++) {
		struct delta_inst *e;
		long i;

		if (!evprof__hashmap_find(d->by_key, inst_key((long)k, tid),
					  &i))
			continue;
		e = &d->inst.a[i];
		if (e->read && e->time < time) {
			e->last = 0;
			e->time = time;
		}
	}
}
