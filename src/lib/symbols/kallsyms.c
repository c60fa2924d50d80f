// SPDX-License-Identifier: MIT
/* Kernel symbols from /proc/kallsyms, kernel build id from ELF notes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "kallsyms.h"
#include "symtab.h"

#define KALLSYMS_MAX_BYTES   (512u << 20)
#define NT_GNU_BUILD_ID_TYPE 3

/*
 * One text symbol, small (a kernel has over 100,000 and one lookup needs
 * a few hundred): the rest is worked out when a lookup returns it.
 */
struct kent {
	uint64_t addr;	   /* first: evprof__count_le() */
	uint32_t name_off; /* the name's bytes in the file */
	uint32_t run;	   /* module index while parsing, then run index */
};

/* A run of symbols of one module (or of the image) in address order. */
struct krun {
	const char *module; /* NULL: the kernel image itself */
	uint64_t base;	    /* _text, or the run's lowest text symbol */
};

struct evprof__kallsyms {
	/*
	 * The file, read whole. Not mapped: perf's copy in its build-id
	 * cache may be cut short under us (SIGBUS). Never written: names
	 * are copied out when a lookup first returns them.
	 */
	const char *text;
	size_t len;
	uint64_t stext, etext; /* the image's text: [_stext, _etext) */
	struct kent *syms;
	size_t nr;
	/* A saved table mapped whole (text and syms point into it), or NULL. */
	void *map;
	size_t map_len;
	/* Module names, owned; index + 1 in kent (a mapped table's: none) */
	EVPROF_VEC(char *) mods;
	EVPROF_VEC(struct krun) runs;
	struct evprof_hashmap *names; /* index in syms -> its name, owned */
};

