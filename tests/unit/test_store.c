// SPDX-License-Identifier: MIT
/*
 * The profile model's aggregated store and timeline. Producer calls come
 * from a seeded generator; the expected sums and time orders are computed
 * here from the same calls, never from the library's output.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <malloc.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <dirent.h>

#include <cmocka.h>

#include <evprof/profile.h>

#include "cases.h"
#include "profile/model.h"
#include "profile/timeline.h"

#define NR_THREADS 3
#define NR_STACKS  6
#define NR_CTRS	   2
#define NO_VALUE   UINT64_MAX

static char tmpdir[] = "/tmp/evprof-store-XXXXXX";

struct truth {
	uint64_t samples, cpu, ctr[NR_CTRS], off;
	uint64_t has;
	bool seen;
};

struct fixture {
	struct evprof_profile *p;
	int thr[NR_THREADS];
	int stack[NR_STACKS + 1]; /* last: -1, no stack */
	int off_cpu;		  /* weight type */
};

static uint64_t rng_state;

static uint64_t rnd(uint64_t n)
{
	rng_state = rng_state * 6364136223846793005ULL + 1442695040888963407ULL;
	return (rng_state >> 33) % n;
}

/* Threads, counters, a weight type and a few stacks of one lib. */
static void setup_profile(struct fixture *f,
			  const struct evprof_profile_opts *o)
{
	int proc, lib, i;

	f->p = evprof_profile__new(o);
	assert_non_null(f->p);
	assert_int_equal(evprof_profile__add_counter(f->p, "page-faults"), 0);
	assert_int_equal(evprof_profile__add_counter(f->p, "cs"), 1);
	f->off_cpu = evprof_profile__add_weight_type(f->p, "off-cpu");
	assert_int_equal(f->off_cpu, 0);
	/* Names are shared by every column. */
	assert_int_equal(evprof_profile__add_weight_type(f->p, "cs"), -EEXIST);
	assert_int_equal(evprof_profile__add_counter(f->p, "off-cpu"), -EEXIST);
	assert_int_equal(evprof_profile__add_weight_type(f->p, "cpu"), -EEXIST);
	proc = evprof_profile__add_process(f->p, 10, "app", 0);
	assert_true(proc >= 0);
	for (i = 0; i < NR_THREADS; i++) {
		char name[16];

		snprintf(name, sizeof(name), "t%d", i);
		f->thr[i] =
		    evprof_profile__add_thread(f->p, proc, 10 + i, name, 0);
		assert_true(f->thr[i] >= 0);
	}
	lib = evprof_profile__add_lib(
	    f->p, &(struct evprof_profile_lib){.path = "/bin/app"});
	assert_true(lib >= 0);
	for (i = 0; i < NR_STACKS; i++) {
		char fn[16];
		struct evprof_profile_frame fr = {.lib = lib,
						  .address =
						      0x1000 + 16 * (uint64_t)i,
						  .function = fn};
		int frame;

		snprintf(fn, sizeof(fn), "f%d", i);
		frame = evprof_profile__frame(f->p, &fr);
		assert_true(frame >= 0);
		/* Stacks 0..2 are roots, 3..5 their children. */
		f->stack[i] = evprof_profile__stack(
		    f->p, i < 3 ? -1 : f->stack[i - 3], frame);
		assert_true(f->stack[i] >= 0);
	}
	f->stack[NR_STACKS] = -1;
}

/*
 * n producer calls, samples and aggregates mixed, into f (and into g, the
 * same calls, when g is not NULL), summed into truth[thread][stack].
 */
static void produce(struct fixture *f, struct fixture *g, size_t n,
		    struct truth truth[NR_THREADS][NR_STACKS + 1])
{
	size_t i;

