// SPDX-License-Identifier: MIT
/*
 * evprof_profile_diff on two hand-built profiles whose per-function sums
 * are worked out here by hand: which columns are compared, self and total
 * per function (recursion counted once, a lib matched by its file name),
 * normalization, and the pprof output read back by evprof's own pprof
 * reader (which sums the base's negated samples into the new ones: the
 * differences).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/diff.h>
#include <evprof/profile.h>

#include "cases.h"

#define MS 1000000ULL

struct side {
	struct evprof_profile *p;
	int app, w;		 /* threads */
	int main_, f, g, hh, gk; /* stacks */
};

static int frame(struct evprof_profile *p, int lib, const char *name,
		 bool kernel)
{
	struct evprof_profile_frame fr = {
	    .lib = lib, .address = 0x1000, .function = name, .kernel = kernel};
	int i = evprof_profile__frame(p, &fr);

	assert_true(i >= 0);
	return i;
}

/* Threads app and w of pid 10, stacks main;f main;g main;h;h main;g;k. */
static void build(struct side *s, const char *lib_path)
{
	struct evprof_profile_opts o = {.sz = sizeof(o), .no_timeline = true};
	int proc, lib, h;

	s->p = evprof_profile__new(&o);
	assert_non_null(s->p);
	proc = evprof_profile__add_process(s->p, 10, "app", 0);
	s->app = evprof_profile__add_thread(s->p, proc, 10, "app", 0);
	s->w = evprof_profile__add_thread(s->p, proc, 11, "w", 0);
	lib = evprof_profile__add_lib(
	    s->p, &(struct evprof_profile_lib){.path = lib_path});
	assert_true(proc >= 0 && s->app >= 0 && s->w >= 0 && lib >= 0);
	s->main_ =
	    evprof_profile__stack(s->p, -1, frame(s->p, lib, "main", false));
	s->f =
	    evprof_profile__stack(s->p, s->main_, frame(s->p, lib, "f", false));
	s->g =
	    evprof_profile__stack(s->p, s->main_, frame(s->p, lib, "g", false));
	h = frame(s->p, lib, "h", false);
	s->hh = evprof_profile__stack(
	    s->p, evprof_profile__stack(s->p, s->main_, h), h);
	s->gk = evprof_profile__stack(s->p, s->g, frame(s->p, -1, "k", true));
	assert_true(s->f >= 0 && s->g >= 0 && s->hh >= 0 && s->gk >= 0);
}

static void add(struct side *s, int thr, int stack, uint64_t samples,
		uint64_t c0, uint64_t c1, uint64_t w0)
{
	uint64_t ctr[2] = {c0, c1}, wt[1] = {w0};
	struct evprof_profile_aggregate a = {
	    .stack = stack,
	    .samples = samples,
	    .cpu_ns = samples * MS,
	    .has_counters = 3,
	    .counters = ctr,
	    .has_weights = 1,
	    .weights = wt,
	};

	assert_int_equal(evprof_profile__add_aggregate(s->p, thr, &a), 0);
}

/*
 * Base: counters page-faults, cs, x; weight off-cpu. New: counters cs,
 * instructions; weights off-cpu, x (a time here: not comparable).
 * Totals: base samples 100, cs 3, off-cpu 5 ms; new 200, 5, 15 ms.
 */
