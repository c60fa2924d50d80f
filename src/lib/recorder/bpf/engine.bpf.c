// SPDX-License-Identifier: GPL-2.0 OR MIT
/*
 * The in-kernel engine: per-CPU counting events read at every sample and
 * every context switch; each delta goes to the thread that ran (at a
 * switch to prev, at a sample to current), and samples aggregate per
 * (pid, tid, user stack, kernel stack) with their sample count, CPU time,
 * every counter's sum and the latest one's cgroup. The loader is
 * engine_bpf.c. GPL for the helpers it calls (bpf_perf_event_read_value,
 * bpf_get_stack); MIT like the rest of evprof.
 */
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>
#include <bpf/bpf_core_read.h>

#include "engine.h"

char LICENSE[] SEC("license") = "Dual MIT/GPL";

/*
 * Only what is read of the kernel's task_struct; CO-RE relocates the
 * offsets against the running kernel's BTF at load.
 */
struct ns_common {
	unsigned int inum;
} __attribute__((preserve_access_index));

struct pid_namespace {
	struct ns_common ns;
} __attribute__((preserve_access_index));

struct upid {
	int nr;
	struct pid_namespace *ns;
} __attribute__((preserve_access_index));

struct pid {
	unsigned int level;
	struct upid numbers[1];
} __attribute__((preserve_access_index));

struct signal_struct {
	struct {
		int counter;
	} live; /* threads not yet past do_exit() */
} __attribute__((preserve_access_index));

struct task_struct {
	unsigned int __state;
	int pid;
	int tgid;
	struct pid *thread_pid;
	struct signal_struct *signal;
} __attribute__((preserve_access_index));

/* Before Linux 5.14 the state was a long named state. */
struct task_struct___old {
	long state;
} __attribute__((preserve_access_index));

/* include/linux/sched.h: a task at its last switch-out. */
#define TASK_DEAD 0x80

/* Levels of nested pid namespaces searched for ours. */
#define NS_LEVELS 8

/* Set by the loader before load. */
const volatile __u32 nr_counters = 0;
/*
 * Slots that count context switches (bit k: slot k). The kernel adds a
 * switch to them after the sched_switch tracepoint, in
 * perf_event_task_sched_out(), so the switch program gives it to prev
 * itself, as a task's own count has it (its switches out): left to the
 * next read it would go to next, and to prev again where a counter's own
 * sample reads it in between.
 */
const volatile __u32 switch_slots = 0;
const volatile __u8 follow_all = 0; /* -a: every process but idle */
const volatile __u8 kernel_stacks = 1;
/*
 * Recording from inside a pid namespace: targets, side-band records and
 * aggregates use its pids (the nsfs dev and inode of /proc/self/ns/pid),
 * the filter below the kernel's.
 */
const volatile __u8 ns_mode = 0;
const volatile __u64 ns_dev = 0, ns_ino = 0;
/*
 * -a --cgroup: only the tasks of the cgroups (v2) at the first nr_cgroups
 * slots of the cgroups map and of their descendants.
 */
const volatile __u32 nr_cgroups = 0;

struct {
	__uint(type, BPF_MAP_TYPE_CGROUP_ARRAY);
	__uint(max_entries, EVPROF_BPF_MAX_CGROUPS);
	__type(key, __u32);
	__type(value, __u32);
} cgroups SEC(".maps");

/* Counting event of counter k on CPU c at index c * MAX + k. */
struct {
	__uint(type, BPF_MAP_TYPE_PERF_EVENT_ARRAY);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, sizeof(__u32));
} counters SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct evprof_bpf_cpu);
} cpus SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, EVPROF_BPF_STAT__COUNT);
	__type(key, __u32);
	__type(value, __u64);
} stats SEC(".maps");

/* ns_mode: the targets by their pids in that namespace, until seen. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 1024);
	__type(key, __u32);
	__type(value, __u8);
} ns_pids SEC(".maps");

/*
 * Processes followed (kernel tgid -> 1), grown at fork, shrunk when the
 * last thread of one switches out for good. This map and the next
 * allocate as they come, as the sets below do.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32);
	__type(value, __u8);
} pids SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u32); /* tid */
	__type(value, struct evprof_bpf_thread);
} threads SEC(".maps");

