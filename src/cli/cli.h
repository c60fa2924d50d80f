/* SPDX-License-Identifier: MIT */
/* The evprof command line: one entry point per subcommand. */
#ifndef EVPROF_CLI_H
#define EVPROF_CLI_H

#include <stdbool.h>

int cmd_stat(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);

/*
 * True for perf_event_open errnos that mean "this machine has no such event
 * or cannot combine it", as opposed to "not allowed" or "out of resources".
 */
bool cli_unsupported(int err);

/* Prints "evprof: <message>\n" to stderr. */
__attribute__((format(printf, 1, 2))) void cli_err(const char *fmt, ...);

#endif /* EVPROF_CLI_H */
