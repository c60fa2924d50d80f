// SPDX-License-Identifier: MIT
/* What every engine shares: the notes and the session's options. */
#define _GNU_SOURCE
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/proc.h>

#include "engine.h"

void evprof__note(struct evprof__notes *n, const char *fmt, ...)
{
	char buf[512], **v;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n->fn)
		n->fn(buf, n->ctx);
	v = realloc(n->v, (n->n + 1) * sizeof(*v));
	if (!v)
		return;
	n->v = v;
	n->v[n->n] = strdup(buf);
	if (n->v[n->n])
		n->n++;
}

void evprof__notes_fini(struct evprof__notes *n)
{
	for (size_t i = 0; i < n->n; i++)
		free(n->v[i]);
	free(n->v);
	n->v = NULL;
	n->n = 0;
}

bool evprof__event_is_time(const struct evprof_event_spec *e)
{
	return e->attr.type == PERF_TYPE_SOFTWARE &&
	       (e->attr.config == PERF_COUNT_SW_CPU_CLOCK ||
		e->attr.config == PERF_COUNT_SW_TASK_CLOCK);
}

/* Software events that count nothing a sample could place. */
static bool never_samples(const struct evprof_event_spec *e)
{
	return e->attr.type == PERF_TYPE_SOFTWARE &&
	       (e->attr.config == PERF_COUNT_SW_DUMMY ||
		e->attr.config == PERF_COUNT_SW_BPF_OUTPUT);
}

void evprof__engine_drop_event(struct evprof__engine_setup *s, size_t e)
{
	uint64_t below = s->own & ((1ULL << e) - 1);

	memmove(&s->events[e], &s->events[e + 1],
		(s->nr - e - 1) * sizeof(s->events[0]));
	s->nr--;
	s->own = below | (s->own >> (e + 1) << e);
}

void evprof__engine_ride(struct evprof__engine_setup *s, size_t e,
			 const char *why)
{
	s->own &= ~(1ULL << e);
	evprof__note(s->notes,
		     "%s cannot sample on its own (%s): its counts ride on "
		     "%s's samples",
		     s->events[e].name, why, s->events[0].name);
}

void evprof__engine_own_counters(struct evprof__engine_setup *s,
				 bool ride_along)
{
	s->own = 0;
	for (size_t i = 1; !ride_along && i < s->nr; i++)
		if (!never_samples(&s->events[i]))
			s->own |= 1ULL << i;
}

/*
 * Fixed periods of software events. A sample with its callchain costs
 * about 4 us: on a fault-bound loop (tests/fixtures/wl_burst, 80 000
 * faults) busy CPU over the bare run was +11 ticks riding along, +10 at
 * period 16 and at 64, +14 at 4, +37 at 1 (medians of 5, 2 cores). What
 * decides is the rings: a tree of short processes faulting per CPU
 * (tests/cli/test_churn.sh, --continuous --mode cpu) lost 67 107 records
 * at period 16 and none at 64, riding along 4 215, on a loaded host. On a pipe
 * ping-pong (bench/switch_work.c) the cut member's sample at every switch
 * costs the same with context-switches sampling every 1st, 4th or 16th
 * switch, within the noise. A frequency would start them at period 1,
 * children inheriting the parent's current period: short threads would
 * sample densely at first.
 */
#define PERIOD_FAULTS	64
#define PERIOD_SWITCHES 4

