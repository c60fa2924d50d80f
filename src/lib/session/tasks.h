/* SPDX-License-Identifier: MIT */
/*
 * Session tasks, building side: the processes, threads and executable
 * mappings that replaying the side-band events in time order yields, and
 * the process tree that decides which samples are kept. Above the storage,
 * whose events and strings it reads; knows nothing of samples or profiles.
 *
 * Processes: one entry per exec image of a pid. An exec (COMM with
 * PERF_RECORD_MISC_COMM_EXEC) starts a new entry with no maps, so samples
 * before it keep the old image's maps and name, and the Firefox Profiler
 * shows the two images as two processes of one pid. Entries of one kernel
 * process (fork to exit, across execs) share a lineage, which holds the
 * process-tree membership. An EXIT only sets end times: the entry stays the
 * pid's current one until a FORK reuses the pid, so records stamped after
 * the exit (per-CPU events still see the dying task) are not lost.
 *
 * Process tree: roots are the session's pids; a FORK of a new process
 * whose parent is in the tree adds the child. When the parent is not (yet)
 * in the tree (its own FORK lost, or stamped later by another CPU's clock)
 * the fork is kept pending and resolved when a process with the parent's
 * pid joins. Membership is final at the end of the replay, so samples of a
 * process that joined late are kept too.
 */
#ifndef EVPROF_LIB_SESSION_TASKS_H
#define EVPROF_LIB_SESSION_TASKS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "store.h"

#define NO_INDEX UINT32_MAX

struct bmap { /* one executable mapping, as recorded */
	uint64_t start, end, pgoff, ino;
	uint32_t path, build_id;
	uint8_t build_id_len;
	uint32_t pid;
};

struct seg { /* the part of a mapping no later mapping covers */
	uint64_t start, end;
	uint32_t map;
};

struct bproc {
	uint32_t pid;
	uint32_t lineage; /* first entry of this kernel process */
	uint32_t name;
	bool has_name;
	bool in_tree, pending; /* meaningful on the lineage entry */
	uint64_t start, end;
	struct seg *segs; /* sorted, disjoint */
	size_t nr_segs;
	uint32_t epoch; /* changes with the maps: stack cache key */
	uint64_t kept;	/* for the build: samples kept */
	int prof;	/* for the build: profile process */
	bool counted;	/* in the session's stats already */
};

struct bthread {
	uint32_t tid;
	uint32_t proc;
	uint32_t prev; /* this task's entry before its exec, or NO_INDEX */
	uint32_t name;
	bool has_name;
	uint64_t start, end;
	uint64_t cgroup;	 /* its latest SB_CGROUP's id, 0: none */
	uint32_t ns_pid, ns_tid; /* SB_NS_IDS', 0: none (ns_tid: unknown) */
	uint64_t kept;		 /* for the build: samples kept */
	int prof;		 /* for the build: profile thread */
	bool counted;		 /* in the session's stats already */
};

struct pending_fork;

struct sess_tasks {
	const struct sess_store *st;
	const pid_t *roots; /* none: every process is in the tree */
	size_t nr_roots;
	EVPROF_VEC(struct bproc) procs;
	EVPROF_VEC(struct bthread) threads;
	EVPROF_VEC(struct bmap) maps;
	EVPROF_VEC(struct pending_fork) pending;
	struct evprof_hashmap *pid_proc;   /* pid -> its current entry */
	struct evprof_hashmap *tid_thread; /* tid -> its latest thread */
	uint32_t epoch;
};

EVPROF_HIDDEN void evprof__tasks_free(struct sess_tasks *t);

/* Applies one side-band event. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__tasks_replay(struct sess_tasks *t,
				       const struct sb_event *e);
/*
 * The thread tid of process pid as it is now, made up (with its process)
 * when not known; *out receives its index. Returns 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__tasks_thread(struct sess_tasks *t, uint32_t pid,
				       uint32_t tid, uint32_t *out);
/*
 * Forgets the threads that ended at or before `before` (gone for good: the
 * records their task made after its exit came within the time until
 * before), then the processes none of whose threads is left that ended by
 * then, unless a kept entry continues them (shares their lineage) or a
 * pending fork waits for their pid as a parent, then the mappings no kept
 * process maps. Indices of threads, processes and mappings change:
 * *map_to (malloc'd, for every former mapping its new index or NO_INDEX)
 * tells where mappings went, NULL when none moved. gone(tid, end, ctx) is
 * told of each thread forgotten that was its tid's latest. Returns how
 * many threads were forgotten, or -ENOMEM (nothing changed).
 */
EVPROF_HIDDEN int
evprof__tasks_forget(struct sess_tasks *t, uint64_t before, uint32_t **map_to,
		     void (*gone)(uint32_t tid, uint64_t end, void *ctx),
		     void *ctx);
/* The index of the mapping that holds addr in pr now, or NO_INDEX. */
EVPROF_HIDDEN uint32_t evprof__tasks_map_at(const struct bproc *pr,
					    uint64_t addr);
/* pr's name, or its main thread's, or its pid written into buf. */
EVPROF_HIDDEN const char *evprof__tasks_proc_name(const struct sess_tasks *t,
						  const struct bproc *pr,
						  char *buf, size_t len);

static inline struct bproc *evprof__tasks_proc(const struct sess_tasks *t,
					       uint32_t i)
{
	return &t->procs.a[i];
}

static inline struct bthread *evprof__tasks_thr(const struct sess_tasks *t,
						uint32_t i)
{
	return &t->threads.a[i];
}

static inline const struct bmap *evprof__tasks_map(const struct sess_tasks *t,
						   uint32_t i)
{
	return &t->maps.a[i];
}

/* The entry of proc's lineage, which holds its tree membership. */
static inline struct bproc *evprof__tasks_lineage(const struct sess_tasks *t,
						  uint32_t proc)
{
	return evprof__tasks_proc(t, evprof__tasks_proc(t, proc)->lineage);
}

#endif /* EVPROF_LIB_SESSION_TASKS_H */
