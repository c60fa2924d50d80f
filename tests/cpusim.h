/* SPDX-License-Identifier: MIT */
/*
 * A synthetic recording of per-CPU groups (evprof's cpu mode) on many
 * CPUs, with the truth of every task computed as it is made: a tree of
 * processes and threads under a root, and processes outside it, forking,
 * migrating between CPUs, taking page faults and exiting, each CPU's ring
 * filled as the kernel fills it, then the rings fed to a session in an
 * order the recorder can produce. Shared by tests/unit/test_session_cpus.c
 * and fuzz/fuzz_session.c (its many-CPU mode); needs no test framework.
 *
 * Each CPU has one group: the sampling leader (a counter of task time, in
 * 100 ns units), page faults, the CPU clock (wall time since the CPU's
 * group began), the switch-out cut and the exit cut (both
 * EVPROF_SESSION_CUT). What the kernel does and this copies:
 *   - a switch-out reads the group at its time (prepare_task_switch());
 *     the switch-in record of the next task follows it (finish_task_
 *     switch()), naming the task before; the idle task's switch-out is
 *     not sampled (exclude_idle), so after idle the next task's first read
 *     takes only the CPU time from its switch-in;
 *   - a FORK is written in the parent's CPU ring before the child can run
 *     anywhere;
 *   - an exit reads the group at sched_process_exit, then writes EXIT on
 *     the same CPU, then the last switch-out reads it with tid -1 once the
 *     task is unhashed: a thread always (it reaps itself), a process when
 *     its parent reaped it first on another CPU, and then its pid is -1 as
 *     well (the thread group's pid is gone too);
 *   - a sample interrupting another's output (the leader's hrtimer in the
 *     exit tracepoint's) writes its record before the other's when it
 *     came before the other reserved its space (then that one's time is
 *     older than the record before it), after it otherwise (then its
 *     values are older than those before it);
 *   - each ring is in the order its records were written; the recorder
 *     drains ring after ring, so the rings' records meet in any order that
 *     keeps each ring's.
 * Randomness comes from bytes (a fuzz input) and then from a generator
 * seeded by them: the same bytes make the same run.
 */
#ifndef EVPROF_TESTS_CPUSIM_H
#define EVPROF_TESTS_CPUSIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <linux/perf_event.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#define CS_MAX_CPUS  48
#define CS_MAX_TASKS 320
#define CS_SLOT_NS   10000ull
#define CS_T0	     1000000000ull
#define CS_ROOT	     100
#define CS_FOREIGN   9000 /* pids of processes outside the tree */

/* The group's members, in read order. */
enum { CS_L, CS_F, CS_C, CS_X, CS_E, CS_MEMBERS };
/* The truth's slots: faults, CPU ns, the leader's count. */
enum { CS_T_FAULTS, CS_T_CPU, CS_T_LEADER, CS_TRUTHS };

#define CS_ID(cpu, m) (1000 + (uint64_t)(cpu)*8 + (uint64_t)(m))

#define CS_SAMPLE_TYPE                                                         \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |             \
	 PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN)
#define CS_READ_FORMAT                                                         \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

/* How the rings' records meet. */
enum cs_order {
	CS_BY_TIME, /* merged by time, as perf's ordered events */
	CS_POLLS,   /* ring after ring at each poll, as evprof's recorder */
	CS_POLLS_REVERSED, /* the same, rings from the last */
	CS_RANDOM,	   /* any ring next, each kept in its order */
	CS_ORDERS
};

struct cs_src {
	const uint8_t *data;
	size_t size, pos;
	uint64_t rng;
};

struct cs_task {
	uint32_t pid, tid, ppid, ptid;
	bool tree, leader;	/* in the root's tree; its process's main */
	bool runnable, running; /* forked and alive; on a CPU now */
	bool dead;
	uint32_t threads; /* a main thread: its live other threads */
	uint64_t truth[CS_TRUTHS];
};

/* One record in a ring: where its bytes are, its time. */
struct cs_rec {
	size_t off, len;
	uint64_t time;
};

struct cs_ring {
	uint8_t *bytes;
	size_t len, cap;
	struct cs_rec *recs;
	size_t n, rcap, fed;
};

struct cs_cpu {
	uint64_t v[CS_MEMBERS]; /* but the clock: time - base */
	uint64_t base;
	uint64_t lrem; /* task ns the leader has not counted yet */
	bool unread;   /* no read since a switch-in after idle */
	int cur;       /* running task, -1 for idle */
	uint64_t from; /* the CPU time of cur's stretch counts from here */
	struct cs_ring ring;
};

