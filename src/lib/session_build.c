// SPDX-License-Identifier: MIT
/*
 * Sessions, building side: replays side-band events and samples in time
 * order (records of different rings arrive out of order, and a sample must
 * see the maps and process tree of its own time), decides which samples the
 * process tree keeps, symbolizes each distinct (mapping, address) once and
 * fills the profile.
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
 * Process tree: roots are opts.pids; a FORK of a new process whose parent
 * is in the tree adds the child. When the parent is not (yet) in the tree
 * (its own FORK lost, or stamped later by another CPU's clock) the fork is
 * kept pending and resolved when a process with the parent's pid joins.
 * Membership is final at the end of the replay, so samples of a process
 * that joined late are kept too.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/session.h>

#include "session_internal.h"
#include "unwind.h"

#define NO_INDEX      UINT32_MAX
#define KEY_KERNEL    UINT64_MAX       /* frame cache: kernel address */
#define KEY_UNMAPPED  (UINT64_MAX - 1) /* frame cache: outside every map */
#define STACK_SKIPPED (-2)	       /* sample of a process out of tree */

/* ---- a small (u64, u64) -> u64 map -------------------------------------- */

struct kv {
	uint64_t a, b, val;
	bool used;
};

struct kvmap {
	struct kv *t;
	size_t cap, n;
};

static uint64_t kv_hash(uint64_t a, uint64_t b)
{
	uint64_t x = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL);

	x ^= x >> 31;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 29;
	return x;
}

static struct kv *kv_slot(struct kv *t, size_t cap, uint64_t a, uint64_t b)
{
	size_t mask = cap - 1, i;

	for (i = kv_hash(a, b) & mask; t[i].used; i = (i + 1) & mask)
		if (t[i].a == a && t[i].b == b)
			break;
	return &t[i];
}

static bool kv_get(const struct kvmap *m, uint64_t a, uint64_t b, uint64_t *val)
{
	struct kv *e;

	if (!m->cap)
		return false;
	e = kv_slot(m->t, m->cap, a, b);
	if (e->used)
		*val = e->val;
	return e->used;
}

static int kv_put(struct kvmap *m, uint64_t a, uint64_t b, uint64_t val)
{
	struct kv *e;

	if ((m->n + 1) * 2 > m->cap) {
		size_t cap = m->cap ? m->cap * 2 : 256;
		struct kv *t = calloc(cap, sizeof(*t));

		if (!t)
			return -ENOMEM;
		for (size_t i = 0; i < m->cap; i++)
			if (m->t[i].used)
				*kv_slot(t, cap, m->t[i].a, m->t[i].b) =
				    m->t[i];
		free(m->t);
		m->t = t;
		m->cap = cap;
	}
	e = kv_slot(m->t, m->cap, a, b);
	if (!e->used)
		m->n++;
	*e = (struct kv){.a = a, .b = b, .val = val, .used = true};
	return 0;
}

/* ---- replay state ------------------------------------------------------- */

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
	struct seg *segs;
	size_t nr_segs;
	uint32_t epoch; /* changes with the maps: stack cache key */
	uint64_t kept;
	int prof;
};

struct bthread {
	uint32_t tid;
	uint32_t proc;
	uint32_t name;
	bool has_name;
	uint64_t start, end;
	uint64_t kept;
	int prof;
};

struct pending_fork {
	uint32_t child; /* bproc */
	uint32_t ppid;
};

struct order { /* sort key: time, then arrival */
	uint64_t time;
	uint32_t idx;
};

struct chain_frame {
	uint64_t addr;
	bool kernel, first;
	bool truncated; /* the "[truncated]" root of a cut user stack */
};

struct build {
	struct evprof_session *s;
	struct evprof_profile *p;
	struct evprof_symbolizer *sym;
	struct evprof__vec procs;   /* struct bproc */
	struct evprof__vec threads; /* struct bthread */
	struct evprof__vec maps;    /* struct bmap */
	struct evprof__vec pending; /* struct pending_fork */
	struct evprof__vec fidx;    /* int: frame indices, cache ranges */
	struct evprof__vec scratch; /* struct chain_frame */
	struct evprof__vec umaps;   /* struct evprof__unwind_map */
	struct evprof__unwinder *uw; /* made for the first stack copy */
	struct kvmap pid_proc, tid_thread, frames, stacks;
	uint32_t epoch;
	int slot_counter[EVPROF_PROFILE_MAX_COUNTERS];
};

