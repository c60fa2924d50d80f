// SPDX-License-Identifier: MIT
/*
 * Session storage: amortised growth of a few arrays and one hash set of
 * callchains (an entry per distinct chain); nothing here allocates per
 * sample otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "store.h"

void evprof__sstore_free(struct sess_store *st)
{
	EVPROF_VEC_FREE(&st->chains);
	evprof__hashmap_free(st->chain_set);
	EVPROF_VEC_FREE(&st->samples);
	EVPROF_VEC_FREE(&st->deltas);
	EVPROF_VEC_FREE(&st->sb);
	EVPROF_VEC_FREE(&st->strs);
}

int evprof__sstore_bytes(struct sess_store *st, const void *p, size_t len,
			 uint32_t *off)
{
	if (st->strs.n + len > UINT32_MAX ||
	    EVPROF_VEC_RESERVE(&st->strs, st->strs.n + len))
		return -ENOMEM;
	*off = (uint32_t)st->strs.n;
	memcpy(st->strs.a + st->strs.n, p, len);
	st->strs.n += len;
	return 0;
}

int evprof__sstore_str(struct sess_store *st, const char *str, uint32_t *off)
{
	return evprof__sstore_bytes(st, str, strlen(str) + 1, off);
}

int evprof__sstore_strs_compact(struct sess_store *st,
				const struct sstr_ref *refs, size_t n)
{
	struct evprof_hashmap *moved;
	EVPROF_VEC(char) arena = {0};
	int err = -ENOMEM;

	moved = evprof__hashmap_new(evprof__hashmap_u64_hash,
				    evprof__hashmap_u64_equal, NULL);
	if (!moved)
		return -ENOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t off = *refs[i].off;
		size_t len =
		    refs[i].len ? refs[i].len : strlen(st->strs.a + off) + 1;

		if (evprof__hashmap_find(moved, (long)off, NULL))
			continue;
		if (EVPROF_VEC_RESERVE(&arena, arena.n + len) ||
		    evprof__hashmap_add(moved, (long)off, (long)arena.n))
			goto out;
		memcpy(arena.a + arena.n, st->strs.a + off, len);
		arena.n += len;
	}
	for (size_t i = 0; i < n; i++) {
		long to = 0;

		evprof__hashmap_find(moved, (long)*refs[i].off, &to);
		*refs[i].off = (uint32_t)to;
	}
	EVPROF_VEC_FREE(&st->strs);
	st->strs.a = arena.a;
	st->strs.n = arena.n;
	st->strs.cap = arena.cap;
	arena.a = NULL;
	err = 0;
out:
	free(arena.a);
	evprof__hashmap_free(moved);
	return err;
}

/* ---- callchain arena ---------------------------------------------------- */

/*
 * The set's keys are word offsets in the arena, hashed and compared by the
 * words there. A chain looked up is first written past the arena's end
 * (not yet part of it), so it has an offset too.
 */
static size_t chain_hash(long key, void *ctx)
{
	const struct sess_store *st = ctx;
	const uint64_t *w = st->chains.a + key;

	return (size_t)evprof__hash_words(EVPROF_HASH_INIT, w, w[0] + 1);
}

static bool chain_equal(long a, long b, void *ctx)
{
	const struct sess_store *st = ctx;
	const uint64_t *x = st->chains.a + a, *y = st->chains.a + b;

	return x[0] == y[0] && !memcmp(x + 1, y + 1, x[0] * sizeof(*x));
}

int evprof__sstore_chain(struct sess_store *st, const uint64_t *ips,
			 uint64_t nr, uint32_t *off)
{
	size_t end = st->chains.n;
	long found;

	if (!st->chain_set) {
		st->chain_set =
		    evprof__hashmap_new(chain_hash, chain_equal, st);
		if (!st->chain_set)
			return -ENOMEM;
	}
	if (end + nr + 1 >= UINT32_MAX ||
	    EVPROF_VEC_RESERVE(&st->chains, end + nr + 1))
		return -ENOMEM;
	st->chains.a[end] = nr;
	if (nr) /* a sample without chain nor ip has no ips at all (NULL) */
		memcpy(st->chains.a + end + 1, ips, nr * sizeof(*ips));
	if (evprof__hashmap_find(st->chain_set, (long)end, &found)) {
		*off = (uint32_t)found;
		return 0;
	}
	if (evprof__hashmap_add(st->chain_set, (long)end, (long)end))
		return -ENOMEM;
	st->chains.n += nr + 1;
	*off = (uint32_t)end;
	return 0;
}

