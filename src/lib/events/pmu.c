// SPDX-License-Identifier: MIT
/* PMU type names, which PMUs are the CPU's own, and on which CPUs. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/event.h>
#include <evprof/pmu.h>

#include "host.h"
#include "pmu.h"

/* Names cached for types sysfs does not know; a bound against garbage. */
#define MAX_UNNAMED 1024

bool evprof__pmu_is_cpu(const char *name)
{
	/*
	 * Core PMUs: x86 "cpu" (hybrid: "cpu_core", "cpu_atom") and the Arm
	 * core PMUs ("armv8_pmuv3_0", "armv7_cortex_a15"). Everything else
	 * with a dynamic type is uncore, software-like (kprobe, uprobe, msr)
	 * or a tracer, and uses counters of its own that never compete with
	 * a CPU group's. Arm's "arm_*" PMUs (arm_spe, arm_cmn, arm_dsu) are
	 * of that kind too, despite the name.
	 */
	return !strcmp(name, "cpu") || !strcmp(name, "cpu_core") ||
	       !strcmp(name, "cpu_atom") || !strncmp(name, "armv", 4);
}

/* ---- type names ---------------------------------------------------------- */

struct pmu_name {
	struct pmu_name *next;
	uint64_t root; /* hash of the sysfs directory that named it */
	uint32_t type;
	char name[];
};

/*
 * Entries are never freed or changed, so the names handed out live until
 * the program ends; the lock guards only the list's growth.
 */
static pthread_mutex_t names_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pmu_name *names;
static unsigned int nr_unnamed;

/*
 * Names are cached per sysfs directory (tests read recorded hosts' in
 * turn): FNV-1a of its path.
 */
static uint64_t root_hash(const char *root)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	for (; *root; root++)
		h = (h ^ (unsigned char)*root) * 0x100000001b3ULL;
	return h;
}

static const char *names_find(uint64_t root, uint32_t type)
{
	for (struct pmu_name *n = names; n; n = n->next)
		if (n->type == type && n->root == root)
			return n->name;
	return NULL;
}

static const char *names_add(uint64_t root, uint32_t type, const char *name)
{
	size_t len = strlen(name);
	struct pmu_name *n = malloc(sizeof(*n) + len + 1);

	if (!n)
		return NULL;
	n->root = root;
	n->type = type;
	memcpy(n->name, name, len + 1);
	n->next = names;
	names = n;
	return n->name;
}

static int parse_u32(const char *s, uint32_t *out)
{
	char *end;
	unsigned long v;

	errno = 0;
	v = strtoul(s, &end, 10);
	if (errno || end == s || v > UINT32_MAX)
		return -EINVAL;
	while (*end == '\n' || *end == ' ')
		end++;
	if (*end)
		return -EINVAL;
	*out = (uint32_t)v;
	return 0;
}

/* Looks for type among the PMUs in sysfs, caching every one it reads. */
static const char *names_scan(const char *pmu_root, uint32_t type)
{
	uint64_t root = root_hash(pmu_root);
	const char *found = NULL;
	struct dirent *e;
	DIR *d = opendir(pmu_root);

	if (!d)
		return NULL;
	while ((e = readdir(d))) {
		char path[PATH_MAX], buf[32];
		uint32_t t;

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", pmu_root, e->d_name);
		if (evprof__read_file(path, buf, sizeof(buf)) < 0 ||
		    parse_u32(buf, &t) < 0)
			continue;
		if (!names_find(root, t))
			names_add(root, t, e->d_name);
		if (t == type)
			found = names_find(root, t);
	}
	closedir(d);
	return found;
}

const char *evprof_attr__type_name(uint32_t type)
{
	static const char *const fixed[PERF_TYPE_MAX] = {
	    [PERF_TYPE_HARDWARE] = "hardware",
	    [PERF_TYPE_SOFTWARE] = "software",
	    [PERF_TYPE_TRACEPOINT] = "tracepoint",
	    [PERF_TYPE_HW_CACHE] = "hw-cache",
	    [PERF_TYPE_RAW] = "raw",
	    [PERF_TYPE_BREAKPOINT] = "breakpoint",
	};
	const char *pmu_root = evprof__host()->pmu_root;
	uint64_t root = root_hash(pmu_root);
	const char *name;

	if (type < PERF_TYPE_MAX)
		return fixed[type];
	pthread_mutex_lock(&names_lock);
	name = names_find(root, type);
	if (!name)
		name = names_scan(pmu_root, type);
	if (!name && nr_unnamed < MAX_UNNAMED) {
		char buf[24];

		snprintf(buf, sizeof(buf), "pmu-%u", type);
		name = names_add(root, type, buf);
		if (name)
			nr_unnamed++;
	}
	pthread_mutex_unlock(&names_lock);
	return name ? name : "pmu-unknown";
}

int evprof_core_pmu__cpus(const struct evprof_core_pmu *pmu, int *cpus, int max)
{
	char path[PATH_MAX], buf[4096];
	int n;

	if (!pmu || max < 0 || (!cpus && max))
		return -EINVAL;
	snprintf(path, sizeof(path), "%s/%.*s/cpus", evprof__host()->pmu_root,
		 EVPROF_PMU_NAME_MAX, pmu->name);
	n = evprof__read_file(path, buf, sizeof(buf));
	if (n < 0)
		return n;
	return evprof__parse_cpu_list(buf, cpus, max);
}
