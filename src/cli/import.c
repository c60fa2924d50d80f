// SPDX-License-Identifier: MIT
/*
 * evprof import: a perf.data file (or pipe-mode data on stdin) into every
 * profile format evprof writes.
 */
#include <errno.h>
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
    "                      (.folded, .pb.gz, .speedscope.json, .svg, .html:\n"
    "                      the page, else Firefox JSON)\n"
    "  -f, --format FMT    firefox, folded, pprof, speedscope or svg, for\n"
    "                      every OUT\n"
    "  -w, --weight EVENT  weigh by that event (folded, Firefox) or show\n"
    "                      it first (pprof); default: samples\n"
    "      --symfs DIR     look for the recorded binaries under DIR first\n"
    "      --no-inline     names from symbol tables only: no inline frames\n"
    "                      or source lines (faster with big debug info)\n";

/* Every option of import; defaults in cmd_import. */
struct import_options {
	struct evprof_perfdata_opts po;
	const char *outs[MAX_OUTPUTS], *weight;
	size_t nr_outs;
	int fmt; /* enum out_format; -1: each output's name */
};

static int opt_output(void *p, const char *arg)
{
	struct import_options *o = p;

	if (o->nr_outs == MAX_OUTPUTS) {
		cli_err("at most %d outputs", MAX_OUTPUTS);
		return -1;
	}
	o->outs[o->nr_outs++] = arg;
	return 0;
}

static int opt_format(void *p, const char *arg)
{
	struct import_options *o = p;

	o->fmt = out_parse_format(arg);
	if (o->fmt < 0) {
		cli_err("unknown format '%s' (firefox, folded, pprof, "
			"speedscope or svg; an OUT named .html gets the page)",
			arg);
		return -1;
	}
	return 0;
}

#define O struct import_options
static const struct cli_opts import_cli = {
    .usage = cli_import_usage,
    .opt = {
	CLI_OPT_FN("output", 'o', true, opt_output),
	CLI_OPT_FN("format", 'f', true, opt_format),
	CLI_OPT_STR("weight", 'w', O, weight),
	CLI_OPT_STR("symfs", 0, O, po.symfs),
	CLI_OPT_FLAG("no-inline", 0, O, po.no_dwarf),
    }};
#undef O

int cmd_import(int argc, char **argv)
{
	struct import_options o = {.po = {.sz = sizeof(o.po)}, .fmt = -1};
	struct evprof_perfdata_stats st = {.sz = sizeof(st)};
	struct evprof_profile *p;
	struct evprof_perfdata *pd;
	const char *in;
	int first, err;
	char saved[4096];

	err = cli_parse_opts(&import_cli, argc, argv, &o, &first);
	if (err != CLI_GO_ON)
		return err;
	if (first != argc - 1) {
		cli_err("import needs one perf.data file (or - for stdin)");
		fputs(cli_import_usage, stderr);
		return 2;
	}
	in = argv[first];
	if (!o.nr_outs)
		o.outs[o.nr_outs++] = "perf.json.gz";
	for (size_t i = 0; i < o.nr_outs; i++)
		if (out_named(o.outs[i], o.fmt))
			return 2;
	o.po.no_timeline = !out_wants_timeline(o.outs, o.nr_outs, o.fmt);
	o.po.spill_dir = cli_spill_dir();
	o.po.debug_cache_dir = cli_debug_cache_dir();
	pd = evprof_perfdata__open(in, &o.po);
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
	err = 0;
	if (o.weight && !out_has_column(p, o.weight)) {
		cli_err("no event named '%s' in %s", o.weight, in);
		err = -ENOENT;
	}
	for (size_t i = 0; i < o.nr_outs && !err; i++) {
		err = out_write_somewhere(p, o.outs[i],
					  o.fmt < 0 ? out_format_of(o.outs[i])
						    : (enum out_format)o.fmt,
					  o.weight, saved, sizeof(saved));
		if (err)
			cli_err("cannot write %s: %s", o.outs[i],
				evprof_strerror(err));
	}
	if (!err)
		fprintf(stderr,
			"evprof: imported %llu samples of %u event%s%s%s -> "
			"%s%s\n",
			(unsigned long long)st.samples, st.nr_attrs,
			st.nr_attrs == 1 ? "" : "s",
			st.pipe ? " (pipe mode)" : "",
			st.truncated ? " (truncated file)" : "", o.outs[0],
			o.nr_outs > 1 ? ", ..." : "");
	evprof_profile__free(p);
	evprof_perfdata__free(pd);
	return err ? 1 : 0;
}
