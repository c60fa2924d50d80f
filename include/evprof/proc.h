/* SPDX-License-Identifier: MIT */
/*
 * Reading a live process from /proc: its memory mappings, threads and
 * names. Everything read here is untrusted text: malformed input gives an
 * error, never a read past its end. A process that does not exist, or
 * exits while it is being read, gives -ESRCH.
 */
#ifndef EVPROF_PROC_H
#define EVPROF_PROC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

/* evprof_map.prot bits, from the "rwxp" column. */
enum evprof_map_prot {
	EVPROF_MAP_READ = 1u << 0,
	EVPROF_MAP_WRITE = 1u << 1,
	EVPROF_MAP_EXEC = 1u << 2,
	EVPROF_MAP_SHARED = 1u << 3, /* 's' (else 'p', private) */
};

/* evprof_map.flags bits, derived from the path column. */
enum evprof_map_flags {
	EVPROF_MAP_ANON = 1u << 0,    /* no path at all */
	EVPROF_MAP_SPECIAL = 1u << 1, /* "[vdso]", "[stack]", "[heap]", ... */
	EVPROF_MAP_DELETED = 1u
			     << 2, /* " (deleted)" suffix, removed from path */
};

/* One line of /proc/PID/maps. */
struct evprof_map {
	uint64_t start; /* first address */
	uint64_t end;	/* one past the last address */
	uint64_t pgoff; /* file offset of start */
	uint64_t inode;
	uint32_t dev_major;
	uint32_t dev_minor;
	uint32_t prot;	/* EVPROF_MAP_READ | ... */
	uint32_t flags; /* EVPROF_MAP_ANON | ... */
	/*
	 * NUL-terminated; "" for anonymous mappings. The kernel escapes a
	 * newline in a file name as "\012"; that text is kept as it is.
	 * Owned by the parser: valid only during the callback.
	 */
	const char *path;
};

/*
 * Called once per mapping, in file order. Returning a negative value stops
 * the walk, and the parse/read function returns that value.
 */
typedef int (*evprof_map_fn_t)(const struct evprof_map *map, void *ctx);

/*
 * Parses len bytes of /proc/PID/maps text (need not be NUL-terminated;
 * lines of any length; the last line may lack its newline) and calls fn
 * for each mapping. Returns the number of mappings, -EVPROF_ERR_MALFORMED
 * for a line that does not have the kernel's layout (after calling fn for
 * the lines before it), -ENOMEM, or fn's negative return.
 */
EVPROF_API int evprof_maps__parse(const char *text, size_t len,
				  evprof_map_fn_t fn, void *ctx);

/*
 * Reads /proc/PID/maps (pid 0: the calling process) and parses it as
 * evprof_maps__parse() does. Returns the number of mappings, -ESRCH when
 * the process does not exist or exited while being read, -EFBIG when the
 * text exceeds 256 MiB, or another -errno.
 */
EVPROF_API int evprof_maps__read(int pid, evprof_map_fn_t fn, void *ctx);

/*
 * Lists the thread ids in /proc/PID/task (pid 0: the calling process),
 * in directory order. On success *tids is a malloc'ed array owned by the
 * caller (free() it) and the return value is its length (>= 1 for a live
 * process). Returns -ESRCH when the process does not exist, or -errno;
 * *tids is then NULL.
 */
EVPROF_API int evprof_proc__read_tids(int pid, int **tids);

/*
 * Reads the name of thread tid of process pid (/proc/PID/task/TID/comm),
 * or of the process itself when tid <= 0 (/proc/PID/comm), into buf
 * without the trailing newline, NUL-terminated and truncated to len - 1.
 * Returns the name's length or -ESRCH (no such process or thread), -EINVAL
 * (len == 0), or -errno.
 */
EVPROF_API int evprof_proc__read_comm(int pid, int tid, char *buf, size_t len);

/*
 * The pid, as this process sees it, of the process that the pid namespace
 * at ns_path (e.g. "/proc/HOSTPID/ns/pid", a container's) calls nspid:
 * the one whose own namespace it is and whose last NSpid entry in
 * /proc/PID/status is nspid. Returns it, -ESRCH when none is, or -errno
 * (ns_path unreadable: -ENOENT, -EACCES).
 */
EVPROF_API int evprof_proc__ns_pid(int nspid, const char *ns_path);

/*
 * Task tid of process pid as its own (innermost) pid namespace numbers
 * them, a container's view: the last entries of the NStgid and NSpid
 * lines of /proc/PID/task/TID/status. Returns 1 with *ns_pid and *ns_tid
 * set when that namespace is not the reader's, 0 when it is, or -errno
 * (-ESRCH: gone).
 */
EVPROF_API int evprof_proc__ns_ids(int pid, int tid, int *ns_pid, int *ns_tid);

/* What of the host's view this process lacks, as inside a container. */
struct evprof_confinement {
	size_t sz; /* sizeof(struct evprof_confinement) */
	/*
	 * A pid namespace of its own: samples of the tasks outside it carry
	 * pid 0, the idle task's, and pids name only this namespace's.
	 */
	bool own_pid_ns;
	/*
	 * A cgroup namespace of its own, and no mount of the hierarchy
	 * above it (the node's /sys/fs/cgroup bound in): cgroup paths are
	 * relative to it.
	 */
	bool own_cgroup_ns;
	/* /proc is another pid namespace's: its pids are not the kernel's. */
	bool foreign_proc;
	/*
	 * A seccomp filter is on (Seccomp: 2 in /proc/self/status): container
	 * runtimes' default ones may refuse perf_event_open and bpf.
	 */
	bool seccomp_filter;
};

/*
 * Fills *c (c->sz set by the caller; an older, smaller struct gets the
 * fields it has) for this process: a namespace is its own when it is not
 * the kernel's first. Returns 0, -EINVAL or -errno.
 */
EVPROF_API int evprof_proc__confinement(struct evprof_confinement *c);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_PROC_H */
