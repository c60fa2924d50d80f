// SPDX-License-Identifier: MIT
/*
 * Sessions on hand-built record streams: per-sample deltas, process tree,
 * names, accounting, and stacks built into a profile against this test's
 * own functions and a crafted kallsyms file.
 */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/proc.h>
#include <evprof/session.h>
#include <evprof/symbols.h>

#include "cases.h"
#include "sessfeed.h"
#include "session/behind.h"
#include "session/internal.h"

#define KCTX ((uint64_t)PERF_CONTEXT_KERNEL)
#define UCTX ((uint64_t)PERF_CONTEXT_USER)

/* ---- records (tests/recstream.h builds them) -------------------------- */

struct val {
	uint64_t id, value;
};

/*
 * One record of a test's stream, as the kernel would write it: its type,
 * misc bits and the fields that type uses. The macros below write them.
 */
struct ev {
	uint32_t type;
	uint16_t misc;
	uint32_t pid, tid, ppid, ptid; /* ptid: SWITCH_CPU_WIDE's prev */
	uint64_t time;
	uint64_t ident;	       /* SAMPLE: 0 for the first value's id */
	struct val v[6];       /* SAMPLE: what it reads, up to an id 0 */
	const uint64_t *chain; /* SAMPLE: up to a 0; NULL for none */
	const char *name;      /* COMM: the name; MMAP2: the path */
	uint64_t addr, len, pgoff;
	uint32_t prot;
};

/* A sample reading the values after ch, of its first value's event. */
#define SAMPLE(p, t, tm, ch, ...)                                              \
	{                                                                      \
		.type = PERF_RECORD_SAMPLE, .pid = (p), .tid = (t),            \
		.time = (tm), .chain = (ch),                                   \
		.v = { __VA_ARGS__ }                                           \
	}
/* The same, of the event id (another session's, say). */
#define SAMPLE_OF(id, p, t, tm, ch, ...)                                       \
	{                                                                      \
		.type = PERF_RECORD_SAMPLE, .ident = (id), .pid = (p),         \
		.tid = (t), .time = (tm), .chain = (ch),                       \
		.v = { __VA_ARGS__ }                                           \
	}
#define COMM(p, t, nm, tm)                                                     \
	{                                                                      \
		.type = PERF_RECORD_COMM, .pid = (p), .tid = (t),              \
		.name = (nm), .time = (tm)                                     \
	}
#define EXEC(p, t, nm, tm)                                                     \
	{                                                                      \
		.type = PERF_RECORD_COMM, .misc = PERF_RECORD_MISC_COMM_EXEC,  \
		.pid = (p), .tid = (t), .name = (nm), .time = (tm)             \
	}
#define TASK(ty, p, pp, t, pt, tm)                                             \
	{                                                                      \
		.type = (ty), .pid = (p), .ppid = (pp), .tid = (t),            \
		.ptid = (pt), .time = (tm)                                     \
	}
#define FORK(p, pp, t, pt, tm) TASK(PERF_RECORD_FORK, p, pp, t, pt, tm)
#define EXIT(p, pp, t, pt, tm) TASK(PERF_RECORD_EXIT, p, pp, t, pt, tm)
#define MMAP2(p, a, l, off, pr, path, tm)                                      \
	{                                                                      \
		.type = PERF_RECORD_MMAP2, .pid = (p), .addr = (a),            \
		.len = (l), .pgoff = (off), .prot = (pr), .name = (path),      \
		.time = (tm)                                                   \
	}
/* A switch-in (SWITCH_CPU_WIDE) of t on CPU 0 at tm, after prev. */
#define SWITCH_IN(t, prev, tm)                                                 \
	{                                                                      \
		.type = PERF_RECORD_SWITCH_CPU_WIDE, .tid = (t),               \
		.ptid = (prev), .time = (tm)                                   \
	}
/* A switch-out (SWITCH_CPU_WIDE) of t on CPU 0 at tm, to next (0: idle). */
#define SWITCH_OUT_TO(t, next, tm)                                             \
	{                                                                      \
		.type = PERF_RECORD_SWITCH_CPU_WIDE,                           \
		.misc = PERF_RECORD_MISC_SWITCH_OUT, .tid = (t),               \
		.ptid = (next), .time = (tm)                                   \
	}
/* A LOST record of CPU 0's ring at tm. */
#define LOST(tm)                                                               \
	{                                                                      \
		.type = PERF_RECORD_LOST, .time = (tm)                         \
	}
/* Switch records (SWITCH, task mode) of t at tm: in, out, preempted. */
#define SWITCH(t, tm, m)                                                       \
	{                                                                      \
		.type = PERF_RECORD_SWITCH, .misc = (m), .tid = (t),           \
		.time = (tm)                                                   \
	}
#define SW_IN(t, tm)  SWITCH(t, tm, 0)
#define SW_OUT(t, tm) SWITCH(t, tm, PERF_RECORD_MISC_SWITCH_OUT)
#define SW_PREEMPT(t, tm)                                                      \
	SWITCH(t, tm,                                                          \
	       PERF_RECORD_MISC_SWITCH_OUT |                                   \
		   PERF_RECORD_MISC_SWITCH_OUT_PREEMPT)

/* e as an ST_BITS sample on CPU 0: period 1000, time enabled and half run. */
static void sample_record(struct rb *b, const struct ev *e)
{
	size_t nv = 0, nc = 0;

	while (nv < sizeof(e->v) / sizeof(e->v[0]) && e->v[nv].id)
		nv++;
	while (e->chain && e->chain[nc])
		nc++;
	rb_begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(b, e->ident ? e->ident : nv ? e->v[0].id : 10); /* IDENTIFIER */
	rb_u64(b, nc ? e->chain[nc - 1] : 0x1234);	       /* IP */
	rb_u32x2(b, e->pid, e->tid);
	rb_u64(b, e->time);
	rb_u32x2(b, 0, 0); /* CPU */
	rb_u64(b, 1000);   /* PERIOD */
	rb_u64(b, nv);	   /* READ: nr, ena, run, {value, id} */
	rb_u64(b, e->time);
	rb_u64(b, e->time / 2);
	for (size_t i = 0; i < nv; i++) {
		rb_u64(b, e->v[i].value);
		rb_u64(b, e->v[i].id);
	}
	rb_u64(b, nc);
	for (size_t i = 0; i < nc; i++)
		rb_u64(b, e->chain[i]);
}

static int feed_ev(struct evprof_session *s, const struct ev *e)
{
	struct rb b;

	switch (e->type) {
	case PERF_RECORD_SAMPLE:
		sample_record(&b, e);
		break;
	case PERF_RECORD_COMM:
		rb_comm(&b, e->pid, e->tid, e->name, e->misc, e->time, 10);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		rb_task(&b, e->type, e->pid, e->ppid, e->tid, e->ptid, e->time,
			10);
		break;
	case PERF_RECORD_MMAP2:
		rb_begin(&b, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
		rb_u32x2(&b, e->pid, e->pid);
		rb_u64(&b, e->addr);
		rb_u64(&b, e->len);
		rb_u64(&b, e->pgoff);
		rb_u32x2(&b, 0, 0); /* maj, min */
		rb_u64(&b, 0);	    /* ino */
		rb_u64(&b, 0);	    /* ino_generation */
		rb_u32x2(&b, e->prot, MAP_PRIVATE);
		rb_str(&b, e->name);
		rb_trailer(&b, e->pid, e->pid, e->time, 10);
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		rb_begin(&b, PERF_RECORD_SWITCH_CPU_WIDE, e->misc);
		rb_u32x2(&b,
			 e->ptid == UINT32_MAX ? UINT32_MAX
			 : e->ptid	       ? 100
					       : 0,
			 e->ptid);
		rb_trailer(&b, 100, e->tid, e->time, 10);
		break;
	case PERF_RECORD_LOST:
		rb_begin(&b, PERF_RECORD_LOST, 0);
		rb_u64(&b, 10); /* id */
		rb_u64(&b, 1);	/* lost */
		rb_trailer(&b, 0, 0, e->time, 10);
		break;
	case PERF_RECORD_SWITCH:
		rb_begin(&b, PERF_RECORD_SWITCH, e->misc);
		rb_trailer(&b, 100, e->tid, e->time, 10);
		break;
	default:
		fail_msg("no builder for record type %u", e->type);
	}
	return rb_feed(s, &b);
}

/* Feeds the records of ev in order: the session takes each. */
#define feed_all(s, ev) feed_n(s, ev, sizeof(ev) / sizeof((ev)[0]))

static void feed_n(struct evprof_session *s, const struct ev *ev, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int rc = feed_ev(s, &ev[i]);

		if (rc)
			print_message("record %zu (type %u) of the stream\n", i,
				      ev[i].type);
		assert_int_equal(rc, 0);
	}
}

/* ---- session setup ------------------------------------------------------ */

static const char *const counter_names[] = {"page-faults", "context-switches"};

/* Group ids: CPU 0 and CPU 1 each have a leader, two counters, a clock. */
enum {
	L0 = 10,
	A0 = 11,
	B0 = 12,
	C0 = 13,
	L1 = 20,
	A1 = 21,
	B1 = 22,
	C1 = 23,
	X0 = 14, /* CPU 0's context-switch cut */
	E0 = 15, /* CPU 0's exit cut */
	STRAY = 99
};

