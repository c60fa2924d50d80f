// SPDX-License-Identifier: MIT
/* Session tasks: replaying the side-band events (see session_tasks.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tasks.h"

/* Index maps: a u32 key to a u32 index. */
static bool idx_get(const struct evprof_hashmap *m, uint32_t key, uint64_t *v)
{
	long val;

	if (!m || !evprof__hashmap_find(m, (long)key, &val))
		return false;
	*v = (uint64_t)val;
	return true;
}

static int idx_put(struct evprof_hashmap **m, uint32_t key, uint32_t val)
{
	if (!*m) {
		*m = evprof__hashmap_new(evprof__hashmap_u64_hash,
					 evprof__hashmap_u64_equal, NULL);
		if (!*m)
			return -ENOMEM;
	}
	return evprof__hashmap_set(*m, (long)key, (long)val, NULL, NULL) < 0
		   ? -ENOMEM
		   : 0;
}

struct pending_fork {
	uint32_t child; /* bproc */
	uint32_t ppid;
};

#define PROC(b, i)   evprof__tasks_proc(b, i)
#define THREAD(b, i) evprof__tasks_thr(b, i)
#define MAP(b, i)    (&(b)->maps.a[i])

static bool is_root(const struct sess_tasks *b, uint32_t pid)
{
	if (!b->nr_roots)
		return true;
	for (size_t i = 0; i < b->nr_roots; i++)
		if ((uint32_t)b->roots[i] == pid)
			return true;
	return false;
}

static struct bproc *lineage(struct sess_tasks *b, uint32_t proc)
{
	return evprof__tasks_lineage(b, proc);
}

static uint32_t proc_current(const struct sess_tasks *b, uint32_t pid)
{
	uint64_t v = 0;

	return idx_get(b->pid_proc, pid, &v) ? (uint32_t)v : NO_INDEX;
}

/*
 * Adds pending forks whose parent is now in the tree, until none is left
 * to add (a resolved child may be the parent of another pending fork).
 */
static void resolve_pending(struct sess_tasks *b)
{
	struct pending_fork *pf = b->pending.a;
	bool again = true;

	while (again) {
		again = false;
		for (size_t i = 0; i < b->pending.n; i++) {
			uint32_t parent = proc_current(b, pf[i].ppid);
			struct bproc *child;

			if (parent == NO_INDEX || !lineage(b, parent)->in_tree)
				continue;
			child = lineage(b, pf[i].child);
			child->in_tree = true;
			child->pending = false;
			pf[i--] = pf[--b->pending.n];
			again = true;
		}
	}
}

/*
 * A new process entry for pid; the pid's former entry stays reachable from
 * the samples already attributed to it. from: the entry this one continues
 * (exec) or NO_INDEX.
 */
static int proc_new(struct sess_tasks *b, uint32_t pid, uint64_t start,
		    uint32_t from, uint32_t *out)
{
	struct bproc *pr;
	uint32_t idx;
	int err;

	if (b->procs.n >= NO_INDEX)
		return -ENOMEM;
	err = EVPROF_VEC_RESERVE(&b->procs, b->procs.n + 1) ? -ENOMEM : 0;
	if (err)
		return err;
	idx = (uint32_t)b->procs.n;
	err = idx_put(&b->pid_proc, pid, idx);
	if (err)
		return err;
	b->procs.n++;
	pr = PROC(b, idx);
	*pr = (struct bproc){.pid = pid,
			     .lineage = idx,
			     .start = start,
			     .epoch = ++b->epoch,
			     .prof = -1};
	if (from != NO_INDEX) {
		pr->lineage = PROC(b, from)->lineage;
	} else {
		pr->in_tree = is_root(b, pid);
		if (pr->in_tree && b->pending.n)
			resolve_pending(b);
	}
	*out = idx;
	return 0;
}

static int thread_new(struct sess_tasks *b, uint32_t tid, uint32_t proc,
		      uint64_t start, uint32_t *out)
{
	struct bthread *t;
	uint32_t idx;
	int err;

	if (b->threads.n >= NO_INDEX)
		return -ENOMEM;
	err = EVPROF_VEC_RESERVE(&b->threads, b->threads.n + 1) ? -ENOMEM : 0;
	if (err)
		return err;
	idx = (uint32_t)b->threads.n;
	err = idx_put(&b->tid_thread, tid, idx);
	if (err)
		return err;
	b->threads.n++;
	t = THREAD(b, idx);
	*t = (struct bthread){.tid = tid,
			      .proc = proc,
			      .prev = NO_INDEX,
			      .start = start,
			      .prof = -1};
	*out = idx;
	return 0;
}