/*
 * Two sets of aggregates and of the stacks they name: the programs add to
 * set gen, user space reads and clears the other. A window (continuous
 * mode) flips gen, then waits until no program can still be adding to
 * the old set before it reads it (engine_bpf.c says how), so no entry is
 * ever read or deleted while a program adds to it. Set 0 is declared
 * here; the loader makes set 1, like it, at the first window, so a
 * recording without windows never pays for it. Entries are allocated as
 * they come: a set costs what it holds (preallocated, one set of 262144
 * took 40 MiB and 8 ms of the kernel's time to create).
 */
__u32 gen = 0;

struct aggr_set {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 262144);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, struct evprof_bpf_key);
	__type(value, struct evprof_bpf_value);
} aggr0 SEC(".maps");

/* Distinct stacks by hash, allocated as they come (1 KiB each). */
struct stack_set {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, __u64);
	__type(value, struct evprof_bpf_stack);
} stacks0 SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct aggr_set);
} aggrs SEC(".maps") = {.values = {&aggr0}};

struct {
	__uint(type, BPF_MAP_TYPE_ARRAY_OF_MAPS);
	__uint(max_entries, 2);
	__type(key, __u32);
	__array(values, struct stack_set);
} stack_sets SEC(".maps") = {.values = {&stacks0}};

/* Where a stack is taken before it is hashed. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, struct evprof_bpf_stack);
} scratch SEC(".maps");

static void count(__u32 stat)
{
	__u64 *v = bpf_map_lookup_elem(&stats, &stat);

	if (v)
		(*v)++;
}

/* The current task as the kernel and as the recording name it. */
struct ids {
	__u32 hpid, htid; /* the kernel's (initial namespace) */
	__u32 pid, tid;	  /* the recording's */
};

/*
 * Fills x for the current task; returns 0, or -1 for a task outside the
 * recording's pid namespace (ns_mode), which is never followed.
 */
static int current_ids(struct ids *x)
{
	__u64 id = bpf_get_current_pid_tgid();
	struct bpf_pidns_info ns;

	x->hpid = x->pid = id >> 32;
	x->htid = x->tid = (__u32)id;
	if (!ns_mode)
		return 0;
	if (bpf_get_ns_current_pid_tgid(ns_dev, ns_ino, &ns, sizeof(ns))) {
		/*
		 * A task past its release (its last switch-out) has no pid
		 * namespace any more: its record, made at its fork or an
		 * earlier event, keeps its ids.
		 */
		struct evprof_bpf_thread *t =
		    bpf_map_lookup_elem(&threads, &x->htid);

		if (!t)
			return -1;
		x->pid = t->last.pid;
		x->tid = t->last.tid;
		return 0;
	}
	x->pid = ns.tgid;
	x->tid = ns.pid;
	return 0;
}

/* Task t's pid in the recording's namespace, or 0 when it has none. */
static __u32 ns_pid_of(struct task_struct *t)
{
	struct pid *p = BPF_CORE_READ(t, thread_pid);
	unsigned int level;

	if (!p)
		return 0;
	level = BPF_CORE_READ(p, level);
	for (__u32 i = 0; i < NS_LEVELS; i++) {
		struct upid u;

		if (i > level)
			break;
		if (bpf_core_read(&u, sizeof(u), &p->numbers[i]))
			return 0;
		if (BPF_CORE_READ(u.ns, ns.inum) == ns_ino)
			return (__u32)u.nr;
	}
	return 0;
}

/*
 * Whether the current task is in one of the cgroups or below one: the
 * kernel compares its cgroup v2's ancestor at each one's level with it
 * (task_under_cgroup_hierarchy()), so a child cgroup made during the
 * recording counts too. Where none is given, every task is.
 */
static int in_cgroups(void)
{
	if (!nr_cgroups)
		return 1;
	for (__u32 i = 0; i < EVPROF_BPF_MAX_CGROUPS; i++) {
		if (i >= nr_cgroups)
			break;
		if (bpf_current_task_under_cgroup(&cgroups, i) == 1)
			return 1;
	}
	return 0;
}

/*
 * Whether the current task's process is followed. In ns_mode a target
 * joins the kernel-pid set the first time it runs here (a sample, its
 * switch-out or its fork: each runs in its context).
 */
