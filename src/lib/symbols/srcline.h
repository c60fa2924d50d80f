/* SPDX-License-Identifier: MIT */
/*
 * Inline chains with file:line from an ELF module's DWARF: which functions
 * were inlined at an address, innermost first, as addr2line -i prints
 * them. Out-of-line functions are found through a per-CU index built on
 * first use, since dwarf_getscopes() walks a whole CU per address.
 */
#ifndef EVPROF_LIB_SRCLINE_H
#define EVPROF_LIB_SRCLINE_H

#include <stdint.h>

#include <evprof/symbols.h>

#include "symtab.h"

/* Most frames of one inline chain. */
#define EVPROF__MAX_INLINE 64

struct Dwfl_Module;
struct evprof__srcline;

/*
 * The DWARF reader of mod, which must outlive it; names and indexes are
 * allocated from n. Returns it or NULL with errno ENOMEM.
 */
EVPROF_HIDDEN struct evprof__srcline *
evprof__srcline_new(struct evprof__names *n, struct Dwfl_Module *mod);
EVPROF_HIDDEN void evprof__srcline_free(struct evprof__srcline *sl);

/*
 * Fills frames (EVPROF__MAX_INLINE of them) with the chain at svma, a
 * module address: see struct evprof_sym_result. Names are demangled unless
 * the store says not to; the last frame's name is NULL when DWARF has none.
 * Every string lives as long as n. Returns how many frames, 0 when no DWARF
 * function covers svma.
 */
EVPROF_HIDDEN uint32_t evprof__srcline_frames(struct evprof__srcline *sl,
					      uint64_t svma,
					      struct evprof_sym_frame *frames);

#endif /* EVPROF_LIB_SRCLINE_H */
