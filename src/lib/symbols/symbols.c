// SPDX-License-Identifier: MIT
/*
 * The symbolizer: caches and the evprof_symbolizer__* API over the layers
 * below it. dso finds and opens the ELF image of a mapping, symtab sorts
 * its symbols and owns every name handed out, srcline reads inline chains
 * from DWARF, jitmap reads perf's JIT maps and kallsyms the kernel's
 * symbols.
 *
 * Images live alone in their own Dwfl at their link-time addresses (see
 * dso.h), so one image serves every process and mapping that maps it: a
 * process address becomes a file offset through its mapping, and an SVMA
 * through the PT_LOAD holding that offset.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>

#include <evprof/symbols.h>

#include "cfi.h"
#include "dso.h"
#include "jitmap.h"
#include "kallsyms.h"
#include "ksymcache.h"
#include "srcline.h"
#include "symcache.h"
#include "symtab.h"

struct image {
	struct image *next;
	struct evprof__dso *dso;
	struct evprof__elfsyms *syms;	/* made on first use */
	struct evprof__srcline *src;	/* made on first use */
	struct evprof__fdes *fdes;	/* made when a symbol is missing */
	uint64_t fdes_bias;		/* ELF address + it: the module's */
	struct evprof__symcache *saved; /* opened on first use, or NULL */
	bool saved_tried;
	bool dwarf_known, dwarf_whole; /* see dwarf_whole() */
};

/* A mapping's description: the key of what it resolved to. */
struct mapkey {
	const char *path;
	const uint8_t *build_id;
	size_t build_id_len;
	uint64_t start, end, pgoff, inode;
	int pid;
};

/* What a mapping resolved to; img NULL when no file could be read. */
struct mapent {
	struct mapkey key; /* strings and bytes in the store */
	struct image *img;
	const char *lib_path, *lib_name;
};

/*
 * Address cache entry, its own key: what lookup_image() found for (img,
 * fileoff); every pointer lives as long as the symbolizer.
 */
struct aent {
	const struct image *img;
	bool found;
	struct evprof__symcache_ent ans; /* ans.fileoff: the key's offset */
};

struct evprof_symbolizer {
	struct evprof_symbolizer_opts opts;
	struct evprof__dso_finder finder;
	char *kallsyms_path;
	struct evprof__names *names;	 /* every string and cached answer */
	struct evprof_hashmap *mappings; /* struct mapkey * -> mapent */
	struct evprof_hashmap *images;	 /* dso identity key -> image */
	struct image *image_list;
	struct evprof_hashmap *answers; /* struct aent * (img, fileoff) -> it */
	struct evprof_hashmap *jits; /* pid -> struct evprof__jitmap or NULL */
	struct evprof_symbolizer_stats st;
	struct evprof__kallsyms *ksyms;
	bool ksyms_tried;
	bool ksyms_cached; /* from the boot's copy: see ksymcache.h */
	/* the copy's, after a reload: its names were handed out */
	struct evprof__kallsyms *ksyms_copy;
	uint8_t kernel_id[EVPROF__MAX_BUILD_ID];
	size_t kernel_id_len;
	struct evprof_sym_frame frames[EVPROF__MAX_INLINE]; /* one lookup's */
};

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

/* The image of map's file, opened once per identity; NULL when none. */
static struct image *resolve_image(struct evprof_symbolizer *s,
				   const struct evprof_sym_mapping *map)
{
	const struct evprof__dso_want want = {
	    .path = map->path,
	    .start = map->start,
	    .end = map->end,
	    .build_id = map->build_id,
	    .build_id_len = map->build_id_len,
	    .inode = map->inode,
	    .pid = map->pid,
	    .cache_dir = s->finder.cache_dir,
	};
	struct evprof__dso_file f;
	struct evprof__dso *dso;
	struct image *img;
	const char *key;
	long found;

	if (evprof__dso_open(&want, &f))
		return NULL;
	if (evprof__hashmap_find(s->images, (long)f.key, &found)) {
		evprof__dso_file_close(&f);
		return (struct image *)found;
	}
	img = evprof__names_alloc(s->names, sizeof(*img));
	key = evprof__names_intern(s->names, f.key); /* before f is consumed */
	if (!img || !key) {
		evprof__dso_file_close(&f);
		return NULL;
	}
	dso = evprof__dso_new(&s->finder, &f, basename_of(f.file_name));
	if (!dso)
		return NULL;
	if (evprof__hashmap_add(s->images, (long)key, (long)img)) {
		evprof__dso_free(dso);
		return NULL;
	}
	img->dso = dso;
	s->st.images++;
	img->next = s->image_list;
	s->image_list = img;
	return img;
}