static int cmp_kent(const void *a, const void *b)
{
	const struct kent *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

/*
 * Sorts v by address, the sorted head first on equal addresses (the tail
 * by qsort, as the whole was before). /proc/kallsyms lists the
 * image's symbols in address order, then those of modules, BPF programs
 * and trampolines: the sorted head is kept and only the tail sorted and
 * merged in (all 120,000 were sorted again in every run on a host with a
 * BPF program loaded, ours included).
 */
static void sort_by_addr(struct kent *v, size_t n)
{
	size_t head = 1, i, j, k;
	struct kent *t;

	while (head < n && v[head].addr >= v[head - 1].addr)
		head++;
	if (head >= n)
		return;
	t = malloc((n - head) * sizeof(*t));
	if (!t) {
		qsort(v, n, sizeof(*v), cmp_kent);
		return;
	}
	qsort(v + head, n - head, sizeof(*v), cmp_kent);
	memcpy(t, v + head, (n - head) * sizeof(*t));
	/* From the back; on equal addresses the head's entry stays first. */
	for (i = head, j = n - head, k = n; j > 0;)
		v[--k] =
		    i > 0 && v[i - 1].addr > t[j - 1].addr ? v[--i] : t[--j];
	free(t);
}

/* A line's parts, as pointers into the file. */
struct kline {
	uint64_t addr;
	const char *name, *mod; /* mod: NULL for the kernel image */
	size_t name_len, mod_len;
};

/* A name ends at a tab, a line's end or a NUL. */
static size_t name_len(const char *p, const char *end)
{
	const char *nl = memchr(p, '\n', (size_t)(end - p)), *tab;

	end = nl ? nl : end;
	tab = memchr(p, '\t', (size_t)(end - p));
	return strnlen(p, (size_t)((tab ? tab : end) - p));
}

/*
 * One line [p, end): "ADDR TYPE NAME" optionally followed by
 * "\t[MODULE]". Returns false for lines that are not text symbols or do
 * not parse.
 */
static bool parse_line(const char *p, const char *end, struct kline *l,
		       bool *nonzero)
{
	const char *tab;
	uint64_t addr = 0;
	int digits = 0;

	for (; p < end && *p != ' '; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if (*p >= 'a' && *p <= 'f')
			d = *p - 'a' + 10;
		else
			return false;
		if (digits >= 16)
			return false;
		addr = addr << 4 | (uint64_t)d;
	}
	if (!digits || end - p < 3 || p[2] != ' ')
		return false;
	if (addr)
		*nonzero = true;
	if (p[1] != 't' && p[1] != 'T')
		return false;
	l->addr = addr;
	l->name = p + 3;
	l->mod = NULL;
	l->mod_len = 0;
	l->name_len = name_len(l->name, end);
	tab = l->name + l->name_len;
	if (tab < end && *tab == '\t') {
		const char *mod = tab + 1;
		size_t ml = (size_t)(end - mod);

		if (ml && *mod == '[') {
			mod++;
			ml--;
			if (ml && mod[ml - 1] == ']')
				ml--;
		}
		if (ml) {
			l->mod = mod;
			l->mod_len = ml;
		}
	}
	return l->name_len > 0;
}

/*
 * The module index + 1 of l (0: the image), shared by the run of lines it
 * heads; -ENOMEM.
 */
static long module_of(struct evprof__kallsyms *ks, const struct kline *l)
{
	char *last = ks->mods.n ? ks->mods.a[ks->mods.n - 1] : NULL;

	if (!l->mod)
		return 0;
	if (last && !strncmp(last, l->mod, l->mod_len) && !last[l->mod_len])
		return (long)ks->mods.n;
	if (EVPROF_VEC_RESERVE(&ks->mods, ks->mods.n + 1))
		return -ENOMEM;
	last = strndup(l->mod, l->mod_len);
	if (!last)
		return -ENOMEM;
	ks->mods.a[ks->mods.n++] = last;
	return (long)ks->mods.n;
}

/* Whether l, of the image, is name (len bytes, a literal). */
static bool is_sym(const struct kline *l, const char *name, size_t len)
{
	return !l->mod && l->name_len == len && !memcmp(l->name, name, len);
}

static int parse(struct evprof__kallsyms *ks, bool *nonzero,
		 uint64_t *text_base)
{
	const char *p = ks->text, *end = ks->text + ks->len, *nl;
	/* Lines are over 20 bytes: room for all without growing, mostly. */
	size_t cap = ks->len / 20 + 16;

	ks->syms = malloc(cap * sizeof(*ks->syms));
	if (!ks->syms)
		return -ENOMEM;
	for (; p < end; p = nl + 1) {
		struct kline l;
		long mod;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (!parse_line(p, nl, &l, nonzero))
			continue;
		if (ks->nr == cap) {
			struct kent *na;

			cap *= 2;
			na = realloc(ks->syms, cap * sizeof(*na));
			if (!na)
				return -ENOMEM;
			ks->syms = na;
		}
		mod = module_of(ks, &l);
		if (mod < 0)
			return (int)mod;
		ks->syms[ks->nr++] = (struct kent){
		    l.addr, (uint32_t)(l.name - ks->text), (uint32_t)mod};
		if (is_sym(&l, "_text", 5))
			*text_base = l.addr;
		else if (is_sym(&l, "_stext", 6))
			ks->stext = l.addr;
		else if (is_sym(&l, "_etext", 6))
			ks->etext = l.addr;
	}
	return 0;
}

/* Runs of one module in address order; each symbol gets its run's index. */
static int make_runs(struct evprof__kallsyms *ks, uint64_t text_base)
{
	uint32_t prev = 0;

	for (size_t i = 0; i < ks->nr; i++) {
		struct kent *e = &ks->syms[i];
		uint32_t mod = e->run;

		/* By name: a module listed in two places is one run. */
		if (!i || (mod != prev && (!mod || !prev ||
					   strcmp(ks->mods.a[mod - 1],
						  ks->mods.a[prev - 1])))) {
			if (EVPROF_VEC_RESERVE(&ks->runs, ks->runs.n + 1))
				return -ENOMEM;
			ks->runs.a[ks->runs.n++] = (struct krun){
			    mod ? ks->mods.a[mod - 1] : NULL,
			    mod ? e->addr
				: (text_base ? text_base : ks->syms[0].addr)};
		}
		prev = mod;
		e->run = (uint32_t)ks->runs.n - 1;
	}
	return 0;
}

int evprof__kallsyms_read(const char *path, char **text, size_t *len)
{
	/* Opened once: a FIFO's writer is there for one open only. */
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	*text = NULL;
	if (fd < 0)
		return -errno;
	err = evprof__read_fd_all(fd, KALLSYMS_MAX_BYTES, text, len);
	close(fd);
	return err;
}

struct evprof__kallsyms *evprof__kallsyms_load(const char *path, bool *hidden)
{
	char *text;
	size_t len;
	int err = evprof__kallsyms_read(path, &text, &len);

	*hidden = false;
	if (err) {
		errno = -err;
		return NULL;
	}
	return evprof__kallsyms_parse(text, len, hidden);
}

/*
 * A table read or mapped: its names' map made, or on err (-errno, or
 * -EVPROF_ERR_MALFORMED: EINVAL) freed. Returns it, or NULL with errno.
 */
static struct evprof__kallsyms *finish(struct evprof__kallsyms *ks, int err)
{
	if (!err) {
		ks->names = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
		if (!ks->names)
			err = -ENOMEM;
	}
	if (!err)
		return ks;
	evprof__kallsyms_free(ks);
	errno = err == -EVPROF_ERR_MALFORMED ? EINVAL : -err;
	return NULL;
}

struct evprof__kallsyms *evprof__kallsyms_parse(char *text, size_t len,
						bool *hidden)
{
	struct evprof__kallsyms *ks;
	uint64_t text_base = 0;
	bool nonzero = false;
	int err = 0;

	*hidden = false;
	ks = calloc(1, sizeof(*ks));
	if (!ks) {
		free(text);
		errno = ENOMEM;
		return NULL;
	}
	ks->text = text;
	ks->len = len;
	/* Name offsets are 32 bits. */
	if (ks->len > UINT32_MAX)
		err = -EFBIG;
	if (!err)
		err = parse(ks, &nonzero, &text_base);
	if (!err && !nonzero) {
		/* kptr_restrict: addresses are all zero and useless. */
		*hidden = ks->nr > 0;
		ks->nr = 0;
		return ks;
	}
	if (!err)
		sort_by_addr(ks->syms, ks->nr);
	if (!err)
		err = make_runs(ks, text_base);
	return finish(ks, err);
}

void evprof__kallsyms_free(struct evprof__kallsyms *ks)
{
	struct evprof_hashmap_entry *cur, *tmp;
	size_t bkt;

	if (!ks)
		return;
	if (ks->names) {
		EVPROF_HASHMAP_FOR_EACH_SAFE(ks->names, cur, tmp, bkt)
		free((char *)cur->value);
		evprof__hashmap_free(ks->names);
	}
	for (size_t i = 0; i < ks->mods.n; i++)
		free(ks->mods.a[i]);
	EVPROF_VEC_FREE(&ks->mods);
	EVPROF_VEC_FREE(&ks->runs);
	if (ks->map) {
		munmap(ks->map, ks->map_len);
	} else {
		free(ks->syms);
		free((char *)ks->text);
	}
	free(ks);
}

/*
 * A saved table: this head, the symbols (struct kent), the runs (struct
 * kidx_run), the runs' module names (each NUL-terminated) and the text.
 * In host order: the file is this host's own cache, not an exchange format.
 */
#define KIDX_MAGIC "EVKSYM01"

struct kidx_head {
	char magic[8];
	uint64_t nr, nruns, mods_len, len;
	uint64_t stext, etext;
};

struct kidx_run {
	uint64_t base;
	uint64_t mod; /* 0: the image; else offset + 1 of the module's name */
};

static int write_all(int fd, const void *b, size_t len)
{
	const char *p = b;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return n < 0 ? -errno : -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

int evprof__kallsyms_save(const struct evprof__kallsyms *ks, int fd)
{
	struct kidx_head h = {.nr = ks->nr,
			      .nruns = ks->runs.n,
			      .len = ks->len,
			      .stext = ks->stext,
			      .etext = ks->etext};
	struct kidx_run *runs = calloc(ks->runs.n + 1, sizeof(*runs));
	EVPROF_VEC(char) mods = {0};
	int err = runs ? 0 : -ENOMEM;

	memcpy(h.magic, KIDX_MAGIC, sizeof(h.magic));
	for (size_t i = 0; !err && i < ks->runs.n; i++) {
		const char *m = ks->runs.a[i].module;
		size_t n = m ? strlen(m) + 1 : 0;

		runs[i].base = ks->runs.a[i].base;
		runs[i].mod = m ? mods.n + 1 : 0;
		if (n && EVPROF_VEC_RESERVE(&mods, mods.n + n)) {
			err = -ENOMEM;
		} else if (n) {
			memcpy(mods.a + mods.n, m, n);
			mods.n += n;
		}
	}
	h.mods_len = mods.n;
	if (!err)
		err = write_all(fd, &h, sizeof(h));
	if (!err)
		err = write_all(fd, ks->syms, ks->nr * sizeof(*ks->syms));
	if (!err)
		err = write_all(fd, runs, ks->runs.n * sizeof(*runs));
	if (!err)
		err = write_all(fd, mods.a, mods.n);
	if (!err)
		err = write_all(fd, ks->text, ks->len);
	free(runs);
	EVPROF_VEC_FREE(&mods);
	return err;
}

/*
 * Points ks into the mapped file and checks every symbol: in address
 * order, its name in the text, its run one of the file's.
 */
static int map_parts(struct evprof__kallsyms *ks, const struct kidx_head *h)
{
	const char *base = ks->map, *mods;
	const struct kidx_run *runs;
	size_t room = ks->map_len - sizeof(*h), off = sizeof(*h);

	if (h->nr > room / sizeof(struct kent))
		return -EVPROF_ERR_MALFORMED;
	room -= h->nr * sizeof(struct kent);
	if (h->nruns > room / sizeof(*runs))
		return -EVPROF_ERR_MALFORMED;
	room -= h->nruns * sizeof(*runs);
	if (h->mods_len > room || h->len != room - h->mods_len ||
	    h->len > UINT32_MAX)
		return -EVPROF_ERR_MALFORMED;
	ks->syms = (struct kent *)(base + off);
	ks->nr = h->nr;
	off += h->nr * sizeof(struct kent);
	runs = (const struct kidx_run *)(base + off);
	off += h->nruns * sizeof(*runs);
	mods = base + off;
	ks->text = mods + h->mods_len;
	ks->len = h->len;
	ks->stext = h->stext;
	ks->etext = h->etext;
	/* Module names stay in the map, as long-lived as the table. */
	for (size_t i = 0; i < h->nruns; i++) {
		uint64_t m = runs[i].mod;

		if (m && (m > h->mods_len ||
			  !memchr(mods + m - 1, 0, h->mods_len - (m - 1))))
			return -EVPROF_ERR_MALFORMED;
		if (EVPROF_VEC_RESERVE(&ks->runs, ks->runs.n + 1))
			return -ENOMEM;
		ks->runs.a[ks->runs.n++] =
		    (struct krun){m ? mods + m - 1 : NULL, runs[i].base};
	}
	for (size_t i = 0; i < ks->nr; i++)
		if (ks->syms[i].name_off >= ks->len ||
		    ks->syms[i].run >= ks->runs.n ||
		    (i && ks->syms[i].addr < ks->syms[i - 1].addr))
			return -EVPROF_ERR_MALFORMED;
	return 0;
}

struct evprof__kallsyms *evprof__kallsyms_map(int fd)
{
	struct evprof__kallsyms *ks = calloc(1, sizeof(*ks));
	struct kidx_head h;
	struct stat st;
	int err = 0;

	if (!ks) {
		errno = ENOMEM;
		return NULL;
	}
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode) || (uint64_t)st.st_size < sizeof(h))
		err = -EVPROF_ERR_MALFORMED;
	if (!err) {
		ks->map_len = (size_t)st.st_size;
		ks->map =
		    mmap(NULL, ks->map_len, PROT_READ, MAP_PRIVATE, fd, 0);
		if (ks->map == MAP_FAILED) {
			ks->map = NULL;
			err = -errno;
		}
	}
	if (!err) {
		memcpy(&h, ks->map, sizeof(h));
		if (memcmp(h.magic, KIDX_MAGIC, sizeof(h.magic)))
			err = -EVPROF_ERR_MALFORMED;
	}
	if (!err)
		err = map_parts(ks, &h);
	return finish(ks, err);
}

