// SPDX-License-Identifier: MIT
/* Answers saved by build id: see symcache.h. */
#define _GNU_SOURCE /* O_TMPFILE */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "debugcache.h"
#include "dso.h"
#include "srcline.h"
#include "symcache.h"
#include "base/base.h"

/* Bumped when what a lookup answers changes (srcline.c, symbols.c). */
#define MAGIC	 "EVPANS2\n" /* 2: functions named from the CFI */
#define NONE	 UINT32_MAX  /* a NULL string */
#define MAX_FILE (64u << 20)

/*
 * The file: a head, ents sorted by fileoff, frames, then strings (each
 * NUL-terminated, named by offset). Native byte order: the cache is this
 * machine's.
 */
struct head {
	char magic[8];
	char libdw[16]; /* elfutils' version: its answers may change too */
	uint32_t nr, nr_frames, strs_len, pad;
};

struct ent {
	uint64_t fileoff, rel_addr, sym_start, sym_size;
	uint32_t name, frame, nr_frames, pad;
};

struct frame {
	uint32_t name, file, line, column, decl_line;
};

struct evprof__symcache {
	char *dir, *path;
	/* What the file holds (checked): into buf. */
	char *buf;
	const struct ent *ents;
	const struct frame *frames;
	const char *strs;
	uint32_t nr, nr_frames, strs_len;
	/* New answers, to save. */
	struct evprof__symcache_ent *add;
	size_t nr_add, cap_add;
};

static const char *libdw_version(void)
{
	const char *v = evprof__dso_elfutils_version();

	return v ? v : "";
}

static bool str_ok(const struct evprof__symcache *c, uint32_t off)
{
	return off == NONE || off < c->strs_len;
}

/* Whether buf (len bytes) is a whole file of sorted, in-bounds entries. */
static bool check(struct evprof__symcache *c, size_t len)
{
	struct head h;
	size_t need;

	if (len < sizeof(h))
		return false;
	memcpy(&h, c->buf, sizeof(h));
	if (memcmp(h.magic, MAGIC, sizeof(h.magic)) ||
	    strncmp(h.libdw, libdw_version(), sizeof(h.libdw)))
		return false;
	/* Each part within what is left: no sum can wrap. */
	need = len - sizeof(h);
	if (h.nr > need / sizeof(struct ent))
		return false;
	need -= h.nr * sizeof(struct ent);
	if (h.nr_frames > need / sizeof(struct frame))
		return false;
	need -= h.nr_frames * sizeof(struct frame);
	if (need != h.strs_len || (h.strs_len && c->buf[len - 1]))
		return false;
	c->nr = h.nr;
	c->nr_frames = h.nr_frames;
	c->strs_len = h.strs_len;
	c->ents = (const struct ent *)(c->buf + sizeof(h));
	c->frames = (const struct frame *)(c->ents + h.nr);
	c->strs = (const char *)(c->frames + h.nr_frames);
	for (uint32_t i = 0; i < c->nr; i++) {
		const struct ent *e = &c->ents[i];

		if ((i && e->fileoff <= c->ents[i - 1].fileoff) ||
		    !str_ok(c, e->name) || e->nr_frames > EVPROF__MAX_INLINE ||
		    e->frame > c->nr_frames ||
		    e->nr_frames > c->nr_frames - e->frame)
			return false;
	}
	for (uint32_t i = 0; i < c->nr_frames; i++)
		if (!str_ok(c, c->frames[i].name) ||
		    !str_ok(c, c->frames[i].file))
			return false;
	return true;
}

struct evprof__symcache *evprof__symcache_open(const char *dir,
					       const uint8_t *bid, size_t len,
					       bool mangled)
{
	struct evprof__symcache *c = calloc(1, sizeof(*c));
	char hex[2 * EVPROF__MAX_BUILD_ID + 1];
	struct stat st;
	size_t got;
	int fd;

	if (!c)
		return NULL;
	evprof__hex(hex, bid,
		    len < EVPROF__MAX_BUILD_ID ? len : EVPROF__MAX_BUILD_ID,
		    false);
	c->dir = strdup(dir);
	if (!c->dir || asprintf(&c->path, "%s/answers-%s%s", dir, hex,
				mangled ? "-m" : "") < 0) {
		free(c->dir);
		free(c);
		return NULL;
	}
	/* A regular file of this user's (the directory may be another's). */
	fd = open(c->path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return c;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || st.st_uid != geteuid() ||
	    evprof__read_fd_all(fd, MAX_FILE, &c->buf, &got) ||
	    !check(c, got)) {
		free(c->buf);
		c->buf = NULL;
		c->nr = c->nr_frames = c->strs_len = 0;
	} else {
		/* Used: the debug cache's pruning keeps what was used last. */
		futimens(fd, NULL);
	}
	close(fd);
	return c;
}

