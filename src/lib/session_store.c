// SPDX-License-Identifier: MIT
/*
 * Session storage: amortised growth of a few arrays and one hash set of
 * callchains; nothing here allocates per sample otherwise.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "session_store.h"

int evprof__vec_reserve(struct evprof__vec *v, size_t elem, size_t n)
{
	size_t cap;
	void *p;

	if (n <= v->cap - v->len)
		return 0;
	if (n > SIZE_MAX / elem - v->len)
		return -ENOMEM;
	cap = v->cap ? v->cap : 16;
	while (cap < v->len + n)
		cap = cap > SIZE_MAX / elem / 2 ? SIZE_MAX / elem : cap * 2;
	p = realloc(v->data, cap * elem);
	if (!p)
		return -ENOMEM;
	v->data = p;
	v->cap = cap;
	return 0;
}

void evprof__store_free(struct sess_store *st)
{
	free(st->chains.data);
	free(st->chain_set);
	free(st->samples.data);
	free(st->deltas.data);
	free(st->sb.data);
	free(st->strs.data);
}

int evprof__store_bytes(struct sess_store *st, const void *p, size_t len,
			uint32_t *off)
{
	int err;

	if (st->strs.len + len > UINT32_MAX)
		return -ENOMEM;
	err = evprof__vec_reserve(&st->strs, 1, len);
	if (err)
		return err;
	*off = (uint32_t)st->strs.len;
	memcpy((char *)st->strs.data + st->strs.len, p, len);
	st->strs.len += len;
	return 0;
}

int evprof__store_str(struct sess_store *st, const char *str, uint32_t *off)
{
	return evprof__store_bytes(st, str, strlen(str) + 1, off);
}

/* ---- callchain arena ---------------------------------------------------- */

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

static uint64_t hash_words(const uint64_t *w, uint64_t nr)
{
	uint64_t h = mix64(nr + 1);

	for (uint64_t i = 0; i < nr; i++)
		h = mix64(h ^ w[i]) + i;
	return h;
}

static void chain_put(uint32_t *set, size_t cap, uint64_t h, uint32_t off)
{
	size_t mask = cap - 1, i;

	for (i = h & mask; set[i]; i = (i + 1) & mask)
		;
	set[i] = off + 1;
}

static int chain_set_grow(struct sess_store *st)
{
	size_t cap = st->chain_set_cap ? st->chain_set_cap * 2 : 1024;
	const uint64_t *words = st->chains.data;
	uint32_t *set = calloc(cap, sizeof(*set));

	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < st->chain_set_cap; i++) {
		uint32_t off = st->chain_set[i];

		if (off--)
			chain_put(set, cap,
				  hash_words(words + off + 1, words[off]), off);
	}
	free(st->chain_set);
	st->chain_set = set;
	st->chain_set_cap = cap;
	return 0;
}

int evprof__store_chain(struct sess_store *st, const uint64_t *ips,
			uint64_t nr, uint32_t *off)
{
	uint64_t h = hash_words(ips, nr);
	uint64_t *words;
	size_t mask, i;
	int err;

	if ((st->nr_chain_set + 1) * 2 > st->chain_set_cap) {
		err = chain_set_grow(st);
		if (err)
			return err;
	}
	words = st->chains.data;
	mask = st->chain_set_cap - 1;
	for (i = h & mask; st->chain_set[i]; i = (i + 1) & mask) {
		uint32_t o = st->chain_set[i] - 1;

		if (words[o] == nr &&
		    !memcmp(words + o + 1, ips, nr * sizeof(*ips))) {
			*off = o;
			return 0;
		}
	}
	if (st->chains.len + nr + 1 >= UINT32_MAX)
		return -ENOMEM;
	err = evprof__vec_reserve(&st->chains, sizeof(uint64_t), nr + 1);
	if (err)
		return err;
	words = st->chains.data;
	*off = (uint32_t)st->chains.len;
	words[*off] = nr;
	memcpy(words + *off + 1, ips, nr * sizeof(*ips));
	st->chains.len += nr + 1;
	st->chain_set[i] = *off + 1;
	st->nr_chain_set++;
	return 0;
}

/* ---- samples ------------------------------------------------------------ */

int evprof__store_sample_reserve(struct sess_store *st)
{
	if (evprof__vec_reserve(&st->samples, sizeof(struct ssample), 1) ||
	    evprof__vec_reserve(&st->deltas, sizeof(uint64_t), st->nr_slots) ||
	    st->deltas.len + st->nr_slots > UINT32_MAX ||
	    st->samples.len >= NO_SAMPLE)
		return -ENOMEM;
	return 0;
}

struct ssample *evprof__store_sample(struct sess_store *st,
				     const struct ssample *x,
				     const uint64_t *vals)
{
	struct ssample *ss = (struct ssample *)st->samples.data;
	uint64_t *d = st->deltas.data;

	ss += st->samples.len++;
	*ss = *x;
	ss->deltas = (uint32_t)st->deltas.len;
	for (size_t i = 0; i < st->nr_slots; i++)
		if (x->has & (1ULL << i))
			d[st->deltas.len++] = vals[i];
	if (!st->first_time || x->time < st->first_time)
		st->first_time = x->time;
	if (x->time > st->last_time)
		st->last_time = x->time;
	return ss;
}

uint64_t evprof__store_delta(const struct sess_store *st,
			     const struct ssample *x, size_t slot)
{
	const uint64_t *d = (const uint64_t *)st->deltas.data + x->deltas;

	if (!(x->has & (1ULL << slot)))
		return 0;
	return d[__builtin_popcountll(x->has & ((1ULL << slot) - 1))];
}

/* ---- side-band events --------------------------------------------------- */

struct sb_event *evprof__store_sb_new(struct sess_store *st, enum sb_kind kind,
				      uint64_t time)
{
	struct sb_event *e;

	if (evprof__vec_reserve(&st->sb, sizeof(*e), 1))
		return NULL;
	e = (struct sb_event *)st->sb.data + st->sb.len;
	*e = (struct sb_event){.time = time, .kind = (uint8_t)kind};
	return e;
}

/* ---- a small (u64, u64) -> u64 map -------------------------------------- */

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

bool evprof__kv_get(const struct kvmap *m, uint64_t a, uint64_t b, uint64_t *val)
{
	struct kv *e;

	if (!m->cap)
		return false;
	e = kv_slot(m->t, m->cap, a, b);
	if (e->used)
		*val = e->val;
	return e->used;
}

int evprof__kv_put(struct kvmap *m, uint64_t a, uint64_t b, uint64_t val)
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
