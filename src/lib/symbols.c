// SPDX-License-Identifier: MIT
/*
 * User-space symbolization through elfutils libdwfl, and the symbolizer
 * object that also fronts kallsyms.c. The only file that includes
 * libelf/libdw.
 *
 * Each image gets its own Dwfl holding one module reported at bias 0, so
 * module addresses are the image's link-time addresses (SVMA) whatever
 * process mapped it; this file maps a process address to an SVMA through
 * the PT_LOAD segment that holds its file offset. Images are therefore
 * shared by every process (and every mapping) that maps them.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <libiberty/demangle.h>
#undef ARRAY_SIZE /* libiberty.h has its own; util.h's follows */

#include <evprof/proc.h>
#include <evprof/symbols.h>

#include "symbols_internal.h"

#define MAX_BUILD_ID 64
#define MAX_INLINE   64
/* Longest name demangled: libiberty's stack use is ~100 bytes per char. */
#define MAX_MANGLED   8192
#define MAX_DEMANGLED (1u << 20)
#define MAX_JIT_SYMS  (1u << 24)

/* ---- arena and string map ------------------------------------------------ */

struct arena_blk {
	struct arena_blk *next;
	size_t used, cap;
	max_align_t data[];
};

struct smap_ent {
	const char *key; /* arena-owned; NULL: empty slot */
	void *val;
	uint64_t hash;
};

struct smap {
	struct smap_ent *ents;
	size_t cap, nr;
};

/* A PT_LOAD segment: file range [offset, offset + filesz) at vaddr. */
struct load {
	uint64_t offset, filesz, vaddr;
};

/* A sized symbol of an image; name owned by libdwfl. lo first (count_le). */
struct symrec {
	uint64_t lo, size;
	const char *name;
	int rank; /* binding: local < global < weak, as libdwfl prefers */
	int ndx;  /* symbol table index */
};

struct image {
	struct image *next;
	struct symrec *syms; /* sorted by lo, then rank; built on first use */
	size_t nr_syms;
	bool syms_built;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	struct load *loads;
	size_t nr_loads;
	uint64_t base_vaddr; /* first PT_LOAD's p_vaddr */
	const uint8_t *build_id;
	size_t build_id_len;
};

/* What a mapping resolved to; img NULL when no file could be read. */
struct mapent {
	struct image *img;
	const char *lib_path, *lib_name;
};

/*
 * Address cache entry: what lookup_image() found for (img, fileoff); every
 * pointer is arena-owned. img NULL: an empty slot.
 */
struct aent {
	const struct image *img;
	uint64_t fileoff;
	bool found;
	uint64_t rel_addr, sym_start, sym_size;
	const char *name;
	const struct evprof_sym_frame *frames;
	uint32_t nr_frames;
};

struct acache {
	struct aent *ents;
	size_t cap, nr;
};

/* A JIT map line; name is raw (demangled at lookup). start first (count_le). */
struct jit_sym {
	uint64_t start, size;
	const char *name;
	size_t line;
};

/* A process's JIT map, sorted by start, then by line. */
struct jitmap {
	struct jit_sym *syms;
	size_t nr;
	const char *path, *name;
};

/* Growing output of one demangling; failed when it would pass the cap. */
struct dmg_buf {
	char *p;
	size_t len, cap;
	bool failed;
};

struct evprof_symbolizer {
	struct evprof_symbolizer_opts opts;
	char *debuginfo_path; /* owned; elfutils wants char ** */
	char *kallsyms_path;
	Dwfl_Callbacks cb;
	struct arena_blk *arena;
	struct smap strings;  /* interned strings */
	struct smap mappings; /* mapping description -> struct mapent */
	struct smap images;   /* identity -> struct image */
	struct image *image_list;
	struct acache acache; /* (image, file offset) -> answer */
	struct smap jits;     /* "PID" -> struct jitmap, NULL when none */
	struct smap cus;      /* "c:IMAGE:CU offset" -> struct cu_index */
	struct evprof_symbolizer_stats st;
	struct image *vdso;
	bool vdso_tried;
	struct evprof__kallsyms *ksyms;
	bool ksyms_tried;
	uint8_t kernel_id[MAX_BUILD_ID];
	size_t kernel_id_len;
	struct dmg_buf dmg; /* scratch for one demangling */
	struct evprof_sym_frame frames[MAX_INLINE]; /* scratch for one lookup */
};

static void *arena_alloc(struct evprof_symbolizer *s, size_t n)
{
	const size_t align = sizeof(max_align_t);
	struct arena_blk *b = s->arena;
	void *p;

	n = (n + align - 1) & ~(align - 1);
	if (!b || b->cap - b->used < n) {
		size_t cap = n > 65536 ? n : 65536;

		b = malloc(sizeof(*b) + cap);
		if (!b)
			return NULL;
		b->cap = cap;
		b->used = 0;
		b->next = s->arena;
		s->arena = b;
	}
	p = (char *)b->data + b->used;
	b->used += n;
	return p;
}

static uint64_t hash_str(const char *k)
{
	uint64_t h = 0xcbf29ce484222325ull;

	for (; *k; k++)
		h = (h ^ (uint8_t)*k) * 0x100000001b3ull;
	return h;
}

static struct smap_ent *smap_slot(const struct smap *m, const char *key,
				  uint64_t h)
{
	size_t i = h & (m->cap - 1);

	while (m->ents[i].key &&
	       (m->ents[i].hash != h || strcmp(m->ents[i].key, key)))
		i = (i + 1) & (m->cap - 1);
	return &m->ents[i];
}