struct cs_sim {
	struct cs_src src;
	uint32_t nr_cpus;
	struct cs_cpu cpu[CS_MAX_CPUS];
	struct cs_task task[CS_MAX_TASKS];
	uint32_t nr_tasks, next_pid;
	/* What nobody in the tree counted: other processes, idle gaps. */
	uint64_t outside[CS_TRUTHS];
	uint64_t end;
	bool nomem;
};

static inline uint32_t cs_pick(struct cs_src *s, uint32_t n)
{
	uint32_t v;

	if (s->pos < s->size) {
		v = s->data[s->pos++];
		if (n > 256 && s->pos < s->size)
			v = v << 8 | s->data[s->pos++];
		/* The rest follows from what was read. */
		s->rng = s->rng * 6364136223846793005ull + v + 1;
	} else {
		s->rng ^= s->rng << 13;
		s->rng ^= s->rng >> 7;
		s->rng ^= s->rng << 17;
		v = (uint32_t)(s->rng >> 24);
	}
	return n ? v % n : 0;
}

/* True one time in n. */
static inline bool cs_chance(struct cs_src *s, uint32_t n)
{
	return cs_pick(s, n) == 0;
}

static inline void cs_put(struct cs_sim *sim, struct cs_ring *r, const void *p,
			  size_t n)
{
	if (r->len + n > r->cap) {
		size_t cap = r->cap ? 2 * r->cap : 4096;
		uint8_t *b;

		while (cap < r->len + n)
			cap *= 2;
		b = realloc(r->bytes, cap);
		if (!b) {
			sim->nomem = true;
			return;
		}
		r->bytes = b;
		r->cap = cap;
	}
	memcpy(r->bytes + r->len, p, n);
	r->len += n;
}

static inline void cs_u64(struct cs_sim *sim, struct cs_ring *r, uint64_t v)
{
	cs_put(sim, r, &v, sizeof(v));
}

static inline void cs_u32x2(struct cs_sim *sim, struct cs_ring *r, uint32_t a,
			    uint32_t b)
{
	cs_u64(sim, r, (uint64_t)b << 32 | a);
}

/* Starts a record of type in cpu's ring at time; cs_end() sizes it. */
static inline void cs_begin(struct cs_sim *sim, uint32_t cpu, uint32_t type,
			    uint16_t misc, uint64_t time)
{
	struct cs_ring *r = &sim->cpu[cpu].ring;
	struct perf_event_header h = {.type = type, .misc = misc};

	if (r->n == r->rcap) {
		size_t cap = r->rcap ? 2 * r->rcap : 256;
		struct cs_rec *a = realloc(r->recs, cap * sizeof(*a));

		if (!a) {
			sim->nomem = true;
			return;
		}
		r->recs = a;
		r->rcap = cap;
	}
	r->recs[r->n] = (struct cs_rec){.off = r->len, .time = time};
	cs_put(sim, r, &h, sizeof(h));
}

static inline void cs_end(struct cs_sim *sim, uint32_t cpu)
{
	struct cs_ring *r = &sim->cpu[cpu].ring;
	struct cs_rec *rec = &r->recs[r->n];
	uint16_t size;

	if (sim->nomem)
		return;
	rec->len = r->len - rec->off;
	size = (uint16_t)rec->len;
	memcpy(r->bytes + rec->off + offsetof(struct perf_event_header, size),
	       &size, sizeof(size));
	r->n++;
}

/* The sample_id trailer of a side-band record. */
static inline void cs_trailer(struct cs_sim *sim, uint32_t cpu, uint32_t pid,
			      uint32_t tid, uint64_t time)
{
	struct cs_ring *r = &sim->cpu[cpu].ring;

	cs_u32x2(sim, r, pid, tid);
	cs_u64(sim, r, time);
	cs_u32x2(sim, r, cpu, 0);
	cs_u64(sim, r, CS_ID(cpu, CS_L));
}

/*
 * A sample of member m on cpu at time, by pid/tid, reading the group as it
 * stood at read_time.
 */
