// SPDX-License-Identifier: MIT
/*
 * Whether a group fits the PMU. Per core PMU (hybrid machines open a
 * generic event on each): a trial open decides where it can be made; the
 * tables (pmu_facts.c) decide where it cannot and give every refusal its
 * numbers: fixed counters taken first, as the x86 and Arm schedulers do,
 * the rest on general counters, less what the NMI watchdog holds.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/event.h>
#include <evprof/pmu.h>

#include "pmu.h"

#define MAX_CORE_PMUS 8
#define MSG_MAX	      1024

/* One core PMU's share of a group, placed as the tables say. */
struct share {
	const struct evprof_core_pmu *pmu; /* NULL: no core PMU known */
	struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];
	size_t nr;	       /* attrs[] kept for the trial */
	size_t members;	       /* hardware members, kept or not */
	unsigned int free;     /* fixed counters not yet taken */
	unsigned int on_fixed; /* members on fixed counters */
	unsigned int general;  /* members that need a general counter */
	unsigned int pushed;   /* cycles off fixed counter 1: the watchdog */
	unsigned int precise;  /* :p members: counter constraints (PEBS) */
	bool ref_stuck;	       /* Intel ref-cycles without fixed counter 2 */
};

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

__attribute__((format(printf, 3, 4))) static void append(char *buf, size_t len,
							 const char *fmt, ...)
{
	size_t off = strlen(buf);
	va_list ap;

	if (off + 1 >= len)
		return;
	va_start(ap, fmt);
	vsnprintf(buf + off, len - off, fmt, ap);
	va_end(ap);
}

/*
 * Which of pmus[n] attr counts on: -1 for a generic event on a hybrid
 * machine (opened on each), else an index (the first PMU for what names
 * none it knows: PERF_TYPE_RAW is the first core PMU's, as the kernel's).
 */
static int pmu_of(const struct evprof_core_pmu *pmus, int n,
		  const struct perf_event_attr *a)
{
	uint32_t t = a->type;

	if (t == PERF_TYPE_HARDWARE || t == PERF_TYPE_HW_CACHE) {
		if (!(a->config >> 32))
			return n > 1 ? -1 : 0;
		t = (uint32_t)(a->config >> 32);
	}
	for (int i = 0; i < n; i++)
		if (pmus[i].type == t)
			return i;
	return 0;
}

/*
 * The fixed counter attr could use on p, or 0: the generic events, and
 * their raw encodings as the kernel's fixed constraints match them
 * (arch/x86/events/intel/core.c: 0x00c0, 0x003c, 0x0300 exactly; Arm
 * CPU_CYCLES 0x11). A precise event samples through PEBS, on the counters
 * its constraint allows, so it is not placed on a fixed one here.
 */
static unsigned int fixed_class(const struct evprof_core_pmu *p,
				const struct perf_event_attr *a)
{
	bool arm = !strncmp(p->name, "armv", 4);
	uint64_t c = a->config;

	if (!p->fixed || a->precise_ip || a->type == PERF_TYPE_HW_CACHE)
		return 0;
	if (a->type == PERF_TYPE_HARDWARE) {
		switch (c & 0xffffffffu) {
		case PERF_COUNT_HW_CPU_CYCLES:
			return EVPROF_FIXED_CYCLES;
		case PERF_COUNT_HW_INSTRUCTIONS:
			return arm ? 0 : EVPROF_FIXED_INSTRUCTIONS;
		case PERF_COUNT_HW_REF_CPU_CYCLES:
			return arm ? 0 : EVPROF_FIXED_REF_CYCLES;
		default:
			return 0;
		}
	}
	if (arm)
		return c == 0x11 ? EVPROF_FIXED_CYCLES : 0;
	return c == 0x3c    ? EVPROF_FIXED_CYCLES
	       : c == 0xc0  ? EVPROF_FIXED_INSTRUCTIONS
	       : c == 0x300 ? EVPROF_FIXED_REF_CYCLES
			    : 0;
}

