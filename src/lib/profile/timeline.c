// SPDX-License-Identifier: MIT
/*
 * The timeline: every sample as a row, per thread, read back in time
 * order. Rows are appended in the order producers add them (merged ring
 * buffers are only roughly in time order). With a spill file, once the
 * rows in memory reach the budget every thread's rows are sorted (stably,
 * by time) and written to the file as one run of that thread; a reader
 * merges a thread's runs and its rows still in memory, so memory stays
 * flat however long the recording.
 */
#define _GNU_SOURCE /* qsort_r, O_TMPFILE, mkostemp */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "timeline.h"

/* Rows a reader buffers per run of the spill file. */
#define READ_ROWS 256
/* Rows the writer reorders at a time on the stack (at most 17 KiB). */
#define STAGE_ROWS 32

/* An unnamed file in dir. Returns its fd or -errno. */
static int unnamed_file(const char *dir)
{
	char *path;
	int fd;

	fd = open(dir, O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
	if (fd >= 0)
		return fd;
	/* Filesystems without O_TMPFILE: a named file, unlinked at once. */
	if (errno != EOPNOTSUPP && errno != EISDIR && errno != EINVAL)
		return -errno;
	if (asprintf(&path, "%s/evprof-XXXXXX", dir) < 0)
		return -ENOMEM;
	fd = mkostemp(path, O_CLOEXEC);
	if (fd < 0) {
		free(path);
		return -errno;
	}
	unlink(path);
	free(path);
	return fd;
}

int evprof__timeline_spill_open(struct evprof_profile *p, const char *dir)
{
	int fd;

	p->spill_dir = strdup(dir);
	if (!p->spill_dir)
		return -ENOMEM;
	fd = unnamed_file(dir);
	if (fd < 0)
		return fd;
	p->spill_fd = fd;
	return 0;
}

/*
 * A scratch stream holds its first bytes (up to mem) in memory and moves
 * to a file beyond: a column of one thread's samples usually fits, and
 * writing it to a file and reading it back cost more than formatting it.
 * The stream keeps its own position in either place.
 */
struct scratch {
	const char *dir; /* for the file: the spill file's, else memory */
	char *mem;
	size_t len, cap, pos, max;
	int fd; /* the file, -1 while in memory */
};

/* Where a scratch stream goes past its memory. Returns 0 or -errno. */
static int scratch_move(struct scratch *s)
{
	int fd, err;

	if (s->dir) {
		fd = unnamed_file(s->dir);
	} else {
		fd = memfd_create("evprof-scratch", MFD_CLOEXEC);
		/* No memfd (a seccomp filter, Linux < 3.17): the usual one. */
		if (fd < 0)
			fd = unnamed_file(P_tmpdir);
	}
	if (fd < 0)
		return fd;
	err = evprof__pwrite_all(fd, s->mem, s->len, 0);
	if (err) {
		close(fd);
		return err;
	}
	s->fd = fd;
	free(s->mem);
	s->mem = NULL;
	s->cap = 0;
	return 0;
}

/* fopencookie: the bytes written, 0 with errno set on an error. */
static ssize_t scratch_write(void *cookie, const char *b, size_t n)
{
	struct scratch *s = cookie;
	int err = 0;

	if (s->fd < 0 && s->pos + n > s->max)
		err = scratch_move(s);
	if (!err && s->fd >= 0)
		err = evprof__pwrite_all(s->fd, b, n, s->pos);
	else if (!err)
		err = evprof__vec_grow((void **)&s->mem, &s->cap, 1, s->pos + n,
				       s->max);
	if (err) {
		errno = -err;
		return 0;
	}
	if (s->fd < 0)
		memcpy(s->mem + s->pos, b, n);
	s->pos += n;
	if (s->pos > s->len)
		s->len = s->pos;
	return (ssize_t)n;
}

static ssize_t scratch_read(void *cookie, char *b, size_t n)
{
	struct scratch *s = cookie;
	ssize_t r;

	if (n > s->len - s->pos)
		n = s->len - s->pos;
	if (!n)
		return 0;
	if (s->fd < 0) {
		memcpy(b, s->mem + s->pos, n);
		r = (ssize_t)n;
	} else {
		r = evprof__pread_full(s->fd, b, n, s->pos);
		if (r < 0) {
			errno = (int)-r;
			return -1;
		}
	}
	s->pos += (size_t)r;
	return r;
}

static int scratch_seek(void *cookie, off64_t *off, int whence)
{
	struct scratch *s = cookie;
	off64_t to = *off;

	if (whence == SEEK_CUR)
		to += (off64_t)s->pos;
	else if (whence == SEEK_END)
		to += (off64_t)s->len;
	if (to < 0 || to > (off64_t)s->len) {
		errno = EINVAL;
		return -1;
	}
	s->pos = (size_t)to;
	*off = to;
	return 0;
}

static int scratch_close(void *cookie)
{
	struct scratch *s = cookie;
	int err = s->fd >= 0 ? close(s->fd) : 0;

	free(s->mem);
	free(s);
	return err;
}

FILE *evprof__timeline_scratch(const struct evprof_profile *p, size_t mem)
{
	static const cookie_io_functions_t io = {scratch_read, scratch_write,
						 scratch_seek, scratch_close};
	struct scratch *s = calloc(1, sizeof(*s));
	FILE *f;

	if (!s)
		return NULL;
	s->dir = p->spill_dir;
	s->max = mem;
	s->fd = -1;
	f = fopencookie(s, "w+", io);
	if (!f)
		free(s);
	return f;
}

void evprof__timeline_free(struct evprof_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_threads; i++) {
		free(p->threads[i].rows);
		free(p->threads[i].runs);
		free(p->threads[i].waits);
	}
	if (p->spill_fd >= 0)
		close(p->spill_fd);
	p->spill_fd = -1;
	free(p->spill_dir);
	p->spill_dir = NULL;
}

