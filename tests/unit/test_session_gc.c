// SPDX-License-Identifier: MIT
/*
 * Sessions built in parts forget the tasks that are done: a stream of
 * 10 000 short threads and processes (fork, comm, mmap, samples and cuts
 * with deltas, exit), built in parts of 100 ms, holds only the tasks of
 * the last second or so, while per thread the parts sum to one whole
 * build of the same stream and to the deltas the stream itself reads; an
 * exited thread's held cut deltas are in the part where it ended, and the
 * session's totals per tid keep the threads it forgot.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <cmocka.h>

#include <evprof/profile.h>
#include <evprof/session.h>

#include "cases.h"
#include "sessfeed.h"
#include "session/internal.h"
#include "session/part.h"

enum { LEADER = 10, FAULTS = 11, CLOCK = 13, CUT = 14 };

#define NR_TASKS  10000
#define NR_TIDS	  3000 /* tids are reused, as pid_max wraps */
#define FIRST_TID 1000
#define PARENT	  100
#define SPACING	  10000000ull  /* ns between task starts */
#define PART_NS	  100000000ull /* parts every 100 ms */
#define MAP_START 0x400000ull
/*
 * A process living through the stream, its mapping made once others'
 * were: its index moves as they are forgotten, while its samples go on.
 */
#define LONG_PID 60
/* A parent never seen: with roots, its children wait as pending forks. */
#define FOREIGN_PPID 7
#define LONG_START   (250 * SPACING + SPACING / 2)
#define LONG_EVERY   (5 * SPACING)
/*
 * Every 100 ms it maps lib0.so, then long.so again, over the same range:
 * replaced mappings go while no thread does (the stream's last seconds).
 */
#define LONG_REMAP (10 * SPACING)
#define TAIL_NS	   3000000000ull

/* ---- the stream ------------------------------------------------------------ */

/* What one run of the stream reads: per tid, faults and CPU ns. */
struct truth {
	uint64_t faults[FIRST_TID + NR_TIDS], cpu[FIRST_TID + NR_TIDS];
	/* per task: its tid, its exit time, its faults */
	uint32_t tid[NR_TASKS];
	uint64_t exit[NR_TASKS], task_faults[NR_TASKS];
	/* per-CPU mode: the CPU's cumulative values */
	uint64_t cpu_faults, cpu_last_faults, cpu_last_ns;
	uint64_t long_lib[8]; /* the long process's samples per lib */
};

/*
 * A read of the group by tid at time (a sample, or a cut), in the chosen
 * mode: per CPU, cumulative values of the one CPU; per task, values the
 * thread counted since it began (start).
 */
static void read_group(struct evprof_session *s, struct truth *tr, bool per_cpu,
		       bool cut, uint32_t pid, uint32_t tid, uint64_t time,
		       uint64_t start, uint64_t faults, int task)
{
	uint64_t chain[] = {(uint64_t)PERF_CONTEXT_USER, MAP_START + 0x100};
	uint64_t f, ns;
	struct rb b;

	if (per_cpu) {
		tr->cpu_faults += faults;
		f = tr->cpu_faults;
		ns = time;
		tr->faults[tid] += f - tr->cpu_last_faults;
		tr->cpu[tid] += ns - tr->cpu_last_ns;
		if (task >= 0)
			tr->task_faults[task] += f - tr->cpu_last_faults;
		tr->cpu_last_faults = f;
		tr->cpu_last_ns = ns;
	} else {
		/* faults: the thread's count so far, passed cumulated */
		f = faults;
		ns = time - start;
	}
	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, cut ? CUT : LEADER);
	rb_u64(&b, chain[1]);
	rb_u32x2(&b, pid, tid);
	rb_u64(&b, time);
	rb_u32x2(&b, 0, 0);
	rb_u64(&b, 1000);
	rb_u64(&b, 3 + !!per_cpu);
	rb_u64(&b, time);
	rb_u64(&b, time);
	rb_u64(&b, time / 100);
	rb_u64(&b, LEADER);
	rb_u64(&b, f);
	rb_u64(&b, FAULTS);
	rb_u64(&b, ns);
	rb_u64(&b, CLOCK);
	if (per_cpu) {
		rb_u64(&b, time / 50);
		rb_u64(&b, CUT);
	}
	rb_u64(&b, 2);
	rb_u64(&b, chain[0]);
	rb_u64(&b, chain[1]);
	assert_int_equal(rb_feed(s, &b), 0);
}