/* Declares one CPU's group: leader, the two counters, the clock. */
static void set_group_ids(struct evprof_session *s, uint64_t leader,
			  uint64_t faults, uint64_t switches, uint64_t clock)
{
	assert_int_equal(
	    evprof_session__set_id(s, leader, EVPROF_SESSION_SAMPLER), 0);
	assert_int_equal(evprof_session__set_id(s, faults, 0), 0);
	assert_int_equal(evprof_session__set_id(s, switches, 1), 0);
	assert_int_equal(
	    evprof_session__set_id(s, clock, EVPROF_SESSION_CPU_TIME), 0);
}

/* A session on ST_BITS records, with o's other options. */
static struct evprof_session *session_of(struct evprof_session_opts o)
{
	struct evprof_session *s;

	o.sz = sizeof(o);
	o.fmt.sample_type = ST_BITS;
	o.fmt.read_format = RF_BITS;
	o.fmt.sample_id_all = true;
	s = evprof_session__new(&o);
	assert_non_null(s);
	return s;
}

/* Both CPUs' groups, the leader sampling, threads of pids (all: NULL). */
static struct evprof_session *new_session(const pid_t *pids, size_t nr_pids)
{
	struct evprof_session *s = session_of((struct evprof_session_opts){
	    .counters = counter_names,
	    .nr_counters = 2,
	    .sampler_counter = "samples-of-leader",
	    .pids = pids,
	    .nr_pids = nr_pids,
	});

	set_group_ids(s, L0, A0, B0, C0);
	set_group_ids(s, L1, A1, B1, C1);
	return s;
}

/* Per CPU: CPU 0's group and its context-switch cut X0. */
static struct evprof_session *cuts_session(bool exclude_idle)
{
	struct evprof_session *s = session_of((struct evprof_session_opts){
	    .counters = counter_names,
	    .nr_counters = 2,
	    .exclude_idle = exclude_idle,
	    .per_cpu = true,
	});

	set_group_ids(s, L0, A0, B0, C0);
	assert_int_equal(evprof_session__set_id(s, X0, EVPROF_SESSION_CUT), 0);
	return s;
}

/* Off-CPU: the leader, the clock and the switch-out cut X0. */
static struct evprof_session *offcpu_session(const pid_t *pids, size_t nr)
{
	struct evprof_session *s = session_of(
	    (struct evprof_session_opts){.pids = pids, .nr_pids = nr});

	assert_int_equal(evprof_session__set_id(s, L0, EVPROF_SESSION_SAMPLER),
			 0);
	assert_int_equal(evprof_session__set_id(s, C0, EVPROF_SESSION_CPU_TIME),
			 0);
	assert_int_equal(
	    evprof_session__set_id(s, X0, EVPROF_SESSION_SWITCH_OUT), 0);
	return s;
}

/* A new profile that s builds into (with sym, or none). */
static struct evprof_profile *built(struct evprof_session *s,
				    struct evprof_symbolizer *sym)
{
	struct evprof_profile *p = evprof_profile__new(NULL);

	assert_non_null(p);
	assert_int_equal(evprof_session__build(s, p, sym), 0);
	return p;
}

struct unsampled {
	const struct evprof_profile *p;
	uint64_t faults[8]; /* counter 0 on "[unsampled]", tid - 100 */
};

static int unsampled_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct unsampled *u = ctx;
	struct evprof_profile_thread_info ti;
	struct evprof_profile_frame f;
	int parent, frame;

	assert_int_equal(
	    evprof_profile__stack_info(u->p, e->stack, &parent, &frame), 0);
	assert_int_equal(evprof_profile__frame_info(u->p, frame, &f), 0);
	if (strcmp(f.function, "[unsampled]"))
		return 0;
	/* One frame right under the thread, never below code. */
	assert_int_equal(parent, -1);
	assert_int_equal(evprof_profile__thread_info(u->p, e->thread, &ti), 0);
	assert_true(ti.tid >= 100 && ti.tid < 108);
	u->faults[ti.tid - 100] += e->counters[0];
	return 0;
}

/* Delta of slot (-1: CPU) of the k-th stored sample; UINT64_MAX: none. */
static uint64_t delta_of(const struct evprof_session *s, size_t k, int slot)
{
	const struct ssample *x =
	    (const struct ssample *)s->store.samples.a + k;
	const uint64_t *d = (const uint64_t *)s->store.deltas.a + x->deltas;

	assert_true(k < s->store.samples.n);
	if (slot < 0)
		return x->flags & SS_HAS_CPU ? x->cpu_delta : UINT64_MAX;
	if (!(x->has & (1ULL << slot)))
		return UINT64_MAX;
	return d[__builtin_popcountll(x->has & ((1ULL << slot) - 1))];
}

static void test_new_rejects(void **state)
{
	struct evprof_session_opts o = {.sz = sizeof(o), .nr_counters = 1};
	struct evprof_session *s;

	(void)state;
	errno = 0;
	assert_null(evprof_session__new(&o)); /* counters NULL */
	assert_int_equal(errno, EINVAL);
	assert_null(evprof_session__new(NULL));
	s = new_session(NULL, 0);
	assert_int_equal(evprof_session__set_id(s, 1, 2), -EINVAL);
	assert_int_equal(evprof_session__set_id(s, 1, -5), -EINVAL);
	evprof_session__free(s);
	evprof_session__free(NULL);
}

/*
 * Two threads of pid 100 sampled on both CPUs, interleaved; each (id, tid)
 * instance has its own cumulative values.
 */
static void test_deltas_two_threads(void **state)
{
	static const struct ev ev[] = {
	    /* k=0: T101 on CPU0, first sample: full values. */
	    SAMPLE(100, 101, 1000, NULL, {L0, 5}, {A0, 7}, {B0, 2}, {C0, 900}),
	    /* k=1: T102 on CPU1, first sample, plus an undeclared id. */
	    SAMPLE(100, 102, 1100, NULL, {L1, 3}, {A1, 40}, {B1, 1}, {C1, 500},
		   {STRAY, 77}),
	    /* k=2: T101 on CPU1: a new instance (id A1, tid 101): full value. */
	    SAMPLE(100, 101, 1200, NULL, {L1, 1}, {A1, 4}, {B1, 0}, {C1, 100}),
	    /* k=3: T101 on CPU0 again: differences from k=0. */
	    SAMPLE(100, 101, 1300, NULL, {L0, 9}, {A0, 10}, {B0, 2},
		   {C0, 1900}),
	    /* k=4: T102 on CPU1 again: differences from k=1. */
	    SAMPLE(100, 102, 1400, NULL, {L1, 8}, {A1, 41}, {B1, 6}, {C1, 800}),
	    /* k=5: T101 on CPU1 again: differences from k=2. */
	    SAMPLE(100, 101, 1500, NULL, {L1, 2}, {A1, 9}, {B1, 3}, {C1, 350}),
	};
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);
	/* slot 0 page-faults, 1 context-switches, 2 the sampler, -1 CPU */
	assert_int_equal(delta_of(s, 0, 0), 7);
	assert_int_equal(delta_of(s, 0, 1), 2);
	assert_int_equal(delta_of(s, 0, 2), 5);
	assert_int_equal(delta_of(s, 0, -1), 900);
	assert_int_equal(delta_of(s, 1, 0), 40);
	assert_int_equal(delta_of(s, 1, -1), 500);
	assert_int_equal(delta_of(s, 2, 0), 4);
	assert_int_equal(delta_of(s, 2, 1), 0);
	assert_int_equal(delta_of(s, 2, -1), 100);
	assert_int_equal(delta_of(s, 3, 0), 3);
	assert_int_equal(delta_of(s, 3, 1), 0);
	assert_int_equal(delta_of(s, 3, 2), 4);
	assert_int_equal(delta_of(s, 3, -1), 1000);
	assert_int_equal(delta_of(s, 4, 0), 1);
	assert_int_equal(delta_of(s, 4, 1), 5);
	assert_int_equal(delta_of(s, 4, -1), 300);
	assert_int_equal(delta_of(s, 5, 0), 5);
	assert_int_equal(delta_of(s, 5, 1), 3);
	assert_int_equal(delta_of(s, 5, 2), 1);
	assert_int_equal(delta_of(s, 5, -1), 250);

	/* Conservation: a thread's sum = its instances' last values. */
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 10 + 9);
	assert_int_equal(evprof_session__thread_total(s, 101, 1), 2 + 3);
	assert_int_equal(
	    evprof_session__thread_total(s, 101, EVPROF_SESSION_SAMPLER),
	    9 + 2);
	assert_int_equal(
	    evprof_session__thread_total(s, 101, EVPROF_SESSION_CPU_TIME),
	    1900 + 350);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 41);
	assert_int_equal(evprof_session__thread_total(s, 102, 1), 6);
	assert_int_equal(
	    evprof_session__thread_total(s, 102, EVPROF_SESSION_CPU_TIME), 800);
	assert_int_equal(evprof_session__thread_total(s, 555, 0), 0);

	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 6);
	assert_int_equal(st.unknown_ids, 1);
	assert_int_equal(st.records, 6);
	assert_int_equal(st.malformed, 0);
	assert_int_equal(st.first_time, 1000);
	assert_int_equal(st.last_time, 1500);
	evprof_session__free(s);
}

/*
 * Each counter attributed by its own samples, on a cycles/instructions
 * group as a PMU host records it: cycles (L0) samples and counts time
 * (clock C0), instructions (A0) samples on its own. Between samples the
 * thread runs hot code (instructions, stack HOT) then cold code (cycles,
 * stack COLD): each counter's delta since its previous own sample must go
 * to its own sample's stack; ride-along gives each read to every sample.
 */
