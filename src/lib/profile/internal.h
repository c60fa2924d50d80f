/* SPDX-License-Identifier: MIT */
/*
 * Private header of profile.c: what the writers (out_*.c) ask of a profile
 * beyond its layout (profile_model.h), which they read directly.
 */
#ifndef EVPROF_LIB_PROFILE_INTERNAL_H
#define EVPROF_LIB_PROFILE_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model.h"

/* Index of the registered counter name, or -ENOENT. */
EVPROF_HIDDEN int evprof__profile_counter(const struct evprof_profile *p,
					  const char *name);

/*
 * The store column named name: "samples", "cpu", a counter or a weight
 * type. Returns it or -ENOENT.
 */
EVPROF_HIDDEN int evprof__profile_column(const struct evprof_profile *p,
					 const char *name);

/*
 * Who ran a thread, as shown to people (container.c): its cgroup path as
 * "container" and the id's first 12 hex digits (as docker ps shows it),
 * else "pod" and the pod's UID, else "cgroup" and the path (not the
 * root's); then, with a
 * pid namespace of its own (ns_pid > 0), "pid N inside"; "" for neither.
 * Returns buf.
 */
EVPROF_HIDDEN const char *evprof__who_show(const char *path, int ns_pid,
					   char *buf, size_t len);

#endif /* EVPROF_LIB_PROFILE_INTERNAL_H */