/* The pid's current entry, made up when nothing told of it before. */
static int proc_get(struct sess_tasks *b, uint32_t pid, uint32_t *out)
{
	*out = proc_current(b, pid);
	if (*out != NO_INDEX)
		return 0;
	return proc_new(b, pid, 0, NO_INDEX, out);
}

int evprof__tasks_thread(struct sess_tasks *b, uint32_t pid, uint32_t tid,
			 uint32_t *out)
{
	uint32_t proc;
	uint64_t v;
	int err;

	if (idx_get(b->tid_thread, tid, &v) &&
	    PROC(b, THREAD(b, v)->proc)->pid == pid &&
	    THREAD(b, v)->proc == proc_current(b, pid)) {
		*out = (uint32_t)v;
		return 0;
	}
	err = proc_get(b, pid, &proc);
	return err ? err : thread_new(b, tid, proc, 0, out);
}

/* ---- maps --------------------------------------------------------------- */

/* Adds map over [start, end) of proc: later mappings hide earlier ones. */
static int segs_insert(struct sess_tasks *b, struct bproc *pr, uint32_t map)
{
	const struct bmap *m = MAP(b, map);
	struct seg *out = malloc((pr->nr_segs + 2) * sizeof(*out));
	size_t n = 0;
	bool placed = false;

	if (!out)
		return -ENOMEM;
	for (size_t i = 0; i < pr->nr_segs; i++) {
		struct seg g = pr->segs[i];

		if (!placed && g.start >= m->start) {
			out[n++] = (struct seg){m->start, m->end, map};
			placed = true;
		}
		if (g.end <= m->start || g.start >= m->end) {
			out[n++] = g;
			continue;
		}
		if (g.start < m->start)
			out[n++] = (struct seg){g.start, m->start, g.map};
		if (g.end > m->end) {
			if (!placed) {
				out[n++] = (struct seg){m->start, m->end, map};
				placed = true;
			}
			out[n++] = (struct seg){m->end, g.end, g.map};
		}
	}
	if (!placed)
		out[n++] = (struct seg){m->start, m->end, map};
	free(pr->segs);
	pr->segs = out;
	pr->nr_segs = n;
	pr->epoch = ++b->epoch;
	return 0;
}

uint32_t evprof__tasks_map_at(const struct bproc *pr, uint64_t addr)
{
	size_t lo = 0, hi = pr->nr_segs;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (pr->segs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < pr->segs[lo - 1].end)
		return pr->segs[lo - 1].map;
	return NO_INDEX;
}

/* ---- side-band replay --------------------------------------------------- */

static int replay_comm(struct sess_tasks *b, const struct sb_event *e)
{
	uint32_t proc, thr, old, prev = NO_INDEX;
	uint64_t v;
	int err;

	if (e->exec) {
		old = proc_current(b, e->pid);
		err = proc_new(b, e->pid, e->time, old, &proc);
		if (err)
			return err;
		if (old != NO_INDEX && idx_get(b->tid_thread, e->pid, &v) &&
		    THREAD(b, v)->proc == old) {
			prev = (uint32_t)v;
			if (e->time)
				THREAD(b, v)->end = e->time;
		}
		if (old != NO_INDEX && e->time)
			PROC(b, old)->end = e->time;
		/* The exec'ing task goes on as the new image's main thread. */
		err = thread_new(b, e->pid, proc, e->time, &thr);
		if (err)
			return err;
		THREAD(b, thr)->prev = prev;
		if (prev != NO_INDEX) { /* an exec keeps cgroup and ids */
			THREAD(b, thr)->cgroup = THREAD(b, prev)->cgroup;
			/* The exec'ing task is the leader now. */
			THREAD(b, thr)->ns_pid = THREAD(b, prev)->ns_pid;
			THREAD(b, thr)->ns_tid = THREAD(b, prev)->ns_pid;
		}
		PROC(b, proc)->name = e->str;
		PROC(b, proc)->has_name = true;
	} else {
		err = evprof__tasks_thread(b, e->pid, e->tid, &thr);
		if (err)
			return err;
		proc = THREAD(b, thr)->proc;
		if (e->tid == e->pid && !PROC(b, proc)->has_name) {
			PROC(b, proc)->name = e->str;
			PROC(b, proc)->has_name = true;
		}
	}
	THREAD(b, thr)->name = e->str;
	THREAD(b, thr)->has_name = true;
	return 0;
}

