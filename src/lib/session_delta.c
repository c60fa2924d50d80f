// SPDX-License-Identifier: MIT
/* Session deltas: id roles and counter instances (see session_delta.h). */
#include <errno.h>
#include <stdlib.h>

#include "session_delta.h"

struct role_ent {
	uint64_t id;
	int role;
	bool used;
};

/* The counter instance of one thread on one kernel id. */
struct last_ent {
	uint64_t id;
	uint64_t last; /* raw value at the latest read */
	uint64_t time; /* of that read, or of the FORK that reset it */
	uint32_t tid;
	bool used;
};

/* The key of per-CPU instances: no task has this tid. */
#define PER_CPU_TID UINT32_MAX

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

void evprof__delta_free(struct sess_delta *d)
{
	free(d->roles);
	free(d->ids);
	free(d->last);
}

/* ---- roles -------------------------------------------------------------- */

static struct role_ent *role_find(const struct sess_delta *d, uint64_t id)
{
	size_t mask = d->roles_cap - 1;

	if (!d->roles_cap)
		return NULL;
	for (size_t i = mix64(id) & mask;; i = (i + 1) & mask) {
		if (!d->roles[i].used)
			return NULL;
		if (d->roles[i].id == id)
			return &d->roles[i];
	}
}

static void role_put(struct role_ent *tab, size_t cap, uint64_t id, int role)
{
	size_t mask = cap - 1, i;

	for (i = mix64(id) & mask; tab[i].used; i = (i + 1) & mask)
		;
	tab[i] = (struct role_ent){.id = id, .role = role, .used = true};
}

bool evprof__delta_role(const struct sess_delta *d, uint64_t id, int *role)
{
	const struct role_ent *e = role_find(d, id);

	if (e)
		*role = e->role;
	return e;
}

int evprof__delta_set_role(struct sess_delta *d, uint64_t id, int role)
{
	struct role_ent *e = role_find(d, id);
	uint64_t *ids;

	if (e) {
		e->role = role;
		return 0;
	}
	if ((d->nr_roles + 1) * 2 > d->roles_cap) {
		size_t cap = d->roles_cap ? d->roles_cap * 2 : 16;
		struct role_ent *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (size_t i = 0; i < d->roles_cap; i++)
			if (d->roles[i].used)
				role_put(tab, cap, d->roles[i].id,
					 d->roles[i].role);
		free(d->roles);
		d->roles = tab;
		d->roles_cap = cap;
	}
	ids = realloc(d->ids, (d->nr_roles + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	d->ids = ids;
	d->ids[d->nr_roles++] = id;
	role_put(d->roles, d->roles_cap, id, role);
	return 0;
}

/* ---- instances ---------------------------------------------------------- */

static size_t last_slot(const struct last_ent *tab, size_t cap, uint64_t id,
			uint32_t tid)
{
	size_t mask = cap - 1;
	size_t i = mix64(id * 0x9e3779b97f4a7c15ULL ^ tid) & mask;

	while (tab[i].used && (tab[i].id != id || tab[i].tid != tid))
		i = (i + 1) & mask;
	return i;
}

/* At most half full, so probes stay short. */
int evprof__delta_reserve(struct sess_delta *d, size_t n)
{
	struct last_ent *tab;
	size_t cap;

	if ((d->nr_last + n) * 2 <= d->last_cap)
		return 0;
	cap = d->last_cap ? d->last_cap : 64;
	while ((d->nr_last + n) * 2 > cap)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < d->last_cap; i++) {
		if (d->last[i].used)
			tab[last_slot(tab, cap, d->last[i].id,
				      d->last[i].tid)] = d->last[i];
	}
	free(d->last);
	d->last = tab;
	d->last_cap = cap;
	return 0;
}

/* A first read carries the whole value, counted since the instance began. */
bool evprof__delta_take(struct sess_delta *d, uint64_t id, uint32_t tid,
			uint64_t raw, uint64_t time, uint64_t *delta)
{
	struct last_ent *e;

	if (d->per_cpu)
		tid = PER_CPU_TID; /* every thread continues the CPU's one */
	e = &d->last[last_slot(d->last, d->last_cap, id, tid)];
	if (!e->used) {
		*e = (struct last_ent){.id = id, .tid = tid, .used = true};
		d->nr_last++;
		*delta = raw;
	} else if (raw >= e->last) {
		*delta = raw - e->last;
	} else if (d->per_cpu) {
		d->reads_rejected++;
		return false;
	} else {
		d->counter_resets++;
		*delta = raw;
	}
	e->last = raw;
	e->time = time;
	return true;
}

/*
 * Only instances last read before the fork restart: reads of the new
 * thread may already have come from another ring.
 */
void evprof__delta_fork(struct sess_delta *d, uint32_t tid, uint64_t time)
{
	if (!d->last_cap || d->per_cpu)
		return;
	for (size_t k = 0; k < d->nr_roles; k++) {
		size_t i = last_slot(d->last, d->last_cap, d->ids[k], tid);

		if (d->last[i].used && d->last[i].time < time) {
			d->last[i].last = 0;
			d->last[i].time = time;
		}
	}
}
