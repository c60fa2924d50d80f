// SPDX-License-Identifier: MIT
/* Kernel symbols from /proc/kallsyms, kernel build id from ELF notes. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "kallsyms.h"
#include "symtab.h"

#define KALLSYMS_MAX_BYTES   (512u << 20)
#define NT_GNU_BUILD_ID_TYPE 3

struct evprof__kallsyms {
	char *text; /* the file, NUL-terminated in place; names point here */
	struct evprof__ksym *syms;
	size_t nr;
};

static int cmp_ksym(const void *a, const void *b)
{
	const struct evprof__ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* Aliases at one address: a stable, readable choice. */
	return strcmp(x->name, y->name);
}

/*
 * One line: "ADDR TYPE NAME" optionally followed by "\t[MODULE]". Returns
 * false for lines that are not text symbols or do not parse.
 */
static bool parse_line(char *line, struct evprof__ksym *sym, bool *nonzero)
{
	char *p = line, *name, *mod = NULL, *tab;
	uint64_t addr = 0;
	int digits = 0;

	for (; *p && *p != ' '; p++, digits++) {
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
	if (!digits || p[0] != ' ' || !p[1] || p[2] != ' ')
		return false;
	if (addr)
		*nonzero = true;
	if (p[1] != 't' && p[1] != 'T')
		return false;
	name = p + 3;
	tab = strchr(name, '\t');
	if (tab) {
		*tab = '\0';
		mod = tab + 1;
		if (*mod == '[') {
			size_t l = strlen(++mod);

			if (l && mod[l - 1] == ']')
				mod[l - 1] = '\0';
		}
	}
	if (!*name)
		return false;
	sym->addr = addr;
	sym->name = name;
	sym->module = mod && *mod ? mod : NULL;
	return true;
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
	struct evprof__ksym *na;
	uint64_t text_base = 0;
	size_t len = 0, cap = 0, i, run = 0;
	bool nonzero = false;
	char *p, *nl;
	int err;

	*hidden = false;
	ks = calloc(1, sizeof(*ks));
	if (!ks)
		return NULL;
	err = evprof__read_all(path, KALLSYMS_MAX_BYTES, &ks->text, &len);
	if (err) {
		free(ks);
		errno = -err;
		return NULL;
	}
	for (p = ks->text; p < ks->text + len; p = nl + 1) {
		struct evprof__ksym sym;

		nl = strchr(p, '\n');
		if (!nl)
			nl = p + strlen(p);
		*nl = '\0';
		if (!parse_line(p, &sym, &nonzero))
			continue;
		if (ks->nr == cap) {
			cap = cap ? cap * 2 : 4096;
			na = realloc(ks->syms, cap * sizeof(*na));
			if (!na) {
				evprof__kallsyms_free(ks);
				errno = ENOMEM;
				return NULL;
			}
			ks->syms = na;
		}
		ks->syms[ks->nr++] = sym;
		if (!sym.module && !strcmp(sym.name, "_text"))
			text_base = sym.addr;
	}
	if (!nonzero) {
		/* kptr_restrict: addresses are all zero and useless. */
		*hidden = ks->nr > 0;
		ks->nr = 0;
		return ks;
	}
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
	free(ks->syms);
	free(ks->text);
	free(ks);
}

const struct evprof__ksym *
evprof__kallsyms_find(const struct evprof__kallsyms *ks, uint64_t addr)
{
	size_t lo = evprof__count_le(ks->syms, ks->nr, sizeof(*ks->syms), addr);

	if (lo == 0)
		return NULL;
	/* Among aliases at one address, the first in sort order. */
	lo--;
	while (lo > 0 && ks->syms[lo - 1].addr == ks->syms[lo].addr)
		lo--;
	return &ks->syms[lo];
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
