// SPDX-License-Identifier: MIT
/*
 * CPU topologies other than this machine's, through the library's host
 * seam (cpu_root, a directory of fake online and possible lists): one
 * CPU, a sparse 0,2,5, 1024 CPUs, and 1024 sparse ones whose list outgrows
 * a page. The lists parse; a per-CPU set opens on exactly the listed CPUs
 * the kernel here opens an event on (this test asks it, one CPU at a
 * time) and skips the others without a warning; a per-CPU session keeps
 * the state of each CPU by its number, CPU 1023 and 2046 included.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/event.h>
#include <evprof/profile.h>
#include <evprof/session.h>

#include "cases.h"
#include "events/host.h"
#include "sessfeed.h"
#include "testutil.h"

struct topo {
	const char *name;
	int *online, nr_online; /* what the lists say, built by this test */
	int *possible, nr_possible;
	char dir[64];
};

static struct topo topos[4];
static struct evprof_host fake;

/* lo..hi, every step-th: appended to list and to text ("0-3" or "0,2"). */
static void add_cpus(int **list, int *n, char *text, size_t len, int lo, int hi,
		     int step)
{
	size_t at = strlen(text);

	*list = realloc(*list,
			(size_t)(*n + (hi - lo) / step + 1) * sizeof(**list));
	assert_non_null(*list);
	for (int c = lo; c <= hi; c += step)
		(*list)[(*n)++] = c;
	if (step == 1) { /* as the kernel writes it: "5", "0-7" */
		snprintf(text + at, len - at, lo == hi ? "%s%d" : "%s%d-%d",
			 at ? "," : "", lo, hi);
		return;
	}
	for (int c = lo; c <= hi; c += step) {
		at += (size_t)snprintf(text + at, len - at, "%s%d",
				       at ? "," : "", c);
		assert_true(at < len);
	}
}

static void write_list(const char *dir, const char *name, const char *text)
{
	char path[128];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%s\n", text);
	assert_int_equal(fclose(f), 0);
}

/* A topology: its online CPUs lo..hi by step, possible 0..last. */
static void make(struct topo *t, const char *name, const int (*ranges)[3],
		 size_t nr, int last_possible)
{
	static char text[16384];

	t->name = name;
	snprintf(t->dir, sizeof(t->dir), "/tmp/evprof-cpus.XXXXXX");
	assert_non_null(mkdtemp(t->dir));
	text[0] = '\0';
	for (size_t i = 0; i < nr; i++)
		add_cpus(&t->online, &t->nr_online, text, sizeof(text),
			 ranges[i][0], ranges[i][1], ranges[i][2]);
	write_list(t->dir, "online", text);
	text[0] = '\0';
	add_cpus(&t->possible, &t->nr_possible, text, sizeof(text), 0,
		 last_possible, 1);
	write_list(t->dir, "possible", text);
}

static int setup(void **state)
{
	(void)state;
	make(&topos[0], "one CPU", (const int[][3]){{0, 0, 1}}, 1, 0);
	make(&topos[1], "sparse 0,2,5",
	     (const int[][3]){{0, 0, 1}, {2, 2, 1}, {5, 5, 1}}, 3, 7);
	make(&topos[2], "1024 CPUs", (const int[][3]){{0, 1023, 1}}, 1, 1023);
	/* "0,2,...,2046": 4.5 KiB, more than a page. */
	make(&topos[3], "1024 sparse", (const int[][3]){{0, 2046, 2}}, 1, 2047);
	return 0;
}

static int teardown(void **state)
{
	char path[128];

	(void)state;
	evprof__host_set(NULL);
	for (size_t i = 0; i < sizeof(topos) / sizeof(topos[0]); i++) {
		struct topo *t = &topos[i];

		snprintf(path, sizeof(path), "%s/online", t->dir);
		unlink(path);
		snprintf(path, sizeof(path), "%s/possible", t->dir);
		unlink(path);
		rmdir(t->dir);
		free(t->online);
		free(t->possible);
	}
	return 0;
}

/* The library reads t's lists from now on, the rest of this host. */
static void use(const struct topo *t)
{
	fake = *evprof__host();
	fake.cpu_root = t->dir;
	evprof__host_set(&fake);
	print_message("%s\n", t->name);
}

typedef int (*list_fn)(int *cpus, int max);

