/* SPDX-License-Identifier: MIT */
/* Private header of spec_trace.c: sys:name tracepoints. */
#ifndef EVPROF_LIB_SPEC_TRACE_H
#define EVPROF_LIB_SPEC_TRACE_H

#include <linux/perf_event.h>

#include "spec_text.h"

/*
 * s has exactly one ':'. -errno failures leave their message in fail
 * (libpfm4 may still know the name, e.g. when tracefs is closed to
 * non-root users).
 */
EVPROF_HIDDEN int evprof__spec_resolve_tracepoint(struct perf_event_attr *attr,
						  const char *s,
						  struct spec_notes *why,
						  struct spec_notes *fail);

#endif /* EVPROF_LIB_SPEC_TRACE_H */
