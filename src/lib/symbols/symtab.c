// SPDX-License-Identifier: MIT
/* Names (arena, interning, demangling) and ELF function-symbol tables. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#undef ARRAY_SIZE /* libiberty.h has its own; util.h's follows */

#include "symtab.h"

/* Longest name demangled: libiberty's stack use is ~100 bytes per char. */
#define MAX_MANGLED   8192
#define MAX_DEMANGLED (1u << 20)

struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	max_align_t data[];
};

/* Growing output of one demangling; failed when it would pass the cap. */
struct dmg_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

struct evprof__names {
	struct arena_blk *arena;
	struct evprof_hashmap *strings; /* each string is its key and value */
	struct dmg_buf dmg;		/* scratch for one demangling */
	bool no_demangle;
};

struct evprof__names *evprof__names_new(bool no_demangle)
{
	struct evprof__names *n = calloc(1, sizeof(*n));

	if (!n)
		return NULL;
	n->strings = evprof__hashmap_new(evprof__hashmap_str_hash,
					 evprof__hashmap_str_equal, NULL);
	if (!n->strings) {
		free(n);
		errno = ENOMEM;
		return NULL;
	}
	n->no_demangle = no_demangle;
	return n;
}

void evprof__names_free(struct evprof__names *n)
{
	struct arena_blk *b, *nb;

	if (!n)
		return;
	evprof__hashmap_free(n->strings);
	free(n->dmg.p);
	for (b = n->arena; b; b = nb) {
		nb = b->next;
		free(b);
	}
	free(n);
}

void *evprof__names_alloc(struct evprof__names *n, size_t size)
{
	const size_t align = sizeof(max_align_t);
	struct arena_blk *b = n->arena;
	void *p;

	size = (size + align - 1) & ~(align - 1);
	if (!b || b->cap - b->used < size) {
		size_t cap = size > 65536 ? size : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = n->arena;
		n->arena = b;
	}
	p = (char *)b->data + b->used;
	b->used += size;
	return memset(p, 0, size);
}

const char *evprof__names_intern(struct evprof__names *n, const char *str)
{
	size_t len;
	long found;
	char *copy;

	if (!str)
		return NULL;
	if (evprof__hashmap_find(n->strings, (long)str, &found))
		return (const char *)found;
	len = strlen(str) + 1;
	copy = evprof__names_alloc(n, len);
	if (!copy)
		return NULL;
	memcpy(copy, str, len);
	if (evprof__hashmap_add(n->strings, (long)copy, (long)copy))
		return NULL;
	return copy;
}

static void dmg_put(const char *str, size_t len, void *opaque)
{
	struct dmg_buf *b = opaque;
	char *np;

	if (b->failed)
		return;
	if (b->len + len + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + len + 1)
			cap *= 2;
		np = cap > MAX_DEMANGLED ? NULL : realloc(b->p, cap);
		if (!np) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, str, len);
	b->len += len;
	b->p[b->len] = '\0';
}

/*
 * C++ and Rust (legacy "_ZN...17h<hash>E" and v0 "_R...") through
 * libiberty, in the order and with the options of binutils' addr2line -C
 * (Rust first, since legacy Rust names are also valid C++ names). The
 * callback forms never call xmalloc, which exits on failure; their stack
 * use grows with the name, hence MAX_MANGLED. Names that do not demangle
 * stay as they are.
 */
const char *evprof__names_demangle(struct evprof__names *n, const char *name)
{
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	struct dmg_buf *b = &n->dmg;
	bool ok;

	if (!name || n->no_demangle ||
	    (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)) ||
	    strnlen(name, MAX_MANGLED + 1) > MAX_MANGLED)
		return evprof__names_intern(n, name);
	b->len = 0;
	b->failed = false;
	ok = rust_demangle_callback(name, opts, dmg_put, b) && !b->failed;
	if (!ok) {
		b->len = 0;
		b->failed = false;
		ok = cplus_demangle_v3_callback(name, opts, dmg_put, b) &&
		     !b->failed;
	}
	return evprof__names_intern(n, ok && b->len ? b->p : name);
}

/* ---- ELF function symbols ------------------------------------------------ */

/* A sized symbol; name owned by libdwfl. lo first (count_le). */
struct symrec {
	uint64_t lo, size;
	const char *name;
	int rank; /* binding: local < weak < global, as libdwfl prefers */
	int ndx;  /* symbol table index */
};

/* Sorted by lo, then rank, then index (see cmp_symrec). */
struct evprof__elfsyms {
	struct symrec *v;
	size_t nr;
};

/* Symbol-table ranks by binding, as libdwfl breaks ties at one address. */
static int bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
	case STB_GNU_UNIQUE:
		return 1;
	default:
		return 0;
	}
}

static int cmp_symrec(const void *a, const void *b)
{
	const struct symrec *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	/* Folded aliases: the first in the table is found first, as binutils. */
	return y->ndx - x->ndx;
}

struct evprof__elfsyms *evprof__elfsyms_new(struct Dwfl_Module *mod)
{
	struct evprof__elfsyms *t = calloc(1, sizeof(*t));
	size_t cap = 0;
	int n, i;

	if (!t)
		return NULL;
	n = dwfl_module_getsymtab(mod);
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(mod, i, &sym, &addr, &shndx,
					       NULL, NULL);
		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || !sym.st_size || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     type != STT_NOTYPE))
			continue;
		if (t->nr == cap) {
			struct symrec *nv;

			cap = cap ? cap * 2 : 1024;
			nv = realloc(t->v, cap * sizeof(*nv));
			if (!nv) {
				evprof__elfsyms_free(t);
				errno = ENOMEM;
				return NULL;
			}
			t->v = nv;
		}
		t->v[t->nr++] = (struct symrec){addr, sym.st_size, name,
						bind_rank(sym.st_info), i};
	}
	if (t->nr)
		qsort(t->v, t->nr, sizeof(*t->v), cmp_symrec);
	return t;
}

void evprof__elfsyms_free(struct evprof__elfsyms *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

const char *evprof__elfsyms_find(const struct evprof__elfsyms *t, uint64_t svma,
				 uint64_t *start, uint64_t *size)
{
	size_t lo, steps;

	lo = evprof__count_le(t->v, t->nr, sizeof(*t->v), svma);
	/* Nested symbols are few: look back a little for one that holds it. */
	for (steps = 0; lo > 0 && steps < 16; lo--, steps++) {
		const struct symrec *r = &t->v[lo - 1];

		if (svma - r->lo < r->size) {
			*start = r->lo;
			*size = r->size;
			return r->name;
		}
	}
	return NULL;
}
