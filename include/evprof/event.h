/* SPDX-License-Identifier: MIT */
/*
 * Events: specs as perf users type them, attrs, groups of open fds, per-CPU
 * sets of groups, and kernel feature probes. Mechanism only: the caller
 * picks events, sample types and fallbacks.
 */
#ifndef EVPROF_EVENT_H
#define EVPROF_EVENT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <linux/perf_event.h>

#include <evprof/common.h>
#include <evprof/read.h>

#ifdef __cplusplus
extern "C" {
#endif

/* ---- event specs ------------------------------------------------------ */

#define EVPROF_EVENT_NAME_MAX 128

struct evprof_event_spec {
	char name[EVPROF_EVENT_NAME_MAX]; /* as typed, modifiers included */
	struct perf_event_attr attr; /* type, config*, exclude_*, precise_ip */
	bool hw_slot; /* takes a hardware counter when scheduled */
};

/*
 * Parses one event: generic hardware and software names, hardware cache
 * events (L1-dcache-load-misses, ...), tracepoints (sys:name, id read from
 * tracefs), raw (rNNNN), sysfs PMU syntax (pmu/term=val,.../) and, when
 * built with libpfm4, its names; modifiers :u :k :h :p :pp :ppp.
 * Returns 0, -EVPROF_ERR_UNKNOWN_EVENT (a message listing the known names
 * goes to the print callback), -EVPROF_ERR_BAD_SPEC, or -errno.
 */
EVPROF_API int evprof_event_spec__parse(struct evprof_event_spec *spec,
					const char *str);

struct evprof_event_group_range {
	size_t first; /* index into events[] */
	size_t nr;
};

/* A parsed list: "a,{b,c},d" is three groups: {a}, {b,c}, {d}. */
struct evprof_event_list {
	size_t nr_events;
	struct evprof_event_spec *events;
	size_t nr_groups;
	struct evprof_event_group_range *groups;
};

/*
 * Parses a comma separated list in which {..} makes a group; every event
 * outside braces is a group of its own. Returns 0 and a list the caller
 * frees with evprof_event_list__free(), or a negative error as
 * evprof_event_spec__parse().
 */
EVPROF_API int evprof_event_list__parse(struct evprof_event_list **list,
					const char *str);
EVPROF_API void evprof_event_list__free(struct evprof_event_list *list);

/* ---- attrs --------------------------------------------------------------- */

/*
 * Sets every bit libevprof relies on in reads of attr: PERF_FORMAT_GROUP |
 * ID | TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING, and PERF_FORMAT_LOST when
 * the kernel has it (probed). Also sets attr->size.
 */
EVPROF_API void evprof_attr__set_read_format(struct perf_event_attr *attr);

/*
 * Attr flag bits newer than the uapi header we build against. They are set
 * through the u64 at offset 40 (little-endian bitfield order).
 */
#define EVPROF_ATTR_BIT_DEFER_CALLCHAIN 38 /* Linux 6.19 */
#define EVPROF_ATTR_BIT_DEFER_OUTPUT	39 /* Linux 6.19 */
EVPROF_API void evprof_attr__set_bit(struct perf_event_attr *attr,
				     unsigned int bit, bool on);

/*
 * Name of a PMU type: "hardware", "software", "tracepoint", "hw-cache",
 * "raw", "breakpoint", a dynamic PMU's sysfs name ("msr", "cpu_core"), or
 * "pmu-<n>" when sysfs has no such type. Thread-safe; the string lives
 * until the program ends.
 */
EVPROF_API const char *evprof_attr__type_name(uint32_t type);

/* ---- group validation ---------------------------------------------------- */

/*
 * Number of general purpose hardware counters: EVPROF_MAX_GROUP_EVENTS if
 * set, else what the machine tells (x86 CPUID: leaf 0xA, on AMD leaves
 * 0x80000022 and 0x80000001), else 4. *source, when given, receives a
 * static string saying where it came from ("cpuid leaf 0xa", "default").
 */
EVPROF_API unsigned int evprof_pmu_counters(const char **source);

/*
 * Checks that the nr events of a group fit the PMU, per core PMU (a
 * generic event on a hybrid machine on each, see evprof/pmu.h): a trial
 * open of the group pinned on the calling thread decides, once per group
 * shape; where none can be made, the counters of evprof_core_pmus() (fixed
 * counters first, less what the NMI watchdog holds); with
 * EVPROF_MAX_GROUP_EVENTS set, that many hardware events. Software and
 * tracepoint events take no counter. Returns the number of hardware
 * events, or -EVPROF_ERR_GROUP_TOO_BIG after a message naming the group
 * and the numbers, or -EINVAL / -ENOMEM.
 */
EVPROF_API int evprof_group__validate(const struct evprof_event_spec *specs,
				      size_t nr);

/* ---- groups of open fds -------------------------------------------------- */

struct evprof_group;

struct evprof_group_opts {
	size_t sz;	    /* sizeof(struct evprof_group_opts) */
	int *failed_member; /* out: index of the member whose open failed */
	/*
	 * pid is a cgroup directory's fd (PERF_FLAG_PID_CGROUP): the tasks
	 * of that cgroup and its descendants on cpu (which must be >= 0).
	 */
	bool cgroup;
};

/*
 * Opens attrs[0] as leader on (pid, cpu) and attrs[1..nr-1] as members,
 * every one CLOEXEC and with evprof_attr__set_read_format() applied (the
 * caller's attrs are not modified). Records each member's kernel id.
 * Returns the group, or NULL with errno set to the failing open's errno
 * after closing everything opened so far.
 */
EVPROF_API struct evprof_group *
evprof_group__open(const struct perf_event_attr *attrs, size_t nr, pid_t pid,
		   int cpu, const struct evprof_group_opts *opts);

/* Closes every member then the leader, and frees g. Accepts NULL. */
EVPROF_API void evprof_group__free(struct evprof_group *g);

EVPROF_API size_t evprof_group__nr(const struct evprof_group *g);
/* fd of member i (0 = leader); owned by g, valid until close. */
EVPROF_API int evprof_group__fd(const struct evprof_group *g, size_t i);
/* Kernel id of member i (PERF_EVENT_IOC_ID). */
EVPROF_API uint64_t evprof_group__id(const struct evprof_group *g, size_t i);
/* The read_format every member was opened with. */
EVPROF_API uint64_t evprof_group__read_format(const struct evprof_group *g);

/* Enable, disable or reset the whole group. Return 0 or -errno. */
EVPROF_API int evprof_group__enable(struct evprof_group *g);
EVPROF_API int evprof_group__disable(struct evprof_group *g);
EVPROF_API int evprof_group__reset(struct evprof_group *g);

/*
 * Reads the group through member i's fd into *snap. Returns 0, -errno, or
 * -EVPROF_ERR_TRUNCATED on a short read (e.g. a pinned group in error
 * state reads 0 bytes).
 */
EVPROF_API int evprof_group__read(struct evprof_group *g, size_t i,
				  struct evprof_snapshot *snap);

/* ---- per-CPU sets -------------------------------------------------------- */

/*
 * Fills cpus[] with the online CPUs (from /sys/devices/system/cpu/online)
 * in ascending order. Returns how many there are (which may exceed max:
 * call again with a larger array) or -errno.
 */
EVPROF_API int evprof_cpus_online(int *cpus, int max);

/*
 * Fills cpus[] with the possible CPUs (/sys/devices/system/cpu/possible),
 * online or not, in ascending order; as evprof_cpus_online() otherwise.
 * What is indexed by CPU number takes the last one + 1 entries.
 */
EVPROF_API int evprof_cpus_possible(int *cpus, int max);

struct evprof_group_set;

struct evprof_group_set_opts {
	size_t sz;	      /* sizeof(struct evprof_group_set_opts) */
	bool deferred_enable; /* open the leaders disabled; the caller
				 * enables once setup is done */
	int *failed_cpu;      /* out: CPU whose open failed */
	int *failed_member;   /* out: member whose open failed */
	bool cgroup;	      /* pid is a cgroup's fd (evprof_group_opts) */
};

/*
 * Opens the same group on (pid, cpu) for every online CPU. CPUs that are
 * offline at open time (ESRCH/ENODEV) are skipped. On any other failure
 * everything opened is closed and NULL is returned with errno set.
 */
EVPROF_API struct evprof_group_set *
evprof_group_set__open(const struct perf_event_attr *attrs, size_t nr,
		       pid_t pid, const struct evprof_group_set_opts *opts);
EVPROF_API void evprof_group_set__free(struct evprof_group_set *set);
/* Number of groups (CPUs actually opened). */
EVPROF_API size_t evprof_group_set__nr(const struct evprof_group_set *set);
/* Group i, owned by the set; and the CPU it was opened on. */
EVPROF_API struct evprof_group *
evprof_group_set__group(const struct evprof_group_set *set, size_t i);
EVPROF_API int evprof_group_set__cpu(const struct evprof_group_set *set,
				     size_t i);
/* Enables or disables every group; return 0 or the first -errno. */
EVPROF_API int evprof_group_set__enable(struct evprof_group_set *set);
EVPROF_API int evprof_group_set__disable(struct evprof_group_set *set);

/* ---- errors from perf_event_open ---------------------------------------- */

/*
 * Writes to buf a sentence of advice for a perf_event_open failure with
 * errno err on event name (EACCES/EPERM: perf_event_paranoid, CAP_PERFMON;
 * ENOENT/EOPNOTSUPP: no such event or PMU; EINVAL: attr not valid on this
 * kernel; ...). Returns buf.
 */
EVPROF_API const char *evprof_open_advice(int err, const char *name, char *buf,
					  size_t len);

/*
 * True for perf_event_open errnos that mean "this machine has no such event
 * or cannot combine it" (ENOENT, ENODEV, ENXIO, EOPNOTSUPP, EINVAL), as
 * opposed to "not allowed" or "out of resources": a fallback may drop it.
 */
EVPROF_API bool evprof_open_unsupported(int err);

/* ---- kernel feature probes ---------------------------------------------- */

enum evprof_feature {
	EVPROF_FEAT_INHERIT_SAMPLE_READ, /* Linux 6.12 */
	EVPROF_FEAT_DEFER_CALLCHAIN,	 /* Linux 6.19 */
	EVPROF_FEAT_FORMAT_LOST,	 /* Linux 6.0 */
	EVPROF_FEAT_MMAP2_BUILD_ID,	 /* Linux 5.12 */
	EVPROF_FEAT_CLOCKID,		 /* Linux 4.1 */
	EVPROF_FEAT_CONTEXT_SWITCH,	 /* Linux 4.3 */
	EVPROF_FEAT_HW_PMU,		 /* a hardware cycles counter opens */
	EVPROF_FEAT_KERNEL_SAMPLES,	 /* kernel profiling permitted */
	EVPROF_FEAT_SYSTEM_WIDE,	 /* pid == -1 events permitted */
	EVPROF_FEAT_SAMPLE_CGROUP,	 /* Linux 5.7: cgroup ids, records */
	EVPROF_FEAT__COUNT
};

/* Named _result: C++ -Wshadow refuses a struct named like the function. */
struct evprof_probe_result {
	const char *name; /* short name, e.g. "inherit+sample_read" */
	bool yes;
	int err;       /* errno of the probe's open when no, else 0 */
	char why[256]; /* one sentence: what was tried and what happened */
};

/*
 * Runs probe f the first time it is asked for (thread-safe) and returns
 * the cached answer, which lives until the program ends (NULL for an f
 * out of range).
 */
EVPROF_API const struct evprof_probe_result *
evprof_probe(enum evprof_feature f);

/* perf_event_paranoid, or INT_MIN when unreadable. */
EVPROF_API int evprof_paranoid(void);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_EVENT_H */
