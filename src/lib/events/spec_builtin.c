// SPDX-License-Identifier: MIT
/*
 * Names that need no outside facts: perf's generic hardware, software and
 * hardware cache event names, and rNNNN raw events.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include <evprof/event.h>

#include "spec_builtin.h"
#include "spec_text.h"

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
	if (evprof__spec_digits(s + 1, len, 16, &v))
		return -EVPROF_ERR_BAD_SPEC;
	attr->type = PERF_TYPE_RAW;
	attr->config = v;
	return 0;
}

/* Hardware, software, cache and raw names: no I/O, no messages on miss. */
int evprof__spec_resolve_builtin(struct perf_event_attr *attr, const char *s)
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

void evprof__spec_builtin_known(char *buf, size_t len, size_t *off)
{
#define KNOWN_ADD(...)                                                         \
	do {                                                                   \
		if (*off < len)                                                \
			*off += (size_t)snprintf(buf + *off, len - *off,       \
						 __VA_ARGS__);                 \
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
	KNOWN_ADD(" - load/store/prefetch - misses or nothing), rNNNN raw");
#undef KNOWN_ADD
}

const char *evprof__spec_builtin_closest(const char *s, size_t len)
{
	const char *names[ARRAY_SIZE(hw_events) + ARRAY_SIZE(sw_events)];
	char word[EVPROF_EVENT_NAME_MAX];
	size_t n = 0;

	for (size_t i = 0; i < ARRAY_SIZE(hw_events); i++)
		if (!hw_events[i].alias)
			names[n++] = hw_events[i].name;
	for (size_t i = 0; i < ARRAY_SIZE(sw_events); i++)
		if (!sw_events[i].alias)
			names[n++] = sw_events[i].name;
	snprintf(word, sizeof(word), "%.*s", (int)len, s);
	return evprof_closest_name(word, names, n);
}
