// SPDX-License-Identifier: MIT
/*
 * The trial open that decides whether a group of hardware events fits the
 * PMU: the group pinned on the calling thread, enabled, a little work,
 * read. A pinned group the kernel cannot schedule goes into error state
 * instead of multiplexing. The answer is cached per group shape.
 */
#define _GNU_SOURCE /* pthread_attr_setaffinity_np */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <evprof/event.h>

#include "pmu.h"

/* Group shapes remembered; beyond it trials are made, not cached. */
#define CACHE_MAX 64
/* The work: this much CPU time of the thread, at most this much wall. */
#define WORK_CPU_NS  200000
#define WORK_WALL_NS 100000000

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;

	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Spins until the thread ran WORK_CPU_NS (or WORK_WALL_NS passed). */
static void work(void)
{
	uint64_t cpu0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
	uint64_t wall0 = now_ns(CLOCK_MONOTONIC);

	while (now_ns(CLOCK_THREAD_CPUTIME_ID) - cpu0 < WORK_CPU_NS &&
	       now_ns(CLOCK_MONOTONIC) - wall0 < WORK_WALL_NS)
		;
}

/*
 * What scheduling needs of each member, counting only, user space only
 * (what perf_event_paranoid 2 allows on one's own thread). A precise
 * (:p) event keeps its precise_ip, so its counter constraint (PEBS)
 * applies; x86 refuses precise counting without sampling, so it samples
 * with a period that never elapses and no ring to write to.
 */
static void trial_attr(struct perf_event_attr *a,
		       const struct perf_event_attr *from, bool leader)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = from->type;
	a->config = from->config;
	a->config1 = from->config1;
	a->config2 = from->config2;
	a->precise_ip = from->precise_ip;
	if (a->precise_ip)
		a->sample_period = UINT64_C(1) << 62;
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
	a->disabled = leader;
	a->pinned = leader;
}

enum evprof_trial evprof__pmu_trial_verdict(int rc,
					    const struct evprof_snapshot *snap,
					    bool hybrid)
{
	/* Error state reads 0 bytes: perf_read() in kernel/events/core.c. */
	if (rc == -EVPROF_ERR_TRUNCATED)
		return EVPROF_TRIAL_NO_FIT;
	if (rc < 0)
		return EVPROF_TRIAL_CANNOT;
	if (snap->time_running)
		return EVPROF_TRIAL_FITS;
	/*
	 * Enabled but never running: a kernel that reads an error state
	 * that way has not scheduled it, though the thread ran; on a hybrid
	 * machine the thread may have run only on the other core
	 * type, where this PMU does not count.
	 */
	if (snap->time_enabled && !hybrid)
		return EVPROF_TRIAL_NO_FIT;
	return EVPROF_TRIAL_UNDECIDED;
}

/* Whether a lone attr opens: a group's EINVAL then was about the group. */
static bool opens_alone(const struct perf_event_attr *from)
{
	struct perf_event_attr a;
	struct evprof_group *g;

	trial_attr(&a, from, true);
	g = evprof_group__open(&a, 1, 0, -1, NULL);
	evprof_group__free(g);
	return g != NULL;
}

/* The trial on the calling thread; hybrid: it may run on another PMU. */
static enum evprof_trial trial_here(const struct perf_event_attr *attrs,
				    size_t nr, bool hybrid, int *err)
{
	struct perf_event_attr a[EVPROF_SNAPSHOT_MAX];
	struct evprof_snapshot snap;
	struct evprof_group *g;
	int failed = -1, rc;
	struct evprof_group_opts opts = {
	    .sz = sizeof(opts),
	    .failed_member = &failed,
	};

	*err = 0;
	if (!nr || nr > EVPROF_SNAPSHOT_MAX) {
		*err = EINVAL;
		return EVPROF_TRIAL_CANNOT;
	}
	for (size_t i = 0; i < nr; i++)
		trial_attr(&a[i], &attrs[i], i == 0);
	g = evprof_group__open(a, nr, 0, -1, &opts);
	if (!g) {
		*err = errno;
		/*
		 * x86 and Arm check at open that the group could ever be
		 * scheduled on an empty PMU (validate_group()) and refuse the
		 * member that does not fit with EINVAL.
		 */
		if (*err == EINVAL && failed > 0 && (size_t)failed < nr &&
		    opens_alone(&attrs[failed]))
			return EVPROF_TRIAL_NO_FIT;
		return EVPROF_TRIAL_CANNOT;
	}
	rc = evprof_group__enable(g);
	if (!rc) {
		work();
		rc = evprof_group__read(g, 0, &snap);
	}
	evprof_group__free(g);
	if (rc < 0 && rc != -EVPROF_ERR_TRUNCATED)
		*err = -rc;
	return evprof__pmu_trial_verdict(rc, &snap, hybrid);
}

struct trial_run {
	const struct perf_event_attr *attrs;
	size_t nr;
	int err;
	enum evprof_trial verdict;
};