/* Name a new task inherits from the task that created it. */
static bool parent_name(struct sess_tasks *b, uint32_t ppid, uint32_t ptid,
			uint32_t *name)
{
	uint32_t proc = proc_current(b, ppid);
	uint64_t v;

	if (idx_get(b->tid_thread, ptid, &v) && THREAD(b, v)->proc == proc &&
	    THREAD(b, v)->has_name) {
		*name = THREAD(b, v)->name;
		return true;
	}
	if (proc != NO_INDEX && PROC(b, proc)->has_name) {
		*name = PROC(b, proc)->name;
		return true;
	}
	return false;
}

static int replay_fork(struct sess_tasks *b, const struct sb_event *e)
{
	uint32_t proc, parent, thr, name = 0;
	bool named = parent_name(b, e->ppid, e->ptid, &name);
	struct bproc *pr;
	uint64_t v;
	int err;

	if (e->pid == e->ppid) { /* a thread */
		err = proc_get(b, e->pid, &proc);
	} else {
		parent = proc_current(b, e->ppid);
		err = proc_new(b, e->pid, e->time, NO_INDEX, &proc);
		if (err)
			return err;
		pr = PROC(b, proc);
		if (parent != NO_INDEX && PROC(b, parent)->nr_segs) {
			const struct bproc *pp = PROC(b, parent);

			pr->segs = malloc(pp->nr_segs * sizeof(*pr->segs));
			if (!pr->segs)
				return -ENOMEM;
			memcpy(pr->segs, pp->segs,
			       pp->nr_segs * sizeof(*pr->segs));
			pr->nr_segs = pp->nr_segs;
		}
		pr->name = name;
		pr->has_name = named;
		if (!pr->in_tree) {
			if (parent != NO_INDEX && lineage(b, parent)->in_tree) {
				pr->in_tree = true;
				resolve_pending(b);
			} else {
				if (EVPROF_VEC_PUSH(
					&b->pending,
					((struct pending_fork){proc, e->ppid})))
					return -ENOMEM;
				pr->pending = true;
			}
		}
	}
	if (err)
		return err;
	err = thread_new(b, e->tid, proc, e->time, &thr);
	if (err)
		return err;
	THREAD(b, thr)->name = name;
	THREAD(b, thr)->has_name = named;
	/* A new task starts in its creator's cgroup. */
	if (idx_get(b->tid_thread, e->ptid, &v) && (uint32_t)v != thr) {
		THREAD(b, thr)->cgroup = THREAD(b, v)->cgroup;
		/*
		 * A thread is in its process's pid namespace; its own id
		 * there is known only if it lived until it was read.
		 */
		if (e->pid == e->ppid)
			THREAD(b, thr)->ns_pid = THREAD(b, v)->ns_pid;
	}
	return 0;
}

static void replay_exit(struct sess_tasks *b, const struct sb_event *e)
{
	uint32_t proc = proc_current(b, e->pid);
	uint64_t v;

	if (!e->time)
		return;
	if (idx_get(b->tid_thread, e->tid, &v) && THREAD(b, v)->proc == proc)
		THREAD(b, v)->end = e->time;
	if (e->tid == e->pid && proc != NO_INDEX)
		PROC(b, proc)->end = e->time;
}

static int replay_mmap(struct sess_tasks *b, const struct sb_event *e)
{
	struct bmap *m;
	uint32_t proc;
	int err;

	err = proc_get(b, e->pid, &proc);
	if (!err)
		err = EVPROF_VEC_RESERVE(&b->maps, b->maps.n + 1) ? -ENOMEM : 0;
	if (err)
		return err;
	if (b->maps.n >= NO_INDEX)
		return -ENOMEM;
	m = MAP(b, b->maps.n);
	*m = (struct bmap){.start = e->addr,
			   .end = e->addr + e->len,
			   .pgoff = e->pgoff,
			   .ino = e->ino,
			   .path = e->str,
			   .build_id = e->build_id,
			   .build_id_len = e->build_id_len,
			   .pid = e->pid};
	return segs_insert(b, PROC(b, proc), (uint32_t)b->maps.n++);
}