/* The entry for key, or NULL. */
static struct smap_ent *smap_get(const struct smap *m, const char *key)
{
	struct smap_ent *e;

	if (!m->cap)
		return NULL;
	e = smap_slot(m, key, hash_str(key));
	return e->key ? e : NULL;
}

static int smap_grow(struct smap *m)
{
	struct smap old = *m;
	size_t i;

	m->cap = old.cap ? old.cap * 2 : 64;
	m->ents = calloc(m->cap, sizeof(*m->ents));
	if (!m->ents) {
		*m = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++)
		if (old.ents[i].key)
			*smap_slot(m, old.ents[i].key, old.ents[i].hash) =
			    old.ents[i];
	free(old.ents);
	return 0;
}

/* Adds key (copied to the arena unless key_owned) -> val; returns entry. */
static struct smap_ent *smap_put(struct evprof_symbolizer *s, struct smap *m,
				 const char *key, bool key_owned, void *val)
{
	struct smap_ent *e;
	uint64_t h = hash_str(key);

	if ((m->nr + 1) * 2 > m->cap && smap_grow(m))
		return NULL;
	e = smap_slot(m, key, h);
	if (!e->key) {
		if (!key_owned) {
			size_t l = strlen(key) + 1;
			char *k = arena_alloc(s, l);

			if (!k)
				return NULL;
			memcpy(k, key, l);
			key = k;
		}
		e->key = key;
		e->hash = h;
		m->nr++;
	}
	e->val = val;
	return e;
}

static const char *intern(struct evprof_symbolizer *s, const char *str)
{
	struct smap_ent *e;

	if (!str)
		return NULL;
	e = smap_get(&s->strings, str);
	if (e)
		return e->key;
	e = smap_put(s, &s->strings, str, false, NULL);
	return e ? e->key : NULL;
}

/* ---- names ----------------------------------------------------------------
 */

static void dmg_put(const char *str, size_t n, void *opaque)
{
	struct dmg_buf *b = opaque;
	char *np;

	if (b->failed)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;

		while (cap < b->len + n + 1)
			cap *= 2;
		np = cap > MAX_DEMANGLED ? NULL : realloc(b->p, cap);
		if (!np) {
			b->failed = true;
			return;
		}
		b->p = np;
		b->cap = cap;
	}
	memcpy(b->p + b->len, str, n);
	b->len += n;
	b->p[b->len] = '\0';
}

/*
 * C++ and Rust (legacy "_ZN...17h<hash>E" and v0 "_R...") through
 * libiberty, in the order and with the options of binutils' addr2line -C
 * (Rust first, since legacy Rust names are also valid C++ names). The
 * callback forms never call xmalloc, which exits on failure; their stack
 * use grows with the name, hence MAX_MANGLED. Names that do not demangle
 * stay as they are.
 */
static const char *demangle(struct evprof_symbolizer *s, const char *name)
{
	const int opts = DMGL_PARAMS | DMGL_ANSI;
	struct dmg_buf *b = &s->dmg;
	bool ok;

	if (!name || s->opts.no_demangle ||
	    (strncmp(name, "_Z", 2) && strncmp(name, "_R", 2)) ||
	    strnlen(name, MAX_MANGLED + 1) > MAX_MANGLED)
		return intern(s, name);
	b->len = 0;
	b->failed = false;
	ok = rust_demangle_callback(name, opts, dmg_put, b) && !b->failed;
	if (!ok) {
		b->len = 0;
		b->failed = false;
		ok = cplus_demangle_v3_callback(name, opts, dmg_put, b) &&
		     !b->failed;
	}
	return intern(s, ok && b->len ? b->p : name);
}

static const char *basename_of(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash && slash[1] ? slash + 1 : path;
}

static void hex(char *out, const uint8_t *b, size_t n)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = '\0';
}

/* ---- images ----------------------------------------------------------------
 */

static int read_loads(struct evprof_symbolizer *s, struct image *img, Elf *elf)
{
	size_t phnum, i, n = 0;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &phnum))
		return -EVPROF_ERR_BAD_ELF;
	if (phnum > 65535)
		return -EVPROF_ERR_BAD_ELF;
	img->loads = arena_alloc(s, (phnum ? phnum : 1) * sizeof(*img->loads));
	if (!img->loads)
		return -ENOMEM;
	for (i = 0; i < phnum; i++) {
		if (!gelf_getphdr(elf, (int)i, &ph))
			return -EVPROF_ERR_BAD_ELF;
		if (ph.p_type != PT_LOAD)
			continue;
		if (n == 0)
			img->base_vaddr = ph.p_vaddr;
		img->loads[n].offset = ph.p_offset;
		img->loads[n].filesz = ph.p_filesz;
		img->loads[n].vaddr = ph.p_vaddr;
		n++;
	}
	img->nr_loads = n;
	return n ? 0 : -EVPROF_ERR_BAD_ELF;
}

/*
 * Builds the image of an ELF file open on fd, which it consumes. name names
 * the module; file_name is where elfutils looks for debuglink files next to
 * it. Returns NULL with errno set.
 */