static inline void cs_sample(struct cs_sim *sim, uint32_t cpu, int m,
			     uint32_t pid, uint32_t tid, uint64_t time,
			     uint64_t read_time)
{
	struct cs_cpu *c = &sim->cpu[cpu];
	struct cs_ring *r = &c->ring;

	c->unread = false;
	cs_begin(sim, cpu, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER, time);
	cs_u64(sim, r, CS_ID(cpu, m));
	cs_u64(sim, r, 0x400000 + (uint64_t)m * 16); /* IP */
	cs_u32x2(sim, r, pid, tid);
	cs_u64(sim, r, time);
	cs_u32x2(sim, r, cpu, 0);
	cs_u64(sim, r, 1); /* PERIOD */
	cs_u64(sim, r, CS_MEMBERS);
	cs_u64(sim, r, read_time - c->base);
	cs_u64(sim, r, read_time - c->base);
	for (int i = 0; i < CS_MEMBERS; i++) {
		cs_u64(sim, r, i == CS_C ? read_time - c->base : c->v[i]);
		cs_u64(sim, r, CS_ID(cpu, i));
	}
	cs_u64(sim, r, 0); /* CALLCHAIN: none, the IP stands for it */
	cs_end(sim, cpu);
}

static inline void cs_task_rec(struct cs_sim *sim, uint32_t cpu, uint32_t type,
			       const struct cs_task *t, uint64_t time)
{
	struct cs_ring *r = &sim->cpu[cpu].ring;

	cs_begin(sim, cpu, type, 0, time);
	cs_u32x2(sim, r, t->pid, t->ppid);
	cs_u32x2(sim, r, t->tid, t->ptid);
	cs_u64(sim, r, time);
	cs_trailer(sim, cpu, t->pid, t->tid, time);
	cs_end(sim, cpu);
}

/* The root's exec, as the launcher's: the tree begins there. */
static inline void cs_exec(struct cs_sim *sim, uint32_t cpu, uint32_t pid,
			   uint64_t time)
{
	struct cs_ring *r = &sim->cpu[cpu].ring;
	char name[16] = "root";

	cs_begin(sim, cpu, PERF_RECORD_COMM, PERF_RECORD_MISC_COMM_EXEC, time);
	cs_u32x2(sim, r, pid, pid);
	cs_put(sim, r, name, sizeof(name));
	cs_trailer(sim, cpu, pid, pid, time);
	cs_end(sim, cpu);
}

/* A switch-in of pid/tid on cpu at time, after prev_pid/prev_tid. */
static inline void cs_switch_in(struct cs_sim *sim, uint32_t cpu, uint32_t pid,
				uint32_t tid, uint32_t prev_pid,
				uint32_t prev_tid, uint64_t time)
{
	cs_begin(sim, cpu, PERF_RECORD_SWITCH_CPU_WIDE, 0, time);
	cs_u32x2(sim, &sim->cpu[cpu].ring, prev_pid, prev_tid);
	cs_trailer(sim, cpu, pid, tid, time);
	cs_end(sim, cpu);
}

/* What cur ran up to time on cpu: its CPU time, the leader's count. */
static inline void cs_account(struct cs_sim *sim, uint32_t cpu, uint64_t time)
{
	struct cs_cpu *c = &sim->cpu[cpu];
	uint64_t ns = time - c->from;

	c->from = time;
	if (c->cur < 0) {
		sim->outside[CS_T_CPU] += ns;
		return;
	}
	sim->task[c->cur].truth[CS_T_CPU] += ns;
	/* The leader counts task time in whole 100 ns units. */
	c->lrem += ns;
	c->v[CS_L] += c->lrem / 100;
	sim->task[c->cur].truth[CS_T_LEADER] += c->lrem / 100;
	c->lrem %= 100;
}

static inline void cs_faults(struct cs_sim *sim, uint32_t cpu, uint64_t n)
{
	struct cs_cpu *c = &sim->cpu[cpu];

	c->v[CS_F] += n;
	sim->task[c->cur].truth[CS_T_FAULTS] += n;
}

/* cur's switch-out read at time, by pid/tid as the kernel names it. */
static inline void cs_cut(struct cs_sim *sim, uint32_t cpu, int m, uint32_t pid,
			  uint32_t tid, uint64_t time)
{
	struct cs_cpu *c = &sim->cpu[cpu];

	cs_account(sim, cpu, time);
	c->v[m]++;
	cs_sample(sim, cpu, m, pid, tid, time, time);
}

