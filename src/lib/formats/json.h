/* SPDX-License-Identifier: MIT */
/*
 * Output for the profile writers: a buffered sink (file written atomically
 * through path.tmp + rename, optionally gzip, compressed in chunks on other
 * threads while the writer fills the next; or a FILE *) and a small
 * streaming JSON writer on top of it. Errors latch: after the first failed
 * write everything is a no-op and the close reports the error.
 */
#ifndef EVPROF_LIB_JSON_H
#define EVPROF_LIB_JSON_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include <zlib.h>

#include "base/base.h"

#define EVPROF_SINK_BUF (64 * 1024)

struct evprof__sink_zpool;

struct evprof__sink {
	int fd; /* -1 when writing to a FILE * */
	FILE *file;
	char *path; /* final name; NULL when written in place */
	char *tmp;  /* name being written; NULL when in place */
	bool gz;
	z_stream z;
	int err; /* first error, -errno; 0 while fine */
	size_t len, cap;
	unsigned char *buf;  /* cap bytes of pending output */
	unsigned char *zbuf; /* compressed bytes, when gz */
	/* gzip on other threads (from the first full buffer), or NULL. */
	struct evprof__sink_zpool *zp;
};

/*
 * Opens path for writing: a regular (or new) file goes to path.tmp until
 * evprof__sink_close(commit) renames it; other files (devices, pipes) are
 * written in place. Compresses with gzip when path ends in ".gz".
 * Returns 0 or -errno (nothing is left behind on failure).
 */
EVPROF_HIDDEN int evprof__sink_open(struct evprof__sink *s, const char *path);
/* Writes into f (not closed at the end). Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__sink_open_file(struct evprof__sink *s, FILE *f);
EVPROF_HIDDEN void evprof__sink_flush_buf(struct evprof__sink *s);
/*
 * Finishes the output. With commit and no error so far: flushes, closes
 * and renames into place. Otherwise removes the temporary file. Returns 0
 * or the first error (-errno).
 */
EVPROF_HIDDEN int evprof__sink_close(struct evprof__sink *s, bool commit);

static inline void evprof__sink_write(struct evprof__sink *s, const void *b,
				      size_t n)
{
	const unsigned char *c = b;

	while (n) {
		size_t room = s->cap - s->len;
		size_t k = n < room ? n : room;

		memcpy(s->buf + s->len, c, k);
		s->len += k;
		c += k;
		n -= k;
		if (s->len == s->cap)
			evprof__sink_flush_buf(s);
	}
}

static inline void evprof__sink_putc(struct evprof__sink *s, char c)
{
	if (s->len == s->cap)
		evprof__sink_flush_buf(s);
	s->buf[s->len++] = (unsigned char)c;
}

static inline void evprof__sink_puts(struct evprof__sink *s, const char *str)
{
	evprof__sink_write(s, str, strlen(str));
}

/* Decimal digits of v; 20 bytes suffice. Returns the digit count. */
EVPROF_HIDDEN int evprof__fmt_u64(char *out, uint64_t v);
EVPROF_HIDDEN void evprof__sink_u64(struct evprof__sink *s, uint64_t v);

/*
 * str[0..n) as XML or HTML text or attribute value: & < > " escaped, the
 * control characters XML 1.0 forbids as '?'.
 */
EVPROF_HIDDEN void evprof__sink_markup(struct evprof__sink *s, const char *str,
				       size_t n);

/* ---- JSON ------------------------------------------------------------ */

#define EVPROF_JSON_MAX_DEPTH 32

struct evprof__json {
	struct evprof__sink *out;
	int depth;
	bool need_comma[EVPROF_JSON_MAX_DEPTH];
	bool after_key; /* a key was written; the value needs no comma */
};

EVPROF_HIDDEN void evprof__json_init(struct evprof__json *j,
				     struct evprof__sink *out);
EVPROF_HIDDEN void evprof__json_obj(struct evprof__json *j);
EVPROF_HIDDEN void evprof__json_arr(struct evprof__json *j);
/* Closes the innermost object or array. */
EVPROF_HIDDEN void evprof__json_end(struct evprof__json *j, char close);
#define evprof__json_obj_end(j) evprof__json_end(j, '}')
#define evprof__json_arr_end(j) evprof__json_end(j, ']')
/* Any bytes, escaped as evprof__json_str() does. */
EVPROF_HIDDEN void evprof__json_key(struct evprof__json *j, const char *key);
/* Any bytes: escaped, invalid UTF-8 replaced by U+FFFD. NULL: null. */
EVPROF_HIDDEN void evprof__json_str(struct evprof__json *j, const char *str);
EVPROF_HIDDEN void evprof__json_u64(struct evprof__json *j, uint64_t v);
EVPROF_HIDDEN void evprof__json_i64(struct evprof__json *j, int64_t v);
/* v / 10^decimals written exactly, without trailing zeros ("1.5", "-2"). */
EVPROF_HIDDEN void evprof__json_fixed(struct evprof__json *j, int64_t v,
				      unsigned decimals);
EVPROF_HIDDEN void evprof__json_null(struct evprof__json *j);
EVPROF_HIDDEN void evprof__json_bool(struct evprof__json *j, bool v);
/* A literal token (number, true...) written as is. */
EVPROF_HIDDEN void evprof__json_raw(struct evprof__json *j, const char *tok);
/*
 * A value written elsewhere: the bytes of f from its start, as they are.
 * Returns 0 or -errno (a read error).
 */
EVPROF_HIDDEN int evprof__json_copy(struct evprof__json *j, FILE *f);

/* Writes str as JSON string content (no quotes). */
EVPROF_HIDDEN void evprof__json_escape(struct evprof__sink *s, const char *str,
				       size_t len);

#endif /* EVPROF_LIB_JSON_H */