static void task_rec(struct evprof_session *s, uint32_t type, uint32_t pid,
		     uint32_t ppid, uint32_t tid, uint64_t time)
{
	struct rb b;

	rb_task(&b, type, pid, ppid, tid, ppid, time, LEADER);
	assert_int_equal(evprof_session__feed(s, b.words, b.len), 0);
}

static void comm_rec(struct evprof_session *s, uint32_t pid, uint32_t tid,
		     const char *name, bool exec, uint64_t time)
{
	struct rb b;

	rb_comm(&b, pid, tid, name, exec, time, LEADER);
	assert_int_equal(evprof_session__feed(s, b.words, b.len), 0);
}

/* The build id of lib<n>.so: 20 bytes, each n + its index. */
static void build_id_of(int n, uint8_t id[20])
{
	for (int i = 0; i < 20; i++)
		id[i] = (uint8_t)(n * 32 + i);
}

/* lib: n for lib<n>.so, 7 for long.so */
static const char *lib_path(int lib, char *buf, size_t len)
{
	if (lib == 7)
		return "/tmp/long.so";
	snprintf(buf, len, "/tmp/lib%d.so", lib);
	return buf;
}

static void mmap_rec(struct evprof_session *s, uint32_t pid, int lib,
		     uint64_t time)
{
	char buf[32];
	const char *path = lib_path(lib, buf, sizeof(buf));
	uint8_t id[20];
	struct rb b;

	build_id_of(lib, id);
	rb_begin(&b, PERF_RECORD_MMAP2,
		 PERF_RECORD_MISC_USER | PERF_RECORD_MISC_MMAP_BUILD_ID);
	rb_u32x2(&b, pid, pid);
	rb_u64(&b, MAP_START);
	rb_u64(&b, 0x1000);
	rb_u64(&b, 0);
	rb_u8(&b, sizeof(id));
	rb_u8(&b, 0);
	rb_u16(&b, 0);
	rb_put(&b, id, sizeof(id));
	rb_u32x2(&b, PROT_READ | PROT_EXEC, MAP_PRIVATE);
	rb_str(&b, path);
	rb_trailer(&b, pid, pid, time, LEADER);
	assert_int_equal(rb_feed(s, &b), 0);
}

static uint32_t tid_of(int k)
{
	return FIRST_TID + (uint32_t)(k % NR_TIDS);
}

/* Odd tasks are processes (exec'ing, with a mapping), even ones threads. */
static uint32_t pid_of(int k)
{
	return k % 2 ? tid_of(k) : PARENT;
}

/* Every other process is forked by a parent out of the tree. */
static bool foreign(int k)
{
	return k % 4 == 1;
}

/* The long process's records of time in [lo, hi). */
static void long_proc(struct evprof_session *s, struct truth *tr, bool per_cpu,
		      uint64_t lo, uint64_t hi)
{
	uint64_t j = 0, t = LONG_START;

	if (lo >= hi)
		return;
	if (t >= lo && t < hi)
		task_rec(s, PERF_RECORD_FORK, LONG_PID, PARENT, LONG_PID, t);
	if (t + 10 >= lo && t + 10 < hi)
		comm_rec(s, LONG_PID, LONG_PID, "long", true, t + 10);
	/* Mappings don't touch the deltas: apart from the samples. */
	for (uint64_t r = 0; t + 20 + r * LONG_REMAP < hi; r++)
		if (t + 20 + r * LONG_REMAP >= lo)
			mmap_rec(s, LONG_PID, r % 2 ? 0 : 7,
				 t + 20 + r * LONG_REMAP);
	if (lo > t + 100)
		j = (lo - t - 100 + LONG_EVERY - 1) / LONG_EVERY;
	for (; t + 100 + j * LONG_EVERY < hi; j++) {
		uint64_t at = t + 100 + j * LONG_EVERY;

		read_group(s, tr, per_cpu, false, LONG_PID, LONG_PID, at, t,
			   per_cpu ? 1 : j + 1, -1);
		tr->long_lib[(at - t - 20) / LONG_REMAP % 2 ? 0 : 7]++;
	}
}

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t min_u64(uint64_t a, uint64_t b)
{
	return a < b ? a : b;
}

