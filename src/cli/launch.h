/* SPDX-License-Identifier: MIT */
/*
 * Launching the profiled command: the child is forked and waits on a pipe
 * until the events are open, then execs. A failed exec is reported back
 * through a second, CLOEXEC pipe, so the parent can tell "could not run"
 * from "ran and failed". Attached processes (-p) are parsed and waited on
 * here too.
 */
#ifndef EVPROF_CLI_LAUNCH_H
#define EVPROF_CLI_LAUNCH_H

#include <sys/types.h>

struct launch {
	pid_t pid;
	int go_fd;  /* write end: one byte releases the child */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
};

/* Forks a child that will exec argv once released. Returns 0 or -errno. */
int launch_prepare(struct launch *l, char *const argv[]);

/*
 * Releases the child and waits until it has exec'd. Returns 0, or -errno
 * of the failed exec (the child has then exited with status 127).
 */
int launch_go(struct launch *l);

/* Kills and reaps a child that was never released. */
void launch_abort(struct launch *l);

/* Shell-style exit status of a wait status: code, or 128 + signal. */
int launch_exit_code(int status);

/*
 * -p PID[,PID...] of record and stat: *pids receives a malloc'ed array
 * (the caller frees it) of processes that exist. Returns their number, or
 * -1 after a message (*pids NULL).
 */
int launch_parse_pids(const char *list, pid_t **pids);

/* A pidfd (CLOEXEC) that polls readable once pid exits; -1 if it is gone. */
int launch_pidfd(pid_t pid);

#endif /* EVPROF_CLI_LAUNCH_H */