static inline struct cs_task *
cs_new_task(struct cs_sim *sim, const struct cs_task *parent, bool thread)
{
	struct cs_task *t;

	if (sim->nr_tasks == CS_MAX_TASKS)
		return NULL;
	t = &sim->task[sim->nr_tasks++];
	/* Runnable from the next slot: after its FORK. */
	*t = (struct cs_task){.tid = sim->next_pid++, .runnable = !parent};
	if (!parent) {
		t->pid = t->tid;
		t->leader = true;
		return t;
	}
	t->pid = thread ? parent->pid : t->tid;
	t->ppid = parent->pid;
	t->ptid = parent->tid;
	t->tree = parent->tree;
	t->leader = !thread;
	return t;
}

static inline struct cs_task *cs_main_of(struct cs_sim *sim,
					 const struct cs_task *t)
{
	for (uint32_t i = 0; i < sim->nr_tasks; i++)
		if (sim->task[i].tid == t->pid)
			return &sim->task[i];
	return NULL;
}

/*
 * cur exits on cpu at the end of slot [t, end): its exit read, maybe a
 * leader sample interrupting its output, EXIT, its last switch-out.
 */
static inline void cs_exit(struct cs_sim *sim, uint32_t cpu, uint64_t t,
			   uint64_t end)
{
	struct cs_cpu *c = &sim->cpu[cpu];
	struct cs_task *k = &sim->task[c->cur];
	struct cs_task *main = cs_main_of(sim, k);
	/*
	 * After idle, the first read's own CPU time is reckoned from its
	 * sample time: one read late by some ns would be off by as much.
	 */
	uint32_t how = c->unread ? 0 : cs_pick(&sim->src, 3);
	uint64_t te = t + 100, tr = c->unread ? te : te + 30;
	uint32_t pid = k->pid, tid = k->tid;

	/* The exit read: its values taken at tr, maybe after a nested one. */
	cs_account(sim, cpu, tr);
	c->v[CS_E]++;
	if (how == 1) /* interrupted before it reserved: the inner first */
		cs_sample(sim, cpu, CS_L, k->pid, k->tid, te + 10, te + 10);
	cs_sample(sim, cpu, CS_E, k->pid, k->tid, te, tr);
	if (how == 2) /* after: the inner's values are older */
		cs_sample(sim, cpu, CS_L, k->pid, k->tid, te + 10, te + 10);
	cs_faults(sim, cpu, cs_pick(&sim->src, 3));
	cs_task_rec(sim, cpu, PERF_RECORD_EXIT, k, tr + 50);
	k->dead = true;
	k->runnable = false;
	if (!k->leader && main)
		main->threads--;
	/* Unhashed before its last switch-out: reaped, or a thread. */
	if (!k->leader || cs_chance(&sim->src, 2)) {
		tid = UINT32_MAX;
		if (k->leader)
			pid = UINT32_MAX;
	}
	cs_cut(sim, cpu, CS_X, pid, tid, end);
	c->cur = -1;
	k->running = false;
	/* The CPU's next task follows a read: no gap. */
	cs_switch_in(sim, cpu, 0, 0, pid, tid, end + 1);
}

/* What task cur does in slot [t, t + CS_SLOT_NS) on cpu. */
static inline void cs_run(struct cs_sim *sim, uint32_t cpu, uint64_t t,
			  bool last)
{
	struct cs_cpu *c = &sim->cpu[cpu];
	struct cs_task *k = &sim->task[c->cur], *child;
	uint64_t end = t + CS_SLOT_NS - 1000;

	for (uint64_t at = t + 2000; at < end - 2000; at += 1500) {
		switch (cs_pick(&sim->src, 8)) {
		case 0:
		case 1:
			cs_faults(sim, cpu, 1 + cs_pick(&sim->src, 40));
			break;
		case 2: /* the leader overflows */
			cs_account(sim, cpu, at);
			cs_sample(sim, cpu, CS_L, k->pid, k->tid, at, at);
			break;
		case 3:
			if (!k->tree)
				break;
			child = cs_new_task(sim, k, cs_chance(&sim->src, 2));
			if (!child)
				break;
			if (!child->leader)
				k->threads++;
			cs_task_rec(sim, cpu, PERF_RECORD_FORK, child, at);
			break;
		default:
			break;
		}
	}
	if (!last && k->tid != CS_ROOT && !k->threads && k->tree &&
	    cs_chance(&sim->src, 4))
		cs_exit(sim, cpu, end, t + CS_SLOT_NS);
}