/* The records of time in [from, to), in time order. */
static void feed_range(struct evprof_session *s, struct truth *tr, bool per_cpu,
		       uint64_t from, uint64_t to)
{
	uint64_t done = from;

	for (int k = 0; k < NR_TASKS; k++) {
		uint64_t t = (uint64_t)(k + 1) * SPACING + 1000;
		uint32_t tid = tid_of(k), pid = pid_of(k);
		char name[32];

		/* The long process runs between tasks. */
		long_proc(s, tr, per_cpu, done, min_u64(t, to));
		done = max_u64(done, min_u64(t + 1000, to));
		if (t + 1000 < from)
			continue;
		if (t >= to)
			break;
		snprintf(name, sizeof(name), "w%d", k);
		tr->tid[k] = tid;
		tr->exit[k] = t + 500;
		/* In time order; the stream is cut at part boundaries only. */
#define AT(dt) (t + (dt) >= from && t + (dt) < to)
		if (AT(0))
			task_rec(s, PERF_RECORD_FORK, pid,
				 foreign(k) ? FOREIGN_PPID : PARENT, tid, t);
		if (AT(10))
			comm_rec(s, pid, tid, name, pid != PARENT, t + 10);
		if (AT(20) && pid != PARENT)
			mmap_rec(s, pid, k % 7, t + 20);
		if (AT(100))
			read_group(s, tr, per_cpu, false, pid, tid, t + 100, t,
				   5, k);
		if (AT(200) && per_cpu) /* switched out: held */
			read_group(s, tr, per_cpu, true, pid, tid, t + 200, t,
				   3, k);
		if (AT(300))
			read_group(s, tr, per_cpu, false, pid, tid, t + 300, t,
				   per_cpu ? 11 : 19, k);
		if (AT(400) && per_cpu)
			read_group(s, tr, per_cpu, true, pid, tid, t + 400, t,
				   7, k);
		if (AT(500))
			task_rec(s, PERF_RECORD_EXIT, pid, PARENT, tid,
				 t + 500);
		/* The dying task's last switch-out, after its EXIT. */
		if (AT(510) && per_cpu)
			read_group(s, tr, per_cpu, true, pid, tid, t + 510, t,
				   2, k);
		/* The parent runs in between. */
		if (AT(600))
			read_group(s, tr, per_cpu, false, PARENT, PARENT,
				   t + 600, 0, per_cpu ? 1 : (uint64_t)k + 1,
				   -1);
#undef AT
	}
	long_proc(s, tr, per_cpu, done, to);
}

/* roots: the tree is PARENT's (else every process) */
static struct evprof_session *new_session(bool per_cpu, bool roots)
{
	static const char *const counters[] = {"page-faults"};
	static const pid_t parent = PARENT;
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = ST_BITS,
		    .read_format = RF_BITS,
		    .sample_id_all = true},
	    .counters = counters,
	    .nr_counters = 1,
	    .per_cpu = per_cpu,
	    .pids = roots ? &parent : NULL,
	    .nr_pids = roots,
	};
	struct evprof_session *s = evprof_session__new(&o);

	assert_non_null(s);
	assert_int_equal(
	    evprof_session__set_id(s, LEADER, EVPROF_SESSION_SAMPLER), 0);
	assert_int_equal(evprof_session__set_id(s, FAULTS, 0), 0);
	assert_int_equal(
	    evprof_session__set_id(s, CLOCK, EVPROF_SESSION_CPU_TIME), 0);
	if (per_cpu)
		assert_int_equal(
		    evprof_session__set_id(s, CUT, EVPROF_SESSION_CUT), 0);
	return s;
}