struct order_ctx {
	const uint64_t *rows;
	uint32_t rw;
};

static int cmp_row_time(const void *a, const void *b, void *ctx)
{
	const struct order_ctx *c = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	uint64_t tx = c->rows[(size_t)x * c->rw + ROW_TIME];
	uint64_t ty = c->rows[(size_t)y * c->rw + ROW_TIME];

	if (tx != ty)
		return tx < ty ? -1 : 1;
	return x < y ? -1 : x > y; /* stable */
}

/*
 * Time order of thread t's rows in memory: NULL when already sorted (or on
 * allocation failure, with *err = -ENOMEM), else row indices stably sorted
 * by time that the caller frees.
 */
static uint32_t *rows_order(const struct evprof_profile *p,
			    const struct evprof__thread *t, int *err)
{
	struct order_ctx c = {t->rows, p->row_words};
	uint32_t *order;
	size_t i;

	*err = 0;
	if (!t->unsorted)
		return NULL;
	order = malloc(t->nr_rows * sizeof(*order));
	if (!order) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < t->nr_rows; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t->nr_rows, sizeof(*order), cmp_row_time, &c);
	return order;
}

/* Writes thread t's rows in memory as a sorted run and frees them. */
static int spill_thread(struct evprof_profile *p, struct evprof__thread *t)
{
	size_t bytes = (size_t)p->row_words * sizeof(uint64_t);
	uint64_t stage[STAGE_ROWS * (ROW_VALS + EVPROF_PROFILE_MAX_COUNTERS)];
	uint32_t *order;
	size_t i, k;
	int err;

	if (!t->nr_rows)
		return 0;
	if (evprof__vec_grow((void **)&t->runs, &t->cap_runs, sizeof(*t->runs),
			     t->nr_runs + 1, SIZE_MAX))
		return -ENOMEM;
	order = rows_order(p, t, &err);
	if (err)
		return err;
	if (!order) {
		err = evprof__pwrite_all(p->spill_fd, t->rows,
					 t->nr_rows * bytes, p->spill_len);
	}
	for (i = 0; order && !err && i < t->nr_rows; i += k) {
		for (k = 0; k < STAGE_ROWS && i + k < t->nr_rows; k++)
			memcpy(&stage[k * p->row_words],
			       &t->rows[(size_t)order[i + k] * p->row_words],
			       bytes);
		err = evprof__pwrite_all(p->spill_fd, stage, k * bytes,
					 p->spill_len + i * bytes);
	}
	free(order);
	if (err)
		return err;
	t->runs[t->nr_runs++] = (struct evprof__run){p->spill_len, t->nr_rows};
	p->spill_len += t->nr_rows * bytes;
	p->mem_rows -= t->nr_rows;
	free(t->rows);
	t->rows = NULL;
	t->nr_rows = t->cap_rows = 0;
	t->unsorted = false;
	return 0;
}