void evprof__engine_member_period(const struct evprof__engine_setup *s,
				  const struct evprof_event_spec *e,
				  struct perf_event_attr *a)
{
	if (e->attr.freq || e->attr.sample_period)
		return; /* its own period= or freq= term */
	a->freq = 0;
	a->sample_freq = 0;
	if (evprof__event_is_time(e)) {
		a->sample_period =
		    s->period ? s->period : 1000000000ull / s->freq;
		return;
	}
	if (e->attr.type == PERF_TYPE_SOFTWARE) {
		switch (e->attr.config) {
		case PERF_COUNT_SW_PAGE_FAULTS:
		case PERF_COUNT_SW_PAGE_FAULTS_MIN:
			a->sample_period = PERIOD_FAULTS;
			return;
		case PERF_COUNT_SW_CONTEXT_SWITCHES:
			a->sample_period = PERIOD_SWITCHES;
			return;
		default: /* rare: major faults, migrations, ... */
			a->sample_period = 1;
			return;
		}
	}
	if (e->attr.type == PERF_TYPE_TRACEPOINT ||
	    e->attr.type == PERF_TYPE_BREAKPOINT) {
		a->sample_period = 1; /* each one is an event of interest */
		return;
	}
	/* Hardware: as the sampler, at -c or -F, as perf does. */
	if (s->period) {
		a->sample_period = s->period;
	} else {
		a->freq = 1;
		a->sample_freq = s->freq;
	}
}

void evprof__engine_sampler_rate(const struct evprof__engine_setup *s,
				 struct perf_event_attr *a)
{
	if (a->freq || a->sample_period)
		return; /* its own period= or freq= term */
	if (!s->rate_asked && a->type != PERF_TYPE_HARDWARE &&
	    a->type != PERF_TYPE_HW_CACHE && a->type != PERF_TYPE_RAW &&
	    !evprof__event_is_time(&s->events[0])) {
		/* page-faults and the like: the period a member would get */
		evprof__engine_member_period(s, &s->events[0], a);
	} else if (s->period) {
		a->sample_period = s->period;
	} else {
		a->freq = 1;
		a->sample_freq = s->freq;
	}
}

struct top_of {
	uint64_t sp, top;
};

static int find_top(const struct evprof_map *m, void *ctx)
{
	struct top_of *t = ctx;

	if (t->sp >= m->start && t->sp < m->end) {
		t->top = m->end;
		return -1; /* found: stop */
	}
	return 0;
}

/* The end of the mapping holding sp, read while the process runs. */
static uint64_t stack_top(void *ctx, pid_t pid, pid_t tid, uint64_t sp)
{
	struct top_of t = {.sp = sp};

	(void)ctx, (void)tid;
	evprof_maps__read((int)pid, find_top, &t);
	return t.top;
}

void evprof__engine_session_opts(const struct evprof__engine_setup *s,
				 const char **counters,
				 struct evprof_session_opts *so)
{
	bool launched = s->child > 0;

	*so = (struct evprof_session_opts){
	    .sz = sizeof(*so),
	    .counters = counters,
	    .nr_counters = s->nr - 1,
	    /* System-wide keeps everything, else the targets' trees. */
	    .pids = s->system_wide ? NULL
		    : launched	   ? &s->child
				   : s->pids,
	    .nr_pids = s->system_wide ? 0
		       : launched     ? 1
				      : s->nr_pids,
	    /* A time sampler's delta is the CPU time already there. */
	    .sampler_counter =
		evprof__event_is_time(&s->events[0]) ? NULL : s->events[0].name,
	    .own_counters = s->own >> 1,
	    .stack_top = stack_top,
	};
	char buf[32];

	/* A chain that long was cut by the kernel: a cause of its own. */
	if (evprof__read_file("/proc/sys/kernel/perf_event_max_stack", buf,
			      sizeof(buf)) > 0)
		so->max_stack = (uint32_t)strtoul(buf, NULL, 10);
	for (size_t i = 1; i < s->nr; i++)
		counters[i - 1] = s->events[i].name;
	so->switch_counters = evprof__engine_switch_slots(s);
}

uint64_t evprof__engine_switch_slots(const struct evprof__engine_setup *s)
{
	uint64_t mask = 0;

	for (size_t i = 0; i < s->nr && !s->exclude_kernel; i++) {
		const struct perf_event_attr *a = &s->events[i].attr;

		if (a->type == PERF_TYPE_SOFTWARE &&
		    a->config == PERF_COUNT_SW_CONTEXT_SWITCHES &&
		    !a->exclude_kernel)
			mask |= 1ULL << (i ? i - 1 : s->nr - 1);
	}
	return mask;
}
