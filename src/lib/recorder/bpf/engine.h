/* SPDX-License-Identifier: MIT */
/*
 * What the in-kernel engine (engine.bpf.c) and its loader (engine_bpf.c)
 * share: map keys and values, the loss counters. Compiled by both clang
 * -target bpf and the host compiler, so only fixed-size types.
 */
#ifndef EVPROF_BPF_ENGINE_SHARED_H
#define EVPROF_BPF_ENGINE_SHARED_H

#include <linux/types.h>

/*
 * Counts one recording may read per CPU (besides CPU time): the user's
 * counters, then the sampling event's own when it counts no time.
 */
#define EVPROF_BPF_MAX_COUNTERS 9
/* Frames bpf_get_stack() keeps (kernel.perf_event_max_stack is 127). */
#define EVPROF_BPF_STACK_DEPTH 127
/* Cgroups one recording keeps to (the CLI's --cgroup takes as many). */
#define EVPROF_BPF_MAX_CGROUPS 64
/* A stack that was not taken (a user-mode sample's kernel stack). */
#define EVPROF_BPF_NO_STACK 0
/* A stack the stack map could not keep (full, or no room): counted. */
#define EVPROF_BPF_LOST_STACK 1
/* Both stacks of the key that sums what a thread counted after its last
 * sample: no code caused it that a stack could show ("[unsampled]"). */
#define EVPROF_BPF_UNSAMPLED 2

/*
 * Stacks are keyed by a 64-bit hash of their addresses, computed in BPF:
 * the kernel's STACK_TRACE map keys by a 32-bit hash modulo its size and
 * drops a stack whose bucket holds another (-EEXIST: 5% of the samples of
 * a 1 s system-wide recording at 16384 entries).
 */
struct evprof_bpf_stack {
	__u64 ips[EVPROF_BPF_STACK_DEPTH]; /* leaf first, 0 after the last */
};

/* One aggregate: a thread on a pair of stacks. */
struct evprof_bpf_key {
	__u32 pid, tid;
	__u64 ustack, kstack; /* stack hashes, or EVPROF_BPF_*_STACK */
};

struct evprof_bpf_value {
	__u64 samples;
	__u64 cpu_ns;
	__u64 time; /* CLOCK_MONOTONIC of the latest sample */
	/*
	 * The cgroup (v2 id, as PERF_SAMPLE_CGROUP carries it) of the latest
	 * sample; 0 in the "[unsampled]" entries.
	 */
	__u64 cgroup;
	__u64 counts[EVPROF_BPF_MAX_COUNTERS];
};

/*
 * A thread's charges since its latest sample (what it counted up to its
 * switch-out after that sample), held for its next sample; at the end
 * user space adds what is left to the entry of its latest sample.
 */
struct evprof_bpf_thread {
	__u64 time; /* CLOCK_MONOTONIC of the latest charge */
	__u64 cpu_ns;
	__u64 counts[EVPROF_BPF_MAX_COUNTERS];
	struct evprof_bpf_key last; /* ustack/kstack NO_STACK: no sample */
};

/* Per CPU: the values at the latest read, to take deltas from. */
struct evprof_bpf_cpu {
	__u64 time;
	__u64 value[EVPROF_BPF_MAX_COUNTERS];
	__u64 enabled[EVPROF_BPF_MAX_COUNTERS];
	__u64 running[EVPROF_BPF_MAX_COUNTERS];
	__u32 primed; /* a baseline was taken */
	__u32 busy;   /* the switch program runs: a sample nested in it */
};

/* Loss and event counters, one per CPU each (stats map index). */
enum evprof_bpf_stat {
	EVPROF_BPF_STAT_SAMPLES,     /* samples aggregated */
	EVPROF_BPF_STAT_USTACK_LOST, /* user stacks not kept (-EEXIST...) */
	EVPROF_BPF_STAT_KSTACK_LOST, /* kernel stacks not kept */
	EVPROF_BPF_STAT_AGGR_FULL,   /* samples lost: aggregate map full */
	EVPROF_BPF_STAT_THREAD_FULL, /* slices lost: thread map full */
	EVPROF_BPF_STAT_PID_FULL,    /* processes not followed: pid set full */
	EVPROF_BPF_STAT_READ_FAILED, /* counter reads that failed */
	EVPROF_BPF_STAT_NESTED,	     /* samples inside the switch program */
	EVPROF_BPF_STAT_SCALED,	     /* deltas scaled (multiplexed) */
	EVPROF_BPF_STAT_NOT_RUNNING, /* deltas of a counter that never ran */
	EVPROF_BPF_STAT_LATE_BASELINE, /* CPUs primed by an event, not enable */
	EVPROF_BPF_STAT_OWN_SAMPLES,   /* samples of counters on their own */
	EVPROF_BPF_STAT__COUNT
};

#endif /* EVPROF_BPF_ENGINE_SHARED_H */
