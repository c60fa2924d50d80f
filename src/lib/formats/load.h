/* SPDX-License-Identifier: MIT */
/*
 * Profile readers behind evprof_profile__load(), one per format: producers
 * of the profile model. load.c calls them; they call only load_common.h
 * and the producer API.
 */
#ifndef EVPROF_LIB_LOAD_H
#define EVPROF_LIB_LOAD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/profile.h>

#include "base/base.h"

/*
 * Read len bytes (uncompressed) of a pprof profile / a Firefox Profiler
 * processed profile as evprof writes it into a new profile, *out on
 * success (freed by the caller). A pprof profile has no per-sample times:
 * it fills the store only (no timeline). Return 0,
 * -EVPROF_ERR_MALFORMED, -E2BIG or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__load_pprof(const uint8_t *buf, size_t len,
				     struct evprof_profile **out);
EVPROF_HIDDEN int evprof__load_firefox(const char *buf, size_t len,
				       struct evprof_profile **out);
/*
 * Folded stacks (load_folded.c): whether buf's first line looks like one
 * ("names N"), and the reader, with the same returns as the others.
 */
EVPROF_HIDDEN bool evprof__looks_folded(const uint8_t *buf, size_t len);
EVPROF_HIDDEN int evprof__load_folded(const char *buf, size_t len,
				      struct evprof_profile **out);

#endif /* EVPROF_LIB_LOAD_H */
