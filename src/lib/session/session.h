/* SPDX-License-Identifier: MIT */
/*
 * What session offers the folders above it, beside the public session API:
 * stacks and values summed per (thread, stack) for engines that aggregate
 * in the kernel (aggr.h), building parts on a thread of their own while
 * an import feeds (behind.h), and the profile note on how stacks ended.
 */
#ifndef EVPROF_LIB_SESSION_H
#define EVPROF_LIB_SESSION_H

#include "aggr.h"
#include "behind.h"

struct evprof_session_stats;

/*
 * "stacks: N of M (x%) end before their thread's first frame: frame
 * pointers a%, ..." into buf; false (buf untouched) when every stack is
 * whole.
 */
EVPROF_HIDDEN bool
evprof__stack_ends_note(const struct evprof_session_stats *st, char *buf,
			size_t len);

/*
 * Whether something named cgroup id in s (evprof_session__name_cgroup(),
 * a CGROUP record).
 */
EVPROF_HIDDEN bool evprof__session_cgroup_named(const struct evprof_session *s,
						uint64_t id);

#endif /* EVPROF_LIB_SESSION_H */
