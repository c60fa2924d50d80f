// SPDX-License-Identifier: MIT
/*
 * The tables of PMU facts: which core PMUs sysfs lists, how many general
 * purpose and fixed counters CPUID (or the kernel's driver rules) gives
 * each, and what the hard-lockup detector holds. They explain group fit
 * and serve where a trial open cannot be made (pmu_fit.c).
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <zlib.h>

#include <evprof/pmu.h>

#include "pmu.h"

#define DEFAULT_COUNTERS 4
/* Core PMUs read from sysfs: Intel has 2, Arm big.LITTLE up to 3 or 4. */
#define MAX_CORE_PMUS 8

/* ---- CPUID ---------------------------------------------------------------
 */

/* CPUID leaf 0 names the vendor in EBX, EDX, ECX. */
static bool cpuid_vendor(const struct evprof_cpuid *r, const char *want)
{
	char v[12];

	memcpy(v, &r->ebx, 4);
	memcpy(v + 4, &r->edx, 4);
	memcpy(v + 8, &r->ecx, 4);
	return !memcmp(v, want, sizeof(v));
}

enum vendor { V_NONE, V_INTEL, V_AMD };

static enum vendor x86_vendor(const struct evprof_host *h)
{
	struct evprof_cpuid r;

	if (!h->cpuid(h->cpuid_ctx, 0, 0, &r))
		return V_NONE; /* not x86 */
	if (cpuid_vendor(&r, "AuthenticAMD") ||
	    cpuid_vendor(&r, "HygonGenuine"))
		return V_AMD;
	/* Intel's architectural perfmon, which other x86 vendors follow. */
	return V_INTEL;
}

/*
 * AMD (and Hygon, its licensee) as Linux's amd_core_pmu_init() reads it:
 * PerfMonV2 (CPUID 0x80000022 EAX bit 0, Zen 4) gives the count in EBX[3:0];
 * before it, PerfCtrExtCore (0x80000001 ECX bit 23, family 15h on) means
 * 6 counters. Without either the PMU is the legacy 4 or absent (VMs clear
 * both): we do not know, the caller's default applies.
 */
static unsigned int amd_counters(const struct evprof_host *h,
				 const char **source)
{
	struct evprof_cpuid r;

	if (h->cpuid(h->cpuid_ctx, 0x80000022, 0, &r) && (r.eax & 1) &&
	    (r.ebx & 0xf)) {
		*source = "cpuid leaf 0x80000022";
		return r.ebx & 0xf;
	}
	if (h->cpuid(h->cpuid_ctx, 0x80000001, 0, &r) && (r.ecx & 1u << 23)) {
		*source = "cpuid leaf 0x80000001";
		return 6;
	}
	return 0;
}

/*
 * Intel architectural perfmon (SDM vol. 3B, "Architectural Performance
 * Monitoring"): CPUID.0AH:EAX[7:0] is its version (0 = none, as in most
 * VMs) and EAX[15:8] the number of general purpose counters per logical
 * CPU.
 */
static unsigned int arch_perfmon_counters(const struct evprof_host *h,
					  const char **source)
{
	struct evprof_cpuid r;

	if (!h->cpuid(h->cpuid_ctx, 0xa, 0, &r) || (r.eax & 0xff) == 0)
		return 0;
	*source = "cpuid leaf 0xa";
	return (r.eax >> 8) & 0xff;
}

unsigned int evprof__pmu_cpuid_counters(const char **source)
{
	const struct evprof_host *h = evprof__host();

	switch (x86_vendor(h)) {
	case V_AMD:
		return amd_counters(h, source);
	case V_INTEL:
		return arch_perfmon_counters(h, source);
	default:
		return 0;
	}
}

unsigned int evprof_pmu_counters(const char **source)
{
	const char *env = getenv("EVPROF_MAX_GROUP_EVENTS");
	const char *from = NULL;
	unsigned int n;

	if (env) {
		char *end;
		unsigned long v;

		errno = 0;
		v = strtoul(env, &end, 10);
		if (!errno && end != env && !*end && env[0] != '-' && v > 0 &&
		    v <= INT_MAX) {
			if (source)
				*source = "EVPROF_MAX_GROUP_EVENTS";
			return (unsigned int)v;
		}
		pr_warn("ignoring EVPROF_MAX_GROUP_EVENTS='%.32s': not a "
			"positive integer\n",
			env);
	}
	n = evprof__pmu_cpuid_counters(&from);
	if (!n) {
		n = DEFAULT_COUNTERS;
		from = "default";
	}
	if (source)
		*source = from;
	return n;
}

