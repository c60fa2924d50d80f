// SPDX-License-Identifier: MIT
/* Buffered, optionally gzip-compressed output and a streaming JSON writer. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>

#include "json.h"

/*
 * Profiles are large and mostly digits, so even a low level compresses
 * them about tenfold; speed matters more than the last few percent.
 * Level 1 against 3 on an 86,000-sample Firefox profile: 8% larger, and
 * 10 ms less of an 80 ms `evprof import`.
 */
#define SINK_GZIP_LEVEL 1

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), k = strlen(suffix);

	return n >= k && !memcmp(s + n - k, suffix, k);
}

static int sink_alloc(struct evprof__sink *s, bool gz)
{
	s->buf = malloc(EVPROF_SINK_BUF);
	if (!s->buf)
		return -ENOMEM;
	s->cap = EVPROF_SINK_BUF;
	if (!gz)
		return 0;
	s->zbuf = malloc(EVPROF_SINK_BUF);
	if (!s->zbuf)
		return -ENOMEM;
	/* windowBits 15 + 16: a gzip header and trailer instead of zlib's. */
	if (deflateInit2(&s->z, SINK_GZIP_LEVEL, Z_DEFLATED, 15 + 16, 8,
			 Z_DEFAULT_STRATEGY) != Z_OK)
		return -ENOMEM;
	s->gz = true;
	return 0;
}

static void sink_release(struct evprof__sink *s)
{
	if (s->gz)
		deflateEnd(&s->z);
	s->gz = false;
	free(s->buf);
	free(s->zbuf);
	free(s->path);
	free(s->tmp);
	s->buf = s->zbuf = NULL;
	s->path = s->tmp = NULL;
}

int evprof__sink_open(struct evprof__sink *s, const char *path)
{
	struct stat st;
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	if (!path || !*path)
		return -EINVAL;
	err = sink_alloc(s, ends_with(path, ".gz"));
	if (err)
		goto fail;
	if (!strcmp(path, "/dev/stdout")) {
		/*
		 * The process's own stdout, wherever the shell pointed it (a
		 * file, maybe to append to): through that fd, in place.
		 */
		s->fd = fcntl(STDOUT_FILENO, F_DUPFD_CLOEXEC, 0);
	} else if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		/* A pipe, /dev/full: no rename possible. */
		s->fd = open(path, O_WRONLY | O_TRUNC | O_CLOEXEC);
	} else {
		/* A link's file is replaced, not the link. */
		char *real = lstat(path, &st) == 0 && S_ISLNK(st.st_mode)
				 ? realpath(path, NULL)
				 : NULL;

		s->path = real ? real : strdup(path);
		path = s->path ? s->path : path;
		s->tmp = malloc(strlen(path) + sizeof(".tmp"));
		if (!s->path || !s->tmp) {
			err = -ENOMEM;
			goto fail;
		}
		strcpy(s->tmp, path);
		strcat(s->tmp, ".tmp");
		s->fd = open(s->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC,
			     0666);
	}
	if (s->fd < 0) {
		err = -errno;
		pr_warn("cannot create %s: %s\n", s->tmp ? s->tmp : path,
			strerror(errno));
		goto fail;
	}
	return 0;
fail:
	sink_release(s);
	return err;
}

int evprof__sink_open_file(struct evprof__sink *s, FILE *f)
{
	int err;

	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->file = f;
	err = sink_alloc(s, false);
	if (err)
		sink_release(s);
	return err;
}

static void raw_write(const struct evprof__sink *s, const unsigned char *b,
		      size_t n, int *err)
{
	if (*err)
		return;
	if (s->file) {
		errno = 0;
		if (fwrite(b, 1, n, s->file) != n)
			*err = errno ? -errno : -EIO;
		return;
	}
	while (n) {
		ssize_t w = write(s->fd, b, n);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0) {
			*err = w < 0 ? -errno : -EIO;
			return;
		}
		b += w;
		n -= (size_t)w;
	}
}

/*
 * Feeds avail_in to deflate and writes what comes out; err: the sink's, or
 * the compressing thread's own while it runs.
 */
