/* SPDX-License-Identifier: MIT */
/*
 * What os offers the folders above it, beside the public launch, /proc and
 * cgroup readers (evprof/launch.h, evprof/proc.h, evprof/cgroup.h): a pidfd that polls readable
 * when a process exits (launch.h).
 */
#ifndef EVPROF_LIB_OS_H
#define EVPROF_LIB_OS_H

#include "launch.h"

#endif /* EVPROF_LIB_OS_H */
