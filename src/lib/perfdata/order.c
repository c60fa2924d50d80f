// SPDX-License-Identifier: MIT
/*
 * Finished-round ordering. perf writes each pass over its per-CPU rings as
 * a round, ended by PERF_RECORD_FINISHED_ROUND; records within a round are
 * in ring order, not in time order, and a ring read late in round N may
 * still hold records older than some of round N's other rings, but none
 * older than what round N-1 saw last. So at the end of round N, records up
 * to the highest time seen by the end of round N-1 are final: they are
 * sorted by time (ties keep file order) and handed on; the rest wait. This
 * is perf's own rule (ordered_events, OE_FLUSH__ROUND), and keeps at most
 * two rounds in memory.
 *
 * A file without rounds (perf before 2.6.38, other writers, a crafted
 * one) would be held whole until the end: past a byte cap the older half
 * of what waits is handed on (perf's OE_FLUSH__HALF when its queue is
 * full), so memory stays bounded and only records that come later than
 * half the queue is old can be out of order.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

void evprof__pd_order_free(struct pd_order *o)
{
	EVPROF_VEC_FREE(&o->arena);
	EVPROF_VEC_FREE(&o->spare);
	free(o->q);
	free(o->tmp);
	memset(o, 0, sizeof(*o));
}

static bool before(const struct pd_qent *a, const struct pd_qent *b)
{
	return a->time != b->time ? a->time < b->time : a->seq < b->seq;
}

static int cmp_qent(const void *pa, const void *pb)
{
	const struct pd_qent *a = pa, *b = pb;

	return before(a, b) ? -1 : before(b, a);
}

/* Merges the sorted runs [lo, mid) and [mid, hi) of from into to. */
static void merge(const struct pd_qent *from, struct pd_qent *to, size_t lo,
		  size_t mid, size_t hi)
{
	size_t i = lo, j = mid, k = lo;

	while (i < mid && j < hi)
		to[k++] = before(&from[j], &from[i]) ? from[j++] : from[i++];
	memcpy(to + k, from + i, (mid - i) * sizeof(*to));
	k += mid - i;
	memcpy(to + k, from + j, (hi - j) * sizeof(*to));
}

/*
 * Sorts by merging the queue's ascending runs, a pass per doubling: what
 * waits from the round before is one run, each ring's records another
 * (perf reads each ring in time order). A round of 2 CPUs is 3 runs: two
 * passes, where qsort took a dozen. Returns false when out of memory.
 */
static bool merge_runs(struct pd_order *o)
{
	size_t *b, nb = 1, n = o->nr;
	struct pd_qent *from = o->q, *to;

	if (o->tmp_cap < o->cap) {
		struct pd_qent *t = realloc(o->tmp, o->cap * sizeof(*t));

		if (!t)
			return false;
		o->tmp = t;
		o->tmp_cap = o->cap;
	}
	/* Run starts, then n; at most n + 1 of them. */
	b = malloc((n + 1) * sizeof(*b));
	if (!b)
		return false;
	b[0] = 0;
	for (size_t i = 1; i < n; i++)
		if (before(&o->q[i], &o->q[i - 1]))
			b[nb++] = i;
	b[nb++] = n;
	to = o->tmp;
	while (nb > 2) {
		size_t m = 0, r;

		for (r = 0; r + 2 < nb; r += 2) {
			merge(from, to, b[r], b[r + 1], b[r + 2]);
			b[m++] = b[r];
		}
		if (r + 1 < nb) { /* an odd run out: copied as it is */
			memcpy(to + b[r], from + b[r],
			       (b[r + 1] - b[r]) * sizeof(*to));
			b[m++] = b[r];
		}
		b[m++] = n;
		nb = m;
		{
			struct pd_qent *t = from;

			from = to;
			to = t;
		}
	}
	free(b);
	if (from != o->q) {
		/* The sorted queue is in tmp: the buffers trade places. */
		size_t c = o->cap;

		o->tmp = o->q;
		o->q = from;
		o->cap = o->tmp_cap;
		o->tmp_cap = c;
	}
	return true;
}

/* Emits the first n records of the sorted queue, keeps the rest. */
static int emit_first(struct pd_order *o, size_t n, pd_emit_fn fn, void *ctx)
{
	size_t i, keep = 0;
	int err;

	for (i = 0; i < n; i++) {
		err = fn(ctx, o->arena.a + o->q[i].word, o->q[i].size,
			 o->q[i].off);
		if (err)
			return err;
	}
	/* The waiting records move to the spare arena, which then swaps. */
	o->spare.n = 0;
	for (; i < o->nr; i++) {
		struct pd_qent *e = &o->q[i];
		size_t words = (e->size + 7) / 8;

		if (EVPROF_VEC_RESERVE(&o->spare, o->spare.n + words))
			return -ENOMEM;
		memcpy(o->spare.a + o->spare.n, o->arena.a + e->word, e->size);
		e->word = o->spare.n;
		o->spare.n += words;
		o->q[keep++] = *e;
	}
	o->nr = keep;
	{
		__typeof__(o->arena) t = o->arena;

		o->arena = o->spare;
		o->spare = t;
	}
	return 0;
}

static void sort_queue(struct pd_order *o)
{
	if (o->nr && !merge_runs(o))
		qsort(o->q, o->nr, sizeof(*o->q), cmp_qent);
}

size_t evprof__pd_order_bytes(const struct pd_order *o)
{
	return o->arena.n * 8 + o->nr * sizeof(*o->q);
}

int evprof__pd_order_add(struct pd_order *o, const uint64_t *rec, uint32_t size,
			 uint64_t time, uint64_t off, pd_emit_fn fn, void *ctx)
{
	size_t words = (size + 7) / 8;
	size_t max = o->max_bytes ? o->max_bytes : PD_ORDER_MAX_BYTES;

	if (evprof__pd_order_bytes(o) + size + sizeof(*o->q) > max && o->nr) {
		int err;

		sort_queue(o);
		err = emit_first(o, (o->nr + 1) / 2, fn, ctx);
		if (err)
			return err;
	}

	if (o->nr == o->cap) {
		size_t cap = o->cap ? o->cap * 2 : 1024;
		struct pd_qent *q = realloc(o->q, cap * sizeof(*q));

		if (!q)
			return -ENOMEM;
		o->q = q;
		o->cap = cap;
	}
	if (EVPROF_VEC_RESERVE(&o->arena, o->arena.n + words))
		return -ENOMEM;
	memcpy(o->arena.a + o->arena.n, rec, size);
	o->q[o->nr++] = (struct pd_qent){.time = time,
					 .seq = o->seq++,
					 .word = o->arena.n,
					 .size = size,
					 .off = off};
	o->arena.n += words;
	if (time > o->max_time)
		o->max_time = time;
	return 0;
}

int evprof__pd_order_round(struct pd_order *o, pd_emit_fn fn, void *ctx)
{
	size_t n = 0;
	int err;

	sort_queue(o);
	while (n < o->nr && o->q[n].time <= o->limit)
		n++;
	err = emit_first(o, n, fn, ctx);
	o->limit = o->max_time;
	return err;
}

int evprof__pd_order_flush(struct pd_order *o, pd_emit_fn fn, void *ctx)
{
	sort_queue(o);
	return emit_first(o, o->nr, fn, ctx);
}
