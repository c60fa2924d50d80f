/* SPDX-License-Identifier: MIT */
/*
 * The recorder: exact multi-event sampling behind one object. Given a
 * target (a command, running processes, or every CPU), an event list and
 * options, it opens the sampling groups, wires their rings, feeds a session
 * and hands back a profile in which every sample carries, for each counter,
 * how much its thread counted since its previous sample.
 *
 * What it decides (the policy that makes the data exact):
 * - The first event samples; every other event is a counting member of the
 *   sampler's group, read with each sample (PERF_SAMPLE_READ).
 * - A hidden task-clock (task mode) or cpu-clock (cpu mode) member gives
 *   each sample its thread's CPU time.
 * - A hidden context-switches member sampling every switch-out (period 1,
 *   taken in the context of the task leaving the CPU, as on every kernel
 *   since the event exists) cuts each thread's interval: in cpu mode what a
 *   CPU counted goes to the thread that ran, in both modes what a thread
 *   counts after its last sample up to its last switch-out is kept.
 * - With opts.off_cpu, the cut's samples keep their stacks and the
 *   sampler's switch records say when each thread comes back: its waits
 *   as off-CPU intervals.
 * - Task mode: one group per CPU on the target with inherit (an inherited
 *   event cannot be mmapped with cpu -1; inherit with PERF_SAMPLE_READ
 *   needs Linux 6.12). Cpu mode: one group per CPU with pid -1, samples kept
 *   for the target's process tree. Auto takes task mode where the kernel
 *   has it. On a hybrid machine (cpu_core + cpu_atom) each CPU's group
 *   counts generic events on the core PMU that owns the CPU, as perf does;
 *   the profile holds their sums and a note the per-PMU split.
 * - The fallback ladder, each step reported once through the note callback
 *   and kept in the profile's notes: extras that cannot be counted are
 *   dropped; a sampler that cannot sample becomes cpu-clock, keeping every
 *   extra that opens; kernel samples are dropped when not permitted;
 *   deferred callchains are given up when the group refuses them.
 *
 * What stays the caller's: the loop (poll, or fds in its own loop), when to
 * stop, signals, waiting for the command and its exit status.
 *
 *	r = evprof_recorder__new(&target, "cpu-clock,page-faults", &opts);
 *	evprof_recorder__start(r);
 *	while (!evprof_recorder__done(r))
 *		evprof_recorder__poll(r, 100);
 *	evprof_recorder__stop(r);
 *	waitpid(evprof_recorder__pid(r), &status, 0);
 *	p = evprof_recorder__profile(r, NULL);
 */
#ifndef EVPROF_RECORDER_H
#define EVPROF_RECORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <evprof/common.h>
#include <evprof/profile.h>
#include <evprof/session.h>
#include <evprof/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_recorder;

enum evprof_recorder_mode {
	EVPROF_RECORDER_AUTO = 0, /* task where the kernel has it, else cpu */
	EVPROF_RECORDER_TASK,	  /* per-task groups with inherit */
	EVPROF_RECORDER_CPU,	  /* per-CPU groups, filtered to the tree */
};

enum evprof_call_graph {
	/*
	 * Kernel + frame-pointer user callchains; the user part deferred to
	 * the return to user space where the kernel can (Linux 6.19). With
	 * the ring engine (x86-64) each sample also carries the user
	 * registers and 512 bytes of user stack: a leaf without a frame of
	 * its own (libc's syscall wrappers, memcpy) gets back the callers
	 * the frame pointers skip, unwound with the CFI at build.
	 */
	EVPROF_CALL_GRAPH_FP = 0,
	EVPROF_CALL_GRAPH_NONE, /* the sampled instruction only */
	/*
	 * The kernel part from the kernel, the user part unwound with DWARF
	 * CFI from a copy of the user stack (x86-64).
	 */
	EVPROF_CALL_GRAPH_DWARF,
	/* As EVPROF_CALL_GRAPH_FP without the stack copy: leaves as walked. */
	EVPROF_CALL_GRAPH_FP_NOLEAF,
};

/* Bytes of user stack copied per sample with EVPROF_CALL_GRAPH_DWARF. */
#define EVPROF_RECORDER_STACK_DEFAULT 8192
/* The sample size is a u16: the kernel refuses copies of 64 KiB. */
#define EVPROF_RECORDER_STACK_MAX 65528

