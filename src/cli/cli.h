/* SPDX-License-Identifier: MIT */
/* The evprof command line: one entry point per subcommand. */
#ifndef EVPROF_CLI_H
#define EVPROF_CLI_H

#include <stdbool.h>
#include <sys/types.h>

int cmd_stat(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);

/*
 * True for perf_event_open errnos that mean "this machine has no such event
 * or cannot combine it", as opposed to "not allowed" or "out of resources".
 */
bool cli_unsupported(int err);

struct evprof_profile;

/* Output formats of record and report (output.c). */
enum out_format { OUT_FIREFOX, OUT_FOLDED, OUT_PPROF };

/* "firefox", "folded" or "pprof" as a format, or -1. */
int out_parse_format(const char *name);
/* The format a file name asks for (.folded, .pb.gz, .pprof; else firefox). */
enum out_format out_format_of(const char *path);
/* Writes p to path in fmt, weighed by counter weight (NULL: samples). */
int out_write(const struct evprof_profile *p, const char *path,
	      enum out_format fmt, const char *weight);

/*
 * -p PID[,PID...]: *pids receives a malloc'ed array (the caller frees it)
 * of processes that exist. Returns their number, or -1 after a message
 * (*pids NULL).
 */
int cli_parse_pids(const char *list, pid_t **pids);

/* Prints "evprof: <message>\n" to stderr. */
__attribute__((format(printf, 1, 2))) void cli_err(const char *fmt, ...);

#endif /* EVPROF_CLI_H */