	for (i = 0; i < n; i++) {
		unsigned t = (unsigned)rnd(NR_THREADS);
		unsigned s = (unsigned)rnd(NR_STACKS + 1);
		struct truth *w = &truth[t][s];
		uint64_t ctr[NR_CTRS], has = 0, off;
		unsigned c;

		for (c = 0; c < NR_CTRS; c++) {
			ctr[c] = rnd(4) ? rnd(1000) : NO_VALUE;
			if (ctr[c] != NO_VALUE)
				has |= 1ULL << c;
			else
				ctr[c] = 0;
		}
		w->seen = true;
		w->has |= has;
		for (c = 0; c < NR_CTRS; c++)
			w->ctr[c] += ctr[c];
		if (rnd(5)) {
			struct evprof_profile_sample smp = {
			    /* Roughly in order, some behind. */
			    .time_ns = 1000000 + i * 1000 - rnd(3) * 1500,
			    .stack = f->stack[s],
			    .weight = rnd(3),
			    .cpu_delta_ns = rnd(2) ? rnd(1000000) : 0,
			    .has_counters = has,
			    .counters = ctr,
			};

			w->samples += smp.weight ? smp.weight : 1;
			w->cpu += smp.cpu_delta_ns;
			assert_int_equal(
			    evprof_profile__add_sample(f->p, f->thr[t], &smp),
			    0);
			if (g)
				assert_int_equal(evprof_profile__add_sample(
						     g->p, g->thr[t], &smp),
						 0);
		} else {
			off = rnd(5000000);
			struct evprof_profile_aggregate a = {
			    .stack = f->stack[s],
			    .samples = rnd(3), /* 0: off-CPU time only */
			    .cpu_ns = rnd(1000),
			    .has_counters = has,
			    .counters = ctr,
			    .has_weights = 1ULL << f->off_cpu,
			    .weights = &off,
			};

			w->samples += a.samples;
			w->cpu += a.cpu_ns;
			w->off += off;
			assert_int_equal(
			    evprof_profile__add_aggregate(f->p, f->thr[t], &a),
			    0);
			if (g)
				assert_int_equal(evprof_profile__add_aggregate(
						     g->p, g->thr[t], &a),
						 0);
		}
	}
}

struct check {
	const struct fixture *f;
	struct truth (*truth)[NR_STACKS + 1];
	bool visited[NR_THREADS][NR_STACKS + 1];
	size_t entries;
	bool weights; /* compare off-CPU sums too */
	bool has;     /* compare has bits too */
};

static int check_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct check *c = ctx;
	const struct truth *w;
	int t, s;

	for (t = 0; t < NR_THREADS && c->f->thr[t] != e->thread; t++)
		;
	for (s = 0; s <= NR_STACKS && c->f->stack[s] != e->stack; s++)
		;
	assert_true(t < NR_THREADS && s <= NR_STACKS);
	assert_false(c->visited[t][s]); /* one entry per (thread, stack) */
	c->visited[t][s] = true;
	c->entries++;
	w = &c->truth[t][s];
	assert_true(w->seen);
	assert_int_equal(e->samples, w->samples);
	assert_int_equal(e->cpu_ns, w->cpu);
	assert_int_equal(e->counters[0], w->ctr[0]);
	assert_int_equal(e->counters[1], w->ctr[1]);
	if (c->has)
		assert_int_equal(e->has_counters, w->has);
	if (c->weights)
		assert_int_equal(e->weights[0], w->off);
	return 0;
}

static size_t nr_seen(struct truth truth[NR_THREADS][NR_STACKS + 1])
{
	size_t n = 0;
	int t, s;

	for (t = 0; t < NR_THREADS; t++)
		for (s = 0; s <= NR_STACKS; s++)
			n += truth[t][s].seen;
	return n;
}

static void check_store(const struct fixture *f,
			struct truth truth[NR_THREADS][NR_STACKS + 1],
			bool weights)
{
	struct check c = {
	    .f = f, .truth = truth, .weights = weights, .has = true};
	struct evprof_profile_stats st = {.sz = sizeof(st)};

	assert_int_equal(
	    evprof_profile__for_each_entry(f->p, -1, check_entry, &c), 0);
	assert_int_equal(c.entries, nr_seen(truth));
	evprof_profile__stats(f->p, &st);
	assert_int_equal(st.entries, c.entries);
}

