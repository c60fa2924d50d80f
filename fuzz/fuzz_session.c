// SPDX-License-Identifier: MIT
/*
 * Fuzzes sessions: a record stream (fuzz/session_input.h: the event
 * format, the ids' roles and mode bits, then records) is fed, built into a
 * profile without a symbolizer (or in parts while feeding: the same
 * checks must hold) and written in every format. A model computed here
 * follows the stream with a reader of its own (fuzz/perf_reader.h, from
 * the perf ABI, not evprof's parsers) and the session's documented rules
 * (include/evprof/session.h); any disagreement aborts:
 *   records: each one the session refuses (feed < 0) is one the model
 *     finds malformed (past header.size, size not a multiple of 8, a
 *     string without its NUL, bits of unknown layout, a group of 0 or
 *     more than 64 members), and the other way round; the stats count
 *     them (malformed), and what the model counts of the rest: READ
 *     entries of undeclared ids (unknown_ids), per-CPU reads below their
 *     id's last value (reads_rejected, no delta), task-mode reads below
 *     their (id, tid)'s last one (counter_resets, a new instance), lost,
 *     lost samples and throttle records, and before a build the samples
 *     kept and those of the idle task.
 *   deltas: per counter instance ((id, tid) in task mode: 0 at the start
 *     and at a FORK after its last read; id per CPU) the deltas of the
 *     reads, charged to the sample's thread (per CPU, tid -1 is the task
 *     whose EXIT the CPU saw last); cut samples' deltas go to their thread
 *     too. Per CPU, the idle task's deltas (exclude_idle) and the CPU time
 *     before a switch-in that follows a stretch no read ended are
 *     unattributed. Without a tree filter every thread's total and the
 *     unattributed sum must be the model's, per counter (a delta given to
 *     the wrong thread aborts); with one, the thread totals plus the
 *     unattributed sum must still be what the reads say.
 *   pprof: the profile is written as a gzip'd pprof file and read back
 *     (fuzz/pprof_reader.h: zlib and a protobuf decoder of its own): its
 *     sample types are samples, cpu, the counters, the sampler's, then
 *     weights in ns; every sample has one value per type and pid, tid and
 *     thread labels; per tid, each column sums to the model's (with a
 *     tree filter: to the session's thread total).
 * Switch-out cuts (EVPROF_SESSION_SWITCH_OUT) and switch records also open
 * and close off-CPU intervals, written as weights.
 * Many-CPU mode (SESSION_INPUT_CPUS): the input drives tests/cpusim.h
 * instead, a churning tree on 16 to 48 CPUs whose rings are fed in the
 * order the input picks (time, polls, any order keeping each ring's),
 * built whole or in parts; every task's counts must be its truth and the
 * unattributed sums what ran outside the tree.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#include "cpusim.h"
#include "perf_reader.h"
#include "pprof_reader.h"
#include "session_input.h"
#include "write_all.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_KEYS 4096
#define NR_SLOTS (SESSION_INPUT_COUNTERS + 2) /* + CPU time, sampler */
#define SLOT_CPU SESSION_INPUT_COUNTERS
#define SLOT_SMP (SESSION_INPUT_COUNTERS + 1)
/* CPUs the model follows; past them it stops checking deltas. */
#define MODEL_CPUS 256
/* The session follows CPUs below this; a record naming another is bogus. */
#define SESSION_CPUS 65536
/* Per-CPU instances are keyed by id alone. */
#define CPU_KEY UINT32_MAX

struct ident {
	uint64_t id;
	int role;
};

/* One counter instance, as the reads tell it. */
struct inst {
	uint64_t id;
	uint32_t tid; /* task mode; CPU_KEY per CPU */
	uint64_t last, time;
	bool read;
};

/* Deltas per (tid, slot). */
struct tsum {
	uint32_t tid;
	uint64_t sum[NR_SLOTS];
};

/* Who ran on a CPU, as its records say (per-CPU mode). */
struct mcpu {
	uint32_t cpu;
	uint32_t exit_tid; /* whose EXIT came last */
	uint32_t read_tid; /* the sample tid of its latest read */
	uint32_t in_tid;   /* switched in after a stretch no read ended */
	uint64_t in_time;
	bool read, gap;
};

/* What evprof_session_stats must say. */
struct mstats {
	uint64_t records, malformed, unknown_ids, counter_resets;
	uint64_t reads_rejected, lost_records, lost_events, lost_samples;
	uint64_t throttled, samples, filtered;
};