static int followed(const struct ids *x)
{
	__u8 one = 1;

	if (!x->hpid)
		return 0; /* the idle task */
	/*
	 * Outside the cgroups (-a only): its slices and samples are read
	 * and dropped, as an unfollowed process's are.
	 */
	if (!in_cgroups())
		return 0;
	/*
	 * A thread with a record (only followed ones get one) stays followed
	 * to its final switch-out though its process left the pid set:
	 * signal->live is 0 once the last thread entered do_exit(), while
	 * others may still be on their way out.
	 */
	if (follow_all || bpf_map_lookup_elem(&pids, &x->hpid) ||
	    bpf_map_lookup_elem(&threads, &x->htid))
		return 1;
	if (!ns_mode || !bpf_map_lookup_elem(&ns_pids, &x->pid))
		return 0;
	if (bpf_map_update_elem(&pids, &x->hpid, &one, BPF_ANY))
		count(EVPROF_BPF_STAT_PID_FULL);
	return 1;
}

/*
 * Reads every counter of this CPU: on a primed CPU, fills d with what
 * each counted since the latest read (scaled by enabled / running when
 * it was multiplexed) and returns 1; else takes the baseline, returns 0.
 */
static int take(struct evprof_bpf_cpu *c, __u64 now, __u64 *cpu_ns, __u64 *d)
{
	__u32 base = bpf_get_smp_processor_id() * EVPROF_BPF_MAX_COUNTERS;
	int primed = c->primed;

	for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++) {
		struct bpf_perf_event_value v;
		__u64 dv, de, dr;

		d[k] = 0;
		if (k >= nr_counters)
			break;
		if (bpf_perf_event_read_value(&counters, base + k, &v,
					      sizeof(v))) {
			count(EVPROF_BPF_STAT_READ_FAILED);
			continue;
		}
		/*
		 * Below a switch taken ahead (switch_slots): it has not come
		 * yet (a read in between, an NMI's), and stays taken.
		 */
		dv = v.counter >= c->value[k] ? v.counter - c->value[k] : 0;
		de = v.enabled - c->enabled[k];
		dr = v.running - c->running[k];
		if (v.counter >= c->value[k] || !(switch_slots >> k & 1))
			c->value[k] = v.counter;
		c->enabled[k] = v.enabled;
		c->running[k] = v.running;
		if (!primed)
			continue;
		if (dr < de) {
			if (!dr) {
				if (dv)
					count(EVPROF_BPF_STAT_NOT_RUNNING);
				dv = 0;
			} else {
				count(EVPROF_BPF_STAT_SCALED);
				/* Exact while the product fits. */
				dv = dv >> 32 || de >> 32 ? dv / dr * de
							  : dv * de / dr;
			}
		}
		d[k] = dv;
	}
	*cpu_ns = now - c->time;
	c->time = now;
	c->primed = 1;
	return primed;
}

/* The record of the current task (by kernel tid), made when missing. */
static struct evprof_bpf_thread *thread_of(const struct ids *x)
{
	struct evprof_bpf_thread *t = bpf_map_lookup_elem(&threads, &x->htid);
	struct evprof_bpf_thread zero = {
	    .last = {.pid = x->pid,
		     .tid = x->tid,
		     .ustack = EVPROF_BPF_NO_STACK,
		     .kstack = EVPROF_BPF_NO_STACK},
	};