static const uint64_t cold_chain[] = {UCTX, 0x400500, 0};
static const uint64_t hot_chain[] = {UCTX, 0x400900, 0};
static const char *const instructions[] = {"instructions"};
static const struct ev own_stream[] = {
    SAMPLE(100, 101, 1000, cold_chain, {L0, 100}, {A0, 10}, {C0, 1000}),
    SAMPLE_OF(A0, 100, 101, 2000, hot_chain, {L0, 150}, {A0, 1010}, {C0, 1500}),
    SAMPLE(100, 101, 3000, cold_chain, {L0, 300}, {A0, 1012}, {C0, 3000}),
    SAMPLE_OF(A0, 100, 101, 4000, hot_chain, {L0, 350}, {A0, 2012}, {C0, 3500}),
};

static struct evprof_session *own_session(uint64_t own)
{
	struct evprof_session *s = session_of((struct evprof_session_opts){
	    .counters = instructions,
	    .nr_counters = 1,
	    .sampler_counter = "cycles",
	    .own_counters = own,
	});

	assert_int_equal(evprof_session__set_id(s, L0, EVPROF_SESSION_SAMPLER),
			 0);
	assert_int_equal(evprof_session__set_id(s, A0, 0), 0);
	assert_int_equal(evprof_session__set_id(s, C0, EVPROF_SESSION_CPU_TIME),
			 0);
	return s;
}

static void test_own_attribution(void **state)
{
	struct evprof_session *s = own_session(1);
	struct rb b;

	(void)state;
	feed_all(s, own_stream);
	/* slot 0 instructions, 1 cycles (the sampler), -1 CPU */
	assert_int_equal(delta_of(s, 0, 1), 100);
	assert_int_equal(delta_of(s, 0, -1), 1000);
	assert_int_equal(delta_of(s, 0, 0), UINT64_MAX); /* held: 10 */
	assert_int_equal(delta_of(s, 1, 0), 10 + 1000);
	assert_int_equal(delta_of(s, 1, 1), UINT64_MAX);  /* held: 50 */
	assert_int_equal(delta_of(s, 1, -1), UINT64_MAX); /* held: 500 */
	assert_int_equal(delta_of(s, 2, 1), 50 + 150);
	assert_int_equal(delta_of(s, 2, -1), 500 + 1500);
	assert_int_equal(delta_of(s, 2, 0), UINT64_MAX); /* held: 2 */
	assert_int_equal(delta_of(s, 3, 0), 2 + 1000);
	assert_true(s->store.samples.a[1].flags & SS_OWN);
	assert_true(s->store.samples.a[3].flags & SS_OWN);
	assert_false(s->store.samples.a[0].flags & SS_OWN);
	assert_false(s->store.samples.a[2].flags & SS_OWN);

	/* THROTTLE records, by the counter they name. */
	for (uint64_t id = L0; id <= C0; id += C0 - L0) {
		rb_begin(&b, PERF_RECORD_THROTTLE, 0);
		rb_u64(&b, 4100);
		rb_u64(&b, id);
		rb_u64(&b, id);
		rb_trailer(&b, 100, 101, 4100, id);
		assert_int_equal(rb_feed(s, &b), 0);
	}
	rb_begin(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 4100);
	rb_u64(&b, A0);
	rb_u64(&b, A0);
	rb_trailer(&b, 100, 101, 4100, A0);
	assert_int_equal(rb_feed(s, &b), 0);
	{
		struct evprof_session_stats st = {.sz = sizeof(st)};
		struct evprof_profile *p = built(s, NULL);

		evprof_session__stats(s, &st);
		assert_int_equal(st.throttled, 3);
		assert_int_equal(st.throttled_by[0], 1);  /* instructions */
		assert_int_equal(st.throttled_by[1], 1);  /* cycles */
		assert_int_equal(st.throttled_hidden, 1); /* the clock */
		assert_int_equal(st.counter_samples, 2);
		/* Every count kept: what follows a last sample too. */
		assert_int_equal(evprof_session__thread_total(s, 101, 0), 2012);
		assert_int_equal(evprof_session__thread_total(
				     s, 101, EVPROF_SESSION_SAMPLER),
				 350);
		assert_int_equal(evprof_session__thread_total(
				     s, 101, EVPROF_SESSION_CPU_TIME),
				 3500);
		evprof_profile__free(p);
	}
	evprof_session__free(s);

	/* Ride-along: the instructions' own samples are samples like any. */
	s = own_session(0);
	feed_all(s, own_stream);
	assert_int_equal(delta_of(s, 0, 0), 10);
	assert_int_equal(delta_of(s, 1, 0), 1000);
	assert_int_equal(delta_of(s, 1, 1), 50);
	assert_int_equal(delta_of(s, 1, -1), 500);
	assert_int_equal(delta_of(s, 2, 0), 2);
	assert_false(s->store.samples.a[1].flags & SS_OWN);
	evprof_session__free(s);
}

/* A value going down is a new instance (reused tid); a FORK resets too. */
static void test_counter_reset(void **state)
{
	static const struct ev before[] = {
	    SAMPLE(100, 101, 10, NULL, {L0, 1}, {A0, 50}),
	    SAMPLE(100, 101, 20, NULL, {L0, 2}, {A0, 30}),
	};
	/* tid 101 is reused by a new thread: its first value is all new. */
	static const struct ev reused[] = {
	    EXIT(100, 100, 101, 101, 25),
	    FORK(100, 100, 101, 100, 30),
	    SAMPLE(100, 101, 40, NULL, {L0, 1}, {A0, 45}),
	};
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, before);
	assert_int_equal(delta_of(s, 1, 0), 30);
	feed_all(s, reused);
	assert_int_equal(delta_of(s, 2, 0), 45);
	evprof_session__stats(s, &st);
	assert_int_equal(st.counter_resets, 1);
	evprof_session__free(s);
}

/* ---- process tree, names, accounting ------------------------------------ */

static FILE *folded(const struct evprof_profile *p, const char *weight)
{
	struct evprof_folded_opts fo = {.sz = sizeof(fo),
					.weight_counter = weight};
	FILE *f = tmpfile();

	assert_non_null(f);
	assert_int_equal(evprof_profile__write_folded_file(p, f, &fo), 0);
	rewind(f);
	return f;
}

/* Whole folded text (small profiles only). */
static char *folded_text(const struct evprof_profile *p, const char *weight)
{
	static char buf[16384];
	FILE *f = folded(p, weight);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);

	buf[n] = 0;
	fclose(f);
	return buf;
}

/* Chains end at a 0 (struct ev). */
static const uint64_t chain_a[] = {UCTX, 0x1010, 0};

static void test_process_tree(void **state)
{
	static const struct ev ev[] = {
	    COMM(100, 100, "root", 1),
	    /* 300 forks from 200 before 200's own FORK from 100 is read. */
	    FORK(300, 200, 300, 200, 20),
	    SAMPLE(300, 300, 25, chain_a, {L0, 1}),
	    FORK(200, 100, 200, 100, 10),
	    /*
	     * 500 forks from 400 stamped before 400 forked from 100 (another
	     * CPU's clock): pending until 400 joins.
	     */
	    FORK(500, 400, 500, 400, 30),
	    SAMPLE(500, 500, 31, chain_a, {L0, 1}),
	    FORK(400, 100, 400, 100, 35),
	    /* An unrelated process, and a child of it. */
	    SAMPLE(999, 999, 40, chain_a, {L0, 1}),
	    FORK(998, 999, 998, 999, 41),
	    SAMPLE(998, 998, 42, chain_a, {L0, 1}),
	    /* 200 exits; a sample stamped before the exit is read after it. */
	    EXIT(200, 100, 200, 100, 50),
	    SAMPLE(200, 200, 45, chain_a, {L0, 1}),
	    SAMPLE(100, 100, 60, chain_a, {L0, 1}),
	};
	const pid_t root = 100;
	struct evprof_session *s = new_session(&root, 1);
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p;
	char *text;

	(void)state;
	feed_all(s, ev);
	p = built(s, NULL);
	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 4);	  /* 300, 500, 200, 100 */
	assert_int_equal(st.samples_filtered, 2); /* 999, 998 */
	assert_int_equal(st.processes, 4);
	assert_int_equal(st.threads, 4);
	assert_int_equal(
	    evprof_session__thread_total(s, 999, EVPROF_SESSION_SAMPLER), 0);
	assert_int_equal(
	    evprof_session__thread_total(s, 300, EVPROF_SESSION_SAMPLER), 1);

	/*
	 * Children inherit the forking thread's name; 500 forked from a
	 * process unknown at the time, so it is named by its pid. No
	 * symbolizer and no maps: frames named by address.
	 */
	text = folded_text(p, NULL);
	assert_string_equal(text, "500;0x1010 1\nroot;0x1010 3\n");
	evprof_session__free(s);
	evprof_profile__free(p);
}

