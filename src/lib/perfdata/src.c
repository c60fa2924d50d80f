// SPDX-License-Identifier: MIT
/*
 * perf.data bytes in: a forward-only window over a file, pipe or memory
 * (the import reads its input once), and the zstd stream that
 * PERF_RECORD_COMPRESSED records carry.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "internal.h"

/* ---- input window ------------------------------------------------------- */

#define SRC_CHUNK (256 * 1024)
/* Most bytes a non-seekable file-mode input may hold in memory. */
#define SLURP_MAX ((size_t)16 << 30)

int evprof__pd_src_fd(struct pd_src *s, int fd, bool own)
{
	memset(s, 0, sizeof(*s));
	s->fd = fd;
	s->own_fd = own;
	s->cap = SRC_CHUNK + PD_MAX_RECORD;
	s->buf = malloc(s->cap);
	return s->buf ? 0 : -ENOMEM;
}

void evprof__pd_src_mem(struct pd_src *s, const void *buf, size_t len)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->mem = buf;
	s->mem_len = len;
}

void evprof__pd_src_free(struct pd_src *s)
{
	if (s->own_fd && s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->buf);
	free(s->slurp);
	s->buf = s->slurp = NULL;
}

/* Fills the window so that it holds [off, off + n) if the input has it. */
static int fill(struct pd_src *s, uint64_t off, size_t n)
{
	ssize_t r;

	if (off > s->pos + (s->end - s->start)) {
		/* A skip forward: seek, or read and drop on a pipe. */
		if (lseek(s->fd, (off_t)off, SEEK_SET) == (off_t)off) {
			s->pos = off;
			s->start = s->end = 0;
		} else {
			s->pos += s->end - s->start;
			s->start = s->end = 0;
			while (s->pos < off && !s->eof) {
				size_t want = off - s->pos < s->cap
						  ? (size_t)(off - s->pos)
						  : s->cap;

				r = read(s->fd, s->buf, want);
				if (r < 0 && errno == EINTR)
					continue;
				if (r < 0)
					return -errno;
				s->eof = r == 0;
				s->pos += (size_t)r;
			}
			if (s->pos < off)
				return 0;
		}
	}
	/* Drop what lies before off. */
	if (off > s->pos) {
		s->start += (size_t)(off - s->pos);
		s->pos = off;
	}
	/* Move the rest to the front only when n bytes would not fit. */
	if (s->start + n > s->cap) {
		memmove(s->buf, s->buf + s->start, s->end - s->start);
		s->end -= s->start;
		s->start = 0;
	}
	while (s->end - s->start < n && !s->eof) {
		r = read(s->fd, s->buf + s->end, s->cap - s->end);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		s->eof = r == 0;
		s->end += (size_t)r;
	}
	return 0;
}

const uint8_t *evprof__pd_src_at(struct pd_src *s, uint64_t off, size_t n,
				 size_t *got, int *err)
{
	*err = 0;
	if (s->mem) {
		if (off >= s->mem_len) {
			*got = 0;
			return NULL;
		}
		*got = s->mem_len - off < n ? (size_t)(s->mem_len - off) : n;
		return *got == n ? s->mem + off : NULL;
	}
	if (n > s->cap - SRC_CHUNK / 2 || off < s->pos) {
		*err = -EINVAL;
		*got = 0;
		return NULL;
	}
	*err = fill(s, off, n);
	if (*err || off < s->pos) {
		*got = 0;
		return NULL;
	}
	*got = s->end - s->start < n ? s->end - s->start : n;
	return *got == n ? s->buf + s->start : NULL;
}

int evprof__pd_src_slurp(struct pd_src *s)
{
	size_t len = s->end - s->start, cap = len + SRC_CHUNK;
	uint8_t *b = malloc(cap), *nb;
	ssize_t r;

	if (!b)
		return -ENOMEM;
	if (s->pos) { /* only ever called before anything was skipped */
		free(b);
		return -EINVAL;
	}
	memcpy(b, s->buf + s->start, len);
	while (!s->eof) {
		if (len == cap) {
			if (cap >= SLURP_MAX) {
				free(b);
				return -EFBIG;
			}
			nb = realloc(b, cap * 2);
			if (!nb) {
				free(b);
				return -ENOMEM;
			}
			b = nb;
			cap *= 2;
		}
		r = read(s->fd, b + len, cap - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			free(b);
			return -errno;
		}
		s->eof = r == 0;
		len += (size_t)r;
	}
	s->slurp = b;
	s->mem = b;
	s->mem_len = len;
	return 0;
}

