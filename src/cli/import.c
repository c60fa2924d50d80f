// SPDX-License-Identifier: MIT
/*
 * evprof import: a perf.data file (or pipe-mode data on stdin) into every
 * profile format evprof writes.
 */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/evprof.h>

#include "cli.h"

#define MAX_OUTPUTS 8

const char cli_import_usage[] =
    "usage: evprof import [-o OUT]... [--format FMT] [--weight EVENT]\n"
    "                     [--symfs DIR] [--no-inline] FILE|-\n"
    "\n"
    "  FILE                a perf.data file from perf record; - reads\n"
    "                      standard input (perf record -o - | ...)\n"
    "  -o, --output OUT    write the profile to OUT (repeatable; default\n"
    "                      perf.json.gz); its name picks the format\n"
    "                      (.folded, .pb.gz, .speedscope.json, .html: the\n"
    "                      page, else Firefox JSON)\n"
    "  -f, --format FMT    firefox, folded, pprof or speedscope, for\n"
    "                      every OUT\n"
    "  -w, --weight EVENT  weigh by that event (folded, Firefox) or show\n"
    "                      it first (pprof); default: samples\n"
    "      --symfs DIR     look for the recorded binaries under DIR first\n"
    "      --no-inline     names from symbol tables only: no inline frames\n"
    "                      or source lines (faster with big debug info)\n";

int cmd_import(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"weight", required_argument, NULL, 'w'},
	    {"symfs", required_argument, NULL, 'S'},
	    {"no-inline", no_argument, NULL, 'I'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	struct evprof_perfdata_opts po = {.sz = sizeof(po)};
	const char *outs[MAX_OUTPUTS], *weight = NULL, *in;
	struct evprof_perfdata_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p;
	struct evprof_perfdata *pd;
	size_t nr_outs = 0;
	int fmt = -1, c, err = 0;
	char saved[4096];

	while ((c = getopt_long(argc, argv, "o:f:w:h", opts, NULL)) != -1) {
		switch (c) {
		case 'o':
			if (nr_outs == MAX_OUTPUTS) {
				cli_err("at most %d outputs", MAX_OUTPUTS);
				return 2;
			}
			outs[nr_outs++] = optarg;
			break;
		case 'f':
			fmt = out_parse_format(optarg);
			if (fmt < 0) {
				cli_err("unknown format '%s' (firefox, folded, "
					"pprof or speedscope; an OUT named "
					".html gets the page)",
					optarg);
				return 2;
			}
			break;
		case 'w':
			weight = optarg;
			break;
		case 'S':
			po.symfs = optarg;
			break;
		case 'I':
			po.no_dwarf = true;
			break;
		case 'h':
			fputs(cli_import_usage, stdout);
			return 0;
		default:
			fputs(cli_import_usage, stderr);
			return 2;
		}
	}
	if (optind != argc - 1) {
		cli_err("import needs one perf.data file (or - for stdin)");
		fputs(cli_import_usage, stderr);
		return 2;
	}
	in = argv[optind];
	if (!nr_outs)
		outs[nr_outs++] = "perf.json.gz";
	po.no_timeline = !out_wants_timeline(outs, nr_outs, fmt);
	po.spill_dir = cli_spill_dir();
	po.debug_cache_dir = cli_debug_cache_dir();
	pd = evprof_perfdata__open(in, &po);
	if (!pd) {
		cli_err("cannot open %s: %s", in, evprof_strerror(errno));
		return 1;
	}
	p = evprof_perfdata__import(pd);
	if (!p) {
		cli_err("cannot import %s: %s", strcmp(in, "-") ? in : "stdin",
			errno == EVPROF_ERR_BAD_PERFDATA
			    ? evprof_perfdata__error(pd)
			    : evprof_strerror(errno));
		evprof_perfdata__free(pd);
		return 1;
	}
	evprof_perfdata__stats(pd, &st);
	if (weight && !out_has_column(p, weight)) {
		cli_err("no event named '%s' in %s", weight, in);
		err = -ENOENT;
	}
	for (size_t i = 0; i < nr_outs && !err; i++) {
		err = out_write_somewhere(p, outs[i],
					  fmt < 0 ? out_format_of(outs[i])
						  : (enum out_format)fmt,
					  weight, saved, sizeof(saved));
		if (err)
			cli_err("cannot write %s: %s", outs[i],
				evprof_strerror(err));
	}
	if (!err)
		fprintf(stderr,
			"evprof: imported %llu samples of %u event%s%s%s -> "
			"%s%s\n",
			(unsigned long long)st.samples, st.nr_attrs,
			st.nr_attrs == 1 ? "" : "s",
			st.pipe ? " (pipe mode)" : "",
			st.truncated ? " (truncated file)" : "", outs[0],
			nr_outs > 1 ? ", ..." : "");
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	return err ? 1 : 0;
}
