// SPDX-License-Identifier: MIT
/*
 * evprof report: top functions per counter from a profile evprof wrote
 * (Firefox Profiler JSON or pprof); or, with -o, the same profile written
 * in another format.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/evprof.h>
#include <evprof/profile.h>

#include "cli.h"

const char cli_report_usage[] =
    "usage: evprof report [--sort EVENT] [--top N] [--per-thread] FILE\n"
    "       evprof report -o OUT [--weight EVENT] FILE\n"
    "\n"
    "  FILE                a profile from evprof: .json.gz, .pb.gz or folded\n"
    "  -s, --sort EVENT    samples, cpu or a counter (default: cpu time)\n"
    "  -n, --top N         functions per table (default 20; 0: all)\n"
    "  -T, --per-thread    one report per thread\n"
    "  -o, --output OUT    convert instead: OUT's name picks the format\n"
    "                      (.folded, .pb.gz, .speedscope.json, .svg,\n"
    "                      .html, else Firefox JSON)\n"
    "      --weight EVENT  with -o: weigh by that counter (folded, svg,\n"
    "                      Firefox) or show it first (pprof)\n";

/* Every option of report; defaults in cmd_report. */
struct report_options {
	struct evprof_report_opts ro;
	const char *out, *weight;
};

static int opt_top(void *p, const char *arg)
{
	struct report_options *o = p;
	char *end;
	long top = strtol(arg, &end, 10);

	if (*end || top < 0) {
		cli_err("--top takes a count");
		return -1;
	}
	o->ro.top = (unsigned)top;
	return 0;
}

#define O struct report_options
static const struct cli_opts report_cli = {
    .usage = cli_report_usage,
    .opt = {
	CLI_OPT_STR("sort", 's', O, ro.sort),
	CLI_OPT_FN("top", 'n', true, opt_top),
	CLI_OPT_FLAG("per-thread", 'T', O, ro.per_thread),
	CLI_OPT_STR("output", 'o', O, out),
	CLI_OPT_STR("weight", 0, O, weight),
    }};
#undef O

int cmd_report(int argc, char **argv)
{
	struct report_options o = {.ro = {.sz = sizeof(o.ro), .top = 20}};
	struct evprof_profile *p;
	int first, err;

	err = cli_parse_opts(&report_cli, argc, argv, &o, &first);
	if (err != CLI_GO_ON)
		return err;
	if (first != argc - 1) {
		cli_err("report needs one profile file");
		fputs(cli_report_usage, stderr);
		return 2;
	}
	if (o.out && out_named(o.out, -1))
		return 2;
	p = evprof_profile__load(argv[first]);
	if (!p) {
		int why = errno;

		cli_err("cannot read %s: %s%s%s", argv[first],
			evprof_strerror(why),
			why == EVPROF_ERR_MALFORMED &&
				(strstr(argv[first], ".speedscope.json") ||
				 strstr(argv[first], ".svg"))
			    ? " (speedscope and SVG files are written for "
			      "their viewers, not read back)"
			    : "",
			why == EVPROF_ERR_MALFORMED
			    ? " (report reads Firefox Profiler JSON, pprof and "
			      "folded stacks, gzip'd or not)"
			    : "");
		return 1;
	}
	/* Without -o, --weight is what the table is sorted by. */
	if (!o.out && o.weight && !o.ro.sort)
		o.ro.sort = o.weight;
	if (o.out ? o.weight && !out_has_column(p, o.weight)
		  : o.ro.sort && !out_has_column(p, o.ro.sort)) {
		out_no_column(p, o.out ? o.weight : o.ro.sort, argv[first]);
		evprof_profile__free(p);
		return 1;
	}
	if (o.out)
		err = out_write(p, o.out, out_format_of(o.out), o.weight);
	else if (!(err = evprof_profile__write_report(p, stdout, &o.ro)))
		cli_symbol_hints(p, o.ro.sort);
	if (err)
		cli_err("cannot write %s: %s", o.out ? o.out : "the report",
			evprof_strerror(err));
	evprof_profile__free(p);
	return err ? 1 : 0;
}