static size_t mapkey_hash(long key, void *ctx)
{
	const struct mapkey *k = (const struct mapkey *)key;
	uint64_t h = EVPROF_HASH_INIT;

	(void)ctx;
	h = evprof__hash_mem(h, &k->start, sizeof(k->start));
	h = evprof__hash_mem(h, &k->end, sizeof(k->end));
	h = evprof__hash_mem(h, &k->pgoff, sizeof(k->pgoff));
	h = evprof__hash_mem(h, &k->inode, sizeof(k->inode));
	h = evprof__hash_mem(h, &k->pid, sizeof(k->pid));
	h = evprof__hash_mem(h, k->build_id, k->build_id_len);
	return (size_t)evprof__hash_mem(h, k->path, strlen(k->path));
}

static bool mapkey_equal(long a, long b, void *ctx)
{
	const struct mapkey *x = (const struct mapkey *)a;
	const struct mapkey *y = (const struct mapkey *)b;

	(void)ctx;
	return x->start == y->start && x->end == y->end &&
	       x->pgoff == y->pgoff && x->inode == y->inode &&
	       x->pid == y->pid && x->build_id_len == y->build_id_len &&
	       (!x->build_id_len ||
		!memcmp(x->build_id, y->build_id, x->build_id_len)) &&
	       !strcmp(x->path, y->path);
}

/*
 * What a mapping resolved to, looked up once per mapping of each process;
 * once an image is found for a mapping known by its build id or inode, the
 * mappings of that (path, build id, inode) in every process share one
 * entry: addresses go through the caller's own start and pgoff, never the
 * entry's. A system-wide recording then holds an entry per binary, not one
 * per short-lived process that a sample landed in.
 */
static struct mapent *lookup_mapping(struct evprof_symbolizer *s,
				     const struct evprof_sym_mapping *map)
{
	struct mapkey key = {
	    .path = map->path,
	    .build_id = map->build_id,
	    .build_id_len = map->build_id_len,
	    .start = map->start,
	    .end = map->end,
	    .pgoff = map->pgoff,
	    .inode = map->inode,
	    .pid = map->pid,
	};
	struct mapkey shared = {
	    .path = map->path,
	    .build_id = map->build_id,
	    .build_id_len = map->build_id_len,
	    .inode = map->inode,
	};
	bool share = map->build_id_len || map->inode;
	struct mapent *me;
	uint8_t *bid = NULL;
	long found;

	if (share && evprof__hashmap_find(s->mappings, (long)&shared, &found))
		return (struct mapent *)found;
	if (evprof__hashmap_find(s->mappings, (long)&key, &found))
		return (struct mapent *)found;
	me = evprof__names_alloc(s->names, sizeof(*me));
	if (map->build_id_len)
		bid = evprof__names_alloc(s->names, map->build_id_len);
	if (!me || (map->build_id_len && !bid))
		return NULL;
	me->key = key;
	me->key.build_id = map->build_id_len
			       ? memcpy(bid, map->build_id, map->build_id_len)
			       : NULL;
	me->lib_path = evprof__names_intern(s->names, map->path);
	if (!me->lib_path)
		return NULL;
	me->key.path = me->lib_path;
	me->lib_name = basename_of(me->lib_path);
	me->img = resolve_image(s, map);
	if (!me->img) {
		/* Per process: another may read the file where this did not. */
		pr_debug("symbols: no readable image for %s\n", map->path);
	} else if (share) {
		shared.path = me->key.path;
		shared.build_id = me->key.build_id;
		me->key = shared;
	}
	if (evprof__hashmap_add(s->mappings, (long)&me->key, (long)me))
		return NULL;
	s->st.mappings++;
	return me;
}