static void test_names_exec(void **state)
{
	static const struct ev ev[] = {
	    COMM(100, 100, "launcher", 1),
	    FORK(100, 100, 101, 100, 2),
	    COMM(100, 101, "worker", 3),
	    SAMPLE(100, 100, 10, chain_a, {L0, 1}),
	    SAMPLE(100, 101, 11, chain_a, {L0, 1}),
	    EXIT(100, 100, 101, 100, 12),
	    EXEC(100, 100, "newimage", 20),
	    SAMPLE(100, 100, 30, chain_a, {L0, 1}),
	    SAMPLE(100, 100, 31, chain_a, {L0, 1}),
	    /* Read late from another ring: still the old image's sample. */
	    SAMPLE(100, 100, 15, chain_a, {L0, 1}),
	};
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p;

	(void)state;
	feed_all(s, ev);
	p = built(s, NULL);
	evprof_session__stats(s, &st);
	/*
	 * One process, renamed at its exec, as perf and the Firefox Profiler
	 * show it; its main thread one thread across the two images.
	 */
	assert_int_equal(st.processes, 1);
	assert_int_equal(st.threads, 2);
	assert_string_equal(folded_text(p, NULL), "newimage;0x1010 4\n"
						  "worker;0x1010 1\n");
	evprof_session__free(s);
	evprof_profile__free(p);
}

static void test_accounting(void **state)
{
	static const struct ev goes_on[] = {
	    SAMPLE(100, 100, 9, chain_a, {L0, 3})};
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct rb b;

	(void)state;
	rb_begin(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, L0);
	rb_u64(&b, 5);
	rb_trailer(&b, 0, 0, 1, 10);
	assert_int_equal(rb_feed(s, &b), 0);
	rb_begin(&b, PERF_RECORD_LOST, 0);
	rb_u64(&b, L1);
	rb_u64(&b, 6);
	rb_trailer(&b, 0, 0, 1, 10);
	assert_int_equal(rb_feed(s, &b), 0);
	rb_begin(&b, PERF_RECORD_LOST_SAMPLES, 0);
	rb_u64(&b, 7);
	rb_trailer(&b, 0, 0, 1, 10);
	assert_int_equal(rb_feed(s, &b), 0);
	rb_begin(&b, PERF_RECORD_THROTTLE, 0);
	rb_u64(&b, 1);
	rb_u64(&b, L0);
	rb_u64(&b, 0);
	rb_trailer(&b, 0, 0, 1, 10);
	assert_int_equal(rb_feed(s, &b), 0);

	/* A sample cut short: its READ part claims 3 members, has 1. */
	rb_begin(&b, PERF_RECORD_SAMPLE, 0);
	rb_u64(&b, L0);
	rb_u64(&b, 0x1234);
	rb_u32x2(&b, 100, 100);
	rb_u64(&b, 5);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1);
	rb_u64(&b, 3);
	rb_u64(&b, 1);
	rb_u64(&b, 1);
	rb_u64(&b, 42);
	rb_u64(&b, L0);
	assert_true(rb_feed(s, &b) < 0);
	/* A header whose size is not a multiple of 8. */
	rb_begin(&b, PERF_RECORD_COMM, 0);
	rb_u64(&b, 0);
	rb_set_size(&b, 12);
	assert_true(evprof_session__feed(s, b.words, 16) < 0);
	/* Feeding goes on. */
	feed_all(s, goes_on);
	evprof_session__stats(s, &st);
	assert_int_equal(st.records, 7);
	assert_int_equal(st.lost_records, 2);
	assert_int_equal(st.lost_events, 11);
	assert_int_equal(st.lost_samples, 7);
	assert_int_equal(st.throttled, 1);
	assert_int_equal(st.malformed, 2);
	assert_int_equal(st.samples, 1);
	assert_int_equal(
	    evprof_session__thread_total(s, 100, EVPROF_SESSION_SAMPLER), 3);
	evprof_session__free(s);
}

/* Idle samples are dropped with exclude_idle. */
static void test_exclude_idle(void **state)
{
	static const struct ev ev[] = {
	    SAMPLE(0, 0, 5, chain_a, {L0, 1}),
	    SAMPLE(7, 7, 6, chain_a, {L0, 1}),
	};
	struct evprof_session *s =
	    session_of((struct evprof_session_opts){.exclude_idle = true});
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);
	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 1);
	assert_int_equal(st.samples_filtered, 1);
	/* The idle sample is dropped unread; L0 is undeclared here. */
	assert_int_equal(st.unknown_ids, 1);
	evprof_session__free(s);
}

/*
 * One read of CPU 0's group: the sampler, the cut, faults, the clock; at a
 * cut, the cut's id is the sample's IDENTIFIER.
 */
#define READ0(p, t, tm, faults, ns)                                            \
	SAMPLE(p, t, tm, chain_a, {L0, (tm) / 100}, {X0, (tm) / 50},           \
	       {A0, faults}, {B0, 0}, {C0, ns})
#define CUT0(p, t, tm, faults, ns)                                             \
	SAMPLE(p, t, tm, chain_a, {X0, (tm) / 100}, {L0, (tm) / 50},           \
	       {A0, faults}, {B0, 0}, {C0, ns})

/*
 * Per-CPU group on CPU 0, threads 101 and 102 (and 103) taking turns:
 * what the CPU counted while a thread ran goes to that thread, through its
 * switch-out cut, not to the thread sampled next.
 */
static void test_per_cpu_cuts(void **state)
{
	/* faults (ns): 101 runs to 150, 102 to 250, 101 to 300, 102 to 400,
	 * 101 to 500 (exits), idle to 520, 103 to 600 (no sample). */
	static const struct ev ev[] = {
	    READ0(100, 101, 100, 10, 1000), CUT0(100, 101, 150, 15, 1500),
	    READ0(100, 102, 200, 35, 2000), CUT0(100, 102, 250, 40, 2500),
	    CUT0(100, 101, 300, 47, 3000),  READ0(100, 102, 350, 50, 3500),
	    CUT0(100, 102, 400, 52, 4000),  READ0(100, 101, 450, 60, 4500),
	    CUT0(100, 101, 500, 61, 5000),  READ0(0, 0, 510, 63, 5100),
	    CUT0(0, 0, 520, 65, 5200),	    CUT0(100, 103, 600, 70, 6000),
	};
	struct evprof_session *s = cuts_session(true);
	struct evprof_profile *p;
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);

	/* Cuts are not samples; a sample takes its thread's held deltas. */
	assert_int_equal(s->store.samples.n, 4);
	assert_int_equal(delta_of(s, 0, 0), 10);
	assert_int_equal(delta_of(s, 1, 0), 20);     /* 150..200 */
	assert_int_equal(delta_of(s, 2, 0), 3 + 5);  /* 300..350 + held */
	assert_int_equal(delta_of(s, 3, 0), 8 + 12); /* 400..450 + held */
	assert_int_equal(delta_of(s, 3, -1), 500 + 500 + 500);

	p = built(s, NULL);
	/*
	 * Tails (after each thread's last sample; 103's whole life) go to a
	 * sample of each on "[unsampled]", not to its last stack or cut's.
	 */
	assert_int_equal(s->store.samples.n, 7);
	assert_int_equal(delta_of(s, 2, 0), 3 + 5);
	assert_int_equal(delta_of(s, 3, 0), 8 + 12);
	{
		struct unsampled u = {.p = p};

		assert_int_equal(
		    evprof_profile__for_each_entry(p, -1, unsampled_entry, &u),
		    0);
		assert_int_equal(u.faults[1], 1);
		assert_int_equal(u.faults[2], 2);
		assert_int_equal(u.faults[3], 5);
	}
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 31);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 30);
	assert_int_equal(evprof_session__thread_total(s, 103, 0), 5);
	/* All 70 faults and 6000 ns: the rest went to idle (dropped). */
	assert_int_equal(
	    evprof_session__thread_total(s, 101, EVPROF_SESSION_CPU_TIME),
	    1000 + 500 + 500 + 500 + 500);
	assert_int_equal(
	    evprof_session__thread_total(s, 102, EVPROF_SESSION_CPU_TIME),
	    4 * 500);
	assert_int_equal(
	    evprof_session__thread_total(s, 103, EVPROF_SESSION_CPU_TIME),
	    6000 - 5200);
	/* The idle task's share is unattributed: 61..65 faults, 200 ns. */
	assert_int_equal(evprof_session__unattributed(s, 0), 4);
	assert_int_equal(
	    evprof_session__unattributed(s, EVPROF_SESSION_CPU_TIME), 200);
	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 4); /* "[unsampled]" is none */
	assert_int_equal(st.samples_filtered, 1);
	assert_int_equal(st.counter_resets, 0);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Per CPU, a value below the last one of its id is rejected: the counter
 * never restarts. What a CPU counted for a process outside the tree is
 * unattributed; with the kept threads' totals it makes the last value.
 */
static void test_per_cpu_backwards(void **state)
{
	static const struct ev ev[] = {
	    SAMPLE(100, 101, 10, chain_a, {L0, 1}, {A0, 10}),
	    SAMPLE(100, 102, 20, chain_a, {L0, 2}, {A0, 5}),
	    SAMPLE(100, 101, 30, chain_a, {L0, 3}, {A0, 12}),
	    SAMPLE(200, 201, 40, chain_a, {L0, 4}, {A0, 20}),
	};
	const pid_t root = 100;
	struct evprof_session *s = session_of((struct evprof_session_opts){
	    .counters = counter_names,
	    .nr_counters = 2,
	    .pids = &root,
	    .nr_pids = 1,
	    .per_cpu = true,
	});
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p;

	(void)state;
	set_group_ids(s, L0, A0, B0, C0);
	feed_all(s, ev);
	assert_int_equal(delta_of(s, 1, 0), UINT64_MAX); /* rejected */
	assert_int_equal(delta_of(s, 2, 0), 2);
	p = built(s, NULL);
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 12);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 0);
	assert_int_equal(evprof_session__unattributed(s, 0), 8);
	assert_int_equal(
	    evprof_session__unattributed(s, EVPROF_SESSION_SAMPLER),
	    0); /* no sampler_counter: no such counter */
	evprof_session__stats(s, &st);
	assert_int_equal(st.reads_rejected, 1);
	assert_int_equal(st.counter_resets, 0);
	assert_int_equal(st.samples, 3);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * A thread's last switch-out comes after its EXIT, with tid -1 (Linux
 * 6.18): it is charged to the thread whose EXIT this CPU saw last.
 */