static void build_pair(struct side *b, struct side *n)
{
	build(b, "/a/app");
	assert_int_equal(evprof_profile__add_counter(b->p, "page-faults"), 0);
	assert_int_equal(evprof_profile__add_counter(b->p, "cs"), 1);
	assert_int_equal(evprof_profile__add_counter(b->p, "x"), 2);
	assert_int_equal(evprof_profile__add_weight_type(b->p, "off-cpu"), 0);
	add(b, b->app, b->f, 30, 3, 1, 0);
	add(b, b->app, b->g, 10, 1, 0, 0);
	add(b, b->app, b->hh, 20, 0, 2, 5 * MS);
	add(b, b->w, b->f, 40, 4, 0, 0);

	build(n, "/b/app");
	assert_int_equal(evprof_profile__add_counter(n->p, "cs"), 0);
	assert_int_equal(evprof_profile__add_counter(n->p, "instructions"), 1);
	assert_int_equal(evprof_profile__add_weight_type(n->p, "off-cpu"), 0);
	assert_int_equal(evprof_profile__add_weight_type(n->p, "x"), 1);
	add(n, n->app, n->f, 10, 1, 0, 0);
	add(n, n->app, n->g, 30, 0, 0, 0);
	add(n, n->app, n->gk, 60, 4, 0, 15 * MS);
	add(n, n->w, n->f, 100, 0, 0, 0);
}

/* Column indices of the compared columns, in the diff's order. */
enum { C_SAMPLES, C_CPU, C_CS, C_OFF, NC };

static void expect_function(const struct evprof_profile_diff *d, size_t i,
			    const char *name, const char *lib,
			    const double want[4][NC])
{
	struct evprof_profile_diff_function f;
	const double *got[4];

	assert_int_equal(evprof_profile_diff__function(d, i, &f), 0);
	assert_string_equal(f.name, name);
	assert_string_equal(f.lib, lib);
	got[0] = f.base_self;
	got[1] = f.new_self;
	got[2] = f.base_total;
	got[3] = f.new_total;
	for (int k = 0; k < 4; k++)
		for (int c = 0; c < NC; c++)
			if (got[k][c] < want[k][c] - 1e-6 ||
			    got[k][c] > want[k][c] + 1e-6)
				fail_msg("%s value %d column %d: %f, want %f",
					 name, k, c, got[k][c], want[k][c]);
}

static void test_columns_and_functions(void **state)
{
	struct side b, n;
	struct evprof_profile_diff *d;
	struct evprof_profile_diff_column c;

	(void)state;
	build_pair(&b, &n);
	d = evprof_profile_diff__new(b.p, n.p, NULL);
	assert_non_null(d);
	/* page-faults and instructions are in one profile, x differs in kind */
	assert_int_equal(evprof_profile_diff__nr_columns(d), NC);
	assert_int_equal(evprof_profile_diff__find_column(d, "cs"), C_CS);
	assert_int_equal(evprof_profile_diff__find_column(d, "x"), -ENOENT);
	assert_int_equal(evprof_profile_diff__find_column(d, "page-faults"),
			 -ENOENT);
	assert_int_equal(evprof_profile_diff__column(d, C_OFF, &c), 0);
	assert_string_equal(c.name, "off-cpu");
	assert_true(c.ns);
	assert_true(c.base_total == 5.0 * MS && c.new_total == 15.0 * MS);
	assert_int_equal(evprof_profile_diff__column(d, C_CPU, &c), 0);
	assert_true(c.ns && c.base_total == 100.0 * MS);
	assert_int_equal(evprof_profile_diff__column(d, C_CS, &c), 0);
	assert_true(!c.ns && c.base_total == 3 && c.new_total == 5);
	assert_int_equal(evprof_profile_diff__column(d, NC, &c), -EINVAL);

	/* f g h k main; the two libs' app is one. Rows: base self, new
	 * self, base total, new total; columns samples cpu cs off-cpu. */
	assert_int_equal(evprof_profile_diff__nr_functions(d), 5);
	expect_function(d, 0, "f", "app",
			(const double[4][NC]){{70, 70 * MS, 1, 0},
					      {110, 110 * MS, 1, 0},
					      {70, 70 * MS, 1, 0},
					      {110, 110 * MS, 1, 0}});
	expect_function(d, 1, "g", "app",
			(const double[4][NC]){{10, 10 * MS, 0, 0},
					      {30, 30 * MS, 0, 0},
					      {10, 10 * MS, 0, 0},
					      {90, 90 * MS, 4, 15 * MS}});
	/* h;h is counted once in total. */
	expect_function(d, 2, "h", "app",
			(const double[4][NC]){{20, 20 * MS, 2, 5 * MS},
					      {0, 0, 0, 0},
					      {20, 20 * MS, 2, 5 * MS},
					      {0, 0, 0, 0}});
	expect_function(d, 3, "k", "[kernel]",
			(const double[4][NC]){{0, 0, 0, 0},
					      {60, 60 * MS, 4, 15 * MS},
					      {0, 0, 0, 0},
					      {60, 60 * MS, 4, 15 * MS}});
	expect_function(d, 4, "main", "app",
			(const double[4][NC]){{0, 0, 0, 0},
					      {0, 0, 0, 0},
					      {100, 100 * MS, 3, 5 * MS},
					      {200, 200 * MS, 5, 15 * MS}});
	evprof_profile_diff__free(d);
	evprof_profile__free(b.p);
	evprof_profile__free(n.p);
}

