// SPDX-License-Identifier: MIT
/*
 * The core PMU of each CPU on a hybrid machine: a generic event opened on
 * a CPU counts only when it carries the type of the PMU that owns the CPU
 * (the kernel refuses another core type's PMU there with ENOENT,
 * x86_pmu_event_init(), Linux 5.13), so a recording binds each CPU's
 * group to that PMU, as perf does.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "pmu.h"

void evprof__pmu_map_fini(struct evprof__pmu_map *m)
{
	for (size_t k = 0; k < EVPROF__PMU_MAP_MAX; k++) {
		free(m->cpus[k]);
		m->cpus[k] = NULL;
		m->ncpus[k] = 0;
	}
	m->nr = 0;
}

int evprof__pmu_map_init(struct evprof__pmu_map *m)
{
	struct evprof_core_pmu pmus[EVPROF__PMU_MAP_MAX];
	int n = evprof_core_pmus(pmus, EVPROF__PMU_MAP_MAX);

	memset(m, 0, sizeof(*m));
	if (n < 2) /* one core PMU (or none): generic events need no type */
		return 0;
	if (n > EVPROF__PMU_MAP_MAX)
		n = EVPROF__PMU_MAP_MAX;
	for (int i = 0; i < n; i++) {
		int c = evprof_core_pmu__cpus(&pmus[i], NULL, 0), got;
		int *cpus;

		if (c <= 0)
			continue;
		cpus = calloc((size_t)c, sizeof(*cpus));
		if (!cpus) {
			evprof__pmu_map_fini(m);
			return -ENOMEM;
		}
		/* A list grown between the two reads is cut to the first. */
		got = evprof_core_pmu__cpus(&pmus[i], cpus, c);
		if (got <= 0) {
			free(cpus);
			continue;
		}
		m->pmus[m->nr] = pmus[i];
		m->cpus[m->nr] = cpus;
		m->ncpus[m->nr] = got < c ? got : c;
		m->nr++;
	}
	return 0;
}

static int pmu_of_cpu(const struct evprof__pmu_map *m, int cpu)
{
	for (size_t k = 0; k < m->nr; k++)
		for (int i = 0; i < m->ncpus[k]; i++)
			if (m->cpus[k][i] == cpu)
				return (int)k;
	return -1;
}

int evprof__pmu_map_bind(const struct evprof__pmu_map *m, int cpu,
			 struct perf_event_attr *attrs, size_t nr)
{
	int k = m->nr > 1 ? pmu_of_cpu(m, cpu) : -1;

	if (k < 0)
		return -1;
	for (size_t i = 0; i < nr; i++) {
		struct perf_event_attr *a = &attrs[i];

		/* PERF_PMU_TYPE_SHIFT, include/uapi/linux/perf_event.h. */
		if ((a->type == PERF_TYPE_HARDWARE ||
		     a->type == PERF_TYPE_HW_CACHE) &&
		    !(a->config >> 32))
			a->config |= (uint64_t)m->pmus[k].type << 32;
	}
	return k;
}