static struct image *image_new(struct evprof_symbolizer *s, int fd, Elf *elf,
			       const char *name, const char *file_name)
{
	struct image *img;
	const void *bid;
	ssize_t bid_len;
	int err;

	img = arena_alloc(s, sizeof(*img));
	if (!img) {
		err = -ENOMEM;
		goto fail;
	}
	memset(img, 0, sizeof(*img));
	err = read_loads(s, img, elf);
	if (err)
		goto fail;
	bid_len = dwelf_elf_gnu_build_id(elf, &bid);
	if (bid_len > 0 && bid_len <= MAX_BUILD_ID) {
		uint8_t *copy = arena_alloc(s, (size_t)bid_len);

		if (!copy) {
			err = -ENOMEM;
			goto fail;
		}
		memcpy(copy, bid, (size_t)bid_len);
		img->build_id = copy;
		img->build_id_len = (size_t)bid_len;
	}
	img->dwfl = dwfl_begin(&s->cb);
	if (!img->dwfl) {
		err = -ENOMEM;
		goto fail;
	}
	dwfl_report_begin(img->dwfl);
	/*
	 * Base 0 relative to p_vaddr: ET_DYN is placed at its link-time
	 * addresses, as ET_EXEC always is, so the module bias is 0.
	 */
	img->mod = dwfl_report_elf(img->dwfl, name, file_name, fd, 0, true);
	dwfl_report_end(img->dwfl, NULL, NULL);
	if (!img->mod) {
		pr_debug("symbols: %s: %s\n", file_name, dwfl_errmsg(-1));
		dwfl_end(img->dwfl);
		err = -EVPROF_ERR_BAD_ELF;
		goto fail;
	}
	/* libdwfl owns fd now and keeps its own Elf handle. */
	elf_end(elf);
	s->st.images++;
	img->next = s->image_list;
	s->image_list = img;
	return img;
fail:
	elf_end(elf);
	close(fd);
	errno = err == -ENOMEM ? ENOMEM : EINVAL;
	return NULL;
}

/*
 * Opens one candidate path for map and checks it is the mapped file.
 * Returns the (possibly cached) image, or NULL.
 */
static struct image *try_file(struct evprof_symbolizer *s,
			      const struct evprof_sym_mapping *map,
			      const char *cand, const char *file_name)
{
	char key[2 * MAX_BUILD_ID + 96];
	struct smap_ent *e;
	struct image *img;
	const void *bid;
	ssize_t bid_len;
	struct stat st;
	Elf *elf;
	int fd;

	fd = open(cand, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    (map->inode && st.st_ino != map->inode)) {
		close(fd);
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		pr_debug("symbols: %s: not an ELF file\n", cand);
		elf_end(elf);
		close(fd);
		return NULL;
	}
	bid_len = dwelf_elf_gnu_build_id(elf, &bid);
	if (bid_len < 0 || bid_len > MAX_BUILD_ID)
		bid_len = 0;
	if (map->build_id_len &&
	    ((size_t)bid_len != map->build_id_len ||
	     memcmp(bid, map->build_id, map->build_id_len))) {
		pr_debug("symbols: %s: build id differs from the mapping's\n",
			 cand);
		elf_end(elf);
		close(fd);
		return NULL;
	}
	if (bid_len > 0) {
		memcpy(key, "b:", 2);
		hex(key + 2, bid, (size_t)bid_len);
	} else {
		snprintf(key, sizeof(key), "f:%llx:%llx:%lld.%09ld:%lld",
			 (unsigned long long)st.st_dev,
			 (unsigned long long)st.st_ino,
			 (long long)st.st_mtim.tv_sec, st.st_mtim.tv_nsec,
			 (long long)st.st_size);
	}
	e = smap_get(&s->images, key);
	if (e) {
		elf_end(elf);
		close(fd);
		return e->val;
	}
	img = image_new(s, fd, elf, basename_of(file_name), file_name);
	if (img && !smap_put(s, &s->images, key, false, img))
		return NULL;
	return img;
}

static int find_vdso_cb(const struct evprof_map *m, void *ctx)
{
	struct evprof_map *out = ctx;

	if (m->flags & EVPROF_MAP_SPECIAL && !strcmp(m->path, "[vdso]")) {
		*out = *m;
		out->path = NULL;
	}
	return 0;
}

/*
 * Our own vdso, copied into a memfd so that libdwfl reads it like a file.
 * The vdso is part of the kernel: every 64-bit process on this kernel maps
 * the same image. Reading the target's copy through /proc/PID/mem would
 * need it alive at symbolization time.
 */
static struct image *vdso_image(struct evprof_symbolizer *s)
{
	struct evprof_map m = {0};
	unsigned long base;
	Elf *elf;
	int fd;

	if (s->vdso_tried)
		return s->vdso;
	s->vdso_tried = true;
	base = getauxval(AT_SYSINFO_EHDR);
	if (!base || evprof_maps__read(0, find_vdso_cb, &m) < 0 ||
	    m.start != base || m.end <= m.start)
		return NULL;
	fd = memfd_create("evprof-vdso", MFD_CLOEXEC);
	if (fd < 0)
		return NULL;
	if (write(fd, (const void *)base, m.end - m.start) !=
	    (ssize_t)(m.end - m.start)) {
		close(fd);
		return NULL;
	}
	elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		elf_end(elf);
		close(fd);
		return NULL;
	}
	s->vdso = image_new(s, fd, elf, "[vdso]", "[vdso]");
	return s->vdso;
}

static struct image *resolve_image(struct evprof_symbolizer *s,
				   const struct evprof_sym_mapping *map)
{
	char cand[PATH_MAX + 64];
	struct image *img;

	if (!strcmp(map->path, "[vdso]"))
		return vdso_image(s);
	if (map->path[0] != '/')
		return NULL;
	img = try_file(s, map, map->path, map->path);
	if (img || map->pid <= 0)
		return img;
	if (snprintf(cand, sizeof(cand), "/proc/%d/root%s", map->pid,
		     map->path) < (int)sizeof(cand)) {
		img = try_file(s, map, cand, cand);
		if (img)
			return img;
	}
	snprintf(cand, sizeof(cand), "/proc/%d/map_files/%llx-%llx", map->pid,
		 (unsigned long long)map->start, (unsigned long long)map->end);
	return try_file(s, map, cand, map->path);
}

