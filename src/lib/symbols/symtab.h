/* SPDX-License-Identifier: MIT */
/*
 * Symbol tables and their names, the bottom layer of symbolization: one
 * binary search for every sorted table (kallsyms, JIT maps, ELF symbols,
 * DWARF function ranges), the string store that owns every name a
 * symbolizer hands out (arena, interning, demangling), and the sorted
 * function-symbol table of an ELF module.
 */
#ifndef EVPROF_LIB_SYMTAB_H
#define EVPROF_LIB_SYMTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/*
 * How many of nr elements of size bytes, sorted by a leading uint64_t,
 * have it at or below key: the element holding key, if any, is before.
 */
static inline size_t evprof__count_le(const void *base, size_t nr, size_t size,
				      uint64_t key)
{
	size_t lo = 0, hi = nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (evprof__load_u64((const char *)base + mid * size) <= key)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* ---- names --------------------------------------------------------------- */

struct evprof__names;

/*
 * Returns an empty store, or NULL with errno ENOMEM. no_demangle makes
 * evprof__names_demangle() intern names as they are.
 */
EVPROF_HIDDEN struct evprof__names *evprof__names_new(bool no_demangle);
/* Frees the store and everything allocated from it. Accepts NULL. */
EVPROF_HIDDEN void evprof__names_free(struct evprof__names *n);

/*
 * n bytes aligned for any type, zeroed, that live until the store is
 * freed; NULL when out of memory.
 */
EVPROF_HIDDEN void *evprof__names_alloc(struct evprof__names *n, size_t size);

/*
 * The store's one copy of str (equal strings give one pointer), or NULL
 * for a NULL str or when out of memory.
 */
EVPROF_HIDDEN const char *evprof__names_intern(struct evprof__names *n,
					       const char *str);

/*
 * The interned demangled form of a C++ or Rust symbol name; other names
 * (and ones that do not demangle) are interned as they are. NULL for a
 * NULL name or when out of memory.
 */
EVPROF_HIDDEN const char *evprof__names_demangle(struct evprof__names *n,
						 const char *name);

/* ---- ELF function symbols ------------------------------------------------ */

struct Dwfl_Module;
struct evprof__elfsyms;

/*
 * The sized function symbols of mod (.symtab, else .dynsym, and the
 * MiniDebugInfo ones: whatever libdwfl found), sorted once, because
 * dwfl_module_addrinfo() scans every symbol per lookup (minutes on a
 * library like libLLVM). Names belong to mod. Returns the table (empty when
 * there are none) or NULL with errno ENOMEM.
 */
EVPROF_HIDDEN struct evprof__elfsyms *
evprof__elfsyms_new(struct Dwfl_Module *mod);
EVPROF_HIDDEN void evprof__elfsyms_free(struct evprof__elfsyms *t);

/*
 * The closest sized symbol holding svma (a module address): at one address
 * global over weak over local, then the first in the table, as libdwfl and
 * binutils choose. Returns its name (NULL: none) with its first address and
 * size in *start and *size.
 */
EVPROF_HIDDEN const char *evprof__elfsyms_find(const struct evprof__elfsyms *t,
					       uint64_t svma, uint64_t *start,
					       uint64_t *size);

#endif /* EVPROF_LIB_SYMTAB_H */
