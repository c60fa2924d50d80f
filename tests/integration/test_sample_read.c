// SPDX-License-Identifier: MIT
/*
 * Sampling groups for real: task-clock samples carrying a group read
 * (PERF_SAMPLE_READ) of {task-clock, page-faults, context-switches}, opened
 * per CPU on a forked child with inherit (Linux 6.12+), one ring per CPU.
 * Ground truth: the page faults each worker thread of the child takes, as
 * the child itself measures them (RUSAGE_THREAD) and reports on a pipe.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/event.h>
#include <evprof/read.h>
#include <evprof/record.h>
#include <evprof/ring.h>

#include "cases.h"

#define NWORKERS	2
#define PAGES_PER_PHASE 1000	   /* each worker: two phases, two CPUs */
#define SPIN_NS		100000000L /* CPU time spun after each phase */
#define PERIOD_NS	1000000	   /* task-clock sample period */
#define RING_PAGES	32
#define MAX_TIDS	8
#define SLACK		16

/* ---- the child ------------------------------------------------------- */

struct worker_report {
	pid_t tid;
	long minflt;
};

struct worker_arg {
	int cpus[2];
	struct worker_report rep;
};

static void pin(int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set))
		_exit(3);
}

/*
 * The CPUs this process may run on, at most max of them, into cpus[]; the
 * mask grows until it holds every possible CPU (sched_getaffinity says
 * EINVAL while it is smaller than the kernel's).
 */
static int allowed_cpus(int *cpus, int max)
{
	cpu_set_t *set;
	size_t size;
	int n = 0;

	for (int bits = 1024;; bits *= 2) {
		set = CPU_ALLOC(bits);
		assert_non_null(set);
		size = CPU_ALLOC_SIZE(bits);
		if (!sched_getaffinity(0, size, set))
			break;
		assert_int_equal(errno, EINVAL);
		CPU_FREE(set);
	}
	for (int c = 0; c < (int)(size * 8) && n < max; c++)
		if (CPU_ISSET_S(c, size, set))
			cpus[n++] = c;
	CPU_FREE(set);
	return n;
}

static void fault_pages(size_t n)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p;

	p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		_exit(4);
	madvise((void *)p, n * psz, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		p[i * psz] = 1;
	munmap((void *)p, n * psz);
}

static long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000L + ts.tv_nsec;
}

/* Spins on CPU time, so samples follow whatever the machine's load. */
static void spin(long ns)
{
	long end = thread_cpu_ns() + ns;
	volatile unsigned long x = 0;

	while (thread_cpu_ns() < end)
		for (int i = 0; i < 1000; i++)
			x += (unsigned long)i;
}

static void *worker(void *p)
{
	struct worker_arg *w = p;
	struct rusage ru;

	w->rep.tid = gettid();
	/* Faults on one CPU, then on another: each CPU's instance of the
	 * counter sees part of them, samples taken while spinning after
	 * each phase carry its final value. */
	for (int ph = 0; ph < 2; ph++) {
		pin(w->cpus[ph]);
		fault_pages(PAGES_PER_PHASE);
		spin(SPIN_NS);
	}
	getrusage(RUSAGE_THREAD, &ru);
	w->rep.minflt = ru.ru_minflt;
	return NULL;
}

static void child_main(int go_fd, int rep_fd, const int *cpus, int ncpus)
{
	struct worker_arg w[NWORKERS];
	pthread_t t[NWORKERS];
	char c;

	if (read(go_fd, &c, 1) != 1)
		_exit(2);
	for (int i = 0; i < NWORKERS; i++) {
		w[i].cpus[0] = cpus[i % ncpus];
		w[i].cpus[1] = cpus[(i + 1) % ncpus];
		if (pthread_create(&t[i], NULL, worker, &w[i]))
			_exit(5);
	}
	for (int i = 0; i < NWORKERS; i++) {
		pthread_join(t[i], NULL);
		if (write(rep_fd, &w[i].rep, sizeof(w[i].rep)) !=
		    sizeof(w[i].rep))
			_exit(6);
	}
	_exit(0);
}

/* ---- the parent's bookkeeping ------------------------------------------ */

struct tid_state {
	uint32_t tid;
	uint64_t last[3]; /* raw values by member, from the latest sample */
	uint64_t last_time;
	unsigned int samples;
};

struct cpu_state {
	int cpu;
	struct evprof_group *g;
	struct evprof_ring *ring;
	struct tid_state tids[MAX_TIDS];
	int ntids;
};

