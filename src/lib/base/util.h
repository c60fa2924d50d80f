/* SPDX-License-Identifier: MIT */
/*
 * Private helpers shared by every library module: messages, small I/O,
 * sized-opts checks, one growable array and one hash map.
 */
#ifndef EVPROF_LIB_UTIL_H
#define EVPROF_LIB_UTIL_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/common.h>

#define EVPROF_HIDDEN __attribute__((visibility("hidden")))

/* The longest build id kept (GNU: 20 bytes; others up to this). */
#define EVPROF__MAX_BUILD_ID 64

#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

__attribute__((format(printf, 2, 3))) EVPROF_HIDDEN void
evprof__print(enum evprof_print_level level, const char *fmt, ...);

#define pr_warn(...)  evprof__print(EVPROF_WARN, __VA_ARGS__)
#define pr_info(...)  evprof__print(EVPROF_INFO, __VA_ARGS__)
#define pr_debug(...) evprof__print(EVPROF_DEBUG, __VA_ARGS__)

/*
 * Reads up to len - 1 bytes of path into buf and NUL-terminates it.
 * Returns the byte count or -errno.
 */
EVPROF_HIDDEN int evprof__read_file(const char *path, char *buf, size_t len);

/*
 * Reads all of path (a /proc file has no size to ask for) into a malloc'd
 * buffer with a NUL after its len bytes; the caller frees *out. Returns 0,
 * -EFBIG past max bytes, or -errno.
 */
EVPROF_HIDDEN int evprof__read_all(const char *path, size_t max, char **out,
				   size_t *len);
/* The same from an open fd, read to its end (not closed). */
EVPROF_HIDDEN int evprof__read_fd_all(int fd, size_t max, char **out,
				      size_t *len);

/*
 * pread(2) of n bytes at off, retried on EINTR and short reads: how many
 * it read (n, or fewer at the end of the file), or -errno.
 */
EVPROF_HIDDEN ssize_t evprof__pread_full(int fd, void *buf, size_t n,
					 uint64_t off);
/* pwrite(2) of all n bytes at off, the same way: 0, -EIO, or -errno. */
EVPROF_HIDDEN int evprof__pwrite_all(int fd, const void *buf, size_t n,
				     uint64_t off);

/*
 * mkdir -p dir, each new directory 0700 (private), when dir or the deepest
 * directory of it that exists is this user's (or sticky, as /tmp):
 * -EPERM when another user's. Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__mkdirs(const char *dir);

/*
 * Parses a CPU list such as "0-3,5" into cpus[] (ascending, as written).
 * Returns how many CPUs the list names (may exceed max) or -EINVAL.
 */
EVPROF_HIDDEN int evprof__parse_cpu_list(const char *s, int *cpus, int max);

/* The value of hex digit c, or -1. */
static inline int evprof__hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Writes n bytes of b as 2 * n hex digits and a NUL into out. */
EVPROF_HIDDEN void evprof__hex(char *out, const uint8_t *b, size_t n,
			       bool upper);
/*
 * Decodes the hex digits of hex (either case, even count) into out.
 * Returns the byte count, or -1 when hex is not that or needs more than
 * max bytes.
 */
EVPROF_HIDDEN int evprof__unhex(const char *hex, uint8_t *out, size_t max);

/* Unaligned little helpers for untrusted bytes. */
static inline uint64_t evprof__load_u64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t evprof__load_u32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

/* ---- sized options structs ---------------------------------------------- */

/*
 * Every public opts struct starts with size_t sz, the caller's
 * sizeof(struct ...) when it was compiled, so the struct can grow without
 * breaking older callers (libbpf's rules). evprof__opts_valid() is the one
 * check: sz must at least cover sz itself, and bytes past the fields this
 * library knows (a newer caller's) must be zero, since we cannot honour
 * options we do not know. Returns true when valid; false after a message
 * naming who (the public function).
 */
EVPROF_HIDDEN bool evprof__opts_valid(const void *opts, size_t known_sz,
				      size_t user_sz, const char *who);

/*
 * True when opts is valid per evprof__opts_valid(), or NULL and null_ok.
 * Callers turn false into -EINVAL (or NULL with errno EINVAL).
 */
#define EVPROF_OPTS_VALID(opts, null_ok)                                       \
	((opts) ? evprof__opts_valid((opts), sizeof(*(opts)), (opts)->sz,      \
				     __func__)                                 \
		: (null_ok))

/*
 * Field f of opts, read only when the caller's sz covers it; else def (also
 * for NULL opts), so an older caller gets the default for newer fields.
 */