/* Picks who runs on cpu in the slot at t: a switch if it changes. */
static inline void cs_schedule(struct cs_sim *sim, uint32_t cpu, uint64_t t)
{
	struct cs_cpu *c = &sim->cpu[cpu];
	int next = -1, prev = c->cur;
	uint32_t n = cs_pick(&sim->src, sim->nr_tasks + 2);

	if (prev >= 0 && cs_chance(&sim->src, 2))
		return; /* goes on */
	/* A runnable task no other CPU runs, or idle. */
	for (uint32_t i = 0; i < sim->nr_tasks && n < sim->nr_tasks; i++) {
		uint32_t k = (n + i) % sim->nr_tasks;

		if (sim->task[k].runnable &&
		    (!sim->task[k].running || (int)k == prev)) {
			next = (int)k;
			break;
		}
	}
	if (next == prev)
		return;
	if (prev >= 0) {
		cs_cut(sim, cpu, CS_X, sim->task[prev].pid, sim->task[prev].tid,
		       t);
		sim->task[prev].running = false;
	} else {
		/* Idle's stretch ends unread: the next counts from here. */
		cs_account(sim, cpu, t + 1);
	}
	c->cur = next;
	c->unread = prev < 0;
	if (next >= 0) {
		sim->task[next].running = true;
		cs_switch_in(sim, cpu, sim->task[next].pid, sim->task[next].tid,
			     prev >= 0 ? sim->task[prev].pid : 0,
			     prev >= 0 ? sim->task[prev].tid : 0, t + 1);
	} else {
		cs_switch_in(sim, cpu, 0, 0, sim->task[prev].pid,
			     sim->task[prev].tid, t + 1);
	}
}

/*
 * Makes a run from data: the CPUs, the root and processes outside the
 * tree, slots of CS_SLOT_NS in which every CPU runs a task or idles.
 * Returns 0, or -1 without memory.
 */
static inline int cs_make(struct cs_sim *sim, const uint8_t *data, size_t size)
{
	uint32_t slots;

	memset(sim, 0, sizeof(*sim));
	sim->src = (struct cs_src){.data = data, .size = size, .rng = size + 1};
	sim->nr_cpus = 16 + cs_pick(&sim->src, CS_MAX_CPUS - 16 + 1);
	slots = 20 + cs_pick(&sim->src, 40);
	sim->next_pid = CS_ROOT;
	cs_new_task(sim, NULL, false)->tree = true;
	sim->next_pid = CS_FOREIGN;
	for (int i = 0; i < 4; i++)
		cs_new_task(sim, NULL, false);
	sim->next_pid = CS_ROOT + 1;
	cs_exec(sim, 0, CS_ROOT, CS_T0 + 500);
	for (uint32_t i = 0; i < sim->nr_cpus; i++) {
		struct cs_cpu *c = &sim->cpu[i];

		/*
		 * CPUs' clocks start apart, as the groups are enabled, all
		 * before the first slot (CS_T0 + 1000 + i * 13): a stretch
		 * from before its group began would be truth no clock counts.
		 */
		c->base = CS_T0 + i * 17;
		c->from = c->base;
		c->cur = -1;
	}
	for (uint32_t k = 0; k <= slots; k++) {
		for (uint32_t i = 0; i < sim->nr_tasks; i++)
			sim->task[i].runnable |= !sim->task[i].dead;
		for (uint32_t i = 0; i < sim->nr_cpus; i++) {
			uint64_t t = CS_T0 + 1000 + k * CS_SLOT_NS + i * 13;

			/* The end: the last reads (an idle tail is unread). */
			if (k == slots) {
				if (sim->cpu[i].cur >= 0)
					cs_cut(sim, i, CS_X,
					       sim->task[sim->cpu[i].cur].pid,
					       sim->task[sim->cpu[i].cur].tid,
					       t);
				continue;
			}
			cs_schedule(sim, i, t);
			if (sim->cpu[i].cur >= 0)
				cs_run(sim, i, t, k + 1 == slots);
		}
	}
	sim->end = CS_T0 + 2000 + (slots + 1) * CS_SLOT_NS;
	for (uint32_t i = 0; i < sim->nr_tasks; i++)
		if (!sim->task[i].tree)
			for (int k = 0; k < CS_TRUTHS; k++)
				sim->outside[k] += sim->task[i].truth[k];
	return sim->nomem ? -1 : 0;
}

