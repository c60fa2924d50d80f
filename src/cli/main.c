// SPDX-License-Identifier: MIT
/* evprof: subcommand dispatch and the library's message sink. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/evprof.h>

#include "cli.h"

static const char usage[] =
	"usage: evprof <command> [options]\n"
	"\n"
	"commands:\n"
	"  record  sample a command; samples carry counter deltas\n"
	"  report  top functions per counter from a recorded profile\n"
	"  stat    count events while a command runs (like perf stat)\n"
	"  info    what this kernel and machine allow, and advice\n"
	"\n"
	"'evprof <command> --help' describes a command's options.\n";

void cli_err(const char *fmt, ...)
{
	va_list ap;

	fputs("evprof: ", stderr);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

bool cli_unsupported(int err)
{
	return err == ENOENT || err == ENODEV || err == ENXIO ||
	       err == EOPNOTSUPP || err == EINVAL;
}

static int print_lib(enum evprof_print_level level, const char *fmt,
		     va_list ap)
{
	if (level == EVPROF_DEBUG && !getenv("EVPROF_DEBUG"))
		return 0;
	fputs("evprof: ", stderr);
	return vfprintf(stderr, fmt, ap);
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(int, char **);
	} cmds[] = {
		{ "stat", cmd_stat },
		{ "info", cmd_info },
		{ "record", cmd_record },
		{ "report", cmd_report },
	};

	evprof_set_print(print_lib);
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (!strcmp(argv[1], cmds[i].name))
			return cmds[i].fn(argc - 1, argv + 1);
	cli_err("unknown command '%s'", argv[1]);
	fputs(usage, stderr);
	return 2;
}