static struct cpu_state *cpu_st; /* one per CPU of the set */
static int ncpu_st;
static pid_t child_pid;
static struct evprof_record_fmt fmt;
static unsigned long nsamples, nother;

static struct tid_state *tid_of(struct cpu_state *cs, uint32_t tid)
{
	for (int i = 0; i < cs->ntids; i++)
		if (cs->tids[i].tid == tid)
			return &cs->tids[i];
	assert_true(cs->ntids < MAX_TIDS);
	cs->tids[cs->ntids].tid = tid;
	return &cs->tids[cs->ntids++];
}

static void check_sample(struct cpu_state *cs, const struct evprof_sample *s)
{
	struct evprof_snapshot snap;
	struct tid_state *ts;
	int ret;

	assert_int_equal(s->pid, child_pid);
	assert_int_equal(s->cpu, cs->cpu);
	assert_int_equal(s->identifier, evprof_group__id(cs->g, 0));
	assert_true(s->callchain_nr >= 1);
	/* The chain opens with a context marker (kernel or user). */
	assert_true(s->callchain[0] >= (uint64_t)-4095);

	ret = evprof_snapshot__parse(&snap, s->read, s->read_size,
				     fmt.read_format);
	assert_int_equal(ret, (int)s->read_size);
	assert_int_equal(snap.nr, 3);
	ts = tid_of(cs, s->tid);
	assert_true(s->time >= ts->last_time);
	ts->last_time = s->time;
	for (size_t m = 0; m < 3; m++) {
		/* Ids of this CPU's group, leader first. */
		assert_int_equal(snap.values[m].id, evprof_group__id(cs->g, m));
		/* Each (id, tid) instance only grows. */
		assert_true(snap.values[m].raw >= ts->last[m]);
		ts->last[m] = snap.values[m].raw;
	}
	ts->samples++;
	nsamples++;
}

static void drain(void)
{
	for (int c = 0; c < ncpu_st; c++) {
		struct cpu_state *cs = &cpu_st[c];
		const void *buf;
		size_t size;
		int ret;

		while ((ret = evprof_ring__next(cs->ring, &buf, &size)) == 1) {
			struct evprof_record rec;

			assert_int_equal(
			    evprof_record__parse(&rec, buf, size, &fmt), 0);
			if (rec.type == PERF_RECORD_SAMPLE)
				check_sample(cs, &rec.sample);
			else
				nother++;
		}
		assert_int_equal(ret, 0);
	}
}

static void sampling_attrs(struct perf_event_attr a[3])
{
	bool kernel = evprof_probe(EVPROF_FEAT_KERNEL_SAMPLES)->yes;

	memset(a, 0, 3 * sizeof(a[0]));
	for (int i = 0; i < 3; i++) {
		a[i].size = sizeof(a[i]);
		a[i].type = PERF_TYPE_SOFTWARE;
		a[i].inherit = 1;
		/* Where paranoid forbids the kernel, profile user space. */
		a[i].exclude_kernel = !kernel;
		a[i].exclude_hv = !kernel;
	}
	a[0].config = PERF_COUNT_SW_TASK_CLOCK;
	a[0].sample_period = PERIOD_NS;
	a[0].sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP |
			   PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
			   PERF_SAMPLE_CPU | PERF_SAMPLE_READ |
			   PERF_SAMPLE_CALLCHAIN;
	a[0].sample_id_all = 1;
	a[1].config = PERF_COUNT_SW_PAGE_FAULTS;
	a[2].config = PERF_COUNT_SW_CONTEXT_SWITCHES;
}

