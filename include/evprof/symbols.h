/* SPDX-License-Identifier: MIT */
/*
 * Symbolizer: (mapping, address) -> image-relative address, function
 * name, symbol range and, where DWARF exists, inline frames with
 * file:line. User images are read through elfutils libdwfl (.symtab,
 * .dynsym, .gnu_debugdata, .gnu_debuglink, build-id debug directories);
 * the kernel through /proc/kallsyms.
 *
 * Intended use is one pass at the end of a recording over the distinct
 * (mapping, address) pairs. Images are opened once and cached by build id
 * (else by device, inode, mtime and size); mappings are cached by their
 * description, so a lookup opens no file once its mapping was seen; and
 * answers are cached per (image, address), so an address of a library
 * that many processes map is symbolized once.
 *
 * JIT code is named from perf's map files, /tmp/perf-PID.map (lines
 * "START SIZE name", hex), read once per process, as perf does only when
 * the file is owned by us or root (or, when PID still runs, by its user).
 *
 * Relative addresses follow the Firefox Profiler and samply: for an ELF
 * image, the address the image was linked for (SVMA) minus the p_vaddr of
 * its first PT_LOAD segment. That is the SVMA itself for shared libraries
 * and PIE executables (first p_vaddr 0), and SVMA - 0x400000 for a classic
 * x86-64 non-PIE executable.
 *
 * Return addresses: callers pass addr - 1 for every frame but the first of
 * a callchain, as perf and samply do, so the call instruction is looked up.
 *
 * A symbolizer is not thread-safe; use one per thread.
 */
#ifndef EVPROF_SYMBOLS_H
#define EVPROF_SYMBOLS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_symbolizer;

struct evprof_symbolizer_opts {
	size_t sz; /* sizeof(struct evprof_symbolizer_opts) */
	/*
	 * Where separate debug files are searched, in elfutils'
	 * debuginfo_path syntax: colon-separated directories; a relative
	 * one (or "") is taken relative to the binary's own directory for
	 * .gnu_debuglink names, an absolute one is searched both for
	 * debuglink names (DIR/<binary's dir>/NAME) and as
	 * DIR/.build-id/xx/rest.debug. NULL: ":.debug:/usr/lib/debug".
	 */
	const char *debuginfo_path;
	/* NULL: /proc/kallsyms. Tests pass a crafted file. */
	const char *kallsyms_path;
	/* Keep mangled names as they are in the symbol tables. */
	bool no_demangle;
	/* Skip DWARF: symbol-table names only, no inline frames or lines. */
	bool no_dwarf;
	/*
	 * A directory where separate debug files found with compressed DWARF
	 * sections (as distributions ship them) are kept inflated, by build
	 * id, made if missing; later symbolizers read the copy instead of
	 * inflating the sections again. At most 2 GiB, least recently used
	 * first out. NULL: none. Needs a filesystem with O_TMPFILE.
	 */
	const char *debug_cache_dir;
};

/* Describes the mapping an address was sampled in. */
struct evprof_sym_mapping {
	/*
	 * Path as in /proc/PID/maps or PERF_RECORD_MMAP2 (without any
	 * " (deleted)" suffix). "[vdso]" symbolizes from this process's own
	 * vdso, which is the vdso of every 64-bit process on the running
	 * kernel. Other names that are not absolute paths ("", "[heap]",
	 * "[anon:...]", ...) are never opened. Addresses in those and in
	 * "//anon", "/anon_hugepage", "/dev/zero" and "/memfd:..." mappings
	 * are first looked up in PID's JIT map (see evprof_symbolizer__jit())
	 * when pid > 0.
	 */
	const char *path;
	uint64_t start; /* first address of the mapping */
	uint64_t end;	/* one past its last address */
	uint64_t pgoff; /* file offset mapped at start */
	/*
	 * Optional identity checks: a file whose GNU build id differs from
	 * build_id (when build_id_len > 0), or whose inode differs from inode
	 * (when non-zero), is not the mapped file and is not used.
	 */
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t inode;
	/*
	 * When > 0, files are also looked for as /proc/PID/root/PATH (another
	 * mount namespace) and /proc/PID/map_files/START-END (the mapped file
	 * itself, even if deleted or replaced; only while PID lives and with
	 * CAP_SYS_ADMIN).
	 */
	int pid;
};

/* One function in an inline chain. */
struct evprof_sym_frame {
	const char *name;   /* demangled unless no_demangle; NULL: unknown */
	const char *file;   /* source file path from DWARF; NULL: unknown */
	uint32_t line;	    /* 0: unknown */
	uint32_t column;    /* 0: unknown */
	uint32_t decl_line; /* the function's first line; 0: unknown */
};

/*
 * The answer to one lookup. Every pointer is owned by the symbolizer and
 * lives until evprof_symbolizer__free().
 */
