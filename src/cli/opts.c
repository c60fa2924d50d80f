// SPDX-License-Identifier: MIT
/* A command's options parsed from its table (cli.h: struct cli_opts). */
#include <getopt.h>
#include <stdio.h>

#include "cli.h"

/* The entry getopt_long() answered c for: a short name, or 256 + index. */
static const struct cli_opt *find(const struct cli_opts *c, int ch)
{
	if (ch >= 256)
		return &c->opt[ch - 256];
	for (const struct cli_opt *e = c->opt; e->name; e++)
		if (e->short_name == ch)
			return e;
	return NULL;
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
	for (e = c->opt; e->name; e++, n++) {
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
	while ((ch = getopt_long(argc, argv, shorts, lo, NULL)) != -1) {
		if (ch == 'h') {
			fputs(c->usage, stdout);
			return 0;
		}
		e = find(c, ch);
		if (!e) {
			/* getopt_long() said what it refused. */
			fputs(c->usage, stderr);
			return 2;
		}
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
