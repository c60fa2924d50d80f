// SPDX-License-Identifier: MIT
/*
 * The page's data (out_page.c) and the folded reader (load_folded.c). A
 * profile is built by hand from the table below; the page's JSON, parsed
 * back with json-c, must hold the table's sums per (thread, function path)
 * and per column, with the frames of one function at several addresses
 * merged into one node. Folded text loads into the sums its lines say.
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

#include <cmocka.h>
#include <json-c/json.h>

#include <evprof/common.h>
#include <evprof/page.h>
#include <evprof/profile.h>

#include "cases.h"

/* A name that would end the page's script element if written raw. */
#define ODD "</script><!--&x"

/* Samples: thread, path of (function, address) root first, values. */
struct smp {
	int thr;
	int depth;
	const char *fn[3];
	uint64_t addr[3];
	uint64_t cpu, ins, pf;
};

static const struct smp table[] = {
    {0, 2, {"main", "work"}, {0x10, 0x100}, 1000, 50, 1},
    {0, 2, {"main", "work"}, {0x10, 0x180}, 2000, 70, 2}, /* same node */
    {0, 3, {"main", "work", ODD}, {0x10, 0x100, 0x200}, 4000, 90, 4},
    {1, 2, {"main", "work"}, {0x10, 0x100}, 8000, 110, 8},
    {1, 1, {"main"}, {0x14}, 16000, 130, 16},
};
#define NR (sizeof(table) / sizeof(table[0]))

static struct evprof_profile *build(void)
{
	struct evprof_profile *p = evprof_profile__new(NULL);
	struct evprof_profile_lib lib = {.path = "/bin/app"};
	int l, proc, thr[2];

	assert_non_null(p);
	assert_int_equal(evprof_profile__add_counter(p, "instructions"), 0);
	assert_int_equal(evprof_profile__add_counter(p, "page-faults"), 1);
	l = evprof_profile__add_lib(p, &lib);
	proc = evprof_profile__add_process(p, 10, "app", 0);
	thr[0] = evprof_profile__add_thread(p, proc, 10, "app", 0);
	thr[1] = evprof_profile__add_thread(p, proc, 11, "worker", 0);
	for (size_t i = 0; i < NR; i++) {
		const struct smp *s = &table[i];
		uint64_t c[2] = {s->ins, s->pf};
		struct evprof_profile_sample sm = {
		    .time_ns = 1000 * (i + 1),
		    .cpu_delta_ns = s->cpu,
		    .has_counters = 3,
		    .counters = c,
		    .stack = -1,
		};

		for (int d = 0; d < s->depth; d++) {
			struct evprof_profile_frame f = {.lib = l,
							 .address = s->addr[d],
							 .function = s->fn[d]};
			int fr = evprof_profile__frame(p, &f);

			assert_true(fr >= 0);
			sm.stack = evprof_profile__stack(p, sm.stack, fr);
			assert_true(sm.stack >= 0);
		}
		assert_int_equal(
		    evprof_profile__add_sample(p, thr[s->thr], &sm), 0);
	}
	return p;
}

/* The page written to memory; its data element parsed. */
static json_object *page_data(const struct evprof_profile *p,
			      const struct evprof_page_opts *o, char **html)
{
	static const char open[] =
	    "<script id=\"evprof-data\" type=\"application/json\">";
	size_t len = 0;
	FILE *f = open_memstream(html, &len);
	char *s, *e;
	json_object *j;

	assert_non_null(f);
	assert_int_equal(evprof_profile__write_page_file(p, f, o), 0);
	assert_int_equal(fclose(f), 0);
	s = strstr(*html, open);
	assert_non_null(s);
	s += strlen(open);
	e = strstr(s, "</script>");
	assert_non_null(e);
	*e = 0;
	j = json_tokener_parse(s);
	*e = '<';
	assert_non_null(j);
	return j;
}

static json_object *get(json_object *o, const char *key)
{
	json_object *v = NULL;

	assert_true(json_object_object_get_ex(o, key, &v));
	return v;
}

static int64_t at(json_object *arr, size_t i)
{
	return json_object_get_int64(json_object_array_get_idx(arr, i));
}

