// SPDX-License-Identifier: MIT
/*
 * Fuzzes sessions: a record stream (fuzz/session_input.h: the event
 * format, the ids' roles and mode bits, then records) is fed, built into a
 * profile without a symbolizer (or in parts while feeding: the same
 * checks must hold) and written in every format. Then the
 * delta invariants are checked against a model computed here from the
 * reads alone (abort on violation):
 *   task mode: per (id, tid) instance, the deltas sum to its last value
 *     (0 at its start: a FORK after its last read, or a value below the
 *     last one, starts a new instance); without a tree filter, per thread
 *     and counter, the kept samples carry exactly that.
 *   per-CPU mode: per id the deltas sum to its last accepted value (reads
 *     below the last one are rejected and counted).
 *   both: per counter, the thread totals plus the unattributed bucket
 *     equal the model's sum (per CPU, CPU time a switch-in record shows
 *     to be another task's is unattributed).
 * Switch-out cuts (EVPROF_SESSION_SWITCH_OUT) and switch records also open
 * and close off-CPU intervals, written as weights.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/profile.h>
#include <evprof/read.h>
#include <evprof/record.h>
#include <evprof/session.h>

#include "session_input.h"
#include "write_all.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 4096
#define NR_SLOTS (SESSION_INPUT_COUNTERS + 2) /* + CPU time, sampler */
#define SLOT_CPU SESSION_INPUT_COUNTERS
#define SLOT_SMP (SESSION_INPUT_COUNTERS + 1)

struct ident {
	uint64_t id;
	int role;
};

/* One counter instance, as the reads tell it. */
struct inst {
	uint64_t id;
	uint32_t tid; /* task mode */
	uint64_t last, time;
	int slot;
};

/* Model per (tid, slot) in task mode, per slot in both. */
struct tsum {
	uint32_t tid;
	uint64_t sum[NR_SLOTS];
};

struct model {
	bool per_cpu, sampler;
	struct ident ids[SESSION_INPUT_MAX_IDS];
	size_t nr_ids;
	struct inst inst[MAX_KEYS];
	size_t nr_inst;
	struct tsum tids[MAX_KEYS];
	size_t nr_tids;
	uint64_t total[NR_SLOTS];
	bool overflow; /* more keys than the model holds: skip the checks */
};

static const char *const counter_names[SESSION_INPUT_COUNTERS] = {"c0", "c1",
								  "c2", "c3"};

static uint64_t load64(const uint8_t *p)
{
	uint64_t v;

	memcpy(&v, p, 8);
	return v;
}

static const struct ident *find_id(const struct model *m, uint64_t id)
{
	/* The session keeps the last role declared for an id. */
	for (size_t i = m->nr_ids; i-- > 0;)
		if (m->ids[i].id == id)
			return &m->ids[i];
	return NULL;
}

static struct tsum *tid_sum(struct model *m, uint32_t tid)
{
	for (size_t i = 0; i < m->nr_tids; i++)
		if (m->tids[i].tid == tid)
			return &m->tids[i];
	if (m->nr_tids == MAX_KEYS) {
		m->overflow = true;
		return NULL;
	}
	m->tids[m->nr_tids] = (struct tsum){.tid = tid};
	return &m->tids[m->nr_tids++];
}

static struct inst *instance(struct model *m, uint64_t id, uint32_t tid,
			     bool *fresh)
{
	if (m->per_cpu)
		tid = 0;
	for (size_t i = 0; i < m->nr_inst; i++)
		if (m->inst[i].id == id && m->inst[i].tid == tid) {
			*fresh = false;
			return &m->inst[i];
		}
	if (m->nr_inst == MAX_KEYS) {
		m->overflow = true;
		return NULL;
	}
	*fresh = true;
	m->inst[m->nr_inst] = (struct inst){.id = id, .tid = tid};
	return &m->inst[m->nr_inst++];
}

static void model_read(struct model *m, uint32_t tid, uint64_t time,
		       const struct evprof_counter_value *v)
{
	const struct ident *e = find_id(m, v->id);
	struct inst *in;
	struct tsum *ts;
	uint64_t d;
	bool fresh;
	int slot;

	if (!e || e->role == EVPROF_SESSION_CUT ||
	    e->role == EVPROF_SESSION_SWITCH_OUT ||
	    (e->role == EVPROF_SESSION_SAMPLER && !m->sampler))
		return;
	slot = e->role == EVPROF_SESSION_CPU_TIME  ? SLOT_CPU
	       : e->role == EVPROF_SESSION_SAMPLER ? SLOT_SMP
						   : e->role;
	in = instance(m, v->id, tid, &fresh);
	ts = tid_sum(m, tid);
	if (!in || !ts)
		return;
	if (fresh || v->raw >= in->last)
		d = v->raw - (fresh ? 0 : in->last);
	else if (m->per_cpu)
		return; /* rejected */
	else
		d = v->raw; /* a new thread on a reused tid */
	in->last = v->raw;
	in->time = time;
	m->total[slot] += d;
	ts->sum[slot] += d;
}