/*
 * Intel fixed counters (SDM vol. 3B, CPUID.0AH): from version 2, EDX[4:0]
 * counts them; from version 5, ECX bit i also marks counter i present.
 * Counter 0 counts instructions, 1 core cycles, 2 reference cycles: the
 * EVPROF_FIXED_* bits in that order. EBX bit i set means architectural
 * event i (0 core cycles, 1 instructions, 2 reference cycles) is absent,
 * for the first EAX[31:24] bits. Linux's intel_pmu_init() assumes at
 * least 3 fixed counters for versions 2 to 4 outside a hypervisor (CPUID.1
 * ECX bit 31), whatever EDX says.
 */
static unsigned int intel_fixed(const struct evprof_host *h, unsigned int extra,
				const char **from)
{
	struct evprof_cpuid r, one;
	unsigned int version, n, mask, len;

	if (!h->cpuid(h->cpuid_ctx, 0xa, 0, &r) || (r.eax & 0xff) < 2) {
		*from = "cpuid leaf 0xa: no fixed counters before version 2";
		return 0;
	}
	version = r.eax & 0xff;
	n = (r.edx & 0x1f) + extra;
	*from = extra ? "cpuid leaf 0xa edx[4:0] + 1 (kernel's hybrid rule)"
		      : "cpuid leaf 0xa edx[4:0]";
	if (version < 5 && n < 3 && h->cpuid(h->cpuid_ctx, 1, 0, &one) &&
	    !(one.ecx & 1u << 31)) {
		n = 3;
		*from = "cpuid leaf 0xa (kernel assumes 3 on bare metal)";
	}
	mask = (1u << (n < 3 ? n : 3)) - 1;
	if (version >= 5)
		mask |= r.ecx & 7;
	len = r.eax >> 24;
	if (len > 0 && (r.ebx & 1))
		mask &= ~EVPROF_FIXED_CYCLES;
	if (len > 1 && (r.ebx & 2))
		mask &= ~EVPROF_FIXED_INSTRUCTIONS;
	if (len > 2 && (r.ebx & 4))
		mask &= ~EVPROF_FIXED_REF_CYCLES;
	return mask;
}

/* CPUID.07H.0:EDX bit 15: a hybrid part (Alder Lake and later). */
static bool intel_hybrid(const struct evprof_host *h)
{
	struct evprof_cpuid r;

	return h->cpuid(h->cpuid_ctx, 7, 0, &r) && (r.edx & 1u << 15);
}

/* ---- the hard-lockup detector -------------------------------------------
 */

struct kconfig {
	bool read, perf, buddy, prefer_buddy;
};

static void kconfig_line(struct kconfig *k, const char *line)
{
	static const char p[] = "CONFIG_HARDLOCKUP_DETECTOR_";

	if (strncmp(line, p, sizeof(p) - 1))
		return;
	line += sizeof(p) - 1;
	if (!strcmp(line, "PERF=y\n"))
		k->perf = true;
	else if (!strcmp(line, "BUDDY=y\n"))
		k->buddy = true;
	else if (!strcmp(line, "PREFER_BUDDY=y\n"))
		k->prefer_buddy = true;
}

/* Reads the first kernel config the host names that opens. */
static void kconfig_read(const struct evprof_host *h, struct kconfig *k)
{
	memset(k, 0, sizeof(*k));
	for (int i = 0; i < EVPROF_HOST_KCONFIG_MAX && !k->read; i++) {
		const char *p = h->kconfig[i];
		char path[PATH_MAX], line[256];
		struct utsname u;
		gzFile f;

		if (!p)
			continue;
		if (*p && p[strlen(p) - 1] == '-' && !uname(&u))
			snprintf(path, sizeof(path), "%s%s", p, u.release);
		else
			snprintf(path, sizeof(path), "%s", p);
		/* gzopen reads plain files as they are. */
		f = gzopen(path, "rb");
		if (!f)
			continue;
		while (gzgets(f, line, sizeof(line)))
			kconfig_line(k, line);
		k->read = true;
		gzclose(f);
	}
}

/*
 * kernel.nmi_watchdog is 1 while a hard-lockup detector runs (the perf
 * one reads 0 where its event did not open, as in a VM without a PMU).
 * Which detector, the kernel config says: HARDLOCKUP_DETECTOR_PERF holds a
 * pinned cycles event on every CPU (kernel/watchdog_perf.c), the buddy
 * detector (Linux 6.6, kernel/watchdog_buddy.c) only hrtimers.
 */