/* Orders two symbols' names as strcmp would, from the file's bytes. */
static int cmp_names(const struct evprof__kallsyms *ks, const struct kent *a,
		     const struct kent *b)
{
	const char *end = ks->text + ks->len;
	const char *x = ks->text + a->name_off, *y = ks->text + b->name_off;
	size_t lx = name_len(x, end), ly = name_len(y, end);
	int c = memcmp(x, y, lx < ly ? lx : ly);

	if (c || lx == ly)
		return c;
	return lx < ly ? -1 : 1;
}

/* The name of syms[i], copied out of the file once. */
static const char *name_of(struct evprof__kallsyms *ks, size_t i)
{
	const char *p = ks->text + ks->syms[i].name_off;
	long v;
	char *n;

	if (evprof__hashmap_find(ks->names, (long)i, &v))
		return (const char *)v;
	n = strndup(p, name_len(p, ks->text + ks->len));
	if (n && evprof__hashmap_add(ks->names, (long)i, (long)n)) {
		free(n);
		n = NULL;
	}
	return n;
}

int evprof__kallsyms_find(struct evprof__kallsyms *ks, uint64_t addr,
			  struct evprof__ksym *out)
{
	size_t lo = evprof__count_le(ks->syms, ks->nr, sizeof(*ks->syms), addr);
	size_t best, next;
	const struct krun *run;