int evprof__tasks_replay(struct sess_tasks *b, const struct sb_event *e)
{
	uint32_t idx;
	int err;

	switch (e->kind) {
	case SB_SEED_PROC:
		err = proc_get(b, e->pid, &idx);
		if (!err) {
			PROC(b, idx)->name = e->str;
			PROC(b, idx)->has_name = true;
		}
		return err;
	case SB_SEED_THREAD:
		err = evprof__tasks_thread(b, e->pid, e->tid, &idx);
		if (!err) {
			THREAD(b, idx)->name = e->str;
			THREAD(b, idx)->has_name = true;
		}
		return err;
	case SB_COMM:
		return replay_comm(b, e);
	case SB_FORK:
		return replay_fork(b, e);
	case SB_EXIT:
		replay_exit(b, e);
		return 0;
	case SB_MMAP:
		return replay_mmap(b, e);
	case SB_CGROUP:
		err = evprof__tasks_thread(b, e->pid, e->tid, &idx);
		if (!err)
			THREAD(b, idx)->cgroup = e->addr;
		return err;
	case SB_NS_IDS:
		err = evprof__tasks_thread(b, e->pid, e->tid, &idx);
		if (!err) {
			THREAD(b, idx)->ns_pid = e->ppid;
			THREAD(b, idx)->ns_tid = e->ptid;
		}
		return err;
	}
	return 0;
}

void evprof__tasks_free(struct sess_tasks *b)
{
	for (size_t i = 0; i < b->procs.n; i++)
		free(PROC(b, (uint32_t)i)->segs);
	EVPROF_VEC_FREE(&b->procs);
	EVPROF_VEC_FREE(&b->threads);
	EVPROF_VEC_FREE(&b->maps);
	EVPROF_VEC_FREE(&b->pending);
	evprof__hashmap_free(b->pid_proc);
	evprof__hashmap_free(b->tid_thread);
}

/* ---- forgetting ---------------------------------------------------------- */

static bool ended_by(uint64_t end, uint64_t before)
{
	return end && end <= before;
}

/* The lineage entry holds the tree membership of those it starts. */
static void keep_lineages(const struct sess_tasks *b, uint32_t *pr_to)
{
	for (size_t i = 0; i < b->procs.n; i++)
		if (pr_to[i] != NO_INDEX)
			pr_to[b->procs.a[i].lineage] = 0;
}

/*
 * Which entries stay: to[i] is NO_INDEX for one forgotten, any other value
 * for one kept, until numbered.
 */
static void mark_kept(const struct sess_tasks *b, uint64_t before,
		      uint32_t *th_to, uint32_t *pr_to, uint32_t *map_to)
{
	for (size_t i = 0; i < b->procs.n; i++)
		pr_to[i] = ended_by(b->procs.a[i].end, before) ? NO_INDEX : 0;
	for (size_t i = 0; i < b->threads.n; i++) {
		const struct bthread *th = &b->threads.a[i];

		th_to[i] = ended_by(th->end, before) ? NO_INDEX : 0;
		if (th_to[i] != NO_INDEX)
			pr_to[th->proc] = 0;
	}
	keep_lineages(b, pr_to);
	/* A parent that joins later resolves its children through its pid. */
	for (size_t i = 0; i < b->pending.n; i++) {
		uint32_t parent = proc_current(b, b->pending.a[i].ppid);

		if (pr_to[b->pending.a[i].child] != NO_INDEX &&
		    parent != NO_INDEX)
			pr_to[parent] = 0;
	}
	keep_lineages(b, pr_to);
	for (size_t i = 0; i < b->maps.n; i++)
		map_to[i] = NO_INDEX;
	for (size_t i = 0; i < b->procs.n; i++) {
		const struct bproc *pr = &b->procs.a[i];

		for (size_t j = 0; pr_to[i] != NO_INDEX && j < pr->nr_segs; j++)
			map_to[pr->segs[j].map] = 0;
	}
}

/* Numbers the entries kept (to[i] != NO_INDEX); returns how many. */
static size_t number(uint32_t *to, size_t n)
{
	size_t w = 0;

	for (size_t i = 0; i < n; i++)
		if (to[i] != NO_INDEX)
			to[i] = (uint32_t)w++;
	return w;
}

