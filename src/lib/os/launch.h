/* SPDX-License-Identifier: MIT */
/* Private side of the launch module: what the recorder needs of it. */
#ifndef EVPROF_LIB_LAUNCH_H
#define EVPROF_LIB_LAUNCH_H

#include <sys/types.h>

#include "base/base.h"

/* A CLOEXEC pidfd that polls readable once pid exits, or -errno. */
EVPROF_HIDDEN int evprof__pidfd_open(pid_t pid);

#endif /* EVPROF_LIB_LAUNCH_H */