static void test_inherit_sample_read(void **state)
{
	struct evprof_group_set_opts opts = {.sz = sizeof(opts),
					     .deferred_enable = true};
	struct worker_report rep[NWORKERS];
	struct perf_event_attr a[3];
	struct evprof_group_set *set;
	int go[2], rp[2], cpus[NWORKERS + 1], ncpus, status;
	struct evprof_ring_stats st = {.sz = sizeof(st)};

	(void)state;
	if (!evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ)->yes) {
		print_message(
		    "SKIP: %s\n",
		    evprof_probe(EVPROF_FEAT_INHERIT_SAMPLE_READ)->why);
		exit(77);
	}
	/* The workers move between CPUs they are allowed, not all online. */
	ncpus = allowed_cpus(cpus, NWORKERS + 1);
	assert_true(ncpus > 0);
	assert_int_equal(pipe2(go, O_CLOEXEC), 0);
	assert_int_equal(pipe2(rp, O_CLOEXEC), 0);
	child_pid = fork();
	assert_true(child_pid >= 0);
	if (child_pid == 0) {
		close(go[1]);
		close(rp[0]);
		child_main(go[0], rp[1], cpus, ncpus);
	}
	close(go[0]);
	close(rp[1]);

	sampling_attrs(a);
	set = evprof_group_set__open(a, 3, child_pid, &opts);
	assert_non_null(set);
	/* Every online CPU, whatever this process's affinity. */
	ncpu_st = (int)evprof_group_set__nr(set);
	assert_int_equal(ncpu_st, sysconf(_SC_NPROCESSORS_ONLN));
	cpu_st = calloc((size_t)ncpu_st, sizeof(*cpu_st));
	assert_non_null(cpu_st);
	evprof_record_fmt__from_attr(&fmt, &a[0]);
	for (int c = 0; c < ncpu_st; c++) {
		struct cpu_state *cs = &cpu_st[c];

		cs->cpu = evprof_group_set__cpu(set, (size_t)c);
		cs->g = evprof_group_set__group(set, (size_t)c);
		if (c == 0)
			fmt.read_format = evprof_group__read_format(cs->g);
		assert_int_equal(evprof_group__read_format(cs->g),
				 fmt.read_format);
		cs->ring =
		    evprof_ring__open(evprof_group__fd(cs->g, 0), RING_PAGES);
		assert_non_null(cs->ring);
		assert_int_equal(evprof_ring__fd(cs->ring),
				 evprof_group__fd(cs->g, 0));
		for (size_t m = 1; m < 3; m++)
			assert_int_equal(
			    evprof_ring__add_fd(cs->ring,
						evprof_group__fd(cs->g, m)),
			    0);
	}
	/* A ring only takes events of its own CPU. */
	if (ncpu_st > 1)
		assert_int_equal(
		    evprof_ring__add_fd(cpu_st[0].ring,
					evprof_group__fd(cpu_st[1].g, 1)),
		    -EINVAL);

	assert_int_equal(evprof_group_set__enable(set), 0);
	assert_int_equal(write(go[1], "g", 1), 1);
	close(go[1]);
	for (;;) {
		pid_t w = waitpid(child_pid, &status, WNOHANG);

		drain();
		if (w == child_pid)
			break;
		assert_int_equal(w, 0);
		usleep(10000);
	}
	drain();
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	for (int i = 0; i < NWORKERS; i++)
		assert_int_equal(read(rp[0], &rep[i], sizeof(rep[i])),
				 sizeof(rep[i]));
	close(rp[0]);

	print_message("%lu samples, %lu other records\n", nsamples, nother);
	assert_true(nsamples > 0);
	for (int i = 0; i < NWORKERS; i++) {
		uint64_t faults = 0;
		unsigned int samples = 0;
		long truth = rep[i].minflt;

		/* The thread's count is the sum of its per-CPU instances,
		 * each as its last sample there read it. */
		for (int c = 0; c < ncpu_st; c++)
			for (int t = 0; t < cpu_st[c].ntids; t++)
				if (cpu_st[c].tids[t].tid ==
				    (uint32_t)rep[i].tid) {
					faults += cpu_st[c].tids[t].last[1];
					samples += cpu_st[c].tids[t].samples;
				}
		print_message("tid %d: %u samples, page-faults %llu, "
			      "RUSAGE_THREAD minflt %ld\n",
			      (int)rep[i].tid, samples,
			      (unsigned long long)faults, truth);
		assert_true(samples > 0);
		assert_true(truth >= 2 * PAGES_PER_PHASE);
		assert_true((long)faults >= truth - truth / 50 - SLACK);
		assert_true((long)faults <= truth + truth / 50 + SLACK);
	}
	/* Every sampled tid is the child's: its main thread or a worker. */
	for (int c = 0; c < ncpu_st; c++)
		for (int t = 0; t < cpu_st[c].ntids; t++) {
			uint32_t tid = cpu_st[c].tids[t].tid;

			assert_true(tid == (uint32_t)child_pid ||
				    tid == (uint32_t)rep[0].tid ||
				    tid == (uint32_t)rep[1].tid);
		}
	for (int c = 0; c < ncpu_st; c++) {
		evprof_ring__stats(cpu_st[c].ring, &st);
		print_message("cpu %d: %llu records, %llu lost, %llu "
			      "malformed\n",
			      cpu_st[c].cpu, (unsigned long long)st.records,
			      (unsigned long long)st.lost_events,
			      (unsigned long long)st.malformed);
		assert_int_equal(st.malformed, 0);
		evprof_ring__free(cpu_st[c].ring);
	}
	free(cpu_st);
	evprof_group_set__free(set);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_inherit_sample_read),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