#define PROC(b, i)   (&((struct bproc *)(b)->procs.data)[i])
#define THREAD(b, i) (&((struct bthread *)(b)->threads.data)[i])
#define MAP(b, i)    (&((struct bmap *)(b)->maps.data)[i])

static bool is_root(const struct evprof_session *s, uint32_t pid)
{
	if (!s->nr_pids)
		return true;
	for (size_t i = 0; i < s->nr_pids; i++)
		if ((uint32_t)s->pids[i] == pid)
			return true;
	return false;
}

static struct bproc *lineage(struct build *b, uint32_t proc)
{
	return PROC(b, PROC(b, proc)->lineage);
}

static uint32_t proc_current(const struct build *b, uint32_t pid)
{
	uint64_t v = 0;

	return kv_get(&b->pid_proc, pid, 0, &v) ? (uint32_t)v : NO_INDEX;
}

/*
 * Adds pending forks whose parent is now in the tree, until none is left
 * to add (a resolved child may be the parent of another pending fork).
 */
static void resolve_pending(struct build *b)
{
	struct pending_fork *pf = b->pending.data;
	bool again = true;

	while (again) {
		again = false;
		for (size_t i = 0; i < b->pending.len; i++) {
			uint32_t parent = proc_current(b, pf[i].ppid);
			struct bproc *child;

			if (parent == NO_INDEX || !lineage(b, parent)->in_tree)
				continue;
			child = lineage(b, pf[i].child);
			child->in_tree = true;
			child->pending = false;
			pf[i--] = pf[--b->pending.len];
			again = true;
		}
	}
}

/*
 * A new process entry for pid; the pid's former entry stays reachable from
 * the samples already attributed to it. from: the entry this one continues
 * (exec) or NO_INDEX.
 */
static int proc_new(struct build *b, uint32_t pid, uint64_t start,
		    uint32_t from, uint32_t *out)
{
	struct bproc *pr;
	uint32_t idx;
	int err;

	if (b->procs.len >= NO_INDEX)
		return -ENOMEM;
	err = evprof__vec_reserve(&b->procs, sizeof(*pr), 1);
	if (err)
		return err;
	idx = (uint32_t)b->procs.len;
	err = kv_put(&b->pid_proc, pid, 0, idx);
	if (err)
		return err;
	b->procs.len++;
	pr = PROC(b, idx);
	*pr = (struct bproc){.pid = pid,
			     .lineage = idx,
			     .start = start,
			     .epoch = ++b->epoch,
			     .prof = -1};
	if (from != NO_INDEX) {
		pr->lineage = PROC(b, from)->lineage;
	} else {
		pr->in_tree = is_root(b->s, pid);
		if (pr->in_tree && b->pending.len)
			resolve_pending(b);
	}
	*out = idx;
	return 0;
}

static int thread_new(struct build *b, uint32_t tid, uint32_t proc,
		      uint64_t start, uint32_t *out)
{
	struct bthread *t;
	uint32_t idx;
	int err;

	if (b->threads.len >= NO_INDEX)
		return -ENOMEM;
	err = evprof__vec_reserve(&b->threads, sizeof(*t), 1);
	if (err)
		return err;
	idx = (uint32_t)b->threads.len;
	err = kv_put(&b->tid_thread, tid, 0, idx);
	if (err)
		return err;
	b->threads.len++;
	t = THREAD(b, idx);
	*t = (struct bthread){
	    .tid = tid, .proc = proc, .start = start, .prof = -1};
	*out = idx;
	return 0;
}

/* The pid's current entry, made up when nothing told of it before. */
static int proc_get(struct build *b, uint32_t pid, uint32_t *out)
{
	*out = proc_current(b, pid);
	if (*out != NO_INDEX)
		return 0;
	return proc_new(b, pid, 0, NO_INDEX, out);
}