#define EVPROF_OPTS_HAS(opts, f)                                               \
	((opts) &&                                                             \
	 (opts)->sz >= offsetof(__typeof__(*(opts)), f) + sizeof((opts)->f))
#define EVPROF_OPTS_GET(opts, f, def)                                          \
	(EVPROF_OPTS_HAS(opts, f) ? (opts)->f : (def))

/* ---- sized stats structs ------------------------------------------------ */

/*
 * Every public stats struct starts with size_t sz as well, set by the
 * caller to its sizeof(struct ...). The getter fills a whole struct of its
 * own (full, known_sz bytes; its sz is ignored) and hands it to
 * evprof__stats_copy(), which copies into dst the fields both sizes cover,
 * writes no byte past dst's sz (an older caller's struct ends there), and
 * sets dst's sz to the bytes filled: less than the caller's when the caller
 * knows fields this library does not (those bytes are left alone). Returns
 * 0, or -EINVAL when dst is NULL or its sz does not cover sz itself.
 */
EVPROF_HIDDEN int evprof__stats_copy(void *dst, const void *full,
				     size_t known_sz);
#define EVPROF_STATS_COPY(dst, full)                                           \
	evprof__stats_copy((dst), (full), sizeof(*(full)))

/* ---- growable array ----------------------------------------------------- */

/*
 * A vector of T: a[0..n-1] are in use, cap are allocated. Zero-initialize
 * it ({0}); every helper grows it through evprof__vec_grow(), so all
 * vectors share one growth policy and one overflow check. Elements move on
 * growth: keep indices, not pointers, across a push.
 */
#define EVPROF_VEC(T)                                                          \
	struct {                                                               \
		T *a;                                                          \
		size_t n, cap;                                                 \
	}

/*
 * Makes *p (an array of *cap elements of elem_sz bytes, or NULL) hold at
 * least need elements, growing geometrically (doubling, at least 8) but
 * never past max elements. *p and *cap change only on success. Returns 0,
 * -E2BIG when need exceeds max or its byte size cannot be allocated at
 * all, or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__vec_grow(void **p, size_t *cap, size_t elem_sz,
				   size_t need, size_t max);

/* Reserves room for need elements in all (no limit but the address space). */
#define EVPROF_VEC_RESERVE(v, need) EVPROF_VEC_RESERVE_MAX(v, need, SIZE_MAX)

/* Same, but fails with -E2BIG beyond max elements (for untrusted input). */
#define EVPROF_VEC_RESERVE_MAX(v, need, max)                                   \
	({                                                                     \
		void *__vp = (v)->a;                                           \
		int __ve = evprof__vec_grow(&__vp, &(v)->cap, sizeof(*(v)->a), \
					    (need), (max));                    \
		/* Unmoved, not written: another thread may read it. */        \
		if (__vp != (void *)(v)->a)                                    \
			(v)->a = (__typeof__((v)->a))__vp;                     \
		__ve;                                                          \
	})

/* Appends x; returns 0 or the error of EVPROF_VEC_RESERVE(). */
#define EVPROF_VEC_PUSH(v, x)                                                  \
	({                                                                     \
		int __pe =                                                     \
		    (v)->n < (v)->cap ? 0 : EVPROF_VEC_RESERVE(v, (v)->n + 1); \
		if (!__pe)                                                     \
			(v)->a[(v)->n++] = (x);                                \
		__pe;                                                          \
	})

/* Frees the elements' array (not what they point to) and empties v. */
#define EVPROF_VEC_FREE(v)                                                     \
	do {                                                                   \
		free((v)->a);                                                  \
		(v)->a = NULL;                                                 \
		(v)->n = (v)->cap = 0;                                         \
	} while (0)

/* ---- hash map ------------------------------------------------------------ */

/*
 * A chained hash map from long to long (libbpf's hashmap): a key or value
 * is an integer, an index or a pointer cast to long (uintptr_t-sized, so a
 * u64 fits on 64-bit only). The map never owns what keys or values point
 * to: __set/__delete hand back the old ones so the caller can free them.
 * Buckets are a power of two and double when entries exceed 3/4 of them;
 * the bucket index takes the top bits of hash * a 64-bit odd constant, so
 * a weak hash (identity, aligned addresses) still spreads.
 *
 * hash_fn(key, ctx) and equal_fn(a, b, ctx) must agree: equal keys hash
 * alike. Ready-made pairs below: u64 (the key's value) and C strings (keys
 * are const char *, compared with strcmp). For composite keys point the key
 * at a struct and hash its fields with evprof__hash_mem().
 */
typedef size_t (*evprof_hashmap_hash_fn)(long key, void *ctx);
typedef bool (*evprof_hashmap_equal_fn)(long a, long b, void *ctx);

