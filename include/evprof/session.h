/* SPDX-License-Identifier: MIT */
/*
 * Sessions: what a recording learns from its record stream, turned into a
 * profile at the end. Pure: records come in as bytes (from rings or a
 * perf.data file), nothing here opens an event.
 *
 * A session tracks processes and threads (COMM, FORK, EXIT, MMAP/MMAP2 and
 * /proc for what existed before), turns the cumulative counter values that
 * samples carry (PERF_SAMPLE_READ) into per-sample deltas, and stores each
 * sample compactly (callchains deduplicated in an arena) until
 * evprof_session__build() symbolizes the distinct addresses once and fills
 * an evprof_profile.
 *
 * Deltas are keyed by (kernel event id, tid) (or by id alone with
 * opts.per_cpu, see there): with inherit every thread has
 * its own counter instance that reports the id of the event we opened, and
 * per-CPU opening gives each CPU its own id. A thread's first sample on a
 * key carries everything that instance counted since it started, so the sum
 * of a thread's deltas on a key equals that instance's value at its last
 * sample. Raw values are used: with per-CPU instances time_enabled grows on
 * every CPU but time_running only on one, which is not multiplexing.
 */
#ifndef EVPROF_SESSION_H
#define EVPROF_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include <evprof/common.h>
#include <evprof/proc.h>
#include <evprof/profile.h>
#include <evprof/record.h>
#include <evprof/symbols.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_session;

/* Role of a kernel event id within the sampling groups. */
#define EVPROF_SESSION_SAMPLER (-1) /* the sampling leader */
#define EVPROF_SESSION_CPU_TIME                                                \
	(-2) /* task-clock/cpu-clock member: ns on
				      * CPU, becomes the sample's CPU delta */
/*
 * A member sampling every context switch (context-switches, period 1),
 * whose samples are taken in the context of the task switched out. Its
 * samples are not profile samples: they end the thread's interval, and
 * their deltas are held for the thread's next sample, so each thread's
 * deltas sum to all it counted. What it counted after its last sample (a
 * short thread: its whole life) goes to one sample on a frame named
 * "[unsampled]" right under the thread: no code it ran is known to have
 * caused it, least of all the exit path its last switch-out was in.
 */
#define EVPROF_SESSION_CUT (-3)
/*
 * A cut member sampling every switch-out (as EVPROF_SESSION_CUT) whose
 * samples also open their thread's off-CPU interval, with the sample's
 * stack. PERF_RECORD_SWITCH or SWITCH_CPU_WIDE records (attr.context_switch
 * on the sampler) close it at the thread's switch-in; an out record with
 * PERF_RECORD_MISC_SWITCH_OUT_PREEMPT marks it preempted. An interval still
 * open is closed at the thread's EXIT, else at the end of the recording
 * (evprof_session__end()). At build, the profile gets the weight types
 * "off-cpu" (voluntary waits: sleep, I/O, locks) and "preempted", in ns,
 * summed per (thread, stack) as aggregates.
 */
#define EVPROF_SESSION_SWITCH_OUT (-4)

/*
 * How a sample's stack ends. Whole: at its thread's first frame (code whose
 * CFI marks the return address undefined: _start, clone3's child, ...) or
 * at a kernel thread's root. The others stop short of it; DWARF unwinding
 * and the depth limit end the stack in a frame of their own
 * (evprof_stack_end_frame()).
 */
enum evprof_stack_end {
	EVPROF_STACK_WHOLE,
	/* the frame-pointer walk ended, or read garbage, before the root */
	EVPROF_STACK_FRAME_POINTERS,
	/* a chain of max_stack frames, or an unwinding of 256 */
	EVPROF_STACK_DEPTH,
	EVPROF_STACK_COPY,	   /* DWARF: the stack copy ended first */
	EVPROF_STACK_NO_CFI,	   /* DWARF: at code that has no CFI */
	EVPROF_STACK_BAD_REGISTER, /* DWARF: the CFI's rules found no caller */
	EVPROF_STACK_ENDS
};

