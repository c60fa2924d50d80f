/* SPDX-License-Identifier: MIT */
/*
 * What profile offers the folders above it, beside the public model API:
 * the model's layout for its writers and readers (model.h, internal.h),
 * per-function sums (funcs.h) and the timeline's rows in time order
 * (timeline.h).
 */
#ifndef EVPROF_LIB_PROFILE_H
#define EVPROF_LIB_PROFILE_H

#include "funcs.h"
#include "internal.h"
#include "model.h"
#include "timeline.h"

#endif /* EVPROF_LIB_PROFILE_H */