static void test_per_cpu_exit_tail(void **state)
{
	static const struct ev ev[] = {
	    READ0(200, 201, 100, 10, 0),
	    EXIT(200, 200, 201, 201, 150),
	    CUT0(200, UINT32_MAX, 160, 13, 0),
	};
	struct evprof_session *s = session_of((struct evprof_session_opts){
	    .counters = counter_names, .nr_counters = 2, .per_cpu = true});
	struct evprof_profile *p;

	(void)state;
	assert_int_equal(evprof_session__set_id(s, A0, 0), 0);
	assert_int_equal(evprof_session__set_id(s, X0, EVPROF_SESSION_CUT), 0);
	feed_all(s, ev);
	p = built(s, NULL);
	assert_int_equal(s->store.samples.n, 1);
	assert_int_equal(evprof_session__thread_total(s, 201, 0), 13);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * A process reaped by its parent (on another CPU, say) before its last
 * switch-out: that read comes with pid -1 as well as tid -1 (Linux 6.18:
 * its thread group's pid is gone too). It is the process whose EXIT this
 * CPU saw last, in its tree, and so is all it held.
 */
static void test_per_cpu_reaped(void **state)
{
	static const struct ev ev[] = {
	    EXEC(200, 200, "root", 50),
	    FORK(201, 200, 201, 200, 90),
	    CUT0(201, 201, 100, 10, 0),
	    EXIT(201, 200, 201, 200, 150),
	    CUT0(UINT32_MAX, UINT32_MAX, 160, 13, 0),
	};
	const pid_t root = 200;
	struct evprof_session *s =
	    session_of((struct evprof_session_opts){.counters = counter_names,
						    .nr_counters = 2,
						    .pids = &root,
						    .nr_pids = 1,
						    .per_cpu = true});
	struct evprof_profile *p;

	(void)state;
	assert_int_equal(evprof_session__set_id(s, A0, 0), 0);
	assert_int_equal(evprof_session__set_id(s, X0, EVPROF_SESSION_CUT), 0);
	feed_all(s, ev);
	p = built(s, NULL);
	assert_int_equal(evprof_session__thread_total(s, 201, 0), 13);
	assert_int_equal(evprof_session__unattributed(s, 0), 0);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Per CPU, a task the kernel never samples (the idle task of some CPUs)
 * leaves no read at its switch-out: the next thread's switch-in record
 * says where its own stretch began, and its first read takes only the CPU
 * time from there (the clock counts wall time). The unseen stretch is
 * unattributed, also before a CPU's first read.
 */
static void test_per_cpu_unseen(void **state)
{
	static const struct ev ev[] = {
	    /* Unseen from the start to 90: 101's first read takes 90..100. */
	    SWITCH_IN(101, 0, 90),
	    READ0(100, 101, 100, 10, 1000),
	    CUT0(100, 101, 150, 15, 1500),
	    /* 101 read last: nothing unseen before 102. */
	    SWITCH_IN(102, 101, 155),
	    CUT0(100, 102, 200, 20, 2000),
	    /* 200..600 unseen (idle), then 101 runs to 610. */
	    SWITCH_IN(101, 0, 600),
	    CUT0(100, 101, 610, 21, 6100),
	    /* 102 from 612; then its last switch-out after its EXIT (tid -1)
	     * is the read before 101's switch-in. */
	    SWITCH_IN(102, 101, 612),
	    READ0(100, 102, 700, 22, 7000),
	    EXIT(100, 100, 102, 102, 705),
	    CUT0(100, UINT32_MAX, 710, 23, 7100),
	    SWITCH_IN(101, UINT32_MAX, 712),
	    READ0(100, 101, 800, 24, 8000),
	};
	struct evprof_session *s = cuts_session(true);
	struct evprof_profile *p;

	(void)state;
	feed_all(s, ev);
	p = built(s, NULL);
	assert_int_equal(
	    evprof_session__thread_total(s, 101, EVPROF_SESSION_CPU_TIME),
	    10 + 500 + 10 + 900);
	assert_int_equal(
	    evprof_session__thread_total(s, 102, EVPROF_SESSION_CPU_TIME),
	    500 + 900 + 100);
	assert_int_equal(
	    evprof_session__unattributed(s, EVPROF_SESSION_CPU_TIME),
	    990 + 4090);
	/* The other counters of an unseen stretch cannot be split. */
	assert_int_equal(evprof_session__thread_total(s, 101, 0),
			 10 + 5 + 1 + 1);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Per CPU, a software event's sample can carry another session's task ids
 * (Linux fills it once for every session counting the event, 6.18): 0,
 * as the idle task's, for a task that session cannot see. The CPU's
 * latest switch-in record names the task that runs: the read goes to it.
 * From a switch-out record to the next switch-in, the CPU may still run
 * the task leaving (a hardware sample before switch_to()), and after a
 * LOST record of the CPU, which may have held a switch, nothing is known:
 * the sample's own ids stand.
 */
static void test_foreign_task(void **state)
{
	static const struct ev ev[] = {
	    SWITCH_IN(101, 0, 90),
	    READ0(100, 101, 100, 10, 1000),
	    /* 101's switch-out cut, and 102's read, named the idle task's. */
	    CUT0(0, 0, 150, 15, 1500),
	    SWITCH_OUT_TO(101, 102, 151),
	    READ0(100, 101, 151, 16, 1510),
	    SWITCH_IN(102, 101, 152),
	    READ0(0, 0, 200, 22, 2000),
	    /* Nothing known after the LOST: the idle task's, dropped. */
	    LOST(300),
	    CUT0(0, 0, 400, 40, 4000),
	    /* 102 goes idle: a read of the idle task stays one. */
	    SWITCH_OUT_TO(102, 0, 410),
	    CUT0(0, 0, 420, 41, 4200),
	};
	struct evprof_session *s = cuts_session(true);
	struct evprof_profile *p;
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);
	p = built(s, NULL);
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 16);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 6);
	assert_int_equal(evprof_session__unattributed(s, 0), 18 + 1);
	evprof_session__stats(s, &st);
	assert_int_equal(st.samples_moved, 2);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Per CPU, a LOST record hides who ran: 102's switch-in was in it, and the
 * CPU's next read (102's) holds what 101 and 102 counted in the gap. No
 * thread gets it; 102 reads its own from there.
 */
static void test_per_cpu_lost(void **state)
{
	static const struct ev ev[] = {
	    SWITCH_IN(101, 0, 90),
	    READ0(100, 101, 100, 10, 1000),
	    LOST(150),
	    READ0(100, 102, 200, 30, 2000),
	    READ0(100, 102, 300, 35, 3000),
	};
	struct evprof_session *s = cuts_session(true);
	struct evprof_profile *p;
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);
	p = built(s, NULL);
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 10);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 5);
	assert_int_equal(evprof_session__unattributed(s, 0), 20);
	assert_int_equal(
	    evprof_session__thread_total(s, 102, EVPROF_SESSION_CPU_TIME),
	    1000);
	evprof_session__stats(s, &st);
	assert_int_equal(st.reads_after_lost, 1);
	assert_int_equal(st.lost_records, 1);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Per CPU, a thread read on both sides of a LOST record with no switch-out
 * or exit counted between (the cut members X0 and E0 still, or X0 moved by
 * the read's own switch-out) ran all through the gap: what the CPU counted
 * there is its. A switch-out in the gap leaves it to no thread.
 */
static void test_per_cpu_lost_same(void **state)
{
	static const struct ev ev[] = {
	    SWITCH_IN(101, 0, 90),
	    SAMPLE_OF(L0, 100, 101, 100, chain_a, {L0, 1}, {X0, 5}, {A0, 10},
		      {B0, 0}, {C0, 1000}, {E0, 0}),
	    LOST(150),
	    SAMPLE_OF(L0, 100, 101, 200, chain_a, {L0, 2}, {X0, 5}, {A0, 30},
		      {B0, 0}, {C0, 2000}, {E0, 0}),
	    LOST(250),
	    SAMPLE_OF(X0, 100, 101, 300, chain_a, {L0, 2}, {X0, 6}, {A0, 35},
		      {B0, 1}, {C0, 3000}, {E0, 0}),
	    SWITCH_OUT_TO(101, 102, 301),
	    SWITCH_IN(102, 101, 302),
	    SAMPLE_OF(L0, 100, 102, 400, chain_a, {L0, 3}, {X0, 6}, {A0, 40},
		      {B0, 1}, {C0, 4000}, {E0, 0}),
	    LOST(450),
	    SAMPLE_OF(L0, 100, 102, 500, chain_a, {L0, 4}, {X0, 8}, {A0, 60},
		      {B0, 3}, {C0, 5000}, {E0, 0}),
	};
	struct evprof_session *s = cuts_session(true);
	struct evprof_profile *p;
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	assert_int_equal(evprof_session__set_id(s, E0, EVPROF_SESSION_CUT), 0);
	feed_all(s, ev);
	p = built(s, NULL);
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 35);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 5);
	assert_int_equal(evprof_session__unattributed(s, 0), 20);
	evprof_session__stats(s, &st);
	assert_int_equal(st.reads_after_lost, 1);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Two sessions sampling context switches on one CPU share the kernel's
 * sample data (Linux 6.18): our cut may carry the other session's
 * IDENTIFIER. Its READ part is ours: the cut member that counted since the
 * last read is the one that fired; with no member moved, it is a profile
 * sample as before.
 */
