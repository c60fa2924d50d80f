// SPDX-License-Identifier: MIT
/*
 * pmu/term=val,.../ events as sysfs describes them: the PMU's type, its
 * format terms (which config bits a term fills) and its named events
 * (aliases for a list of terms).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "host.h"
#include "spec_sysfs.h"

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
	snprintf(path, plen, "%s/%s/%s/%.*s", evprof__host()->pmu_root, pmu,
		 dir, (int)nlen, name);
	return evprof__read_file(path, buf, len);
}

static int apply_terms(struct perf_event_attr *attr, const char *pmu,
		       const char *terms, size_t len, bool in_alias,
		       struct spec_notes *why);

/* One term: config*=v, a format term (=v, or alone for 1), or an alias. */
static int apply_term(struct perf_event_attr *attr, const char *pmu,
		      const char *t, size_t len, bool in_alias,
		      struct spec_notes *why)
{
	const char *eq = memchr(t, '=', len);
	size_t klen = eq ? (size_t)(eq - t) : len;
	char path[PATH_MAX], buf[4096];
	uint64_t v = 1;
	int n;

	if (!evprof__spec_safe_component(t, klen)) {
		pr_warn("bad term '%.*s' in %s/../\n", SHOWN(len), t, pmu);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (eq && evprof__spec_u64(eq + 1, len - klen - 1, &v)) {
		pr_warn("bad value in term '%.*s' of %s/../ (want decimal or "
			"0x hex)\n",
			SHOWN(len), t, pmu);
		return -EVPROF_ERR_BAD_SPEC;
	}
	if (eq) {
		int r = evprof__spec_sample_term(attr, t, klen, v);

		if (r)
			return r < 0 ? r : 0;
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
		pr_warn(
		    "PMU %s has no format term '%.*s' (see %s/%s/format/)\n",
		    pmu, (int)klen, t, evprof__host()->pmu_root, pmu);
		return -EVPROF_ERR_BAD_SPEC;
	}
	n = read_pmu_file(pmu, "events", t, klen, buf, sizeof(buf), path,
			  sizeof(path));
	if (n == -ENOENT) {
		evprof__spec_note(why, "PMU %s has no event %s", pmu, path);
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
		       struct spec_notes *why)
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
int evprof__spec_resolve_pmu(struct perf_event_attr *attr, const char *s,
			     struct spec_notes *why)
{
	const char *slash = strchr(s, '/');
	size_t plen = (size_t)(slash - s), tlen = strlen(slash + 1) - 1;
	char pmu[SPEC_COMPONENT_MAX], path[PATH_MAX], buf[32];
	uint64_t type;
	int n;

	if (!evprof__spec_safe_component(s, plen) || !tlen ||
	    memchr(slash + 1, '/', tlen)) {
		pr_warn("bad PMU event '%.*s': want pmu/term=value,.../\n",
			SHOW_MAX, s);
		return -EVPROF_ERR_BAD_SPEC;
	}
	memcpy(pmu, s, plen);
	pmu[plen] = '\0';
	snprintf(path, sizeof(path), "%s/%s/type", evprof__host()->pmu_root,
		 pmu);
	n = evprof__read_file(path, buf, sizeof(buf));
	if (n == -ENOENT) {
		evprof__spec_note(why, "no PMU %s (%s)", pmu, path);
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	if (n < 0) {
		pr_warn("cannot read %s: %s\n", path, strerror(-n));
		return n;
	}
	while (n > 0 && buf[n - 1] == '\n')
		n--;
	if (evprof__spec_u64(buf, (size_t)n, &type) || type > UINT32_MAX) {
		pr_warn("%s holds no PMU type\n", path);
		return -EVPROF_ERR_MALFORMED;
	}
	attr->type = (uint32_t)type;
	return apply_terms(attr, pmu, slash + 1, tlen, false, why);
}
