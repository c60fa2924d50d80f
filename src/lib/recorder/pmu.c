// SPDX-License-Identifier: MIT
/*
 * The recorder on the PMU: the group is checked against it before anything
 * opens (evprof_group__validate(), as stat does), and on a hybrid machine
 * each CPU's group is bound to the core PMU that owns the CPU, per thread
 * (task mode: every CPU's inherited group of a thread is one of its core
 * type's groups) and per CPU alike. Each group samples at -F on its own;
 * its members keep their places, so the session gives a logical event's
 * ids on every core type the same counter and the profile holds their
 * sum. The per-PMU split is read from the groups at the end, as perf's
 * cpu_core/cycles/ lines.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "perf/perf.h"
#include "open.h"

int evprof__recorder_validate(struct evprof_recorder *r)
{
	int n = evprof_group__validate(r->events, r->nr);

	return n < 0 ? n : 0;
}

int evprof__recorder_map_pmus(struct evprof_recorder *r)
{
	int err = evprof__pmu_map_init(&r->pmu_map);

	if (err)
		pr_warn("cannot map the core PMUs: %s\n", strerror(-err));
	return err;
}

/* evprof__cpu_attrs_fn: the group on cpu counts on that CPU's core PMU. */
static void bind_cpu(void *ctx, int cpu, struct perf_event_attr *attrs,
		     size_t nr)
{
	const struct evprof_recorder *r = ctx;

	evprof__pmu_map_bind(&r->pmu_map, cpu, attrs, nr);
}

struct evprof_group_set *
evprof__recorder_open_set(struct evprof_recorder *r,
			  const struct perf_event_attr *attrs, size_t nr,
			  pid_t pid, const struct evprof_group_set_opts *o)
{
	return evprof__group_set_open(attrs, nr, pid, o,
				      r->pmu_map.nr > 1 ? bind_cpu : NULL, r);
}

/* Adds group g's scaled counts of the user's generic events into sum[]. */
static void add_group(const struct evprof_recorder *r, struct evprof_group *g,
		      uint64_t *sum)
{
	struct evprof_snapshot snap;

	if (evprof_group__read(g, 0, &snap) < 0)
		return;
	for (size_t m = 0; m < evprof_group__nr(g); m++) {
		long e = evprof__recorder_event_of(r, m);
		const struct evprof_counter_value *v;

		if (e < 0 || !evprof_event_spec__is_generic(&r->events[e]))
			continue;
		v = evprof_snapshot__find(&snap, evprof_group__id(g, m));
		if (v && v->counted)
			sum[e] += v->scaled;
	}
}

void evprof__recorder_note_pmus(struct evprof_recorder *r,
				struct evprof_profile *p)
{
	/* [event * EVPROF__PMU_MAP_MAX + core PMU] */
	uint64_t sum[(MAX_EVENTS + 1) * EVPROF__PMU_MAP_MAX] = {0};

	if (r->pmu_map.nr < 2 || r->bpf)
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
			for (size_t e = 0; e < r->nr; e++)
				sum[e * EVPROF__PMU_MAP_MAX + (size_t)at] +=
				    per[e];
		}
	}
	for (size_t e = 0; e < r->nr; e++) {
		char buf[512];
		int off;

		if (!evprof_event_spec__is_generic(&r->events[e]))
			continue;
		off = snprintf(
		    buf, sizeof(buf),
		    "%s counted on each core type:", r->events[e].name);
		for (size_t k = 0;
		     k < r->pmu_map.nr && off > 0 && (size_t)off < sizeof(buf);
		     k++)
			off +=
			    snprintf(buf + off, sizeof(buf) - (size_t)off,
				     "%s %s/%s/ %" PRIu64, k ? "," : "",
				     r->pmu_map.pmus[k].name, r->events[e].name,
				     sum[e * EVPROF__PMU_MAP_MAX + k]);
		if (r->note_fn)
			r->note_fn(buf, r->note_ctx);
		evprof_profile__add_note(p, buf);
	}
}
