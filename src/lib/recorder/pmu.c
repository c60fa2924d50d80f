// SPDX-License-Identifier: MIT
/*
 * The recorder on the PMU: the group is checked against it before anything
 * opens (evprof_group__validate(), as stat does), and on a hybrid machine
 * each CPU's group is bound to the core PMU that owns the CPU, per thread
 * (task mode: every CPU's inherited group of a thread is one of its core
 * type's groups) and per CPU alike. Each group samples at -F on its own;
 * its members keep their places, so the session gives a logical event's
 * ids on every core type the same counter and the profile holds their
 * sum. The per-PMU split is read from the groups at the end
 * (engine_ring.c), as perf's cpu_core/cycles/ lines.
 */
#include <errno.h>
#include <string.h>

#include "perf/perf.h"
#include "pmu.h"

int evprof__recorder_validate(const struct evprof_event_spec *events, size_t nr)
{
	int n = evprof_group__validate(events, nr);

	return n < 0 ? n : 0;
}

int evprof__recorder_map_pmus(struct evprof__pmu_map *map)
{
	int err = evprof__pmu_map_init(map);

	if (err)
		pr_warn("cannot map the core PMUs: %s\n", strerror(-err));
	return err;
}

/* evprof__cpu_attrs_fn: the group on cpu counts on that CPU's core PMU. */
static void bind_cpu(void *ctx, int cpu, struct perf_event_attr *attrs,
		     size_t nr)
{
	evprof__pmu_map_bind(ctx, cpu, attrs, nr);
}

struct evprof_group_set *
evprof__recorder_open_set(struct evprof__pmu_map *map,
			  const struct perf_event_attr *attrs, size_t nr,
			  pid_t pid, const struct evprof_group_set_opts *o)
{
	return evprof__group_set_open(attrs, nr, pid, o,
				      map->nr > 1 ? bind_cpu : NULL, map);
}
