// SPDX-License-Identifier: MIT
/* DWARF inline chains and source lines through libdw. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>

#include "srcline.h"

#define MAX_INLINE EVPROF__MAX_INLINE

struct evprof__srcline {
	struct evprof__names *names;
	Dwfl_Module *mod;
	struct evprof_hashmap *cus; /* CU DIE offset -> struct cu_index */
};

struct evprof__srcline *evprof__srcline_new(struct evprof__names *n,
					    Dwfl_Module *mod)
{
	struct evprof__srcline *sl = calloc(1, sizeof(*sl));

	if (!sl)
		return NULL;
	sl->cus = evprof__hashmap_new(evprof__hashmap_u64_hash,
				      evprof__hashmap_u64_equal, NULL);
	if (!sl->cus) {
		free(sl);
		errno = ENOMEM;
		return NULL;
	}
	sl->names = n;
	sl->mod = mod;
	return sl;
}

void evprof__srcline_free(struct evprof__srcline *sl)
{
	if (!sl)
		return;
	evprof__hashmap_free(sl->cus);
	free(sl);
}

/* Name of a function DIE: linkage name (demangled) first, as addr2line. */
static const char *die_name(struct evprof__names *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(
		    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n)
		return evprof__names_demangle(s, n);
	return evprof__names_intern(
	    s, dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a)));
}

static uint32_t die_udata(Dwarf_Die *die, unsigned int at)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_formudata(dwarf_attr(die, at, &a), &w) || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/* A function's range in a CU: [lo, hi), DIE at off. lo first (count_le). */
struct fn_range {
	uint64_t lo, hi;
	Dwarf_Off off;
};

/* The out-of-line functions of one CU, sorted by lo. */
struct cu_index {
	struct fn_range *r;
	size_t nr;
};

struct fn_vec {
	struct fn_range *v;
	size_t nr, cap;
	bool failed;
};

static void index_scope(Dwarf_Die *parent, struct fn_vec *fv, int depth)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(parent, &c) != 0)
		return;
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) >
			       0) {
				struct fn_range *nv;

				if (hi <= lo)
					continue;
				if (fv->nr == fv->cap) {
					fv->cap = fv->cap ? fv->cap * 2 : 64;
					nv = realloc(fv->v,
						     fv->cap * sizeof(*nv));
					if (!nv) {
						fv->failed = true;
						return;
					}
					fv->v = nv;
				}
				fv->v[fv->nr++] = (struct fn_range){
				    lo, hi, dwarf_dieoffset(&c)};
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			index_scope(&c, fv, depth + 1);
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_fn_range(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The function index of cu, built on first use; NULL on failure. */
static struct cu_index *cu_index(struct evprof__srcline *sl, Dwarf_Die *cu)
{
	long key = (long)dwarf_dieoffset(cu), found;
	struct fn_vec fv = {0};
	struct cu_index *ci;

	if (evprof__hashmap_find(sl->cus, key, &found))
		return (struct cu_index *)found;
	index_scope(cu, &fv, 0);
	ci = evprof__names_alloc(sl->names, sizeof(*ci));
	if (ci) {
		ci->nr = fv.failed ? 0 : fv.nr;
		ci->r = evprof__names_alloc(sl->names, (ci->nr ? ci->nr : 1) *
							   sizeof(*ci->r));
		if (ci->r && ci->nr) {
			qsort(fv.v, ci->nr, sizeof(*fv.v), cmp_fn_range);
			memcpy(ci->r, fv.v, ci->nr * sizeof(*fv.v));
		}
		if (!ci->r || evprof__hashmap_add(sl->cus, key, (long)ci))
			ci = NULL;
	}
	free(fv.v);
	return ci;
}

/* Whether die's code covers pc; blocks without addresses may (abstract). */
static bool may_hold(Dwarf_Die *die, Dwarf_Addr pc)
{
	if (dwarf_haspc(die, pc) == 1)
		return true;
	return !dwarf_hasattr(die, DW_AT_low_pc) &&
	       !dwarf_hasattr(die, DW_AT_ranges);
}

/* The inlined subroutine directly in parent (through blocks) at pc. */
static bool inner_inline(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out,
			 int depth)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&c, pc) == 1) {
				*out = c;
				return true;
			}
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (may_hold(&c, pc) &&
			    inner_inline(&c, pc, out, depth + 1))
				return true;
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/*
 * The functions at pc, innermost first, into scopes (MAX_INLINE): through
 * the CU's function index, then down the inline nesting of the one
 * function that holds pc. dwarf_getscopes() would walk the whole CU per
 * address, which is most of the time on large C++ CUs. Returns how many,
 * 0 when no indexed function holds pc.
 */