/* The node of path fn[0..depth) in the data, or -1. */
static int node_of(json_object *d, const char *const *fn, int depth)
{
	json_object *names = get(get(d, "funcs"), "name");
	json_object *parent = get(get(d, "nodes"), "parent");
	json_object *func = get(get(d, "nodes"), "func");
	int node = -1;

	for (int k = 0; k < depth; k++) {
		int found = -1;

		for (size_t i = 0; i < json_object_array_length(parent); i++) {
			const char *n = json_object_get_string(
			    json_object_array_get_idx(names, at(func, i)));

			if (at(parent, i) == node && !strcmp(n, fn[k]))
				found = (int)i;
		}
		if (found < 0)
			return -1;
		node = found;
	}
	return node;
}

static int count(const char *s, const char *what)
{
	int n = 0;

	for (; (s = strstr(s, what)); s++)
		n++;
	return n;
}

static void test_page_data(void **state)
{
	struct evprof_profile *p;
	json_object *d, *cols, *threads, *entries;
	char *html = NULL;
	/* column order: samples, cpu, instructions, page-faults */
	static const char *const want_cols[] = {"samples", "cpu",
						"instructions", "page-faults"};

	(void)state;
	if (!evprof_page__available())
		skip_because("the page of evprof view is not built in");
	p = build();
	d = page_data(p, NULL, &html);
	/* The odd name added no element end and no comment to the page. */
	assert_int_equal(count(html, "</script>"), 2);
	assert_int_equal(count(html, "<!--&x"), 0);

	cols = get(d, "columns");
	assert_int_equal(json_object_array_length(cols), 4);
	for (size_t c = 0; c < 4; c++)
		assert_string_equal(
		    json_object_get_string(
			get(json_object_array_get_idx(cols, c), "name")),
		    want_cols[c]);
	assert_string_equal(json_object_get_string(get(
				json_object_array_get_idx(cols, 1), "unit")),
			    "ns");
	/* main, main;work, main;work;ODD: addresses do not make nodes. */
	assert_int_equal(
	    json_object_array_length(get(get(d, "nodes"), "parent")), 3);
	threads = get(d, "threads");
	entries = get(d, "entries");
	assert_int_equal(json_object_array_length(threads), 2);

	/* Every (thread, node, column) sum against the table. */
	for (int t = 0; t < 2; t++) {
		json_object *e = json_object_array_get_idx(entries, (size_t)t);
		json_object *nodes = get(e, "node"), *vals = get(e, "values");
		uint64_t seen_rows = 0;

		for (int depth = 1; depth <= 3; depth++) {
			uint64_t want[4] = {0};
			int node = node_of(d, table[2].fn, depth);
			int row = -1;

			assert_true(node >= 0);
			for (size_t i = 0; i < NR; i++) {
				const struct smp *s = &table[i];

				if (s->thr != t || s->depth != depth)
					continue;
				want[0]++;
				want[1] += s->cpu;
				want[2] += s->ins;
				want[3] += s->pf;
			}
			for (size_t i = 0; i < json_object_array_length(nodes);
			     i++)
				if (at(nodes, i) == node)
					row = (int)i;
			if (!want[0]) {
				assert_int_equal(row, -1);
				continue;
			}
			assert_true(row >= 0);
			seen_rows++;
			for (size_t c = 0; c < 4; c++)
				assert_int_equal(
				    at(json_object_array_get_idx(vals, c),
				       (size_t)row),
				    want[c]);
		}
		assert_int_equal(json_object_array_length(nodes), seen_rows);
	}
	assert_string_equal(json_object_get_string(get(d, "weight")), "cpu");
	assert_false(json_object_object_get_ex(d, "base", NULL));
	json_object_put(d);
	free(html);
	evprof_profile__free(p);
}