/* Copies the scratch frames into the store; returns 0 or -ENOMEM. */
static int keep_frames(struct evprof_symbolizer *s, uint32_t n,
		       const struct evprof_sym_frame **frames,
		       uint32_t *nr_frames)
{
	struct evprof_sym_frame *f;

	if (!n)
		return 0;
	f = evprof__names_alloc(s->names, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memcpy(f, s->frames, n * sizeof(*f));
	*frames = f;
	*nr_frames = n;
	return 0;
}

/* Looks fileoff up in img; fills *a (whose img and fileoff are set). */
static int lookup_image(struct evprof_symbolizer *s, struct image *img,
			uint64_t fileoff, struct aent *a)
{
	const struct evprof__dso *d = img->dso;
	uint64_t svma, start = 0, size = 0;
	const char *name;
	uint32_t n = 0;

	if (!evprof__dso_svma(d, fileoff, &svma))
		return 0;
	a->found = true;
	a->ans.rel_addr = svma - d->base_vaddr;
	if (!img->syms) {
		img->syms = evprof__elfsyms_new(d->mod);
		if (!img->syms)
			return -ENOMEM;
	}
	name = evprof__elfsyms_find(img->syms, svma, &start, &size);
	if (!name) {
		/* Sizeless symbols and the like: libdwfl's own rules. */
		GElf_Off off = 0;
		GElf_Sym sym;

		name = dwfl_module_addrinfo(d->mod, svma, &off, &sym, NULL,
					    NULL, NULL);
		start = svma - off;
		size = name ? sym.st_size : 0;
	}
	if (!name && !img->fdes) {
		Dwarf_Addr bias = 0;

		img->fdes = evprof__fdes_new(dwfl_module_getelf(d->mod, &bias));
		if (!img->fdes)
			return -ENOMEM;
		img->fdes_bias = bias;
	}
	if (!name && evprof__fdes_find(img->fdes, svma - img->fdes_bias, &start,
				       &size)) {
		/*
		 * Named by the function's start as addr2line -e and objdump
		 * --start-address take it.
		 */
		const char *mod = dwfl_module_info(d->mod, NULL, NULL, NULL,
						   NULL, NULL, NULL, NULL);
		char buf[PATH_MAX];

		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64,
			 basename_of(mod ? mod : "?"), start);
		start += img->fdes_bias;
		a->ans.name = evprof__names_intern(s->names, buf);
		if (!a->ans.name)
			return -ENOMEM;
		a->ans.sym_start = start - d->base_vaddr;
		a->ans.sym_size = size;
	} else if (name) {
		a->ans.name = evprof__names_demangle(s->names, name);
		if (!a->ans.name)
			return -ENOMEM;
		a->ans.sym_start = start - d->base_vaddr;
		a->ans.sym_size = size;
	}
	if (!s->opts.no_dwarf) {
		if (!img->src) {
			img->src = evprof__srcline_new(s->names, d->mod);
			if (!img->src)
				return -ENOMEM;
		}
		n = evprof__srcline_frames(img->src, svma, s->frames);
	}
	if (n && !s->frames[n - 1].name)
		s->frames[n - 1].name = a->ans.name;
	if (!n && a->ans.name) {
		memset(&s->frames[0], 0, sizeof(s->frames[0]));
		s->frames[0].name = a->ans.name;
		n = 1;
	}
	return keep_frames(s, n, &a->ans.frames, &a->ans.nr_frames);
}

static size_t aent_hash(long key, void *ctx)
{
	const struct aent *a = (const struct aent *)key;
	uint64_t h = EVPROF_HASH_INIT;

	(void)ctx;
	h = evprof__hash_mem(h, &a->img, sizeof(a->img));
	return (size_t)evprof__hash_mem(h, &a->ans.fileoff,
					sizeof(a->ans.fileoff));
}

