/* SPDX-License-Identifier: MIT */
/*
 * The engines on the PMU (pmu.c): the group checked against it before
 * anything opens, each CPU's core PMU on a hybrid machine.
 */
#ifndef EVPROF_LIB_RECORDER_PMU_H
#define EVPROF_LIB_RECORDER_PMU_H

#include <sys/types.h>

#include <evprof/event.h>

#include "events/events.h"
#include "base/base.h"

/*
 * Checks the group of events (nr, [0] the sampler) against the PMU before
 * anything opens, as stat does (evprof_group__validate()). Returns 0 or
 * -EVPROF_ERR_GROUP_TOO_BIG after its message, or -errno.
 */
EVPROF_HIDDEN int
evprof__recorder_validate(const struct evprof_event_spec *events, size_t nr);
/* Learns which core PMU owns each CPU. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__recorder_map_pmus(struct evprof__pmu_map *map);
/*
 * Opens the group attrs on (pid, every online CPU), on a hybrid machine
 * each CPU's generic events bound to the CPU's core PMU in map. As
 * evprof_group_set__open().
 */
EVPROF_HIDDEN struct evprof_group_set *
evprof__recorder_open_set(struct evprof__pmu_map *map,
			  const struct perf_event_attr *attrs, size_t nr,
			  pid_t pid, const struct evprof_group_set_opts *o);

#endif /* EVPROF_LIB_RECORDER_PMU_H */