static void test_store_sums(void **state)
{
	struct truth truth[NR_THREADS][NR_STACKS + 1] = {0};
	struct fixture f;
	struct evprof_profile_sample bad = {.stack = 0, .has_counters = 4};
	struct evprof_profile_aggregate abad = {.stack = -1, .has_weights = 2};
	uint64_t v[NR_CTRS] = {0};

	(void)state;
	rng_state = 42;
	setup_profile(&f, NULL);
	produce(&f, NULL, 5000, truth);
	check_store(&f, truth, true);

	/* Bits of unregistered columns, a bad stack; the layout is fixed. */
	bad.counters = v;
	assert_int_equal(evprof_profile__add_sample(f.p, f.thr[0], &bad),
			 -EINVAL);
	abad.weights = v;
	assert_int_equal(evprof_profile__add_aggregate(f.p, f.thr[0], &abad),
			 -EINVAL);
	abad = (struct evprof_profile_aggregate){.stack = 999};
	assert_int_equal(evprof_profile__add_aggregate(f.p, f.thr[0], &abad),
			 -EINVAL);
	assert_int_equal(evprof_profile__add_counter(f.p, "new"), -EBUSY);
	assert_int_equal(evprof_profile__add_weight_type(f.p, "new"), -EBUSY);
	/* Nothing changed. */
	check_store(&f, truth, true);
	evprof_profile__free(f.p);
}

/* Sums survive pprof: counters as counts, weights as nanoseconds. */
static void test_store_pprof_round_trip(void **state)
{
	struct truth truth[NR_THREADS][NR_STACKS + 1] = {0};
	struct fixture f, g;
	char path[256];
	struct check c = {0};
	int t;

	(void)state;
	rng_state = 7;
	setup_profile(&f, NULL);
	produce(&f, NULL, 2000, truth);
	snprintf(path, sizeof(path), "%s/rt.pb.gz", tmpdir);
	assert_int_equal(evprof_profile__write_pprof(f.p, path, NULL), 0);
	g.p = evprof_profile__load(path);
	assert_non_null(g.p);
	/* The reader makes threads in the order the samples name them. */
	for (t = 0; t < NR_THREADS; t++) {
		struct evprof_profile_thread_info ti;
		int k;

		g.thr[t] = -1;
		for (k = 0; !evprof_profile__thread_info(g.p, k, &ti); k++)
			if (ti.tid == 10 + t)
				g.thr[t] = k;
	}
	/* Stacks: match by leaf function name and depth. */
	for (t = 0; t <= NR_STACKS; t++)
		g.stack[t] = -2;
	g.stack[NR_STACKS] = -1;
	for (t = 0;; t++) {
		struct evprof_profile_frame fr;
		int parent, frame, i;

		if (evprof_profile__stack_info(g.p, t, &parent, &frame))
			break;
		assert_int_equal(evprof_profile__frame_info(g.p, frame, &fr),
				 0);
		assert_int_equal(sscanf(fr.function, "f%d", &i), 1);
		assert_true(i >= 0 && i < NR_STACKS);
		assert_int_equal(parent < 0, i < 3);
		g.stack[i] = t;
	}
	assert_string_equal(evprof_profile__weight_name(g.p, 0), "off-cpu");
	assert_string_equal(evprof_profile__counter_name(g.p, 1), "cs");
	c.f = &g;
	c.truth = truth;
	c.weights = true;
	assert_int_equal(
	    evprof_profile__for_each_entry(g.p, -1, check_entry, &c), 0);
	assert_int_equal(c.entries, nr_seen(truth));
	evprof_profile__free(g.p);
	evprof_profile__free(f.p);
}

struct row {
	uint64_t time;
	int stack;
	uint64_t seq;
};

static int cmp_row(const void *a, const void *b)
{
	const struct row *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq; /* stable */
}