int evprof__timeline_add(struct evprof_profile *p, int thr, const uint64_t *row)
{
	struct evprof__thread *t = &p->threads[thr];
	uint32_t rw;
	size_t i;
	int err;

	if (!p->row_words)
		p->row_words = ROW_VALS + p->nr_counters;
	rw = p->row_words;
	if (t->nr_rows >= UINT32_MAX) /* orders are u32 */
		return -E2BIG;
	if (t->nr_rows == t->cap_rows) {
		size_t cap = t->cap_rows < 256 ? 256 : t->cap_rows * 2;
		uint64_t *r;

		if (cap > SIZE_MAX / (rw * sizeof(*r)))
			return -ENOMEM;
		r = realloc(t->rows, cap * rw * sizeof(*r));
		if (!r)
			return -ENOMEM;
		t->rows = r;
		t->cap_rows = cap;
	}
	if (t->nr_rows &&
	    row[ROW_TIME] < t->rows[(t->nr_rows - 1) * rw + ROW_TIME])
		t->unsorted = true;
	memcpy(&t->rows[t->nr_rows * rw], row, rw * sizeof(*row));
	t->nr_rows++;
	p->mem_rows++;
	p->nr_rows++;
	if (p->spill_fd < 0 || p->mem_rows < p->spill_rows)
		return 0;
	for (i = 0; i < p->nr_threads; i++) {
		err = spill_thread(p, &p->threads[i]);
		if (err)
			return err;
	}
	return 0;
}

/* ---- reading: a merge of the thread's runs and its rows in memory ------- */

struct src {
	const uint64_t *mem;   /* rows in memory; NULL for a run */
	const uint32_t *order; /* their time order, or NULL: as stored */
	uint64_t *buf;	       /* a run's rows read so far */
	uint64_t off;	       /* a run's next unread byte */
	uint64_t left;	       /* a run's rows not yet read */
	uint32_t n, pos;       /* rows in mem or buf; the current one */
};

struct evprof_profile_timeline {
	const struct evprof_profile *p;
	uint32_t rw;
	uint32_t nr_src, nr_heap;
	struct src *src;
	uint32_t *heap; /* sources with rows, least (time, index) first */
	/*
	 * The least head among heap[0]'s children, (time, source): while
	 * heap[0]'s next row comes before it, heap[0] stays on top without a
	 * sift. Spilled runs rarely overlap, so one source is read for long.
	 */
	uint64_t bound;
	uint32_t bound_src;
	uint32_t *order;
	uint64_t counters[EVPROF_PROFILE_MAX_COUNTERS];
};

static const uint64_t *head(const struct evprof_profile_timeline *it,
			    uint32_t i)
{
	const struct src *s = &it->src[i];

	if (s->mem)
		return &s->mem[(size_t)(s->order ? s->order[s->pos] : s->pos) *
			       it->rw];
	return &s->buf[(size_t)s->pos * it->rw];
}

/* Refills a run's buffer. Returns rows read (0: the run is done) or -errno. */
static int refill(struct evprof_profile_timeline *it, struct src *s)
{
	size_t bytes = (size_t)it->rw * sizeof(uint64_t);
	uint32_t n = s->left < READ_ROWS ? (uint32_t)s->left : READ_ROWS;
	size_t want = n * bytes;
	ssize_t got = evprof__pread_full(it->p->spill_fd, s->buf, want, s->off);

	if (got < 0)
		return (int)got;
	if ((size_t)got < want)
		return -EIO;
	s->off += want;
	s->left -= n;
	s->n = n;
	s->pos = 0;
	return (int)n;
}

static bool before(const struct evprof_profile_timeline *it, uint32_t a,
		   uint32_t b)
{
	uint64_t ta = head(it, a)[ROW_TIME], tb = head(it, b)[ROW_TIME];

	/* Equal times: the earlier source (older run) first, as added. */
	return ta != tb ? ta < tb : a < b;
}

static void sift_down(struct evprof_profile_timeline *it, uint32_t i)
{
	for (;;) {
		uint32_t l = 2 * i + 1, m = i, tmp;

		if (l < it->nr_heap && before(it, it->heap[l], it->heap[m]))
			m = l;
		if (l + 1 < it->nr_heap &&
		    before(it, it->heap[l + 1], it->heap[m]))
			m = l + 1;
		if (m == i)
			return;
		tmp = it->heap[i];
		it->heap[i] = it->heap[m];
		it->heap[m] = tmp;
		i = m;
	}
}