/*
 * The synthetic frame at the root of a stack that ended as e
 * ("[truncated:stack-copy]", ...; no spaces, for
 * folded files), NULL for causes that get none (a whole
 * stack, frame pointers: every walk through code without them would have
 * one), or "[unsampled]" for e -1: what a thread counted after its last
 * sample.
 */
EVPROF_API const char *evprof_stack_end_frame(int e);

struct evprof_session_opts {
	size_t sz; /* sizeof(struct evprof_session_opts) */
	/* Format of every record fed (all our events share one). */
	struct evprof_record_fmt fmt;
	/* Counter names, in profile counter order. */
	const char *const *counters;
	size_t nr_counters;
	/* Name the sampler's own deltas as a counter too (NULL: don't). */
	const char *sampler_counter;
	/*
	 * Keep only samples of these processes and their descendants (FORK
	 * grows the set, also when the parent's own FORK comes later; a pid
	 * reused after an EXIT is a new process). 0 entries: keep everything.
	 */
	const pid_t *pids;
	size_t nr_pids;
	/* Drop samples of pid 0 (the idle task). */
	bool exclude_idle;
	/*
	 * Bytes of user stack copies (PERF_SAMPLE_STACK_USER, only the part
	 * the kernel copied) kept for DWARF unwinding at build; samples over
	 * it keep their kernel part and count in stacks_dropped. 0: 1 GiB.
	 */
	size_t max_stack_bytes;
	/*
	 * The groups are per CPU (pid -1): every thread running on a CPU
	 * shares its counters, so a delta is the value minus the last value
	 * of the same id (whatever thread it was), charged to the sample's
	 * thread. Exact when EVPROF_SESSION_CUT samples end every thread's
	 * interval. Some tasks are never sampled (the idle task of some CPUs
	 * in a VM): PERF_RECORD_SWITCH_CPU_WIDE records (attr.context_switch
	 * on the sampler) then say where the next thread's stretch began, and
	 * the CPU time before it is unattributed. Records of one CPU must be
	 * fed in ring order.
	 */
	bool per_cpu;
	/*
	 * Bit i: counter i samples on its own (its ids' samples are fed too)
	 * and is attributed by its own samples: its delta since the thread's
	 * previous sample of it goes to the stack of its next one, held per
	 * thread meanwhile, so a counter lands where its events happened. Such
	 * a sample carries that counter's value alone and stands for no
	 * sample of time (a values-only profile sample). The sampler's
	 * samples take CPU time, the sampler_counter and every counter whose
	 * bit is clear (those ride along: what they counted since the
	 * thread's previous sample goes to wherever the sampler fires, which
	 * gives exact ratios over each interval). 0: every counter rides.
	 */
	uint64_t own_counters;
	/*
	 * Frames the kernel keeps in a callchain (kernel.perf_event_max_stack
	 * when recording, or the events' sample_max_stack): a chain that long
	 * was cut by it. 0: 127, the kernel's default.
	 */
	uint32_t max_stack;
	/*
	 * Optional: the top of the stack holding sp in thread tid of process
	 * pid (the end of its mapping, while it runs), 0 when unknown. Asked
	 * as a sample is fed, once per thread whose user stack copy came full
	 * (so maybe short): stack_copy_needed is then what the copy needed,
	 * not only the furthest an unwinding read.
	 */
	uint64_t (*stack_top)(void *ctx, pid_t pid, pid_t tid, uint64_t sp);
	void *stack_top_ctx;
	/*
	 * Slots that count context switches (bit k: counter k, or the
	 * sampler_counter at nr_counters), per-CPU mode: a read after a
	 * stretch no read ended (a task whose switch-out the kernel does not
	 * sample: the idle task of some CPUs) holds that task's switch-out
	 * too, one per switch-in record of the stretch, which is taken out.
	 */
	uint64_t switch_counters;
};