/* Places member a of s on a fixed or a general counter, as the tables say. */
static void place(struct share *s, const struct perf_event_attr *a)
{
	const struct evprof_core_pmu *p = s->pmu;
	unsigned int c = p ? fixed_class(p, a) : 0;

	s->precise += a->precise_ip > 0;
	if (c && (s->free & c)) {
		s->free &= ~c;
		s->on_fixed++;
		return;
	}
	/* 0x0300 is a pseudo-encoding: fixed counter 2 or nothing. */
	if (c == EVPROF_FIXED_REF_CYCLES) {
		s->ref_stuck = true;
		return;
	}
	s->general++;
	if (c == EVPROF_FIXED_CYCLES && (p->watchdog_fixed & c))
		s->pushed++;
}

static unsigned int general_free(const struct evprof_core_pmu *p)
{
	return p->general > p->watchdog_general
		   ? p->general - p->watchdog_general
		   : 0;
}

/* Whether the tables say s fits; unknown counts say nothing. */
static bool table_fits(const struct share *s)
{
	if (!s->pmu)
		return true;
	if (s->ref_stuck)
		return false;
	return !s->pmu->general || s->general <= general_free(s->pmu);
}

/* The tables' account of s, for a refusal. */
static void explain(const struct share *s, char *buf, size_t len)
{
	const struct evprof_core_pmu *p = s->pmu;

	if (!p)
		return;
	if (p->general)
		append(buf, len,
		       "; it needs %u general-purpose counters (%u more "
		       "events on fixed counters) and %s has %u (%s)",
		       s->general, s->on_fixed, p->name, p->general,
		       p->general_from);
	else
		append(buf, len,
		       "; it needs %u general-purpose counters (%u more "
		       "events on fixed counters); how many %s has is %s",
		       s->general, s->on_fixed, p->name, p->general_from);
	if (p->watchdog_general)
		append(buf, len, ", of which the NMI watchdog holds %u",
		       p->watchdog_general);
	if (s->on_fixed)
		append(buf, len, "; fixed counters: %s", p->fixed_from);
	if (s->pushed)
		append(buf, len,
		       "; cycles takes a general counter because the NMI "
		       "watchdog holds the fixed cycles counter");
	if (p->watchdog_general || s->pushed)
		append(buf, len,
		       " (free it with 'sysctl kernel.nmi_watchdog=0'; %s)",
		       p->watchdog_from);
	if (s->ref_stuck)
		append(buf, len,
		       "; ref-cycles counts only on fixed counter 2, which %s",
		       p->fixed & EVPROF_FIXED_REF_CYCLES
			   ? "another ref-cycles holds"
			   : "this PMU lacks");
	if (s->precise)
		append(buf, len,
		       "; %u precise (:p) events may use only some counters",
		       s->precise);
}

/* Decides s: 0 or -EVPROF_ERR_GROUP_TOO_BIG after a message. */
static int decide(const struct share *s, const char *members)
{
	const char *name = s->pmu ? s->pmu->name : "the PMU";
	char msg[MSG_MAX];
	int err = E2BIG;
	/* A group larger than a read can hold is not tried: it never opens. */
	enum evprof_trial t =
	    s->members > s->nr
		? EVPROF_TRIAL_CANNOT
		: evprof__pmu_trial_cached(
		      s->attrs, s->nr,
		      s->pmu && s->pmu->hybrid ? s->pmu->name : NULL, &err);

	if (t == EVPROF_TRIAL_FITS)
		return 0;
	if (t == EVPROF_TRIAL_NO_FIT) {
		snprintf(msg, sizeof(msg),
			 "group %s cannot be scheduled on %s: a trial open "
			 "pinned on this thread never ran",
			 members, name);
		explain(s, msg, sizeof(msg));
		pr_warn("%s; pinned events of other tools hold counters too; "
			"split it or set EVPROF_MAX_GROUP_EVENTS\n",
			msg);
		return -EVPROF_ERR_GROUP_TOO_BIG;
	}
	if (table_fits(s)) {
		if (s->precise)
			pr_debug("group %s: %u precise events on %s, whose "
				 "counter constraints the tables do not "
				 "know (no trial decided: %s)\n",
				 members, s->precise, name,
				 t == EVPROF_TRIAL_UNDECIDED
				     ? "it never ran here"
				     : strerror(err));
		return 0;
	}
	snprintf(msg, sizeof(msg), "group %s does not fit %s", members, name);
	explain(s, msg, sizeof(msg));
	pr_warn("%s; split it or set EVPROF_MAX_GROUP_EVENTS\n", msg);
	return -EVPROF_ERR_GROUP_TOO_BIG;
}

