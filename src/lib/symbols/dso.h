/* SPDX-License-Identifier: MIT */
/*
 * ELF images of mappings, the one place that decides which file a mapping
 * is read from and where its debug file is, for the symbolizer and the
 * unwinder alike (libdwfl's find_elf/find_debuginfo split, with our own
 * find_elf policy):
 *
 * - the file: "[vdso]" is this process's own vdso (every 64-bit process on
 *   the running kernel maps the same one); an absolute path is tried as it
 *   is, then, for a live pid, as /proc/PID/root/PATH (another mount
 *   namespace) and /proc/PID/map_files/START-END (the mapped file itself,
 *   even deleted or replaced), then as the image evprof__dso_pin() kept
 *   while the process lived, then, for a mapping that names its build id,
 *   as the image cache's copy of it. A candidate whose inode or GNU build
 *   id differs from the mapping's is not the mapped file and is skipped
 *   (a copy's inode is its own: its build id is checked instead).
 * - its debug file: libdwfl's standard search through the finder's
 *   debuginfo path (.gnu_debuglink names next to the file and under the
 *   path's directories, DIR/.build-id/xx/rest.debug), then the
 *   MiniDebugInfo (.gnu_debugdata) of the file itself. It is looked up
 *   lazily, when symbols or DWARF are first asked for; with a debug cache
 *   (debugcache.h), first there by build id.
 */
#ifndef EVPROF_LIB_DSO_H
#define EVPROF_LIB_DSO_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <elfutils/libdwfl.h>

#include "base/base.h"

/* What a mapping tells of its file; see struct evprof_sym_mapping. */
struct evprof__dso_want {
	const char *path;
	uint64_t start, end;
	const uint8_t *build_id; /* checked when build_id_len > 0 */
	size_t build_id_len;
	uint64_t inode; /* checked when non-zero */
	int pid;	/* > 0: also look through /proc/PID */
	/* The image cache (debugcache.h) to look in by build id, or NULL. */
	const char *cache_dir;
};

/* The file chosen for a mapping, open. */
struct evprof__dso_file {
	int fd;
	Elf *elf;
	/* Where libdwfl looks for .gnu_debuglink files next to the binary. */
	char file_name[PATH_MAX + 64];
	uint8_t build_id[EVPROF__MAX_BUILD_ID];
	size_t build_id_len;
	/*
	 * Identity: "b:" and the build id in hex, else the file's device,
	 * inode, mtime and size; equal keys are one image.
	 */
	char key[2 * EVPROF__MAX_BUILD_ID + 96];
};

/*
 * Whether build ids a (alen bytes) and b (blen) are one: the same length
 * and bytes, never a prefix; an empty one matches nothing.
 */
EVPROF_HIDDEN bool evprof__build_id_equal(const uint8_t *a, size_t alen,
					  const uint8_t *b, size_t blen);

/*
 * The GNU build id of the ELF file at path, copied into id (max bytes).
 * Returns its length, 0 when the file has none or is no ELF file (or its
 * id is longer than max), or -errno when it cannot be opened.
 */
EVPROF_HIDDEN int evprof__dso_path_build_id(const char *path, uint8_t *id,
					    size_t max);

/*
 * Opens the best file for w into *f. Returns 0, or -ENOENT when no
 * candidate is readable and is the mapped ELF file. The caller passes *f
 * to evprof__dso_report() or evprof__dso_new(), or closes it.
 */
EVPROF_HIDDEN int evprof__dso_open(const struct evprof__dso_want *w,
				   struct evprof__dso_file *f);

/*
 * Keeps the file of a code mapping of live process pid whose path the
 * host does not have, or has as another file (another inode: a
 * container's binary or its own libc, in its mount namespace), read as
 * /proc/PID/root/PATH while it can be: once pid has exited, /proc/PID/root
 * and map_files are gone, and a profile built after that (the session
 * builds what is a second old, or at the end) would name none of its
 * frames. The file is copied into the image cache under its GNU build id
 * (debugcache.h; as perf record fills ~/.debug), and the process remembers
 * which build id the path and inode had; evprof__dso_open() falls back on
 * that copy, checked against the build id. A file without a build id, or
 * with no image cache or none writable (a read-only root), is kept open
 * instead, at most EVPROF__DSO_PINS of them, with a warning past that.
 * One file per path and inode (ino 0: any), kept until exit.
 */