static void *trial_thread(void *arg)
{
	struct trial_run *t = arg;

	/* Bound to the PMU's CPUs: a group that never ran did not fit. */
	t->verdict = trial_here(t->attrs, t->nr, false, &t->err);
	return NULL;
}

/*
 * The CPUs core PMU pmu counts on (sysfs <pmu>/cpus), in a set of *size
 * bytes that holds the highest of them (CPU_SETSIZE is 1024); NULL:
 * unknown. The caller frees it (CPU_FREE).
 */
static cpu_set_t *pmu_cpus(const char *pmu, size_t *size)
{
	struct evprof_core_pmu p = {.type = 0};
	cpu_set_t *set = NULL;
	int *cpus = NULL, n, got;

	snprintf(p.name, sizeof(p.name), "%s", pmu);
	n = evprof_core_pmu__cpus(&p, NULL, 0);
	if (n > 0)
		cpus = calloc((size_t)n, sizeof(*cpus));
	got = cpus ? evprof_core_pmu__cpus(&p, cpus, n) : -1;
	if (got > n)
		got = n; /* grown between the reads: the first n */
	/* Ascending: the last is the highest. */
	if (got > 0 && (set = CPU_ALLOC(cpus[got - 1] + 1))) {
		*size = CPU_ALLOC_SIZE(cpus[got - 1] + 1);
		CPU_ZERO_S(*size, set);
		for (int i = 0; i < got; i++)
			CPU_SET_S(cpus[i], *size, set);
	}
	free(cpus);
	return set;
}

enum evprof_trial evprof__pmu_trial(void *ctx,
				    const struct perf_event_attr *attrs,
				    size_t nr, const char *pmu, int *err)
{
	struct trial_run t = {.attrs = attrs, .nr = nr};
	pthread_attr_t pa;
	pthread_t th;
	cpu_set_t *set;
	size_t size = 0;
	bool done = false;

	(void)ctx;
	if (!pmu)
		return trial_here(attrs, nr, false, err);
	/*
	 * A hybrid core PMU counts only on its core type: a thread bound to
	 * those CPUs meets it. Where the binding fails (a cpuset without
	 * them), the calling thread tries, and may never meet it.
	 */
	set = pmu_cpus(pmu, &size);
	if (set && !pthread_attr_init(&pa)) {
		if (!pthread_attr_setaffinity_np(&pa, size, set) &&
		    !pthread_create(&th, &pa, trial_thread, &t)) {
			pthread_join(th, NULL);
			done = true;
		}
		pthread_attr_destroy(&pa);
	}
	CPU_FREE(set);
	if (!done)
		return trial_here(attrs, nr, true, err);
	*err = t.err;
	return t.verdict;
}

/* ---- the cache ------------------------------------------------------------
 */

struct shape {
	uint64_t key;
	enum evprof_trial verdict;
	int err;
};

static pthread_mutex_t cache_lock = PTHREAD_MUTEX_INITIALIZER;
static struct shape cache[CACHE_MAX];
static size_t nr_cache;
static unsigned long cache_host; /* evprof__host_generation() it holds */

static uint64_t fnv(uint64_t h, const void *p, size_t n)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 0x100000001b3ULL;
	return h;
}

/* The group's shape: what the PMU's scheduler looks at. */
static uint64_t shape_key(const struct perf_event_attr *attrs, size_t nr,
			  const char *pmu)
{
	uint64_t h = 0xcbf29ce484222325ULL;

	if (pmu)
		h = fnv(h, pmu, strlen(pmu) + 1);
	h = fnv(h, &nr, sizeof(nr));
	for (size_t i = 0; i < nr; i++) {
		uint64_t v[5] = {attrs[i].type, attrs[i].config,
				 attrs[i].config1, attrs[i].config2,
				 attrs[i].precise_ip};

		h = fnv(h, v, sizeof(v));
	}
	return h;
}

enum evprof_trial evprof__pmu_trial_cached(const struct perf_event_attr *attrs,
					   size_t nr, const char *pmu, int *err)
{
	const struct evprof_host *host = evprof__host();
	uint64_t key = shape_key(attrs, nr, pmu);
	unsigned long gen = evprof__host_generation();
	enum evprof_trial v;

	pthread_mutex_lock(&cache_lock);
	if (cache_host != gen) {
		/* Trials answered for another host's PMU. */
		nr_cache = 0;
		cache_host = gen;
	}
	for (size_t i = 0; i < nr_cache; i++) {
		if (cache[i].key == key) {
			*err = cache[i].err;
			v = cache[i].verdict;
			pthread_mutex_unlock(&cache_lock);
			return v;
		}
	}
	pthread_mutex_unlock(&cache_lock);
	/* Outside the lock: a trial takes a while; two may race, harmless. */
	if (host->trial)
		v = host->trial(host->trial_ctx, attrs, nr, pmu, err);
	else
		v = evprof__pmu_trial(NULL, attrs, nr, pmu, err);
	pthread_mutex_lock(&cache_lock);
	if (cache_host == gen && nr_cache < CACHE_MAX)
		cache[nr_cache++] = (struct shape){key, v, *err};
	pthread_mutex_unlock(&cache_lock);
	return v;
}