/* Index map m with its values moved by to[] (NO_INDEX: deleted). */
static void remap_index(struct evprof_hashmap *m, const uint32_t *to)
{
	struct evprof_hashmap_entry *cur, *tmp;
	size_t bkt;

	if (!m)
		return;
	EVPROF_HASHMAP_FOR_EACH_SAFE(m, cur, tmp, bkt)
	{
		if (to[cur->value] == NO_INDEX)
			evprof__hashmap_delete(m, cur->key, NULL, NULL);
		else
			cur->value = to[cur->value];
	}
}

int evprof__tasks_forget(struct sess_tasks *b, uint64_t before,
			 uint32_t **map_to,
			 void (*gone)(uint32_t tid, uint64_t end, void *ctx),
			 void *ctx)
{
	size_t nt = b->threads.n, np = b->procs.n, nm = b->maps.n;
	size_t kept_procs, kept_maps, w = 0;
	uint32_t *th_to = malloc((nt ? nt : 1) * sizeof(*th_to));
	uint32_t *pr_to = malloc((np ? np : 1) * sizeof(*pr_to));
	uint32_t *mp_to = malloc((nm ? nm : 1) * sizeof(*mp_to));
	int forgotten;

	*map_to = NULL;
	if (!th_to || !pr_to || !mp_to) {
		free(th_to);
		free(pr_to);
		free(mp_to);
		return -ENOMEM;
	}
	mark_kept(b, before, th_to, pr_to, mp_to);
	for (size_t i = 0; i < nt; i++) {
		const struct bthread *th = &b->threads.a[i];
		uint64_t v;

		if (th_to[i] == NO_INDEX &&
		    idx_get(b->tid_thread, th->tid, &v) && v == i)
			gone(th->tid, th->end, ctx);
	}
	forgotten = (int)(nt - number(th_to, nt));
	kept_procs = number(pr_to, np);
	kept_maps = number(mp_to, nm);
	/* Entries only move down: compacted in place, in order. */
	for (size_t i = 0; i < nt; i++) {
		struct bthread th = b->threads.a[i];

		if (th_to[i] == NO_INDEX)
			continue;
		th.proc = pr_to[th.proc];
		if (th.prev != NO_INDEX)
			th.prev = th_to[th.prev];
		b->threads.a[th_to[i]] = th;
	}
	b->threads.n = nt - (size_t)forgotten;
	for (size_t i = 0; i < np; i++) {
		struct bproc pr = b->procs.a[i];

		if (pr_to[i] == NO_INDEX) {
			free(pr.segs);
			continue;
		}
		pr.lineage = pr_to[pr.lineage];
		for (size_t j = 0; j < pr.nr_segs; j++)
			pr.segs[j].map = mp_to[pr.segs[j].map];
		b->procs.a[pr_to[i]] = pr;
	}
	b->procs.n = kept_procs;
	for (size_t i = 0; i < nm; i++)
		if (mp_to[i] != NO_INDEX)
			b->maps.a[mp_to[i]] = b->maps.a[i];
	b->maps.n = kept_maps;
	for (size_t i = 0; i < b->pending.n; i++) {
		struct pending_fork pf = b->pending.a[i];

		if (pr_to[pf.child] == NO_INDEX)
			continue;
		pf.child = pr_to[pf.child];
		b->pending.a[w++] = pf;
	}
	b->pending.n = w;
	remap_index(b->pid_proc, pr_to);
	remap_index(b->tid_thread, th_to);
	free(th_to);
	free(pr_to);
	if (kept_maps != nm)
		*map_to = mp_to;
	else
		free(mp_to);
	return forgotten;
}

const char *evprof__tasks_proc_name(const struct sess_tasks *b,
				    const struct bproc *pr, char *buf,
				    size_t len)
{
	uint64_t v;

	if (pr->has_name)
		return evprof__sstore_strp(b->st, pr->name);
	if (idx_get(b->tid_thread, pr->pid, &v) &&
	    THREAD(b, (uint32_t)v)->has_name)
		return evprof__sstore_strp(b->st, THREAD(b, (uint32_t)v)->name);
	snprintf(buf, len, "%u", pr->pid);
	return buf;
}
