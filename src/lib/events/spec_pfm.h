/* SPDX-License-Identifier: MIT */
/* Private header of spec_pfm.c: libpfm4 names. */
#ifndef EVPROF_LIB_SPEC_PFM_H
#define EVPROF_LIB_SPEC_PFM_H

#include <stdbool.h>
#include <linux/perf_event.h>

#include "spec_text.h"

/* Whether libpfm4 is there: built with it, and it loads. */
EVPROF_HIDDEN bool evprof__spec_have_pfm(void);
/* libpfm4's version ("4.0"), loading it; NULL when it cannot be. */
EVPROF_HIDDEN const char *evprof__spec_pfm_version(void);
EVPROF_HIDDEN int evprof__spec_resolve_pfm(struct perf_event_attr *attr,
					   const char *s,
					   struct spec_notes *why);

#endif /* EVPROF_LIB_SPEC_PFM_H */
