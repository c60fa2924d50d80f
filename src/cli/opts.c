// SPDX-License-Identifier: MIT
/* A command's options parsed from its table (cli.h: struct cli_opts). */
#include <getopt.h>
#include <stdio.h>
#include <string.h>

#include <evprof/common.h>

#include "cli.h"

/* One past a table's last entry: a full table has no empty one. */
#define END(c) ((c)->opt + CLI_OPTS_MAX)

/* The entry getopt_long() answered c for: a short name, or 256 + index. */
static const struct cli_opt *find(const struct cli_opts *c, int ch)
{
	if (ch >= 256)
		return &c->opt[ch - 256];
	for (const struct cli_opt *e = c->opt; e < END(c) && e->name; e++)
		if (e->short_name == ch)
			return e;
	return NULL;
}

/*
 * What getopt_long() refused (arg: the word it was in, ch: its optopt), in
 * one line with the nearest option and where the list is: 2.
 */
static int refused(const struct cli_opts *c, const char *cmd, const char *arg,
		   int ch)
{
	const char *names[CLI_OPTS_MAX + 1], *closest = NULL;
	const struct cli_opt *e = ch ? find(c, ch) : NULL;
	char typed[64];
	size_t n = 0;

	if (e) { /* a known option without its value */
		fprintf(stderr,
			"evprof %s: --%s needs a value; 'evprof %s "
			"--help' lists the options\n",
			cmd, e->name, cmd);
		return 2;
	}
	if (ch) { /* -x: the letter alone, whatever came with it */
		snprintf(typed, sizeof(typed), "-%c", ch);
	} else { /* --name or --name=value */
		size_t len = strcspn(arg, "=") - 2, fits = 0;

		snprintf(typed, sizeof(typed), "%.*s", (int)len + 2, arg);
		for (e = c->opt; e < END(c) && e->name; e++)
			names[n++] = e->name;
		names[n++] = "help";
		/* An abbreviation of several: each, in the table's order. */
		for (size_t i = 0; i < n; i++)
			fits += !strncmp(names[i], arg + 2, len);
		if (fits > 1) {
			fprintf(stderr, "evprof %s: '%s' could be", cmd, typed);
			for (size_t i = 0; i < n; i++)
				if (!strncmp(names[i], arg + 2, len))
					fprintf(stderr, " --%s", names[i]);
			fputc('\n', stderr);
			return 2;
		}
		closest = evprof_closest_name(typed + 2, names, n);
	}
	fprintf(stderr,
		"evprof %s: unknown option '%s'%s%s%s; 'evprof %s "
		"--help' lists the options\n",
		cmd, typed, closest ? " (did you mean '--" : "",
		closest ? closest : "", closest ? "'?)" : "", cmd);
	return 2;
}

int cli_parse_opts(const struct cli_opts *c, int argc, char **argv, void *o,
		   int *first)
{
	struct option lo[CLI_OPTS_MAX + 2];
	char shorts[2 * CLI_OPTS_MAX + 3];
	const struct cli_opt *e;
	size_t n = 0, ns = 0;
	int ch;

	/* With in_order, the first operand ends the options ("+"). */
	if (c->in_order)
		shorts[ns++] = '+';
	for (e = c->opt; e < END(c) && e->name; e++, n++) {
		lo[n] = (struct option){
		    e->name, e->arg ? required_argument : no_argument, NULL,
		    256 + (int)n};
		if (!e->short_name)
			continue;
		shorts[ns++] = e->short_name;
		if (e->arg)
			shorts[ns++] = ':';
	}
	lo[n++] = (struct option){"help", no_argument, NULL, 'h'};
	lo[n] = (struct option){NULL, 0, NULL, 0};
	shorts[ns++] = 'h';
	shorts[ns] = '\0';
	opterr = 0; /* refused() says it */
	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (ch == 'h') {
			fputs(c->usage, stdout);
			return 0;
		}
		e = ch == '?' ? NULL : find(c, ch);
		if (!e)
			return refused(c, argv[0], argv[optind - 1], optopt);
		if (e->parse) {
			if (e->parse(o, e->arg ? optarg : NULL) < 0)
				return 2;
		} else if (e->arg) {
			*(const char **)((char *)o + e->off) = optarg;
		} else {
			*(bool *)((char *)o + e->off) = true;
		}
	}
	*first = optind;
	return CLI_GO_ON;
}
