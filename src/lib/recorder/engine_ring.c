// SPDX-License-Identifier: MIT
/*
 * The ring engine: the user's events in one group per task or per CPU
 * with the hidden members (open.h), every sample and the side-band
 * through a ring per CPU into the session. See engine.h for the ops.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "perf/perf.h"
#include "open.h"

static struct evprof__ring_engine *ring_of(struct evprof__engine *e)
{
	return (struct evprof__ring_engine *)e;
}

static bool ring_available(char *why, size_t len)
{
	snprintf(why, len, "the ring engine is always built");
	return true;
}

/* The BPF engine keeps exits in the kernel: this one needs tracefs. */
static void ring_prepare(struct evprof__engine_setup *s)
{
	evprof__recorder_find_exit(s);
}

/* One group on the PMU, checked before the command starts. */
static int ring_check(struct evprof__engine_setup *s)
{
	return evprof__recorder_validate(s->events, s->nr);
}

static void ring_close(struct evprof__engine *e)
{
	struct evprof__ring_engine *r = ring_of(e);

	evprof_session__free(r->e.session);
	evprof__rings_close(&r->rings);
	for (size_t k = 0; k < r->nr_sets; k++)
		evprof_group_set__free(r->sets[k]);
	free(r->sets);
	evprof__pmu_map_fini(&r->pmu_map);
	free(r);
}

static int ring_open(struct evprof__engine_setup *s,
		     struct evprof__engine **out)
{
	struct evprof__ring_engine *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return -ENOMEM;
	r->e.ops = &evprof__engine_ring;
	r->s = s;
	r->cpu_time_member = r->cut_member = true;
	r->exit_member = s->exit_event;
	err = evprof__recorder_open_target(r);
	if (!err)
		err = evprof__recorder_open_rings(r);
	if (!err)
		err = evprof__recorder_new_session(r);
	if (err) {
		ring_close(&r->e);
		return err;
	}
	*out = &r->e;
	return 0;
}

static size_t ring_fds(const struct evprof__engine *e, int *fds, size_t max)
{
	return evprof__rings_fds(
	    &((const struct evprof__ring_engine *)e)->rings, fds, max);
}

/* Task mode on a command: enable_on_exec; else enabled here. */
static int ring_start(struct evprof__engine *e)
{
	struct evprof__ring_engine *r = ring_of(e);
	int err = 0;

	if (r->s->child >= 0 && !r->s->per_cpu)
		return 0;
	for (size_t k = 0; k < r->nr_sets && !err; k++)
		err = evprof_group_set__enable(r->sets[k]);
	if (err)
		pr_warn("cannot enable the events: %s\n", strerror(-err));
	return err;
}

static int ring_poll(struct evprof__engine *e)
{
	return evprof__rings_feed(&ring_of(e)->rings, e->session);
}

/* Every sample is in the session already. */
static int ring_window(struct evprof__engine *e, uint64_t until)
{
	(void)e;
	(void)until;
	return 0;
}

static int ring_stop(struct evprof__engine *e)
{
	struct evprof__ring_engine *r = ring_of(e);
	int err = 0;

	for (size_t k = 0; k < r->nr_sets; k++) {
		int e2 = evprof_group_set__disable(r->sets[k]);

		if (e2 && !err)
			err = e2;
	}
	return err;
}

static void ring_stats(const struct evprof__engine *e,
		       struct evprof_recorder_stats *st)
{
	evprof__rings_stats(&((const struct evprof__ring_engine *)e)->rings,
			    st);
}

/* Adds group g's scaled counts of the user's generic events into sum[]. */
static void add_group(const struct evprof__ring_engine *r,
		      struct evprof_group *g, uint64_t *sum)
{
	struct evprof_snapshot snap;

	if (evprof_group__read(g, 0, &snap) < 0)
		return;
	for (size_t m = 0; m < evprof_group__nr(g); m++) {
		long e = evprof__recorder_event_of(r, m);
		const struct evprof_counter_value *v;

		if (e < 0 || !evprof_event_spec__is_generic(&r->s->events[e]))
			continue;
		v = evprof_snapshot__find(&snap, evprof_group__id(g, m));
		if (v && v->counted)
			sum[e] += v->scaled;
	}
}

/*
 * On a hybrid machine, notes in p (and through the note callback) what
 * each generic event counted on each core type, read from the groups:
 * "cycles counted on each core type: cpu_core/cycles/ N, cpu_atom/...".
 */
static void ring_notes(struct evprof__engine *eng, struct evprof_profile *p)
{
	struct evprof__ring_engine *r = ring_of(eng);
	/* [event * EVPROF__PMU_MAP_MAX + core PMU] */
	uint64_t sum[(MAX_EVENTS + 1) * EVPROF__PMU_MAP_MAX] = {0};

	if (r->pmu_map.nr < 2)
		return;
	for (size_t k = 0; k < r->nr_sets; k++) {
		for (size_t i = 0; i < evprof_group_set__nr(r->sets[k]); i++) {
			int at = evprof__pmu_map_bind(
			    &r->pmu_map, evprof_group_set__cpu(r->sets[k], i),
			    NULL, 0);
			uint64_t per[MAX_EVENTS + 1] = {0};

			if (at < 0)
				continue;
			add_group(r, evprof_group_set__group(r->sets[k], i),
				  per);
			for (size_t e = 0; e < r->s->nr; e++)
				sum[e * EVPROF__PMU_MAP_MAX + (size_t)at] +=
				    per[e];
		}
	}
	for (size_t e = 0; e < r->s->nr; e++) {
		char buf[512];
		int off;

		if (!evprof_event_spec__is_generic(&r->s->events[e]))
			continue;
		off = snprintf(
		    buf, sizeof(buf),
		    "%s counted on each core type:", r->s->events[e].name);
		for (size_t k = 0;
		     k < r->pmu_map.nr && off > 0 && (size_t)off < sizeof(buf);
		     k++)
			off += snprintf(buf + off, sizeof(buf) - (size_t)off,
					"%s %s/%s/ %" PRIu64, k ? "," : "",
					r->pmu_map.pmus[k].name,
					r->s->events[e].name,
					sum[e * EVPROF__PMU_MAP_MAX + k]);
		if (r->s->notes->fn)
			r->s->notes->fn(buf, r->s->notes->ctx);
		evprof_profile__add_note(p, buf);
	}
}

const struct evprof__engine_ops evprof__engine_ring = {
    .caps =
	{
	    .unwinders = EVPROF__UNWIND_FP | EVPROF__UNWIND_FP_DEFER |
			 EVPROF__UNWIND_DWARF | EVPROF__UNWIND_FP_LEAF,
	    .off_cpu = true,
	    .streams = true,
	    .counter_samples = true,
	    .max_counters = MAX_EVENTS - 1,
	},
    .available = ring_available,
    .prepare = ring_prepare,
    .check = ring_check,
    .open = ring_open,
    .fds = ring_fds,
    .start = ring_start,
    .poll = ring_poll,
    .window = ring_window,
    .stop = ring_stop,
    .notes = ring_notes,
    .stats = ring_stats,
    .close = ring_close,
};