static int find_scopes(struct evprof__srcline *sl, Dwarf_Die *cu, Dwarf_Addr pc,
		       Dwarf_Die *scopes)
{
	struct cu_index *ci = cu_index(sl, cu);
	Dwarf_Die chain[MAX_INLINE];
	size_t lo, steps;
	int n = 0, i;

	if (!ci)
		return 0;
	lo = evprof__count_le(ci->r, ci->nr, sizeof(*ci->r), pc);
	for (steps = 0; lo > 0 && steps < 8; lo--, steps++)
		if (pc < ci->r[lo - 1].hi)
			break;
	if (!lo || steps == 8 ||
	    !dwarf_offdie(dwarf_cu_getdwarf(cu->cu), ci->r[lo - 1].off,
			  &chain[0]))
		return 0;
	n = 1;
	while (n < MAX_INLINE && inner_inline(&chain[n - 1], pc, &chain[n], 0))
		n++;
	for (i = 0; i < n; i++)
		scopes[i] = chain[n - 1 - i];
	return n;
}

uint32_t evprof__srcline_frames(struct evprof__srcline *sl, uint64_t svma,
				struct evprof_sym_frame *frames)
{
	struct evprof__names *s = sl->names;
	const char *file = NULL;
	Dwarf_Die *cu, *scopes = NULL, found[MAX_INLINE];
	Dwarf_Files *files = NULL;
	Dwarf_Addr bias;
	Dwfl_Line *l;
	size_t nfiles = 0;
	uint32_t n = 0;
	int line = 0, col = 0, decl, nscopes, i;

	cu = dwfl_module_addrdie(sl->mod, svma, &bias);
	if (!cu)
		return 0;
	l = dwfl_module_getsrc(sl->mod, svma);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, &col, NULL, NULL);
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	nscopes = find_scopes(sl, cu, svma - bias, found);
	if (nscopes > 0)
		goto frames;
	/*
	 * Not in the index (a function nested elsewhere): the slow way.
	 * dwarf_getscopes() continues from an inlined instance into the
	 * abstract function it came from; the physical nesting (inline ->
	 * caller) comes from dwarf_getscopes_die() on the innermost function.
	 */
	nscopes = dwarf_getscopes(cu, svma - bias, &scopes);
	for (i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_subprogram)
			break;
	}
	if (i < nscopes) {
		Dwarf_Die inner = scopes[i];

		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
	}
frames:
	for (i = 0; i < nscopes && n < MAX_INLINE; i++) {
		Dwarf_Die *d = scopes ? &scopes[i] : &found[i];
		int tag = dwarf_tag(d);
		uint32_t cf;

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram)
			continue;
		frames[n].name = die_name(s, d);
		frames[n].file = evprof__names_intern(s, file);
		frames[n].line = line > 0 ? (uint32_t)line : 0;
		frames[n].column = col > 0 ? (uint32_t)col : 0;
		/* An inline instance takes it from its abstract origin. */
		if (dwarf_decl_line(d, &decl) || decl < 0)
			decl = 0;
		frames[n].decl_line = (uint32_t)decl;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* The caller's position is this inline's call site. */
		cf = die_udata(d, DW_AT_call_file);
		file = files && cf < nfiles
			   ? dwarf_filesrc(files, cf, NULL, NULL)
			   : NULL;
		line = (int)die_udata(d, DW_AT_call_line);
		col = (int)die_udata(d, DW_AT_call_column);
	}
	free(scopes);
	return n;
}
