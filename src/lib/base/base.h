/* SPDX-License-Identifier: MIT */
/*
 * What base offers every folder above it: messages, small file reads, sized
 * options and stats, one growable array and one hash map (util.h).
 */
#ifndef EVPROF_LIB_BASE_H
#define EVPROF_LIB_BASE_H

#include "util.h"

#endif /* EVPROF_LIB_BASE_H */