	if (t)
		return t;
	if (bpf_map_update_elem(&threads, &x->htid, &zero, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(&threads, &x->htid)) {
		count(EVPROF_BPF_STAT_THREAD_FULL);
		return NULL;
	}
	return bpf_map_lookup_elem(&threads, &x->htid);
}

/*
 * The set the programs add to now: read once per program run and passed
 * to set_of(), so that a run adds to one set only (its sums and its
 * stacks alike) even when a window flips gen meanwhile.
 */
static __always_inline __u32 set_now(void)
{
	return *(volatile __u32 *)&gen & 1;
}

/* The maps of set g; NULL when missing (never: the loader fills both). */
static __always_inline void *set_of(void *sets, __u32 g)
{
	return bpf_map_lookup_elem(sets, &g);
}

static struct evprof_bpf_value *entry_of(void *aggr,
					 const struct evprof_bpf_key *key)
{
	struct evprof_bpf_value *v = bpf_map_lookup_elem(aggr, key);
	struct evprof_bpf_value zero = {};

	if (v)
		return v;
	bpf_map_update_elem(aggr, key, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(aggr, key);
}

/*
 * Moves what thread record t (of kernel tid) counted since its latest
 * sample into its "[unsampled]" aggregate in aggr (no code it showed
 * caused it: not the stack of its last sample, nor its exit path), and
 * drops the record. cgroup: the thread's (0: not known here), which a
 * thread never sampled has from nowhere else.
 */
static void settle(void *aggr, struct evprof_bpf_thread *t, __u32 tid,
		   __u64 cgroup)
{
	struct evprof_bpf_key k = {.pid = t->last.pid,
				   .tid = t->last.tid,
				   .ustack = EVPROF_BPF_UNSAMPLED,
				   .kstack = EVPROF_BPF_UNSAMPLED};
	struct evprof_bpf_value *v = entry_of(aggr, &k);

	if (v) {
		v->cpu_ns += t->cpu_ns;
		for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++)
			v->counts[k] += t->counts[k];
		if (t->time > v->time)
			v->time = t->time;
		if (cgroup)
			v->cgroup = cgroup;
	} else {
		count(EVPROF_BPF_STAT_AGGR_FULL);
	}
	bpf_map_delete_elem(&threads, &tid);
}

/*
 * The hash of the stack the sample interrupted (user or kernel part, by
 * flags), kept in the stacks map; EVPROF_BPF_NO_STACK when there is none,
 * EVPROF_BPF_LOST_STACK counted in stat when it cannot be kept.
 */
static __u64 stack_of(void *ctx, void *stacks, __u64 flags, __u32 stat)
{
	struct evprof_bpf_stack *st;
	__u32 zero = 0;
	__u64 h = 14695981039346656037ULL; /* FNV-1a */
	long len;

	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st)
		return EVPROF_BPF_NO_STACK;
	/* Zeroes what follows the last frame. */
	len = bpf_get_stack(ctx, st->ips, sizeof(st->ips), flags);
	if (len <= 0)
		return EVPROF_BPF_NO_STACK; /* e.g. a user-mode kernel part */
	for (__u32 i = 0; i < EVPROF_BPF_STACK_DEPTH; i++) {
		if (i >= len / 8)
			break;
		h = (h ^ st->ips[i]) * 1099511628211ULL;
	}
	if (h <= EVPROF_BPF_UNSAMPLED)
		h += 3;
	if (!bpf_map_lookup_elem(stacks, &h) &&
	    bpf_map_update_elem(stacks, &h, st, BPF_NOEXIST) &&
	    !bpf_map_lookup_elem(stacks, &h)) {
		count(stat);
		return EVPROF_BPF_LOST_STACK;
	}
	return h;
}

/*
 * Slots whose counts wait for their own samples (bit k: slot k), set by
 * the loader before it attaches the samplers; the others ride on the
 * sampling event's samples.
 */
__u32 own_slots = 0;

/*
 * A sample: of the sampling event, or of counter slot k on its own (its
 * attach cookie k + 1). Every count read goes to the thread's charges
 * first; a sample of the sampling event takes its CPU time and the
 * charges of every slot that rides along (one sample more), a counter's
 * own sample that counter's charge alone, so each lands on the stack of
 * its own events.
 */
