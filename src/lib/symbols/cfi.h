/* SPDX-License-Identifier: MIT */
/*
 * Functions of code without symbols, from the CFI: each FDE of .eh_frame
 * (and of an uncompressed or compressed .debug_frame) covers one function
 * as the compiler emitted it, [initial_location, + address_range), the
 * start being what the symbol's st_value would have been.
 */
#ifndef EVPROF_LIB_CFI_H
#define EVPROF_LIB_CFI_H

#include <stdbool.h>
#include <stdint.h>

#include <libelf.h>

#include "base/base.h"

struct evprof__fdes;

/*
 * The FDE ranges of elf, sorted; a table with none when it has no CFI.
 * Returns NULL only without memory.
 */
EVPROF_HIDDEN struct evprof__fdes *evprof__fdes_new(Elf *elf);
EVPROF_HIDDEN void evprof__fdes_free(struct evprof__fdes *t);

/* The FDE whose range holds ELF address addr: its start and size. */
EVPROF_HIDDEN bool evprof__fdes_find(const struct evprof__fdes *t,
				     uint64_t addr, uint64_t *start,
				     uint64_t *size);

#endif /* EVPROF_LIB_CFI_H */
