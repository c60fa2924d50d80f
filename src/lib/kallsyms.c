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

struct evprof__kallsyms {
	/*
	 * The file: mapped when it is a regular file (perf's copy in its
	 * build-id cache), else read (/proc/kallsyms has no size). Never
	 * written: names are copied out when a lookup first returns them.
	 */
	const char *text;
	size_t len;
	bool mapped;
	struct evprof__ksym *syms;
	size_t nr;
	char **mods; /* module names, owned; syms point here */
	size_t nr_mods;
};

/*
 * By address only: aliases at one address are told apart by name at
 * lookup, so their order here does not matter (and kallsyms is sorted by
 * address already, which spares the sort).
 */
static int cmp_ksym(const void *a, const void *b)
{
	const struct evprof__ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return 0;
}

static bool sorted_by_addr(const struct evprof__ksym *v, size_t nr)
{
	for (size_t i = 1; i < nr; i++)
		if (v[i].addr < v[i - 1].addr)
			return false;
	return true;
}

/* A line's parts, as offsets into the file. */
struct kline {
	uint64_t addr;
	const char *name, *mod; /* mod: NULL for the kernel image */
	size_t name_len, mod_len;
};

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
	tab = memchr(l->name, '\t', (size_t)(end - l->name));
	l->name_len = (size_t)((tab ? tab : end) - l->name);
	if (tab) {
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
	/* A NUL in a name ends it, as it would in the kernel's own text. */
	l->name_len = strnlen(l->name, l->name_len);
	return l->name_len > 0;
}

/* The module name of l, shared by the run of lines it heads. */
static const char *module_of(struct evprof__kallsyms *ks, const struct kline *l,
			     size_t *cap)
{
	char *last = ks->nr_mods ? ks->mods[ks->nr_mods - 1] : NULL, **nm;

	if (!l->mod)
		return NULL;
	if (last && !strncmp(last, l->mod, l->mod_len) && !last[l->mod_len])
		return last;
	if (ks->nr_mods == *cap) {
		size_t nc = *cap ? *cap * 2 : 64;

		nm = realloc(ks->mods, nc * sizeof(*nm));
		if (!nm)
			return NULL;
		ks->mods = nm;
		*cap = nc;
	}
	last = strndup(l->mod, l->mod_len);
	if (last)
		ks->mods[ks->nr_mods++] = last;
	return last;
}

/* Maps a regular file; 0, or -errno (-ENODEV: not mappable, read it). */
static int map_file(const char *path, const char **text, size_t *len)
{
	struct stat st;
	void *m;
	int fd = open(path, O_RDONLY | O_CLOEXEC), err = 0;

	if (fd < 0)
		return -errno;
	if (fstat(fd, &st)) {
		err = -errno;
	} else if (!S_ISREG(st.st_mode) || st.st_size <= 0) {
		err = -ENODEV;
	} else if ((uint64_t)st.st_size > KALLSYMS_MAX_BYTES) {
		err = -EFBIG;
	} else {
		m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd,
			 0);
		if (m == MAP_FAILED) {
			err = -ENODEV;
		} else {
			*text = m;
			*len = (size_t)st.st_size;
		}
	}
	close(fd);
	return err;
}

static int parse(struct evprof__kallsyms *ks, bool *nonzero,
		 uint64_t *text_base)
{
	const char *p = ks->text, *end = ks->text + ks->len, *nl;
	size_t cap, mcap = 0;

	/* Lines are over 20 bytes: room for all without growing, mostly. */
	cap = ks->len / 20 + 16;
	ks->syms = malloc(cap * sizeof(*ks->syms));
	if (!ks->syms)
		return -ENOMEM;
	for (; p < end; p = nl + 1) {
		struct evprof__ksym *sym;
		struct kline l;

		nl = memchr(p, '\n', (size_t)(end - p));
		if (!nl)
			nl = end;
		if (!parse_line(p, nl, &l, nonzero))
			continue;
		if (ks->nr == cap) {
			struct evprof__ksym *na;

			cap *= 2;
			na = realloc(ks->syms, cap * sizeof(*na));
			if (!na)
				return -ENOMEM;
			ks->syms = na;
		}
		sym = &ks->syms[ks->nr++];
		memset(sym, 0, sizeof(*sym));
		sym->addr = l.addr;
		sym->name_off = (size_t)(l.name - ks->text);
		sym->name_len = l.name_len;
		sym->module = module_of(ks, &l, &mcap);
		if (l.mod && !sym->module)
			return -ENOMEM;
		if (!l.mod && l.name_len == 5 && !memcmp(l.name, "_text", 5))
			*text_base = l.addr;
	}
	return 0;
}