SEC("perf_event")
int on_sample(void *ctx)
{
	__u64 d[EVPROF_BPF_MAX_COUNTERS], cpu_ns, now = bpf_ktime_get_ns();
	struct evprof_bpf_key key = {};
	struct evprof_bpf_thread *t;
	struct ids x;
	struct evprof_bpf_value *v;
	struct evprof_bpf_cpu *c;
	void *aggr, *stacks;
	__u32 zero = 0, g;
	__u64 slot = 0, mine;

	/* Linux 5.15; before it the loader asks for no counter samples. */
	if (bpf_core_enum_value_exists(enum bpf_func_id,
				       BPF_FUNC_get_attach_cookie))
		slot = bpf_get_attach_cookie(ctx);
	mine = slot ? 1ULL << ((slot - 1) & 63) : ~(__u64)own_slots;
	c = bpf_map_lookup_elem(&cpus, &zero);
	g = set_now();
	aggr = set_of(&aggrs, g);
	stacks = set_of(&stack_sets, g);
	if (!c || !aggr || !stacks)
		return 0;
	if (c->busy) {
		/* An NMI inside the switch program: its read is half done. */
		count(EVPROF_BPF_STAT_NESTED);
		return 0;
	}
	if (current_ids(&x) || !followed(&x))
		return 0;
	key.pid = x.pid;
	key.tid = x.tid;
	if (!take(c, now, &cpu_ns, d)) {
		count(EVPROF_BPF_STAT_LATE_BASELINE);
		return 0;
	}
	key.ustack = stack_of(ctx, stacks, BPF_F_USER_STACK,
			      EVPROF_BPF_STAT_USTACK_LOST);
	key.kstack = kernel_stacks
			 ? stack_of(ctx, stacks, 0, EVPROF_BPF_STAT_KSTACK_LOST)
			 : EVPROF_BPF_NO_STACK;
	v = entry_of(aggr, &key);
	t = thread_of(&x);
	if (!v) {
		/* The thread keeps the charges for its next sample. */
		count(EVPROF_BPF_STAT_AGGR_FULL);
		if (!t)
			return 0;
		t->time = now;
		t->cpu_ns += cpu_ns;
		for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++)
			t->counts[k] += d[k];
		return 0;
	}
	/*
	 * Only this CPU touches this thread's entries while it runs here,
	 * and the programs do not nest (the switch runs with interrupts
	 * off): plain adds.
	 */
	v->time = now;
	if (!t) {
		/* No record to hold charges in: all of them here. */
		v->cpu_ns += cpu_ns;
		for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++)
			v->counts[k] += d[k];
	} else {
		t->cpu_ns += cpu_ns;
		for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++) {
			t->counts[k] += d[k];
			if (!(mine >> k & 1))
				continue;
			v->counts[k] += t->counts[k];
			t->counts[k] = 0;
		}
		t->time = now;
	}
	/*
	 * Who ran it: the thread's cgroup is its latest sample's, a
	 * counter's own too (a thread may have no other).
	 */
	v->cgroup = bpf_get_current_cgroup_id();
	if (slot) {
		count(EVPROF_BPF_STAT_OWN_SAMPLES);
		return 0;
	}
	v->samples++;
	if (t) {
		v->cpu_ns += t->cpu_ns;
		t->cpu_ns = 0;
		t->last = key;
	}
	count(EVPROF_BPF_STAT_SAMPLES);
	return 0;
}

/* Whether task p switches out for the last time (do_task_dead()). */
static int dead(struct task_struct *p)
{
	if (bpf_core_field_exists(p->__state))
		return BPF_CORE_READ(p, __state) == TASK_DEAD;
	return BPF_CORE_READ((struct task_struct___old *)p, state) == TASK_DEAD;
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, _Bool preempt, struct task_struct *prev,
	     struct task_struct *next)
{
	__u64 d[EVPROF_BPF_MAX_COUNTERS], cpu_ns, now = bpf_ktime_get_ns();
	struct evprof_bpf_thread *t;
	struct evprof_bpf_cpu *c;
	struct ids x;
	void *aggr;
	__u32 zero = 0;
	int last = dead(prev);

	c = bpf_map_lookup_elem(&cpus, &zero);
	aggr = set_of(&aggrs, set_now());
	if (!c || !aggr)
		return 0;
	c->busy = 1;
	if (!take(c, now, &cpu_ns, d)) {
		count(EVPROF_BPF_STAT_LATE_BASELINE);
		goto out;
	}
	/*
	 * This switch, which the counters are about to count: prev's, but
	 * for a dead task's last one, which perf's task counters (gone by
	 * then) do not count either.
	 */
	for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++) {
		if (k >= nr_counters)
			break;
		if (switch_slots >> k & 1) {
			d[k] += !last;
			c->value[k]++;
		}
	}
	/* Called before the switch: prev is still the current task. */
	if (current_ids(&x) || !followed(&x))
		goto out;
	t = thread_of(&x);
	if (t) {
		t->time = now;
		t->cpu_ns += cpu_ns;
		for (__u32 k = 0; k < EVPROF_BPF_MAX_COUNTERS; k++)
			t->counts[k] += d[k];
	}
	if (!last)
		goto out;
	/*
	 * Its last slice: it goes to the set of now (the window the thread
	 * ends in), and the thread map keeps only live threads. The pid set
	 * keeps only live processes: every thread of this one has passed
	 * do_exit() once signal->live is 0 (a pid reused later is a new
	 * process, followed or not by its fork).
	 */
	if (t)
		settle(aggr, t, x.htid, bpf_get_current_cgroup_id());
	if (!follow_all && !BPF_CORE_READ(prev, signal, live.counter))
		bpf_map_delete_elem(&pids, &x.hpid);