/*
 * Where samples are summed. The ring engine copies every sample to user
 * space (a timeline, exact per-sample deltas). The BPF engine sums them in
 * the kernel: a BPF program on a per-CPU sampling event and on each
 * context switch reads per-CPU counting events and charges each delta to
 * the thread that ran, aggregated per (thread, user stack, kernel stack);
 * the profile gets those sums (no timeline) and the side-band (names,
 * mappings, exits) comes through a ring as with the ring engine. It needs
 * root or CAP_BPF + CAP_PERFMON, kernel BTF, and a build with BPF
 * (evprof_recorder__engine_available()); at most 8 counters; cpu mode
 * only; no DWARF stacks or off-CPU intervals.
 */
enum evprof_recorder_engine {
	EVPROF_RECORDER_ENGINE_RING = 0,
	EVPROF_RECORDER_ENGINE_BPF,
};

/*
 * Whether engine e can record here: built in, and for BPF kernel BTF and
 * the privileges to load and attach its programs (tried). Writes one
 * sentence saying why (or what was found) to why (len bytes, may be 0).
 */
EVPROF_API bool evprof_recorder__engine_available(enum evprof_recorder_engine e,
						  char *why, size_t len);

struct evprof_recorder_target {
	size_t sz; /* sizeof(struct evprof_recorder_target) */
	/*
	 * A command (argv[0] looked up in PATH): forked by
	 * evprof_recorder__new() and held until evprof_recorder__start()
	 * lets it exec, so its first instruction is recorded.
	 */
	char *const *argv;
	/* Or running processes: every thread, existing and new. */
	const pid_t *pids;
	size_t nr_pids;
	/*
	 * Every process on every CPU (cpu mode). With argv, the command
	 * runs beside them.
	 */
	bool system_wide;
	/*
	 * With system_wide: only the tasks of these cgroups and of their
	 * descendants, filtered in the kernel. Paths as
	 * evprof_cgroup__resolve() takes them; a path inside another one
	 * given is dropped with a note (the other's events count it).
	 */
	const char *const *cgroups;
	size_t nr_cgroups;
};

/*
 * A fallback step or a fact a user should know ("cycles cannot sample
 * (...): sampling cpu-clock"), once per step. The string lives until the
 * callback returns.
 */
typedef void (*evprof_recorder_note_fn)(const char *note, void *ctx);

struct evprof_recorder_opts {
	size_t sz; /* sizeof(struct evprof_recorder_opts) */
	enum evprof_recorder_mode mode;
	uint64_t freq;	 /* samples per second; 0: 1000 (unless period) */
	uint64_t period; /* or a sample every period events */
	enum evprof_call_graph call_graph;
	uint32_t stack_size; /* DWARF copies: 8..65528 bytes; 0: 8192 */
	bool user_only;	     /* exclude the kernel from the start */
	bool include_idle;   /* system-wide: keep the idle task's samples */
	/* data pages per CPU ring, a power of 2; 0: 512, 1024 with -g fp's
	 * leaf stack copies (128 where the locked-memory limit refuses it) */
	size_t ring_pages;
	evprof_recorder_note_fn note;
	void *note_ctx;
	/*
	 * Off-CPU profiling: the cut's switch-out samples keep their stack
	 * (and DWARF stack copy) and the sampler gets switch records
	 * (attr.context_switch), so every wait of a recorded thread becomes
	 * an interval with a stack and a duration: the profile's weight types
	 * "off-cpu" (voluntary: sleep, I/O, locks) and "preempted", in ns
	 * (see EVPROF_SESSION_SWITCH_OUT). Needs the cut member, counted in
	 * the kernel: without CAP_PERFMON and with kernel.perf_event_paranoid
	 * above 1, evprof_recorder__new() fails with EACCES (or EPERM).
	 */
	bool off_cpu;
	/* Where samples are summed (see enum evprof_recorder_engine). */
	enum evprof_recorder_engine engine;
	/*
	 * Memory flat in recording length: about once a second,
	 * evprof_recorder__poll() builds what the session holds up to a
	 * margin (EVPROF_RECORDER_MARGIN_NS) before now into the profile being
	 * made, with the recorder's own default symbolizer, and drops it
	 * (evprof_session__build_until()). Needed by evprof_recorder__window().
	 * Deferred user callchains are not used (their user part comes after
	 * the sample). With off_cpu, samples stay until the end (an off-CPU
	 * interval ends after its sample) and windows are refused.
	 */
	bool flat_memory;
	/*
	 * The directory of the profiles' timeline spill files
	 * (evprof_profile_opts.spill_dir), NULL: timelines stay in memory.
	 */
	const char *spill_dir;
	/*
	 * Profiles made without a timeline (evprof_profile_opts.no_timeline):
	 * for callers that write no per-sample output (pprof, folded,
	 * report); a thread then costs no row buffer.
	 */
	bool no_timeline;
	/*
	 * evprof_symbolizer_opts.debug_cache_dir of the recorder's own
	 * symbolizers (those it makes when given none).
	 */
	const char *debug_cache_dir;
	/*
	 * Counters ride along on the sampler's samples, as they did in 0.2:
	 * no counter samples on its own, and what each counted since the
	 * thread's previous sample goes to wherever the sampler fires.
	 * Cheaper (no sample per counter period) and right for ratios over
	 * each interval (IPC of the code around a time sample), wrong for
	 * where a counter's events happen. By default every counter that can
	 * sample also samples on its own, at its period=/freq= term or a
	 * default per kind of event, and is attributed by its own samples
	 * (evprof_session_opts.own_counters); one that cannot rides along,
	 * with a note.
	 */
	bool ride_along;
};