/* Returns a session or NULL with errno set (EINVAL, ENOMEM). */
EVPROF_API struct evprof_session *
evprof_session__new(const struct evprof_session_opts *opts);
EVPROF_API void evprof_session__free(struct evprof_session *s);

/*
 * Declares what kernel event id means: EVPROF_SESSION_SAMPLER,
 * EVPROF_SESSION_CPU_TIME, EVPROF_SESSION_CUT, EVPROF_SESSION_SWITCH_OUT,
 * or a counter index
 * (0..nr_counters-1). Call it
 * for every member of every group (each CPU's group has its own ids).
 * Returns 0, -EINVAL or -ENOMEM.
 */
EVPROF_API int evprof_session__set_id(struct evprof_session *s, uint64_t id,
				      int role);

/* A thread of a seeded process. */
struct evprof_session_thread_seed {
	pid_t tid;
	const char *name; /* NULL: not known */
};

/* What a process that existed before recording is made of. */
struct evprof_session_seed {
	size_t sz; /* sizeof(struct evprof_session_seed) */
	pid_t pid;
	const char *name; /* NULL: not known */
	const struct evprof_session_thread_seed *threads;
	size_t nr_threads;
	/* Its mappings; only executable ones (EVPROF_MAP_EXEC) are used. */
	const struct evprof_map *maps;
	size_t nr_maps;
	/*
	 * Its cgroup v2 path ("/a/b", the 0:: line of /proc/PID/cgroup), or
	 * NULL: its threads' cgroup until a sample of theirs carries one
	 * (PERF_SAMPLE_CGROUP), for kernels without it.
	 */
	const char *cgroup;
};

/*
 * Learns process seed->pid as it was before every record (time 0): its
 * name, its threads' names and its mappings, for targets that existed
 * before recording. Pure: the session copies what it keeps, seed may go
 * once this returns. All or nothing. Returns 0, -EINVAL or -ENOMEM.
 */
EVPROF_API int evprof_session__seed(struct evprof_session *s,
				    const struct evprof_session_seed *seed);

/*
 * Reads process pid as it is now from /proc (name, threads and their
 * names, memory maps) and seeds it with evprof_session__seed(). Returns 0
 * or -errno (-ESRCH when it is gone).
 */
EVPROF_API int evprof_session__seed_process(struct evprof_session *s,
					    pid_t pid);

/*
 * Names cgroup id (cgroup v2's, as PERF_SAMPLE_CGROUP carries it: the
 * directory's inode number) path ("/a/b", from the hierarchy's root), as
 * a PERF_RECORD_CGROUP fed does: for the cgroups that existed before
 * recording. A thread's cgroup is its latest sample's. Returns 0, -EINVAL
 * or -ENOMEM.
 */
EVPROF_API int evprof_session__name_cgroup(struct evprof_session *s,
					   uint64_t id, const char *path);

/*
 * Task tid of process pid is ns_tid of ns_pid in its own pid namespace (a
 * container's view, evprof_proc__ns_ids()) from time on (0: from the
 * start), which perf records do not carry. A thread the process makes
 * later has its ns_pid, and an ns tid only when named too. Returns 0,
 * -EINVAL or -ENOMEM.
 */
EVPROF_API int evprof_session__name_ns_ids(struct evprof_session *s,
					   uint64_t time, pid_t pid, pid_t tid,
					   pid_t ns_pid, pid_t ns_tid);

/*
 * Feeds one record (size bytes, 8-byte aligned). Records of different
 * rings may interleave; samples are ordered per thread at build time.
 * Returns 0, or a negative error for a record that could not be decoded
 * (it is counted in the stats and skipped; feeding may go on).
 */
EVPROF_API int evprof_session__feed(struct evprof_session *s, const void *rec,
				    size_t size);