/* Each thread's timeline comes back in stable time order, spilled or not. */
static void check_timeline(const struct fixture *f, bool spill)
{
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	int t;

	evprof_profile__stats(f->p, &st);
	assert_true(spill ? st.spilled_bytes > 0 : st.spilled_bytes == 0);
	for (t = 0; t < NR_THREADS; t++) {
		struct evprof_profile_timeline *it, *again;
		struct evprof_profile_sample s, s2;
		uint64_t prev = 0;
		size_t n = 0;
		int ret;

		it = evprof_profile_timeline__new(f->p, f->thr[t]);
		again = evprof_profile_timeline__new(f->p, f->thr[t]);
		assert_non_null(it);
		assert_non_null(again);
		while ((ret = evprof_profile_timeline__next(it, &s)) == 1) {
			/* Two readers at once see the same rows. */
			assert_int_equal(
			    evprof_profile_timeline__next(again, &s2), 1);
			assert_int_equal(s.time_ns, s2.time_ns);
			assert_int_equal(s.stack, s2.stack);
			assert_true(s.time_ns >= prev);
			prev = s.time_ns;
			n++;
		}
		assert_int_equal(ret, 0);
		assert_int_equal(evprof_profile_timeline__next(again, &s2), 0);
		evprof_profile_timeline__free(it);
		evprof_profile_timeline__free(again);
		assert_true(n > 0);
	}
}

static void test_timeline_order(void **state)
{
	struct fixture f;
	struct row rows[400];
	size_t n = 0, i;
	int ret;
	struct evprof_profile_timeline *it;
	struct evprof_profile_sample s;

	(void)state;
	rng_state = 3;
	setup_profile(&f, NULL);
	for (i = 0; i < 400; i++) {
		struct evprof_profile_sample smp = {
		    .time_ns = 1000 + rnd(50) * 10, /* many equal times */
		    .stack = f.stack[rnd(NR_STACKS + 1)],
		};

		rows[n++] = (struct row){smp.time_ns, smp.stack, i};
		assert_int_equal(
		    evprof_profile__add_sample(f.p, f.thr[0], &smp), 0);
	}
	qsort(rows, n, sizeof(*rows), cmp_row);
	it = evprof_profile_timeline__new(f.p, f.thr[0]);
	assert_non_null(it);
	for (i = 0; (ret = evprof_profile_timeline__next(it, &s)) == 1; i++) {
		assert_true(i < n);
		assert_int_equal(s.time_ns, rows[i].time);
		assert_int_equal(s.stack, rows[i].stack);
		assert_int_equal(s.weight, 1);
	}
	assert_int_equal(ret, 0);
	assert_int_equal(i, n);
	evprof_profile_timeline__free(it);
	evprof_profile__free(f.p);
}

static char *slurp(const char *path, size_t *n)
{
	FILE *fp = fopen(path, "rb");
	char *buf;
	long len;

	assert_non_null(fp);
	assert_int_equal(fseek(fp, 0, SEEK_END), 0);
	len = ftell(fp);
	rewind(fp);
	buf = malloc((size_t)len + 1);
	assert_non_null(buf);
	assert_int_equal(fread(buf, 1, (size_t)len, fp), (size_t)len);
	fclose(fp);
	buf[len] = 0;
	*n = (size_t)len;
	return buf;
}

/* Spilled in small chunks, the Firefox output is byte for byte the same. */
static void test_spill_identical(void **state)
{
	struct truth truth[NR_THREADS][NR_STACKS + 1] = {0};
	struct evprof_profile_opts so = {.sz = sizeof(so),
					 .start_mono_ns = 1000000,
					 .spill_dir = tmpdir,
					 .spill_rows = 7};
	struct evprof_profile_opts mo = {.sz = sizeof(mo),
					 .start_mono_ns = 1000000};
	struct fixture spilled, mem;
	char a[256], b[256];
	char *x, *y;
	size_t nx, ny;

	(void)state;
	rng_state = 11;
	setup_profile(&spilled, &so);
	setup_profile(&mem, &mo);
	produce(&spilled, &mem, 3000, truth);
	check_timeline(&spilled, true);
	check_timeline(&mem, false);
	check_store(&spilled, truth, true);
	snprintf(a, sizeof(a), "%s/spilled.json", tmpdir);
	snprintf(b, sizeof(b), "%s/mem.json", tmpdir);
	assert_int_equal(evprof_profile__write_firefox(spilled.p, a, NULL), 0);
	assert_int_equal(evprof_profile__write_firefox(mem.p, b, NULL), 0);
	x = slurp(a, &nx);
	y = slurp(b, &ny);
	assert_int_equal(nx, ny);
	assert_memory_equal(x, y, nx);
	free(x);
	free(y);
	evprof_profile__free(spilled.p);
	evprof_profile__free(mem.p);
}