static void test_foreign_identifier(void **state)
{
	static const struct ev ev[] = {
	    /* 101 sampled at 100, its cut (X0 1 -> 2) at 150 under id STRAY. */
	    SAMPLE(100, 101, 100, chain_a, {L0, 1}, {X0, 1}, {A0, 10},
		   {C0, 1000}),
	    SAMPLE_OF(STRAY, 100, 101, 150, chain_a, {L0, 1}, {X0, 2}, {A0, 15},
		      {C0, 1500}),
	    /* 102 sampled at 200 under id STRAY, no cut member moved. */
	    SAMPLE_OF(STRAY, 100, 102, 200, chain_a, {L0, 2}, {X0, 2}, {A0, 35},
		      {C0, 2000}),
	};
	struct evprof_session *s = cuts_session(false);
	struct evprof_profile *p;
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);
	/* The cut is no sample: two samples, 101's holds its cut's deltas. */
	assert_int_equal(s->store.samples.n, 2);
	p = built(s, NULL);
	assert_int_equal(evprof_session__thread_total(s, 101, 0), 15);
	assert_int_equal(
	    evprof_session__thread_total(s, 101, EVPROF_SESSION_CPU_TIME),
	    1500);
	assert_int_equal(evprof_session__thread_total(s, 102, 0), 20);
	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 2);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/* ---- stacks through the symbolizer -------------------------------------- */

static volatile int sink;

/* Functions whose addresses the stacks use; big enough for +8 and -1. */
__attribute__((noinline)) static void sess_leaf_fn(void)
{
	for (int i = 0; i < 4; i++)
		sink += i;
}

__attribute__((noinline)) static void sess_mid_fn(void)
{
	sess_leaf_fn();
	for (int i = 0; i < 4; i++)
		sink += i;
}

__attribute__((noinline)) static void sess_root_fn(void)
{
	sess_mid_fn();
	for (int i = 0; i < 4; i++)
		sink += i;
}

static void test_build_symbols(void **state)
{
	char kpath[] = "/tmp/evprof-test-kallsyms-XXXXXX";
	struct evprof_symbolizer_opts so = {.sz = sizeof(so)};
	struct evprof_symbolizer *sym;
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_profile *p;
	uint32_t me = (uint32_t)getpid();
	char comm[64], expect[512], *text;
	struct evprof_session_stats st = {.sz = sizeof(st)};
	FILE *f;
	int fd;

	(void)state;
	fd = mkstemp(kpath);
	assert_true(fd >= 0);
	f = fdopen(fd, "w");
	assert_non_null(f);
	fputs("ffffffff81000000 T _text\n"
	      "ffffffff81000100 T kfunc_outer\n"
	      "ffffffff81000200 T kfunc_inner\n"
	      "ffffffff81000300 t kfunc_end\n",
	      f);
	fclose(f);
	so.kallsyms_path = kpath;
	sym = evprof_symbolizer__new(&so);
	assert_non_null(sym);
	assert_int_equal(evprof_session__seed_process(s, (pid_t)me), 0);
	assert_true(
	    evprof_proc__read_comm((int)me, (int)me, comm, sizeof(comm)) > 0);

	uint64_t leaf = (uint64_t)(uintptr_t)&sess_leaf_fn;
	uint64_t mid = (uint64_t)(uintptr_t)&sess_mid_fn;
	uint64_t root = (uint64_t)(uintptr_t)&sess_root_fn;
	/*
	 * Kernel part innermost first, then the user part innermost first:
	 * the user ip is exact, the others are return addresses.
	 */
	const uint64_t chain[] = {
	    KCTX,
	    0xffffffff81000210,
	    0xffffffff81000101,
	    UCTX,
	    leaf + 4,
	    mid + 8,
	    root + 8,
	    0,
	};
	/* leaf at +0 exact; mid's return address at +1 means mid itself. */
	const uint64_t chain2[] = {UCTX, leaf, mid + 1, root + 8, 0};
	/* An address outside every mapping keeps its frame. */
	const uint64_t chain3[] = {UCTX, 0x10, root + 8, 0};
	const struct ev ev[] = {
	    SAMPLE(me, me, 100, chain, {L0, 1}, {A0, 10}),
	    SAMPLE(me, me, 101, chain, {L0, 2}, {A0, 20}),
	    SAMPLE(me, me, 102, chain, {L0, 3}, {A0, 30}),
	    SAMPLE(me, me, 200, chain2, {L0, 10}, {A0, 100}),
	    SAMPLE(me, me, 300, chain3, {L0, 11}, {A0, 105}),
	};

	feed_all(s, ev);
	p = built(s, sym);
	evprof_session__stats(s, &st);
	assert_int_equal(st.samples, 5);

	/* By samples. */
	text = folded_text(p, NULL);
	snprintf(expect, sizeof(expect),
		 "%s;sess_root_fn;0x10 1\n"
		 "%s;sess_root_fn;sess_mid_fn;sess_leaf_fn 1\n"
		 "%s;sess_root_fn;sess_mid_fn;sess_leaf_fn;kfunc_outer_[k];"
		 "kfunc_inner_[k] 3\n",
		 comm, comm, comm);
	assert_string_equal(text, expect);
	/* By page-fault deltas: 10 + 10 + 10, 70, 5. */
	text = folded_text(p, "page-faults");
	snprintf(expect, sizeof(expect),
		 "%s;sess_root_fn;0x10 5\n"
		 "%s;sess_root_fn;sess_mid_fn;sess_leaf_fn 70\n"
		 "%s;sess_root_fn;sess_mid_fn;sess_leaf_fn;kfunc_outer_[k];"
		 "kfunc_inner_[k] 30\n",
		 comm, comm, comm);
	assert_string_equal(text, expect);

	sess_root_fn();
	evprof_session__free(s);
	evprof_profile__free(p);
	evprof_symbolizer__free(sym);
	unlink(kpath);
}

/* Later mappings hide earlier ones; non-exec mappings are ignored. */
static void test_maps_override(void **state)
{
	static const uint64_t c1[] = {UCTX, 0x10500, 0};
	static const struct ev ev[] = {
	    COMM(100, 100, "app", 1),
	    MMAP2(100, 0x10000, 0x2000, 0, PROT_READ | PROT_EXEC,
		  "/lib/first.so", 2),
	    MMAP2(100, 0x10000, 0x1000, 0, PROT_READ, "/lib/data.bin", 3),
	    SAMPLE(100, 100, 5, c1, {L0, 1}),
	    MMAP2(100, 0x10400, 0x400, 0x3000, PROT_READ | PROT_EXEC,
		  "/lib/second.so", 10),
	    SAMPLE(100, 100, 20, c1, {L0, 1}),
	};
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_profile *p;

	(void)state;
	feed_all(s, ev);
	p = built(s, NULL);
	/*
	 * 0x10500 is 0x500 into first.so, then 0x3100 into second.so; without
	 * a symbolizer frames are named LIB+0xFILE_OFFSET.
	 */
	assert_string_equal(folded_text(p, NULL), "app;first.so+0x500 1\n"
						  "app;second.so+0x3100 1\n");
	evprof_session__free(s);
	evprof_profile__free(p);
}