static inline void cs_free(struct cs_sim *sim)
{
	for (uint32_t i = 0; i < sim->nr_cpus; i++) {
		free(sim->cpu[i].ring.bytes);
		free(sim->cpu[i].ring.recs);
	}
}

/* A session of the run's layout (tree: only the root's tree). */
static inline struct evprof_session *cs_session(const struct cs_sim *sim,
						bool tree)
{
	static const char *const counters[] = {"page-faults"};
	static const pid_t root = CS_ROOT;
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .counters = counters,
	    .nr_counters = 1,
	    .sampler_counter = "leader",
	    .exclude_idle = true,
	    .per_cpu = true,
	    .pids = tree ? &root : NULL,
	    .nr_pids = tree,
	};
	struct evprof_session *s;
	static const int roles[CS_MEMBERS] = {
	    EVPROF_SESSION_SAMPLER, 0, EVPROF_SESSION_CPU_TIME,
	    EVPROF_SESSION_CUT, EVPROF_SESSION_CUT};

	o.fmt.sample_type = CS_SAMPLE_TYPE;
	o.fmt.read_format = CS_READ_FORMAT;
	o.fmt.sample_id_all = true;
	s = evprof_session__new(&o);
	for (uint32_t i = 0; s && i < sim->nr_cpus; i++)
		for (int m = 0; m < CS_MEMBERS; m++)
			if (evprof_session__set_id(s, CS_ID(i, m), roles[m])) {
				evprof_session__free(s);
				return NULL;
			}
	return s;
}

/* The oldest time among the records of all rings not fed yet. */
static inline uint64_t cs_unfed_min(const struct cs_sim *sim)
{
	uint64_t min = UINT64_MAX;

	for (uint32_t i = 0; i < sim->nr_cpus; i++) {
		const struct cs_ring *r = &sim->cpu[i].ring;

		for (size_t k = r->fed; k < r->n; k++)
			if (r->recs[k].time < min)
				min = r->recs[k].time;
	}
	return min;
}

/* Feeds ring i's next record to s: the session's answer, or 1 for none. */
static inline int cs_feed_one(struct cs_sim *sim, uint32_t i,
			      struct evprof_session *s)
{
	struct cs_ring *r = &sim->cpu[i].ring;
	const struct cs_rec *rec;
	uint64_t buf[1024 / 8];

	if (r->fed == r->n)
		return 1;
	rec = &r->recs[r->fed++];
	memcpy(buf, r->bytes + rec->off, rec->len);
	return evprof_session__feed(s, buf, rec->len);
}

/*
 * Called between records with the time up to which every record was fed:
 * a build in parts may go that far. Returns 0 or a negative error.
 */
typedef int (*cs_part_fn)(uint64_t fed_until, void *ctx);

/*
 * Feeds every ring to s in order (with CS_RANDOM, taking choices from the
 * run's bytes); part, when given, after every 64 records. Returns 0 or
 * the first error of the session or of part.
 */
static inline int cs_feed(struct cs_sim *sim, struct evprof_session *s,
			  enum cs_order order, cs_part_fn part, void *ctx)
{
	uint64_t poll = CS_T0;
	size_t fed = 0, total = 0;
	int err = 0;

	for (uint32_t i = 0; i < sim->nr_cpus; i++)
		total += sim->cpu[i].ring.n;
	while (!err && fed < total) {
		size_t before = fed;
		uint32_t ring = 0, nr = 1;
		uint64_t best = UINT64_MAX;

		switch (order) {
		case CS_BY_TIME:
			for (uint32_t i = 0; i < sim->nr_cpus; i++) {
				const struct cs_ring *r = &sim->cpu[i].ring;

				if (r->fed < r->n &&
				    r->recs[r->fed].time < best) {
					best = r->recs[r->fed].time;
					ring = i;
				}
			}
			break;
		case CS_POLLS:
		case CS_POLLS_REVERSED:
			/* Each ring drained up to a poll a slot apart. */
			poll += CS_SLOT_NS + cs_pick(&sim->src, CS_SLOT_NS);
			for (uint32_t k = 0; !err && k < sim->nr_cpus; k++) {
				uint32_t i = order == CS_POLLS
						 ? k
						 : sim->nr_cpus - 1 - k;
				struct cs_ring *r = &sim->cpu[i].ring;

				/* A ring is read a little after the one before. */
				while (!err && r->fed < r->n &&
				       r->recs[r->fed].time <= poll + k * 50) {
					err = cs_feed_one(sim, i, s);
					fed++;
				}
			}
			nr = 0;
			break;
		default:
			ring = cs_pick(&sim->src, sim->nr_cpus);
			nr = 1 + cs_pick(&sim->src, 8);
			break;
		}
		for (uint32_t k = 0; !err && k < nr; k++) {
			int rc = cs_feed_one(sim, ring, s);

			if (rc == 1)
				break;
			err = rc;
			fed++;
		}
		if (!err && part && fed / 64 != before / 64) {
			uint64_t min = cs_unfed_min(sim);

			err = part(min == UINT64_MAX ? sim->end : min - 1, ctx);
		}
	}
	return err;
}