/*
 * Without a timeline the Firefox writer gives one sample per store entry
 * with samples; read back, the store has the same sums (off-CPU time and
 * sample-less entries are not in Firefox files).
 */
static void test_no_timeline_firefox(void **state)
{
	struct truth truth[NR_THREADS][NR_STACKS + 1] = {0};
	struct evprof_profile_opts o = {.sz = sizeof(o), .no_timeline = true};
	struct fixture f, g;
	struct check c = {0};
	char path[256];
	int t, s;

	(void)state;
	rng_state = 5;
	setup_profile(&f, &o);
	produce(&f, NULL, 3000, truth);
	errno = 0;
	assert_null(evprof_profile_timeline__new(f.p, f.thr[0]));
	assert_int_equal(errno, ENODATA);
	snprintf(path, sizeof(path), "%s/agg.json", tmpdir);
	assert_int_equal(evprof_profile__write_firefox(f.p, path, NULL), 0);
	g.p = evprof_profile__load(path);
	assert_non_null(g.p);
	/* The loader interns threads and stacks in the file's order. */
	memcpy(g.thr, f.thr, sizeof(g.thr));
	memcpy(g.stack, f.stack, sizeof(g.stack));
	for (t = 0; t < NR_THREADS; t++)
		for (s = 0; s <= NR_STACKS; s++)
			if (!truth[t][s].samples)
				truth[t][s] = (struct truth){0};
	c.f = &g;
	c.truth = truth;
	assert_int_equal(
	    evprof_profile__for_each_entry(g.p, -1, check_entry, &c), 0);
	assert_int_equal(c.entries, nr_seen(truth));
	evprof_profile__free(g.p);
	evprof_profile__free(f.p);
}

/*
 * With the timeline off, a million samples on 100 stacks allocate nothing
 * once the store has its 100 entries.
 */
static void test_no_timeline_memory(void **state)
{
	struct evprof_profile_opts o = {.sz = sizeof(o), .no_timeline = true};
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p;
	struct mallinfo2 before, after;
	int stacks[100], thr, lib, i;
	uint64_t ctr = 3;

	(void)state;
	p = evprof_profile__new(&o);
	assert_non_null(p);
	assert_int_equal(evprof_profile__add_counter(p, "page-faults"), 0);
	thr = evprof_profile__add_thread(
	    p, evprof_profile__add_process(p, 1, "a", 0), 1, "a", 0);
	lib = evprof_profile__add_lib(
	    p, &(struct evprof_profile_lib){.path = "/bin/a"});
	for (i = 0; i < 100; i++) {
		struct evprof_profile_frame fr = {.lib = lib,
						  .address = (uint64_t)i};

		stacks[i] =
		    evprof_profile__stack(p, -1, evprof_profile__frame(p, &fr));
		assert_true(stacks[i] >= 0);
	}
	for (i = 0; i < 1000100; i++) {
		struct evprof_profile_sample s = {.time_ns = (uint64_t)i,
						  .stack = stacks[i % 100],
						  .cpu_delta_ns = 1000,
						  .has_counters = 1,
						  .counters = &ctr};

		if (i == 100)
			before = mallinfo2();
		assert_int_equal(evprof_profile__add_sample(p, thr, &s), 0);
	}
	after = mallinfo2();
	assert_int_equal(after.uordblks, before.uordblks);
	assert_int_equal(after.arena + after.hblkhd,
			 before.arena + before.hblkhd);
	evprof_profile__stats(p, &st);
	assert_int_equal(st.samples, 1000100);
	assert_int_equal(st.entries, 100);
	assert_int_equal(st.timeline_rows, 0);
	assert_int_equal(st.timeline_bytes, 0);
	evprof_profile__free(p);
}

/* Open file descriptors of this process. */
static int nr_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

#define SCRATCH_MEM (2u << 20)