/* Feed throughput, printed for the record (no time assert). */
static void test_feed_throughput(void **state)
{
	struct evprof_session *s = new_session(NULL, 0);
	struct evprof_profile *p;
	enum { N = 200000 };
	static uint64_t recs[N / 100][32];
	struct timespec t0, t1;
	size_t len = 0;

	(void)state;
	/* 2000 distinct records (chains, values), replayed 100 times. */
	for (size_t r = 0; r < N / 100; r++) {
		struct rb b;
		uint64_t chain[] = {KCTX,     0xffffffff81000100 + r % 7,
				    UCTX,     0x400000 + r % 13,
				    0x400100, 0x400200};

		rb_begin(&b, PERF_RECORD_SAMPLE, 0);
		rb_u64(&b, L0);
		rb_u64(&b, 0x400000);
		rb_u32x2(&b, 100, 100 + (uint32_t)(r % 4));
		rb_u64(&b, r);
		rb_u32x2(&b, 0, 0);
		rb_u64(&b, 1);
		rb_u64(&b, 4);
		rb_u64(&b, 10);
		rb_u64(&b, 5);
		rb_u64(&b, r);
		rb_u64(&b, L0);
		rb_u64(&b, r);
		rb_u64(&b, A0);
		rb_u64(&b, r);
		rb_u64(&b, B0);
		rb_u64(&b, r);
		rb_u64(&b, C0);
		rb_u64(&b, 6);
		for (int i = 0; i < 6; i++)
			rb_u64(&b, chain[i]);
		rb_end(&b);
		assert_true(b.len <= sizeof(recs[0]));
		memcpy(recs[r], b.words, b.len);
		len = b.len;
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (size_t i = 0; i < N; i++)
		assert_int_equal(
		    evprof_session__feed(s, recs[i % (N / 100)], len), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message(
	    "feed: %.0f samples/s\n",
	    N / ((t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) / 1e9));
	p = evprof_profile__new(NULL);
	assert_non_null(p);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	assert_int_equal(evprof_session__build(s, p, NULL), 0);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	print_message("build: %.3f s\n", (t1.tv_sec - t0.tv_sec) +
					     (t1.tv_nsec - t0.tv_nsec) / 1e9);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/* A switch-out cut of t at tm with chain ch (the cut's id X0). */
#define OUT_CUT(t, tm, ch) SAMPLE(100, t, tm, ch, {X0, tm}, {L0, 1}, {C0, tm})

struct offcpu_sums {
	int w_off, w_pre;
	uint64_t off[4], pre[4]; /* by profile thread */
};

static int sum_offcpu(const struct evprof_profile_entry *e, void *ctx)
{
	struct offcpu_sums *o = ctx;

	assert_true(e->thread >= 0 && e->thread < 4);
	o->off[e->thread] += e->weights[o->w_off];
	o->pre[e->thread] += e->weights[o->w_pre];
	return 0;
}

/*
 * Off-CPU intervals from switch-out cuts and switch records fed out of
 * order (records of different rings): each starts at its out record (at
 * its cut without one), ends at its switch-in, at its thread's EXIT, or at
 * the recording's end; a cut after the EXIT opens none.
 */
static void test_offcpu(void **state)
{
	static const uint64_t chain_b[] = {UCTX, 0x2020, 0};
	static const struct ev ev[] = {
	    /* 101: switch-in fed before its cut (another ring): 1110 - 110. */
	    SW_IN(101, 1110),
	    OUT_CUT(101, 100, chain_a),
	    SW_OUT(101, 110),
	    /* 101 again, preempted: 2505 - 2005, on another stack. */
	    OUT_CUT(101, 2000, chain_b),
	    SW_PREEMPT(101, 2005),
	    SW_IN(101, 2505),
	    /* 101's third switch-out lost its cut: no interval, counted. */
	    SW_OUT(101, 3000),
	    SW_IN(101, 3100),
	    /* 102: exits while out (400 - 305); its cut after the exit opens
	     * nothing. */
	    OUT_CUT(102, 300, chain_a),
	    SW_OUT(102, 305),
	    EXIT(100, 100, 102, 102, 400),
	    OUT_CUT(102, 450, chain_a),
	    /* 103: never back, closed at the end: 5000 - 3010. */
	    OUT_CUT(103, 3000, chain_a),
	    SW_OUT(103, 3010),
	    /* 104: no out record: from its cut, 80 - 50. */
	    OUT_CUT(104, 50, chain_a),
	    SW_IN(104, 80),
	};
	struct evprof_session *s = offcpu_session(NULL, 0);
	struct evprof_profile *p;
	struct offcpu_sums sums = {.w_off = -1};
	struct evprof_profile_thread_info ti;
	struct evprof_session_stats st = {.sz = sizeof(st)};
	int thr[4];

	(void)state;
	feed_all(s, ev);
	evprof_session__end(s, 5000);

	p = built(s, NULL);
	sums.w_off = evprof_profile__add_weight_type(p, "off-cpu");
	sums.w_pre = evprof_profile__add_weight_type(p, "preempted");
	assert_true(sums.w_off >= 0 && sums.w_pre >= 0);
	for (int i = 0; i < 4; i++) {
		assert_int_equal(evprof_profile__thread_info(p, i, &ti), 0);
		thr[i] = ti.tid;
	}
	assert_int_equal(
	    evprof_profile__for_each_entry(p, -1, sum_offcpu, &sums), 0);
	for (int i = 0; i < 4; i++) {
		uint64_t off = thr[i] == 101   ? 1000
			       : thr[i] == 102 ? 95
			       : thr[i] == 103 ? 1990
					       : 30;

		assert_int_equal(sums.off[i], off);
		assert_int_equal(sums.pre[i], thr[i] == 101 ? 500 : 0);
	}
	evprof_session__stats(s, &st);
	assert_int_equal(st.offcpu_voluntary, 4);
	assert_int_equal(st.offcpu_preempted, 1);
	assert_int_equal(st.offcpu_unmatched, 0);
	assert_int_equal(st.offcpu_unstarted, 1);
	/* Cuts are no profile samples, nor the tails on "[unsampled]". */
	assert_int_equal(st.samples, 0);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/*
 * Switch-outs that came without their cut count only for the kept tasks
 * that have cuts: not for a thread outside the process tree (cpu mode
 * stores every thread's), nor for an earlier task of a reused tid.
 */
static void test_offcpu_unstarted(void **state)
{
	static const pid_t root = 100;
	static const struct ev ev[] = {
	    /* 101, in the tree: one switch-out without its cut. */
	    OUT_CUT(101, 100, chain_a),
	    SW_OUT(101, 105),
	    SW_IN(101, 200),
	    SW_OUT(101, 300),
	    SW_IN(101, 400),
	    /* 201, of process 200 (not in the tree): the same, not counted. */
	    SAMPLE(200, 201, 100, chain_a, {X0, 100}, {L0, 1}, {C0, 100}),
	    SW_OUT(201, 105),
	    SW_IN(201, 200),
	    SW_OUT(201, 300),
	    SW_IN(201, 400),
	    /* 102: an earlier task of the tid, without cuts, then a new one. */
	    SW_OUT(102, 50),
	    SW_IN(102, 60),
	    FORK(100, 100, 102, 101, 70),
	    OUT_CUT(102, 100, chain_a),
	    SW_OUT(102, 105),
	    SW_IN(102, 200),
	};
	struct evprof_session *s = offcpu_session(&root, 1);
	struct evprof_profile *p;
	struct evprof_session_stats st = {.sz = sizeof(st)};

	(void)state;
	feed_all(s, ev);
	evprof_session__end(s, 500);

	p = built(s, NULL);
	evprof_session__stats(s, &st);
	assert_int_equal(st.offcpu_voluntary, 2);
	assert_int_equal(st.offcpu_unstarted, 1);
	evprof_profile__free(p);
	evprof_session__free(s);
}

/* ---- builds in parts ----------------------------------------------------- */

/* Per tid (100..104): samples, CPU ns, page faults, summed over p. */
struct tid_sums {
	uint64_t samples[5], cpu[5], faults[5];
};

static int sum_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct evprof_profile *p = ((void **)ctx)[0];
	struct tid_sums *ts = ((void **)ctx)[1];
	struct evprof_profile_thread_info ti;
	int k;

	assert_int_equal(evprof_profile__thread_info(p, e->thread, &ti), 0);
	k = ti.tid - 100;
	assert_true(k >= 0 && k < 5);
	ts->samples[k] += e->samples;
	ts->cpu[k] += e->cpu_ns;
	ts->faults[k] += e->counters[0];
	return 0;
}

static void add_sums(struct evprof_profile *p, struct tid_sums *ts)
{
	void *ctx[2] = {p, ts};

	assert_int_equal(evprof_profile__for_each_entry(p, -1, sum_entry, ctx),
			 0);
}

/*
 * One CPU's stream: threads 101..103 of process 100 taking turns with
 * cuts (as test_per_cpu_cuts), 101 named late, 104 forked in the middle
 * and exiting; step i feeds the records of time up to (i + 1) * 100.
 */
static void feed_step(struct evprof_session *s, int step)
{
	static const struct ev ev[] = {
	    READ0(100, 101, 100, 10, 1000), CUT0(100, 101, 150, 15, 1500),
	    READ0(100, 102, 200, 35, 2000), COMM(100, 101, "late", 210),
	    CUT0(100, 102, 250, 40, 2500),  CUT0(100, 101, 300, 47, 3000),
	    FORK(100, 100, 104, 101, 320),  READ0(100, 102, 350, 50, 3500),
	    READ0(100, 104, 360, 51, 3600), CUT0(100, 104, 380, 51, 3800),
	    EXIT(100, 100, 104, 101, 390),  CUT0(100, 102, 400, 52, 4000),
	    READ0(100, 101, 450, 60, 4500), CUT0(100, 101, 500, 61, 5000),
	    READ0(0, 0, 510, 63, 5100),	    CUT0(0, 0, 520, 65, 5200),
	    CUT0(100, 103, 600, 70, 6000),  READ0(100, 102, 650, 72, 6500),
	    CUT0(100, 102, 700, 75, 7000),
	};

	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++)
		if (ev[i].time > (uint64_t)step * 100 &&
		    ev[i].time <= (uint64_t)(step + 1) * 100)
			feed_n(s, &ev[i], 1);
}

/* The name of thread tid in p, NULL when p has none. */
static const char *name_in(const struct evprof_profile *p, int tid)
{
	struct evprof_profile_thread_info ti;

	for (int t = 0; !evprof_profile__thread_info(p, t, &ti); t++)
		if (ti.tid == tid)
			return ti.name;
	return NULL;
}

/*
 * The same stream built whole, in windows (a new profile per part, built
 * 50 ns behind what was fed) and in steps into one profile: per thread,
 * the windows sum to the whole build exactly, as do the steps, and the
 * session's totals and stats agree; a window holds its own threads only.
 */
static void test_build_parts(void **state)
{
	struct evprof_session *whole = cuts_session(true),
			      *win = cuts_session(true),
			      *steps = cuts_session(true);
	struct evprof_profile *pw = evprof_profile__new(NULL),
			      *ps = evprof_profile__new(NULL), *w;
	struct tid_sums sw, sp, ss;
	struct evprof_session_stats a = {.sz = sizeof(a)},
				    b = {.sz = sizeof(b)};

	(void)state;
	memset(&sw, 0, sizeof(sw));
	memset(&sp, 0, sizeof(sp));
	memset(&ss, 0, sizeof(ss));
	for (int step = 0; step < 8; step++) {
		feed_step(whole, step);
		feed_step(win, step);
		feed_step(steps, step);
		w = evprof_profile__new(NULL);
		assert_non_null(w);
		assert_int_equal(
		    evprof_session__build_until(
			win, w, NULL,
			step == 7 ? UINT64_MAX : (uint64_t)step * 100 + 50),
		    0);
		add_sums(w, &sp);
		if (step == 3) /* 350..450: 101 has no sample there */
			assert_null(name_in(w, 101));
		if (step == 4)
			assert_string_equal(name_in(w, 101), "late");
		evprof_profile__free(w);
		assert_int_equal(
		    evprof_session__build_until(
			steps, ps, NULL,
			step == 7 ? UINT64_MAX : (uint64_t)step * 100 + 50),
		    0);
		/* Built samples are dropped: what is left is recent. */
		for (size_t i = 0; i < steps->store.samples.n; i++)
			assert_true(steps->store.samples.a[i].time >
				    (uint64_t)step * 100 + 50);
		assert_true(steps->store.samples.n <= 4);
	}
	assert_int_equal(evprof_session__build(whole, pw, NULL), 0);
	assert_int_equal(evprof_session__build(win, pw, NULL), -EBUSY);
	add_sums(pw, &sw);
	add_sums(ps, &ss);
	/* The stream's truth: 101 ran to 150, 250..300, 400..500. */
	assert_int_equal(sw.faults[1], 10 + 5 + 7 + 8 + 1);
	assert_int_equal(sw.faults[3], 5);
	assert_memory_equal(&sw, &sp, sizeof(sw));
	assert_memory_equal(&sw, &ss, sizeof(sw));
	for (int k = 0; k < 5; k++) {
		assert_int_equal(
		    evprof_session__thread_total(win, 100 + k, 0),
		    evprof_session__thread_total(whole, 100 + k, 0));
		assert_int_equal(evprof_session__thread_total(
				     steps, 100 + k, EVPROF_SESSION_CPU_TIME),
				 evprof_session__thread_total(
				     whole, 100 + k, EVPROF_SESSION_CPU_TIME));
	}
	assert_int_equal(evprof_session__unattributed(win, 0),
			 evprof_session__unattributed(whole, 0));
	evprof_session__stats(whole, &a);
	evprof_session__stats(steps, &b);
	assert_int_equal(a.samples, b.samples);
	assert_int_equal(a.samples_filtered, b.samples_filtered);
	assert_int_equal(a.threads, b.threads);
	assert_string_equal(name_in(ps, 101), "late");
	assert_string_equal(name_in(pw, 101), "late");
	evprof_profile__free(pw);
	evprof_profile__free(ps);
	evprof_session__free(whole);
	evprof_session__free(win);
	evprof_session__free(steps);
}

/*
 * One thread's sample i for test_build_behind(): a chain of its own (the
 * arena outgrows the room a build behind makes) and cumulative values.
 */
static void behind_sample(struct rb *b, uint32_t tid, uint64_t i,
			  const uint64_t *cum)
{
	rb_begin(b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(b, L0);
	rb_u64(b, 0x400000 + i % 977 * 16);
	rb_u32x2(b, 100, tid);
	rb_u64(b, i * 10);
	rb_u32x2(b, 0, 0);
	rb_u64(b, 1000);
	rb_u64(b, 4); /* READ: leader, faults, switches, clock */
	rb_u64(b, i * 10);
	rb_u64(b, i * 10);
	rb_u64(b, cum[0]);
	rb_u64(b, L0);
	rb_u64(b, cum[1]);
	rb_u64(b, A0);
	rb_u64(b, cum[2]);
	rb_u64(b, B0);
	rb_u64(b, cum[3]);
	rb_u64(b, C0);
	rb_u64(b, 6);
	rb_u64(b, UCTX);
	for (uint64_t k = 0; k < 5; k++)
		rb_u64(b, 0x400000 + (i * 31 + k * 7919) % 100003 * 16);
	rb_end(b);
}

/*
 * Feeds b to the session built whole and to the one built behind, which
 * waits for its build when b could move what the build reads (as an
 * import does); *waits counts those.
 */
static void feed_both(struct evprof_session *whole,
		      struct evprof_session *behind, struct rb *b, int *waits)
{
	assert_int_equal(evprof_session__feed(whole, b->words, b->len), 0);
	if (!evprof__session_room(behind, b->len)) {
		++*waits;
		assert_int_equal(evprof__session_settle(behind), 0);
	}
	assert_int_equal(evprof_session__feed(behind, b->words, b->len), 0);
}

/* The folded text of p weighed by page faults, malloc'd; *len its length. */
static char *folded_all(const struct evprof_profile *p, size_t *len)
{
	FILE *f = folded(p, "page-faults");
	char *buf;

	assert_int_equal(fseek(f, 0, SEEK_END), 0);
	*len = (size_t)ftell(f);
	rewind(f);
	buf = malloc(*len ? *len : 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

/*
 * Parts built behind the feeding make the profile that parts built in
 * turn make: the same samples, values, stacks and names, with records fed
 * while a build runs (samples and chains into the room it made, or after
 * waiting for it) and a side-band event stamped before the part's end but
 * fed after it began, replayed by the next part, not dropped with it.
 */
static void test_build_behind(void **state)
{
	struct evprof_session *whole = new_session((pid_t[]){100}, 1),
			      *behind = new_session((pid_t[]){100}, 1);
	struct evprof_profile *pw = evprof_profile__new(NULL),
			      *pb = evprof_profile__new(NULL);
	struct evprof_session_stats a = {.sz = sizeof(a)},
				    b = {.sz = sizeof(b)};
	uint64_t cum[4][4] = {{0}};
	const uint64_t n = 300000, part = 2000;
	char name[32], *fa, *fb;
	size_t la, lb;
	int waits = 0;
	struct rb r;

	(void)state;
	assert_non_null(pw);
	assert_non_null(pb);
	for (uint64_t i = 1; i <= n; i++) {
		uint32_t t = (uint32_t)(i % 4);

		cum[t][0] += 1000;
		cum[t][1] += i % 3;
		cum[t][2] += i % 5 == 0;
		cum[t][3] += 900 + i % 7;
		behind_sample(&r, 100 + t, i, cum[t]);
		feed_both(whole, behind, &r, &waits);
		/* A long stretch without parts outgrows the room. */
		if (i % part || (i > n / 6 && i < n / 6 * 5))
			continue;
		/* The last part starts for sure: nothing runs before it. */
		if (i == n)
			assert_int_equal(evprof__session_settle(behind), 0);
		assert_int_equal(
		    evprof_session__build_until(whole, pw, NULL, i * 10 - 500),
		    0);
		assert_int_equal(evprof__session_build_behind(behind, pb, NULL,
							      i * 10 - 500),
				 0);
		snprintf(name, sizeof(name), "late-%llu",
			 (unsigned long long)i);
		rb_comm(&r, 100, 103, name, false, i * 10 - 600, 10);
		feed_both(whole, behind, &r, &waits);
	}
	assert_true(waits > 0); /* the stream outgrew the room: it waited */
	assert_int_equal(
	    evprof_session__build_until(whole, pw, NULL, UINT64_MAX), 0);
	assert_int_equal(
	    evprof_session__build_until(behind, pb, NULL, UINT64_MAX), 0);
	assert_string_equal(name_in(pb, 103), name);
	fa = folded_all(pw, &la);
	fb = folded_all(pb, &lb);
	assert_true(la > 0);
	assert_int_equal(la, lb);
	assert_memory_equal(fa, fb, la);
	evprof_session__stats(whole, &a);
	evprof_session__stats(behind, &b);
	assert_int_equal(b.samples, n);
	assert_int_equal(a.samples, b.samples);
	assert_int_equal(a.samples_filtered, b.samples_filtered);
	assert_int_equal(a.threads, b.threads);
	for (int t = 0; t < 4; t++)
		assert_int_equal(
		    evprof_session__thread_total(behind, 100 + t, 0),
		    cum[t][1]);
	free(fa);
	free(fb);
	evprof_profile__free(pw);
	evprof_profile__free(pb);
	evprof_session__free(whole);
	evprof_session__free(behind);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_new_rejects),
	    cmocka_unit_test(test_deltas_two_threads),
	    cmocka_unit_test(test_counter_reset),
	    cmocka_unit_test(test_own_attribution),
	    cmocka_unit_test(test_process_tree),
	    cmocka_unit_test(test_names_exec),
	    cmocka_unit_test(test_accounting),
	    cmocka_unit_test(test_exclude_idle),
	    cmocka_unit_test(test_per_cpu_cuts),
	    cmocka_unit_test(test_per_cpu_exit_tail),
	    cmocka_unit_test(test_per_cpu_reaped),
	    cmocka_unit_test(test_per_cpu_backwards),
	    cmocka_unit_test(test_per_cpu_unseen),
	    cmocka_unit_test(test_foreign_identifier),
	    cmocka_unit_test(test_foreign_task),
	    cmocka_unit_test(test_per_cpu_lost),
	    cmocka_unit_test(test_per_cpu_lost_same),
	    cmocka_unit_test(test_offcpu),
	    cmocka_unit_test(test_offcpu_unstarted),
	    cmocka_unit_test(test_build_symbols),
	    cmocka_unit_test(test_maps_override),
	    cmocka_unit_test(test_feed_throughput),
	    cmocka_unit_test(test_build_parts),
	    cmocka_unit_test(test_build_behind),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