out:
	c->busy = 0;
	return 0;
}

/* Makes map m allocate once on this CPU (see baseline). */
static __always_inline void warm(void *m, const void *key, const void *value)
{
	if (m && !bpf_map_update_elem(m, key, value, BPF_NOEXIST))
		bpf_map_delete_elem(m, key);
}

/*
 * Run on every CPU by the loader at enable and when it makes set 1
 * (BPF_F_TEST_RUN_ON_CPU): takes the CPU's baseline (once), and makes
 * each map of the sets there allocate once here.
 * The kernel's BPF allocator (Linux 6.1+) starts a CPU's cache for a map
 * without preallocation with one element when they are over 256 bytes
 * (a stack), and refills it from irq_work after an allocation takes it:
 * a first sample with a new user and a new kernel stack found it empty
 * for the second (-ENOMEM: a kernel stack lost at start in most runs).
 * The refill this allocation starts is done before the first sample.
 */
SEC("raw_tp")
int baseline(void *ctx)
{
	__u64 d[EVPROF_BPF_MAX_COUNTERS], cpu_ns;
	__u64 h = EVPROF_BPF_LOST_STACK; /* never a stack's key */
	struct evprof_bpf_key idle = {}; /* the idle task: never followed */
	struct evprof_bpf_value v = {};
	struct evprof_bpf_stack *st;
	struct evprof_bpf_cpu *c;
	__u32 zero = 0;

	c = bpf_map_lookup_elem(&cpus, &zero);
	if (c && !c->primed)
		take(c, bpf_ktime_get_ns(), &cpu_ns, d);
	st = bpf_map_lookup_elem(&scratch, &zero);
	if (!st)
		return 0;
	for (__u32 g = 0; g < 2; g++) {
		warm(bpf_map_lookup_elem(&stack_sets, &g), &h, st);
		warm(bpf_map_lookup_elem(&aggrs, &g), &idle, &v);
	}
	return 0;
}

/*
 * A new task: a child process of a followed one is followed; a pid
 * reused by an unrelated process is not. A thread record left by an
 * earlier task of the same tid (one whose last switch-out was missed) is
 * settled into the set of now.
 */
SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	__u32 pid = child->tgid, tid = child->pid;
	struct evprof_bpf_thread *t;
	void *aggr = set_of(&aggrs, set_now());
	struct ids x;
	__u8 one = 1;

	/* Called in the parent's context. */
	if (!follow_all && pid == tid) {
		if (!current_ids(&x) && followed(&x)) {
			if (bpf_map_update_elem(&pids, &pid, &one, BPF_ANY))
				count(EVPROF_BPF_STAT_PID_FULL);
		} else {
			bpf_map_delete_elem(&pids, &pid);
		}
	}
	t = bpf_map_lookup_elem(&threads, &tid);
	if (t && aggr)
		settle(aggr, t, tid, 0);
	/*
	 * In a nested pid namespace the child's ids are read now: a task too
	 * short to be sampled is seen again only past its release.
	 */
	if (ns_mode && !current_ids(&x) && followed(&x)) {
		struct evprof_bpf_thread rec = {
		    .last = {.pid = x.pid,
			     .tid = ns_pid_of(child),
			     .ustack = EVPROF_BPF_NO_STACK,
			     .kstack = EVPROF_BPF_NO_STACK},
		};

		if (pid == tid)
			rec.last.pid = rec.last.tid;
		if (rec.last.tid &&
		    bpf_map_update_elem(&threads, &tid, &rec, BPF_ANY))
			count(EVPROF_BPF_STAT_THREAD_FULL);
	}
	return 0;
}