/* ---- sums ------------------------------------------------------------------ */

struct sums {
	uint64_t faults[FIRST_TID + NR_TIDS], cpu[FIRST_TID + NR_TIDS];
	uint64_t samples[FIRST_TID + NR_TIDS];
	struct evprof_profile *p;
	int named;   /* threads whose name was checked */
	int libs[8]; /* p's index of each lib<n>.so, then long.so */
	uint64_t libs_checked;
	uint64_t long_lib[8]; /* the long process's samples per lib */
};

static int sum_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct sums *sm = ctx;
	struct evprof_profile_thread_info ti;

	assert_int_equal(evprof_profile__thread_info(sm->p, e->thread, &ti), 0);
	assert_true(ti.tid == LONG_PID ||
		    (ti.tid >= PARENT && ti.tid < FIRST_TID + NR_TIDS));
	sm->faults[ti.tid] += e->counters[0];
	sm->cpu[ti.tid] += e->cpu_ns;
	sm->samples[ti.tid] += e->samples;
	/*
	 * Mappings and their strings, which the tasks and the frame cache
	 * were compacted under: task k's leaf is in lib<k % 7>.so when it is
	 * a process of its own, in no lib when a thread of the parent.
	 */
	if (ti.name[0] == 'w') {
		int k = atoi(ti.name + 1), frame;
		struct evprof_profile_frame f;

		assert_int_equal(
		    evprof_profile__stack_info(sm->p, e->stack, NULL, &frame),
		    0);
		assert_int_equal(evprof_profile__frame_info(sm->p, frame, &f),
				 0);
		/* Its tail after its last sample: under the thread itself. */
		if (!strcmp(f.function, "[unsampled]")) {
			assert_int_equal(e->samples, 0);
			return 0;
		}
		assert_int_equal(f.lib, k % 2 ? sm->libs[k % 7] : -1);
		sm->libs_checked++;
	}
	if (!strcmp(ti.name, "long")) {
		int frame;
		struct evprof_profile_frame f;

		assert_int_equal(
		    evprof_profile__stack_info(sm->p, e->stack, NULL, &frame),
		    0);
		assert_int_equal(evprof_profile__frame_info(sm->p, frame, &f),
				 0);
		if (!strcmp(f.function, "[unsampled]"))
			return 0;
		assert_true(f.lib == sm->libs[7] || f.lib == sm->libs[0]);
		sm->long_lib[f.lib == sm->libs[7] ? 7 : 0] += e->samples;
	}
	return 0;
}

static void add_sums(struct evprof_profile *p, struct sums *sm)
{
	sm->p = p;
	for (int n = 0; n < 8; n++) {
		char buf[32];

		/* Without a symbolizer, a lib is its path alone. */
		sm->libs[n] = evprof_profile__add_lib(
		    p, &(struct evprof_profile_lib){
			   .path = lib_path(n, buf, sizeof(buf))});
		assert_true(sm->libs[n] >= 0);
	}
	assert_int_equal(evprof_profile__for_each_entry(p, -1, sum_entry, sm),
			 0);
}

/*
 * Names, strings the arena was compacted under: a short task's thread is
 * named "w<k>" for the task k of its tid whose exit lies in part
 * [from, until].
 */
static void check_names(const struct evprof_profile *p, const struct truth *tr,
			uint64_t from, uint64_t until, struct sums *sm)
{
	struct evprof_profile_thread_info ti;
	char want[32];

	for (int thr = 0; !evprof_profile__thread_info(p, thr, &ti); thr++) {
		if (ti.tid == PARENT)
			continue;
		for (int k = 0; k < NR_TASKS; k++) {
			if (tr->tid[k] != (uint32_t)ti.tid ||
			    tr->exit[k] <= from || tr->exit[k] > until)
				continue;
			snprintf(want, sizeof(want), "w%d", k);
			assert_string_equal(ti.name, want);
			sm->named++;
		}
	}
}

/*
 * The held tails: in the part where its task's EXIT lies, a tid has every
 * fault its task read (cuts after the exit included), nothing in another.
 */
