/* SPDX-License-Identifier: MIT */
/* libevprof: everything public, in one include. */
#ifndef EVPROF_EVPROF_H
#define EVPROF_EVPROF_H

#include <evprof/common.h>
#include <evprof/read.h>
#include <evprof/event.h>
#include <evprof/ring.h>
#include <evprof/record.h>

#endif /* EVPROF_EVPROF_H */
