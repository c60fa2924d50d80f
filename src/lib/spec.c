// SPDX-License-Identifier: MIT
/*
 * Event specifications as perf users type them, and comma separated lists
 * of them with {..} groups. Pure parsing: the only outside facts read are
 * tracefs ids, sysfs PMU descriptions and libpfm4's tables.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>

#include <evprof/event.h>
#ifdef EVPROF_HAVE_LIBPFM
/* After <linux/perf_event.h>: libpfm4 then skips its own copy of it. */
#include <perfmon/pfmlib_perf_event.h>
#endif

#include "spec.h"

#define PMU_DEVICES "/sys/bus/event_source/devices"
/* Longest PMU, term or tracepoint component we look up in sysfs/tracefs. */
#define COMPONENT_MAX 64

struct named_event {
	const char *name;
	uint64_t config;
	bool alias; /* left out of the "known" list */
};

static const struct named_event hw_events[] = {
    {"cycles", PERF_COUNT_HW_CPU_CYCLES, false},
    {"cpu-cycles", PERF_COUNT_HW_CPU_CYCLES, true},
    {"instructions", PERF_COUNT_HW_INSTRUCTIONS, false},
    {"cache-references", PERF_COUNT_HW_CACHE_REFERENCES, false},
    {"cache-misses", PERF_COUNT_HW_CACHE_MISSES, false},
    {"branches", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, false},
    {"branch-instructions", PERF_COUNT_HW_BRANCH_INSTRUCTIONS, true},
    {"branch-misses", PERF_COUNT_HW_BRANCH_MISSES, false},
    {"bus-cycles", PERF_COUNT_HW_BUS_CYCLES, false},
    {"ref-cycles", PERF_COUNT_HW_REF_CPU_CYCLES, false},
    {"stalled-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, false},
    {"idle-cycles-frontend", PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, true},
    {"stalled-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, false},
    {"idle-cycles-backend", PERF_COUNT_HW_STALLED_CYCLES_BACKEND, true},
};

static const struct named_event sw_events[] = {
    {"cpu-clock", PERF_COUNT_SW_CPU_CLOCK, false},
    {"task-clock", PERF_COUNT_SW_TASK_CLOCK, false},
    {"page-faults", PERF_COUNT_SW_PAGE_FAULTS, false},
    {"faults", PERF_COUNT_SW_PAGE_FAULTS, true},
    {"minor-faults", PERF_COUNT_SW_PAGE_FAULTS_MIN, false},
    {"major-faults", PERF_COUNT_SW_PAGE_FAULTS_MAJ, false},
    {"context-switches", PERF_COUNT_SW_CONTEXT_SWITCHES, false},
    {"cs", PERF_COUNT_SW_CONTEXT_SWITCHES, true},
    {"cpu-migrations", PERF_COUNT_SW_CPU_MIGRATIONS, false},
    {"migrations", PERF_COUNT_SW_CPU_MIGRATIONS, true},
    {"alignment-faults", PERF_COUNT_SW_ALIGNMENT_FAULTS, false},
    {"emulation-faults", PERF_COUNT_SW_EMULATION_FAULTS, false},
    {"dummy", PERF_COUNT_SW_DUMMY, false},
    {"bpf-output", PERF_COUNT_SW_BPF_OUTPUT, false},	       /* 4.4 */
    {"cgroup-switches", PERF_COUNT_SW_CGROUP_SWITCHES, false}, /* 5.13 */
};

/* perf's names for hardware cache events, aliases included. */
static const struct named_event cache_types[] = {
    {"L1-dcache", PERF_COUNT_HW_CACHE_L1D, false},
    {"l1-d", PERF_COUNT_HW_CACHE_L1D, true},
    {"l1d", PERF_COUNT_HW_CACHE_L1D, true},
    {"L1-data", PERF_COUNT_HW_CACHE_L1D, true},
    {"L1-icache", PERF_COUNT_HW_CACHE_L1I, false},
    {"l1-i", PERF_COUNT_HW_CACHE_L1I, true},
    {"l1i", PERF_COUNT_HW_CACHE_L1I, true},
    {"L1-instruction", PERF_COUNT_HW_CACHE_L1I, true},
    {"LLC", PERF_COUNT_HW_CACHE_LL, false},
    {"L2", PERF_COUNT_HW_CACHE_LL, true},
    {"dTLB", PERF_COUNT_HW_CACHE_DTLB, false},
    {"d-tlb", PERF_COUNT_HW_CACHE_DTLB, true},
    {"Data-TLB", PERF_COUNT_HW_CACHE_DTLB, true},
    {"iTLB", PERF_COUNT_HW_CACHE_ITLB, false},
    {"i-tlb", PERF_COUNT_HW_CACHE_ITLB, true},
    {"Instruction-TLB", PERF_COUNT_HW_CACHE_ITLB, true},
    {"branch", PERF_COUNT_HW_CACHE_BPU, false},
    {"branches", PERF_COUNT_HW_CACHE_BPU, true},
    {"bpu", PERF_COUNT_HW_CACHE_BPU, true},
    {"btb", PERF_COUNT_HW_CACHE_BPU, true},
    {"bpc", PERF_COUNT_HW_CACHE_BPU, true},
    {"node", PERF_COUNT_HW_CACHE_NODE, false},
};

static const struct named_event cache_ops[] = {
    {"load", PERF_COUNT_HW_CACHE_OP_READ, false},
    {"loads", PERF_COUNT_HW_CACHE_OP_READ, true},
    {"read", PERF_COUNT_HW_CACHE_OP_READ, true},
    {"store", PERF_COUNT_HW_CACHE_OP_WRITE, false},
    {"stores", PERF_COUNT_HW_CACHE_OP_WRITE, true},
    {"write", PERF_COUNT_HW_CACHE_OP_WRITE, true},
    {"prefetch", PERF_COUNT_HW_CACHE_OP_PREFETCH, false},
    {"prefetches", PERF_COUNT_HW_CACHE_OP_PREFETCH, true},
    {"speculative-read", PERF_COUNT_HW_CACHE_OP_PREFETCH, true},
    {"speculative-load", PERF_COUNT_HW_CACHE_OP_PREFETCH, true},
};

static const struct named_event cache_results[] = {
    {"misses", PERF_COUNT_HW_CACHE_RESULT_MISS, false},
    {"miss", PERF_COUNT_HW_CACHE_RESULT_MISS, true},
    {"refs", PERF_COUNT_HW_CACHE_RESULT_ACCESS, true},
    {"access", PERF_COUNT_HW_CACHE_RESULT_ACCESS, true},
};

/* Why a name was not found, for the one "unknown event" message. */
struct notes {
	char text[384];
	size_t len;
};

__attribute__((format(printf, 2, 3))) static void note(struct notes *n,
						       const char *fmt, ...)
{
	size_t room = sizeof(n->text) - n->len; /* always >= 1 */
	char one[sizeof(n->text)];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(one, sizeof(one), fmt, ap);
	va_end(ap);
	/* A name retried without its modifiers can fail the same way. */
	if (strstr(n->text, one))
		return;
	snprintf(n->text + n->len, room, "%s%s", n->len ? "; " : "", one);
	n->len += strlen(n->text + n->len);
}

/* Strings in a message are user input: keep them short. */
#define SHOW_MAX   160
#define SHOWN(len) (int)((len) < SHOW_MAX ? (len) : SHOW_MAX)

/* ---- small parsers ------------------------------------------------------- */

static const struct named_event *find_event(const struct named_event *tab,
					    size_t nr, const char *s,
					    size_t len, bool nocase)
{
	for (size_t i = 0; i < nr; i++) {
		const char *name = tab[i].name;

		if (strlen(name) != len)
			continue;
		if (nocase ? !strncasecmp(name, s, len)
			   : !strncmp(name, s, len))
			return &tab[i];
	}
	return NULL;
}

/* All of s[0..len) as digits of base 10 or 16, without overflow. */
static int parse_digits(const char *s, size_t len, unsigned int base,
			uint64_t *out)
{
	uint64_t v = 0;

	if (!len)
		return -EINVAL;
	for (size_t i = 0; i < len; i++) {
		unsigned int d;

		if (s[i] >= '0' && s[i] <= '9')
			d = (unsigned int)(s[i] - '0');
		else if (base == 16 && s[i] >= 'a' && s[i] <= 'f')
			d = (unsigned int)(s[i] - 'a' + 10);
		else if (base == 16 && s[i] >= 'A' && s[i] <= 'F')
			d = (unsigned int)(s[i] - 'A' + 10);
		else
			return -EINVAL;
		if (v > (UINT64_MAX - d) / base)
			return -ERANGE;
		v = v * base + d;
	}
	*out = v;
	return 0;
}

/* "0x1f" (hex) or "31" (decimal). */
static int parse_u64(const char *s, size_t len, uint64_t *out)
{
	if (len > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_digits(s + 2, len - 2, 16, out);
	return parse_digits(s, len, 10, out);
}

/*
 * A name we may put in a sysfs or tracefs path: letters, digits, '_' and
 * '-', so that nothing typed can climb out of the directory ("..", "/").
 */
static bool safe_component(const char *s, size_t len)
{
	if (!len || len >= COMPONENT_MAX)
		return false;
	for (size_t i = 0; i < len; i++) {
		char c = s[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		      (c >= '0' && c <= '9') || c == '_' || c == '-'))
			return false;
	}
	return true;
}

/* Modifiers: any of u, k, h and up to three p. */
struct mods {
	bool u, k, h;
	unsigned int p;
};

static int parse_mods(const char *s, size_t len, struct mods *m)
{
	memset(m, 0, sizeof(*m));
	if (!len)
		return -EVPROF_ERR_BAD_SPEC;
	for (size_t i = 0; i < len; i++) {
		switch (s[i]) {
		case 'u':
			m->u = true;
			break;
		case 'k':
			m->k = true;
			break;
		case 'h':
			m->h = true;
			break;
		case 'p':
			if (++m->p > 3) /* precise_ip is 0..3 */
				return -EVPROF_ERR_BAD_SPEC;
			break;
		default:
			return -EVPROF_ERR_BAD_SPEC;
		}
	}
	return 0;
}

/*
 * As perf does: naming any privilege level excludes the ones not named, so
 * :u also excludes the hypervisor, and :uk counts user and kernel only.
 */
static void apply_mods(struct perf_event_attr *attr, const struct mods *m)
{
	if (m->u || m->k || m->h) {
		attr->exclude_user = !m->u;
		attr->exclude_kernel = !m->k;
		attr->exclude_hv = !m->h;
	}
	if (m->p)
		attr->precise_ip = m->p;
}

/* ---- built-in names --------------------------------------------------------
 */

static int resolve_cache(struct perf_event_attr *attr, const char *s)
{
	for (size_t c = 0; c < ARRAY_SIZE(cache_types); c++) {
		size_t clen = strlen(cache_types[c].name);
		const char *rest = s + clen;

		if (strncasecmp(s, cache_types[c].name, clen) || *rest != '-')
			continue;
		rest++;
		for (size_t o = 0; o < ARRAY_SIZE(cache_ops); o++) {
			size_t olen = strlen(cache_ops[o].name);
			const char *res = rest + olen;
			const struct named_event *r = NULL;

			if (strncasecmp(rest, cache_ops[o].name, olen) ||
			    (*res && *res != '-'))
				continue;
			if (*res) {
				r = find_event(cache_results,
					       ARRAY_SIZE(cache_results),
					       res + 1, strlen(res + 1), true);
				if (!r)
					continue;
			}
			attr->type = PERF_TYPE_HW_CACHE;
			attr->config = cache_types[c].config |
				       cache_ops[o].config << 8 |
				       (r ? r->config : 0) << 16;
			return 0;
		}
	}
	return -EVPROF_ERR_UNKNOWN_EVENT;
}

/* rNNNN: up to 16 hex digits (perf's raw syntax). */
static int resolve_raw(struct perf_event_attr *attr, const char *s)
{
	size_t len = strlen(s + 1);
	uint64_t v;

	if (s[0] != 'r' || !len ||
	    strspn(s + 1, "0123456789abcdefABCDEF") != len)
		return -EVPROF_ERR_UNKNOWN_EVENT;
	if (len > 16) {
		pr_warn("raw event '%.*s' has more than 64 bits\n", SHOW_MAX,
			s);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (parse_digits(s + 1, len, 16, &v))
		return -EVPROF_ERR_BAD_SPEC;
	attr->type = PERF_TYPE_RAW;
	attr->config = v;
	return 0;
}

/* Hardware, software, cache and raw names: no I/O, no messages on miss. */
static int resolve_builtin(struct perf_event_attr *attr, const char *s)
{
	const struct named_event *e;

	e = find_event(hw_events, ARRAY_SIZE(hw_events), s, strlen(s), false);
	if (e) {
		attr->type = PERF_TYPE_HARDWARE;
		attr->config = e->config;
		return 0;
	}
	e = find_event(sw_events, ARRAY_SIZE(sw_events), s, strlen(s), false);
	if (e) {
		attr->type = PERF_TYPE_SOFTWARE;
		attr->config = e->config;
		return 0;
	}
	if (!resolve_cache(attr, s))
		return 0;
	return resolve_raw(attr, s);
}

/* ---- tracepoints ------------------------------------------------------------
 */

/*
 * -errno failures leave their message in fail (libpfm4 may still know the
 * name, e.g. when tracefs is closed to non-root users).
 */
static int resolve_tracepoint(struct perf_event_attr *attr, const char *s,
			      struct notes *why, struct notes *fail)
{
	static const char *const roots[] = {
	    "/sys/kernel/tracing",
	    "/sys/kernel/debug/tracing", /* before 4.1, or not remounted */
	};
	const char *colon = strchr(s, ':');
	size_t syslen = (size_t)(colon - s);
	char path[PATH_MAX], buf[32];

	if (!safe_component(s, syslen) ||
	    !safe_component(colon + 1, strlen(colon + 1)))
		return -EVPROF_ERR_UNKNOWN_EVENT;
	for (size_t i = 0; i < ARRAY_SIZE(roots); i++) {
		struct stat st;
		uint64_t id;
		int n;

		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (stat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;
			n = -errno;
			note(fail, "cannot read tracefs at %s: %s", path,
			     strerror(errno));
			return n;
		}
		snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", roots[i],
			 (int)syslen, s, colon + 1);
		n = evprof__read_file(path, buf, sizeof(buf));
		if (n == -ENOENT || n == -ENOTDIR) {
			note(why, "no tracepoint at %s", path);
			return -EVPROF_ERR_UNKNOWN_EVENT;
		}
		if (n < 0) {
			note(fail, "cannot read tracepoint id %s: %s", path,
			     strerror(-n));
			return n;
		}
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
			n--;
		if (parse_u64(buf, (size_t)n, &id)) {
			note(fail, "tracepoint id file %s holds no number",
			     path);
			return -EVPROF_ERR_MALFORMED;
		}
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = id;
		return 0;
	}
	note(why,
	     "tracefs is not mounted at %s or %s (mount -t tracefs nodev %s)",
	     roots[0], roots[1], roots[0]);
	return -EVPROF_ERR_UNKNOWN_EVENT;
}

/* ---- sysfs PMUs -------------------------------------------------------------
 */

int evprof__pmu_format_apply(struct perf_event_attr *attr, const char *format,
			     uint64_t value)
{
	const char *p = strchr(format, ':');
	size_t flen = p ? (size_t)(p - format) : 0;
	__u64 *field;
	unsigned int used = 0;

	if (flen == 6 && !strncmp(format, "config", 6))
		field = &attr->config;
	else if (flen == 7 && !strncmp(format, "config1", 7))
		field = &attr->config1;
	else if (flen == 7 && !strncmp(format, "config2", 7))
		field = &attr->config2;
	else
		return -EVPROF_ERR_BAD_SPEC; /* config3 (6.3) is not in our uapi
					      */
	p++;
	for (;;) {
		char *end;
		unsigned long lo, hi;
		uint64_t mask, bits;

		if (*p < '0' || *p > '9')
			return -EVPROF_ERR_BAD_SPEC;
		lo = hi = strtoul(p, &end, 10);
		if (*end == '-') {
			if (end[1] < '0' || end[1] > '9')
				return -EVPROF_ERR_BAD_SPEC;
			hi = strtoul(end + 1, &end, 10);
		}
		if (lo > hi || hi > 63)
			return -EVPROF_ERR_BAD_SPEC;
		/* Value bits used..used+width go to lo..hi. */
		mask =
		    hi - lo == 63 ? UINT64_MAX : ((1ULL << (hi - lo + 1)) - 1);
		bits = used < 64 ? (value >> used) & mask : 0;
		*field = (*field & ~(mask << lo)) | bits << lo;
		used += (unsigned int)(hi - lo + 1);
		p = end;
		if (*p != ',')
			break;
		p++;
	}
	while (*p == '\n' || *p == ' ')
		p++;
	if (*p || (used < 64 && value >> used))
		return -EVPROF_ERR_BAD_SPEC;
	return 0;
}

static int read_pmu_file(const char *pmu, const char *dir, const char *name,
			 size_t nlen, char *buf, size_t len, char *path,
			 size_t plen)
{
	snprintf(path, plen, PMU_DEVICES "/%s/%s/%.*s", pmu, dir, (int)nlen,
		 name);
	return evprof__read_file(path, buf, len);
}

static int apply_terms(struct perf_event_attr *attr, const char *pmu,
		       const char *terms, size_t len, bool in_alias,
		       struct notes *why);

/* One term: config*=v, a format term (=v, or alone for 1), or an alias. */
static int apply_term(struct perf_event_attr *attr, const char *pmu,
		      const char *t, size_t len, bool in_alias,
		      struct notes *why)
{
	const char *eq = memchr(t, '=', len);
	size_t klen = eq ? (size_t)(eq - t) : len;
	char path[PATH_MAX], buf[4096];
	uint64_t v = 1;
	int n;

	if (!safe_component(t, klen)) {
		pr_warn("bad term '%.*s' in %s/../\n", SHOWN(len), t, pmu);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (eq && parse_u64(eq + 1, len - klen - 1, &v)) {
		pr_warn("bad value in term '%.*s' of %s/../ (want decimal or "
			"0x hex)\n",
			SHOWN(len), t, pmu);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (eq && klen == 6 && !strncmp(t, "config", 6)) {
		attr->config = v;
		return 0;
	}
	if (eq && klen == 7 && !strncmp(t, "config1", 7)) {
		attr->config1 = v;
		return 0;
	}
	if (eq && klen == 7 && !strncmp(t, "config2", 7)) {
		attr->config2 = v;
		return 0;
	}
	n = read_pmu_file(pmu, "format", t, klen, buf, 256, path, sizeof(path));
	if (n >= 0) {
		if (!evprof__pmu_format_apply(attr, buf, v))
			return 0;
		while (n > 0 && buf[n - 1] == '\n')
			buf[--n] = '\0';
		pr_warn("cannot apply '%.*s' of %s/../: format %s is malformed "
			"or the value does not fit it\n",
			SHOWN(len), t, pmu, buf);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (n != -ENOENT) {
		pr_warn("cannot read %s: %s\n", path, strerror(-n));
		return n;
	}
	if (eq || in_alias) {
		pr_warn("PMU %s has no format term '%.*s' (see " PMU_DEVICES
			"/%s/format/)\n",
			pmu, (int)klen, t, pmu);
		return -EVPROF_ERR_BAD_SPEC;
	}
	n = read_pmu_file(pmu, "events", t, klen, buf, sizeof(buf), path,
			  sizeof(path));
	if (n == -ENOENT) {
		note(why, "PMU %s has no event %s", pmu, path);
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	if (n < 0) {
		pr_warn("cannot read %s: %s\n", path, strerror(-n));
		return n;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
		n--;
	return apply_terms(attr, pmu, buf, (size_t)n, true, why);
}

static int apply_terms(struct perf_event_attr *attr, const char *pmu,
		       const char *terms, size_t len, bool in_alias,
		       struct notes *why)
{
	size_t i = 0;

	for (;;) {
		const char *comma = memchr(terms + i, ',', len - i);
		size_t tlen = comma ? (size_t)(comma - terms) - i : len - i;
		int err;

		if (!tlen) {
			pr_warn("empty term in %s/%.*s/\n", pmu, SHOWN(len),
				terms);
			return -EVPROF_ERR_BAD_SPEC;
		}
		err = apply_term(attr, pmu, terms + i, tlen, in_alias, why);
		if (err)
			return err;
		if (!comma)
			return 0;
		i += tlen + 1;
	}
}

/* pmu/terms/ (s ends with the second '/'). */
static int resolve_pmu(struct perf_event_attr *attr, const char *s,
		       struct notes *why)
{
	const char *slash = strchr(s, '/');
	size_t plen = (size_t)(slash - s), tlen = strlen(slash + 1) - 1;
	char pmu[COMPONENT_MAX], path[PATH_MAX], buf[32];
	uint64_t type;
	int n;

	if (!safe_component(s, plen) || !tlen || memchr(slash + 1, '/', tlen)) {
		pr_warn("bad PMU event '%.*s': want pmu/term=value,.../\n",
			SHOW_MAX, s);
		return -EVPROF_ERR_BAD_SPEC;
	}
	memcpy(pmu, s, plen);
	pmu[plen] = '\0';
	snprintf(path, sizeof(path), PMU_DEVICES "/%s/type", pmu);
	n = evprof__read_file(path, buf, sizeof(buf));
	if (n == -ENOENT) {
		note(why, "no PMU %s (%s)", pmu, path);
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	if (n < 0) {
		pr_warn("cannot read %s: %s\n", path, strerror(-n));
		return n;
	}
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	if (parse_u64(buf, (size_t)n, &type) || type > UINT32_MAX) {
		pr_warn("%s holds no PMU type\n", path);
		return -EVPROF_ERR_MALFORMED;
	}
	attr->type = (uint32_t)type;
	return apply_terms(attr, pmu, slash + 1, tlen, false, why);
}

/* ---- libpfm4
 * ----------------------------------------------------------------- */

#ifdef EVPROF_HAVE_LIBPFM
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_err;

static void pfm_init(void)
{
	pfm_init_err = pfm_initialize();
}

static int resolve_pfm(struct perf_event_attr *attr, const char *s,
		       struct notes *why)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	int ret;

	pthread_once(&pfm_once, pfm_init);
	if (pfm_init_err != PFM_SUCCESS) {
		note(why, "libpfm4 unavailable: %s",
		     pfm_strerror(pfm_init_err));
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	/* User and kernel by default, like every other kind; :u/:k narrow. */
	ret = pfm_get_os_event_encoding(s, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		note(why, "libpfm4: %s", pfm_strerror(ret));
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	*attr = a;
	return 0;
}
#endif

/* ---- one spec
 * ------------------------------------------------------------------ */

static void warn_unknown(const char *s, const struct notes *why)
{
	char known[1024];
	size_t off = 0;

#define KNOWN_ADD(...)                                                         \
	do {                                                                   \
		if (off < sizeof(known))                                       \
			off += (size_t)snprintf(                               \
			    known + off, sizeof(known) - off, __VA_ARGS__);    \
	} while (0)
	for (size_t i = 0; i < ARRAY_SIZE(hw_events); i++)
		if (!hw_events[i].alias)
			KNOWN_ADD("%s%s", i ? ", " : "", hw_events[i].name);
	KNOWN_ADD(" (hardware), ");
	for (size_t i = 0; i < ARRAY_SIZE(sw_events); i++)
		if (!sw_events[i].alias)
			KNOWN_ADD("%s%s", i ? ", " : "", sw_events[i].name);
	KNOWN_ADD(" (software), <cache>-<op>-<result> cache events (");
	for (size_t i = 0; i < ARRAY_SIZE(cache_types); i++)
		if (!cache_types[i].alias)
			KNOWN_ADD("%s%s", i ? "/" : "", cache_types[i].name);
	KNOWN_ADD(" - load/store/prefetch - misses or nothing), sys:name "
		  "tracepoints, rNNNN raw, pmu/term=val/");
#ifdef EVPROF_HAVE_LIBPFM
	KNOWN_ADD(", libpfm4 names");
#endif
#undef KNOWN_ADD
	pr_warn("unknown event '%.*s'%s%s%s; known: %s\n", SHOW_MAX, s,
		why->len ? " (" : "", why->text, why->len ? ")" : "", known);
}

/* Finds what base names; -EVPROF_ERR_UNKNOWN_EVENT quietly (see why). */
static int resolve(struct perf_event_attr *attr, const char *base,
		   struct notes *why)
{
	const char *colon = strchr(base, ':');
	struct notes fail = {.len = 0};
	int err, tp_err = 0;

	if (strchr(base, '/'))
		return resolve_pmu(attr, base, why);
	err = resolve_builtin(attr, base);
	if (err != -EVPROF_ERR_UNKNOWN_EVENT)
		return err;
	if (colon && !strchr(colon + 1, ':')) {
		err = resolve_tracepoint(attr, base, why, &fail);
		if (!err)
			return 0;
		if (err != -EVPROF_ERR_UNKNOWN_EVENT)
			tp_err = err;
	}
#ifdef EVPROF_HAVE_LIBPFM
	err = resolve_pfm(attr, base, why);
	if (!err)
		return 0;
#endif
	if (tp_err) {
		pr_warn("event '%.*s': %s\n", SHOW_MAX, base, fail.text);
		return tp_err;
	}
	return err;
}

static bool type_takes_slot(uint32_t type)
{
	switch (type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
	case PERF_TYPE_RAW:
		return true;
	case PERF_TYPE_SOFTWARE:
	case PERF_TYPE_TRACEPOINT:
	case PERF_TYPE_BREAKPOINT: /* debug registers, not counters */
		return false;
	default:
		return evprof__pmu_is_cpu(evprof_attr__type_name(type));
	}
}

/*
 * Whether the first len bytes of s, which are followed by ":<not modifier
 * letters>", name an event, so that the suffix is a bad modifier:
 * "cycles:x" and "sched:sched_switch:x" but not "sched:sched_switch" or
 * libpfm4's "INST_RETIRED:ANY_P:c=1". A prefix with its own ':' is only
 * tried once the whole string turned out unknown. Clobbers s[len].
 */
static bool bad_modifier(char *s, size_t len, bool whole_unknown)
{
	struct perf_event_attr probe;
	struct notes quiet = {.len = 0};

	s[len] = '\0';
	memset(&probe, 0, sizeof(probe));
	if (!strchr(s, ':'))
		return !resolve_builtin(&probe, s);
	return whole_unknown && !resolve(&probe, s, &quiet);
}

/*
 * Splits off the modifiers: after the PMU syntax's closing '/', else after
 * the last ':' when what follows is made of modifier letters.
 */
static int parse_spec(struct evprof_event_spec *spec, const char *str)
{
	size_t len = strlen(str);
	char base[EVPROF_EVENT_NAME_MAX];
	struct notes why = {.len = 0};
	struct mods m = {.p = 0};
	const char *colon;
	int err;

	if (!len) {
		pr_warn("empty event name\n");
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (len >= sizeof(spec->name)) {
		pr_warn("event name '%.*s...' is longer than %d bytes\n",
			SHOW_MAX / 4, str, EVPROF_EVENT_NAME_MAX - 1);
		return -EVPROF_ERR_BAD_SPEC;
	}
	memset(spec, 0, sizeof(*spec));
	memcpy(spec->name, str, len + 1);
	memcpy(base, str, len + 1);

	colon = strrchr(str, ':');
	if (strchr(str, '/')) {
		char *end = strrchr(base, '/');

		if (strchr(base, '/') == end) {
			pr_warn("unterminated PMU event '%s': want "
				"pmu/term=value,.../\n",
				str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		if (end[1] && (end[1] != ':' ||
			       parse_mods(end + 2, strlen(end + 2), &m))) {
			pr_warn("bad modifiers in '%s': want pmu/.../ then :u, "
				":k, :h, :p, :pp or :ppp\n",
				str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		end[1] = '\0';
		err = resolve(&spec->attr, base, &why);
	} else if (colon && !parse_mods(colon + 1,
					len - (size_t)(colon - str) - 1, &m)) {
		base[colon - str] = '\0';
		err = resolve(&spec->attr, base, &why);
		if (err == -EVPROF_ERR_UNKNOWN_EVENT) {
			/* A tracepoint or libpfm name may end like modifiers.
			 */
			memset(&m, 0, sizeof(m));
			err = resolve(&spec->attr, str, &why);
		}
	} else {
		size_t at = colon ? (size_t)(colon - str) : 0;
		bool bad = colon && bad_modifier(base, at, false);

		if (!bad)
			err = resolve(&spec->attr, str, &why);
		if (!bad && err == -EVPROF_ERR_UNKNOWN_EVENT && colon)
			bad = bad_modifier(base, at, true);
		if (bad) {
			pr_warn("unknown modifier '%s' in '%s': want :u, :k, "
				":h, :p, :pp or :ppp\n",
				colon + 1, str);
			return -EVPROF_ERR_BAD_SPEC;
		}
	}
	if (err == -EVPROF_ERR_UNKNOWN_EVENT)
		warn_unknown(str, &why);
	if (err)
		return err;
	apply_mods(&spec->attr, &m);
	spec->attr.size = sizeof(spec->attr);
	spec->hw_slot = type_takes_slot(spec->attr.type);
	return 0;
}

int evprof_event_spec__parse(struct evprof_event_spec *spec, const char *str)
{
	if (!spec || !str)
		return -EINVAL;
	return parse_spec(spec, str);
}

/* ---- lists
 * ----------------------------------------------------------------------- */

void evprof_event_list__free(struct evprof_event_list *list)
{
	if (!list)
		return;
	free(list->events);
	free(list->groups);
	free(list);
}

struct list_builder {
	struct evprof_event_list *list;
	size_t cap_events, cap_groups;
};

static int add_event(struct list_builder *b, const char *s, size_t len,
		     const char *full, size_t at)
{
	struct evprof_event_list *l = b->list;
	char item[EVPROF_EVENT_NAME_MAX];
	int err;

	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	if (!len) {
		pr_warn("empty event at offset %zu of '%.*s'\n", at, SHOW_MAX,
			full);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (len >= sizeof(item)) {
		pr_warn("event '%.*s...' is longer than %d bytes\n",
			SHOW_MAX / 4, s, EVPROF_EVENT_NAME_MAX - 1);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (l->nr_events == b->cap_events) {
		size_t cap = b->cap_events ? b->cap_events * 2 : 8;
		void *p = realloc(l->events, cap * sizeof(*l->events));

		if (!p)
			return -ENOMEM;
		l->events = p;
		b->cap_events = cap;
	}
	memcpy(item, s, len);
	item[len] = '\0';
	err = parse_spec(&l->events[l->nr_events], item);
	if (err)
		return err;
	l->nr_events++;
	return 0;
}

static int add_group(struct list_builder *b, size_t first)
{
	struct evprof_event_list *l = b->list;

	if (l->nr_groups == b->cap_groups) {
		size_t cap = b->cap_groups ? b->cap_groups * 2 : 8;
		void *p = realloc(l->groups, cap * sizeof(*l->groups));

		if (!p)
			return -ENOMEM;
		l->groups = p;
		b->cap_groups = cap;
	}
	l->groups[l->nr_groups].first = first;
	l->groups[l->nr_groups].nr = l->nr_events - first;
	l->nr_groups++;
	return 0;
}

/*
 * Length of the item at s: up to a ',', '{' or '}' that is not between the
 * two slashes of pmu/.../, or to the end.
 */
static size_t item_len(const char *s)
{
	bool in_pmu = false;
	size_t i;

	for (i = 0; s[i]; i++) {
		if (s[i] == '/')
			in_pmu = !in_pmu;
		else if (!in_pmu && strchr(",{}", s[i]))
			break;
	}
	return i;
}

/* {a,b}:mods applies mods to every member, after the member's own. */
static int apply_group_mods(struct evprof_event_list *l, size_t first,
			    const char *mods, size_t len, const char *full)
{
	struct mods m;

	if (parse_mods(mods, len, &m)) {
		pr_warn("bad group modifiers ':%.*s' in '%.*s': want :u, :k, "
			":h, :p, :pp or :ppp\n",
			SHOWN(len), mods, SHOW_MAX, full);
		return -EVPROF_ERR_BAD_SPEC;
	}
	for (size_t i = first; i < l->nr_events; i++) {
		struct evprof_event_spec *e = &l->events[i];
		size_t nlen = strlen(e->name);

		if (nlen + 1 + len >= sizeof(e->name)) {
			pr_warn("event '%s:%.*s' is longer than %d bytes\n",
				e->name, SHOWN(len), mods,
				EVPROF_EVENT_NAME_MAX - 1);
			return -EVPROF_ERR_BAD_SPEC;
		}
		/* Named as perf names them: "{cycles,...}:u" has "cycles:u". */
		e->name[nlen] = ':';
		memcpy(e->name + nlen + 1, mods, len);
		e->name[nlen + 1 + len] = '\0';
		apply_mods(&e->attr, &m);
	}
	return 0;
}

static int parse_group(struct list_builder *b, const char *str, size_t *pos)
{
	size_t i = *pos + 1, first = b->list->nr_events;
	int err;

	for (;;) {
		size_t n;

		while (str[i] == ' ' || str[i] == '\t')
			i++;
		n = item_len(str + i);
		if (str[i + n] == '{') {
			pr_warn("nested '{' at offset %zu of '%.*s': groups do "
				"not nest\n",
				i + n, SHOW_MAX, str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		if (!str[i + n]) {
			pr_warn("'{' at offset %zu of '%.*s' has no '}'\n",
				*pos, SHOW_MAX, str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		err = add_event(b, str + i, n, str, i);
		if (err)
			return err;
		i += n + 1;
		if (str[i - 1] == '}')
			break;
	}
	if (str[i] == ':') {
		size_t n = strcspn(str + i + 1, ", \t");

		err = apply_group_mods(b->list, first, str + i + 1, n, str);
		if (err)
			return err;
		i += n + 1;
	}
	*pos = i;
	return add_group(b, first);
}

int evprof_event_list__parse(struct evprof_event_list **listp, const char *str)
{
	struct list_builder b = {.list = NULL};
	size_t i = 0;
	int err = 0;

	if (!listp || !str)
		return -EINVAL;
	*listp = NULL;
	b.list = calloc(1, sizeof(*b.list));
	if (!b.list)
		return -ENOMEM;
	for (;;) {
		while (str[i] == ' ' || str[i] == '\t')
			i++;
		if (str[i] == '{') {
			err = parse_group(&b, str, &i);
		} else {
			size_t n = item_len(str + i);

			if (str[i + n] == '{' || str[i + n] == '}') {
				pr_warn(
				    "unexpected '%c' at offset %zu of '%.*s'\n",
				    str[i + n], i + n, SHOW_MAX, str);
				err = -EVPROF_ERR_BAD_SPEC;
				break;
			}
			err = add_event(&b, str + i, n, str, i);
			if (!err)
				err = add_group(&b, b.list->nr_events - 1);
			i += n;
		}
		if (err)
			break;
		while (str[i] == ' ' || str[i] == '\t')
			i++;
		if (!str[i])
			break;
		if (str[i] != ',') {
			pr_warn("unexpected '%c' at offset %zu of '%.*s'\n",
				str[i], i, SHOW_MAX, str);
			err = -EVPROF_ERR_BAD_SPEC;
			break;
		}
		i++;
	}
	if (err) {
		evprof_event_list__free(b.list);
		return err;
	}
	*listp = b.list;
	return 0;
}