static void model_fork(struct model *m, uint32_t tid, uint64_t time)
{
	if (m->per_cpu)
		return;
	for (size_t i = 0; i < m->nr_inst; i++)
		if (m->inst[i].tid == tid && m->inst[i].time < time) {
			m->inst[i].last = 0;
			m->inst[i].time = time;
		}
}

/* Follows what the session accepted of record r. */
static void model_record(struct model *m, const struct evprof_record *r,
			 const struct evprof_record_fmt *fmt, bool no_idle)
{
	struct evprof_snapshot snap;

	if (r->type == PERF_RECORD_FORK) {
		model_fork(m, r->task.tid, r->task.time);
		return;
	}
	if (r->type == PERF_RECORD_EXIT) {
		tid_sum(m, r->task.tid);
		return;
	}
	if (r->type != PERF_RECORD_SAMPLE ||
	    !(fmt->sample_type & PERF_SAMPLE_READ))
		return;
	if (!m->per_cpu && no_idle && (fmt->sample_type & PERF_SAMPLE_TID) &&
	    r->sample.pid == 0)
		return;
	if (evprof_snapshot__parse(&snap, r->sample.read, r->sample.read_size,
				   fmt->read_format) < 0)
		return;
	for (uint32_t i = 0; i < snap.nr; i++)
		model_read(m, r->sample.tid, r->sample.time, &snap.values[i]);
}

static int slot_counter(int slot)
{
	if (slot == SLOT_CPU)
		return EVPROF_SESSION_CPU_TIME;
	if (slot == SLOT_SMP)
		return EVPROF_SESSION_SAMPLER;
	return slot;
}

static void check(const struct evprof_session *s, struct model *m, bool tree)
{
	/* Per-CPU tid -1 samples go to the CPU's last exiting task. */
	if (!tid_sum(m, UINT32_MAX) || m->overflow)
		return;
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		int c = slot_counter(slot);
		uint64_t sum = evprof_session__unattributed(s, c);

		for (size_t i = 0; i < m->nr_tids; i++) {
			uint64_t t = evprof_session__thread_total(
			    s, (pid_t)m->tids[i].tid, c);

			sum += t;
			if (!m->per_cpu && !tree && t != m->tids[i].sum[slot]) {
				fprintf(
				    stderr,
				    "tid %u counter %d: deltas %llu, "
				    "reads %llu\n",
				    m->tids[i].tid, c, (unsigned long long)t,
				    (unsigned long long)m->tids[i].sum[slot]);
				abort();
			}
		}
		if (sum != m->total[slot]) {
			fprintf(stderr,
				"counter %d: deltas + unattributed %llu, "
				"reads %llu\n",
				c, (unsigned long long)sum,
				(unsigned long long)m->total[slot]);
			abort();
		}
	}
}

/* A process as the /proc reader would hand it over, with no /proc. */
static void seed(struct evprof_session *s, pid_t pid)
{
	const struct evprof_session_thread_seed threads[] = {
	    {pid, "seeded"}, {pid + 1, NULL}, {pid + 2, "worker"}};
	const struct evprof_map maps[] = {
	    {.start = 0x400000,
	     .end = 0x410000,
	     .prot = EVPROF_MAP_EXEC,
	     .path = "/seeded/bin"},
	    {.start = 0x410000,
	     .end = 0x420000,
	     .prot = EVPROF_MAP_READ,
	     .path = "/seeded/bin"},
	    {.start = 0x7f0000000000,
	     .end = 0x7f0000001000,
	     .prot = EVPROF_MAP_EXEC,
	     .path = NULL},
	};
	int err = evprof_session__seed(
	    s, &(struct evprof_session_seed){
		   .sz = sizeof(struct evprof_session_seed),
		   .pid = pid,
		   .name = "seeded",
		   .threads = threads,
		   .nr_threads = 3,
		   .maps = maps,
		   .nr_maps = 3,
	       });

	if (err && !(err == -EINVAL && pid <= 0))
		abort();
}