/*
 * How far behind now flat_memory builds stay, so that the records of every
 * ring up to the time built have come in.
 */
#define EVPROF_RECORDER_MARGIN_NS 200000000ull

/*
 * Opens everything: parses events ("sampler,counter,..."; braces accepted
 * and ignored, every event joins the sampler's group), walks the fallback
 * ladder, maps one ring per CPU, declares every member's id to a new
 * session, learns the targets that exist from /proc, and forks the command.
 * Nothing counts until evprof_recorder__start(). Failures are logged
 * through the print callback with their cause and advice. Returns a
 * recorder freed with evprof_recorder__free(), or NULL with errno set
 * (EINVAL for bad options, EVPROF_ERR_* for a bad event list,
 * EVPROF_ERR_GROUP_TOO_BIG when the group does not fit the PMU, checked
 * as evprof_group__validate() does before the command is forked, ESRCH
 * when no target thread is left, or the errno of the failed open).
 */
EVPROF_API struct evprof_recorder *
evprof_recorder__new(const struct evprof_recorder_target *target,
		     const char *events,
		     const struct evprof_recorder_opts *opts);

/*
 * Kills and reaps a command that was never started, closes every event
 * and ring and frees r. A started command is left running and unreaped.
 * Accepts NULL.
 */
EVPROF_API void evprof_recorder__free(struct evprof_recorder *r);

/*
 * Enables the events, or lets the command exec with its events enabled at
 * its exec (task mode). Returns 0, or -errno: of the failed exec (the
 * command then exited with status 127), or of a failed enable.
 */
EVPROF_API int evprof_recorder__start(struct evprof_recorder *r);

/*
 * Waits up to timeout_ms (-1: until records come or the target ends) for
 * the rings, then feeds every record available to the session. Returns
 * the number of records fed, or -errno (-EINTR when a signal came: call
 * again).
 */
EVPROF_API int evprof_recorder__poll(struct evprof_recorder *r, int timeout_ms);

/* Feeds every record available without waiting. Returns their number. */
EVPROF_API int evprof_recorder__consume(struct evprof_recorder *r);

/*
 * True once the command exited (not reaped: its status stays for the
 * caller's waitpid), or every attached process did. Never true for a
 * system-wide recording without a command.
 */
EVPROF_API bool evprof_recorder__done(struct evprof_recorder *r);

/*
 * Pollable fds (POLLIN) for a caller's own loop: rings, then one pidfd per
 * command or attached process (readable once it exits). Fills up to max
 * into fds and returns how many there are (may exceed max).
 */
EVPROF_API size_t evprof_recorder__fds(const struct evprof_recorder *r,
				       int *fds, size_t max);

/*
 * Disables the events and feeds what the rings still hold. Idempotent.
 * Returns 0 or -errno.
 */