static bool aent_equal(long x, long y, void *ctx)
{
	const struct aent *a = (const struct aent *)x;
	const struct aent *b = (const struct aent *)y;

	(void)ctx;
	return a->img == b->img && a->ans.fileoff == b->ans.fileoff;
}

/*
 * Whether img's answers come from whole DWARF: found, and with the dwz
 * file it names (.gnu_debugaltlink holds names and types it shares with
 * other binaries; without it, answers lack them). Asked after a lookup,
 * which loaded the DWARF already.
 */
static bool dwarf_whole(struct image *img)
{
	const void *id;
	const char *alt;
	Dwarf_Addr bias;
	Dwarf *dw;

	if (!img->dwarf_known) {
		img->dwarf_known = true;
		dw = dwfl_module_getdwarf(img->dso->mod, &bias);
		img->dwarf_whole =
		    dw && (dwelf_dwarf_gnu_debugaltlink(dw, &alt, &id) <= 0 ||
			   dwarf_getalt(dw));
	}
	return img->dwarf_whole;
}

/*
 * lookup_image() through the answers an earlier run saved for img's build
 * id: answers from whole DWARF only, saved when the symbolizer is freed.
 * Without DWARF lookups are quick, and no inline chain is lost once a
 * debug file is installed.
 */
static int lookup_saved(struct evprof_symbolizer *s, struct image *img,
			uint64_t fileoff, struct aent *a)
{
	const struct evprof__dso *d = img->dso;
	int ret;

	if (!img->saved_tried) {
		img->saved_tried = true;
		if (s->finder.cache_dir && !s->opts.no_dwarf && d->build_id_len)
			img->saved = evprof__symcache_open(
			    s->finder.cache_dir, d->build_id, d->build_id_len,
			    s->opts.no_demangle);
	}
	ret = img->saved ? evprof__symcache_find(img->saved, fileoff, s->names,
						 &a->ans)
			 : 0;
	if (ret < 0)
		return ret;
	if (ret) {
		a->found = true;
		return 0;
	}
	ret = lookup_image(s, img, fileoff, a);
	if (ret || !a->found || !img->saved || !dwarf_whole(img))
		return ret;
	return evprof__symcache_add(img->saved, &a->ans);
}

/* lookup_image() once per (img, fileoff); the answer goes into *res. */
static int lookup_cached(struct evprof_symbolizer *s, struct image *img,
			 uint64_t fileoff, struct evprof_sym_result *res)
{
	struct aent key = {.img = img, .ans.fileoff = fileoff}, *a;
	long found;
	int err;

	if (evprof__hashmap_find(s->answers, (long)&key, &found)) {
		a = (struct aent *)found;
		s->st.cached++;
	} else {
		a = evprof__names_alloc(s->names, sizeof(*a));
		if (!a)
			return -ENOMEM;
		*a = key;
		err = lookup_saved(s, img, fileoff, a);
		if (err)
			return err;
		err = evprof__hashmap_add(s->answers, (long)a, (long)a);
		if (err)
			return err;
	}
	if (!a->found)
		return 0;
	res->image_found = true;
	res->rel_addr = a->ans.rel_addr;
	res->elf_addr = a->ans.rel_addr + img->dso->base_vaddr;
	if (img->dso->build_id_len) {
		res->build_id = img->dso->build_id;
		res->build_id_len = img->dso->build_id_len;
	}
	res->name = a->ans.name;
	res->sym_start = a->ans.sym_start;
	res->sym_size = a->ans.sym_size;
	res->frames = a->ans.frames;
	res->nr_frames = a->ans.nr_frames;
	return 0;
}

/* Fills res when pid's JIT map names addr; returns 0 or -ENOMEM. */
static int jit_lookup(struct evprof_symbolizer *s, int pid, uint64_t addr,
		      struct evprof_sym_result *res)
{
	const struct evprof__jit_sym *j;
	struct evprof__jitmap *jm;
	long found;