static void deflate_pump(struct evprof__sink *s, int flush, int *err)
{
	int ret;

	do {
		s->z.next_out = s->zbuf;
		s->z.avail_out = EVPROF_SINK_BUF;
		ret = deflate(&s->z, flush);
		if (ret == Z_STREAM_ERROR) {
			*err = -EIO;
			return;
		}
		raw_write(s, s->zbuf, EVPROF_SINK_BUF - s->z.avail_out, err);
	} while (!*err && (s->z.avail_out == 0 ||
			   (flush == Z_FINISH && ret != Z_STREAM_END)));
}

/*
 * gzip in parallel. Deflate costs a good part of writing the JSON it
 * compresses (a Firefox profile: ~3 ms of ~12), and one deflate stream
 * can be made of pieces compressed apart: each chunk is raw deflate primed
 * with the 32 KB before it (the window a single stream would have had) and
 * ended by a sync flush (an empty stored block: byte-aligned, not final),
 * so the pieces concatenate; their CRC-32s combine. The writer fills one
 * chunk while workers compress the others, and writes finished ones out in
 * order (it alone touches the file); at the end, a final empty block and
 * the gzip trailer. Up to ZJOBS chunks wait for the workers; each chunk
 * is 0.5 MiB of memory (in and out) once an output has been that long, so
 * few: 16 made the Firefox output of a long recording 4-9 MB larger than
 * its pprof output (4 chunks had cost 9 ms of a 95 ms import).
 */
#define ZCHUNK	 (256 * 1024)
#define ZWINDOW	 (32 * 1024)
#define ZWORKERS 3
#define ZJOBS	 4

enum zstate { ZFREE, ZREADY, ZBUSY, ZDONE };

struct zjob {
	enum zstate state;
	int err;
	unsigned char *in, *out;
	size_t in_len, out_len, out_cap, dict_len;
	uLong crc;
	unsigned char dict[ZWINDOW];
};

struct evprof__sink_zpool {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	pthread_t tid[ZWORKERS];
	int workers;
	bool stop;
	struct zjob *jobs[ZJOBS];
	size_t handed, written; /* jobs so far; job k is jobs[k % ZJOBS] */
	uLong crc;
	uint64_t total;
	unsigned char tail[ZWINDOW]; /* the last bytes handed over */
	size_t tail_len;
};

/*
 * A worker's compressor: ISA-L's deflate, about three times zlib's speed at
 * level 1 for a slightly smaller output (a 2.7 MB Firefox profile: 3 ms
 * and 481 KB against 10 ms and 501 KB).
 */
struct zer {
	struct isal_zstream z;
	uint8_t *level_buf;
};

static int compress_job(struct zer *c, struct zjob *j)
{
	struct isal_zstream *z = &c->z;

	isal_deflate_init(z);
	z->level = SINK_GZIP_LEVEL;
	z->level_buf = c->level_buf;
	z->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
	z->gzip_flag = IGZIP_DEFLATE; /* raw: the sink writes gzip's frame */
	z->flush = SYNC_FLUSH;
	if (j->dict_len &&
	    isal_deflate_set_dict(z, j->dict, (uint32_t)j->dict_len) != COMP_OK)
		return -EIO;
	z->next_in = j->in;
	z->avail_in = (uint32_t)j->in_len;
	z->next_out = j->out;
	z->avail_out = (uint32_t)j->out_cap;
	if (isal_deflate(z) != COMP_OK || z->avail_in || !z->avail_out)
		return -EIO;
	j->out_len = j->out_cap - z->avail_out;
	j->crc = crc32_gzip_refl(0, j->in, j->in_len);
	return 0;
}