struct model {
	struct pr_fmt fmt;
	bool per_cpu, sampler, no_idle, has_cut;
	struct ident ids[SESSION_INPUT_MAX_IDS];
	size_t nr_ids;
	struct inst inst[MAX_KEYS];
	size_t nr_inst;
	struct tsum tids[MAX_KEYS];
	size_t nr_tids;
	struct mcpu cpus[MODEL_CPUS];
	size_t nr_cpus;
	uint64_t total[NR_SLOTS], unattributed[NR_SLOTS];
	struct mstats st;
	/* more keys or CPUs than the model holds: no delta checks */
	bool overflow;
	bool oom; /* the session ran out of memory: no checks */
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

static bool is_cut(int role)
{
	return role == EVPROF_SESSION_CUT || role == EVPROF_SESSION_SWITCH_OUT;
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

/* The instance a read of id by tid goes to; made when new unless find. */
static struct inst *instance(struct model *m, uint64_t id, uint32_t tid,
			     bool make)
{
	if (m->per_cpu)
		tid = CPU_KEY;
	for (size_t i = 0; i < m->nr_inst; i++)
		if (m->inst[i].id == id && m->inst[i].tid == tid)
			return &m->inst[i];
	if (!make)
		return NULL;
	if (m->nr_inst == MAX_KEYS) {
		m->overflow = true;
		return NULL;
	}
	m->inst[m->nr_inst] = (struct inst){.id = id, .tid = tid};
	return &m->inst[m->nr_inst++];
}

static struct mcpu *cpu_state(struct model *m, uint32_t cpu, bool make)
{
	for (size_t i = 0; i < m->nr_cpus; i++)
		if (m->cpus[i].cpu == cpu)
			return &m->cpus[i];
	if (!make || cpu >= SESSION_CPUS)
		return NULL;
	if (m->nr_cpus == MODEL_CPUS) {
		m->overflow = true;
		return NULL;
	}
	m->cpus[m->nr_cpus] = (struct mcpu){.cpu = cpu, .exit_tid = UINT32_MAX};
	return &m->cpus[m->nr_cpus++];
}

static int role_slot(int role)
{
	return role == EVPROF_SESSION_CPU_TIME	? SLOT_CPU
	       : role == EVPROF_SESSION_SAMPLER ? SLOT_SMP
						: role;
}

/*
 * A sample whose id is a cut member's, or (its id another perf session's
 * event: they share a CPU's sample data) whose READ shows a cut member
 * that counted since its last read: its deltas wait for the thread's next
 * sample, it is no sample itself.
 */
static bool cut_sample(struct model *m, const struct pr_rec *r, uint32_t tid)
{
	const struct ident *e;

	if (!m->has_cut)
		return false;
	e = find_id(m, r->id);
	if (e)
		return is_cut(e->role);
	for (uint64_t i = 0; i < r->nr_reads; i++) {
		const struct inst *in;

		e = find_id(m, r->read_id[i]);
		if (!e || !is_cut(e->role))
			continue;
		in = instance(m, r->read_id[i], tid, false);
		if (r->read_val[i] != (in && in->read ? in->last : 0))
			return true;
	}
	return false;
}

/* Read i of sample r by tid: its delta into d[slot]. */
static void model_read(struct model *m, const struct pr_rec *r, uint64_t i,
		       uint32_t tid, uint64_t *d)
{
	const struct ident *e = find_id(m, r->read_id[i]);
	uint64_t raw = r->read_val[i], delta;
	struct inst *in;

	if (!e) {
		m->st.unknown_ids++;
		return;
	}
	in = instance(m, r->read_id[i], tid, true);
	if (!in)
		return;
	if (is_cut(e->role)) {
		/* Its value tells the next cut_sample(); per CPU, not back. */
		if (!(m->per_cpu && in->read && raw < in->last)) {
			in->read = true;
			in->last = raw;
			in->time = r->time;
		}
		return;
	}
	if (e->role == EVPROF_SESSION_SAMPLER && !m->sampler)
		return;
	if (!in->read || raw >= in->last) {
		delta = raw - (in->read ? in->last : 0);
	} else if (m->per_cpu) {
		m->st.reads_rejected++;
		return;
	} else {
		m->st.counter_resets++; /* a new thread on a reused tid */
		delta = raw;
	}
	in->read = true;
	in->last = raw;
	in->time = r->time;
	d[role_slot(e->role)] += delta;
}

/*
 * Per CPU, after a switch-in that followed a stretch no read ended, the
 * CPU time of the switched-in thread's first read before its switch-in
 * is nobody's.
 */
static void cpu_read(struct model *m, struct mcpu *cs, const struct pr_rec *r,
		     uint32_t tid, uint64_t *cpu_ns)
{
	if (cs->gap && cs->in_tid == tid) {
		uint64_t own =
		    r->time > cs->in_time ? r->time - cs->in_time : 0;

		if (*cpu_ns > own) {
			m->unattributed[SLOT_CPU] += *cpu_ns - own;
			*cpu_ns = own;
		}
	}
	cs->gap = false;
	cs->read = true;
	cs->read_tid = r->tid;
}

/* A well-formed sample; returns whether the session must take it. */
static bool model_sample(struct model *m, const struct pr_rec *r)
{
	uint64_t st = m->fmt.sample_type, d[NR_SLOTS] = {0};
	bool idle = m->no_idle && (st & PERF_SAMPLE_TID) && r->pid == 0;
	uint32_t tid = r->tid;
	struct mcpu *cs;
	struct tsum *ts;
	bool cut;

	if (m->per_cpu && tid == UINT32_MAX) {
		cs = cpu_state(m, r->cpu, false);
		tid = cs ? cs->exit_tid : UINT32_MAX;
	}
	/* Task mode: the idle task's samples are not even read. */
	if (idle && !m->per_cpu) {
		m->st.filtered++;
		return true;
	}
	if ((st & PERF_SAMPLE_READ) &&
	    (m->fmt.read_format & PERF_FORMAT_GROUP) &&
	    (!r->nr_reads || r->nr_reads > PR_MAX_READS))
		return false;
	cut = cut_sample(m, r, tid);
	for (uint64_t i = 0; i < r->nr_reads; i++)
		model_read(m, r, i, tid, d);
	for (int i = 0; i < NR_SLOTS; i++)
		m->total[i] += d[i];
	if (m->per_cpu && (st & PERF_SAMPLE_CPU) &&
	    (cs = cpu_state(m, r->cpu, true)))
		cpu_read(m, cs, r, tid, &d[SLOT_CPU]);
	ts = idle ? NULL : tid_sum(m, tid);
	for (int i = 0; i < NR_SLOTS; i++) {
		if (idle)
			m->unattributed[i] += d[i];
		else if (ts)
			ts->sum[i] += d[i];
	}
	if (idle)
		m->st.filtered += !cut;
	else
		m->st.samples += !cut;
	return true;
}

/* A well-formed record other than a sample: what it changes. */
static void model_other(struct model *m, const struct pr_rec *r)
{
	uint64_t st = m->fmt.sample_type;
	bool has_cpu = r->id_present && (st & PERF_SAMPLE_CPU);
	struct mcpu *cs;

	switch (r->type) {
	case PERF_RECORD_FORK:
		/* Task mode: instances last read before it start again. */
		for (size_t i = 0; !m->per_cpu && i < m->nr_inst; i++) {
			struct inst *in = &m->inst[i];

			if (in->tid == r->t_tid && in->read &&
			    in->time < r->t_time) {
				in->last = 0;
				in->time = r->t_time;
			}
		}
		break;
	case PERF_RECORD_EXIT:
		tid_sum(m, r->t_tid); /* its total is checked, even if 0 */
		if (m->per_cpu && has_cpu && (cs = cpu_state(m, r->cpu, true)))
			cs->exit_tid = r->t_tid;
		break;
	case PERF_RECORD_SWITCH_CPU_WIDE:
		/*
		 * A switch-in whose previous task is not the CPU's latest
		 * reader: what ran before it was never read.
		 */
		if (m->per_cpu && has_cpu &&
		    !(r->misc & PERF_RECORD_MISC_SWITCH_OUT) &&
		    (st & PERF_SAMPLE_TID) && (st & PERF_SAMPLE_TIME) &&
		    (cs = cpu_state(m, r->cpu, true))) {
			cs->gap = !cs->read || cs->read_tid != r->next_prev_tid;
			cs->in_tid = r->tid;
			cs->in_time = r->time;
		}
		break;
	case PERF_RECORD_LOST:
		m->st.lost_records++;
		m->st.lost_events += r->count;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		m->st.lost_samples += r->count;
		break;
	case PERF_RECORD_THROTTLE:
		m->st.throttled++;
		break;
	}
}

/* Follows record r; returns whether the session must take it. */
static bool model_record(struct model *m, const struct pr_rec *r)
{
	m->st.records++;
	if (r->ok && r->type == PERF_RECORD_SAMPLE && model_sample(m, r))
		return true;
	if (r->ok && r->type != PERF_RECORD_SAMPLE) {
		model_other(m, r);
		return true;
	}
	m->st.malformed++;
	return false;
}

/* what says who got it and what of (the model wants want). */
static void mismatch(const char *what, unsigned long long got,
		     unsigned long long want)
{
	fprintf(stderr, "%s: %llu, expected %llu\n", what, got, want);
	abort();
}

/*
 * The stats; those of samples only before a build (which counts what the
 * tree keeps).
 */
static void check_stats(const struct evprof_session *s, const struct model *m,
			bool built)
{
	struct evprof_session_stats st = {.sz = sizeof(st)};

	if (m->oom)
		return;
	evprof_session__stats(s, &st);
#define SAME(field, mfield)                                                    \
	do {                                                                   \
		if (st.field != m->st.mfield)                                  \
			mismatch("session stats " #field, st.field,            \
				 m->st.mfield);                                \
	} while (0)
	SAME(records, records);
	SAME(malformed, malformed);
	SAME(unknown_ids, unknown_ids);
	SAME(lost_records, lost_records);
	SAME(lost_events, lost_events);
	SAME(lost_samples, lost_samples);
	SAME(throttled, throttled);
	/* These follow counter instances, which an overflow stops following. */
	if (m->overflow)
		return;
	SAME(counter_resets, counter_resets);
	SAME(reads_rejected, reads_rejected);
	if (!built) {
		SAME(samples, samples);
		SAME(samples_filtered, filtered);
	}
#undef SAME
}

static int slot_counter(int slot)
{
	if (slot == SLOT_CPU)
		return EVPROF_SESSION_CPU_TIME;
	if (slot == SLOT_SMP)
		return EVPROF_SESSION_SAMPLER;
	return slot;
}

static void check_deltas(const struct evprof_session *s, const struct model *m,
			 bool tree)
{
	char what[96];

	if (m->overflow || m->oom)
		return;
	for (int slot = 0; slot < NR_SLOTS; slot++) {
		int c = slot_counter(slot);
		uint64_t un = evprof_session__unattributed(s, c), sum = un;

		for (size_t i = 0; i < m->nr_tids; i++) {
			uint64_t t = evprof_session__thread_total(
			    s, (pid_t)m->tids[i].tid, c);

			sum += t;
			if (!tree && t != m->tids[i].sum[slot]) {
				snprintf(what, sizeof(what),
					 "session total of tid %u counter %d",
					 m->tids[i].tid, c);
				mismatch(what, t, m->tids[i].sum[slot]);
			}
		}
		if (!tree && un != m->unattributed[slot]) {
			snprintf(what, sizeof(what), "counter %d: unattributed",
				 c);
			mismatch(what, un, m->unattributed[slot]);
		}
		if (sum != m->total[slot]) {
			snprintf(
			    what, sizeof(what),
			    "session thread totals + unattributed of counter %d",
			    c);
			mismatch(what, sum, m->total[slot]);
		}
	}
}

/* The pprof column of each slot. */
static int slot_column(int slot)
{
	if (slot == SLOT_CPU)
		return 1;
	if (slot == SLOT_SMP)
		return 2 + SESSION_INPUT_COUNTERS;
	return 2 + slot;
}

/* The per-thread sum of slot that the written profile must show. */
static uint64_t expected(const struct evprof_session *s, const struct model *m,
			 bool tree, uint32_t tid, int slot)
{
	if (tree)
		return evprof_session__thread_total(s, (pid_t)tid,
						    slot_counter(slot));
	for (size_t i = 0; i < m->nr_tids; i++)
		if (m->tids[i].tid == tid)
			return m->tids[i].sum[slot];
	return 0;
}

static char dir[] = "/tmp/evprof-fuzz-session-XXXXXX";
static bool made; /* dir, once per process */

static void pprof_path(char *path, size_t size)
{
	snprintf(path, size, "%s/profile.pb.gz", dir);
}

static void clean(void)
{
	char path[sizeof(dir) + 32];

	pprof_path(path, sizeof(path));
	unlink(path);
	rmdir(dir);
}

/*
 * Writes p as a pprof file and reads it back: its sample types, and per
 * thread (tid label) each column's sum. With a tree built in parts the
 * session forgets the totals of threads done: no sums then.
 */
static void check_pprof(const struct evprof_session *s, const struct model *m,
			const struct evprof_profile *p, bool tree, bool parts)
{
	char path[sizeof(dir) + 32], what[96];
	size_t nv = 2 + SESSION_INPUT_COUNTERS + m->sampler;
	struct pp_profile pp;
	int err;

	if (!made) {
		if (!mkdtemp(dir))
			abort();
		made = true;
		atexit(clean);
	}
	pprof_path(path, sizeof(path));
	err = evprof_profile__write_pprof(p, path, NULL);
	if (err) {
		fprintf(stderr, "pprof: write: %s\n", strerror(-err));
		abort();
	}
	pp_read(&pp, path);
	if (pp.err) {
		fprintf(stderr, "pprof: %s\n", pp.err);
		abort();
	}
	for (size_t i = 0; i < pp.nr_types; i++) {
		const char *type = i == 0		 ? "samples"
				   : i == 1		 ? "cpu"
				   : i < nv - m->sampler ? counter_names[i - 2]
				   : i < nv		 ? "sampler"
							 : NULL;
		bool ns = i == 1 || i >= nv;

		if ((type && !pp_is(&pp, pp.type[i], type)) ||
		    !pp_is(&pp, pp.unit[i], ns ? "nanoseconds" : "count")) {
			fprintf(stderr, "pprof: sample type %zu is wrong\n", i);
			abort();
		}
	}
	if (pp.nr_types < nv) {
		fprintf(stderr, "pprof: %zu sample types\n", pp.nr_types);
		abort();
	}
	for (int slot = 0;
	     slot < NR_SLOTS && !m->overflow && !m->oom && !(tree && parts);
	     slot++) {
		int col = slot_column(slot);

		if (slot == SLOT_SMP && !m->sampler)
			continue;
		for (size_t i = 0; i < pp.nr_th; i++) {
			uint64_t want =
			    expected(s, m, tree, pp.th[i].tid, slot);

			if (pp.th[i].sum[col] != want) {
				snprintf(what, sizeof(what),
					 "pprof sum of tid %u counter %d",
					 pp.th[i].tid, slot_counter(slot));
				mismatch(what, pp.th[i].sum[col], want);
			}
		}
		/* Threads the file has none of must have nothing to show. */
		for (size_t i = 0; i < m->nr_tids; i++) {
			uint32_t tid = m->tids[i].tid;
			uint64_t want = expected(s, m, tree, tid, slot);
			bool found = false;

			for (size_t k = 0; k < pp.nr_th && !found; k++)
				found = pp.th[k].tid == tid;
			if (!found && want) {
				snprintf(
				    what, sizeof(what),
				    "pprof sum of tid %u counter %d (no sample)",
				    tid, slot_counter(slot));
				mismatch(what, 0, want);
			}
		}
	}
	pp_free(&pp);
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

/*
 * A whole build, or the last part, has nothing to refuse: only memory can
 * fail it (then nothing is checked). Returns whether it built.
 */
static bool built(int err)
{
	if (err && err != -ENOMEM) {
		fprintf(stderr, "build: %s\n", strerror(-err));
		abort();
	}
	return !err;
}

static void run(const uint8_t *data, size_t size, struct model *m)
{
	uint8_t mode = data[0];
	struct evprof_session_opts opts = {
	    .sz = sizeof(opts),
	    .counters = counter_names,
	    .nr_counters = SESSION_INPUT_COUNTERS,
	    .sampler_counter =
		mode & SESSION_INPUT_NO_SAMPLER ? NULL : "sampler",
	    .exclude_idle = mode & SESSION_INPUT_NO_IDLE,
	    .per_cpu = mode & SESSION_INPUT_PER_CPU,
	    .max_stack_bytes = 1 << 16,
	};
	pid_t root;
	size_t off = SESSION_INPUT_HDR, nr_ids = data[1];
	struct evprof_session *s;
	struct evprof_profile *p, *parts;
	uint64_t *buf, first = 0, latest = 0;
	size_t nr_fed = 0;
	bool tree = mode & SESSION_INPUT_TREE;

	memcpy(&root, data + 4, 4);
	if (tree) {
		opts.pids = &root;
		opts.nr_pids = 1;
	}
	opts.fmt.sample_type = load64(data + 8);
	opts.fmt.read_format = load64(data + 16);
	opts.fmt.sample_regs_user = load64(data + 24);
	opts.fmt.sample_id_all = data[2] & 1;
	m->fmt =
	    (struct pr_fmt){opts.fmt.sample_type, opts.fmt.read_format,
			    opts.fmt.sample_regs_user, opts.fmt.sample_id_all};
	m->per_cpu = opts.per_cpu;
	m->sampler = opts.sampler_counter;
	m->no_idle = opts.exclude_idle;

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
		m->has_cut |= is_cut(role);
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
		struct pr_rec r;
		bool take;
		int err;

		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h) || h.size > size - off)
			break;
		/* Records are 8-aligned in a ring: copy to aligned bytes. */
		memcpy(buf, data + off, h.size);
		off += h.size;
		pr_parse(&r, (const uint8_t *)buf, h.size, &m->fmt);
		take = model_record(m, &r);
		err = evprof_session__feed(s, buf, h.size);
		if (err == -ENOMEM) {
			m->oom = true;
		} else if (!err != take) {
			fprintf(stderr,
				"record %llu (type %u): the session %s it, "
				"the model %s it\n",
				(unsigned long long)m->st.records, r.type,
				err ? "refused" : "took",
				take ? "takes" : "refuses");
			abort();
		}
		if (take && r.type == PERF_RECORD_SAMPLE) {
			if (!first)
				first = r.time;
			if (r.time > latest)
				latest = r.time;
		}
		/* Errors (-EOPNOTSUPP with off-CPU ids) leave all to the end. */
		if (parts && ++nr_fed % 16 == 0)
			evprof_session__build_until(
			    s, parts, NULL,
			    latest > first ? first + (latest - first) / 2 : 0);
	}
	free(buf);
	check_stats(s, m, parts != NULL);
	if (parts) {
		if (built(evprof_session__build_until(s, parts, NULL,
						      UINT64_MAX))) {
			check_deltas(s, m, tree);
			check_pprof(s, m, parts, tree, true);
			write_all(parts);
		}
		check_stats(s, m, true);
		evprof_profile__free(parts);
		evprof_session__free(s);
		return;
	}

