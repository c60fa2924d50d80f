// SPDX-License-Identifier: MIT
/* Session parts: see session_part.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "part.h"

void evprof__part_free(struct sess_part *pt)
{
	evprof__stacks_free(&pt->sk);
	evprof__tasks_free(&pt->t);
	evprof__hashmap_free(pt->tid_tot);
	EVPROF_VEC_FREE(&pt->tot);
}

/* tid's totals (nr_slots + 1 words), made when new; NULL on -ENOMEM. */
static uint64_t *totals(struct sess_part *pt, size_t nr_slots, uint32_t tid)
{
	long off;

	if (!pt->tid_tot) {
		pt->tid_tot = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
		if (!pt->tid_tot)
			return NULL;
	}
	if (pt->last_ok && pt->last_tid == tid)
		return pt->tot.a + pt->last_off;
	if (!evprof__hashmap_find(pt->tid_tot, (long)tid, &off)) {
		if (EVPROF_VEC_RESERVE(&pt->tot, pt->tot.n + nr_slots + 1) ||
		    evprof__hashmap_add(pt->tid_tot, (long)tid,
					(long)pt->tot.n))
			return NULL;
		off = (long)pt->tot.n;
		memset(pt->tot.a + off, 0, (nr_slots + 1) * sizeof(uint64_t));
		pt->tot.n += nr_slots + 1;
	}
	pt->last_ok = true;
	pt->last_tid = tid;
	pt->last_off = off;
	return pt->tot.a + off;
}

/* Adds x's deltas to sum (nr_slots + 1 words: slots, then CPU ns). */
static void add_totals(const struct sess_store *st, const struct ssample *x,
		       uint64_t *sum)
{
	for (size_t i = 0; i < st->nr_slots; i++)
		sum[i] += evprof__sstore_delta(st, x, i);
	if (x->flags & SS_HAS_CPU)
		sum[st->nr_slots] += x->cpu_delta;
}

/* Words of the stack copy at w: [dyn_size, size, nr_regs, regs, stack]. */
static size_t ustack_words(const uint64_t *w)
{
	return 3 + w[2] + (w[0] + 7) / 8;
}

/* Keeps the totals of every built sample; all or nothing. */
static int keep_totals(struct sess_part *pt, struct sess_store *st)
{
	for (size_t i = 0; i < st->samples.n; i++) {
		const struct ssample *x = &st->samples.a[i];

		if (!(x->flags & SS_BUILT) || !(x->flags & SS_KEPT))
			continue;
		if (!totals(pt, st->nr_slots, x->tid))
			return -ENOMEM;
	}
	for (size_t i = 0; i < st->samples.n; i++) {
		const struct ssample *x = &st->samples.a[i];

		if (!(x->flags & SS_BUILT))
			continue;
		add_totals(st, x,
			   x->flags & SS_KEPT ? totals(pt, st->nr_slots, x->tid)
					      : pt->unkept);
	}
	return 0;
}

/*
 * Sampled chains are mostly distinct (the leaf is wherever the interrupt
 * came): the arena keeps only what remaining samples and deferred
 * records name. The stack cache is keyed by chain offsets: it goes too.
 * Without memory for it, the arena just stays as it is. A compaction
 * hashes every chain left, on the feeding thread: only once the arena has
 * doubled since the last (and holds COMPACT_WORDS), so memory stays within
 * twice what is live.
 */
#define COMPACT_WORDS (1u << 20)

static void compact_chains(struct sess_part *pt, struct sess_store *st,
			   struct sess_stitch *k)
{
	size_t n = 0, cap = st->samples.n + k->deferred.n;
	uint32_t **refs;

	if (st->chains.n < COMPACT_WORDS || st->chains.n < 2 * pt->chains_live)
		return;
	refs = malloc((cap ? cap : 1) * sizeof(*refs));
	if (!refs)
		return;
	for (size_t i = 0; i < st->samples.n; i++)
		refs[n++] = &st->samples.a[i].chain;
	for (size_t i = 0; i < k->deferred.n; i++)
		refs[n++] = &k->deferred.a[i].chain;
	if (!evprof__sstore_chains_compact(st, refs, n)) {
		evprof__hashmap_free(pt->sk.stacks);
		pt->sk.stacks = NULL;
		pt->chains_live = st->chains.n;
	}
	free(refs);
}

int evprof__part_drop(struct sess_part *pt, struct sess_store *st,
		      struct sess_stitch *k, uint64_t until, size_t nr_sb)
{
	size_t n, w = 0, dw = 0, uw = 0, ew = 0;
	int err = keep_totals(pt, st);

	if (err)
		return err;
	n = st->samples.n;
	/* Deltas and stack copies lie in sample order: moved down in place. */
	for (size_t i = 0; i < n; i++) {
		struct ssample x = st->samples.a[i];
		/* An aggregate's sample count follows its deltas. */
		size_t nd =
		    (size_t)evprof__popcount64(x.has) + !!(x.flags & SS_AGGR);

		if (x.flags & SS_BUILT)
			continue;
		if (nd) /* no counters: no deltas array at all */
			memmove(st->deltas.a + dw, st->deltas.a + x.deltas,
				nd * sizeof(uint64_t));
		x.deltas = (uint32_t)dw;
		dw += nd;
		if (x.ustack) {
			const uint64_t *u = k->ustacks.a + x.ustack - 1;
			size_t words = ustack_words(u);

			memmove(k->ustacks.a + uw, u, words * sizeof(*u));
			x.ustack = (uint32_t)uw + 1;
			uw += words;
		}
		st->samples.a[w++] = x;
	}
	st->samples.n = w;
	st->deltas.n = dw;
	k->ustacks.n = uw;
	for (size_t i = 0; i < st->sb.n; i++)
		if (i >= nr_sb || st->sb.a[i].time > until)
			st->sb.a[ew++] = st->sb.a[i];
	st->sb.n = ew;
	compact_chains(pt, st, k);
	return 0;
}

