/* SPDX-License-Identifier: MIT */
/*
 * The engines behind the recorder, one ops table each: the ring engine
 * (engine_ring.c: every sample through a ring per CPU) and the BPF engine
 * (engine_bpf.c: sums made in the kernel; engine_bpf_none.c when built
 * without it). recorder.c picks one by opts.engine and calls its ops only;
 * a new engine (a replay of records for tests, say) is one more file and
 * one more row in its table, never a branch in the recorder.
 *
 * Ownership: the recorder owns the setup and its notes, which outlive the
 * engine; the engine owns all it opens (events, rings, programs, the
 * session it feeds) until close. Threading: the ops run on the caller's
 * thread, one at a time; an engine runs no thread of its own.
 */
#ifndef EVPROF_LIB_RECORDER_ENGINE_H
#define EVPROF_LIB_RECORDER_ENGINE_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <evprof/event.h>
#include <evprof/recorder.h>
#include <evprof/session.h>

#include "base/base.h"

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

/* What was said to the user, kept for every profile made after. */
struct evprof__notes {
	evprof_recorder_note_fn fn; /* the caller's, or NULL */
	void *ctx;
	char **v;
	size_t n;
};

/* Tells the caller's callback, and keeps it. */
__attribute__((format(printf, 2, 3))) EVPROF_HIDDEN void
evprof__note(struct evprof__notes *n, const char *fmt, ...);
EVPROF_HIDDEN void evprof__notes_fini(struct evprof__notes *n);

/*
 * What to record and where. The recorder fills it from its options; an
 * engine's open may lower what it cannot do (drop a counter with a note,
 * sample cpu-clock instead, exclude the kernel, per_cpu, defer) and the
 * recorder reads the result back. It outlives the engine.
 */
struct evprof__engine_setup {
	/*
	 * The user's events: [0] samples, the others count, and those of bit
	 * i of own sample on their own too (attributed by their own samples).
	 */
	struct evprof_event_spec events[MAX_EVENTS + 1];
	size_t nr;
	uint64_t own;
	uint64_t freq, period; /* -F, or a sample every period events */
	bool rate_asked;       /* -F or -c given, not the default */
	bool callchain;
	bool defer;	      /* deferred user callchains (Linux 6.19) */
	uint32_t dwarf_stack; /* bytes of user stack per sample, 0: none */
	uint32_t leaf_stack;  /* -g fp: bytes of it to mend leaves, 0: none */
	bool exclude_kernel;
	bool include_idle;
	bool off_cpu; /* an interval per wait, from switch-outs */
	bool per_cpu; /* pid -1 events instead of inherited ones */
	size_t ring_pages;
	bool ring_pages_asked; /* by the caller: no smaller ring then */

	pid_t child;	   /* the command, or -1 */
	const pid_t *pids; /* or the attached processes */
	size_t nr_pids;
	bool system_wide;
	/* With it: the cgroups' directory fds and ids (cgroups.c). */
	int *cgroup_fds;
	uint64_t *cgroup_ids;
	size_t nr_cgroups;
	int cgroup_version; /* of their hierarchy: 1 or 2 */
	char cgroup_mount[PATH_MAX];

	/* The task-exit tracepoint, where prepare resolved it. */
	bool exit_event;
	struct perf_event_attr exit_attr;

	struct evprof__notes *notes;
};

/*
 * Resolves and opens the target's cgroups into s (cgroups.c); a nested
 * one is dropped with a note. Returns 0 or -errno after saying why.
 */
EVPROF_HIDDEN int
evprof__engine_cgroups(struct evprof__engine_setup *s,
		       const struct evprof_recorder_target *t);
EVPROF_HIDDEN void evprof__engine_cgroups_close(struct evprof__engine_setup *s);

/* Drops event e (> 0) of s, its own bit with it. */
EVPROF_HIDDEN void evprof__engine_drop_event(struct evprof__engine_setup *s,
					     size_t e);
/*
 * Event e (> 0) of s, refused sampling (why), counts only: its counts ride
 * on the sampler's samples, said in a note.
 */
EVPROF_HIDDEN void evprof__engine_ride(struct evprof__engine_setup *s, size_t e,
				       const char *why);
/*
 * Members of s that sample on their own, by default every one that can:
 * the bits of s->own, set once the events are parsed.
 */
EVPROF_HIDDEN void evprof__engine_own_counters(struct evprof__engine_setup *s,
					       bool ride_along);
/*
 * What member event e samples at when its spec says nothing: fills
 * a's sample_period, or freq and sample_freq.
 */
EVPROF_HIDDEN void
evprof__engine_member_period(const struct evprof__engine_setup *s,
			     const struct evprof_event_spec *e,
			     struct perf_event_attr *a);