struct evprof_sym_result {
	/*
	 * Mapping path, "[kernel.kallsyms]", "[MOD]" or the JIT map file
	 * (then rel_addr and sym_start are absolute addresses).
	 */
	const char *lib_path;
	const char *lib_name; /* last component of lib_path */
	/* GNU build id of the image that was read (else the mapping's). */
	const uint8_t *build_id;
	size_t build_id_len;
	/*
	 * True when an image was read. When false, rel_addr is the file
	 * offset (addr - start + pgoff) and name is NULL: show it as
	 * lib_name+0xrel_addr.
	 */
	bool image_found;
	uint64_t rel_addr; /* see the top of this file */
	/*
	 * With image_found: the address the image was linked for (SVMA), the
	 * one addr2line -e and objdump take; rel_addr plus the first PT_LOAD
	 * p_vaddr.
	 */
	uint64_t elf_addr;
	/* Symbol containing the address; name NULL when none does. */
	const char *name;   /* demangled unless no_demangle */
	uint64_t sym_start; /* relative address of the symbol's first byte */
	uint64_t sym_size;  /* 0: unknown (kallsyms: distance to the next) */
	/*
	 * Inline chain, innermost first (as addr2line -i prints it):
	 * frames[0] is the function whose code is at the address, with the
	 * line of the address; each next one is the function it was inlined
	 * into, with the line of the call site; frames[nr_frames - 1] is the
	 * real (out-of-line) function. Without DWARF there is one frame, named
	 * like the symbol, with no file. nr_frames is 0 when name is NULL and
	 * no DWARF function covers the address.
	 */
	const struct evprof_sym_frame *frames;
	uint32_t nr_frames;
};

/*
 * Creates a symbolizer; opts may be NULL. Nothing is read until the first
 * lookup. Returns NULL with errno set (ENOMEM, EINVAL for a bad opts->sz).
 */
EVPROF_API struct evprof_symbolizer *
evprof_symbolizer__new(const struct evprof_symbolizer_opts *opts);

/* Frees s, its cached images and every result it returned. Accepts NULL. */
EVPROF_API void evprof_symbolizer__free(struct evprof_symbolizer *s);

/*
 * Symbolizes a user-space address inside map. Fills *res (see above) and
 * returns 0, also when the image cannot be read or no symbol covers addr
 * (res->name == NULL then). Returns -EINVAL when addr is outside map or an
 * argument is NULL, -ENOMEM.
 */
EVPROF_API int evprof_symbolizer__user(struct evprof_symbolizer *s,
				       const struct evprof_sym_mapping *map,
				       uint64_t addr,
				       struct evprof_sym_result *res);

/*
 * Whether addr inside map lies where the CFI (.eh_frame, else .debug_frame)
 * marks the return address undefined: a thread's outermost frame (_start,
 * the child side of clone3, ...), where a complete stack ends. Returns 1
 * there, 0 where the CFI gives a caller, -ENOENT where no CFI covers addr
 * (or the image cannot be read), -EINVAL (as evprof_symbolizer__user()),
 * -ENOMEM.
 */
EVPROF_API int
evprof_symbolizer__user_outermost(struct evprof_symbolizer *s,
				  const struct evprof_sym_mapping *map,
				  uint64_t addr);

/*
 * Symbolizes an address of process pid that no file mapping holds (JIT
 * code) from /tmp/perf-PID.map, read on the first call for pid and only
 * when owned by our effective user, root, or pid's user while it runs.
 * Fills *res and returns 0; when no entry covers addr, res->lib_path and
 * res->name are NULL and res->rel_addr is addr. Returns -EINVAL, -ENOMEM.
 */
EVPROF_API int evprof_symbolizer__jit(struct evprof_symbolizer *s, int pid,
				      uint64_t addr,
				      struct evprof_sym_result *res);

/*
 * Symbolizes a kernel address from kallsyms (text symbols only; read once,
 * on the first call). Fills *res and returns 0; res->name is NULL when no
 * symbol precedes addr or when kallsyms hides addresses (kptr_restrict,
 * reported once as a warning). Kernel addresses are relative to the
 * "_text" symbol; module addresses to the module's lowest text symbol.
 * The kernel's build id comes from /sys/kernel/notes. Returns -EINVAL,
 * -ENOMEM.
 */
EVPROF_API int evprof_symbolizer__kernel(struct evprof_symbolizer *s,
					 uint64_t addr,
					 struct evprof_sym_result *res);

/* What a symbolizer did so far (to check its caches). */
struct evprof_symbolizer_stats {
	size_t sz;	   /* sizeof(struct evprof_symbolizer_stats) */
	uint64_t lookups;  /* calls to __user, __jit and __kernel */
	uint64_t cached;   /* user lookups answered from the address cache */
	uint64_t images;   /* ELF images opened and indexed (vdso included) */
	uint64_t jit_maps; /* JIT map files read */
	/*
	 * Mapping entries held: one per (path, build id, inode) whose image
	 * was found (with a build id or inode), else one per mapping of each
	 * process looked up.
	 */
	uint64_t mappings;
};

/*
 * Copies the counters into *st (up to st->sz bytes, set by the caller) and
 * sets st->sz to the bytes filled. Returns 0, -EINVAL for a NULL argument
 * or an st->sz smaller than sizeof(size_t).
 */
EVPROF_API int evprof_symbolizer__stats(const struct evprof_symbolizer *s,
					struct evprof_symbolizer_stats *st);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_SYMBOLS_H */