static bool same_module(const char *a, const char *b)
{
	if (!a || !b)
		return a == b;
	return !strcmp(a, b);
}

struct evprof__kallsyms *evprof__kallsyms_load(const char *path, bool *hidden)
{
	struct evprof__kallsyms *ks;
	uint64_t text_base = 0;
	size_t i, run = 0;
	bool nonzero = false;
	int err;

	*hidden = false;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	err = map_file(path, &ks->text, &ks->len);
	ks->mapped = !err;
	if (err == -ENODEV) {
		char *buf;

		err =
		    evprof__read_all(path, KALLSYMS_MAX_BYTES, &buf, &ks->len);
		ks->text = buf;
	}
	if (!err)
		err = parse(ks, &nonzero, &text_base);
	if (err) {
		evprof__kallsyms_free(ks);
		errno = -err;
		return NULL;
	}
	if (!nonzero) {
		/* kptr_restrict: addresses are all zero and useless. */
		*hidden = ks->nr > 0;
		ks->nr = 0;
		return ks;
	}
	if (!sorted_by_addr(ks->syms, ks->nr))
		qsort(ks->syms, ks->nr, sizeof(*ks->syms), cmp_ksym);
	for (i = 0; i < ks->nr; i++) {
		struct evprof__ksym *s = &ks->syms[i];

		if (i && !same_module(s->module, ks->syms[i - 1].module))
			run = i;
		s->base = s->module
			      ? ks->syms[run].addr
			      : (text_base ? text_base : ks->syms[0].addr);
		s->size = 0;
	}
	/* Size: distance to the next higher address, whatever owns it. */
	for (i = 0; i + 1 < ks->nr; i++) {
		size_t j = i + 1;

		while (j < ks->nr && ks->syms[j].addr == ks->syms[i].addr)
			j++;
		if (j < ks->nr)
			ks->syms[i].size = ks->syms[j].addr - ks->syms[i].addr;
	}
	return ks;
}

void evprof__kallsyms_free(struct evprof__kallsyms *ks)
{
	if (!ks)
		return;
	for (size_t i = 0; ks->syms && i < ks->nr; i++)
		free((char *)ks->syms[i].name);
	for (size_t i = 0; i < ks->nr_mods; i++)
		free(ks->mods[i]);
	free(ks->mods);
	free(ks->syms);
	if (ks->mapped)
		munmap((void *)ks->text, ks->len);
	else
		free((char *)ks->text);
	free(ks);
}

/* Orders two symbols' names as strcmp would, from the file's bytes. */
static int cmp_names(const struct evprof__kallsyms *ks,
		     const struct evprof__ksym *a, const struct evprof__ksym *b)
{
	size_t n = a->name_len < b->name_len ? a->name_len : b->name_len;
	int c = memcmp(ks->text + a->name_off, ks->text + b->name_off, n);

	if (c || a->name_len == b->name_len)
		return c;
	return a->name_len < b->name_len ? -1 : 1;
}

int evprof__kallsyms_find(struct evprof__kallsyms *ks, uint64_t addr,
			  const struct evprof__ksym **out)
{
	size_t lo = evprof__count_le(ks->syms, ks->nr, sizeof(*ks->syms), addr);
	struct evprof__ksym *best;

	*out = NULL;
	if (lo == 0)
		return 0;
	/* Among aliases at one address, the first by name: a stable choice. */
	best = &ks->syms[--lo];
	while (lo > 0 && ks->syms[lo - 1].addr == best->addr) {
		lo--;
		if (cmp_names(ks, &ks->syms[lo], best) < 0)
			best = &ks->syms[lo];
	}
	if (!best->name) {
		best->name = strndup(ks->text + best->name_off, best->name_len);
		if (!best->name)
			return -ENOMEM;
	}
	*out = best;
	return 0;
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