#define EVPROF__DSO_PINS 256
EVPROF_HIDDEN void evprof__dso_pin(int pid, const char *path, uint64_t ino);

/*
 * The image cache of evprof__dso_pin(): the debug cache directory of the
 * process's first recorder (dir NULL: none); later calls change nothing.
 */
EVPROF_HIDDEN void evprof__dso_keep_in(const char *dir);
EVPROF_HIDDEN void evprof__dso_file_close(struct evprof__dso_file *f);

/*
 * Where vaddr 0 of f's image lies when its file page pgoff is mapped at
 * start (the load bias libdwfl wants): the PT_LOAD holding that page was
 * mapped there. 0 for ET_EXEC.
 */
EVPROF_HIDDEN uint64_t evprof__dso_bias(const struct evprof__dso_file *f,
					uint64_t start, uint64_t pgoff);

/* A debug file found for build id id, to store in the debug cache. */
struct evprof__dso_pending {
	uint8_t id[EVPROF__MAX_BUILD_ID];
	size_t len;
	char *path;
};

/*
 * The debug-file policy, for dwfl_begin(&finder->cb). debuginfo_path in
 * elfutils' syntax, NULL for ":.debug:/usr/lib/debug"; cache_dir a
 * debug cache (debugcache.h) for the images of evprof__dso_new(), NULL
 * for none. Returns 0 or -ENOMEM; fini stores the debug files found
 * meanwhile in the cache (then, not while a recording polls: inflating,
 * writing and syncing a C library's takes tens of milliseconds or more)
 * and accepts a finder whose init failed.
 */
struct evprof__dso_finder {
	Dwfl_Callbacks cb;
	char *debuginfo_path; /* elfutils wants a char ** */
	char *cache_dir;
	EVPROF_VEC(struct evprof__dso_pending) pending;
};

EVPROF_HIDDEN int evprof__dso_finder_init(struct evprof__dso_finder *fi,
					  const char *debuginfo_path,
					  const char *cache_dir);
EVPROF_HIDDEN void evprof__dso_finder_fini(struct evprof__dso_finder *fi);

/*
 * Reports f into dwfl (between dwfl_report_begin and _end) as module name
 * at bias; f is consumed whatever happens. Returns the module or NULL.
 */
EVPROF_HIDDEN Dwfl_Module *evprof__dso_report(Dwfl *dwfl,
					      struct evprof__dso_file *f,
					      const char *name, uint64_t bias);

/* A PT_LOAD segment: file range [offset, offset + filesz) at vaddr. */
struct evprof__dso_load {
	uint64_t offset, filesz, vaddr;
};

/*
 * An image alone in its own Dwfl at bias 0, so its module addresses are
 * its link-time addresses (SVMA) whatever process mapped it, and it can be
 * shared by every mapping of the file.
 */
struct evprof__dso {
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct evprof__dso_load *loads;
	size_t nr_loads;
	uint64_t base_vaddr; /* first PT_LOAD's p_vaddr */
	uint8_t build_id[EVPROF__MAX_BUILD_ID];
	size_t build_id_len;
};

/*
 * Makes the image of f (consumed), its module named name. Returns it, or
 * NULL with errno ENOMEM or EINVAL (not a loadable ELF image).
 */
EVPROF_HIDDEN struct evprof__dso *evprof__dso_new(struct evprof__dso_finder *fi,
						  struct evprof__dso_file *f,
						  const char *name);
EVPROF_HIDDEN void evprof__dso_free(struct evprof__dso *d);

/*
 * The SVMA at file offset off of d, through the PT_LOAD holding it.
 * Returns false when no segment holds off.
 */
EVPROF_HIDDEN bool evprof__dso_svma(const struct evprof__dso *d, uint64_t off,
				    uint64_t *svma);

/* The elfutils version libdw reports (for evprof --version). */
EVPROF_HIDDEN const char *evprof__dso_elfutils_version(void);

#endif /* EVPROF_LIB_DSO_H */