static void check_tails(const struct sums *part, const struct truth *tr,
			uint64_t from, uint64_t until)
{
	for (int k = 0; k < NR_TASKS; k++)
		if (tr->exit[k] > from && tr->exit[k] <= until)
			assert_int_equal(part->faults[tr->tid[k]],
					 tr->task_faults[k]);
}

/* What the session holds for tasks, checked after every part. */
static void check_bounded(const struct evprof_session *s)
{
	/*
	 * Tasks of the last grace and part, a few spare; an exec makes two
	 * entries of its process and main thread.
	 */
	const size_t live =
	    2 * ((EVPROF__PART_GRACE_NS + 2 * PART_NS) / SPACING + 4);
	const struct sess_part *pt = s->part;

	assert_true(pt->t.threads.n <= live);
	assert_true(pt->t.procs.n <= live);
	assert_true(pt->t.maps.n <= live);
	assert_true(pt->t.pending.n <= live);
	assert_true(s->cut.ts.n <= live);
	assert_true(s->cut.vals.n <= live * s->nr_slots);
	/* Totals are per tid, kept (the tids wrap): bounded by the tids. */
	assert_true(!pt->tid_tot ||
		    evprof__hashmap_size(pt->tid_tot) <= NR_TIDS + 2);
	assert_true(pt->tot.n <= (NR_TIDS + 2) * (s->nr_slots + 1));
	/* So are counter instances: a late record of a tid continues. */
	assert_true(s->delta.inst.n <= (NR_TIDS + 2) * 4);
	/* names "w<k>" and paths, a few side-band events' */
	assert_true(s->store.strs.n <= 3 * live * 16);
	/* The strings of the mappings kept, after compaction. */
	for (size_t i = 0; i < pt->t.maps.n; i++) {
		const struct bmap *m = &pt->t.maps.a[i];
		const char *path = evprof__sstore_strp(&s->store, m->path);
		uint8_t id[20];
		int n;

		n = 7;
		if (strcmp(path, "/tmp/long.so"))
			assert_int_equal(sscanf(path, "/tmp/lib%d.so", &n), 1);
		build_id_of(n, id);
		assert_int_equal(m->build_id_len, sizeof(id));
		assert_memory_equal(evprof__sstore_strp(&s->store, m->build_id),
				    id, sizeof(id));
	}
}

/*
 * one: every part into one profile (a window of parts), whose frame cache
 * then lives across parts; else a profile per part.
 */
