/* SPDX-License-Identifier: MIT */
/* The evprof command line: one entry point per subcommand. */
#ifndef EVPROF_CLI_H
#define EVPROF_CLI_H

int cmd_stat(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);

/* Prints "evprof: <message>\n" to stderr. */
__attribute__((format(printf, 1, 2))) void cli_err(const char *fmt, ...);

#endif /* EVPROF_CLI_H */