static void *zworker(void *arg)
{
	struct evprof__sink_zpool *zp = arg;
	struct zer c = {.level_buf = malloc(ISAL_DEF_LVL1_DEFAULT)};

	pthread_mutex_lock(&zp->lock);
	for (;;) {
		struct zjob *j = NULL;

		for (size_t k = zp->written; k < zp->handed && !j; k++)
			if (zp->jobs[k % ZJOBS]->state == ZREADY)
				j = zp->jobs[k % ZJOBS];
		if (!j && zp->stop)
			break;
		if (!j) {
			pthread_cond_wait(&zp->cond, &zp->lock);
			continue;
		}
		j->state = ZBUSY;
		pthread_mutex_unlock(&zp->lock);
		j->err = c.level_buf ? compress_job(&c, j) : -ENOMEM;
		pthread_mutex_lock(&zp->lock);
		j->state = ZDONE;
		pthread_cond_broadcast(&zp->cond);
	}
	pthread_mutex_unlock(&zp->lock);
	free(c.level_buf);
	return NULL;
}

static void zpool_free(struct evprof__sink_zpool *zp)
{
	for (int i = 0; i < ZJOBS; i++) {
		if (zp->jobs[i]) {
			free(zp->jobs[i]->in);
			free(zp->jobs[i]->out);
		}
		free(zp->jobs[i]);
	}
	free(zp);
}

/*
 * The most a chunk can take compressed: ISA-L falls back to stored blocks
 * (5 bytes a 64 KiB) where coding would grow the data; an eighth more
 * leaves room to spare, with the block headers and the sync flush.
 */
#define ZOUT_CAP (ZCHUNK + ZCHUNK / 8 + ISAL_DEF_MAX_HDR_SIZE + 64)

/*
 * The workers, started; NULL (compress in place) when they cannot be. One
 * CPU gets a worker too: the writer and it take turns, and the output is
 * the same whatever the machine.
 */
static struct evprof__sink_zpool *zpool_start(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int want = cpus < 2 ? 1 : cpus < ZWORKERS ? (int)cpus : ZWORKERS;
	size_t cap = ZOUT_CAP;
	struct evprof__sink_zpool *zp;

	zp = calloc(1, sizeof(*zp));
	if (!zp)
		return NULL;
	for (int i = 0; i < ZJOBS; i++) {
		zp->jobs[i] = calloc(1, sizeof(*zp->jobs[i]));
		if (!zp->jobs[i] || !(zp->jobs[i]->in = malloc(ZCHUNK)) ||
		    !(zp->jobs[i]->out = malloc(cap))) {
			zpool_free(zp);
			return NULL;
		}
		zp->jobs[i]->out_cap = cap;
	}
	if (pthread_mutex_init(&zp->lock, NULL)) {
		zpool_free(zp);
		return NULL;
	}
	if (pthread_cond_init(&zp->cond, NULL)) {
		pthread_mutex_destroy(&zp->lock);
		zpool_free(zp);
		return NULL;
	}
	while (zp->workers < want &&
	       !pthread_create(&zp->tid[zp->workers], NULL, zworker, zp))
		zp->workers++;
	if (zp->workers)
		return zp;
	pthread_cond_destroy(&zp->cond);
	pthread_mutex_destroy(&zp->lock);
	zpool_free(zp);
	return NULL;
}

/*
 * Writes out finished chunks in order; with wait, until job k's slot is
 * free again. Called and returns with the lock held.
 */
static void zpool_drain(struct evprof__sink *s, size_t k, bool wait)
{
	struct evprof__sink_zpool *zp = s->zp;

	for (;;) {
		struct zjob *j = zp->jobs[zp->written % ZJOBS];

		if (zp->written < zp->handed && j->state == ZDONE) {
			pthread_mutex_unlock(&zp->lock);
			if (j->err && !s->err)
				s->err = j->err;
			raw_write(s, j->out, j->out_len, &s->err);
			zp->crc =
			    crc32_combine(zp->crc, j->crc, (z_off_t)j->in_len);
			zp->total += j->in_len;
			pthread_mutex_lock(&zp->lock);
			j->state = ZFREE;
			zp->written++;
			continue;
		}
		if (!wait || zp->written + ZJOBS > k)
			return;
		pthread_cond_wait(&zp->cond, &zp->lock);
	}
}

