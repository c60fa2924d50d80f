/* SPDX-License-Identifier: MIT */
/*
 * Recorded hosts (tests/fixtures/hosts/<name>/) put into the library's host
 * seam, so that a test asserts the same facts on any machine. Include after
 * <cmocka.h>.
 */
#ifndef EVPROF_TEST_HOSTS_H
#define EVPROF_TEST_HOSTS_H

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "events/host.h"

#define HOST_CPUID_MAX 16

struct test_host {
	struct evprof_host h;
	char dir[PATH_MAX / 2];
	char pmu_root[PATH_MAX];
	char tracefs[PATH_MAX];
	char nmi_watchdog[PATH_MAX];
	char kconfig[PATH_MAX];
	/* The trial open's answer (a recorded host has no PMU to try). */
	enum evprof_trial trial;
	/* > 0: trials of more members than this do not fit, others do */
	unsigned int max_group;
	int trial_err;
	unsigned int nr_trials; /* trials asked for */
	size_t nr_leaves;
	struct {
		uint32_t leaf, subleaf;
		struct evprof_cpuid r;
	} leaves[HOST_CPUID_MAX];
};

/* As the instruction: zeros up to the maximum of the leaf's range. */
static bool test_host_cpuid(void *ctx, uint32_t leaf, uint32_t subleaf,
			    struct evprof_cpuid *out)
{
	const struct test_host *t = ctx;
	uint32_t base = leaf & 0x80000000u, max = 0;
	bool have_base = false;

	for (size_t i = 0; i < t->nr_leaves; i++) {
		if (t->leaves[i].leaf == base && !t->leaves[i].subleaf) {
			max = t->leaves[i].r.eax;
			have_base = true;
		}
	}
	if (!have_base || leaf > max)
		return false;
	memset(out, 0, sizeof(*out));
	for (size_t i = 0; i < t->nr_leaves; i++)
		if (t->leaves[i].leaf == leaf &&
		    t->leaves[i].subleaf == subleaf)
			*out = t->leaves[i].r;
	return true;
}

static enum evprof_trial test_host_trial(void *ctx,
					 const struct perf_event_attr *attrs,
					 size_t nr, const char *pmu, int *err)
{
	struct test_host *t = ctx;

	(void)attrs;
	(void)pmu;
	t->nr_trials++;
	*err = t->trial_err;
	if (t->max_group)
		return nr > t->max_group ? EVPROF_TRIAL_NO_FIT
					 : EVPROF_TRIAL_FITS;
	return t->trial;
}

/* tests/fixtures/hosts/<name>, from where this header is. */
static void test_host_path(char *buf, size_t len, const char *name)
{
	const char *here = __FILE__;
	const char *slash = strrchr(here, '/');
	int dirlen = slash ? (int)(slash - here) : 1;

	snprintf(buf, len, "%.*s/fixtures/hosts/%s", dirlen, slash ? here : ".",
		 name);
}

/*
 * Loads host name and makes the library read it. Fails the test when the
 * fixture is unreadable: it is part of the source tree.
 */
static void test_host_use(struct test_host *t, const char *name)
{
	char path[PATH_MAX + 16], line[256];
	FILE *f;

	memset(t, 0, sizeof(*t));
	test_host_path(t->dir, sizeof(t->dir), name);
	snprintf(t->pmu_root, sizeof(t->pmu_root), "%s/devices", t->dir);
	snprintf(t->tracefs, sizeof(t->tracefs), "%s/tracing", t->dir);
	/* Absent files: no hard-lockup detector, kernel config unknown. */
	snprintf(t->nmi_watchdog, sizeof(t->nmi_watchdog), "%s/nmi_watchdog",
		 t->dir);
	snprintf(t->kconfig, sizeof(t->kconfig), "%s/kconfig", t->dir);
	snprintf(path, sizeof(path), "%s/cpuid", t->dir);
	f = fopen(path, "r");
	if (!f)
		fail_msg("cannot read %s", path);
	while (fgets(line, sizeof(line), f)) {
		unsigned int v[6];

		if (line[0] == '#' || line[0] == '\n')
			continue;
		if (sscanf(line, "%x %x %x %x %x %x", &v[0], &v[1], &v[2],
			   &v[3], &v[4], &v[5]) != 6 ||
		    t->nr_leaves == HOST_CPUID_MAX)
			fail_msg("%s: bad line '%s'", path, line);
		t->leaves[t->nr_leaves].leaf = v[0];
		t->leaves[t->nr_leaves].subleaf = v[1];
		t->leaves[t->nr_leaves].r =
		    (struct evprof_cpuid){v[2], v[3], v[4], v[5]};
		t->nr_leaves++;
	}
	fclose(f);
	t->h.pmu_root = t->pmu_root;
	/* A missing tracing/ is tracefs not mounted, as on the host. */
	t->h.tracefs[0] = t->tracefs;
	t->h.cpuid = test_host_cpuid;
	t->h.cpuid_ctx = t;
	t->h.nmi_watchdog = t->nmi_watchdog;
	t->h.kconfig[0] = t->kconfig;
	t->h.trial = test_host_trial;
	t->h.trial_ctx = t;
	t->trial = EVPROF_TRIAL_CANNOT;
	t->trial_err = ENOENT;
	evprof__host_set(&t->h);
}

/*
 * Points the host's watchdog facts at tests/fixtures/hosts/watchdog/<state>
 * ("on", "off") and <kconfig> ("kconfig_perf", "kconfig_buddy"; NULL:
 * none readable), then makes the library read them anew.
 */
static inline void test_host_watchdog(struct test_host *t, const char *state,
				      const char *kconfig)
{
	char dir[PATH_MAX / 2];

	test_host_path(dir, sizeof(dir), "watchdog");
	snprintf(t->nmi_watchdog, sizeof(t->nmi_watchdog), "%s/%s", dir, state);
	snprintf(t->kconfig, sizeof(t->kconfig), "%s/%s", dir,
		 kconfig ? kconfig : "absent");
	evprof__host_set(&t->h);
}

/* Back to the machine the test runs on. */
static inline void test_host_real(void)
{
	evprof__host_set(NULL);
}

#endif /* EVPROF_TEST_HOSTS_H */
