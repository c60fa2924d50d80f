// SPDX-License-Identifier: MIT
/* evprof: subcommand dispatch and the library's message sink. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/evprof.h>

#include "cli.h"

static const struct cmd {
	const char *name;
	int (*fn)(int, char **);
	const char *summary;
	const char *usage;
} cmds[] = {
    {"record", cmd_record, "sample a command; samples carry counter deltas",
     cli_record_usage},
    {"report", cmd_report, "top functions per counter from a recorded profile",
     cli_report_usage},
    {"diff", cmd_diff, "compare two profiles per function and counter",
     cli_diff_usage},
    {"import", cmd_import, "a perf.data file into every evprof output",
     cli_import_usage},
    {"view", cmd_view, "a recorded profile in the browser, counter-aware",
     cli_view_usage},
    {"stat", cmd_stat, "count events while a command runs (like perf stat)",
     cli_stat_usage},
    {"info", cmd_info, "what this kernel and machine allow, and advice",
     cli_info_usage},
};

static void usage(FILE *f)
{
	fputs("usage: evprof <command> [options]\n"
	      "       evprof help [COMMAND] | --version\n"
	      "\n"
	      "commands:\n",
	      f);
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		fprintf(f, "  %-7s %s\n", cmds[i].name, cmds[i].summary);
	fputs(
	    "\n'evprof help COMMAND' (or 'evprof COMMAND --help') describes a "
	    "command's options.\n",
	    f);
}

static const struct cmd *find_cmd(const char *name)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(name, cmds[i].name))
			return &cmds[i];
	return NULL;
}

static int version(void)
{
	const struct evprof_build_info *b = evprof_version();

	printf("evprof %s (%s)\n", b->version, b->revision);
	printf("built with: elfutils %s, zlib %s, json-c %s, libpfm4 %s, "
	       "libiberty\n",
	       b->elfutils, b->zlib, b->json_c, b->libpfm ? b->libpfm : "no");
	cli_print_features();
	return 0;
}

/* Prints text with roff's special characters escaped. */
static void roff_text(const char *s)
{
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else if ((*s == '.' || *s == '\'') && (s[-1] == '\n'))
			printf("\\&%c", *s);
		else
			putchar(*s);
	}
}

/*
 * The man page of evprof or of one command, made from the same text as
 * --help (cmake runs this at build time), so the two never disagree.
 */
static int man(const char *name)
{
	const struct cmd *c = name ? find_cmd(name) : NULL;
	const char *opts;

	if (name && !c) {
		cli_err("no command '%s'", name);
		return 2;
	}
	printf(".TH EVPROF%s%s 1 \"\" \"evprof %s\" \"evprof manual\"\n",
	       c ? "\\-" : "", c ? c->name : "", evprof_version()->version);
	if (!c) {
		printf(".SH NAME\nevprof \\- a profiler whose samples carry "
		       "hardware and software counter deltas\n"
		       ".SH SYNOPSIS\n.B evprof\n\\fICOMMAND\\fR [options]\n"
		       ".SH COMMANDS\n");
		for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
			printf(".TP\n.BR evprof\\-%s (1)\n%s\n", cmds[i].name,
			       cmds[i].summary);
		printf(".SH OPTIONS\n.TP\n.B \\-\\-version\nversion, source "
		       "revision, libraries and kernel features\n"
		       ".SH SEE ALSO\n.BR perf (1)\n");
		return 0;
	}
	printf(".SH NAME\nevprof\\-%s \\- %s\n", c->name, c->summary);
	/* The usage lines, then a blank line, then the options. */
	opts = strstr(c->usage, "\n\n");
	printf(".SH SYNOPSIS\n.nf\n");
	fwrite(c->usage, 1,
	       opts ? (size_t)(opts - c->usage) + 1 : strlen(c->usage), stdout);
	printf(".fi\n");
	if (opts) {
		printf(".SH OPTIONS\n.nf\n");
		roff_text(opts + 2);
		printf(".fi\n");
	}
	printf(".SH SEE ALSO\n.BR evprof (1)\n");
	return 0;
}

static int print_lib(enum evprof_print_level level, const char *fmt, va_list ap)
{
	if (level == EVPROF_DEBUG && !getenv("EVPROF_DEBUG"))
		return 0;
	fputs("evprof: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	const struct cmd *c;

	evprof_set_print(print_lib);
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	if (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(stdout);
		return 0;
	}
	if (!strcmp(argv[1], "--version") || !strcmp(argv[1], "version"))
		return version();
	if (!strcmp(argv[1], "man")) /* for the build: man pages */
		return man(argc > 2 ? argv[2] : NULL);
	if (!strcmp(argv[1], "help")) {
		if (argc < 3) {
			usage(stdout);
			return 0;
		}
		c = find_cmd(argv[2]);
		if (!c) {
			cli_err("no command '%s'", argv[2]);
			return 2;
		}
		fputs(c->usage, stdout);
		return 0;
	}
	c = find_cmd(argv[1]);
	if (c)
		return c->fn(argc - 1, argv + 1);
	cli_err("unknown command '%s'", argv[1]);
	usage(stderr);
	return 2;
}
