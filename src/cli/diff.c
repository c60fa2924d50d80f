// SPDX-License-Identifier: MIT
/*
 * evprof diff: two profiles compared per function (the library's
 * evprof_profile_diff), printed as tables sorted by the largest change, or
 * written as a pprof profile that pprof shows as NEW - BASE.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/diff.h>
#include <evprof/evprof.h>

#include "cli.h"

const char cli_diff_usage[] =
    "usage: evprof diff [--normalize] [--weight EVENT] [--limit N] BASE NEW\n"
    "       evprof diff -o OUT.pb.gz|OUT.html [--normalize] [--weight EVENT]\n"
    "                   BASE NEW\n"
    "\n"
    "  BASE, NEW           profiles evprof wrote, in any format evprof\n"
    "                      report reads (.json.gz, .pb.gz)\n"
    "  -w, --weight EVENT  sort by samples, cpu or a counter in both\n"
    "                      (default: cpu time)\n"
    "  -N, --normalize     scale BASE to NEW's totals: compare shares\n"
    "                      when the recordings differ in length\n"
    "  -n, --limit N       functions per table (default 20; 0: all)\n"
    "  -o, --output OUT    write pprof instead (.pb.gz): NEW's samples\n"
    "                      and BASE's negated, labelled pprof::base, as\n"
    "                      go tool pprof -diff_base shows them; or the\n"
    "                      page of evprof view (.html), NEW's flame graph\n"
    "                      coloured red where it grew, blue where it shrank\n"
    "                      (its own switch compares shares or values;\n"
    "                      --normalize and --limit are for the table)\n";

/* Which of a function's values a table sorts and prints. */
struct table {
	const struct evprof_profile_diff *d;
	size_t nc;
	int sort;      /* column */
	bool by_total; /* total values, else self */
};

/* The values of function f a table shows: base [0] and new [1]. */
static void values(const struct table *t,
		   const struct evprof_profile_diff_function *f,
		   const double *v[2])
{
	v[0] = t->by_total ? f->base_total : f->base_self;
	v[1] = t->by_total ? f->new_total : f->new_self;
}

static double diff_of(const struct table *t, size_t i)
{
	struct evprof_profile_diff_function f;
	const double *v[2];

	evprof_profile_diff__function(t->d, i, &f);
	values(t, &f, v);
	return v[1][t->sort] - v[0][t->sort];
}

/* Largest change first, then by name (the library's order). */
static int cmp_rows(const void *a, const void *b, void *ctx)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	double dx = fabs(diff_of(ctx, x)), dy = fabs(diff_of(ctx, y));

	if (dx != dy)
		return dx > dy ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Share of v in total, in percent (0 of nothing). */
static double pct(double v, double total)
{
	return total > 0 ? 100.0 * v / total : 0.0;
}

/* A column's name in the table; returns the width of its fields. */
static int label(const struct evprof_profile_diff_column *c, char *buf,
		 size_t len)
{
	int n = snprintf(buf, len, c->ns ? "%s-ms" : "%s", c->name);

	return n + 5 > 14 ? n + 5 : 14; /* room for "<name>:base" */
}

static void print_value(const struct evprof_profile_diff_column *c, int w,
			double v, bool sign)
{
	if (c->ns)
		printf(sign ? " %+*.3f" : " %*.3f", w, v / 1e6);
	else
		printf(sign ? " %+*.0f" : " %*.0f", w, v);
}

/*
 * One table: per column shown (the sort column first) base, new, diff and
 * the change of the function's share in points.
 */
static void print_table(const struct table *t, size_t *rows, size_t limit)
{
	struct evprof_profile_diff_column c;
	size_t n = 0, nf = evprof_profile_diff__nr_functions(t->d), i, k;
	char name[96], head[128];

	for (i = 0; i < nf; i++) {
		struct evprof_profile_diff_function f;
		const double *v[2];
		bool any = false;

		evprof_profile_diff__function(t->d, i, &f);
		values(t, &f, v);
		for (k = 0; k < t->nc; k++)
			any |= v[0][k] != 0 || v[1][k] != 0;
		if (any)
			rows[n++] = i;
	}
	qsort_r(rows, n, sizeof(*rows), cmp_rows, (void *)t);
	if (limit && n > limit)
		n = limit;
	evprof_profile_diff__column(t->d, (size_t)t->sort, &c);
	label(&c, name, sizeof(name));
	printf("\nby %s %s, largest change first:\n",
	       t->by_total ? "total" : "self", name);
	for (k = 0; k < t->nc; k++) {
		size_t col = k ? k - (k <= (size_t)t->sort) : (size_t)t->sort;
		static const char *const parts[] = {"base", "new", "diff",
						    "pp"};

		int w;

		evprof_profile_diff__column(t->d, col, &c);
		w = label(&c, name, sizeof(name));
		for (size_t p = 0; p < 4; p++) {
			snprintf(head, sizeof(head), "%s:%s", name, parts[p]);
			printf(" %*s", w, head);
		}
	}
	printf("  function [lib]\n");
	for (i = 0; i < n; i++) {
		struct evprof_profile_diff_function f;
		const double *v[2];

		evprof_profile_diff__function(t->d, rows[i], &f);
		values(t, &f, v);
		for (k = 0; k < t->nc; k++) {
			size_t col =
			    k ? k - (k <= (size_t)t->sort) : (size_t)t->sort;
			int w;

			evprof_profile_diff__column(t->d, col, &c);
			w = label(&c, name, sizeof(name));
			print_value(&c, w, v[0][col], false);
			print_value(&c, w, v[1][col], false);
			print_value(&c, w, v[1][col] - v[0][col], true);
			printf(" %+*.2f", w,
			       pct(v[1][col], c.new_total) -
				   pct(v[0][col], c.base_total));
		}
		printf(*f.lib == '[' ? "  %s %s\n" : "  %s [%s]\n", f.name,
		       f.lib);
	}
}