static struct mapent *lookup_mapping(struct evprof_symbolizer *s,
				     const struct evprof_sym_mapping *map)
{
	char bid[2 * MAX_BUILD_ID + 1] = "", stack_key[512];
	struct mapent *me;
	struct smap_ent *e;
	char *key = stack_key;
	size_t klen;

	if (map->build_id_len)
		hex(bid, map->build_id,
		    map->build_id_len < MAX_BUILD_ID ? map->build_id_len
						     : MAX_BUILD_ID);
	klen = strlen(map->path) + sizeof(bid) + 128;
	if (klen > sizeof(stack_key)) {
		key = malloc(klen);
		if (!key)
			return NULL;
	}
	snprintf(key, klen, "%d:%llx:%llx:%llx:%llx:%s:%s", map->pid,
		 (unsigned long long)map->start, (unsigned long long)map->end,
		 (unsigned long long)map->pgoff, (unsigned long long)map->inode,
		 bid, map->path);
	e = smap_get(&s->mappings, key);
	if (e) {
		if (key != stack_key)
			free(key);
		return e->val;
	}
	me = arena_alloc(s, sizeof(*me));
	if (!me)
		goto oom;
	me->lib_path = intern(s, map->path);
	if (!me->lib_path)
		goto oom;
	me->lib_name = basename_of(me->lib_path);
	me->img = resolve_image(s, map);
	if (!me->img)
		pr_debug("symbols: no readable image for %s\n", map->path);
	if (!smap_put(s, &s->mappings, key, false, me))
		me = NULL;
	if (key != stack_key)
		free(key);
	return me;
oom:
	if (key != stack_key)
		free(key);
	return NULL;
}

/* ---- lookups --------------------------------------------------------------
 */

/* Name of a function DIE: linkage name (demangled) first, as addr2line. */
static const char *die_name(struct evprof_symbolizer *s, Dwarf_Die *die)
{
	Dwarf_Attribute a;
	const char *n;

	n = dwarf_formstring(dwarf_attr_integrate(die, DW_AT_linkage_name, &a));
	if (!n)
		n = dwarf_formstring(
		    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a));
	if (n)
		return demangle(s, n);
	return intern(
	    s, dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &a)));
}

static uint32_t die_udata(Dwarf_Die *die, unsigned int at)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	if (dwarf_formudata(dwarf_attr(die, at, &a), &w) || w > UINT32_MAX)
		return 0;
	return (uint32_t)w;
}

/* A function's range in a CU: [lo, hi), DIE at off. lo first (count_le). */
struct fn_range {
	uint64_t lo, hi;
	Dwarf_Off off;
};

/* The out-of-line functions of one CU, sorted by lo. */
struct cu_index {
	struct fn_range *r;
	size_t nr;
};

struct fn_vec {
	struct fn_range *v;
	size_t nr, cap;
	bool failed;
};

