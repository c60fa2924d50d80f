/* SPDX-License-Identifier: MIT */
/*
 * Helpers the profile readers (load_pprof.c, load_firefox.c) share. Layers:
 * load.c dispatches to the readers (load.h), the readers use these, and
 * none of them calls upward.
 */
#ifndef EVPROF_LIB_LOAD_COMMON_H
#define EVPROF_LIB_LOAD_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include <evprof/profile.h>

#include "base/base.h"

/*
 * The index of pid's process in p, added under name when p has none yet.
 * Returns it or -errno.
 */
EVPROF_HIDDEN int evprof__load_process(struct evprof_profile *p, int pid,
				       const char *name);

#endif /* EVPROF_LIB_LOAD_COMMON_H */
