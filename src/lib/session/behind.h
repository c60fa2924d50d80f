/* SPDX-License-Identifier: MIT */
/*
 * Partial builds behind the feeding: evprof_session__build_until() on a
 * thread of its own while records go on being fed, so that an import
 * decodes and builds at once. The build sees the store as it was when it
 * began; records fed meanwhile only append to it, into room made first,
 * and wait for the build when that room runs out.
 */
#ifndef EVPROF_LIB_SESSION_BEHIND_H
#define EVPROF_LIB_SESSION_BEHIND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/session.h>

#include "base/base.h"

/*
 * Unless the build behind is still running (then nothing: a later call
 * builds what came since), settles it and starts one up to until_ns as
 * evprof_session__build_until() would (which it calls instead for
 * sessions whose builds change what feeding uses: cuts, DWARF stacks).
 * Returns 0 or a negative error (of the settled build, or of this one's
 * start). Until settled, only evprof__session_room(),
 * evprof_session__feed() when it says so, and this call may be made.
 */
EVPROF_HIDDEN int evprof__session_build_behind(struct evprof_session *s,
					       struct evprof_profile *p,
					       struct evprof_symbolizer *sym,
					       uint64_t until_ns);
/*
 * Waits for the build behind (if any) and finishes it as
 * evprof_session__build_until() does. Returns 0 or its error.
 */
EVPROF_HIDDEN int evprof__session_settle(struct evprof_session *s);
/*
 * Whether a record of size bytes may be fed while a build is behind (true
 * when none is); otherwise settle first.
 */
EVPROF_HIDDEN bool evprof__session_room(const struct evprof_session *s,
					size_t size);

#endif /* EVPROF_LIB_SESSION_BEHIND_H */
