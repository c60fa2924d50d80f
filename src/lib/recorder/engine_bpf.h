/* SPDX-License-Identifier: MIT */
/*
 * The BPF engine's side of the recorder (engine_bpf.c; engine_bpf_none.c
 * when built without BPF): its programs, maps and per-CPU events, a
 * side-band ring per CPU for names, mappings and exits, and the session
 * it fills with the kernel's aggregates at each window and at the stop. recorder.c calls these
 * in place of opening its groups when opts.engine asks for BPF.
 */
#ifndef EVPROF_LIB_ENGINE_BPF_H
#define EVPROF_LIB_ENGINE_BPF_H

#include <stdbool.h>
#include <stddef.h>

#include "base/util.h"

struct evprof_recorder;
struct evprof_bpf;
struct perf_event_attr;

/*
 * What the engine opens on cpu for the user's event e: e 0 samples (at
 * -F or -c, from the start), the others count from their open, each into
 * the counter array (no inherit; enabled and running times read). On a
 * hybrid machine a generic hardware or cache event is bound to the core
 * PMU that owns cpu (r->pmu_map), as in the ring engine.
 */
EVPROF_HIDDEN void evprof__bpf_attr(const struct evprof_recorder *r, size_t e,
				    int cpu, struct perf_event_attr *a);

/*
 * Loads the programs, opens a sampling and the counting events on every
 * CPU, the side-band events (r->sets, r->rings) and the session, and puts
 * the targets in the kernel's process filter. Returns 0 or -errno after
 * a message.
 */
EVPROF_HIDDEN int evprof__bpf_open(struct evprof_recorder *r);

/*
 * Attaches the programs and takes every CPU's baseline, then lets the
 * sampling events run. Returns 0 or -errno after a message.
 */
EVPROF_HIDDEN int evprof__bpf_start(struct evprof_recorder *r);

/*
 * A window (continuous mode, opts.flat_memory): flips the set of maps the
 * programs add to, waits until none can still add to the old one, reads
 * what the side-band rings hold, then moves the old set's aggregates into
 * the session and clears it, each stamped at most until (the time the
 * window is built up to: an aggregate carries its latest sample's time,
 * and one sampled after until belongs to this window all the same). What
 * threads counted since their latest sample waits for their next sample
 * or their exit. Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__bpf_window(struct evprof_recorder *r, uint64_t until);

/*
 * Detaches everything, then moves every aggregate and every thread's
 * charges after its last sample into the session and notes the counts
 * of samples and losses. Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__bpf_stop(struct evprof_recorder *r);

/* Closes everything; accepts NULL. */
EVPROF_HIDDEN void evprof__bpf_close(struct evprof_bpf *b);

#endif /* EVPROF_LIB_ENGINE_BPF_H */