EVPROF_API int evprof_recorder__stop(struct evprof_recorder *r);

/* The command's pid (to wait for or signal), or -1 without one. */
EVPROF_API pid_t evprof_recorder__pid(const struct evprof_recorder *r);

/*
 * The events as recorded, after the fallback ladder: index 0 the sampler,
 * then the counters in profile counter order. Returns the count; names
 * live as long as r.
 */
EVPROF_API size_t evprof_recorder__nr_events(const struct evprof_recorder *r);
EVPROF_API const char *evprof_recorder__event(const struct evprof_recorder *r,
					      size_t i);

/* True when recording per CPU (cpu mode), false for task mode. */
EVPROF_API bool evprof_recorder__per_cpu(const struct evprof_recorder *r);

/* The session the recorder feeds; lives as long as r. */
EVPROF_API struct evprof_session *
evprof_recorder__session(struct evprof_recorder *r);

/*
 * What the recorder itself did; the counters of the session it feeds are
 * evprof_session__stats(evprof_recorder__session(r), ...).
 */
struct evprof_recorder_stats {
	size_t sz;		    /* sizeof(struct evprof_recorder_stats) */
	uint64_t ring_lost_events;  /* events the rings lost (LOST records) */
	uint64_t ring_lost_records; /* LOST records */
	uint64_t ring_lost_samples; /* PERF_RECORD_LOST_SAMPLES counts */
	uint64_t start_mono_ns;	    /* CLOCK_MONOTONIC at start, 0 before */
	uint64_t start_wall_ns;	    /* CLOCK_REALTIME of the same instant */
	uint32_t stack_size;	    /* DWARF copies in bytes, 0: none */
	bool deferred;		    /* deferred user callchains in use */
	/* The sampling event's rate: sample_freq Hz, else a sample every
	 * sample_period of its events (ns for a time event: sample_time) */
	uint64_t sample_freq;
	uint64_t sample_period;
	bool sample_time;
	/* Times a ring's records lost their boundaries (a record size under
	 * its header, past the head or not a multiple of 8; a head more than
	 * the ring ahead or less than a header): skipped to the head. */
	uint64_t ring_malformed;
};

/*
 * Fills *st (up to st->sz bytes, set by the caller) and sets st->sz to the
 * bytes filled. Returns 0, or -EINVAL for a NULL argument or an st->sz
 * below sizeof(size_t).
 */
EVPROF_API int evprof_recorder__stats(const struct evprof_recorder *r,
				      struct evprof_recorder_stats *st);

/*
 * Builds the profile of everything recorded so far: counters named after
 * the events, the fallback notes and the call graph used with its counts,
 * product "evprof" + the command line, symbolized through sym (NULL: a
 * symbolizer of the recorder's own with default options). Returns a
 * profile the caller frees with evprof_profile__free(), or NULL with
 * errno set. With opts.flat_memory: the profile the polls have been
 * building, completed with what is left (after the last window, what came
 * since); call it once, after evprof_recorder__stop().
 */
EVPROF_API struct evprof_profile *
evprof_recorder__profile(struct evprof_recorder *r,
			 struct evprof_symbolizer *sym);

/*
 * Continuous recording (needs opts.flat_memory): the profile of what was
 * recorded since the previous window (or the start) up to
 * EVPROF_RECORDER_MARGIN_NS before now; after evprof_recorder__stop(),
 * everything left: the last window. Each is complete on its own
 * (counters, processes, threads and stacks of its samples, the notes) and
 * says its start (evprof_profile_opts start_wall_ns and start_mono_ns) and
 * end (evprof_profile__end()); every delta lands in exactly one window,
 * so the windows of a recording sum to the profile of one build. Symbols
 * come from sym (NULL: the recorder's own): keep one across windows, its
 * caches are what makes later windows cheap. On success *out receives a
 * profile the caller frees with evprof_profile__free(). Returns 0, -EINVAL
 * (no flat_memory, not started), -EOPNOTSUPP (off_cpu, before the stop),
 * -ENODATA after the last window, or -errno of the build (-ENOMEM).
 */
EVPROF_API int evprof_recorder__window(struct evprof_recorder *r,
				       struct evprof_symbolizer *sym,
				       struct evprof_profile **out);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_RECORDER_H */