	for (int round = 0; round < (mode & SESSION_INPUT_BUILD_TWICE ? 2 : 1);
	     round++) {
		p = evprof_profile__new(NULL);
		if (!p)
			abort();
		if (built(evprof_session__build(s, p, NULL))) {
			check_deltas(s, m, tree);
			check_pprof(s, m, p, tree, false);
			write_all(p);
		}
		evprof_profile__free(p);
	}
	check_stats(s, m, true);
	evprof_session__free(s);
}

static int cpus_part(uint64_t until, void *ctx)
{
	void **sp = ctx;

	return evprof_session__build_until(sp[0], sp[1], NULL, until);
}

static void run_cpus(const uint8_t *data, size_t size)
{
	static struct cs_sim sim;
	bool tree = data[0] & SESSION_INPUT_TREE,
	     parts = data[0] & SESSION_INPUT_PARTS;
	struct evprof_session *s = NULL;
	struct evprof_profile *p = NULL;
	enum cs_order order;
	char how[64];
	void *sp[2];
	int err = -ENOMEM;

	if (cs_make(&sim, data + 1, size - 1))
		goto out; /* no memory: nothing to check */
	order = (enum cs_order)cs_pick(&sim.src, CS_ORDERS);
	s = cs_session(&sim, tree);
	p = evprof_profile__new(NULL);
	if (!s || !p)
		goto out;
	sp[0] = s;
	sp[1] = p;
	err = cs_feed(&sim, s, order, parts ? cpus_part : NULL, sp);
	if (!err)
		err = parts
			  ? evprof_session__build_until(s, p, NULL, UINT64_MAX)
			  : evprof_session__build(s, p, NULL);
	if (!err) {
		snprintf(how, sizeof(how), "%u CPUs, order %d%s", sim.nr_cpus,
			 (int)order, parts ? ", in parts" : "");
		if (cs_check(&sim, s, p, tree, !parts, how, stderr))
			abort();
	}
out:
	if (err && err != -ENOMEM) {
		fprintf(stderr, "many CPUs: %s\n", strerror(-err));
		abort();
	}
	evprof_profile__free(p);
	evprof_session__free(s);
	cs_free(&sim);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct model *m;

	if (size && (data[0] & SESSION_INPUT_CPUS)) {
		run_cpus(data, size);
		return 0;
	}
	if (size < SESSION_INPUT_HDR)
		return 0;
	m = calloc(1, sizeof(*m));
	if (!m)
		abort();
	run(data, size, m);
	free(m);
	return 0;
}
