/* SPDX-License-Identifier: MIT */
/* Private header of spec_builtin.c: hardware, software, cache and raw names. */
#ifndef EVPROF_LIB_SPEC_BUILTIN_H
#define EVPROF_LIB_SPEC_BUILTIN_H

#include <stddef.h>
#include <linux/perf_event.h>

#include "base/base.h"

/* No I/O, no message on a miss. */
EVPROF_HIDDEN int evprof__spec_resolve_builtin(struct perf_event_attr *attr,
					       const char *s);
/* Appends the built-in names to buf at *off, for the "known:" message. */
EVPROF_HIDDEN void evprof__spec_builtin_known(char *buf, size_t len,
					      size_t *off);
/*
 * The hardware or software name s[0..len) most likely misspells, or NULL
 * (evprof_closest_name()).
 */
EVPROF_HIDDEN const char *evprof__spec_builtin_closest(const char *s,
						       size_t len);

#endif /* EVPROF_LIB_SPEC_BUILTIN_H */