static void run(bool per_cpu, bool one)
{
	/* Per task, a tree of PARENT's: the foreign processes are not in. */
	bool roots = !per_cpu;
	int kept = roots ? NR_TASKS - NR_TASKS / 4 : NR_TASKS;
	struct evprof_session *whole = new_session(per_cpu, roots);
	struct evprof_session *parts = new_session(per_cpu, roots);
	struct truth *tr = calloc(2, sizeof(*tr));
	struct sums *sw = calloc(1, sizeof(*sw)), *sp = calloc(1, sizeof(*sp));
	struct sums *sp1 = calloc(1, sizeof(*sp1));
	struct evprof_profile *pw = evprof_profile__new(NULL);
	struct evprof_profile *po = one ? evprof_profile__new(NULL) : NULL;
	/* The last part's until, past the last task */
	uint64_t end =
	    ((NR_TASKS + 2) * SPACING / PART_NS + 1) * PART_NS + TAIL_NS;
	uint64_t from = 0;
	struct evprof_session_stats a = {.sz = sizeof(a)},
				    b = {.sz = sizeof(b)};

	assert_non_null(tr);
	assert_non_null(sw);
	assert_non_null(sp);
	assert_non_null(sp1);
	feed_range(whole, &tr[0], per_cpu, 0, end + 1);
	for (uint64_t until = PART_NS; until <= end; until += PART_NS) {
		struct evprof_profile *p = one ? po : evprof_profile__new(NULL);
		bool last = until >= end;

		assert_non_null(p);
		/* What is stamped up to until has come: feed, then build. */
		feed_range(parts, &tr[1], per_cpu, from, until + 1);
		assert_int_equal(evprof_session__build_until(
				     parts, p, NULL, last ? UINT64_MAX : until),
				 0);
		if (!last)
			check_bounded(parts);
		from = until + 1;
		if (one) {
			/* The frames cached for the mappings kept. */
			assert_true(parts->part->sk.frame_keys.n <=
				    parts->part->t.maps.n + 4);
			continue;
		}
		memset(sp1, 0, sizeof(*sp1));
		add_sums(p, sp1);
		add_sums(p, sp);
		check_names(p, &tr[1], until - PART_NS, until, sp);
		if (per_cpu)
			check_tails(sp1, &tr[1], until - PART_NS, until);
		evprof_profile__free(p);
	}
	if (one) {
		add_sums(po, sp);
		sp->named = kept;
		evprof_profile__free(po);
	}
	assert_int_equal(evprof_session__build(whole, pw, NULL), 0);
	add_sums(pw, sw);
	/* Every thread named in its part; each task's leaf checked. */
	assert_true(sp->named >= kept);
	assert_true(sp->libs_checked >= (uint64_t)kept);
	/* Each sample of the long process in the lib it had mapped then. */
	assert_true(tr[1].long_lib[0] > 0 && tr[1].long_lib[7] > 0);
	assert_memory_equal(sp->long_lib, tr[1].long_lib, sizeof(sp->long_lib));
	assert_memory_equal(sw->long_lib, tr[0].long_lib, sizeof(sw->long_lib));
	/* Per thread, the parts sum to the whole build, exactly... */
	assert_memory_equal(sw->faults, sp->faults, sizeof(sw->faults));
	assert_memory_equal(sw->cpu, sp->cpu, sizeof(sw->cpu));
	assert_memory_equal(sw->samples, sp->samples, sizeof(sw->samples));
	/*
	 * ... and the session's totals of each tid still know the threads
	 * it forgot (parts drop their samples, not their counts).
	 */
	for (uint32_t tid = FIRST_TID; tid < FIRST_TID + NR_TIDS; tid++) {
		assert_int_equal(
		    evprof_session__thread_total(parts, (pid_t)tid, 0),
		    sw->faults[tid]);
		assert_int_equal(
		    evprof_session__thread_total(parts, (pid_t)tid,
						 EVPROF_SESSION_CPU_TIME),
		    sw->cpu[tid]);
	}
	/* ... and to what the stream read (per task: its own counts). */
	for (uint32_t tid = FIRST_TID; per_cpu && tid < FIRST_TID + NR_TIDS;
	     tid++) {
		assert_int_equal(sp->faults[tid], tr[1].faults[tid]);
		assert_int_equal(sp->cpu[tid], tr[1].cpu[tid]);
	}
	for (uint32_t tid = FIRST_TID; !per_cpu && tid < FIRST_TID + NR_TIDS;
	     tid++) /* two samples each: 5, then 19 so far; none foreign */
		assert_int_equal(
		    sp->faults[tid],
		    foreign((int)(tid - FIRST_TID))
			? 0
			: 19 * (NR_TASKS / NR_TIDS +
				(tid - FIRST_TID < NR_TASKS % NR_TIDS)));
	evprof_session__stats(whole, &a);
	evprof_session__stats(parts, &b);
	assert_int_equal(a.samples, b.samples);
	assert_int_equal(a.threads, b.threads);
	assert_int_equal(a.processes, b.processes);
	evprof_profile__free(pw);
	evprof_session__free(whole);
	evprof_session__free(parts);
	free(tr);
	free(sw);
	free(sp);
	free(sp1);
}

static void test_forget_per_cpu(void **state)
{
	(void)state;
	run(true, false);
}

static void test_forget_per_task(void **state)
{
	(void)state;
	run(false, false);
}

static void test_forget_one_profile(void **state)
{
	(void)state;
	run(true, true);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_forget_per_cpu),
	    cmocka_unit_test(test_forget_per_task),
	    cmocka_unit_test(test_forget_one_profile),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
