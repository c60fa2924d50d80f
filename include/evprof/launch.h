/* SPDX-License-Identifier: MIT */
/*
 * Launching a command to profile: the child is forked and waits on a pipe
 * until the caller has opened its events, then execs. A failed exec comes
 * back through a second, CLOEXEC pipe, so "could not run" is told apart
 * from "ran and failed".
 */
#ifndef EVPROF_LAUNCH_H
#define EVPROF_LAUNCH_H

#include <sys/types.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_launch;

/*
 * Forks a child that execs argv (PATH lookup) once released, so events can
 * be opened on it first. A failed exec is told apart from a command that
 * ran and failed. Returns the launch or NULL with errno set.
 */
EVPROF_API struct evprof_launch *evprof_launch__new(char *const argv[]);

/* The child's pid. */
EVPROF_API pid_t evprof_launch__pid(const struct evprof_launch *l);

/*
 * Releases the child and waits until it has exec'd. Returns 0, or -errno
 * of the failed exec (the child is then reaped, status 127).
 */
EVPROF_API int evprof_launch__go(struct evprof_launch *l);

/*
 * Kills and reaps a child never released; a released child is left alone.
 * Frees l. Accepts NULL.
 */
EVPROF_API void evprof_launch__free(struct evprof_launch *l);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_LAUNCH_H */