/* Whether p registers name as a counter or a weight type. */
static bool has_name(const struct evprof_profile *p, const char *name)
{
	const char *s;
	int i;

	for (i = 0; (s = evprof_profile__counter_name(p, i)); i++)
		if (!strcmp(s, name))
			return true;
	for (i = 0; (s = evprof_profile__weight_name(p, i)); i++)
		if (!strcmp(s, name))
			return true;
	return false;
}

/*
 * Says on stderr which counters and weight types of one profile the other
 * lacks: they are not compared.
 */
static void say_uncompared(const struct evprof_profile_diff *d,
			   const struct evprof_profile *p[2],
			   const char *path[2])
{
	const char *s;
	int side, i, pass;

	for (side = 0; side < 2; side++)
		for (pass = 0; pass < 2; pass++)
			for (i = 0;
			     (s = pass ? evprof_profile__weight_name(p[side], i)
				       : evprof_profile__counter_name(p[side],
								      i));
			     i++)
				if (evprof_profile_diff__find_column(d, s) < 0)
					cli_err("'%s' is only in %s: not "
						"compared",
						s, path[side]);
}

/* The column --weight names, or -1 after a message. */
static int sort_column(const struct evprof_profile_diff *d,
		       const struct evprof_profile *p[2], const char *path[2],
		       const char *weight)
{
	size_t len = weight ? strlen(weight) : 0;
	char name[128];
	int c;

	if (!weight)
		c = evprof_profile_diff__find_column(d, "cpu");
	else if ((c = evprof_profile_diff__find_column(d, weight)) < 0 &&
		 len > 3 && !strcmp(weight + len - 3, "-ms")) {
		/* The table's own names: cpu-ms, off-cpu-ms. */
		snprintf(name, sizeof(name), "%.*s", (int)(len - 3), weight);
		c = evprof_profile_diff__find_column(d, name);
	}
	if (!weight && c < 0)
		return 0; /* samples */
	if (c >= 0)
		return c;
	if (has_name(p[0], weight) != has_name(p[1], weight))
		cli_err("'%s' is only in %s: it cannot be compared", weight,
			path[has_name(p[1], weight)]);
	else if (!strcmp(weight, "cpu") || !strcmp(weight, "cpu-ms"))
		cli_err("%s has no CPU time: cpu cannot be compared", path[0]);
	else
		cli_err("no counter named '%s' in %s or %s", weight, path[0],
			path[1]);
	return -1;
}

static void print_head(const struct evprof_profile_diff *d, const char *path[2],
		       const char *sort, bool normalize)
{
	struct evprof_profile_diff_column c;
	char name[96];

	printf("# evprof diff: base %s, new %s, sorted by %s%s\n", path[0],
	       path[1], sort, normalize ? ", base normalized to new" : "");
	printf("total:");
	for (size_t k = 0; k < evprof_profile_diff__nr_columns(d); k++) {
		evprof_profile_diff__column(d, k, &c);
		label(&c, name, sizeof(name));
		printf(c.ns ? " %s=%.3f->%.3f" : " %s=%.0f->%.0f", name,
		       c.ns ? c.base_total / 1e6 : c.base_total,
		       c.ns ? c.new_total / 1e6 : c.new_total);
	}
	putchar('\n');
}