/*
 * A scratch stream gives back what was written, through the move from
 * memory to a file: small ones never open a file, large ones open one.
 */
static void check_scratch(const struct evprof_profile *p, size_t size,
			  bool file)
{
	unsigned char *want = malloc(size), *got = malloc(size);
	int fds = nr_fds();
	size_t i, n;
	FILE *f;

	assert_true(want && got);
	for (i = 0; i < size; i++)
		want[i] = (unsigned char)rnd(256);
	f = evprof__timeline_scratch(p, SCRATCH_MEM);
	assert_non_null(f);
	/* Writes of many sizes, so that some straddle the move. */
	for (i = 0; i < size; i += n) {
		n = 1 + rnd(70000);
		if (n > size - i)
			n = size - i;
		assert_int_equal(fwrite(want + i, 1, n, f), n);
	}
	assert_int_equal(fflush(f), 0);
	assert_int_equal(nr_fds(), fds + file);
	rewind(f);
	assert_int_equal(fread(got, 1, size, f), size);
	assert_int_equal(fgetc(f), EOF);
	assert_memory_equal(got, want, size);
	/* From the middle too. */
	assert_int_equal(fseek(f, (long)(size / 3), SEEK_SET), 0);
	n = size - size / 3;
	assert_int_equal(fread(got, 1, n, f), n);
	assert_memory_equal(got, want + size / 3, n);
	assert_int_equal(fclose(f), 0);
	assert_int_equal(nr_fds(), fds);
	free(want);
	free(got);
}

static void test_scratch(void **state)
{
	struct evprof_profile_opts so = {.sz = sizeof(so), .spill_dir = tmpdir};
	struct evprof_profile_opts mo = {.sz = sizeof(mo)};
	struct evprof_profile *spilled = evprof_profile__new(&so);
	struct evprof_profile *mem = evprof_profile__new(&mo);

	(void)state;
	assert_true(spilled && mem);
	rng_state = 5;
	check_scratch(spilled, 1, false);
	check_scratch(spilled, 1500000, false);
	check_scratch(spilled, 5000000, true);
	check_scratch(mem, 300000, false);
	check_scratch(mem, 4500000, true);
	evprof_profile__free(spilled);
	evprof_profile__free(mem);
}

/* A scratch stream that cannot move to a file fails the write, cleanly. */
static void test_scratch_no_file(void **state)
{
	struct evprof_profile_opts o = {.sz = sizeof(o)};
	static char nodir[] = "/nonexistent-evprof-dir";
	const size_t mem = 1 << 16, big = 1 << 20;
	struct evprof_profile *p;
	char *buf = malloc(big);
	size_t n;
	FILE *f;

	(void)state;
	p = evprof_profile__new(&o);
	assert_true(p && buf);
	/* The spill file's directory gone: where the move would go. */
	p->spill_dir = nodir;
	f = evprof__timeline_scratch(p, mem);
	p->spill_dir = NULL;
	assert_non_null(f);
	memset(buf, 'x', big);
	/* One write past the memory: refused, counted short, no overrun. */
	n = fwrite(buf, 1, big, f);
	assert_true(n < big / 2);
	assert_true(ferror(f));
	/* Then ones that fit: taken and read back. */
	clearerr(f);
	rewind(f);
	assert_int_equal(fwrite(buf, 1, mem, f), mem);
	assert_int_equal(fflush(f), 0);
	rewind(f);
	memset(buf, 0, mem);
	assert_int_equal(fread(buf, 1, mem, f), mem);
	assert_int_equal(buf[mem - 1], 'x');
	fclose(f);
	free(buf);
	evprof_profile__free(p);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[128];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
	return system(cmd);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_store_sums),
	    cmocka_unit_test(test_store_pprof_round_trip),
	    cmocka_unit_test(test_timeline_order),
	    cmocka_unit_test(test_spill_identical),
	    cmocka_unit_test(test_no_timeline_firefox),
	    cmocka_unit_test(test_no_timeline_memory),
	    cmocka_unit_test(test_scratch),
	    cmocka_unit_test(test_scratch_no_file),
	};

	return run_cases(argc, argv, tests, setup, teardown);
}
