/* SPDX-License-Identifier: MIT */
/*
 * JIT code names from perf's map files, /tmp/perf-PID.map: lines
 * "START SIZE name" (hex), written by JIT runtimes for perf.
 */
#ifndef EVPROF_LIB_JITMAP_H
#define EVPROF_LIB_JITMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "symtab.h"

/* A map line; name is raw (callers demangle). start first (count_le). */
struct evprof__jit_sym {
	uint64_t start, size;
	const char *name;
	size_t line;
};

/* A process's JIT map, sorted by start, then by line. */
struct evprof__jitmap {
	struct evprof__jit_sym *syms;
	size_t nr;
	const char *path, *name; /* the map file; its last component */
};

/*
 * Reads pid's map file, only when owned by our effective user, root, or
 * pid's user while it runs (anyone can write /tmp), as perf does.
 * Everything is allocated from n. Returns the map, or NULL when the file
 * is absent, refused, empty, or memory ran out. *read is set when a file
 * was opened and read.
 */
EVPROF_HIDDEN struct evprof__jitmap *
evprof__jitmap_load(struct evprof__names *n, int pid, bool *read);

/*
 * The entry covering addr: the nearest start at or below it, of those the
 * later line (code freed and reused). NULL when none.
 */
EVPROF_HIDDEN const struct evprof__jit_sym *
evprof__jitmap_find(const struct evprof__jitmap *jm, uint64_t addr);

/*
 * Whether a mapping of this path may hold JIT code: anonymous ones
 * ("//anon" in perf records, "" or "[anon:NAME]" in /proc/PID/maps), and
 * the ones perf also counts as anonymous memory, memfd code included
 * (e.g. double-mapped JIT code). "[vdso]" is not.
 */
EVPROF_HIDDEN bool evprof__jit_candidate(const char *path);

#endif /* EVPROF_LIB_JITMAP_H */