	if (lo == 0)
		return 0;
	/* Among aliases at one address, the first by name: a stable choice. */
	best = --lo;
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[best].addr) {
		lo--;
		if (cmp_names(ks, &ks->syms[lo], &ks->syms[best]) < 0)
			best = lo;
	}
	out->name = name_of(ks, best);
	if (!out->name)
		return -ENOMEM;
	run = &ks->runs.a[ks->syms[best].run];
	out->addr = ks->syms[best].addr;
	out->module = run->module;
	out->base = run->base;
	/* Size: distance to the next higher address, whatever owns it. */
	next = best + 1;
	while (next < ks->nr && ks->syms[next].addr == out->addr)
		next++;
	out->size = next < ks->nr ? ks->syms[next].addr - out->addr : 0;
	/*
	 * A module's text is one block: nothing else between its symbols.
	 * Not so for the pseudo-modules [bpf] (programs and trampolines,
	 * packed into shared pages) and [__builtin__ftrace] or
	 * [__builtin__kprobes] (trampolines and probe slots).
	 */
	if (!run->module)
		out->inside = addr >= ks->stext && addr < ks->etext;
	else
		out->inside = strcmp(run->module, "bpf") &&
			      strncmp(run->module, "__builtin__", 11) &&
			      next < ks->nr &&
			      ks->syms[next].run == ks->syms[best].run;
	return 1;
}

static size_t align4(size_t n)
{
	return (n + 3) & ~(size_t)3;
}

int evprof__notes_build_id(const uint8_t *notes, size_t len, uint8_t *id,
			   size_t max)
{
	size_t off = 0;

	while (off < len) {
		uint32_t namesz, descsz, type;
		size_t name_off, desc_off, next;

		if (len - off < 12)
			return -EVPROF_ERR_MALFORMED;
		namesz = evprof__load_u32(notes + off);
		descsz = evprof__load_u32(notes + off + 4);
		type = evprof__load_u32(notes + off + 8);
		name_off = off + 12;
		if (namesz > len - name_off)
			return -EVPROF_ERR_MALFORMED;
		desc_off = name_off + align4(namesz);
		if (desc_off > len || descsz > len - desc_off)
			return -EVPROF_ERR_MALFORMED;
		next = desc_off + align4(descsz);
		if (type == NT_GNU_BUILD_ID_TYPE && namesz == 4 &&
		    !memcmp(notes + name_off, "GNU", 4)) {
			if (descsz > max)
				descsz = (uint32_t)max;
			memcpy(id, notes + desc_off, descsz);
			return (int)descsz;
		}
		off = next;
	}
	return 0;
}
