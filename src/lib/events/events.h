/* SPDX-License-Identifier: MIT */
/*
 * What events offers the folders above it, beside the public event
 * specifications and PMU facts: which core PMU owns each CPU and whether a
 * group fits it, whether a counter's overflows come in time (pmu.h, with
 * the host seam of host.h under it), and which libpfm4 is loaded
 * (spec_pfm.h).
 */
#ifndef EVPROF_LIB_EVENTS_H
#define EVPROF_LIB_EVENTS_H

#include "pmu.h"
#include "spec_pfm.h"

#endif /* EVPROF_LIB_EVENTS_H */
