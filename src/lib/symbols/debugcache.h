/* SPDX-License-Identifier: MIT */
/*
 * A directory of debug files stored with their DWARF sections
 * decompressed, one per build id (HEX.debug). Distributions ship debug
 * files with zlib-compressed sections (SHF_COMPRESSED); libdw inflates
 * every DWARF section of a file when it first opens it, tens of
 * milliseconds for a C library's, in every run that meets one of its
 * frames. Reading an inflated copy costs page-cache reads instead.
 *
 * It also keeps images (HEX.elf), the ELF files of mappings that only a
 * container's mount namespace has, copied while it runs, as perf record
 * fills ~/.debug: once the container has exited they can be read nowhere
 * else (dso.h).
 *
 * Entries are written whole to an unnamed file and linked in after, so a
 * reader never sees a partial one; at most EVPROF__DEBUGCACHE_MAX bytes
 * are kept, the least recently used entries going first.
 */
#ifndef EVPROF_LIB_DEBUGCACHE_H
#define EVPROF_LIB_DEBUGCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define EVPROF__DEBUGCACHE_MAX (2ull << 30)

/*
 * The cached copy of the debug file of build id id (len bytes) in dir,
 * opened read-only, when it is there whole, holds that build id and is
 * a regular file of this user's (not a link: the directory may be
 * another user's, as with sudo -E). Returns the fd, or -ENOENT.
 */
EVPROF_HIDDEN int evprof__debugcache_open(const char *dir, const uint8_t *id,
					  size_t len);

/*
 * When the debug file open at fd holds build id id and has sections
 * compressed with zlib (what libelf inflates), stores its inflated copy
 * in dir (made if missing) under id; fd is only read. Returns 0, -ENOENT
 * when there is nothing to store, else -errno (a filesystem without
 * O_TMPFILE: -EOPNOTSUPP) or -EVPROF_ERR_BAD_ELF, nothing stored.
 */
EVPROF_HIDDEN int evprof__debugcache_store(const char *dir, const uint8_t *id,
					   size_t len, int fd);

/*
 * The same for images: the copy of the ELF file of build id id, as it
 * was, and storing the file open at fd when it holds that build id (0
 * also when the entry is there already).
 */
EVPROF_HIDDEN int evprof__debugcache_open_image(const char *dir,
						const uint8_t *id, size_t len);
EVPROF_HIDDEN int evprof__debugcache_store_image(const char *dir,
						 const uint8_t *id, size_t len,
						 int fd);

/*
 * Removes the least recently used debug files, images and saved answers
 * (symcache.h) while dir holds more than EVPROF__DEBUGCACHE_MAX bytes.
 */
EVPROF_HIDDEN void evprof__debugcache_prune(const char *dir);

#endif