static enum evprof_watchdog watchdog_kind(const struct evprof_host *h,
					  const char **from)
{
	struct kconfig k;
	char buf[16];

	if (!h->nmi_watchdog ||
	    evprof__read_file(h->nmi_watchdog, buf, sizeof(buf)) <= 0) {
		*from = "no kernel.nmi_watchdog: no hard-lockup detector";
		return EVPROF_WATCHDOG_OFF;
	}
	if (buf[0] == '0') {
		*from = "kernel.nmi_watchdog = 0";
		return EVPROF_WATCHDOG_OFF;
	}
	kconfig_read(h, &k);
	if (!k.read) {
		*from = "kernel.nmi_watchdog = 1, kernel config unreadable: "
			"the perf detector assumed";
		return EVPROF_WATCHDOG_PERF;
	}
	if (k.buddy && (!k.perf || k.prefer_buddy)) {
		*from = "kernel.nmi_watchdog = 1 and "
			"CONFIG_HARDLOCKUP_DETECTOR_BUDDY";
		return EVPROF_WATCHDOG_BUDDY;
	}
	if (k.perf) {
		*from = "kernel.nmi_watchdog = 1 and "
			"CONFIG_HARDLOCKUP_DETECTOR_PERF";
		return EVPROF_WATCHDOG_PERF;
	}
	*from = "kernel.nmi_watchdog = 1, an architecture's own detector";
	return EVPROF_WATCHDOG_OFF;
}

/* ---- core PMUs ------------------------------------------------------------
 */

/* Big cores first: "cpu", "cpu_core", then "cpu_atom", then Arm by name. */
static int pmu_rank(const char *name)
{
	if (!strcmp(name, "cpu") || !strcmp(name, "cpu_core"))
		return 0;
	return !strcmp(name, "cpu_atom") ? 1 : 2;
}

static int pmu_cmp(const void *a, const void *b)
{
	const struct evprof_core_pmu *x = a, *y = b;
	int d = pmu_rank(x->name) - pmu_rank(y->name);

	return d ? d : strcmp(x->name, y->name);
}

static int scan_core_pmus(const struct evprof_host *h,
			  struct evprof_core_pmu *out, int max)
{
	DIR *d = opendir(h->pmu_root);
	struct dirent *e;
	int n = 0;

	if (!d)
		return errno == ENOENT ? 0 : -errno;
	while ((e = readdir(d)) && n < max) {
		char path[PATH_MAX], buf[32], *end;
		unsigned long t;

		if (e->d_name[0] == '.' || !evprof__pmu_is_cpu(e->d_name) ||
		    strlen(e->d_name) >= EVPROF_PMU_NAME_MAX)
			continue;
		snprintf(path, sizeof(path), "%s/%s/type", h->pmu_root,
			 e->d_name);
		if (evprof__read_file(path, buf, sizeof(buf)) <= 0)
			continue;
		errno = 0;
		t = strtoul(buf, &end, 10);
		if (errno || end == buf || t > UINT32_MAX)
			continue;
		memset(&out[n], 0, sizeof(out[n]));
		strcpy(out[n].name, e->d_name);
		out[n].type = (uint32_t)t;
		n++;
	}
	closedir(d);
	qsort(out, (size_t)n, sizeof(*out), pmu_cmp);
	return n;
}

/* PMCR_EL0.N, the general counters of a PMUv3, is 5 bits wide. */
#define ARM_GENERAL_MAX 31

/*
 * The general counters of Arm PMUv3 p that are free: the largest group of
 * INST_RETIRED (0x08, an event every PMUv3 implements, never on the cycle
 * counter) that a trial schedules; 0 when none runs.
 */
static unsigned int arm_general(const struct evprof_core_pmu *p)
{
	struct perf_event_attr a[ARM_GENERAL_MAX];
	unsigned int n;
	int err;

	memset(a, 0, sizeof(a));
	for (n = 0; n < ARM_GENERAL_MAX; n++) {
		a[n].size = sizeof(a[n]);
		a[n].type = p->type;
		a[n].config = 0x08;
		if (evprof__pmu_trial_cached(a, n + 1, p->name, &err) !=
		    EVPROF_TRIAL_FITS)
			break;
	}
	return n;
}

/* Counters of one core PMU p, i of n, by vendor. */
static void pmu_counters(const struct evprof_host *h, enum vendor v,
			 struct evprof_core_pmu *p)
{
	const char *from = NULL;