/* Hands over the chunk in s->buf and takes the next free one to fill. */
static void zpool_hand(struct evprof__sink *s)
{
	struct evprof__sink_zpool *zp = s->zp;
	struct zjob *j = zp->jobs[zp->handed % ZJOBS];
	size_t n = s->len < ZWINDOW ? s->len : ZWINDOW, keep;

	memcpy(j->dict, zp->tail, zp->tail_len);
	j->dict_len = zp->tail_len;
	j->in_len = s->len;
	/* The next chunk's window: the last ZWINDOW bytes so far. */
	keep = zp->tail_len < ZWINDOW - n ? zp->tail_len : ZWINDOW - n;
	memmove(zp->tail, zp->tail + zp->tail_len - keep, keep);
	memcpy(zp->tail + keep, s->buf + s->len - n, n);
	zp->tail_len = keep + n;
	pthread_mutex_lock(&zp->lock);
	j->state = ZREADY;
	zp->handed++;
	pthread_cond_broadcast(&zp->cond);
	zpool_drain(s, zp->handed, true);
	pthread_mutex_unlock(&zp->lock);
	s->buf = zp->jobs[zp->handed % ZJOBS]->in;
	s->cap = ZCHUNK;
	s->len = 0;
}

/* From the first full buffer on: the gzip header, then chunks. */
static void zpool_begin(struct evprof__sink *s)
{
	/* Magic, deflate, no flags, no time, no extra flags, Unix. */
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0,
					       0,    0,	   0, 0, 3};
	struct evprof__sink_zpool *zp = zpool_start();

	if (!zp)
		return;
	s->zp = zp;
	raw_write(s, head, sizeof(head), &s->err);
	memcpy(zp->jobs[0]->in, s->buf, s->len);
	free(s->buf);
	s->buf = zp->jobs[0]->in;
}

/*
 * Stops the workers; with commit, after the rest is written: the last
 * chunk, a final empty block (fixed Huffman: 0x03 0x00) and the trailer.
 */
static void zpool_end(struct evprof__sink *s, bool commit)
{
	struct evprof__sink_zpool *zp = s->zp;
	unsigned char trailer[8];

	if (commit && !s->err && s->len)
		zpool_hand(s);
	pthread_mutex_lock(&zp->lock);
	if (commit) /* until every chunk handed over is written */
		zpool_drain(s, zp->handed + ZJOBS - 1, true);
	zp->stop = true;
	pthread_cond_broadcast(&zp->cond);
	pthread_mutex_unlock(&zp->lock);
	for (int i = 0; i < zp->workers; i++)
		pthread_join(zp->tid[i], NULL);
	if (commit) {
		raw_write(s, (const unsigned char *)"\x03\x00", 2, &s->err);
		for (int i = 0; i < 4; i++) {
			trailer[i] = (unsigned char)(zp->crc >> (8 * i));
			trailer[4 + i] = (unsigned char)(zp->total >> (8 * i));
		}
		raw_write(s, trailer, sizeof(trailer), &s->err);
	}
	pthread_cond_destroy(&zp->cond);
	pthread_mutex_destroy(&zp->lock);
	zpool_free(zp);
	s->zp = NULL;
	s->buf = NULL;
	s->len = 0;
}

/* Compresses (or writes) s->buf here, on this thread. */
static void flush_here(struct evprof__sink *s)
{
	if (!s->err && s->len) {
		if (s->gz) {
			s->z.next_in = s->buf;
			s->z.avail_in = (uInt)s->len;
			deflate_pump(s, Z_NO_FLUSH, &s->err);
		} else {
			raw_write(s, s->buf, s->len, &s->err);
		}
	}
	s->len = 0;
}

void evprof__sink_flush_buf(struct evprof__sink *s)
{
	/*
	 * A full buffer: output worth the threads, tried once; after a
	 * failed start (memory, threads) the stream begun in place goes on.
	 */
	if (s->gz && !s->zp && !s->err && s->len == s->cap && !s->z.total_in)
		zpool_begin(s);
	if (!s->zp)
		flush_here(s);
	else if (!s->err && s->len)
		zpool_hand(s);
	else
		s->len = 0;
}