/*
 * What the sampling event samples at, a its attr from the spec: its own
 * period= or freq= term, else -F or -c, or for a software event that
 * counts no time and no -F or -c given the period a member would get.
 */
EVPROF_HIDDEN void
evprof__engine_sampler_rate(const struct evprof__engine_setup *s,
			    struct perf_event_attr *a);
/* Whether e counts time (cpu-clock, task-clock): its delta is ns on CPU. */
EVPROF_HIDDEN bool evprof__event_is_time(const struct evprof_event_spec *e);

/* How user stacks are walked (evprof__engine_caps.unwinders). */
enum {
	EVPROF__UNWIND_FP = 1u << 0,	   /* frame pointers, in the kernel */
	EVPROF__UNWIND_FP_DEFER = 1u << 1, /* the user part deferred */
	EVPROF__UNWIND_DWARF = 1u << 2,	   /* stack copies, CFI in user space */
	/* Frame pointers, leaves mended from small stack copies (leaf.h). */
	EVPROF__UNWIND_FP_LEAF = 1u << 3,
};

/* What an engine can do; the recorder asks this, never which it holds. */
struct evprof__engine_caps {
	unsigned int unwinders; /* EVPROF__UNWIND_* */
	bool off_cpu;		/* intervals with a stack per wait */
	/* Counters may sample on their own (evprof__engine_setup.own). */
	bool counter_samples;
	/* Samples reach the session as they come: the polls may build. */
	bool streams;
	size_t max_counters; /* events after the sampler */
	/*
	 * Samples name cgroup v2 ids, else the perf_event hierarchy's (a v1
	 * one's where it is bound there, as PERF_SAMPLE_CGROUP's).
	 */
	bool cgroup_v2_ids;
};

/* An open engine: its ops and the session it feeds. */
struct evprof__engine {
	const struct evprof__engine_ops *ops;
	struct evprof_session *session;
};

/*
 * Every op is set, but for an engine whose open always fails (built
 * without it): available, prepare, check and open. Each returning int
 * gives 0 or -errno, after a message (pr_warn) where the user must know.
 */
struct evprof__engine_ops {
	struct evprof__engine_caps caps;
	/*
	 * Whether it can record here; one sentence saying why (or what was
	 * found) into why[len].
	 */
	bool (*available)(char *why, size_t len);
	/*
	 * Before the events are parsed: learns what it needs of the system
	 * (may mount tracefs, which a tracepoint event then needs too).
	 */
	void (*prepare)(struct evprof__engine_setup *s);
	/* The events parsed, before the command forks: checks them. */
	int (*check)(struct evprof__engine_setup *s);
	/*
	 * Opens everything on s's targets, disabled, and the session it
	 * feeds; s stays the recorder's and must outlive the engine. On an
	 * error all it made is closed.
	 */
	int (*open)(struct evprof__engine_setup *s,
		    struct evprof__engine **out);
	/* The fds to poll for data (POLLIN); as many at every call. */
	size_t (*fds)(const struct evprof__engine *e, int *fds, size_t max);
	/* Lets the events run (a command's held exec comes after). */
	int (*start)(struct evprof__engine *e);
	/* Feeds what has come into the session; returns how many records. */
	int (*poll)(struct evprof__engine *e);
	/*
	 * A window before the stop (opts.flat_memory): feeds what is summed
	 * out of the session's reach, stamped at most until.
	 */
	int (*window)(struct evprof__engine *e, uint64_t until);
	/* Stops the events and feeds what only the stop gives. */
	int (*stop)(struct evprof__engine *e);
	/* Adds to the final profile what only the engine knows. */
	void (*notes)(struct evprof__engine *e, struct evprof_profile *p);
	/* Adds its losses and skips to st (ring_lost_*, ring_malformed). */
	void (*stats)(const struct evprof__engine *e,
		      struct evprof_recorder_stats *st);
	/* Closes all it owns. */
	void (*close)(struct evprof__engine *e);
};

EVPROF_HIDDEN extern const struct evprof__engine_ops evprof__engine_ring;
EVPROF_HIDDEN extern const struct evprof__engine_ops evprof__engine_bpf;

/*
 * The slots (slot i - 1 counts event i, the sampler's is the last) of the
 * events counting context switches where the kernel counts them: not with
 * s's exclude_kernel, nor with the event's own (:u).
 */
EVPROF_HIDDEN uint64_t
evprof__engine_switch_slots(const struct evprof__engine_setup *s);

/*
 * The session options every engine shares: s's counters (their names put
 * into counters[], s->nr - 1 of them) and its targets.
 */
EVPROF_HIDDEN void
evprof__engine_session_opts(const struct evprof__engine_setup *s,
			    const char **counters,
			    struct evprof_session_opts *so);

#endif /* EVPROF_LIB_RECORDER_ENGINE_H */