static int run(const struct evprof_profile *p[2], const char *path[2],
	       bool normalize, const char *weight, size_t limit,
	       const char *out)
{
	struct evprof_profile_diff_opts o = {.sz = sizeof(o),
					     .normalize = normalize};
	struct evprof_profile_diff *d =
	    evprof_profile_diff__new(p[0], p[1], &o);
	struct evprof_profile_diff_column c;
	struct table t;
	size_t *rows = NULL;
	char name[96];
	int err = 0;

	if (!d) {
		cli_err("cannot compare: %s", evprof_strerror(errno));
		return 1;
	}
	t = (struct table){d, evprof_profile_diff__nr_columns(d),
			   sort_column(d, p, path, weight), false};
	evprof_profile_diff__column(d, 0, &c); /* samples */
	if (t.sort < 0) {
		err = 1;
	} else if (!c.base_total || !c.new_total) {
		cli_err("%s has no samples: nothing to compare",
			path[c.base_total ? 1 : 0]);
		err = 1;
	} else if (out && out_format_of(out) == OUT_PAGE) {
		struct evprof_page_opts po = {.sz = sizeof(po), .base = p[0]};
		char title[PATH_MAX];

		say_uncompared(d, p, path);
		evprof_profile_diff__column(d, (size_t)t.sort, &c);
		po.weight = c.name;
		po.title =
		    out_page_title(title, sizeof(title), path[0], path[1]);
		err = evprof_profile__write_page(p[1], out, &po);
		if (err)
			cli_err("cannot write %s: %s", out,
				evprof_strerror(err));
	} else if (out) {
		struct evprof_pprof_opts po = {.sz = sizeof(po)};

		say_uncompared(d, p, path);
		evprof_profile_diff__column(d, (size_t)t.sort, &c);
		po.default_type = c.name;
		err = evprof_profile_diff__write_pprof(d, out, &po);
		if (err)
			cli_err("cannot write %s: %s", out,
				evprof_strerror(err));
	} else {
		say_uncompared(d, p, path);
		rows = malloc((evprof_profile_diff__nr_functions(d) + 1) *
			      sizeof(*rows));
		if (!rows) {
			cli_err("out of memory");
			err = 1;
		} else {
			evprof_profile_diff__column(d, (size_t)t.sort, &c);
			label(&c, name, sizeof(name));
			print_head(d, path, name, normalize);
			print_table(&t, rows, limit);
			t.by_total = true;
			print_table(&t, rows, limit);
			if (fflush(stdout) || ferror(stdout)) {
				cli_err("cannot write the table");
				err = 1;
			}
		}
	}
	free(rows);
	evprof_profile_diff__free(d);
	return err ? 1 : 0;
}

/* Every option of diff; defaults in cmd_diff. */
struct diff_options {
	const char *weight, *out;
	bool normalize;
	size_t limit;
};

static int opt_limit(void *p, const char *arg)
{
	struct diff_options *o = p;
	char *end;
	long n = strtol(arg, &end, 10);

	if (!*arg || *end || n < 0) {
		cli_err("--limit takes a count");
		return -1;
	}
	o->limit = (size_t)n;
	return 0;
}

#define O struct diff_options
static const struct cli_opts diff_cli = {
    .usage = cli_diff_usage,
    .opt = {
	CLI_OPT_FLAG("normalize", 'N', O, normalize),
	CLI_OPT_STR("weight", 'w', O, weight),
	CLI_OPT_FN("limit", 'n', true, opt_limit),
	CLI_OPT_STR("output", 'o', O, out),
    }};
#undef O

int cmd_diff(int argc, char **argv)
{
	struct diff_options o = {.limit = 20};
	const char *path[2];
	struct evprof_profile *p[2] = {NULL, NULL};
	int first, s, ret;

	ret = cli_parse_opts(&diff_cli, argc, argv, &o, &first);
	if (ret != CLI_GO_ON)
		return ret;
	if (first != argc - 2) {
		cli_err("diff needs two profile files, BASE and NEW");
		fputs(cli_diff_usage, stderr);
		return 2;
	}
	if (o.out && out_format_of(o.out) != OUT_PPROF &&
	    out_format_of(o.out) != OUT_PAGE) {
		cli_err(
		    "diff writes pprof (.pb.gz) or the page (.html), not %s",
		    o.out);
		return 2;
	}
	if (o.out && out_format_of(o.out) == OUT_PAGE &&
	    !evprof_page__available()) {
		cli_err("%s", cli_page_missing);
		return 1;
	}
	ret = 1;
	for (s = 0; s < 2; s++) {
		path[s] = argv[first + s];
		p[s] = evprof_profile__load(path[s]);
		if (!p[s]) {
			cli_err("cannot read %s: %s", path[s],
				evprof_strerror(errno));
			goto out;
		}
	}
	ret = run((const struct evprof_profile *[2]){p[0], p[1]}, path,
		  o.normalize, o.weight, o.limit, o.out);
out:
	evprof_profile__free(p[0]);
	evprof_profile__free(p[1]);
	return ret;
}