int evprof__sstore_chains_compact(struct sess_store *st, uint32_t *const *refs,
				  size_t n)
{
	struct evprof_hashmap *moved, *set;
	EVPROF_VEC(uint64_t) arena = {0};
	int err = -ENOMEM;

	moved = evprof__hashmap_new(evprof__hashmap_u64_hash,
				    evprof__hashmap_u64_equal, NULL);
	if (!moved)
		return -ENOMEM;
	/* Distinct chains stay distinct: copied once each, in order of refs. */
	for (size_t i = 0; i < n; i++) {
		const uint64_t *w = st->chains.a + *refs[i];
		long to;

		if (evprof__hashmap_find(moved, (long)*refs[i], &to))
			continue;
		if (EVPROF_VEC_RESERVE(&arena, arena.n + w[0] + 1) ||
		    evprof__hashmap_add(moved, (long)*refs[i], (long)arena.n))
			goto out;
		memcpy(arena.a + arena.n, w, (w[0] + 1) * sizeof(*w));
		arena.n += w[0] + 1;
	}
	/* The set hashes the words at its offsets: the new arena's. */
	set = evprof__hashmap_new(chain_hash, chain_equal, st);
	if (!set)
		goto out;
	EVPROF_VEC_FREE(&st->chains);
	st->chains.a = arena.a;
	st->chains.n = arena.n;
	st->chains.cap = arena.cap;
	arena.a = NULL;
	for (size_t off = 0; off < st->chains.n; off += st->chains.a[off] + 1) {
		if (evprof__hashmap_add(set, (long)off, (long)off)) {
			/* Lookups then store a chain again: no harm. */
			break;
		}
	}
	evprof__hashmap_free(st->chain_set);
	st->chain_set = set;
	for (size_t i = 0; i < n; i++) {
		long to = 0;

		evprof__hashmap_find(moved, (long)*refs[i], &to);
		*refs[i] = (uint32_t)to;
	}
	err = 0;
out:
	free(arena.a);
	evprof__hashmap_free(moved);
	return err;
}

/* ---- samples ------------------------------------------------------------ */

int evprof__sstore_sample_reserve(struct sess_store *st)
{
	if (EVPROF_VEC_RESERVE(&st->samples, st->samples.n + 1) ||
	    EVPROF_VEC_RESERVE(&st->deltas, st->deltas.n + st->nr_slots) ||
	    st->deltas.n + st->nr_slots > UINT32_MAX ||
	    st->samples.n >= NO_SAMPLE)
		return -ENOMEM;
	return 0;
}

struct ssample *evprof__sstore_sample(struct sess_store *st,
				      const struct ssample *x,
				      const uint64_t *vals)
{
	struct ssample *ss = &st->samples.a[st->samples.n++];

	*ss = *x;
	ss->deltas = (uint32_t)st->deltas.n;
	for (size_t i = 0; i < st->nr_slots; i++)
		if (x->has & (1ULL << i))
			st->deltas.a[st->deltas.n++] = vals[i];
	if (!st->first_time || x->time < st->first_time)
		st->first_time = x->time;
	if (x->time > st->last_time)
		st->last_time = x->time;
	return ss;
}

bool evprof__sstore_has_values(const struct sess_store *st,
			       const struct ssample *x)
{
	if ((x->flags & SS_HAS_CPU) && x->cpu_delta)
		return true;
	for (size_t i = 0; i < st->nr_slots; i++)
		if (evprof__sstore_delta(st, x, i))
			return true;
	return false;
}

uint64_t evprof__sstore_delta(const struct sess_store *st,
			      const struct ssample *x, size_t slot)
{
	const uint64_t *d = st->deltas.a + x->deltas;

	if (!(x->has & (1ULL << slot)))
		return 0;
	return d[evprof__popcount64(x->has & ((1ULL << slot) - 1))];
}

/* ---- side-band events --------------------------------------------------- */

struct sb_event *evprof__sstore_sb_new(struct sess_store *st, enum sb_kind kind,
				       uint64_t time)
{
	struct sb_event *e;

	if (EVPROF_VEC_RESERVE(&st->sb, st->sb.n + 1))
		return NULL;
	e = &st->sb.a[st->sb.n];
	*e = (struct sb_event){.time = time, .kind = (uint8_t)kind};
	return e;
}