static void run(const uint8_t *data, size_t size, struct model *m)
{
	uint8_t mode = data[0];
	struct evprof_session_opts opts = {
	    .sz = sizeof(opts),
	    .counters = counter_names,
	    .nr_counters = SESSION_INPUT_COUNTERS,
	    .sampler_counter =
		mode & SESSION_INPUT_NO_SAMPLER ? NULL : "samples",
	    .exclude_idle = mode & SESSION_INPUT_NO_IDLE,
	    .per_cpu = mode & SESSION_INPUT_PER_CPU,
	    .max_stack_bytes = 1 << 16,
	};
	pid_t root;
	size_t off = SESSION_INPUT_HDR, nr_ids = data[1];
	struct evprof_session_stats st;
	struct evprof_session *s;
	struct evprof_profile *p, *parts;
	uint64_t *buf, first = 0, latest = 0;
	size_t nr_fed = 0;

	memcpy(&root, data + 4, 4);
	if (mode & SESSION_INPUT_TREE) {
		opts.pids = &root;
		opts.nr_pids = 1;
	}
	opts.fmt.sample_type = load64(data + 8);
	opts.fmt.read_format = load64(data + 16);
	opts.fmt.sample_regs_user = load64(data + 24);
	opts.fmt.sample_id_all = data[2] & 1;
	m->per_cpu = opts.per_cpu;
	m->sampler = opts.sampler_counter;

	s = evprof_session__new(&opts);
	if (!s)
		return; /* e.g. a format the session refuses */
	if (nr_ids > SESSION_INPUT_MAX_IDS)
		nr_ids = SESSION_INPUT_MAX_IDS;
	for (size_t i = 0; i < nr_ids && off + SESSION_INPUT_ID <= size; i++) {
		int role = (int8_t)data[off + 8];

		if (role >= 0)
			role %= SESSION_INPUT_COUNTERS;
		else if (role < EVPROF_SESSION_SWITCH_OUT)
			role = EVPROF_SESSION_SAMPLER;
		m->ids[m->nr_ids++] = (struct ident){load64(data + off), role};
		if (evprof_session__set_id(s, load64(data + off), role))
			abort();
		off += SESSION_INPUT_ID;
	}

	if (mode & SESSION_INPUT_SEED)
		seed(s, root);

	buf = malloc(65536);
	parts = mode & SESSION_INPUT_PARTS ? evprof_profile__new(NULL) : NULL;
	if (!buf || (mode & SESSION_INPUT_PARTS && !parts))
		abort();
	while (off + 8 <= size) {
		struct perf_event_header h;
		struct evprof_record r;

		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > size - off)
			break;
		/* Records are 8-aligned in a ring: copy to aligned bytes. */
		memcpy(buf, data + off, h.size);
		off += h.size;
		if (evprof_session__feed(s, buf, h.size) == 0 &&
		    evprof_record__parse(&r, buf, h.size, &opts.fmt) == 0) {
			model_record(m, &r, &opts.fmt, opts.exclude_idle);
			if (r.type == PERF_RECORD_SAMPLE && !first)
				first = r.sample.time;
			if (r.type == PERF_RECORD_SAMPLE &&
			    r.sample.time > latest)
				latest = r.sample.time;
		}
		/* Errors (-EOPNOTSUPP with off-CPU ids) leave all to the end. */
		if (parts && ++nr_fed % 16 == 0)
			evprof_session__build_until(
			    s, parts, NULL,
			    latest > first ? first + (latest - first) / 2 : 0);
	}
	free(buf);
	if (parts) {
		if (evprof_session__build_until(s, parts, NULL, UINT64_MAX) ==
		    0) {
			check(s, m, opts.nr_pids);
			write_all(parts);
		}
		evprof_profile__free(parts);
		evprof_session__free(s);
		return;
	}

	for (int round = 0; round < (mode & SESSION_INPUT_BUILD_TWICE ? 2 : 1);
	     round++) {
		p = evprof_profile__new(NULL);
		if (!p)
			abort();
		if (evprof_session__build(s, p, NULL) == 0) {
			check(s, m, opts.nr_pids);
			write_all(p);
		}
		evprof_profile__free(p);
	}
	evprof_session__stats(s, &st);
	if (st.samples + st.samples_filtered < st.samples)
		abort();
	evprof_session__free(s);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m;

	if (size < SESSION_INPUT_HDR)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	run(data, size, m);
	free(m);
	return 0;
}