struct evprof_session_stats {
	size_t sz; /* sizeof(struct evprof_session_stats) */
	uint64_t records;
	uint64_t samples;	   /* kept */
	uint64_t samples_filtered; /* outside the process tree, or idle */
	uint64_t lost_records;	   /* PERF_RECORD_LOST records */
	uint64_t lost_events;	   /* sum of their counts */
	uint64_t lost_samples;	   /* sum of PERF_RECORD_LOST_SAMPLES */
	uint64_t throttled;	   /* THROTTLE records */
	uint64_t malformed;	   /* records that failed to decode */
	uint64_t unknown_ids;	   /* READ entries with an undeclared id */
	/*
	 * Task mode: READ values below the last one of their (id, tid): a
	 * reused tid whose FORK was not seen; the value counts as the first
	 * one of a new counter instance.
	 */
	uint64_t counter_resets;
	/*
	 * User stacks. With PERF_SAMPLE_STACK_USER + REGS_USER, samples are
	 * unwound with DWARF CFI at build (x86-64): unwound counts them,
	 * truncated those that stopped at the end of the copy (their stack
	 * gets a root frame "[truncated:stack-copy]"), dropped the copies not
	 * kept.
	 * Deferred user callchains (Linux 6.19): samples that waited for a
	 * CALLCHAIN_DEFERRED, and those the last build left with their
	 * kernel part only (record lost, or a cookie mismatch).
	 */
	uint64_t stacks_unwound;
	uint64_t stacks_truncated;
	uint64_t stacks_dropped;
	uint64_t deferred_samples;
	uint64_t deferred_unstitched;
	uint32_t processes, threads;	/* in the profile the last build made */
	uint64_t first_time, last_time; /* of samples, ns; 0 if none */
	/*
	 * opts.per_cpu: READ values below the last one of their id. A CPU's
	 * counter never restarts, so the record is out of ring order or
	 * corrupt: the value is ignored (no delta, the last value stays).
	 */
	uint64_t reads_rejected;
	/*
	 * Samples whose user callchain the last build cut at a return
	 * address in no executable mapping of its process (or in the kernel
	 * half): frame-pointer walks through code built without them read
	 * garbage from there on. Their stacks keep the frames before it.
	 */
	uint64_t stacks_cut;
	/*
	 * Off-CPU intervals (EVPROF_SESSION_SWITCH_OUT) of the last build's
	 * kept threads: voluntary ones, preempted ones, and those that had
	 * no end to be had (an interval opened again before its switch-in
	 * came: a lost record), which count in neither; and switch-outs of
	 * those threads that came without their cut (a lost sample, or a
	 * throttled group): intervals missing from the profile.
	 */
	uint64_t offcpu_voluntary;
	uint64_t offcpu_preempted;
	uint64_t offcpu_unmatched;
	uint64_t offcpu_unstarted;
	/*
	 * Kept samples of counters attributed by their own samples
	 * (opts.own_counters): values on a stack, no sample of time, so not
	 * in samples. THROTTLE records per counter (index nr_counters: the
	 * sampler's) and of hidden members (CPU time, cuts); throttled counts
	 * them all. The kernel stops a throttled event (since Linux 6.16 its
	 * whole group) until the next tick: what it would have counted then
	 * is missing.
	 */
	uint64_t counter_samples;
	uint64_t throttled_by[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t throttled_hidden;
	/*
	 * Per counter (indexed as throttled_by), what the kept samples carry
	 * and the part of it that threads counted after their last sample of
	 * it (a short task: all it counted), on the "[unsampled]" frame under
	 * each thread: a period too long for the tasks to meet. Over every
	 * part since the last whole build.
	 */
	uint64_t counted[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t unsampled[EVPROF_PROFILE_MAX_COUNTERS];
	/*
	 * Frame-pointer chains with a user stack copy and registers (leaf
	 * recovery): those checked, those whose leaf gained the callers the
	 * frame pointers skip (unwound with the CFI up to the frame BP
	 * stands for) and those where no unwound frame met it (leaf not
	 * recovered: the kernel's chain kept); of the last build's samples.
	 */
	uint64_t leaf_checked;
	uint64_t leaf_gained;
	uint64_t leaf_lost;
	/*
	 * The last build's kept samples (not off-CPU, not "[unsampled]") by
	 * how their user stack ended (enum evprof_stack_end): whole, or cut
	 * short for that cause. stacks_cut and stacks_truncated are parts of
	 * EVPROF_STACK_FRAME_POINTERS and EVPROF_STACK_COPY. The outermost
	 * frame is judged by its CFI through the build's symbolizer: built
	 * without one, only cut chains and limits count.
	 */
	uint64_t stack_ends[EVPROF_STACK_ENDS];
	/*
	 * With EVPROF_STACK_COPY samples: the most stack (bytes above the
	 * sampled SP) one of them had, up to the top of its stack mapping
	 * (opts.stack_top), else the furthest one of their unwindings read
	 * (what the copy needed is at least that). Over every build.
	 */
	uint64_t stack_copy_needed;
	/*
	 * opts.per_cpu: samples that named another task than the one the
	 * CPU's latest switch-in record says runs (none is known from a
	 * switch-out record to the next switch-in), given to that one. Linux
	 * fills a software event's or tracepoint's sample once for all the
	 * events counting it, with the first one's task ids: another
	 * session's, in another pid namespace, numbers them its own way.
	 */
	uint64_t samples_moved;
	/*
	 * opts.per_cpu: reads whose deltas no thread got, each the first of
	 * its CPU after a PERF_RECORD_LOST: the counters of a CPU go from one
	 * thread to the next, and the records that said which ran in the gap
	 * are gone (evprof_session__unattributed() holds them). Not counted:
	 * a read of the task the CPU's latest read was, with no switch-out or
	 * exit counted by the cut members since (it ran all through the gap,
	 * and keeps what the CPU counted there).
	 */
	uint64_t reads_after_lost;
};

/*
 * Says that recording stopped at time_ns (CLOCK_MONOTONIC, the records'
 * clock): off-CPU intervals still open at the build are closed there.
 * Without it, they are closed at the latest time any record carried.
 */
EVPROF_API void evprof_session__end(struct evprof_session *s, uint64_t time_ns);

/*
 * Fills *st (up to st->sz bytes, set by the caller) and sets st->sz to the
 * bytes filled. Returns 0, or -EINVAL for a NULL argument or an st->sz
 * below sizeof(size_t). Which samples the process tree keeps is decided at build
 * (records of different rings arrive out of order): before the first
 * build, samples counts every stored sample and samples_filtered only idle
 * ones, processes and threads are 0.
 */
EVPROF_API int evprof_session__stats(const struct evprof_session *s,
				     struct evprof_session_stats *st);

/*
 * Total delta of counter c (EVPROF_SESSION_CPU_TIME for CPU time,
 * EVPROF_SESSION_SAMPLER for sampler_counter) that the kept samples of
 * thread tid carry (before the first build: every stored sample), over
 * every task that had the tid. Returns 0 when there is none.
 */
EVPROF_API uint64_t evprof_session__thread_total(const struct evprof_session *s,
						 pid_t tid, int counter);

/*
 * Total delta of counter c (as for evprof_session__thread_total) that no
 * kept sample carries: reads of the idle task dropped by exclude_idle
 * (per CPU their deltas are taken all the same) and, after a build, the
 * samples it did not keep (outside the process tree). Returns 0 when
 * there is none.
 *
 * What it makes checkable, after a build: per counter, the thread totals
 * of every thread plus this equal the sum, over the counter's ids, of what
 * their reads said: task mode, per (id, tid) the last value of each
 * counter instance (0 at its start: the thread's creation); per-CPU mode,
 * per id its last accepted value minus 0 (the value when enabled).
 */
EVPROF_API uint64_t evprof_session__unattributed(const struct evprof_session *s,
						 int counter);

/*
 * The sample_regs_user mask DWARF unwinding needs on this architecture
 * (x86-64), or 0 where evprof cannot unwind.
 */
EVPROF_API uint64_t evprof_session__unwind_regs(void);

/*
 * Fills p: its counters (opts order, then sampler_counter), processes and
 * threads that have kept samples, with names and times, every kept sample
 * with its stack, CPU delta and counter deltas. Stacks go root first: the
 * outermost user frame ... the user frame that entered the kernel, then
 * the outermost kernel frame ... the kernel leaf; return addresses (every
 * frame but the first of each context) are looked up as addr - 1.
 * Samples whose callchain ends in PERF_CONTEXT_USER_DEFERRED + cookie get
 * the user ips of the first later CALLCHAIN_DEFERRED of their thread (all
 * records in time order): the same cookie stitches, another one leaves
 * them with their kernel part. Samples with a stack copy get the user part
 * unwound from it instead of the one their callchain has. A thread's
 * counts after its last sample are on its "[unsampled]" frame (see
 * EVPROF_SESSION_CUT).
 * Side-band records and samples are replayed in time order, so every
 * sample sees the maps, names and process tree of its time; an exec starts
 * a new profile process (same pid) named after the new image. Addresses
 * are symbolized once per distinct (mapping, address) through sym (NULL:
 * frames named by lib and address only); an address outside every known
 * mapping becomes a frame named by its address. May be called again (e.g.
 * for another profile). Returns 0 or -errno (-EBUSY after
 * evprof_session__build_until()).
 */
EVPROF_API int evprof_session__build(struct evprof_session *s,
				     struct evprof_profile *p,
				     struct evprof_symbolizer *sym);

/*
 * A build in parts, for recordings whose memory must not grow with their
 * length: builds into p, as evprof_session__build() does, the samples of
 * time up to until_ns that no earlier part built (side-band events up to
 * until_ns replayed first, in time order), then drops them, their deltas,
 * stack copies and the replayed side-band events from the session. What
 * the replay learnt (processes, threads, names, maps, the process tree)
 * and every held cut delta stay for the next part, so each part continues
 * the last: every delta lands in exactly one part. until_ns UINT64_MAX is
 * the last part: held cut deltas go on samples first (each thread's on
 * its frame "[unsampled]", see evprof_session__build()) and everything
 * left is built.
 *
 * p is either the profile the previous part filled (one profile of the
 * whole recording, built in steps) or a new one (a window: the counters,
 * processes, threads and stacks of its own samples); the session keeps no
 * pointer to it past the call but compares the next p with it. Tree
 * membership is decided by the part that takes a sample: build up to a
 * time some margin older than the newest record fed, so that the records
 * of every ring up to until_ns are in; a sample fed late goes to the next
 * part. Off-CPU intervals (EVPROF_SESSION_SWITCH_OUT) and deferred user
 * callchains end after their sample: with them only the last part is
 * possible, -EOPNOTSUPP otherwise. After a part, evprof_session__build()
 * returns -EBUSY, and the stats, thread totals and unattributed sums
 * count every part so far. A thread whose exit is a second older than
 * until_ns is done: it is forgotten (its held cut deltas went out in the
 * part that replayed its exit), with its process once that has no thread
 * left, so that the memory a session holds does not grow with the number
 * of tasks that came and went either (its totals stay: a few words per
 * tid, as many as the tids used). Returns 0 or -errno (-EINVAL, -ENOMEM,
 * -EOPNOTSUPP; after an error p may hold some of the samples).
 */
EVPROF_API int evprof_session__build_until(struct evprof_session *s,
					   struct evprof_profile *p,
					   struct evprof_symbolizer *sym,
					   uint64_t until_ns);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_SESSION_H */
