/* SPDX-License-Identifier: MIT */
/*
 * The recorder's state, and opening: attributes with the hidden members,
 * the fallback ladder, groups per task or per CPU, rings, the session's
 * ids. recorder.c drives the recording on top of it.
 */
#ifndef EVPROF_LIB_RECORDER_OPEN_H
#define EVPROF_LIB_RECORDER_OPEN_H

#include <poll.h>
#include <stdbool.h>
#include <stdint.h>

#include <evprof/event.h>
#include <evprof/launch.h>
#include <evprof/recorder.h>
#include <evprof/ring.h>
#include <evprof/session.h>

#include "events/pmu.h"
#include "base/util.h"

/*
 * Data pages per CPU ring: 2 MiB, about 30 ms of a switch-heavy workload's
 * records at 100,000 switches a second, 512 KiB where the locked-memory
 * limit refuses that. The wakeup watermark stays at 128 KiB either way.
 */
#define RING_PAGES_DEFAULT 512
#define RING_PAGES_SMALL   128
#define FREQ_DEFAULT	   1000
/* Two members are hidden: the CPU clock and the cut. */
#define MAX_EVENTS (EVPROF_SNAPSHOT_MAX - 2)

/* Members that are not one of the user's events (event_of()). */
#define MEMBER_CLOCK (-1)
#define MEMBER_CUT   (-2)
#define MEMBER_EXIT  (-3)

struct evprof_recorder {
	/* Events as they end up: [0] samples, then the counters. */
	struct evprof_event_spec events[MAX_EVENTS + 1];
	size_t nr;
	bool cpu_time_member; /* the hidden task/cpu-clock is in the group */
	bool cut_member;      /* the hidden context-switches cut */
	bool exit_member;     /* the hidden sched_process_exit cut, last */
	bool off_cpu;	      /* switch records; the cut opens intervals */
	struct perf_event_attr exit_attr;
	bool per_cpu; /* pid -1 groups instead of inherited ones */
	bool exclude_kernel;
	bool callchain;
	bool defer;	      /* deferred user callchains (Linux 6.19) */
	uint32_t dwarf_stack; /* bytes of user stack per sample, 0: none */
	size_t nr_members;    /* of the group build_attrs() makes */
	uint64_t freq, period;
	size_t ring_pages;
	bool ring_pages_asked; /* by the caller: no smaller ring then */

	evprof_recorder_note_fn note_fn;
	void *note_ctx;
	char **notes;
	size_t nr_notes;

	struct evprof_launch *launch; /* the command, until started */
	pid_t child;		      /* its pid, or -1 */
	pid_t *pids;		      /* attached processes */
	size_t nr_pids;
	bool system_wide, include_idle;
	char *product;

	struct evprof_group_set **sets; /* one, or one per attached thread */
	size_t nr_sets;
	struct evprof_ring **rings; /* one per CPU of sets[0] */
	size_t nr_rings;
	struct evprof_session *session;

	/* Rings, then one pidfd per command or attached process (-1: gone). */
	struct pollfd *pfd;
	size_t nr_pfd;
	size_t live; /* pidfds not yet readable */

	bool started, stopped;
	uint64_t start_mono, start_wall;
	uint64_t stop_mono; /* CLOCK_MONOTONIC at the stop */

	/* opts.flat_memory: builds in parts (recorder_window.c) */
	bool flat;
	bool no_timeline;
	char *spill_dir;
	char *debug_cache;	    /* for the recorder's own symbolizers */
	struct evprof_profile *cur; /* what the parts fill, NULL: none yet */
	struct evprof_symbolizer
	    *sym;	    /* the recorder's own, made when needed */
	uint64_t win_start; /* CLOCK_MONOTONIC start of cur */
	uint64_t last_part; /* when the polls built last */
	bool part_failed;   /* said once */
	bool windows_over;  /* the last window went out */

	struct evprof_bpf *bpf; /* the BPF engine (engine_bpf.h), or NULL */
	/* Hybrid machines: each CPU's core PMU (recorder_pmu.c). */
	struct evprof__pmu_map pmu_map;
};

/*
 * A profile of r's events and notes covering the time from start_mono.
 * Returns NULL with errno set.
 */