static void test_normalize(void **state)
{
	struct evprof_profile_diff_opts o = {.sz = sizeof(o),
					     .normalize = true};
	struct side b, n;
	struct evprof_profile_diff *d;
	struct evprof_profile_diff_column c;

	(void)state;
	build_pair(&b, &n);
	d = evprof_profile_diff__new(b.p, n.p, &o);
	assert_non_null(d);
	for (size_t i = 0; i < NC; i++) {
		assert_int_equal(evprof_profile_diff__column(d, i, &c), 0);
		assert_true(c.base_total == c.new_total);
	}
	/* Scales: samples and cpu 2, cs 5/3, off-cpu 3. */
	expect_function(d, 2, "h", "app",
			(const double[4][NC]){{40, 40 * MS, 10.0 / 3, 15 * MS},
					      {0, 0, 0, 0},
					      {40, 40 * MS, 10.0 / 3, 15 * MS},
					      {0, 0, 0, 0}});
	evprof_profile_diff__free(d);
	evprof_profile__free(b.p);
	evprof_profile__free(n.p);
	/* A diff of nothing fails cleanly. */
	assert_null(evprof_profile_diff__new(NULL, NULL, NULL));
	assert_int_equal(errno, EINVAL);
}

/* The file's values are checked against pprof's own -diff_base in
 * tests/cli/test_diff.sh; here, that our reader refuses the negated base
 * samples instead of summing them as huge unsigned values. */
static void refused_by_reader(const char *path)
{
	errno = 0;
	assert_null(evprof_profile__load(path));
	assert_int_equal(errno, EVPROF_ERR_NEGATIVE);
}

static void test_pprof(void **state)
{
	char path[] = "/tmp/evprof-diff-XXXXXX";
	struct evprof_profile_diff_opts o = {.sz = sizeof(o),
					     .normalize = true};
	struct evprof_pprof_opts po = {.sz = sizeof(po),
				       .default_type = "page-faults"};
	struct evprof_profile_diff *d;
	struct side b, n;
	int fd;

	(void)state;
	fd = mkstemp(path);
	assert_true(fd >= 0);
	close(fd);
	build_pair(&b, &n);
	d = evprof_profile_diff__new(b.p, n.p, NULL);
	assert_non_null(d);
	/* Only compared columns are sample types. */
	assert_int_equal(evprof_profile_diff__write_pprof(d, path, &po),
			 -ENOENT);
	assert_int_equal(evprof_profile_diff__write_pprof(d, path, NULL), 0);
	refused_by_reader(path);
	evprof_profile_diff__free(d);

	d = evprof_profile_diff__new(b.p, n.p, &o);
	assert_non_null(d);
	assert_int_equal(evprof_profile_diff__write_pprof(d, path, NULL), 0);
	refused_by_reader(path);
	evprof_profile_diff__free(d);
	unlink(path);
	evprof_profile__free(b.p);
	evprof_profile__free(n.p);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_columns_and_functions),
	    cmocka_unit_test(test_normalize),
	    cmocka_unit_test(test_pprof),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