	if (evprof__hashmap_find(s->jits, pid, &found)) {
		jm = (struct evprof__jitmap *)found;
	} else {
		bool read;
		int err;

		jm = evprof__jitmap_load(s->names, pid, &read);
		if (read)
			s->st.jit_maps++;
		err = evprof__hashmap_add(s->jits, pid, (long)jm);
		if (err)
			return err;
	}
	j = jm ? evprof__jitmap_find(jm, addr) : NULL;
	if (!j)
		return 0;
	res->lib_path = jm->path;
	res->lib_name = jm->name;
	res->build_id = NULL;
	res->build_id_len = 0;
	res->image_found = true;
	res->rel_addr = addr;
	res->name = evprof__names_demangle(s->names, j->name);
	if (!res->name)
		return -ENOMEM;
	res->sym_start = j->start;
	res->sym_size = j->size;
	memset(&s->frames[0], 0, sizeof(s->frames[0]));
	s->frames[0].name = res->name;
	return keep_frames(s, 1, &res->frames, &res->nr_frames);
}

int evprof_symbolizer__jit(struct evprof_symbolizer *s, int pid, uint64_t addr,
			   struct evprof_sym_result *res)
{
	if (!s || !res || pid <= 0)
		return -EINVAL;
	s->st.lookups++;
	memset(res, 0, sizeof(*res));
	res->rel_addr = addr;
	return jit_lookup(s, pid, addr, res);
}

int evprof_symbolizer__user(struct evprof_symbolizer *s,
			    const struct evprof_sym_mapping *map, uint64_t addr,
			    struct evprof_sym_result *res)
{
	struct mapent *me;
	uint64_t fileoff;

	if (!s || !map || !map->path || !res)
		return -EINVAL;
	if (addr < map->start || addr >= map->end)
		return -EINVAL;
	s->st.lookups++;
	memset(res, 0, sizeof(*res));
	if (map->pid > 0 && evprof__jit_candidate(map->path)) {
		int err = jit_lookup(s, map->pid, addr, res);

		if (err || res->name)
			return err;
	}
	fileoff = addr - map->start + map->pgoff;
	res->rel_addr = fileoff;
	res->build_id = map->build_id_len ? map->build_id : NULL;
	res->build_id_len = map->build_id_len;
	me = lookup_mapping(s, map);
	if (!me)
		return -ENOMEM;
	res->lib_path = me->lib_path;
	res->lib_name = me->lib_name;
	if (!me->img)
		return 0;
	return lookup_cached(s, me->img, fileoff, res);
}

/* 1: addr (module address) has the return address undefined in cfi. */
static int outermost_in(Dwarf_CFI *cfi, Dwarf_Addr bias, uint64_t addr)
{
	Dwarf_Op mem[3], *ops;
	Dwarf_Frame *f;
	size_t nops;
	int ra, res = -ENOENT;

	if (!cfi || dwarf_cfi_addrframe(cfi, addr - bias, &f))
		return -ENOENT;
	ra = dwarf_frame_info(f, NULL, NULL, NULL);
	if (ra >= 0 && !dwarf_frame_register(f, ra, mem, &ops, &nops))
		/* "undefined": no operation, ops pointing at ours */
		res = !nops && ops == mem;
	free(f);
	return res;
}

/*
 * Within the code at the image's entry point: a process's first frame,
 * whether or not CFI covers it (ld.so's _start and _dl_start_user have
 * none; they call _dl_start and _dl_init within 64 bytes of it).
 */
static bool at_entry(Dwfl_Module *mod, uint64_t svma)
{
	Dwarf_Addr bias = 0;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	GElf_Ehdr eh;

	return elf && gelf_getehdr(elf, &eh) && eh.e_entry &&
	       svma - bias >= eh.e_entry && svma - bias < eh.e_entry + 64;
}