/* fn reads want[n]: the count alone, all of it, and into a short array. */
static void check_list(list_fn fn, const int *want, int n)
{
	int *got = calloc((size_t)n + 1, sizeof(*got));

	assert_non_null(got);
	assert_int_equal(fn(NULL, 0), n);
	got[n] = -7;
	assert_int_equal(fn(got, n), n);
	assert_memory_equal(got, want, (size_t)n * sizeof(*got));
	assert_int_equal(got[n], -7);
	/* A short array learns the full count; nothing past its end. */
	memset(got, 0xff, ((size_t)n + 1) * sizeof(*got));
	assert_int_equal(fn(got, 1), n);
	assert_int_equal(got[0], want[0]);
	if (n > 1)
		assert_int_equal(got[1], -1);
	free(got);
}

static void test_lists(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(topos) / sizeof(topos[0]); i++) {
		use(&topos[i]);
		check_list(evprof_cpus_online, topos[i].online,
			   topos[i].nr_online);
		check_list(evprof_cpus_possible, topos[i].possible,
			   topos[i].nr_possible);
	}
	evprof__host_set(NULL);
}

static int nwarn;

static int count_warnings(enum evprof_print_level level, const char *fmt,
			  va_list ap)
{
	if (level == EVPROF_WARN) {
		nwarn++;
		vfprintf(stderr, fmt, ap);
	}
	return 0;
}

static void task_clock(struct perf_event_attr *a)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	a->type = PERF_TYPE_SOFTWARE;
	a->config = PERF_COUNT_SW_TASK_CLOCK;
	a->exclude_kernel = 1; /* allowed at any perf_event_paranoid */
	a->exclude_hv = 1;
}

static void test_set_opens(void **state)
{
	struct perf_event_attr a;

	(void)state;
	task_clock(&a);
	for (size_t i = 0; i < sizeof(topos) / sizeof(topos[0]); i++) {
		const struct topo *t = &topos[i];
		int *want = calloc((size_t)t->nr_online, sizeof(*want));
		int nwant = 0, before = count_fds();
		struct evprof_group_set *set;

		assert_non_null(want);
		/* The truth: the listed CPUs an event opens on here. */
		for (int k = 0; k < t->nr_online; k++) {
			int fd = (int)syscall(SYS_perf_event_open, &a, 0,
					      t->online[k], -1, 0);

			if (fd >= 0) {
				want[nwant++] = t->online[k];
				close(fd);
			} else {
				assert_true(errno == ENODEV || errno == EINVAL);
			}
		}
		use(t);
		nwarn = 0;
		evprof_set_print(count_warnings);
		errno = 0;
		set = evprof_group_set__open(&a, 1, 0, NULL);
		evprof_set_print(NULL);
		print_message("  %d listed, %d here, %zu opened\n",
			      t->nr_online, nwant, evprof_group_set__nr(set));
		assert_int_equal(nwarn, 0);
		if (!nwant) {
			assert_null(set);
		} else {
			assert_non_null(set);
			assert_int_equal(evprof_group_set__nr(set), nwant);
			for (int k = 0; k < nwant; k++)
				assert_int_equal(
				    evprof_group_set__cpu(set, (size_t)k),
				    want[k]);
		}
		evprof_group_set__free(set);
		assert_int_equal(count_fds(), before);
		free(want);
	}
	evprof__host_set(NULL);
}

/* ---- a per-CPU session on records of the topology's CPUs --------------- */

/* One CPU's group: a sampler, a switch-out cut, page faults. */
struct cpu_ids {
	uint32_t cpu;
	uint64_t sampler, cut, faults;
};

/* A read of c's group by tid (UINT32_MAX: a task gone), a cut or not. */
static int feed_read(struct evprof_session *s, const struct cpu_ids *c,
		     bool cut, uint32_t pid, uint32_t tid, uint64_t time,
		     uint64_t faults)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	rb_u64(&b, cut ? c->cut : c->sampler); /* IDENTIFIER */
	rb_u64(&b, 0x1234);		       /* IP */
	rb_u32x2(&b, pid, tid);
	rb_u64(&b, time);
	rb_u32x2(&b, c->cpu, 0); /* CPU */
	rb_u64(&b, 1000);	 /* PERIOD */
	rb_u64(&b, 3);		 /* READ: nr, ena, run, {value, id} */
	rb_u64(&b, time);
	rb_u64(&b, time);
	rb_u64(&b, time / 100);
	rb_u64(&b, c->sampler);
	rb_u64(&b, time / 50);
	rb_u64(&b, c->cut);
	rb_u64(&b, faults);
	rb_u64(&b, c->faults);
	rb_u64(&b, 1); /* CALLCHAIN */
	rb_u64(&b, 0x1234);
	return rb_feed(s, &b);
}

