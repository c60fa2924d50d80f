/* SPDX-License-Identifier: MIT */
/*
 * What symbols offers the folders above it, beside the public symbolizer:
 * the one ELF finder (dso.h), kernel symbol tables (kallsyms.h) and DWARF
 * unwinding of copied user stacks (unwind.h) and the leaves it recovers
 * for frame-pointer stacks (leaf.h).
 */
#ifndef EVPROF_LIB_SYMBOLS_H
#define EVPROF_LIB_SYMBOLS_H

#include "dso.h"
#include "kallsyms.h"
#include "leaf.h"
#include "unwind.h"

#endif /* EVPROF_LIB_SYMBOLS_H */