int evprof_symbolizer__user_outermost(struct evprof_symbolizer *s,
				      const struct evprof_sym_mapping *map,
				      uint64_t addr)
{
	struct mapent *me;
	uint64_t svma;
	Dwarf_Addr bias = 0;
	int res;

	if (!s || !map || !map->path || addr < map->start || addr >= map->end)
		return -EINVAL;
	me = lookup_mapping(s, map);
	if (!me)
		return -ENOMEM;
	if (!me->img ||
	    !evprof__dso_svma(me->img->dso, addr - map->start + map->pgoff,
			      &svma))
		return -ENOENT;
	res = outermost_in(dwfl_module_eh_cfi(me->img->dso->mod, &bias), bias,
			   svma);
	if (res == -ENOENT)
		res = outermost_in(
		    dwfl_module_dwarf_cfi(me->img->dso->mod, &bias), bias,
		    svma);
	if (res == -ENOENT && at_entry(me->img->dso->mod, svma))
		res = 1;
	return res;
}

/* ---- kernel ---------------------------------------------------------------
 */

/*
 * Loads the kernel's symbols: the running kernel's through the boot's copy
 * in the debug cache, a given file's as they are.
 */
static void load_ksyms(struct evprof_symbolizer *s)
{
	bool hidden;

	if (s->finder.cache_dir && !strcmp(s->kallsyms_path, "/proc/kallsyms"))
		s->ksyms = evprof__ksymcache_load(s->finder.cache_dir, false,
						  &hidden, &s->ksyms_cached);
	else if (s->finder.cache_dir)
		s->ksyms = evprof__ksymcache_file(s->finder.cache_dir,
						  s->kallsyms_path, &hidden);
	else
		s->ksyms = evprof__kallsyms_load(s->kallsyms_path, &hidden);
	if (!s->ksyms)
		pr_warn("symbols: %s: %s; kernel frames stay unknown\n",
			s->kallsyms_path, strerror(errno));
	else if (hidden)
		pr_warn("symbols: %s hides addresses (kernel.kptr_restrict); "
			"kernel frames stay unknown\n",
			s->kallsyms_path);
}

/*
 * Past what the copy is sure of: /proc/kallsyms as it is now, once. The
 * copy stays (its names were handed out), and serves on when the kernel's
 * cannot be read now.
 */
static void reload_ksyms(struct evprof_symbolizer *s)
{
	bool hidden, cached;
	struct evprof__kallsyms *ks =
	    evprof__ksymcache_load(s->finder.cache_dir, true, &hidden, &cached);

	s->ksyms_cached = false;
	if (!ks || hidden) {
		evprof__kallsyms_free(ks);
		return;
	}
	s->ksyms_copy = s->ksyms;
	s->ksyms = ks;
}

static void load_kernel(struct evprof_symbolizer *s)
{
	uint8_t notes[4096];
	int n;

	s->ksyms_tried = true;
	load_ksyms(s);
	n = evprof__read_file("/sys/kernel/notes", (char *)notes,
			      sizeof(notes));
	if (n > 0) {
		n = evprof__notes_build_id(notes, (size_t)n, s->kernel_id,
					   sizeof(s->kernel_id));
		if (n > 0)
			s->kernel_id_len = (size_t)n;
	}
}

int evprof_symbolizer__kernel(struct evprof_symbolizer *s, uint64_t addr,
			      struct evprof_sym_result *res)
{
	const struct evprof__ksym *k = NULL;
	struct evprof__ksym ks;
	char lib[80];