static void test_page_base_and_errors(void **state)
{
	struct evprof_profile *p, *base;
	struct evprof_page_opts o = {.sz = sizeof(o), .weight = "page-faults"};
	json_object *d, *b;
	char *html = NULL;
	FILE *f;

	(void)state;
	if (!evprof_page__available())
		skip_because("the page of evprof view is not built in");
	p = build();
	base = build();
	o.base = base;
	o.title = "a <b> & \"c\"";
	d = page_data(p, &o, &html);
	b = get(d, "base");
	assert_int_equal(json_object_array_length(get(b, "threads")), 2);
	assert_string_equal(json_object_get_string(get(d, "weight")),
			    "page-faults");
	assert_non_null(strstr(html, "<title>a &lt;b&gt; &amp; &quot;c&quot;"
				     "</title>"));
	json_object_put(d);
	free(html);

	f = fopen("/dev/null", "w");
	assert_non_null(f);
	o.weight = "nosuch";
	assert_int_equal(evprof_profile__write_page_file(p, f, &o), -ENOENT);
	assert_int_equal(evprof_profile__write_page_file(NULL, f, NULL),
			 -EINVAL);
	assert_int_equal(evprof_profile__write_page(p, NULL, NULL), -EINVAL);
	fclose(f);
	evprof_profile__free(base);
	evprof_profile__free(p);
}

/* Sums of one loaded entry by its path "a;b;c" ('!' marks kernel). */
struct path_sum {
	const struct evprof_profile *p;
	char text[8][256];
	uint64_t sum[8];
	int thread[8];
	int n;
};

static int collect(const struct evprof_profile_entry *e, void *ctx)
{
	struct path_sum *ps = ctx;
	char buf[256] = "";
	const char *names[8];
	bool kernel[8];
	int depth = 0, st = e->stack, fr;

	while (st >= 0) {
		struct evprof_profile_frame f;

		assert_int_equal(
		    evprof_profile__stack_info(ps->p, st, &st, &fr), 0);
		assert_int_equal(evprof_profile__frame_info(ps->p, fr, &f), 0);
		kernel[depth] = f.kernel;
		names[depth++] = f.function;
	}
	while (depth--) {
		strcat(buf, names[depth]);
		strcat(buf, kernel[depth] ? "!" : "");
		strcat(buf, depth ? ";" : "");
	}
	assert_true(ps->n < 8);
	snprintf(ps->text[ps->n], sizeof(ps->text[0]), "%s", buf);
	ps->sum[ps->n] = e->samples;
	ps->thread[ps->n++] = e->thread;
	return 0;
}

static void test_folded(void **state)
{
	static const char text[] = "t0;main;work 5\r\n"
				   "t0;main;work;leaf_[k] 3\n"
				   "\n"
				   "t1;main 2\n"
				   "t0;main;work 4";
	struct evprof_profile_thread_info ti;
	struct path_sum ps = {0};
	struct evprof_profile *p;

	(void)state;
	p = evprof_profile__load_buf(text, strlen(text));
	assert_non_null(p);
	ps.p = p;
	assert_int_equal(evprof_profile__for_each_entry(p, -1, collect, &ps),
			 0);
	assert_int_equal(ps.n, 3);
	assert_string_equal(ps.text[0], "main;work");
	assert_int_equal(ps.sum[0], 9); /* two lines, one stack */
	assert_string_equal(ps.text[1], "main;work;leaf!");
	assert_int_equal(ps.sum[1], 3);
	assert_string_equal(ps.text[2], "main");
	assert_int_equal(ps.sum[2], 2);
	assert_int_equal(evprof_profile__thread_info(p, ps.thread[2], &ti), 0);
	assert_string_equal(ti.name, "t1");
	assert_int_equal(evprof_profile__thread_info(p, ps.thread[0], &ti), 0);
	assert_string_equal(ti.name, "t0");
	evprof_profile__free(p);

	/* Not folded stacks: one error, no profile. */
	static const char *const bad[] = {
	    "t0;main 1\nt0;;x 2\n", "t0;main 1\nt0;main x1\n",
	    "t0;main 1\nno-count\n", "t0;main 99999999999999999999999\n"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		errno = 0;
		assert_null(evprof_profile__load_buf(bad[i], strlen(bad[i])));
		assert_int_equal(errno, EVPROF_ERR_MALFORMED);
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_page_data),
	    cmocka_unit_test(test_page_base_and_errors),
	    cmocka_unit_test(test_folded),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
