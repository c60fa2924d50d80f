/* SPDX-License-Identifier: MIT */
/*
 * Private header of event specs. spec.c parses one spec and asks the
 * resolvers, one file per kind of name (spec_builtin.h, spec_trace.h,
 * spec_sysfs.h, spec_pfm.h), what it names; spec_list.c parses lists of
 * specs; spec_text.h holds the small parsers they all share. Resolvers
 * return 0, -EVPROF_ERR_UNKNOWN_EVENT quietly (saying why in a note), or
 * an error they have already reported.
 */
#ifndef EVPROF_LIB_SPEC_H
#define EVPROF_LIB_SPEC_H

#include <evprof/event.h>

#include "base/base.h"

/* evprof_event_spec__parse() without the argument checks. */
EVPROF_HIDDEN int evprof__spec_parse(struct evprof_event_spec *spec,
				     const char *str);

#endif /* EVPROF_LIB_SPEC_H */
