/* SPDX-License-Identifier: MIT */
/*
 * What session offers the folders above it, beside the public session API:
 * stacks and values summed per (thread, stack) for engines that aggregate
 * in the kernel (aggr.h), and building parts on a thread of their own while
 * an import feeds (behind.h).
 */
#ifndef EVPROF_LIB_SESSION_H
#define EVPROF_LIB_SESSION_H

#include "aggr.h"
#include "behind.h"

#endif /* EVPROF_LIB_SESSION_H */