static void set_bound(struct evprof_profile_timeline *it)
{
	it->bound = UINT64_MAX;
	it->bound_src = UINT32_MAX;
	for (uint32_t c = 1; c <= 2 && c < it->nr_heap; c++) {
		uint32_t s = it->heap[c];
		uint64_t t = head(it, s)[ROW_TIME];

		if (t < it->bound || (t == it->bound && s < it->bound_src)) {
			it->bound = t;
			it->bound_src = s;
		}
	}
}

struct evprof_profile_timeline *
evprof_profile_timeline__new(const struct evprof_profile *p, int thr)
{
	struct evprof_profile_timeline *it;
	const struct evprof__thread *t;
	uint32_t i;
	int err = -ENOMEM;

	if (!p || thr < 0 || (size_t)thr >= p->nr_threads) {
		errno = EINVAL;
		return NULL;
	}
	if (!p->timeline) {
		errno = ENODATA;
		return NULL;
	}
	t = &p->threads[thr];
	it = calloc(1, sizeof(*it));
	if (!it)
		goto fail;
	it->p = p;
	it->rw = p->row_words;
	it->src = calloc(t->nr_runs + 1, sizeof(*it->src));
	it->heap = calloc(t->nr_runs + 1, sizeof(*it->heap));
	if (!it->src || !it->heap)
		goto fail;
	for (i = 0; i < t->nr_runs; i++) {
		struct src *s = &it->src[it->nr_src];
		uint64_t n = t->runs[i].n;

		s->buf = malloc((n < READ_ROWS ? n : READ_ROWS) * it->rw *
				sizeof(uint64_t));
		if (!s->buf)
			goto fail;
		s->off = t->runs[i].off;
		s->left = n;
		it->nr_src++;
		err = refill(it, s);
		if (err < 0)
			goto fail;
		err = -ENOMEM;
		it->heap[it->nr_heap++] = it->nr_src - 1;
	}
	if (t->nr_rows) {
		struct src *s = &it->src[it->nr_src++];

		it->order = rows_order(p, t, &err);
		if (err)
			goto fail;
		s->mem = t->rows;
		s->order = it->order;
		s->n = (uint32_t)t->nr_rows;
		it->heap[it->nr_heap++] = it->nr_src - 1;
	}
	for (i = it->nr_heap / 2; i-- > 0;)
		sift_down(it, i);
	set_bound(it);
	return it;
fail:
	evprof_profile_timeline__free(it);
	errno = -err;
	return NULL;
}

int evprof_profile_timeline__next(struct evprof_profile_timeline *it,
				  struct evprof_profile_sample *out)
{
	uint32_t nc = it->rw - ROW_VALS, top;
	const uint64_t *r;
	struct src *s;
	int n;

	if (!it->nr_heap)
		return 0;
	top = it->heap[0];
	s = &it->src[top];
	r = head(it, top);
	memcpy(it->counters, &r[ROW_VALS], nc * sizeof(*r));
	*out = (struct evprof_profile_sample){
	    .time_ns = r[ROW_TIME],
	    .stack = (int)(int64_t)r[ROW_STACK],
	    .weight = r[ROW_WEIGHT],
	    .values_only = !r[ROW_WEIGHT],
	    .cpu_delta_ns = r[ROW_CPU],
	    .has_counters = r[ROW_HAS],
	    .counters = nc ? it->counters : NULL,
	};
	if (++s->pos == s->n) {
		n = s->mem ? 0 : refill(it, s);
		if (n < 0)
			return n;
		if (!n)
			it->heap[0] = it->heap[--it->nr_heap];
	}
	if (it->nr_heap && it->heap[0] == top) {
		uint64_t t = head(it, top)[ROW_TIME];

		if (t < it->bound || (t == it->bound && top < it->bound_src))
			return 1;
	}
	sift_down(it, 0);
	set_bound(it);
	return 1;
}

void evprof_profile_timeline__free(struct evprof_profile_timeline *it)
{
	uint32_t i;

	if (!it)
		return;
	for (i = 0; i < it->nr_src; i++)
		free(it->src[i].buf);
	free(it->src);
	free(it->heap);
	free(it->order);
	free(it);
}