int evprof__sink_close(struct evprof__sink *s, bool commit)
{
	int err;

	if (s->zp) {
		zpool_end(s, commit);
	} else if (commit) {
		flush_here(s);
		if (s->gz && !s->err) {
			s->z.next_in = NULL;
			s->z.avail_in = 0;
			deflate_pump(s, Z_FINISH, &s->err);
		}
	}
	if (commit) {
		if (s->file && !s->err && fflush(s->file))
			s->err = errno ? -errno : -EIO;
	} else if (!s->err) {
		s->err = -ECANCELED;
	}
	/* close() reports delayed write errors (NFS, quotas). */
	if (s->fd >= 0 && close(s->fd) && !s->err)
		s->err = -errno;
	if (s->tmp && !s->err && rename(s->tmp, s->path))
		s->err = -errno;
	if (s->tmp && s->err) {
		pr_warn("cannot write %s: %s\n", s->path, strerror(-s->err));
		unlink(s->tmp);
	}
	err = s->err;
	sink_release(s);
	s->fd = -1;
	return err;
}

int evprof__fmt_u64(char *out, uint64_t v)
{
	char tmp[20];
	int n = 0, i;

	do {
		tmp[n++] = (char)('0' + v % 10);
		v /= 10;
	} while (v);
	for (i = 0; i < n; i++)
		out[i] = tmp[n - 1 - i];
	return n;
}

void evprof__sink_u64(struct evprof__sink *s, uint64_t v)
{
	char d[20];

	evprof__sink_write(s, d, (size_t)evprof__fmt_u64(d, v));
}

void evprof__sink_markup(struct evprof__sink *s, const char *str, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)str[i];

		if (c == '&')
			evprof__sink_puts(s, "&amp;");
		else if (c == '<')
			evprof__sink_puts(s, "&lt;");
		else if (c == '>')
			evprof__sink_puts(s, "&gt;");
		else if (c == '"')
			evprof__sink_puts(s, "&quot;");
		else if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
			evprof__sink_putc(s, '?'); /* not allowed in XML 1.0 */
		else
			evprof__sink_putc(s, (char)c);
	}
}

/* ---- JSON ------------------------------------------------------------ */

void evprof__json_init(struct evprof__json *j, struct evprof__sink *out)
{
	memset(j, 0, sizeof(*j));
	j->out = out;
}

/* Separates a value from the previous one at this level. */
static void json_value(struct evprof__json *j)
{
	if (j->after_key) {
		j->after_key = false;
		return;
	}
	if (j->depth > 0) {
		if (j->need_comma[j->depth - 1])
			evprof__sink_putc(j->out, ',');
		j->need_comma[j->depth - 1] = true;
	}
}

static void json_open(struct evprof__json *j, char c)
{
	json_value(j);
	evprof__sink_putc(j->out, c);
	/* Nesting is fixed by our writers; overflow is a bug of ours. */
	if (j->depth < EVPROF_JSON_MAX_DEPTH)
		j->need_comma[j->depth] = false;
	j->depth++;
}

void evprof__json_obj(struct evprof__json *j)
{
	json_open(j, '{');
}

void evprof__json_arr(struct evprof__json *j)
{
	json_open(j, '[');
}

void evprof__json_end(struct evprof__json *j, char close)
{
	if (j->depth > 0)
		j->depth--;
	evprof__sink_putc(j->out, close);
}

void evprof__json_key(struct evprof__json *j, const char *key)
{
	json_value(j);
	evprof__sink_putc(j->out, '"');
	evprof__json_escape(j->out, key, strlen(key));
	evprof__sink_write(j->out, "\":", 2);
	j->after_key = true;
}

/*
 * Length of the valid UTF-8 sequence at s (1-4), or 0 when invalid; then
 * *bad is the length of its longest valid prefix (at least 1), which is
 * replaced by one U+FFFD as Unicode recommends.
 */
static size_t utf8_len(const unsigned char *s, size_t n, size_t *bad)
{
	unsigned char b = s[0], lo = 0x80, hi = 0xbf;
	size_t need, i;

	if (b >= 0xc2 && b <= 0xdf) {
		need = 2;
	} else if (b >= 0xe0 && b <= 0xef) {
		need = 3;
		if (b == 0xe0)
			lo = 0xa0; /* overlong */
		else if (b == 0xed)
			hi = 0x9f; /* UTF-16 surrogates */
	} else if (b >= 0xf0 && b <= 0xf4) {
		need = 4;
		if (b == 0xf0)
			lo = 0x90; /* overlong */
		else if (b == 0xf4)
			hi = 0x8f; /* above U+10FFFF */
	} else {
		*bad = 1;
		return 0;
	}
	for (i = 1; i < need; i++) {
		if (i >= n || s[i] < lo || s[i] > hi) {
			*bad = i;
			return 0;
		}
		lo = 0x80;
		hi = 0xbf;
	}
	return need;
}