static void index_scope(Dwarf_Die *parent, struct fn_vec *fv, int depth)
{
	Dwarf_Die c;

	if (depth > 16 || dwarf_child(parent, &c) != 0)
		return;
	do {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		switch (dwarf_tag(&c)) {
		case DW_TAG_subprogram:
			while ((off = dwarf_ranges(&c, off, &base, &lo, &hi)) >
			       0) {
				struct fn_range *nv;

				if (hi <= lo)
					continue;
				if (fv->nr == fv->cap) {
					fv->cap = fv->cap ? fv->cap * 2 : 64;
					nv = realloc(fv->v,
						     fv->cap * sizeof(*nv));
					if (!nv) {
						fv->failed = true;
						return;
					}
					fv->v = nv;
				}
				fv->v[fv->nr++] = (struct fn_range){
				    lo, hi, dwarf_dieoffset(&c)};
			}
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
		case DW_TAG_module:
			index_scope(&c, fv, depth + 1);
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
}

static int cmp_fn_range(const void *a, const void *b)
{
	const struct fn_range *x = a, *y = b;

	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* The function index of cu, built on first use; NULL on failure. */
static struct cu_index *cu_index(struct evprof_symbolizer *s,
				 const struct image *img, Dwarf_Die *cu)
{
	struct fn_vec fv = {0};
	struct cu_index *ci;
	struct smap_ent *e;
	char key[64];

	snprintf(key, sizeof(key), "c:%p:%llx", (const void *)img,
		 (unsigned long long)dwarf_dieoffset(cu));
	e = smap_get(&s->cus, key);
	if (e)
		return e->val;
	index_scope(cu, &fv, 0);
	ci = arena_alloc(s, sizeof(*ci));
	if (ci) {
		ci->nr = fv.failed ? 0 : fv.nr;
		ci->r = arena_alloc(s, (ci->nr ? ci->nr : 1) * sizeof(*ci->r));
		if (ci->r && ci->nr) {
			qsort(fv.v, ci->nr, sizeof(*fv.v), cmp_fn_range);
			memcpy(ci->r, fv.v, ci->nr * sizeof(*fv.v));
		}
		if (!ci->r || !smap_put(s, &s->cus, key, false, ci))
			ci = NULL;
	}
	free(fv.v);
	return ci;
}

/* Whether die's code covers pc; blocks without addresses may (abstract). */
static bool may_hold(Dwarf_Die *die, Dwarf_Addr pc)
{
	if (dwarf_haspc(die, pc) == 1)
		return true;
	return !dwarf_hasattr(die, DW_AT_low_pc) &&
	       !dwarf_hasattr(die, DW_AT_ranges);
}

/* The inlined subroutine directly in parent (through blocks) at pc. */
static bool inner_inline(Dwarf_Die *parent, Dwarf_Addr pc, Dwarf_Die *out,
			 int depth)
{
	Dwarf_Die c;

	if (depth > 32 || dwarf_child(parent, &c) != 0)
		return false;
	do {
		switch (dwarf_tag(&c)) {
		case DW_TAG_inlined_subroutine:
			if (dwarf_haspc(&c, pc) == 1) {
				*out = c;
				return true;
			}
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
			if (may_hold(&c, pc) && inner_inline(&c, pc, out, depth + 1))
				return true;
			break;
		}
	} while (dwarf_siblingof(&c, &c) == 0);
	return false;
}

/*
 * The functions at pc, innermost first, into scopes (MAX_INLINE): through
 * the CU's function index, then down the inline nesting of the one
 * function that holds pc. dwarf_getscopes() would walk the whole CU per
 * address, which is most of the time on large C++ CUs. Returns how many,
 * 0 when no indexed function holds pc.
 */
static int find_scopes(struct evprof_symbolizer *s, const struct image *img,
		       Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *scopes)
{
	struct cu_index *ci = cu_index(s, img, cu);
	Dwarf_Die chain[MAX_INLINE];
	size_t lo, steps;
	int n = 0, i;

	if (!ci)
		return 0;
	lo = evprof__count_le(ci->r, ci->nr, sizeof(*ci->r), pc);
	for (steps = 0; lo > 0 && steps < 8; lo--, steps++)
		if (pc < ci->r[lo - 1].hi)
			break;
	if (!lo || steps == 8 ||
	    !dwarf_offdie(dwarf_cu_getdwarf(cu->cu), ci->r[lo - 1].off,
			  &chain[0]))
		return 0;
	n = 1;
	while (n < MAX_INLINE && inner_inline(&chain[n - 1], pc, &chain[n], 0))
		n++;
	for (i = 0; i < n; i++)
		scopes[i] = chain[n - 1 - i];
	return n;
}

/* Fills s->frames from DWARF; returns how many. */
static uint32_t inline_frames(struct evprof_symbolizer *s, struct image *img,
			      uint64_t svma)
{
	const char *file = NULL;
	Dwarf_Die *cu, *scopes = NULL, found[MAX_INLINE];
	Dwarf_Files *files = NULL;
	Dwarf_Addr bias;
	Dwfl_Line *l;
	size_t nfiles = 0;
	uint32_t n = 0;
	int line = 0, col = 0, decl, nscopes, i;

	cu = dwfl_module_addrdie(img->mod, svma, &bias);
	if (!cu)
		return 0;
	l = dwfl_module_getsrc(img->mod, svma);
	if (l)
		file = dwfl_lineinfo(l, NULL, &line, &col, NULL, NULL);
	if (dwarf_getsrcfiles(cu, &files, &nfiles))
		files = NULL;
	nscopes = find_scopes(s, img, cu, svma - bias, found);
	if (nscopes > 0)
		goto frames;
	/*
	 * Not in the index (a function nested elsewhere): the slow way.
	 * dwarf_getscopes() continues from an inlined instance into the
	 * abstract function it came from; the physical nesting (inline ->
	 * caller) comes from dwarf_getscopes_die() on the innermost function.
	 */
	nscopes = dwarf_getscopes(cu, svma - bias, &scopes);
	for (i = 0; i < nscopes; i++) {
		int tag = dwarf_tag(&scopes[i]);

		if (tag == DW_TAG_inlined_subroutine ||
		    tag == DW_TAG_subprogram)
			break;
	}
	if (i < nscopes) {
		Dwarf_Die inner = scopes[i];

		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
	}
frames:
	for (i = 0; i < nscopes && n < MAX_INLINE; i++) {
		Dwarf_Die *d = scopes ? &scopes[i] : &found[i];
		int tag = dwarf_tag(d);
		uint32_t cf;

		if (tag != DW_TAG_inlined_subroutine &&
		    tag != DW_TAG_subprogram)
			continue;
		s->frames[n].name = die_name(s, d);
		s->frames[n].file = intern(s, file);
		s->frames[n].line = line > 0 ? (uint32_t)line : 0;
		s->frames[n].column = col > 0 ? (uint32_t)col : 0;
		/* An inline instance takes it from its abstract origin. */
		if (dwarf_decl_line(d, &decl) || decl < 0)
			decl = 0;
		s->frames[n].decl_line = (uint32_t)decl;
		n++;
		if (tag == DW_TAG_subprogram)
			break;
		/* The caller's position is this inline's call site. */
		cf = die_udata(d, DW_AT_call_file);
		file = files && cf < nfiles
			   ? dwarf_filesrc(files, cf, NULL, NULL)
			   : NULL;
		line = (int)die_udata(d, DW_AT_call_line);
		col = (int)die_udata(d, DW_AT_call_column);
	}
	free(scopes);
	return n;
}

/* Copies the scratch frames to the arena; returns 0 or -ENOMEM. */
static int keep_frames(struct evprof_symbolizer *s, uint32_t n,
		       struct evprof_sym_result *res)
{
	struct evprof_sym_frame *f;

	if (!n)
		return 0;
	f = arena_alloc(s, n * sizeof(*f));
	if (!f)
		return -ENOMEM;
	memcpy(f, s->frames, n * sizeof(*f));
	res->frames = f;
	res->nr_frames = n;
	return 0;
}

/* Symbol-table ranks by binding, as libdwfl breaks ties at one address. */
static int bind_rank(unsigned char info)
{
	switch (GELF_ST_BIND(info)) {
	case STB_GLOBAL:
		return 2;
	case STB_WEAK:
	case STB_GNU_UNIQUE:
		return 1;
	default:
		return 0;
	}
}

static int cmp_symrec(const void *a, const void *b)
{
	const struct symrec *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank - y->rank;
	/* Folded aliases: the first in the table is found first, as binutils. */
	return y->ndx - x->ndx;
}

/*
 * Sorted sized function symbols of img (.symtab, .dynsym or the
 * .gnu_debugdata ones), made once: dwfl_module_addrinfo() scans every
 * symbol for each lookup, minutes on a library like libLLVM.
 */
static void build_syms(struct evprof_symbolizer *s, struct image *img)
{
	struct symrec *v = NULL, *nv;
	size_t nr = 0, cap = 0;
	int n, i;

	img->syms_built = true;
	n = dwfl_module_getsymtab(img->mod);
	for (i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name;
		int type;

		name = dwfl_module_getsym_info(img->mod, i, &sym, &addr, &shndx,
					       NULL, NULL);
		type = GELF_ST_TYPE(sym.st_info);
		if (!name || !*name || !sym.st_size || shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC &&
		     type != STT_NOTYPE))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 1024;
			nv = realloc(v, cap * sizeof(*v));
			if (!nv) {
				free(v);
				return;
			}
			v = nv;
		}
		v[nr++] = (struct symrec){addr, sym.st_size, name,
					  bind_rank(sym.st_info), i};
	}
	if (nr) {
		qsort(v, nr, sizeof(*v), cmp_symrec);
		img->syms = arena_alloc(s, nr * sizeof(*v));
		if (img->syms) {
			memcpy(img->syms, v, nr * sizeof(*v));
			img->nr_syms = nr;
		}
	}
	free(v);
}

/* The closest sized symbol holding svma; at one address, see cmp_symrec. */
static const struct symrec *find_sym(const struct image *img, uint64_t svma)
{
	size_t lo, steps;

	lo =
	    evprof__count_le(img->syms, img->nr_syms, sizeof(*img->syms), svma);
	for (steps = 0; lo > 0 && steps < 16; lo--, steps++) {
		const struct symrec *r = &img->syms[lo - 1];

		if (svma - r->lo < r->size)
			return r;
	}
	return NULL;
}

/* Looks fileoff up in img; fills *a (whose img and fileoff are set). */
static int lookup_image(struct evprof_symbolizer *s, struct image *img,
			uint64_t fileoff, struct aent *a)
{
	struct evprof_sym_result tmp = {0};
	const struct symrec *sr;
	const struct load *ld = NULL;
	const char *name;
	GElf_Off off = 0;
	GElf_Sym sym;
	uint64_t svma;
	uint32_t n = 0;
	size_t i;
	int err;

	for (i = 0; i < img->nr_loads; i++) {
		const struct load *c = &img->loads[i];

		if (fileoff >= c->offset && fileoff - c->offset < c->filesz) {
			ld = c;
			break;
		}
	}
	if (!ld)
		return 0;
	svma = fileoff - ld->offset + ld->vaddr;
	a->found = true;
	a->rel_addr = svma - img->base_vaddr;
	if (!img->syms_built)
		build_syms(s, img);
	sr = find_sym(img, svma);
	if (sr) {
		name = sr->name;
		off = svma - sr->lo;
		sym.st_size = sr->size;
	} else {
		/* Sizeless symbols and the like: libdwfl's own rules. */
		name = dwfl_module_addrinfo(img->mod, svma, &off, &sym, NULL,
					    NULL, NULL);
	}
	if (name) {
		a->name = demangle(s, name);
		if (!a->name)
			return -ENOMEM;
		a->sym_start = svma - off - img->base_vaddr;
		a->sym_size = sym.st_size;
	}
	if (!s->opts.no_dwarf)
		n = inline_frames(s, img, svma);
	if (n && !s->frames[n - 1].name)
		s->frames[n - 1].name = a->name;
	if (!n && a->name) {
		memset(&s->frames[0], 0, sizeof(s->frames[0]));
		s->frames[0].name = a->name;
		n = 1;
	}
	err = keep_frames(s, n, &tmp);
	a->frames = tmp.frames;
	a->nr_frames = tmp.nr_frames;
	return err;
}

static size_t acache_hash(const struct image *img, uint64_t fileoff)
{
	uint64_t h = ((uint64_t)(uintptr_t)img ^ fileoff * 0x9e3779b97f4a7c15ull);

	return (size_t)((h ^ h >> 29) * 0xbf58476d1ce4e5b9ull >> 17);
}

static struct aent *acache_slot(const struct acache *c, const struct image *img,
				uint64_t fileoff)
{
	size_t i = acache_hash(img, fileoff) & (c->cap - 1);

	while (c->ents[i].img &&
	       (c->ents[i].img != img || c->ents[i].fileoff != fileoff))
		i = (i + 1) & (c->cap - 1);
	return &c->ents[i];
}

static int acache_grow(struct acache *c)
{
	struct acache old = *c;
	size_t i;

	c->cap = old.cap ? old.cap * 2 : 1024;
	c->ents = calloc(c->cap, sizeof(*c->ents));
	if (!c->ents) {
		*c = old;
		return -ENOMEM;
	}
	for (i = 0; i < old.cap; i++)
		if (old.ents[i].img)
			*acache_slot(c, old.ents[i].img, old.ents[i].fileoff) =
			    old.ents[i];
	free(old.ents);
	return 0;
}

/* lookup_image() once per (img, fileoff); the answer goes into *res. */
static int lookup_cached(struct evprof_symbolizer *s, struct image *img,
			 uint64_t fileoff, struct evprof_sym_result *res)
{
	struct aent *a = NULL, fresh = {.img = img, .fileoff = fileoff};
	int err;

	if (s->acache.cap)
		a = acache_slot(&s->acache, img, fileoff);
	if (a && a->img) {
		s->st.cached++;
	} else {
		err = lookup_image(s, img, fileoff, &fresh);
		if (err)
			return err;
		if ((s->acache.nr + 1) * 2 > s->acache.cap &&
		    acache_grow(&s->acache))
			return -ENOMEM;
		a = acache_slot(&s->acache, img, fileoff);
		*a = fresh;
		s->acache.nr++;
	}
	if (!a->found)
		return 0;
	res->image_found = true;
	res->rel_addr = a->rel_addr;
	if (img->build_id_len) {
		res->build_id = img->build_id;
		res->build_id_len = img->build_id_len;
	}
	res->name = a->name;
	res->sym_start = a->sym_start;
	res->sym_size = a->sym_size;
	res->frames = a->frames;
	res->nr_frames = a->nr_frames;
	return 0;
}

/* ---- JIT maps -------------------------------------------------------------
 */

/* A hex number with an optional 0x, ended by a space; NULL when not. */
static const char *parse_hex(const char *p, uint64_t *out)
{
	uint64_t v = 0;
	int digits = 0;

	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		p += 2;
	for (; *p != ' '; p++, digits++) {
		int d;

		if (*p >= '0' && *p <= '9')
			d = *p - '0';
		else if ((*p | 0x20) >= 'a' && (*p | 0x20) <= 'f')
			d = (*p | 0x20) - 'a' + 10;
		else
			return NULL;
		if (digits >= 16)
			return NULL;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return digits ? p + 1 : NULL;
}

static int cmp_jit(const void *a, const void *b)
{
	const struct jit_sym *x = a, *y = b;

	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	/* Same start: file order, so that the later line wins. */
	return x->line < y->line ? -1 : x->line > y->line;
}

/*
 * perf reads a JIT map only when it is ours or root's, since anyone can
 * write /tmp; the profiled process's own user may write it too.
 */
static bool jit_owner_ok(uid_t owner, int pid)
{
	char path[32];
	struct stat st;

	if (owner == 0 || owner == geteuid())
		return true;
	snprintf(path, sizeof(path), "/proc/%d", pid);
	return stat(path, &st) == 0 && st.st_uid == owner;
}

/* Reads /tmp/perf-PID.map; NULL when absent, refused or empty. */
static struct jitmap *jit_load(struct evprof_symbolizer *s, int pid,
			       const char *path)
{
	struct jit_sym *syms = NULL, *ns;
	size_t nr = 0, cap = 0, lcap = 0;
	struct jitmap *jm = NULL;
	char *line = NULL, *text;
	struct stat st;
	ssize_t l;
	FILE *f;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    !jit_owner_ok(st.st_uid, pid)) {
		pr_warn("symbols: %s is not owned by us, root or the process's "
			"user; JIT frames stay unknown\n",
			path);
		close(fd);
		return NULL;
	}
	f = fdopen(fd, "r");
	if (!f) {
		close(fd);
		return NULL;
	}
	s->st.jit_maps++;
	while ((l = getline(&line, &lcap, f)) > 0) {
		struct jit_sym js;
		const char *p;

		if (line[l - 1] == '\n')
			line[--l] = '\0';
		p = parse_hex(line, &js.start);
		if (p)
			p = parse_hex(p, &js.size);
		if (!p || !*p || !js.size || js.start + js.size < js.start)
			continue;
		if (nr == cap) {
			if (cap >= MAX_JIT_SYMS)
				break;
			cap = cap ? cap * 2 : 1024;
			ns = realloc(syms, cap * sizeof(*syms));
			if (!ns)
				goto out;
			syms = ns;
		}
		text = arena_alloc(s, strlen(p) + 1);
		if (!text)
			goto out;
		strcpy(text, p);
		js.name = text;
		js.line = nr;
		syms[nr++] = js;
	}
	if (!nr)
		goto out;
	jm = arena_alloc(s, sizeof(*jm));
	if (!jm)
		goto out;
	jm->syms = arena_alloc(s, nr * sizeof(*syms));
	jm->path = intern(s, path);
	if (!jm->syms || !jm->path) {
		jm = NULL;
		goto out;
	}
	qsort(syms, nr, sizeof(*syms), cmp_jit);
	memcpy(jm->syms, syms, nr * sizeof(*syms));
	jm->nr = nr;
	jm->name = basename_of(jm->path);
out:
	free(line);
	free(syms);
	fclose(f);
	return jm;
}

/* The JIT symbol covering addr: the nearest start, the later line. */
static const struct jit_sym *jit_find(const struct jitmap *jm, uint64_t addr)
{
	size_t lo, steps;

	lo = evprof__count_le(jm->syms, jm->nr, sizeof(*jm->syms), addr);
	/* Overlapping entries (code freed and reused) are few: look back. */
	for (steps = 0; lo > 0 && steps < 64; lo--, steps++) {
		const struct jit_sym *j = &jm->syms[lo - 1];

		if (addr - j->start < j->size)
			return j;
	}
	return NULL;
}

/* Fills res when pid's JIT map names addr; returns 0 or -ENOMEM. */
static int jit_lookup(struct evprof_symbolizer *s, int pid, uint64_t addr,
		      struct evprof_sym_result *res)
{
	const struct jit_sym *j;
	struct jitmap *jm;
	struct smap_ent *e;
	char path[64];

	snprintf(path, sizeof(path), "/tmp/perf-%d.map", pid);
	e = smap_get(&s->jits, path);
	if (e) {
		jm = e->val;
	} else {
		jm = jit_load(s, pid, path);
		if (!smap_put(s, &s->jits, path, false, jm))
			return -ENOMEM;
	}
	j = jm ? jit_find(jm, addr) : NULL;
	if (!j)
		return 0;
	res->lib_path = jm->path;
	res->lib_name = jm->name;
	res->build_id = NULL;
	res->build_id_len = 0;
	res->image_found = true;
	res->rel_addr = addr;
	res->name = demangle(s, j->name);
	if (!res->name)
		return -ENOMEM;
	res->sym_start = j->start;
	res->sym_size = j->size;
	memset(&s->frames[0], 0, sizeof(s->frames[0]));
	s->frames[0].name = res->name;
	return keep_frames(s, 1, res);
}

/*
 * Mappings where JIT code lives: anonymous ones ("//anon" in perf records,
 * "" or "[anon:NAME]" in /proc/PID/maps), and the ones perf also counts as
 * anonymous memory; memfd code (e.g. double-mapped JIT code) is looked up
 * here first, then as a file.
 */
static bool jit_candidate(const char *path)
{
	static const char *const anon[] = {"//anon", "/anon_hugepage",
					   "/dev/zero", "/memfd:"};
	size_t i;

	if (path[0] != '/')
		return strcmp(path, "[vdso]") != 0;
	for (i = 0; i < sizeof(anon) / sizeof(anon[0]); i++)
		if (!strncmp(path, anon[i], strlen(anon[i])))
			return true;
	return false;
}

int evprof_symbolizer__jit(struct evprof_symbolizer *s, int pid,
			   uint64_t addr, struct evprof_sym_result *res)
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
	if (map->pid > 0 && jit_candidate(map->path)) {
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

/* ---- kernel ---------------------------------------------------------------
 */

static void load_kernel(struct evprof_symbolizer *s)
{
	uint8_t notes[4096];
	bool hidden;
	int n;

	s->ksyms_tried = true;
	s->ksyms = evprof__kallsyms_load(s->kallsyms_path, &hidden);
	if (!s->ksyms)
		pr_warn("symbols: %s: %s; kernel frames stay unknown\n",
			s->kallsyms_path, strerror(errno));
	else if (hidden)
		pr_warn("symbols: %s hides addresses (kernel.kptr_restrict); "
			"kernel frames stay unknown\n",
			s->kallsyms_path);
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
	char lib[80];

	if (!s || !res)
		return -EINVAL;
	s->st.lookups++;
	memset(res, 0, sizeof(*res));
	if (!s->ksyms_tried)
		load_kernel(s);
	if (s->ksyms)
		k = evprof__kallsyms_find(s->ksyms, addr);
	if (!k) {
		res->lib_path = "[kernel.kallsyms]";
		res->lib_name = res->lib_path;
		res->rel_addr = addr;
		return 0;
	}
	res->image_found = true;
	if (k->module) {
		snprintf(lib, sizeof(lib), "[%s]", k->module);
		res->lib_path = intern(s, lib);
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
	return keep_frames(s, 1, res);
}

/* ---- lifecycle ------------------------------------------------------------
 */

struct evprof_symbolizer *
evprof_symbolizer__new(const struct evprof_symbolizer_opts *opts)
{
	struct evprof_symbolizer *s;
	const char *dip = NULL, *ksp = NULL;

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
	s->debuginfo_path = strdup(dip ? dip : ":.debug:/usr/lib/debug");
	s->kallsyms_path = strdup(ksp ? ksp : "/proc/kallsyms");
	if (!s->debuginfo_path || !s->kallsyms_path) {
		evprof_symbolizer__free(s);
		errno = ENOMEM;
		return NULL;
	}
	s->opts.debuginfo_path = NULL;
	s->opts.kallsyms_path = NULL;
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	elf_version(EV_CURRENT);
	return s;
}

int evprof_symbolizer__stats(const struct evprof_symbolizer *s,
			     struct evprof_symbolizer_stats *st)
{
	size_t sz;

	if (!s || !st || st->sz < sizeof(st->sz))
		return -EINVAL;
	sz = st->sz < sizeof(s->st) ? st->sz : sizeof(s->st);
	memcpy((char *)st + sizeof(st->sz), (const char *)&s->st + sizeof(st->sz),
	       sz - sizeof(st->sz));
	return 0;
}

void evprof_symbolizer__free(struct evprof_symbolizer *s)
{
	struct arena_blk *b, *nb;
	struct image *img;

	if (!s)
		return;
	for (img = s->image_list; img; img = img->next)
		dwfl_end(img->dwfl);
	evprof__kallsyms_free(s->ksyms);
	free(s->dmg.p);
	free(s->strings.ents);
	free(s->mappings.ents);
	free(s->images.ents);
	free(s->jits.ents);
	free(s->cus.ents);
	free(s->acache.ents);
	for (b = s->arena; b; b = nb) {
		nb = b->next;
		free(b);
	}
	free(s->debuginfo_path);
	free(s->kallsyms_path);
	free(s);
}
