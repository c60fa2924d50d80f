/* SPDX-License-Identifier: MIT */
/*
 * Answers saved by build id: what the symbolizer found at file offsets of
 * an image with DWARF (its symbol, inline chain and lines), kept in the
 * debug cache so that the next run over the same binary reads them rather
 * than decoding the DWARF again: most of a short import's symbol time, and
 * a build id names one binary's contents. A file per image and demangling
 * choice, "answers-BUILDID" or "answers-BUILDID-m" (mangled), rewritten
 * whole through a rename when a run found new answers; one that does not
 * check out is ignored (and replaced).
 */
#ifndef EVPROF_LIB_SYMCACHE_H
#define EVPROF_LIB_SYMCACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/symbols.h>

#include "symtab.h"

/* One answer: struct evprof_sym_result's fields for a file offset. */
struct evprof__symcache_ent {
	uint64_t fileoff, rel_addr, sym_start, sym_size;
	const char *name; /* NULL: none */
	const struct evprof_sym_frame *frames;
	uint32_t nr_frames;
};

struct evprof__symcache;

/*
 * The saved answers of the image with build id bid (len bytes, at least
 * one) in dir, none when there is no such file or it does not check out.
 * Returns NULL only without memory.
 */
EVPROF_HIDDEN struct evprof__symcache *evprof__symcache_open(const char *dir,
							     const uint8_t *bid,
							     size_t len,
							     bool mangled);
/*
 * The saved answer at fileoff into *out, its strings and frames copied
 * into names. Returns 1, 0 when none is saved, or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__symcache_find(struct evprof__symcache *c,
					uint64_t fileoff,
					struct evprof__names *names,
					struct evprof__symcache_ent *out);
/*
 * Adds a new answer (not found by evprof__symcache_find()) to save; its
 * pointers must live until evprof__symcache_save(). 0 or -ENOMEM.
 */
EVPROF_HIDDEN int evprof__symcache_add(struct evprof__symcache *c,
				       const struct evprof__symcache_ent *e);
/* Writes the saved and new answers when there are new ones. */
EVPROF_HIDDEN void evprof__symcache_save(struct evprof__symcache *c);
EVPROF_HIDDEN void evprof__symcache_free(struct evprof__symcache *c);

#endif /* EVPROF_LIB_SYMCACHE_H */