void evprof__json_escape(struct evprof__sink *s, const char *str, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	const unsigned char *p = (const unsigned char *)str;
	size_t i = 0, run = 0;

	while (i < len) {
		unsigned char c = p[i];
		size_t k, bad = 0;
		char esc[6];

		if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
			i++;
			continue;
		}
		if (c >= 0x80) {
			k = utf8_len(p + i, len - i, &bad);
			if (k) {
				i += k;
				continue;
			}
		}
		evprof__sink_write(s, p + run, i - run);
		if (c >= 0x80) {
			evprof__sink_write(s, "\xef\xbf\xbd", 3);
			i += bad;
		} else {
			esc[0] = '\\';
			switch (c) {
			case '"':
			case '\\':
				esc[1] = (char)c;
				k = 2;
				break;
			case '\n':
				esc[1] = 'n';
				k = 2;
				break;
			case '\t':
				esc[1] = 't';
				k = 2;
				break;
			case '\r':
				esc[1] = 'r';
				k = 2;
				break;
			default:
				memcpy(esc + 1, "u00", 3);
				esc[4] = hex[c >> 4];
				esc[5] = hex[c & 15];
				k = 6;
			}
			evprof__sink_write(s, esc, k);
			i++;
		}
		run = i;
	}
	evprof__sink_write(s, p + run, len - run);
}

void evprof__json_str(struct evprof__json *j, const char *str)
{
	if (!str) {
		evprof__json_null(j);
		return;
	}
	json_value(j);
	evprof__sink_putc(j->out, '"');
	evprof__json_escape(j->out, str, strlen(str));
	evprof__sink_putc(j->out, '"');
}

void evprof__json_u64(struct evprof__json *j, uint64_t v)
{
	json_value(j);
	evprof__sink_u64(j->out, v);
}

void evprof__json_i64(struct evprof__json *j, int64_t v)
{
	json_value(j);
	if (v < 0) {
		evprof__sink_putc(j->out, '-');
		evprof__sink_u64(j->out, -(uint64_t)v);
	} else {
		evprof__sink_u64(j->out, (uint64_t)v);
	}
}

void evprof__json_fixed(struct evprof__json *j, int64_t v, unsigned decimals)
{
	uint64_t a = v < 0 ? -(uint64_t)v : (uint64_t)v, scale = 1, frac;
	char d[24];
	unsigned i;
	int n;

	for (i = 0; i < decimals; i++)
		scale *= 10;
	json_value(j);
	if (v < 0)
		evprof__sink_putc(j->out, '-');
	evprof__sink_u64(j->out, a / scale);
	frac = a % scale;
	if (!frac)
		return;
	n = (int)decimals;
	while (frac % 10 == 0) {
		frac /= 10;
		n--;
	}
	d[0] = '.';
	for (i = (unsigned)n; i > 0; i--) {
		d[i] = (char)('0' + frac % 10);
		frac /= 10;
	}
	evprof__sink_write(j->out, d, (size_t)n + 1);
}

void evprof__json_null(struct evprof__json *j)
{
	evprof__json_raw(j, "null");
}

void evprof__json_bool(struct evprof__json *j, bool v)
{
	evprof__json_raw(j, v ? "true" : "false");
}

void evprof__json_raw(struct evprof__json *j, const char *tok)
{
	json_value(j);
	evprof__sink_puts(j->out, tok);
}

int evprof__json_copy(struct evprof__json *j, FILE *f)
{
	char buf[16384];
	size_t n;

	json_value(j);
	rewind(f);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		evprof__sink_write(j->out, buf, n);
	return ferror(f) ? -EIO : 0;
}