/* The shares of a group on pmus[n] (one share, no PMU, when n is 0). */
static size_t split(const struct evprof_event_spec *specs, size_t nr,
		    const struct evprof_core_pmu *pmus, int n,
		    struct share *shares)
{
	size_t nr_shares = n > 0 ? (size_t)n : 1;

	for (size_t i = 0; i < nr_shares; i++) {
		const struct evprof_core_pmu *p = n > 0 ? &pmus[i] : NULL;

		shares[i].pmu = p;
		shares[i].free = p ? p->fixed & ~p->watchdog_fixed : 0;
	}
	for (size_t i = 0; i < nr; i++) {
		int at;

		if (!specs[i].hw_slot)
			continue;
		at = n > 0 ? pmu_of(pmus, n, &specs[i].attr) : 0;
		for (size_t k = 0; k < nr_shares; k++) {
			struct share *s = &shares[k];
			struct perf_event_attr a = specs[i].attr;

			if (at >= 0 && (size_t)at != k)
				continue;
			if (at < 0) /* as evprof_event_spec__on_pmu() */
				a.config |= (uint64_t)pmus[k].type << 32;
			place(s, &a);
			if (s->nr < EVPROF_SNAPSHOT_MAX)
				s->attrs[s->nr++] = a;
			s->members++;
		}
	}
	return nr_shares;
}

/* EVPROF_MAX_GROUP_EVENTS: the user's count, for every hardware event. */
static int validate_env(const struct evprof_event_spec *specs, size_t nr,
			size_t slots)
{
	const char *source;
	unsigned int counters = evprof_pmu_counters(&source);
	char members[512];

	if (slots <= counters)
		return (int)slots;
	group_names(specs, nr, members, sizeof(members));
	pr_warn("group %s needs %zu hardware counters but the PMU has %u (from "
		"%s); split it or set EVPROF_MAX_GROUP_EVENTS\n",
		members, slots, counters, source);
	return -EVPROF_ERR_GROUP_TOO_BIG;
}

int evprof_group__validate(const struct evprof_event_spec *specs, size_t nr)
{
	struct evprof_core_pmu pmus[MAX_CORE_PMUS];
	struct share *shares;
	char members[512];
	size_t slots = 0, nr_shares;
	int n, err = 0;

	if (!specs && nr)
		return -EINVAL;
	for (size_t i = 0; i < nr; i++)
		slots += specs[i].hw_slot;
	if (!slots)
		return 0;
	if (getenv("EVPROF_MAX_GROUP_EVENTS"))
		return validate_env(specs, nr, slots);
	n = evprof_core_pmus(pmus, MAX_CORE_PMUS);
	if (n < 0)
		n = 0;
	if (n > MAX_CORE_PMUS)
		n = MAX_CORE_PMUS;
	shares = calloc(n > 0 ? (size_t)n : 1, sizeof(*shares));
	if (!shares)
		return -ENOMEM;
	nr_shares = split(specs, nr, pmus, n, shares);
	group_names(specs, nr, members, sizeof(members));
	for (size_t i = 0; i < nr_shares && !err; i++)
		if (shares[i].members)
			err = decide(&shares[i], members);
	free(shares);
	return err ? err : (int)slots;
}
