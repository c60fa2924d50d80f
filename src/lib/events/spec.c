// SPDX-License-Identifier: MIT
/*
 * One event spec as perf users type it: splits off the modifiers, asks the
 * resolvers (built-in names, tracepoints, sysfs PMUs, libpfm4) what the
 * name is, and reports an unknown one once with every reason.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <evprof/event.h>

#include "pmu.h"
#include "spec.h"
#include "spec_builtin.h"
#include "spec_pfm.h"
#include "spec_sysfs.h"
#include "spec_text.h"
#include "spec_trace.h"

static void warn_unknown(const char *s, const struct spec_notes *why)
{
	char known[1024];
	size_t off = 0;

	evprof__spec_builtin_known(known, sizeof(known), &off);
	if (off < sizeof(known))
		snprintf(known + off, sizeof(known) - off,
			 ", sys:name tracepoints, pmu/term=val/%s",
			 evprof__spec_have_pfm() ? ", libpfm4 names" : "");
	const char *closest = evprof__spec_builtin_closest(s, strcspn(s, ":/"));

	pr_warn("unknown event '%.*s'%s%s%s%s%s%s; known: %s\n", SHOW_MAX, s,
		closest ? " (did you mean '" : "", closest ? closest : "",
		closest ? "'?)" : "", why->len ? " (" : "", why->text,
		why->len ? ")" : "", known);
}

static int resolve(struct perf_event_attr *attr, const char *base,
		   struct spec_notes *why);

/*
 * name/terms/ where name is no PMU: an event name with perf's sampling
 * terms only (page-faults/period=64/). Quietly unknown when name is.
 */
static int resolve_named(struct perf_event_attr *attr, const char *base,
			 struct spec_notes *why)
{
	const char *slash = strchr(base, '/');
	const char *t = slash + 1, *end = base + strlen(base) - 1;
	char name[EVPROF_EVENT_NAME_MAX];
	int err;

	memcpy(name, base, (size_t)(slash - base));
	name[slash - base] = '\0';
	err = resolve(attr, name, why);
	while (!err && t < end) {
		const char *comma = memchr(t, ',', (size_t)(end - t));
		size_t len = (size_t)((comma ? comma : end) - t);
		const char *eq = memchr(t, '=', len);
		uint64_t v;

		err = -EVPROF_ERR_BAD_SPEC;
		if (!eq ||
		    evprof__spec_u64(eq + 1, len - (size_t)(eq - t) - 1, &v)) {
			pr_warn("bad term '%.*s' in '%s': after an event name, "
				"want period=N or freq=N\n",
				SHOWN(len), t, base);
			break;
		}
		err = evprof__spec_sample_term(attr, t, (size_t)(eq - t), v);
		if (!err) {
			pr_warn("unknown term '%.*s' in '%s': after an event "
				"name, want period=N or freq=N\n",
				SHOWN(len), t, base);
			err = -EVPROF_ERR_BAD_SPEC;
		}
		if (err < 0)
			break;
		err = 0;
		t += len + 1;
	}
	return err;
}

/*
 * pmu/terms/, else name/terms/ (then *named, where given, is set): see
 * resolve().
 */
static int resolve_slashed(struct perf_event_attr *attr, const char *base,
			   struct spec_notes *why, bool *named)
{
	const char *colon = strchr(base, ':');
	int err = -EVPROF_ERR_UNKNOWN_EVENT;

	if (!colon || colon > strchr(base, '/'))
		err = evprof__spec_resolve_pmu(attr, base, why);
	if (err != -EVPROF_ERR_UNKNOWN_EVENT)
		return err;
	if (named)
		*named = true;
	return resolve_named(attr, base, why);
}

/* Finds what base names; -EVPROF_ERR_UNKNOWN_EVENT quietly (see why). */
static int resolve(struct perf_event_attr *attr, const char *base,
		   struct spec_notes *why)
{
	const char *colon = strchr(base, ':');
	struct spec_notes fail = {.len = 0};
	int err, tp_err = 0;

	if (strchr(base, '/'))
		return resolve_slashed(attr, base, why, NULL);
	err = evprof__spec_resolve_builtin(attr, base);
	if (err != -EVPROF_ERR_UNKNOWN_EVENT)
		return err;
	if (colon && !strchr(colon + 1, ':')) {
		err = evprof__spec_resolve_tracepoint(attr, base, why, &fail);
		if (!err)
			return 0;
		if (err != -EVPROF_ERR_UNKNOWN_EVENT)
			tp_err = err;
	}
	err = evprof__spec_resolve_pfm(attr, base, why);
	if (!err)
		return 0;
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
	struct spec_notes quiet = {.len = 0};

	s[len] = '\0';
	memset(&probe, 0, sizeof(probe));
	if (!strchr(s, ':'))
		return !evprof__spec_resolve_builtin(&probe, s);
	return whole_unknown && !resolve(&probe, s, &quiet);
}

/*
 * Splits off the modifiers: after the PMU syntax's closing '/', else after
 * the last ':' when what follows is made of modifier letters.
 */
int evprof__spec_parse(struct evprof_event_spec *spec, const char *str)
{
	size_t len = strlen(str);
	char base[EVPROF_EVENT_NAME_MAX];
	struct spec_notes why = {.len = 0};
	struct spec_mods m = {.p = 0};
	const char *colon;
	bool named = false;
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
		if (end[1] &&
		    (end[1] != ':' ||
		     evprof__spec_parse_mods(end + 2, strlen(end + 2), &m))) {
			pr_warn("bad modifiers in '%s': want pmu/.../ then :u, "
				":k, :h, :p, :pp or :ppp\n",
				str);
			return -EVPROF_ERR_BAD_SPEC;
		}
		end[1] = '\0';
		err = resolve_slashed(&spec->attr, base, &why, &named);
		/* The terms set how it samples, not what: the name drops them. */
		if (!err && named)
			snprintf(spec->name, sizeof(spec->name), "%.*s%s",
				 (int)(strchr(str, '/') - str), str,
				 strrchr(str, '/') + 1);
	} else if (colon &&
		   !evprof__spec_parse_mods(
		       colon + 1, len - (size_t)(colon - str) - 1, &m)) {
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
	evprof__spec_apply_mods(&spec->attr, &m);
	spec->attr.size = sizeof(spec->attr);
	spec->hw_slot = type_takes_slot(spec->attr.type);
	return 0;
}

int evprof_event_spec__parse(struct evprof_event_spec *spec, const char *str)
{
	if (!spec || !str)
		return -EINVAL;
	return evprof__spec_parse(spec, str);
}