static const char *str_at(const struct evprof__symcache *c, uint32_t off)
{
	return off == NONE ? NULL : c->strs + off;
}

int evprof__symcache_find(struct evprof__symcache *c, uint64_t fileoff,
			  struct evprof__names *names,
			  struct evprof__symcache_ent *out)
{
	size_t lo = 0, hi = c->nr;
	const struct ent *e;
	struct evprof_sym_frame *f = NULL;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (c->ents[mid].fileoff < fileoff)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == c->nr || c->ents[lo].fileoff != fileoff)
		return 0;
	e = &c->ents[lo];
	*out = (struct evprof__symcache_ent){.fileoff = fileoff,
					     .rel_addr = e->rel_addr,
					     .sym_start = e->sym_start,
					     .sym_size = e->sym_size,
					     .nr_frames = e->nr_frames};
	if (e->name != NONE) {
		out->name = evprof__names_intern(names, str_at(c, e->name));
		if (!out->name)
			return -ENOMEM;
	}
	if (e->nr_frames) {
		f = evprof__names_alloc(names, e->nr_frames * sizeof(*f));
		if (!f)
			return -ENOMEM;
	}
	for (uint32_t i = 0; i < e->nr_frames; i++) {
		const struct frame *s = &c->frames[e->frame + i];

		f[i] = (struct evprof_sym_frame){
		    .name = evprof__names_intern(names, str_at(c, s->name)),
		    .file = evprof__names_intern(names, str_at(c, s->file)),
		    .line = s->line,
		    .column = s->column,
		    .decl_line = s->decl_line};
		if ((s->name != NONE && !f[i].name) ||
		    (s->file != NONE && !f[i].file))
			return -ENOMEM;
	}
	out->frames = f;
	return 1;
}

int evprof__symcache_add(struct evprof__symcache *c,
			 const struct evprof__symcache_ent *e)
{
	if (c->nr_add == c->cap_add) {
		size_t cap = c->cap_add ? 2 * c->cap_add : 64;
		void *a = realloc(c->add, cap * sizeof(*c->add));

		if (!a)
			return -ENOMEM;
		c->add = a;
		c->cap_add = cap;
	}
	c->add[c->nr_add++] = *e;
	return 0;
}

/* The file being written, in memory. */
struct out {
	struct ent *ents;
	struct frame *frames;
	char *strs;
	size_t nr, nr_frames, strs_len, strs_cap;
	struct evprof_hashmap *seen; /* new string pointer -> offset */
	bool failed;
};

/* Offset of new string s in o's strings, added on first use. */
static uint32_t put_str(struct out *o, const char *s)
{
	size_t n;
	long off;

	if (!s)
		return NONE;
	if (evprof__hashmap_find(o->seen, (long)s, &off))
		return (uint32_t)off;
	n = strlen(s) + 1;
	if (o->strs_len + n > o->strs_cap) {
		size_t cap = 2 * (o->strs_len + n);
		char *a = cap < NONE ? realloc(o->strs, cap) : NULL;

		if (!a) {
			o->failed = true;
			return NONE;
		}
		o->strs = a;
		o->strs_cap = cap;
	}
	memcpy(o->strs + o->strs_len, s, n);
	off = (long)o->strs_len;
	o->strs_len += n;
	if (evprof__hashmap_add(o->seen, (long)s, off))
		o->failed = true;
	return (uint32_t)off;
}

static int cmp_add(const void *a, const void *b)
{
	const struct evprof__symcache_ent *x = a, *y = b;

	return x->fileoff < y->fileoff ? -1 : x->fileoff > y->fileoff;
}

