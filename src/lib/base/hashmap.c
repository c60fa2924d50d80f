// SPDX-License-Identifier: MIT
/* The one hash map of the library (see util.h for the rules). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util.h"

#define HASHMAP_MIN_BITS 4

struct evprof_hashmap *evprof__hashmap_new(evprof_hashmap_hash_fn hash_fn,
					   evprof_hashmap_equal_fn equal_fn,
					   void *ctx)
{
	struct evprof_hashmap *map = calloc(1, sizeof(*map));

	if (!map) {
		errno = ENOMEM;
		return NULL;
	}
	map->hash_fn = hash_fn;
	map->equal_fn = equal_fn;
	map->ctx = ctx;
	return map;
}

void evprof__hashmap_free(struct evprof_hashmap *map)
{
	struct evprof_hashmap_entry *cur, *tmp;
	size_t bkt;

	if (!map)
		return;
	EVPROF_HASHMAP_FOR_EACH_SAFE(map, cur, tmp, bkt)
	free(cur);
	free(map->buckets);
	free(map);
}

size_t evprof__hashmap_size(const struct evprof_hashmap *map)
{
	return map->sz;
}

/*
 * Fibonacci hashing: the top bits of hash * 2^64/phi depend on every bit of
 * hash, so identity hashes of aligned pointers or small integers spread.
 */
static size_t bucket_of(size_t hash, int bits)
{
	return (size_t)(((uint64_t)hash * 0x9e3779b97f4a7c15ULL) >>
			(64 - bits));
}

static struct evprof_hashmap_entry **find_link(const struct evprof_hashmap *map,
					       long key)
{
	struct evprof_hashmap_entry **link;

	if (!map->cap)
		return NULL;
	link = &map->buckets[bucket_of(map->hash_fn(key, map->ctx),
				       map->cap_bits)];
	for (; *link; link = &(*link)->next)
		if (map->equal_fn((*link)->key, key, map->ctx))
			return link;
	return NULL;
}

/* Doubles the buckets once entries would pass 3/4 of them. */
static int grow(struct evprof_hashmap *map)
{
	struct evprof_hashmap_entry **nb, *cur, *tmp;
	int bits = map->cap ? map->cap_bits + 1 : HASHMAP_MIN_BITS;
	size_t bkt, ncap;

	if (map->sz + 1 <= map->cap / 4 * 3)
		return 0;
	if (bits >= (int)(sizeof(size_t) * 8 - 4))
		return -ENOMEM;
	ncap = (size_t)1 << bits;
	nb = calloc(ncap, sizeof(*nb));
	if (!nb)
		return -ENOMEM;
	EVPROF_HASHMAP_FOR_EACH_SAFE(map, cur, tmp, bkt)
	{
		size_t b = bucket_of(map->hash_fn(cur->key, map->ctx), bits);

		cur->next = nb[b];
		nb[b] = cur;
	}
	free(map->buckets);
	map->buckets = nb;
	map->cap = ncap;
	map->cap_bits = bits;
	return 0;
}

static int insert(struct evprof_hashmap *map, long key, long value)
{
	struct evprof_hashmap_entry *e;
	size_t b;
	int err = grow(map);

	if (err)
		return err;
	e = malloc(sizeof(*e));
	if (!e)
		return -ENOMEM;
	b = bucket_of(map->hash_fn(key, map->ctx), map->cap_bits);
	e->key = key;
	e->value = value;
	e->next = map->buckets[b];
	map->buckets[b] = e;
	map->sz++;
	return 0;
}

int evprof__hashmap_add(struct evprof_hashmap *map, long key, long value)
{
	if (find_link(map, key))
		return -EEXIST;
	return insert(map, key, value);
}

int evprof__hashmap_set(struct evprof_hashmap *map, long key, long value,
			long *old_key, long *old_value)
{
	struct evprof_hashmap_entry **link = find_link(map, key);

	if (!link)
		return insert(map, key, value);
	if (old_key)
		*old_key = (*link)->key;
	if (old_value)
		*old_value = (*link)->value;
	(*link)->key = key;
	(*link)->value = value;
	return 1;
}

bool evprof__hashmap_find(const struct evprof_hashmap *map, long key,
			  long *value)
{
	struct evprof_hashmap_entry **link = find_link(map, key);

	if (!link)
		return false;
	if (value)
		*value = (*link)->value;
	return true;
}

bool evprof__hashmap_delete(struct evprof_hashmap *map, long key, long *old_key,
			    long *old_value)
{
	struct evprof_hashmap_entry **link = find_link(map, key), *e;

	if (!link)
		return false;
	e = *link;
	if (old_key)
		*old_key = e->key;
	if (old_value)
		*old_value = e->value;
	*link = e->next;
	free(e);
	map->sz--;
	return true;
}

uint64_t evprof__hash_mem(uint64_t h, const void *p, size_t len)
{
	const unsigned char *b = p;

	for (size_t i = 0; i < len; i++) {
		h ^= b[i];
		h *= 0x100000001b3ULL; /* the 64-bit FNV prime */
	}
	return h;
}

uint64_t evprof__hash_words(uint64_t h, const uint64_t *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		h ^= w[i];
		h *= 0xff51afd7ed558ccdULL; /* murmur3's fmix64 constant */
		h ^= h >> 32;
	}
	return h;
}

size_t evprof__hashmap_u64_hash(long key, void *ctx)
{
	(void)ctx;
	return (size_t)key;
}

bool evprof__hashmap_u64_equal(long a, long b, void *ctx)
{
	(void)ctx;
	return a == b;
}

size_t evprof__hashmap_str_hash(long key, void *ctx)
{
	const char *s = (const char *)key;

	(void)ctx;
	return (size_t)evprof__hash_mem(EVPROF_HASH_INIT, s, strlen(s));
}

bool evprof__hashmap_str_equal(long a, long b, void *ctx)
{
	(void)ctx;
	return !strcmp((const char *)a, (const char *)b);
}
