/* SPDX-License-Identifier: MIT */
/*
 * The ring engine (engine_ring.c): every sample of the user's group, its
 * hidden members and the side-band through a ring per CPU. Opening it is
 * open.c's: attributes with the hidden members, the fallback ladder,
 * groups per task or per CPU, rings, the session's ids; pmu.c checks the
 * group against the PMU and binds it on a hybrid machine.
 */
#ifndef EVPROF_LIB_RECORDER_OPEN_H
#define EVPROF_LIB_RECORDER_OPEN_H

#include <stdbool.h>
#include <stdint.h>

#include <evprof/event.h>
#include <evprof/session.h>

#include "events/events.h"
#include "base/base.h"
#include "engine.h"
#include "pmu.h"
#include "rings.h"

/* Members that are not one of the user's events (event_of()). */
#define MEMBER_CLOCK (-1)
#define MEMBER_CUT   (-2)
#define MEMBER_EXIT  (-3)

struct evprof__ring_engine {
	struct evprof__engine e;	/* first: what the recorder holds */
	struct evprof__engine_setup *s; /* the recorder's */
	bool cpu_time_member;		/* the hidden task/cpu-clock */
	bool cut_member;		/* the hidden context-switches cut */
	bool exit_member; /* the hidden sched_process_exit cut, last */
	/* The sampler's precise_ip is ours to lower (none was asked). */
	bool auto_precise;
	size_t nr_members;		/* of the group build_attrs() makes */
	struct evprof_group_set **sets; /* one, or one per attached thread */
	size_t nr_sets;
	struct evprof__rings rings; /* on the leaders of sets[0] */
	/* Hybrid machines: each CPU's core PMU (pmu.c). */
	struct evprof__pmu_map pmu_map;
};

/*
 * Resolves the hidden sched_process_exit member into s (mounting tracefs
 * when it is not and we may). Notes why not when it cannot be used.
 */
EVPROF_HIDDEN void evprof__recorder_find_exit(struct evprof__engine_setup *s);

/*
 * Opens the groups on the target (per CPU, on the command, or on every
 * thread of the attached processes), walking the fallback ladder. Returns
 * 0 or -errno after a message.
 */
EVPROF_HIDDEN int evprof__recorder_open_target(struct evprof__ring_engine *r);

/*
 * Fills attrs with the group to open (nr_members of them): the sampler,
 * the hidden clock, the extras, the hidden cut and exit members. Returns
 * how many.
 */
EVPROF_HIDDEN size_t evprof__recorder_build_attrs(
    struct evprof__ring_engine *r, struct perf_event_attr *attrs);
/*
 * Which of the events member m of the group stands for: an index in
 * r->s->events, or MEMBER_CLOCK, MEMBER_CUT, MEMBER_EXIT.
 */
EVPROF_HIDDEN long
evprof__recorder_event_of(const struct evprof__ring_engine *r, size_t m);

/* Maps one ring per CPU and sends every sampling member there. */
EVPROF_HIDDEN int evprof__recorder_open_rings(struct evprof__ring_engine *r);

/* Creates the session and declares the role of every member's id. */
EVPROF_HIDDEN int evprof__recorder_new_session(struct evprof__ring_engine *r);

#endif /* EVPROF_LIB_RECORDER_OPEN_H */