	if (!s || !res)
		return -EINVAL;
	s->st.lookups++;
	memset(res, 0, sizeof(*res));
	if (!s->ksyms_tried)
		load_kernel(s);
	if (s->ksyms) {
		int n = evprof__kallsyms_find(s->ksyms, addr, &ks);

		/* Past the text the copy is sure of: the kernel as it is now. */
		if (n >= 0 && s->ksyms_cached && !(n && ks.inside)) {
			reload_ksyms(s);
			n = evprof__kallsyms_find(s->ksyms, addr, &ks);
		}
		if (n < 0)
			return n;
		if (n)
			k = &ks;
	}
	if (!k) {
		res->lib_path = "[kernel.kallsyms]";
		res->lib_name = res->lib_path;
		res->rel_addr = addr;
		return 0;
	}
	res->image_found = true;
	if (k->module) {
		snprintf(lib, sizeof(lib), "[%s]", k->module);
		res->lib_path = evprof__names_intern(s->names, lib);
		if (!res->lib_path)
			return -ENOMEM;
	} else {
		res->lib_path = "[kernel.kallsyms]";
		res->build_id = s->kernel_id_len ? s->kernel_id : NULL;
		res->build_id_len = s->kernel_id_len;
	}
	res->lib_name = res->lib_path;
	res->rel_addr = addr - k->base;
	res->name = k->name;
	res->sym_start = k->addr - k->base;
	res->sym_size = k->size;
	memset(&s->frames[0], 0, sizeof(s->frames[0]));
	s->frames[0].name = k->name;
	return keep_frames(s, 1, &res->frames, &res->nr_frames);
}

/* ---- lifecycle ----------------------------------------------------------- */

struct evprof_symbolizer *
evprof_symbolizer__new(const struct evprof_symbolizer_opts *opts)
{
	struct evprof_symbolizer *s;
	const char *dip = NULL, *ksp = NULL, *dcd;

	if (opts && opts->sz > sizeof(*opts)) {
		errno = EINVAL;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	if (opts)
		memcpy(&s->opts, opts, opts->sz);
	s->opts.sz = sizeof(s->opts);
	if (opts && opts->sz >= offsetof(struct evprof_symbolizer_opts,
					 debuginfo_path) +
				    sizeof(char *))
		dip = opts->debuginfo_path;
	if (opts &&
	    opts->sz >= offsetof(struct evprof_symbolizer_opts, kallsyms_path) +
			    sizeof(char *))
		ksp = opts->kallsyms_path;
	dcd = EVPROF_OPTS_GET(opts, debug_cache_dir, NULL);
	s->opts.debuginfo_path = NULL;
	s->opts.kallsyms_path = NULL;
	s->opts.debug_cache_dir = NULL;
	s->kallsyms_path = strdup(ksp ? ksp : "/proc/kallsyms");
	s->names = evprof__names_new(s->opts.no_demangle);
	s->mappings = evprof__hashmap_new(mapkey_hash, mapkey_equal, NULL);
	s->images = evprof__hashmap_new(evprof__hashmap_str_hash,
					evprof__hashmap_str_equal, NULL);
	s->answers = evprof__hashmap_new(aent_hash, aent_equal, NULL);
	s->jits = evprof__hashmap_new(evprof__hashmap_u64_hash,
				      evprof__hashmap_u64_equal, NULL);
	if (evprof__dso_finder_init(&s->finder, dip, dcd) ||
	    !s->kallsyms_path || !s->names || !s->mappings || !s->images ||
	    !s->answers || !s->jits) {
		evprof_symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	return s;
}

int evprof_symbolizer__stats(const struct evprof_symbolizer *s,
			     struct evprof_symbolizer_stats *st)
{
	if (!s)
		return -EINVAL;
	return EVPROF_STATS_COPY(st, &s->st);
}

void evprof_symbolizer__free(struct evprof_symbolizer *s)
{
	struct image *img;

	if (!s)
		return;
	for (img = s->image_list; img; img = img->next) {
		if (img->saved)
			evprof__symcache_save(img->saved);
		evprof__symcache_free(img->saved);
		evprof__srcline_free(img->src);
		evprof__elfsyms_free(img->syms);
		evprof__fdes_free(img->fdes);
		evprof__dso_free(img->dso);
	}
	evprof__kallsyms_free(s->ksyms);
	evprof__kallsyms_free(s->ksyms_copy);
	evprof__hashmap_free(s->mappings);
	evprof__hashmap_free(s->images);
	evprof__hashmap_free(s->answers);
	evprof__hashmap_free(s->jits);
	evprof__names_free(s->names);
	evprof__dso_finder_fini(&s->finder);
	free(s->kallsyms_path);
	free(s);
}