struct evprof_hashmap_entry {
	long key;
	long value;
	struct evprof_hashmap_entry *next;
};

/* Fields are private; they are here only for the iteration macros. */
struct evprof_hashmap {
	evprof_hashmap_hash_fn hash_fn;
	evprof_hashmap_equal_fn equal_fn;
	void *ctx;
	struct evprof_hashmap_entry **buckets;
	size_t cap;   /* buckets, a power of two (0 before the first add) */
	int cap_bits; /* log2(cap) */
	size_t sz;    /* entries */
};

/* Returns an empty map, or NULL with errno ENOMEM. ctx goes to both fns. */
EVPROF_HIDDEN struct evprof_hashmap *
evprof__hashmap_new(evprof_hashmap_hash_fn hash_fn,
		    evprof_hashmap_equal_fn equal_fn, void *ctx);
/* Frees the map and its entries (not what keys/values point to); NULL ok. */
EVPROF_HIDDEN void evprof__hashmap_free(struct evprof_hashmap *map);
/* Number of entries. */
EVPROF_HIDDEN size_t evprof__hashmap_size(const struct evprof_hashmap *map);

/* Inserts key -> value. Returns 0, -EEXIST (map unchanged) or -ENOMEM. */
EVPROF_HIDDEN int evprof__hashmap_add(struct evprof_hashmap *map, long key,
				      long value);
/*
 * Inserts or replaces key -> value. On replace, the entry takes the new key
 * too, and the old key and value go to *old_key / *old_value (each may be
 * NULL). Returns 1 when it replaced, 0 when it added, or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__hashmap_set(struct evprof_hashmap *map, long key,
				      long value, long *old_key,
				      long *old_value);
/* True when key is present; then *value (may be NULL) gets its value. */
EVPROF_HIDDEN bool evprof__hashmap_find(const struct evprof_hashmap *map,
					long key, long *value);
/*
 * Removes key. Returns true when it was present, with the stored key and
 * value in *old_key / *old_value (each may be NULL) for the caller to free.
 */
EVPROF_HIDDEN bool evprof__hashmap_delete(struct evprof_hashmap *map, long key,
					  long *old_key, long *old_value);

/*
 * Visits every entry once as cur (struct evprof_hashmap_entry *), in no
 * particular order; bkt is a size_t. The map must not change during the
 * walk, except through the _safe form, which may delete cur (only cur).
 */
#define EVPROF_HASHMAP_FOR_EACH(map, cur, bkt)                                 \
	for ((bkt) = 0; (bkt) < (map)->cap; (bkt)++)                           \
		for ((cur) = (map)->buckets[bkt]; (cur); (cur) = (cur)->next)
#define EVPROF_HASHMAP_FOR_EACH_SAFE(map, cur, tmp, bkt)                       \
	for ((bkt) = 0; (bkt) < (map)->cap; (bkt)++)                           \
		for ((cur) = (map)->buckets[bkt];                              \
		     (cur) && ((tmp) = (cur)->next, true); (cur) = (tmp))

/*
 * Set bits in x. Without -mpopcnt the builtin is a call into libgcc's
 * table loop, and this runs per sample (register and delta masks).
 */
static inline unsigned evprof__popcount64(uint64_t x)
{
#ifdef __POPCNT__
	return (unsigned)__builtin_popcountll(x);
#else
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (unsigned)((x * 0x0101010101010101ULL) >> 56);
#endif
}

/*
 * FNV-1a over len bytes, continuing from h: start with EVPROF_HASH_INIT and
 * chain calls to hash several fields of a composite key. Not for
 * adversarial input (no seed secret).
 */
#define EVPROF_HASH_INIT 0xcbf29ce484222325ULL
EVPROF_HIDDEN uint64_t evprof__hash_mem(uint64_t h, const void *p, size_t len);

/*
 * The same use for keys made of n 64-bit words (callchains, (map, address)
 * pairs): a word per multiply instead of a byte, for the per-sample path.
 */
EVPROF_HIDDEN uint64_t evprof__hash_words(uint64_t h, const uint64_t *w,
					  size_t n);

/* Keys that are integers (u64 on 64-bit): the hash is the key itself. */
EVPROF_HIDDEN size_t evprof__hashmap_u64_hash(long key, void *ctx);
EVPROF_HIDDEN bool evprof__hashmap_u64_equal(long a, long b, void *ctx);
/* Keys that are const char * (NUL-terminated), compared by content. */
EVPROF_HIDDEN size_t evprof__hashmap_str_hash(long key, void *ctx);
EVPROF_HIDDEN bool evprof__hashmap_str_equal(long a, long b, void *ctx);

#endif /* EVPROF_LIB_UTIL_H */
