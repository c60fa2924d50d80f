// SPDX-License-Identifier: MIT
/* The util layer's hash map, growable array and sized-opts check. */
#include <errno.h>
#include <limits.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "cases.h"
#include "base/util.h"

#include <evprof/common.h>

#define NKEYS 100000

/*
 * Keys spread over a wide range with a gap pattern, so the truth array
 * (indexed by i) and the map (keyed by key_of(i)) are independent.
 */
static long key_of(size_t i)
{
	return (long)(i * 7919 + 13);
}

static void test_hashmap_u64_truth(void **state)
{
	struct evprof_hashmap *m = evprof__hashmap_new(
	    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
	static long truth[NKEYS]; /* value per i, or -1 when absent */
	long v, ok, ov;

	(void)state;
	assert_non_null(m);
	assert_int_equal(evprof__hashmap_size(m), 0);
	assert_false(evprof__hashmap_find(m, 1, &v));
	for (size_t i = 0; i < NKEYS; i++) {
		truth[i] = (long)i * 3;
		assert_int_equal(evprof__hashmap_add(m, key_of(i), truth[i]),
				 0);
	}
	assert_int_equal(evprof__hashmap_size(m), NKEYS);
	/* add never replaces */
	assert_int_equal(evprof__hashmap_add(m, key_of(5), 1), -EEXIST);
	/* set replaces every third, deletes every fifth */
	for (size_t i = 0; i < NKEYS; i += 3) {
		assert_int_equal(
		    evprof__hashmap_set(m, key_of(i), -(long)i, &ok, &ov), 1);
		assert_int_equal(ok, key_of(i));
		assert_int_equal(ov, truth[i]);
		truth[i] = -(long)i;
	}
	for (size_t i = 0; i < NKEYS; i += 5) {
		assert_true(evprof__hashmap_delete(m, key_of(i), &ok, &ov));
		assert_int_equal(ok, key_of(i));
		assert_int_equal(ov, truth[i]);
		assert_false(evprof__hashmap_delete(m, key_of(i), NULL, NULL));
		truth[i] = -1;
	}
	/* set of an absent key adds */
	assert_int_equal(evprof__hashmap_set(m, key_of(0), 77, NULL, NULL), 0);
	truth[0] = 77;
	size_t present = 0;
	for (size_t i = 0; i < NKEYS; i++) {
		if (truth[i] == -1) {
			assert_false(evprof__hashmap_find(m, key_of(i), &v));
			continue;
		}
		present++;
		v = 12345;
		assert_true(evprof__hashmap_find(m, key_of(i), &v));
		assert_int_equal(v, truth[i]);
	}
	assert_int_equal(present, NKEYS - NKEYS / 5 + 1);
	assert_int_equal(evprof__hashmap_size(m), present);
	/* keys between ours are absent */
	for (size_t i = 0; i < 1000; i++)
		assert_false(evprof__hashmap_find(m, key_of(i) + 1, NULL));
	/* buckets are a power of two and the load stays under 3/4 */
	assert_int_equal(m->cap & (m->cap - 1), 0);
	assert_true(m->sz <= m->cap / 4 * 3);
	evprof__hashmap_free(m);
	evprof__hashmap_free(NULL);
}

static void test_hashmap_iterate_once(void **state)
{
	struct evprof_hashmap *m = evprof__hashmap_new(
	    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
	struct evprof_hashmap_entry *cur, *tmp;
	static unsigned char seen[NKEYS];
	size_t bkt, n = 0;

	(void)state;
	assert_non_null(m);
	for (size_t i = 0; i < NKEYS; i++)
		assert_int_equal(evprof__hashmap_add(m, (long)i, (long)i + 1),
				 0);
	EVPROF_HASHMAP_FOR_EACH(m, cur, bkt)
	{
		assert_true(cur->key >= 0 && cur->key < NKEYS);
		assert_int_equal(cur->value, cur->key + 1);
		assert_int_equal(seen[cur->key], 0);
		seen[cur->key] = 1;
		n++;
	}
	assert_int_equal(n, NKEYS);
	/* the safe walk deletes the odd keys as it goes */
	EVPROF_HASHMAP_FOR_EACH_SAFE(m, cur, tmp, bkt)
	if (cur->key & 1)
		assert_true(evprof__hashmap_delete(m, cur->key, NULL, NULL));
	assert_int_equal(evprof__hashmap_size(m), NKEYS / 2);
	n = 0;
	EVPROF_HASHMAP_FOR_EACH(m, cur, bkt)
	{
		assert_int_equal(cur->key & 1, 0);
		n++;
	}
	assert_int_equal(n, NKEYS / 2);
	evprof__hashmap_free(m);
}

static void test_hashmap_strings(void **state)
{
	struct evprof_hashmap *m = evprof__hashmap_new(
	    evprof__hashmap_str_hash, evprof__hashmap_str_equal, NULL);
	static char keys[1000][16];
	char probe[16];
	long v, ok;

	(void)state;
	assert_non_null(m);
	for (int i = 0; i < 1000; i++) {
		snprintf(keys[i], sizeof(keys[i]), "key-%d", i);
		assert_int_equal(evprof__hashmap_add(m, (long)keys[i], i), 0);
	}
	/* found by content, through a different buffer */
	for (int i = 0; i < 1000; i++) {
		snprintf(probe, sizeof(probe), "key-%d", i);
		assert_true(evprof__hashmap_find(m, (long)probe, &v));
		assert_int_equal(v, i);
		assert_int_equal(evprof__hashmap_add(m, (long)probe, 0),
				 -EEXIST);
	}
	assert_false(evprof__hashmap_find(m, (long)"key-1000", NULL));
	assert_false(evprof__hashmap_find(m, (long)"", NULL));
	/* set takes the new key and hands back the stored one */
	snprintf(probe, sizeof(probe), "key-7");
	assert_int_equal(evprof__hashmap_set(m, (long)probe, 70, &ok, NULL), 1);
	assert_ptr_equal((const char *)ok, keys[7]);
	assert_true(evprof__hashmap_delete(m, (long)"key-7", &ok, &v));
	assert_ptr_equal((const char *)ok, probe);
	assert_int_equal(v, 70);
	assert_int_equal(evprof__hashmap_size(m), 999);
	evprof__hashmap_free(m);
}

/* Every key in one chain: equal_fn alone must tell them apart. */
static size_t const_hash(long key, void *ctx)
{
	(void)key;
	(*(int *)ctx)++;
	return 42;
}

static void test_hashmap_collisions(void **state)
{
	int calls = 0;
	struct evprof_hashmap *m =
	    evprof__hashmap_new(const_hash, evprof__hashmap_u64_equal, &calls);
	long v;

	(void)state;
	assert_non_null(m);
	for (long k = 0; k < 500; k++)
		assert_int_equal(evprof__hashmap_add(m, k * 2, k), 0);
	assert_true(calls > 0); /* ctx reaches the hash fn */
	for (long k = 0; k < 500; k++) {
		assert_true(evprof__hashmap_find(m, k * 2, &v));
		assert_int_equal(v, k);
		assert_false(evprof__hashmap_find(m, k * 2 + 1, NULL));
	}
	/* delete from the chain's middle, head and tail */
	assert_true(evprof__hashmap_delete(m, 500, NULL, NULL));
	assert_true(evprof__hashmap_delete(m, 0, NULL, NULL));
	assert_true(evprof__hashmap_delete(m, 998, NULL, NULL));
	assert_int_equal(evprof__hashmap_size(m), 497);
	for (long k = 0; k < 500; k++)
		assert_int_equal(evprof__hashmap_find(m, k * 2, NULL),
				 k != 250 && k != 0 && k != 499);
	evprof__hashmap_free(m);
}

static void test_hash_bytes(void **state)
{
	struct {
		uint32_t a;
		uint64_t b;
	} k = {1, 2};
	uint64_t h;

	(void)state;
	/* published FNV-1a 64 test vectors */
	assert_true(evprof__hash_mem(EVPROF_HASH_INIT, "", 0) ==
		    0xcbf29ce484222325ULL);
	assert_true(evprof__hash_mem(EVPROF_HASH_INIT, "a", 1) ==
		    0xaf63dc4c8601ec8cULL);
	assert_true(evprof__hash_mem(EVPROF_HASH_INIT, "foobar", 6) ==
		    0x85944171f73967e8ULL);
	/* chaining is the same as hashing the concatenation */
	h = evprof__hash_mem(EVPROF_HASH_INIT, "foo", 3);
	assert_true(evprof__hash_mem(h, "bar", 3) == 0x85944171f73967e8ULL);
	/* a composite key, field by field (no padding bytes hashed) */
	h = evprof__hash_mem(EVPROF_HASH_INIT, &k.a, sizeof(k.a));
	h = evprof__hash_mem(h, &k.b, sizeof(k.b));
	k.b = 3;
	assert_true(evprof__hash_mem(
			evprof__hash_mem(EVPROF_HASH_INIT, &k.a, sizeof(k.a)),
			&k.b, sizeof(k.b)) != h);
}

/* Against counting bit by bit, and the word hash's basic properties. */
static void test_popcount_hash_words(void **state)
{
	uint64_t x = 0x9e3779b97f4a7c15ULL, w[3] = {1, 2, 3}, v[3] = {1, 2, 4};

	(void)state;
	assert_int_equal(evprof__popcount64(0), 0);
	assert_int_equal(evprof__popcount64(~0ULL), 64);
	for (int i = 0; i < 1000; i++) {
		unsigned n = 0;

		for (int b = 0; b < 64; b++)
			n += (unsigned)(x >> b & 1);
		assert_int_equal(evprof__popcount64(x), n);
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	}
	assert_true(evprof__hash_words(EVPROF_HASH_INIT, w, 3) ==
		    evprof__hash_words(EVPROF_HASH_INIT, w, 3));
	assert_true(evprof__hash_words(EVPROF_HASH_INIT, w, 3) !=
		    evprof__hash_words(EVPROF_HASH_INIT, v, 3));
	/* order matters, and chaining is hashing the concatenation */
	v[0] = 2;
	v[1] = 1;
	v[2] = 3;
	assert_true(evprof__hash_words(EVPROF_HASH_INIT, w, 3) !=
		    evprof__hash_words(EVPROF_HASH_INIT, v, 3));
	assert_true(evprof__hash_words(
			evprof__hash_words(EVPROF_HASH_INIT, w, 1), w + 1, 2) ==
		    evprof__hash_words(EVPROF_HASH_INIT, w, 3));
}

static void test_vec(void **state)
{
	EVPROF_VEC(uint32_t) v = {0};
	size_t grows = 0, last_cap = 0;

	(void)state;
	for (uint32_t i = 0; i < NKEYS; i++) {
		assert_int_equal(EVPROF_VEC_PUSH(&v, i * 3), 0);
		if (v.cap != last_cap) {
			/* geometric: at least double each time */
			assert_true(v.cap >= 2 * last_cap);
			last_cap = v.cap;
			grows++;
		}
	}
	assert_int_equal(v.n, NKEYS);
	assert_true(grows <= 15); /* 8 << 14 > 100000 */
	for (uint32_t i = 0; i < NKEYS; i++)
		assert_int_equal(v.a[i], i * 3);
	/* reserve within cap changes nothing */
	uint32_t *a = v.a;
	assert_int_equal(EVPROF_VEC_RESERVE(&v, v.cap), 0);
	assert_ptr_equal(v.a, a);
	EVPROF_VEC_FREE(&v);
	assert_null(v.a);
	assert_int_equal(v.n, 0);
	assert_int_equal(v.cap, 0);
}

static void test_vec_limits(void **state)
{
	EVPROF_VEC(uint64_t) v = {0};

	(void)state;
	/* bytes would overflow size_t: refused before any allocation */
	assert_int_equal(EVPROF_VEC_RESERVE(&v, SIZE_MAX / 4), -E2BIG);
	assert_int_equal(EVPROF_VEC_RESERVE(&v, SIZE_MAX), -E2BIG);
	assert_null(v.a);
	assert_int_equal(v.cap, 0);
	/* a caller's cap: doubling stops at it, one past it fails */
	assert_int_equal(EVPROF_VEC_RESERVE_MAX(&v, 9, 12), 0);
	assert_int_equal(v.cap, 12);
	assert_int_equal(EVPROF_VEC_RESERVE_MAX(&v, 12, 12), 0);
	assert_int_equal(EVPROF_VEC_RESERVE_MAX(&v, 13, 12), -E2BIG);
	assert_int_equal(v.cap, 12);
	assert_int_equal(EVPROF_VEC_RESERVE_MAX(&v, 3, 2), 0); /* have 12 */
	/* small first reserve still allocates 8 */
	EVPROF_VEC_FREE(&v);
	assert_int_equal(EVPROF_VEC_RESERVE(&v, 1), 0);
	assert_int_equal(v.cap, 8);
	EVPROF_VEC_FREE(&v);
}

struct t_opts {
	size_t sz;
	int a;
	long b;
};

struct t_opts_v2 {
	size_t sz;
	int a;
	long b;
	long c; /* a newer caller's field */
};

/* The way a public function uses the pair. */
static int take_opts(const struct t_opts *opts, long *b)
{
	if (!EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	*b = EVPROF_OPTS_GET(opts, b, 99);
	return 0;
}

static void test_opts(void **state)
{
	struct t_opts o = {.sz = sizeof(o), .a = 1, .b = 2};
	const struct t_opts *po = &o;
	struct t_opts_v2 o2 = {.sz = sizeof(o2), .a = 1, .b = 2};
	long b;

	(void)state;
	assert_int_equal(take_opts(&o, &b), 0);
	assert_int_equal(b, 2);
	/* NULL: allowed when the caller says so; defaults */
	assert_int_equal(take_opts(NULL, &b), 0);
	assert_int_equal(b, 99);
	assert_false(EVPROF_OPTS_VALID((const struct t_opts *)NULL, false));
	/* an older caller: sz ends before b, which defaults */
	o.sz = offsetof(struct t_opts, b);
	assert_int_equal(take_opts(&o, &b), 0);
	assert_int_equal(b, 99);
	assert_true(EVPROF_OPTS_HAS(po, a));
	assert_false(EVPROF_OPTS_HAS(po, b));
	/* sz that does not even cover itself */
	o.sz = 0;
	assert_int_equal(take_opts(&o, &b), -EINVAL);
	o.sz = sizeof(size_t) - 1;
	assert_int_equal(take_opts(&o, &b), -EINVAL);
	o.sz = sizeof(size_t);
	assert_int_equal(take_opts(&o, &b), 0);
	assert_int_equal(b, 99);
	/* a newer caller: unknown zero bytes pass, non-zero ones do not */
	assert_int_equal(take_opts((const struct t_opts *)&o2, &b), 0);
	assert_int_equal(b, 2);
	o2.c = 1;
	assert_int_equal(take_opts((const struct t_opts *)&o2, &b), -EINVAL);
	o2.c = LONG_MIN; /* x86: a bit in its last byte only */
	assert_int_equal(take_opts((const struct t_opts *)&o2, &b), -EINVAL);
}

/*
 * "Did you mean": one edit per three letters (a change, an insertion, a
 * deletion or a swap of neighbours), case ignored, nothing on a tie or a
 * word too short to tell.
 */
static void test_closest_name(void **state)
{
	static const char *const names[] = {
	    "cycles",	  "instructions", "page-faults", "cpu-clock",
	    "task-clock", "output",	  "pid"};
	const size_t n = sizeof(names) / sizeof(names[0]);

	(void)state;
	assert_string_equal(evprof_closest_name("pagefaults", names, n),
			    "page-faults"); /* a letter added */
	assert_string_equal(evprof_closest_name("cpu-clokc", names, n),
			    "cpu-clock"); /* a swap */
	assert_string_equal(evprof_closest_name("instrucions", names, n),
			    "instructions"); /* a letter left out */
	assert_string_equal(evprof_closest_name("ouptut", names, n), "output");
	assert_string_equal(evprof_closest_name("CYCLES", names, n), "cycles");
	assert_string_equal(evprof_closest_name("cycle", names, n), "cycles");
	/* too far: "instr" is 7 edits from instructions, one allowed */
	assert_null(evprof_closest_name("instr", names, n));
	assert_null(evprof_closest_name("xyzzy", names, n));
	assert_string_equal(evprof_closest_name("pd", names, n), "pid");
	assert_null(evprof_closest_name("p", names, n));
	assert_null(evprof_closest_name(NULL, names, n));
	assert_null(evprof_closest_name("cycles", names, 0));
}

static void test_closest_name_tie(void **state)
{
	static const char *const names[] = {"cat", "bat"};

	(void)state;
	/* "hat" is one change from each: neither is named */
	assert_null(evprof_closest_name("hat", names, 2));
	assert_string_equal(evprof_closest_name("cta", names, 2), "cat");
}

/*
 * mkdir -p for the caches: made (0700) under a directory of ours, refused
 * under another user's (sudo -E: HOME is the invoking user's), made under
 * a sticky one such as /tmp.
 */
static void test_mkdirs_owner(void **state)
{
	char top[] = "/tmp/evprof-mkdirs-XXXXXX", path[PATH_MAX];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(top));
	snprintf(path, sizeof(path), "%s/a/b/c", top);
	assert_int_equal(evprof__mkdirs(path), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0700);
	assert_int_equal(evprof__mkdirs(path), 0); /* there already */
	if (geteuid() == 0) {
		/* Another user's: neither it nor anything below is made. */
		snprintf(path, sizeof(path), "%s/other", top);
		assert_int_equal(mkdir(path, 0755), 0);
		assert_int_equal(chown(path, 65534, 65534), 0);
		snprintf(path, sizeof(path), "%s/other/x/y", top);
		assert_int_equal(evprof__mkdirs(path), -EPERM);
		snprintf(path, sizeof(path), "%s/other/x", top);
		assert_int_equal(stat(path, &st), -1);
		/* Sticky (as /tmp): made. */
		snprintf(path, sizeof(path), "%s/other", top);
		assert_int_equal(chmod(path, 01777), 0);
		snprintf(path, sizeof(path), "%s/other/x/y", top);
		assert_int_equal(evprof__mkdirs(path), 0);
	}
	snprintf(path, sizeof(path), "rm -rf %s", top);
	assert_int_equal(system(path), 0);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_hashmap_u64_truth),
	    cmocka_unit_test(test_hashmap_iterate_once),
	    cmocka_unit_test(test_hashmap_strings),
	    cmocka_unit_test(test_hashmap_collisions),
	    cmocka_unit_test(test_hash_bytes),
	    cmocka_unit_test(test_popcount_hash_words),
	    cmocka_unit_test(test_vec),
	    cmocka_unit_test(test_vec_limits),
	    cmocka_unit_test(test_opts),
	    cmocka_unit_test(test_closest_name),
	    cmocka_unit_test(test_closest_name_tie),
	    cmocka_unit_test(test_mkdirs_owner),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
