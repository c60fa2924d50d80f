// SPDX-License-Identifier: MIT
/* PMU facts: type names, counter counts, and whether a group fits. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/event.h>

#include "host.h"
#include "pmu.h"

#define DEFAULT_COUNTERS 4
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

/* ---- counters --------------------------------------------------------------
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
 * Intel architectural perfmon (also what other x86 vendors implement):
 * CPUID.0AH:EAX[7:0] is its version (0 = none, as in most VMs) and
 * EAX[15:8] the number of general purpose counters per logical CPU. Fixed
 * counters (cycles, instructions, ref-cycles) are not counted: a group
 * that uses them is judged conservatively.
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

/* Counters CPUID tells of, or 0 when it tells nothing. */
static unsigned int cpuid_counters(const char **source)
{
	const struct evprof_host *h = evprof__host();
	struct evprof_cpuid r;

	if (!h->cpuid(h->cpuid_ctx, 0, 0, &r))
		return 0; /* not x86 */
	if (cpuid_vendor(&r, "AuthenticAMD") ||
	    cpuid_vendor(&r, "HygonGenuine"))
		return amd_counters(h, source);
	return arch_perfmon_counters(h, source);
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
	n = cpuid_counters(&from);
	if (!n) {
		n = DEFAULT_COUNTERS;
		from = "default";
	}
	if (source)
		*source = from;
	return n;
}

/* ---- group validation ------------------------------------------------------
 */

/* Writes "{a,b,c}" to buf (len > 8), ending in ",...}" when it is full. */
static void group_names(const struct evprof_event_spec *specs, size_t nr,
			char *buf, size_t len)
{
	size_t room = len - sizeof(",...}");
	size_t off = 1;

	buf[0] = '{';
	for (size_t i = 0; i < nr; i++) {
		/* Caller-built specs may lack the NUL: bound the name. */
		int n = snprintf(buf + off, room - off, "%s%.*s", i ? "," : "",
				 (int)sizeof(specs[i].name), specs[i].name);

		if (n < 0 || (size_t)n >= room - off) {
			strcpy(buf + off, ",...}");
			return;
		}
		off += (size_t)n;
	}
	strcpy(buf + off, "}");
}

int evprof_group__validate(const struct evprof_event_spec *specs, size_t nr)
{
	const char *source;
	unsigned int counters;
	char members[512];
	size_t slots = 0;

	if (!specs && nr)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		slots += specs[i].hw_slot;
	if (!slots)
		return 0;
	counters = evprof_pmu_counters(&source);
	if (slots <= counters)
		return (int)slots;
	group_names(specs, nr, members, sizeof(members));
	pr_warn("group %s needs %zu hardware counters but the PMU has %u (from "
		"%s); split it or set EVPROF_MAX_GROUP_EVENTS\n",
		members, slots, counters, source);
	return -EVPROF_ERR_GROUP_TOO_BIG;
}