	p->general_from = "unknown";
	p->fixed_from = "none";
	if (!strncmp(p->name, "armv", 4)) {
		/*
		 * Arm PMUv3: PMCR_EL0.N counters, which the driver prints at
		 * boot but sysfs does not show; trial opens find out. The
		 * cycle counter PMCCNTR_EL0 is dedicated to CPU_CYCLES
		 * (arch/arm64/kernel/perf_event.c, armv8pmu_get_event_idx).
		 */
		p->general = arm_general(p);
		p->general_from =
		    p->general ? "trial: the largest group of inst_retired "
				 "that runs"
			       : "unknown: not in sysfs (the driver prints "
				 "it at boot), and no trial group ran";
		p->fixed = EVPROF_FIXED_CYCLES;
		p->fixed_from = "PMUv3 cycle counter (PMCCNTR_EL0)";
		return;
	}
	if (v == V_AMD) {
		/* AMD core PMUs have no fixed counters for these events. */
		p->general = amd_counters(h, &from);
		if (p->general)
			p->general_from = from;
		return;
	}
	if (v != V_INTEL)
		return;
	p->general = arch_perfmon_counters(h, &from);
	if (!p->general)
		return;
	p->general_from = from;
	if (!strcmp(p->name, "cpu_core") && intel_hybrid(h)) {
		struct evprof_cpuid r;

		/*
		 * CPUID.0AH on a hybrid part tells the counters both core
		 * types have; Linux gives the big cores 2 general and 1
		 * fixed counter more (intel_pmu_init(), Alder Lake), unless
		 * leaf 0x23 enumerates each core type (Meteor Lake on), which
		 * only the core that runs CPUID answers: the trial decides.
		 */
		if (!h->cpuid(h->cpuid_ctx, 0x23, 0, &r)) {
			p->general += 2;
			p->general_from = "cpuid leaf 0xa + 2 (kernel's hybrid "
					  "rule)";
			p->fixed = intel_fixed(h, 1, &p->fixed_from);
			return;
		}
	}
	p->fixed = intel_fixed(h, 0, &p->fixed_from);
}

/*
 * The perf watchdog's pinned cycles event: on Intel the x86 scheduler
 * puts it on fixed counter 1 where there is one, on Arm on the cycle
 * counter; on AMD it takes a general counter.
 */
static void pmu_watchdog(enum evprof_watchdog w, const char *from,
			 struct evprof_core_pmu *p)
{
	p->watchdog = w;
	p->watchdog_from = from;
	if (w != EVPROF_WATCHDOG_PERF)
		return;
	if (p->fixed & EVPROF_FIXED_CYCLES)
		p->watchdog_fixed = EVPROF_FIXED_CYCLES;
	else
		p->watchdog_general = 1;
}

int evprof_core_pmus(struct evprof_core_pmu *pmus, int max)
{
	const struct evprof_host *h = evprof__host();
	struct evprof_core_pmu all[MAX_CORE_PMUS];
	enum evprof_watchdog w;
	const char *wfrom;
	enum vendor v;
	int n;

	if (max < 0 || (!pmus && max))
		return -EINVAL;
	n = scan_core_pmus(h, all, MAX_CORE_PMUS);
	if (n <= 0)
		return n;
	v = x86_vendor(h);
	w = watchdog_kind(h, &wfrom);
	for (int i = 0; i < n; i++) {
		all[i].hybrid = n > 1;
		pmu_counters(h, v, &all[i]);
		pmu_watchdog(w, wfrom, &all[i]);
		if (i < max)
			pmus[i] = all[i];
	}
	return n;
}

/* ---- events on a core PMU -------------------------------------------------
 */

bool evprof_event_spec__is_generic(const struct evprof_event_spec *spec)
{
	return spec &&
	       (spec->attr.type == PERF_TYPE_HARDWARE ||
		spec->attr.type == PERF_TYPE_HW_CACHE) &&
	       !(spec->attr.config >> 32);
}

int evprof_event_spec__on_pmu(struct evprof_event_spec *out,
			      const struct evprof_event_spec *spec,
			      const struct evprof_core_pmu *pmu)
{
	if (!out || !spec || !pmu)
		return -EINVAL;
	*out = *spec;
	if (!evprof_event_spec__is_generic(spec))
		return 0;
	/* PERF_PMU_TYPE_SHIFT, include/uapi/linux/perf_event.h (5.13). */
	out->attr.config |= (uint64_t)pmu->type << 32;
	snprintf(out->name, sizeof(out->name), "%s/%.*s/", pmu->name,
		 (int)(sizeof(out->name) - EVPROF_PMU_NAME_MAX - 3),
		 spec->name);
	return 0;
}
