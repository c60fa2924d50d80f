/* SPDX-License-Identifier: MIT */
/* Kernel text symbols from a kallsyms file; the kernel's build id. */
#ifndef EVPROF_LIB_KALLSYMS_H
#define EVPROF_LIB_KALLSYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* A kernel text symbol, as a lookup returns it. */
struct evprof__ksym {
	uint64_t addr;
	const char *name;   /* lives as long as the table */
	const char *module; /* NULL: the kernel image itself; as name */
	uint64_t size;	    /* distance to the next symbol; 0 for the last */
	uint64_t base;	    /* _text, or the module's lowest text symbol */
	/*
	 * addr lies in the image's text [_stext, _etext) or between two
	 * symbols of one module: where nothing loaded later (a BPF program,
	 * a trampoline) can be, so an older table of the boot still holds.
	 */
	bool inside;
};

struct evprof__kallsyms;

/*
 * Reads a kallsyms file (text symbols only). Returns the table or NULL with
 * errno set. *hidden is set when every address reads as zero
 * (kptr_restrict); the table is then empty.
 */
EVPROF_HIDDEN struct evprof__kallsyms *evprof__kallsyms_load(const char *path,
							     bool *hidden);
/*
 * The same from text (len bytes, malloc'ed: the table owns it, freed on
 * failure too).
 */
EVPROF_HIDDEN struct evprof__kallsyms *
evprof__kallsyms_parse(char *text, size_t len, bool *hidden);

/*
 * Reads the kallsyms file at path whole into *text (malloc'ed, *len
 * bytes). Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__kallsyms_read(const char *path, char **text,
					size_t *len);

EVPROF_HIDDEN void evprof__kallsyms_free(struct evprof__kallsyms *ks);

/*
 * Writes the table to fd in a form evprof__kallsyms_map() reads without
 * parsing (for a cache of this host's). Returns 0 or -errno.
 */
EVPROF_HIDDEN int evprof__kallsyms_save(const struct evprof__kallsyms *ks,
					int fd);
/*
 * The table saved in the file at fd, mapped (fd may be closed after). The
 * file must not be cut or rewritten while mapped: replace it by rename.
 * Returns it, or NULL with errno set (EINVAL: not a saved table).
 */
EVPROF_HIDDEN struct evprof__kallsyms *evprof__kallsyms_map(int fd);

/*
 * Fills *out with the symbol at or below addr (the first by name among
 * aliases). Returns 1, 0 when there is none, or -ENOMEM when its name
 * could not be copied out of the file.
 */
EVPROF_HIDDEN int evprof__kallsyms_find(struct evprof__kallsyms *ks,
					uint64_t addr,
					struct evprof__ksym *out);

/*
 * Parses ELF notes (as in /sys/kernel/notes) for the GNU build id and
 * copies it to id (up to max bytes). Returns its length, 0 when there is
 * none, or -EVPROF_ERR_MALFORMED.
 */
EVPROF_HIDDEN int evprof__notes_build_id(const uint8_t *notes, size_t len,
					 uint8_t *id, size_t max);

#endif /* EVPROF_LIB_KALLSYMS_H */
