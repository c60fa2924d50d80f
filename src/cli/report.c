// SPDX-License-Identifier: MIT
/*
 * evprof report: top functions per counter from a profile evprof wrote
 * (Firefox Profiler JSON or pprof); or, with -o, the same profile written
 * in another format.
 */
#include <errno.h>
#include <getopt.h>
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
    "                      (.folded, .pb.gz, .speedscope.json, .html,\n"
    "                      else Firefox JSON)\n"
    "      --weight EVENT  with -o: weigh by that counter (folded,\n"
    "                      Firefox) or show it first (pprof)\n";

int cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"sort", required_argument, NULL, 's'},
	    {"top", required_argument, NULL, 'n'},
	    {"per-thread", no_argument, NULL, 'T'},
	    {"output", required_argument, NULL, 'o'},
	    {"weight", required_argument, NULL, 'w'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct evprof_report_opts ro = {.sz = sizeof(ro), .top = 20};
	const char *out = NULL, *weight = NULL;
	struct evprof_profile *p;
	char *end;
	long top;
	int c, err;

	while ((c = getopt_long(argc, argv, "s:n:To:h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			ro.sort = optarg;
			break;
		case 'n':
			top = strtol(optarg, &end, 10);
			if (*end || top < 0) {
				cli_err("--top takes a count");
				return 2;
			}
			ro.top = (unsigned)top;
			break;
		case 'T':
			ro.per_thread = true;
			break;
		case 'o':
			out = optarg;
			break;
		case 'w':
			weight = optarg;
			break;
		case 'h':
			fputs(cli_report_usage, stdout);
			return 0;
		default:
			fputs(cli_report_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_err("report needs one profile file");
		fputs(cli_report_usage, stderr);
		return 2;
	}
	p = evprof_profile__load(argv[optind]);
	if (!p) {
		cli_err("cannot read %s: %s", argv[optind],
			evprof_strerror(errno));
		return 1;
	}
	if (out ? weight && !out_has_column(p, weight)
		: ro.sort && !out_has_column(p, ro.sort)) {
		cli_err("no counter named '%s' in %s", out ? weight : ro.sort,
			argv[optind]);
		evprof_profile__free(p);
		return 1;
	}
	if (out)
		err = out_write(p, out, out_format_of(out), weight);
	else
		err = evprof_profile__write_report(p, stdout, &ro);
	if (err)
		cli_err("cannot write %s: %s", out ? out : "the report",
			evprof_strerror(err));
	evprof_profile__free(p);
	return err ? 1 : 0;
}