/* New answer e as an entry, its frames and strings after the saved ones. */
static struct ent new_ent(struct out *o, const struct evprof__symcache_ent *e)
{
	struct ent r = {e->fileoff,	     e->rel_addr,
			e->sym_start,	     e->sym_size,
			put_str(o, e->name), (uint32_t)o->nr_frames,
			e->nr_frames,	     0};

	for (uint32_t i = 0; i < e->nr_frames; i++) {
		const struct evprof_sym_frame *f = &e->frames[i];

		o->frames[o->nr_frames++] =
		    (struct frame){put_str(o, f->name), put_str(o, f->file),
				   f->line, f->column, f->decl_line};
	}
	return r;
}

/* Writes o to c->path through a file of its own renamed into place. */
static void write_out(const struct evprof__symcache *c, const struct out *o)
{
	struct head h = {.nr = (uint32_t)o->nr,
			 .nr_frames = (uint32_t)o->nr_frames,
			 .strs_len = (uint32_t)o->strs_len};
	char tmp[PATH_MAX];
	FILE *f;
	int fd;

	memcpy(h.magic, MAGIC, sizeof(h.magic));
	strncpy(h.libdw, libdw_version(), sizeof(h.libdw));
	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.%d", c->path,
			     (int)getpid()) >= sizeof(tmp) ||
	    evprof__mkdirs(c->dir))
		return;
	fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	f = fd >= 0 ? fdopen(fd, "w") : NULL;
	if (!f) {
		if (fd >= 0) {
			close(fd);
			unlink(tmp);
		}
		return;
	}
	fwrite(&h, sizeof(h), 1, f);
	fwrite(o->ents, sizeof(*o->ents), o->nr, f);
	fwrite(o->frames, sizeof(*o->frames), o->nr_frames, f);
	fwrite(o->strs, 1, o->strs_len, f);
	if (ferror(f) | fclose(f) || rename(tmp, c->path))
		unlink(tmp);
	else
		evprof__debugcache_prune(c->dir);
}

void evprof__symcache_save(struct evprof__symcache *c)
{
	struct out o = {0};
	size_t nf = c->nr_frames, i = 0, k = 0;

	if (!c->nr_add)
		return;
	for (size_t j = 0; j < c->nr_add; j++)
		nf += c->add[j].nr_frames;
	qsort(c->add, c->nr_add, sizeof(*c->add), cmp_add);
	o.ents = malloc((c->nr + c->nr_add) * sizeof(*o.ents));
	o.frames = malloc((nf ? nf : 1) * sizeof(*o.frames));
	o.strs_cap = c->strs_len + 4096;
	o.strs = malloc(o.strs_cap);
	o.seen = evprof__hashmap_new(evprof__hashmap_u64_hash,
				     evprof__hashmap_u64_equal, NULL);
	if (!o.ents || !o.frames || !o.strs || !o.seen)
		goto out;
	/* The saved ones as they are: their offsets stay valid. */
	if (c->nr_frames)
		memcpy(o.frames, c->frames, c->nr_frames * sizeof(*o.frames));
	o.nr_frames = c->nr_frames;
	if (c->strs_len)
		memcpy(o.strs, c->strs, c->strs_len);
	o.strs_len = c->strs_len;
	while (i < c->nr || k < c->nr_add) {
		/* One entry per offset: the saved one, or the first new. */
		if (o.nr && k < c->nr_add &&
		    c->add[k].fileoff == o.ents[o.nr - 1].fileoff) {
			k++;
			continue;
		}
		if (k == c->nr_add ||
		    (i < c->nr && c->ents[i].fileoff <= c->add[k].fileoff))
			o.ents[o.nr++] = c->ents[i++];
		else
			o.ents[o.nr++] = new_ent(&o, &c->add[k++]);
	}
	/* Past what open() reads, no file: answers are found each time. */
	if (!o.failed && sizeof(struct head) + o.nr * sizeof(*o.ents) +
				 o.nr_frames * sizeof(*o.frames) + o.strs_len <=
			     MAX_FILE)
		write_out(c, &o);
out:
	free(o.ents);
	free(o.frames);
	free(o.strs);
	evprof__hashmap_free(o.seen);
}

void evprof__symcache_free(struct evprof__symcache *c)
{
	if (!c)
		return;
	free(c->dir);
	free(c->path);
	free(c->buf);
	free(c->add);
	free(c);
}
