// SPDX-License-Identifier: MIT
/*
 * FDE ranges (cfi.h). dwarf_next_cfi() walks the entries; the encoding of
 * an FDE's initial_location and address_range is its CIE's (the 'R' of a
 * 'z' augmentation in .eh_frame, an address in .debug_frame): the DWARF
 * pointer encodings of the LSB's "Exception Frames" (DW_EH_PE_*).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdw.h>
#include <gelf.h>

#include "cfi.h"

#define PE_OMIT	 0xff
#define PE_PCREL 0x10
#define MAX_CIES 64 /* CIEs remembered per section: a handful in practice */

struct fde {
	uint64_t start, size;
};

struct evprof__fdes {
	struct fde *v;
	size_t n, cap;
};

struct cie {
	uint64_t off;
	uint8_t enc;
};

/* Reads *p (< end) encoded as enc; at: p's address in memory (pcrel). */
static bool read_enc(const uint8_t **p, const uint8_t *end, uint8_t enc,
		     uint64_t at, bool elf64, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	size_t len;

	switch (enc & 0x0f) {
	case 0x00: /* absptr */
		len = elf64 ? 8 : 4;
		break;
	case 0x02: /* udata2 */
	case 0x0a: /* sdata2 */
		len = 2;
		break;
	case 0x03: /* udata4 */
	case 0x0b: /* sdata4 */
		len = 4;
		break;
	case 0x04: /* udata8 */
	case 0x0c: /* sdata8 */
		len = 8;
		break;
	case 0x01: /* uleb128 */
		while (*p < end && shift < 64) {
			uint8_t b = *(*p)++;

			v |= (uint64_t)(b & 0x7f) << shift;
			shift += 7;
			if (!(b & 0x80)) {
				*out = v + ((enc & 0x70) == PE_PCREL ? at : 0);
				return true;
			}
		}
		return false;
	default: /* sleb128 and the rest: not used for code addresses */
		return false;
	}
	if ((size_t)(end - *p) < len)
		return false;
	for (size_t i = 0; i < len; i++)
		v |= (uint64_t)(*p)[i] << (8 * i); /* ELF files here: LSB */
	if ((enc & 0x08) && len < 8 && (v >> (8 * len - 1) & 1))
		v |= ~UINT64_C(0) << (8 * len); /* sign-extend */
	*p += len;
	*out = v + ((enc & 0x70) == PE_PCREL ? at : 0);
	return true;
}

/* The 'R' encoding of a 'z' augmentation; absptr without one. */
static uint8_t cie_encoding(const Dwarf_CIE *c, bool elf64)
{
	const uint8_t *d = c->augmentation_data;
	const uint8_t *end = d ? d + c->augmentation_data_size : NULL;
	uint64_t skip;

	if (!c->augmentation || c->augmentation[0] != 'z' || !d)
		return 0x00;
	for (const char *a = c->augmentation + 1; *a && d < end; a++) {
		switch (*a) {
		case 'R':
			return *d;
		case 'L':
			d++;
			break;
		case 'P': {
			uint8_t enc = *d++;

			if (!read_enc(&d, end, enc & 0x7f, 0, elf64, &skip))
				return PE_OMIT;
			break;
		}
		case 'S':
		case 'B':
			break;
		default:
			return PE_OMIT;
		}
	}
	return 0x00;
}

static int add(struct evprof__fdes *t, uint64_t start, uint64_t size)
{
	if (t->n == t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 256;
		struct fde *v = realloc(t->v, cap * sizeof(*v));

		if (!v)
			return -ENOMEM;
		t->v = v;
		t->cap = cap;
	}
	t->v[t->n++] = (struct fde){start, size};
	return 0;
}

/* Adds the FDEs of section scn (.eh_frame when eh). */
static int add_section(struct evprof__fdes *t, Elf *elf, Elf_Scn *scn, bool eh)
{
	const unsigned char *ident =
	    (const unsigned char *)elf_getident(elf, NULL);
	bool elf64 = ident && ident[EI_CLASS] == ELFCLASS64;
	struct cie cies[MAX_CIES];
	size_t nr_cies = 0;
	Elf_Data *data;
	GElf_Shdr sh;
	Dwarf_Off off = 0, next;
	Dwarf_CFI_Entry e;

	if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
	    ((sh.sh_flags & SHF_COMPRESSED) && elf_compress(scn, 0, 0) < 0))
		return 0;
	data = elf_getdata(scn, NULL);
	if (!data || !data->d_buf)
		return 0;
	while (dwarf_next_cfi(ident, data, eh, off, &next, &e) == 0) {
		if (dwarf_cfi_cie_p(&e)) {
			if (nr_cies < MAX_CIES)
				cies[nr_cies++] = (struct cie){
				    off, cie_encoding(&e.cie, elf64)};
		} else {
			const uint8_t *p = e.fde.start;
			uint64_t at =
			    sh.sh_addr +
			    (uint64_t)(p - (const uint8_t *)data->d_buf);
			uint64_t start, size;
			uint8_t enc = PE_OMIT;

			for (size_t i = 0; i < nr_cies; i++)
				if (cies[i].off == e.fde.CIE_pointer)
					enc = cies[i].enc;
			if (enc != PE_OMIT &&
			    read_enc(&p, e.fde.end, enc, at, elf64, &start) &&
			    read_enc(&p, e.fde.end, enc & 0x0f, 0, elf64,
				     &size) &&
			    size && add(t, start, size))
				return -ENOMEM;
		}
		off = next;
	}
	return 0;
}

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

struct evprof__fdes *evprof__fdes_new(Elf *elf)
{
	struct evprof__fdes *t = calloc(1, sizeof(*t));
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	if (!t)
		return NULL;
	if (!elf || elf_getshdrstrndx(elf, &shstrndx))
		return t;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if ((!strcmp(name, ".eh_frame") &&
		     add_section(t, elf, scn, true)) ||
		    (!strcmp(name, ".debug_frame") &&
		     add_section(t, elf, scn, false))) {
			evprof__fdes_free(t);
			return NULL;
		}
	}
	if (t->n)
		qsort(t->v, t->n, sizeof(*t->v), cmp_fde);
	return t;
}

void evprof__fdes_free(struct evprof__fdes *t)
{
	if (!t)
		return;
	free(t->v);
	free(t);
}

bool evprof__fdes_find(const struct evprof__fdes *t, uint64_t addr,
		       uint64_t *start, uint64_t *size)
{
	size_t lo = 0, hi = t ? t->n : 0;

	/* The last FDE starting at or below addr. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->v[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - t->v[lo - 1].start >= t->v[lo - 1].size)
		return false;
	*start = t->v[lo - 1].start;
	*size = t->v[lo - 1].size;
	return true;
}