/* tid's EXIT, as CPU c's ring has it. */
static int feed_exit(struct evprof_session *s, const struct cpu_ids *c,
		     uint32_t pid, uint32_t tid, uint64_t time)
{
	struct rb b;

	rb_begin(&b, PERF_RECORD_EXIT, 0);
	rb_u32x2(&b, pid, pid);
	rb_u32x2(&b, tid, tid);
	rb_u64(&b, time);
	rb_u32x2(&b, pid, tid); /* sample_id: TID, TIME, CPU, IDENTIFIER */
	rb_u64(&b, time);
	rb_u32x2(&b, c->cpu, 0);
	rb_u64(&b, c->sampler);
	return rb_feed(s, &b);
}

static void declare(struct evprof_session *s, const struct cpu_ids *c)
{
	assert_int_equal(
	    evprof_session__set_id(s, c->sampler, EVPROF_SESSION_SAMPLER), 0);
	assert_int_equal(evprof_session__set_id(s, c->cut, EVPROF_SESSION_CUT),
			 0);
	assert_int_equal(evprof_session__set_id(s, c->faults, 0), 0);
}

/*
 * Threads 201 and 301 on CPUs a and b (the topology's last two). Each
 * thread's last switch-out comes after its EXIT with tid -1: only the
 * state of its own CPU, by number, says whose it is.
 */
static void session_on(uint32_t a, uint32_t b)
{
	static const char *const names[] = {"page-faults"};
	struct evprof_session_opts o = {
	    .sz = sizeof(o),
	    .fmt = {.sample_type = ST_BITS,
		    .read_format = RF_BITS,
		    .sample_id_all = true},
	    .counters = names,
	    .nr_counters = 1,
	    .per_cpu = true,
	};
	struct cpu_ids ca = {a, 10, 11, 12}, cb = {b, 20, 21, 22};
	struct evprof_session *s = evprof_session__new(&o);
	struct evprof_profile *p = evprof_profile__new(NULL);

	assert_non_null(s);
	assert_non_null(p);
	if (a == b) /* one CPU: one group, read by both threads */
		cb = ca;
	declare(s, &ca);
	if (a != b)
		declare(s, &cb);
	assert_int_equal(feed_read(s, &ca, false, 200, 201, 100, 10), 0);
	assert_int_equal(feed_read(s, &cb, false, 300, 301, 110, 20), 0);
	assert_int_equal(feed_exit(s, &ca, 200, 201, 150), 0);
	assert_int_equal(feed_read(s, &ca, true, 200, UINT32_MAX, 160, 25), 0);
	assert_int_equal(feed_exit(s, &cb, 300, 301, 170), 0);
	assert_int_equal(feed_read(s, &cb, true, 300, UINT32_MAX, 180, 40), 0);
	assert_int_equal(evprof_session__build(s, p, NULL), 0);
	if (a != b) {
		/* Each CPU's counter: 10 then 25, 20 then 40. */
		assert_int_equal(evprof_session__thread_total(s, 201, 0), 25);
		assert_int_equal(evprof_session__thread_total(s, 301, 0), 40);
	} else {
		/* One counter: 10, +10 (301), +5 (201's tail), +15 (301's). */
		assert_int_equal(evprof_session__thread_total(s, 201, 0), 15);
		assert_int_equal(evprof_session__thread_total(s, 301, 0), 25);
	}
	assert_int_equal(evprof_session__unattributed(s, 0), 0);
	evprof_profile__free(p);
	evprof_session__free(s);
}

static void test_session_cpus(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(topos) / sizeof(topos[0]); i++) {
		const struct topo *t = &topos[i];
		int n = t->nr_online;

		use(t);
		print_message("  CPUs %d and %d\n",
			      t->online[n > 1 ? n - 2 : 0], t->online[n - 1]);
		session_on((uint32_t)t->online[n > 1 ? n - 2 : 0],
			   (uint32_t)t->online[n - 1]);
	}
	evprof__host_set(NULL);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_lists),
	    cmocka_unit_test(test_set_opens),
	    cmocka_unit_test(test_session_cpus),
	};

	return run_cases(argc, argv, tests, setup, teardown);
}
