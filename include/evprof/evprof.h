/* SPDX-License-Identifier: MIT */
/* libevprof: everything public, in one include. */
#ifndef EVPROF_EVPROF_H
#define EVPROF_EVPROF_H

#include <evprof/common.h>
#include <evprof/read.h>
#include <evprof/event.h>
#include <evprof/pmu.h>
#include <evprof/ring.h>
#include <evprof/record.h>
#include <evprof/proc.h>
#include <evprof/cgroup.h>
#include <evprof/symbols.h>
#include <evprof/profile.h>
#include <evprof/diff.h>
#include <evprof/page.h>
#include <evprof/session.h>
#include <evprof/launch.h>
#include <evprof/recorder.h>
#include <evprof/perfdata.h>
#include <evprof/push.h>

#endif /* EVPROF_EVPROF_H */