/* ---- zstd --------------------------------------------------------------- */

/*
 * The output window holds one incomplete record (< 64 KiB) and at least
 * as much room again: records are handed out as they are decompressed,
 * so a small COMPRESSED record that inflates to gigabytes needs no more.
 */
#define UNZIP_CAP (2 * PD_MAX_RECORD)

struct pd_unzip {
	ZSTD_DStream *ds;
	ZSTD_inBuffer in; /* the payload being drained */
	bool full;	  /* the last call filled the window: zstd holds more */
	uint8_t *out;	  /* decompressed bytes [start, end) not handed out */
	size_t start, end;
	uint64_t rec[PD_MAX_RECORD / 8];
};

struct pd_unzip *evprof__pd_unzip_new(void)
{
	struct pd_unzip *z = calloc(1, sizeof(*z));

	if (!z)
		return NULL;
	z->ds = ZSTD_createDStream();
	z->out = malloc(UNZIP_CAP);
	if (!z->ds || !z->out || ZSTD_isError(ZSTD_initDStream(z->ds))) {
		evprof__pd_unzip_free(z);
		return NULL;
	}
	return z;
}

void evprof__pd_unzip_free(struct pd_unzip *z)
{
	if (!z)
		return;
	ZSTD_freeDStream(z->ds);
	free(z->out);
	free(z);
}

void evprof__pd_unzip_feed(struct pd_unzip *z, const void *buf, size_t len)
{
	z->in = (ZSTD_inBuffer){buf, len, 0};
}

/* Decompresses what fits behind the bytes not handed out yet. */
static int unzip_more(struct pd_unzip *z, char *err, size_t errlen)
{
	ZSTD_outBuffer out;
	size_t r;

	/* What is left is the start of a record: it moves to the front. */
	if (z->start) {
		memmove(z->out, z->out + z->start, z->end - z->start);
		z->end -= z->start;
		z->start = 0;
	}
	out = (ZSTD_outBuffer){z->out + z->end, UNZIP_CAP - z->end, 0};
	r = ZSTD_decompressStream(z->ds, &out, &z->in);
	if (ZSTD_isError(r)) {
		snprintf(err, errlen, "zstd: %s", ZSTD_getErrorName(r));
		return -EVPROF_ERR_BAD_PERFDATA;
	}
	z->end += out.pos;
	z->full = out.pos == out.size;
	return 0;
}

int evprof__pd_unzip_next(struct pd_unzip *z, struct pd_rec *r, char *err,
			  size_t errlen)
{
	for (;;) {
		const uint8_t *p = z->out + z->start;
		size_t avail = z->end - z->start;
		uint16_t size = avail >= 8 ? (uint16_t)(p[6] | p[7] << 8) : 0;
		int e;

		if (avail >= 8 && size < 8)
			return -EVPROF_ERR_BAD_PERFDATA;
		if (avail >= 8 && avail >= size) {
			memcpy(z->rec, p, size);
			r->data = z->rec;
			r->type = evprof__load_u32(p);
			r->misc = (uint16_t)(p[4] | p[5] << 8);
			r->size = size;
			r->decompressed = true;
			z->start += size;
			return 1;
		}
		/* A record straddles into the next COMPRESSED record. */
		if (z->in.pos == z->in.size && !z->full)
			return 0;
		e = unzip_more(z, err, errlen);
		if (e)
			return e;
	}
}

size_t evprof__pd_unzip_left(const struct pd_unzip *z)
{
	return z->end - z->start;
}

int evprof__pd_src_pread(struct pd_src *s, uint64_t off, void *buf, size_t len)
{
	ssize_t r;

	if (s->mem) {
		if (off > s->mem_len || len > s->mem_len - off)
			return -EVPROF_ERR_TRUNCATED;
		memcpy(buf, s->mem + off, len);
		return 0;
	}
	r = evprof__pread_full(s->fd, buf, len, off);
	if (r < 0)
		return (int)r;
	return (size_t)r < len ? -EVPROF_ERR_TRUNCATED : 0;
}

bool evprof__pd_src_seekable(const struct pd_src *s)
{
	return s->mem || lseek(s->fd, 0, SEEK_CUR) >= 0;
}
