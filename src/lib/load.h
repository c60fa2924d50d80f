/* SPDX-License-Identifier: MIT */
/* Profile readers behind evprof_profile__load(), one per format. */
#ifndef EVPROF_LIB_LOAD_H
#define EVPROF_LIB_LOAD_H

#include <stddef.h>
#include <stdint.h>

#include <evprof/profile.h>

#include "util.h"

/*
 * Fill the empty profile p from len bytes (uncompressed) of a pprof
 * profile / a Firefox Profiler processed profile as evprof writes it.
 * Return 0, -EVPROF_ERR_MALFORMED, -E2BIG or -ENOMEM; p may hold part of
 * the input on error.
 */
EVPROF_HIDDEN int evprof__load_pprof(struct evprof_profile *p,
				     const uint8_t *buf, size_t len);
EVPROF_HIDDEN int evprof__load_firefox(struct evprof_profile *p,
				       const char *buf, size_t len);

/*
 * The index of pid's process in p, added under name when p has none yet.
 * Returns it or -errno.
 */
EVPROF_HIDDEN int evprof__load_process(struct evprof_profile *p, int pid,
				       const char *name);

/*
 * Decodes the hex digits of hex (either case, even count) into out.
 * Returns the byte count, or -1 when hex is not that or needs more than
 * max bytes.
 */
EVPROF_HIDDEN int evprof__unhex(const char *hex, uint8_t *out, size_t max);

#endif /* EVPROF_LIB_LOAD_H */