/* The thread tid of process pid, made up when not known. */
static int thread_get(struct build *b, uint32_t pid, uint32_t tid,
		      uint32_t *out)
{
	uint32_t proc;
	uint64_t v;
	int err;

	if (kv_get(&b->tid_thread, tid, 0, &v) &&
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
static int segs_insert(struct build *b, struct bproc *pr, uint32_t map)
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

static uint32_t segs_find(const struct bproc *pr, uint64_t addr)
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

static int replay_comm(struct build *b, const struct sb_event *e)
{
	uint32_t proc, thr, old;
	uint64_t v;
	int err;

	if (e->exec) {
		old = proc_current(b, e->pid);
		err = proc_new(b, e->pid, e->time, old, &proc);
		if (err)
			return err;
		if (old != NO_INDEX && e->time) {
			PROC(b, old)->end = e->time;
			if (kv_get(&b->tid_thread, e->pid, 0, &v) &&
			    THREAD(b, v)->proc == old)
				THREAD(b, v)->end = e->time;
		}
		/* The exec'ing task goes on as the new image's main thread. */
		err = thread_new(b, e->pid, proc, e->time, &thr);
		if (err)
			return err;
		PROC(b, proc)->name = e->str;
		PROC(b, proc)->has_name = true;
	} else {
		err = thread_get(b, e->pid, e->tid, &thr);
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
static bool parent_name(struct build *b, uint32_t ppid, uint32_t ptid,
			uint32_t *name)
{
	uint32_t proc = proc_current(b, ppid);
	uint64_t v;

	if (kv_get(&b->tid_thread, ptid, 0, &v) && THREAD(b, v)->proc == proc &&
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

static int replay_fork(struct build *b, const struct sb_event *e)
{
	uint32_t proc, parent, thr, name = 0;
	bool named = parent_name(b, e->ppid, e->ptid, &name);
	struct bproc *pr;
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
				struct pending_fork *pf;

				err = evprof__vec_reserve(&b->pending,
							  sizeof(*pf), 1);
				if (err)
					return err;
				pf = (struct pending_fork *)b->pending.data +
				     b->pending.len++;
				*pf = (struct pending_fork){proc, e->ppid};
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
	return 0;
}

static void replay_exit(struct build *b, const struct sb_event *e)
{
	uint32_t proc = proc_current(b, e->pid);
	uint64_t v;

	if (!e->time)
		return;
	if (kv_get(&b->tid_thread, e->tid, 0, &v) && THREAD(b, v)->proc == proc)
		THREAD(b, v)->end = e->time;
	if (e->tid == e->pid && proc != NO_INDEX)
		PROC(b, proc)->end = e->time;
}

static int replay_mmap(struct build *b, const struct sb_event *e)
{
	struct bmap *m;
	uint32_t proc;
	int err;

	err = proc_get(b, e->pid, &proc);
	if (!err)
		err = evprof__vec_reserve(&b->maps, sizeof(*m), 1);
	if (err)
		return err;
	if (b->maps.len >= NO_INDEX)
		return -ENOMEM;
	m = MAP(b, b->maps.len);
	*m = (struct bmap){.start = e->addr,
			   .end = e->addr + e->len,
			   .pgoff = e->pgoff,
			   .ino = e->ino,
			   .path = e->str,
			   .build_id = e->build_id,
			   .build_id_len = e->build_id_len,
			   .pid = e->pid};
	return segs_insert(b, PROC(b, proc), (uint32_t)b->maps.len++);
}

static int replay_sb(struct build *b, const struct sb_event *e)
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
		err = thread_get(b, e->pid, e->tid, &idx);
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
	}
	return 0;
}

/* ---- symbols and stacks ------------------------------------------------- */

static int push_frame(struct build *b, struct evprof_profile_frame *f)
{
	int idx = evprof_profile__frame(b->p, f), err;

	if (idx < 0)
		return idx;
	err = evprof__vec_reserve(&b->fidx, sizeof(int), 1);
	if (err)
		return err;
	((int *)b->fidx.data)[b->fidx.len++] = idx;
	return 0;
}

/* Profile frames for one symbolized address: the real function first. */
static int frames_from(struct build *b, const struct evprof_sym_result *r,
		       uint64_t addr, bool kernel)
{
	struct evprof_profile_frame f = {.lib = -1, .kernel = kernel};
	int err;

	if (r->lib_path && *r->lib_path) {
		struct evprof_profile_lib lib = {
		    .path = r->lib_path,
		    .name = r->lib_name,
		    .build_id = r->build_id,
		    .build_id_len = r->build_id_len,
		};

		f.lib = evprof_profile__add_lib(b->p, &lib);
		if (f.lib < 0)
			return f.lib;
	}
	f.address = f.lib >= 0 ? r->rel_addr : addr;
	f.function = r->name;
	if (r->name) {
		f.symbol_address = r->sym_start;
		f.symbol_size = r->sym_size;
	}
	if (!r->nr_frames)
		return push_frame(b, &f);
	for (uint32_t k = r->nr_frames; k-- > 0;) {
		const struct evprof_sym_frame *sf = &r->frames[k];

		f.function = sf->name
				 ? sf->name
				 : (k == r->nr_frames - 1 ? r->name : NULL);
		f.file = sf->file;
		f.line = sf->line;
		f.function_line = sf->decl_line;
		f.inline_depth = (uint16_t)(r->nr_frames - 1 - k);
		err = push_frame(b, &f);
		if (err)
			return err;
	}
	return 0;
}

static int symbolize(struct build *b, const struct bproc *pr, uint32_t map,
		     uint64_t look, bool kernel)
{
	struct evprof_sym_result r = {0};
	int err = -EINVAL;

	if (kernel) {
		if (b->sym)
			err = evprof_symbolizer__kernel(b->sym, look, &r);
	} else if (map != NO_INDEX) {
		const struct bmap *m = MAP(b, map);
		struct evprof_sym_mapping sm = {
		    .path = sess_str(b->s, m->path),
		    .start = m->start,
		    .end = m->end,
		    .pgoff = m->pgoff,
		    .build_id = m->build_id_len ? (const uint8_t *)sess_str(
						      b->s, m->build_id)
						: NULL,
		    .build_id_len = m->build_id_len,
		    .inode = m->ino,
		    .pid = (int)pr->pid,
		};

		if (b->sym)
			err = evprof_symbolizer__user(b->sym, &sm, look, &r);
		if (err == -EINVAL) {
			/* No symbolizer: the mapping names the frame. */
			r = (struct evprof_sym_result){
			    .lib_path = sm.path,
			    .rel_addr = look - m->start + m->pgoff,
			};
			err = 0;
		}
	} else if (b->sym) {
		/* In no file mapping: JIT code, named by perf-PID.map. */
		err = evprof_symbolizer__jit(b->sym, (int)pr->pid, look, &r);
	}
	if (err == -ENOMEM)
		return err;
	if (err)
		r = (struct evprof_sym_result){0};
	return frames_from(b, &r, look, kernel);
}

/*
 * Frame index range (in b->fidx) for addr in proc's current maps; looked
 * up once per (mapping, address).
 */
static int frames_for(struct build *b, const struct bproc *pr,
		      const struct chain_frame *cf, uint32_t *off,
		      uint32_t *cnt)
{
	uint64_t look = cf->first ? cf->addr : cf->addr - 1;
	uint32_t map = cf->kernel ? NO_INDEX : segs_find(pr, look);
	uint64_t key = cf->kernel	 ? KEY_KERNEL
		       : map == NO_INDEX ? KEY_UNMAPPED
					 : map;
	size_t start = b->fidx.len;
	uint64_t v;
	int err;

	if (cf->truncated) {
		struct evprof_profile_frame f = {.lib = -1,
						 .function = "[truncated]"};

		*off = (uint32_t)start;
		*cnt = 1;
		return push_frame(b, &f);
	}
	if (kv_get(&b->frames, key, look, &v)) {
		*off = (uint32_t)(v >> 32);
		*cnt = (uint32_t)v;
		return 0;
	}
	err = symbolize(b, pr, map, look, cf->kernel);
	if (err)
		return err;
	if (b->fidx.len > UINT32_MAX)
		return -ENOMEM;
	*off = (uint32_t)start;
	*cnt = (uint32_t)(b->fidx.len - start);
	return kv_put(&b->frames, key, look, (uint64_t)*off << 32 | *cnt);
}

/* Splits a raw callchain into frames, leaf first, markers removed. */
static int chain_frames(struct build *b, const uint64_t *ips, uint64_t nr)
{
	bool kernel = false, first = true, skip = false;
	struct chain_frame *cf;
	int err;

	b->scratch.len = 0;
	for (uint64_t i = 0; i < nr; i++) {
		uint64_t ip = ips[i];

		if (ip == EVPROF__CHAIN_TRUNCATED) {
			err = evprof__vec_reserve(&b->scratch, sizeof(*cf), 1);
			if (err)
				return err;
			cf = (struct chain_frame *)b->scratch.data +
			     b->scratch.len++;
			*cf = (struct chain_frame){.truncated = true};
			continue;
		}
		if (ip >= (uint64_t)PERF_CONTEXT_MAX) {
			kernel = ip == (uint64_t)PERF_CONTEXT_KERNEL;
			/* Guest and hypervisor frames are not ours. */
			skip = ip != (uint64_t)PERF_CONTEXT_KERNEL &&
			       ip != (uint64_t)PERF_CONTEXT_USER;
			first = true;
			/* Linux 6.19: the marker is followed by a cookie. */
			if (ip == EVPROF_CONTEXT_USER_DEFERRED)
				i++;
			continue;
		}
		if (skip)
			continue;
		err = evprof__vec_reserve(&b->scratch, sizeof(*cf), 1);
		if (err)
			return err;
		cf = (struct chain_frame *)b->scratch.data + b->scratch.len++;
		*cf = (struct chain_frame){ip, kernel, first, false};
		first = false;
	}
	return 0;
}

static int stack_for(struct build *b, const struct bproc *pr, uint32_t chain,
		     int *stack)
{
	const uint64_t *words = b->s->chains.data;
	int st = -1, err;
	uint64_t v;

	if (kv_get(&b->stacks, pr->epoch, chain, &v)) {
		*stack = (int)(int64_t)v;
		return 0;
	}
	err = chain_frames(b, words + chain + 1, words[chain]);
	if (err)
		return err;
	/* Leaf first in the chain: walk it backwards to go root first. */
	for (size_t i = b->scratch.len; i-- > 0;) {
		const struct chain_frame *cf =
		    (struct chain_frame *)b->scratch.data + i;
		uint32_t off, cnt;

		err = frames_for(b, pr, cf, &off, &cnt);
		if (err)
			return err;
		for (uint32_t k = 0; k < cnt; k++) {
			st = evprof_profile__stack(
			    b->p, st, ((int *)b->fidx.data)[off + k]);
			if (st < 0)
				return st;
		}
	}
	*stack = st;
	return kv_put(&b->stacks, pr->epoch, chain, (uint64_t)(int64_t)st);
}

/* ---- build -------------------------------------------------------------- */

static int cmp_order(const void *pa, const void *pb)
{
	const struct order *a = pa, *b = pb;

	if (a->time != b->time)
		return a->time < b->time ? -1 : 1;
	return a->idx < b->idx ? -1 : a->idx > b->idx;
}

static struct order *sorted(const struct evprof__vec *v, size_t elem)
{
	struct order *o = malloc((v->len ? v->len : 1) * sizeof(*o));

	if (!o)
		return NULL;
	for (size_t i = 0; i < v->len; i++) {
		/* time is the first member of ssample and sb_event */
		o[i].time =
		    *(const uint64_t *)((const char *)v->data + i * elem);
		o[i].idx = (uint32_t)i;
	}
	qsort(o, v->len, sizeof(*o), cmp_order);
	return o;
}

static const char *proc_name(struct build *b, const struct bproc *pr, char *buf,
			     size_t len)
{
	uint64_t v;

	if (pr->has_name)
		return sess_str(b->s, pr->name);
	if (kv_get(&b->tid_thread, pr->pid, 0, &v) && THREAD(b, v)->has_name)
		return sess_str(b->s, THREAD(b, v)->name);
	snprintf(buf, len, "%u", pr->pid);
	return buf;
}

/* Profile processes and threads for the entries that have kept samples. */
static int emit_tasks(struct build *b)
{
	char buf[16];
	int err;

	for (size_t i = 0; i < b->procs.len; i++) {
		struct bproc *pr = PROC(b, i);

		if (!pr->kept)
			continue;
		pr->prof = evprof_profile__add_process(
		    b->p, (int)pr->pid, proc_name(b, pr, buf, sizeof(buf)),
		    pr->start);
		if (pr->prof < 0)
			return pr->prof;
		if (pr->end) {
			err = evprof_profile__end_process(b->p, pr->prof,
							  pr->end);
			if (err)
				return err;
		}
		b->s->st.processes++;
	}
	for (size_t i = 0; i < b->threads.len; i++) {
		struct bthread *t = THREAD(b, i);
		const struct bproc *pr = PROC(b, t->proc);
		const char *name;

		if (!t->kept)
			continue;
		name = t->has_name ? sess_str(b->s, t->name)
				   : proc_name(b, pr, buf, sizeof(buf));
		t->prof = evprof_profile__add_thread(
		    b->p, pr->prof, (int)t->tid, name, t->start);
		if (t->prof < 0)
			return t->prof;
		if (t->end) {
			err = evprof_profile__end_thread(b->p, t->prof, t->end);
			if (err)
				return err;
		}
		b->s->st.threads++;
	}
	return 0;
}

static int emit_sample(struct build *b, const struct ssample *x,
		       const struct bthread *t, int stack)
{
	const uint64_t *deltas =
	    (const uint64_t *)b->s->deltas.data + x->deltas;
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS];
	struct evprof_profile_sample ps = {
	    .time_ns = x->time,
	    .stack = stack,
	    .cpu_delta_ns = x->flags & SS_HAS_CPU ? x->cpu_delta : 0,
	    .counters = vals,
	};
	int n = 0;

	for (size_t i = 0; i < b->s->nr_slots; i++) {
		int c = b->slot_counter[i];

		if (!(x->has & (1ULL << i)))
			continue;
		vals[c] = deltas[n++];
		ps.has_counters |= 1ULL << c;
	}
	return evprof_profile__add_sample(b->p, t->prof, &ps);
}

/* Unwinds x's stack copy with the maps pr has now. */
static int unwind_sample(struct build *b, const struct bproc *pr,
			 struct ssample *x)
{
	struct evprof__unwind_map *um;
	int err;

	if (!b->uw) {
		b->uw = evprof__unwinder_new();
		if (!b->uw)
			return errno == ENOMEM ? -ENOMEM : 0;
	}
	b->umaps.len = 0;
	err = evprof__vec_reserve(&b->umaps, sizeof(*um), pr->nr_segs);
	if (err)
		return err;
	um = b->umaps.data;
	for (size_t i = 0; i < pr->nr_segs; i++) {
		const struct bmap *m = MAP(b, pr->segs[i].map);

		if (i && pr->segs[i].map == pr->segs[i - 1].map)
			continue;
		um[b->umaps.len++] = (struct evprof__unwind_map){
		    sess_str(b->s, m->path), m->start, m->end, m->pgoff};
	}
	return evprof__session_unwind(b->s, b->uw, pr->epoch, um,
				      b->umaps.len, x);
}

/* Merges the two time orders, side-band first at equal times. */
static int replay(struct build *b, const struct order *so,
		  const struct order *eo, uint32_t *thr, int *stacks)
{
	const struct sb_event *sb = b->s->sb.data;
	struct ssample *ss = b->s->samples.data;
	size_t ns = b->s->samples.len, ne = b->s->sb.len, i = 0, j = 0;
	int err;

	while (i < ns || j < ne) {
		struct ssample *x;
		const struct bproc *lin;

		if (j < ne && (i == ns || eo[j].time <= so[i].time)) {
			err = replay_sb(b, &sb[eo[j++].idx]);
			if (err)
				return err;
			continue;
		}
		x = &ss[so[i].idx];
		err = thread_get(b, x->pid, x->tid, &thr[i]);
		if (err)
			return err;
		lin = lineage(b, THREAD(b, thr[i])->proc);
		stacks[i] = STACK_SKIPPED;
		if (lin->in_tree || lin->pending) {
			if (x->ustack && !(x->flags & SS_UNWOUND)) {
				err = unwind_sample(
				    b, PROC(b, THREAD(b, thr[i])->proc), x);
				if (err)
					return err;
			}
			err = stack_for(b, PROC(b, THREAD(b, thr[i])->proc),
					x->chain, &stacks[i]);
			if (err)
				return err;
		}
		i++;
	}
	return 0;
}

static int build(struct build *b)
{
	struct evprof_session *s = b->s;
	struct ssample *ss = s->samples.data;
	size_t ns = s->samples.len;
	struct order *so = NULL, *eo = NULL;
	uint32_t *thr = NULL;
	int *stacks = NULL;
	uint64_t kept = 0;
	int err = -ENOMEM;

	for (size_t i = 0; i < s->nr_slots; i++) {
		const char *name =
		    i < s->nr_counters ? s->counters[i] : s->sampler_counter;
		int c = evprof_profile__add_counter(b->p, name);

		if (c < 0)
			return c;
		b->slot_counter[i] = c;
	}
	err = evprof__session_stitch(s);
	if (err)
		return err;
	err = -ENOMEM;
	so = sorted(&s->samples, sizeof(struct ssample));
	eo = sorted(&s->sb, sizeof(struct sb_event));
	thr = malloc((ns ? ns : 1) * sizeof(*thr));
	stacks = malloc((ns ? ns : 1) * sizeof(*stacks));
	if (!so || !eo || !thr || !stacks)
		goto out;
	err = replay(b, so, eo, thr, stacks);
	if (err)
		goto out;

	/* Tree membership is final now. */
	for (size_t i = 0; i < ns; i++) {
		struct bthread *t = THREAD(b, thr[i]);
		struct ssample *x = &ss[so[i].idx];

		x->flags &= ~SS_KEPT;
		if (!lineage(b, t->proc)->in_tree)
			continue;
		x->flags |= SS_KEPT;
		t->kept++;
		PROC(b, t->proc)->kept++;
		kept++;
	}
	s->st.processes = s->st.threads = 0;
	err = emit_tasks(b);
	for (size_t i = 0; !err && i < ns; i++) {
		const struct ssample *x = &ss[so[i].idx];

		if (x->flags & SS_KEPT)
			err = emit_sample(b, x, THREAD(b, thr[i]), stacks[i]);
	}
	if (!err) {
		s->built = true;
		s->st.samples = kept;
		s->st.samples_filtered = s->idle + (ns - kept);
	}
out:
	free(so);
	free(eo);
	free(thr);
	free(stacks);
	return err;
}

int evprof_session__build(struct evprof_session *s, struct evprof_profile *p,
			  struct evprof_symbolizer *sym)
{
	struct build b = {.s = s, .p = p, .sym = sym};
	int err;

	if (!s || !p)
		return -EINVAL;
	err = evprof__cut_flush(s);
	if (err)
		return err;
	if (s->samples.len >= NO_INDEX || s->sb.len >= NO_INDEX)
		return -ENOMEM;
	err = build(&b);
	for (size_t i = 0; i < b.procs.len; i++)
		free(PROC(&b, i)->segs);
	free(b.procs.data);
	free(b.threads.data);
	free(b.maps.data);
	free(b.pending.data);
	free(b.fidx.data);
	free(b.scratch.data);
	free(b.umaps.data);
	evprof__unwinder_free(b.uw);
	free(b.pid_proc.t);
	free(b.tid_thread.t);
	free(b.frames.t);
	free(b.stacks.t);
	return err;
}