int evprof__part_flush_exits(struct sess_part *pt, struct sess_store *st,
			     struct sess_cut *c, uint64_t until)
{
	const struct sess_tasks *t = &pt->t;
	int err = 0;

	/* EXITs this part replays, then those earlier parts did. */
	for (size_t i = 0; !err && i < st->sb.n; i++) {
		const struct sb_event *e = &st->sb.a[i];

		if (e->kind == SB_EXIT && e->time && e->time <= until)
			err = evprof__cut_flush_tid(c, st, e->tid, until);
	}
	/* Not an image an exec ended: its task goes on in the next. */
	for (size_t i = 0; !err && i < t->threads.n; i++) {
		const struct bthread *th = &t->threads.a[i];
		long latest;

		if (th->end &&
		    evprof__hashmap_find(t->tid_thread, (long)th->tid,
					 &latest) &&
		    (size_t)latest == i)
			err = evprof__cut_flush_tid(c, st, th->tid, until);
	}
	return err;
}

/* The tids whose task was forgotten, as keys; see gone(). */
struct gone_set {
	struct evprof_hashmap *tids;
	uint64_t until;
	int err;
};

static void note_gone(uint32_t tid, uint64_t end, void *ctx)
{
	struct gone_set *g = ctx;

	(void)end;
	if (!g->err &&
	    evprof__hashmap_set(g->tids, (long)tid, 0, NULL, NULL) < 0)
		g->err = -ENOMEM;
}

/*
 * Everything of tid up to until is its dead task's: the tid's latest
 * thread, replayed up to until, is the one forgotten.
 */
static bool gone(uint32_t tid, uint64_t time, void *ctx)
{
	const struct gone_set *g = ctx;

	return time <= g->until &&
	       evprof__hashmap_find(g->tids, (long)tid, NULL);
}

/* Keeps the strings that remaining side-band events and tasks name. */
static int compact_strs(struct sess_part *pt, struct sess_store *st)
{
	struct sess_tasks *t = &pt->t;
	size_t n = 0,
	       cap = 2 * st->sb.n + t->procs.n + t->threads.n + 2 * t->maps.n;
	struct sstr_ref *refs = malloc((cap ? cap : 1) * sizeof(*refs));
	int err;

	if (!refs)
		return -ENOMEM;
	for (size_t i = 0; i < st->sb.n; i++) {
		struct sb_event *e = &st->sb.a[i];

		if (e->kind == SB_FORK || e->kind == SB_EXIT ||
		    e->kind == SB_CGROUP || e->kind == SB_NS_IDS)
			continue;
		refs[n++] = (struct sstr_ref){&e->str, 0};
		if (e->build_id_len)
			refs[n++] =
			    (struct sstr_ref){&e->build_id, e->build_id_len};
	}
	for (size_t i = 0; i < t->procs.n; i++)
		if (t->procs.a[i].has_name)
			refs[n++] = (struct sstr_ref){&t->procs.a[i].name, 0};
	for (size_t i = 0; i < t->threads.n; i++)
		if (t->threads.a[i].has_name)
			refs[n++] = (struct sstr_ref){&t->threads.a[i].name, 0};
	for (size_t i = 0; i < t->maps.n; i++) {
		struct bmap *m = &t->maps.a[i];

		refs[n++] = (struct sstr_ref){&m->path, 0};
		if (m->build_id_len)
			refs[n++] =
			    (struct sstr_ref){&m->build_id, m->build_id_len};
	}
	err = evprof__sstore_strs_compact(st, refs, n);
	free(refs);
	return err;
}

static int keep_first(int err, int next)
{
	return err ? err : next;
}

int evprof__part_forget(struct sess_part *pt, struct sess_store *st,
			struct sess_cut *c, uint64_t until)
{
	struct gone_set g = {.until = until};
	uint32_t *map_to = NULL;
	int err = 0;

	g.tids = evprof__hashmap_new(evprof__hashmap_u64_hash,
				     evprof__hashmap_u64_equal, NULL);
	if (!g.tids)
		return -ENOMEM;
	if (until > EVPROF__PART_GRACE_NS)
		err =
		    evprof__tasks_forget(&pt->t, until - EVPROF__PART_GRACE_NS,
					 &map_to, note_gone, &g);
	/* Mappings go too when no thread did (replaced by later ones). */
	if (err >= 0 && map_to) {
		evprof__stacks_maps_moved(&pt->sk, map_to);
		free(map_to);
	}
	if (err > 0) {
		/*
		 * Each alone: what one keeps (without memory) does no harm to
		 * the others.
		 */
		err = g.err;
		err = keep_first(err, evprof__cut_forget(c, st, gone, &g));
	}
	evprof__hashmap_free(g.tids);
	if (err < 0)
		return err;
	return compact_strs(pt, st);
}

uint64_t evprof__part_thread_total(const struct sess_part *pt, size_t nr_slots,
				   uint32_t tid, int slot)
{
	long off;

	if (!pt || !pt->tid_tot ||
	    !evprof__hashmap_find(pt->tid_tot, (long)tid, &off))
		return 0;
	return pt->tot.a[off + (slot < 0 ? (long)nr_slots : slot)];
}

uint64_t evprof__part_unkept(const struct sess_part *pt, size_t nr_slots,
			     int slot)
{
	if (!pt)
		return 0;
	return pt->unkept[slot < 0 ? nr_slots : (size_t)slot];
}