EVPROF_HIDDEN struct evprof_profile *
evprof__recorder_new_profile(struct evprof_recorder *r, uint64_t start_mono);
/* A symbolizer of the recorder's own options. NULL with errno set. */
EVPROF_HIDDEN struct evprof_symbolizer *
evprof__recorder_symbolizer(const struct evprof_recorder *r);
/*
 * Says which unwinding made the user stacks and how it went, and whether
 * the kernel throttled sampling (the counters then miss some events).
 */
EVPROF_HIDDEN void evprof__recorder_note_session(struct evprof_recorder *r,
						 struct evprof_profile *p);
/*
 * flat_memory: builds what the session holds up to until into the profile
 * being made (sym NULL: the recorder's own). Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__recorder_part(struct evprof_recorder *r,
					struct evprof_symbolizer *sym,
					uint64_t until);
/* flat_memory: a part about once a second from the polls. */
EVPROF_HIDDEN void evprof__recorder_poll_part(struct evprof_recorder *r);

/* Reports a fallback step through the note callback and keeps it. */
__attribute__((format(printf, 2, 3))) EVPROF_HIDDEN void
evprof__recorder_note(struct evprof_recorder *r, const char *fmt, ...);

/*
 * Resolves the hidden sched_process_exit member (mounting tracefs when it
 * is not and we may). Returns whether it can be used; notes why not.
 */
EVPROF_HIDDEN bool evprof__recorder_find_exit(struct evprof_recorder *r);

/*
 * Opens the groups on the target (per CPU, on the command, or on every
 * thread of the attached processes), walking the fallback ladder. Returns
 * 0 or -errno after a message.
 */
EVPROF_HIDDEN int evprof__recorder_open_target(struct evprof_recorder *r);

/*
 * Fills attrs with the group to open (nr_members of them): the sampler,
 * the hidden clock, the extras, the hidden cut and exit members. Returns
 * how many.
 */
EVPROF_HIDDEN size_t evprof__recorder_build_attrs(
    struct evprof_recorder *r, struct perf_event_attr *attrs);
/*
 * Which of r's events member m of its group stands for: an index in
 * r->events, or MEMBER_CLOCK, MEMBER_CUT, MEMBER_EXIT.
 */
EVPROF_HIDDEN long evprof__recorder_event_of(const struct evprof_recorder *r,
					     size_t m);

/* ---- on the PMU (recorder_pmu.c) ---- */

/*
 * Checks r's group against the PMU before anything opens, as stat does
 * (evprof_group__validate()). Returns 0 or -EVPROF_ERR_GROUP_TOO_BIG after
 * its message, or -errno.
 */
EVPROF_HIDDEN int evprof__recorder_validate(struct evprof_recorder *r);
/* Learns which core PMU owns each CPU (r->pmu_map). Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__recorder_map_pmus(struct evprof_recorder *r);
/*
 * Opens r's group attrs on (pid, every online CPU), on a hybrid machine
 * each CPU's generic events bound to the CPU's core PMU. As
 * evprof_group_set__open().
 */
EVPROF_HIDDEN struct evprof_group_set *
evprof__recorder_open_set(struct evprof_recorder *r,
			  const struct perf_event_attr *attrs, size_t nr,
			  pid_t pid, const struct evprof_group_set_opts *o);
/*
 * On a hybrid machine, notes in p (and through the note callback) what
 * each generic event counted on each core type, read from the groups:
 * "cycles counted on each core type: cpu_core/cycles/ N, cpu_atom/...".
 */
EVPROF_HIDDEN void evprof__recorder_note_pmus(struct evprof_recorder *r,
					      struct evprof_profile *p);

/* Maps one ring per CPU and sends every sampling member there. */
EVPROF_HIDDEN int evprof__recorder_open_rings(struct evprof_recorder *r);

/* Creates the session and declares the role of every member's id. */
/*
 * The session options every engine shares: r's counters (their names put
 * into counters[], r->nr - 1 of them) and its targets.
 */
EVPROF_HIDDEN void
evprof__recorder_session_opts(const struct evprof_recorder *r,
			      const char **counters,
			      struct evprof_session_opts *so);
EVPROF_HIDDEN int evprof__recorder_new_session(struct evprof_recorder *r);

#endif /* EVPROF_LIB_RECORDER_OPEN_H */