/* Per task of the run, what a profile's entries sum to. */
struct cs_sums {
	const struct cs_sim *sim;
	const struct evprof_profile *p;
	uint64_t v[CS_MAX_TASKS][CS_TRUTHS];
	uint32_t strays; /* entries of a tid the run has not */
};

static inline int cs_sum_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct cs_sums *s = ctx;
	struct evprof_profile_thread_info ti;
	uint32_t i = 0;

	if (evprof_profile__thread_info(s->p, e->thread, &ti))
		return -1;
	while (i < s->sim->nr_tasks && s->sim->task[i].tid != (uint32_t)ti.tid)
		i++;
	if (i == s->sim->nr_tasks) {
		s->strays++;
		return 0;
	}
	/* Columns: page-faults, then the leader's. */
	s->v[i][CS_T_FAULTS] += e->has_counters & 1 ? e->counters[0] : 0;
	s->v[i][CS_T_CPU] += e->cpu_ns;
	s->v[i][CS_T_LEADER] += e->has_counters & 2 ? e->counters[1] : 0;
	return 0;
}

/*
 * Checks p (built from s, whole or in parts) against the run's truth:
 * every task's sums in p, and its session totals (whole), are its truth;
 * what the session leaves unattributed is what ran outside the tree (with
 * tree; else the unread parts of idle stretches). Each difference is
 * written to out. Returns how many there were.
 */
static inline int cs_check(const struct cs_sim *sim,
			   const struct evprof_session *s,
			   const struct evprof_profile *p, bool tree,
			   bool whole, const char *how, FILE *out)
{
	static const int counter_of[CS_TRUTHS] = {0, EVPROF_SESSION_CPU_TIME,
						  EVPROF_SESSION_SAMPLER};
	static const char *const name[CS_TRUTHS] = {"faults", "CPU ns",
						    "leader"};
	struct cs_sums *sums = calloc(1, sizeof(*sums));
	uint64_t outside[CS_TRUTHS];
	int bad = 0;

	if (!sums)
		return 1;
	sums->sim = sim;
	sums->p = p;
	if (evprof_profile__for_each_entry(p, -1, cs_sum_entry, sums) ||
	    sums->strays) {
		fprintf(out, "%s: profile entries of unknown threads\n", how);
		bad++;
	}
	memcpy(outside, sim->outside, sizeof(outside));
	for (uint32_t i = 0; i < sim->nr_tasks; i++) {
		const struct cs_task *t = &sim->task[i];

		if (!t->tree && tree)
			continue;
		for (int k = 0; k < CS_TRUTHS; k++) {
			uint64_t got = sums->v[i][k],
				 tot = whole ? evprof_session__thread_total(
						   s, (pid_t)t->tid,
						   counter_of[k])
					     : got;

			if (!t->tree)
				outside[k] -= t->truth[k];
			if (got == t->truth[k] && tot == got)
				continue;
			fprintf(out,
				"%s: tid %u (pid %u%s) %s: profile %llu, "
				"session %llu, truth %llu\n",
				how, t->tid, t->pid, t->dead ? ", exited" : "",
				name[k], (unsigned long long)got,
				(unsigned long long)tot,
				(unsigned long long)t->truth[k]);
			bad++;
		}
	}
	for (int k = 0; k < CS_TRUTHS; k++) {
		uint64_t un = evprof_session__unattributed(s, counter_of[k]);

		if (un == outside[k])
			continue;
		fprintf(out, "%s: %s unattributed %llu, expected %llu\n", how,
			name[k], (unsigned long long)un,
			(unsigned long long)outside[k]);
		bad++;
	}
	free(sums);
	return bad;
}

#endif /* EVPROF_TESTS_CPUSIM_H */
