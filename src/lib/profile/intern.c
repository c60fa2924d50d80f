// SPDX-License-Identifier: MIT
/*
 * The profile model's interned tables: strings, libs, functions, frames
 * and stacks, each deduplicated through util's hash map.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "intern.h"

/*
 * The interning maps (util's hash map) key each table by element index;
 * PROBE stands for the candidate in p->probe, so a lookup needs no copy of
 * it in the table and keys stay valid as the tables move on growth.
 */
#define PROBE (-1L)

/* The index whose element equals probe, or -1. */
static int64_t find(struct evprof_profile *p, struct evprof_hashmap *m,
		    const void *probe)
{
	long v;

	p->probe = probe;
	return evprof__hashmap_find(m, PROBE, &v) ? v : -1;
}

static size_t str_hash(long key, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const char *s =
	    key == PROBE ? p->probe : evprof__pstr(p, (uint32_t)key);

	return evprof__hash_mem(EVPROF_HASH_INIT, s, strlen(s));
}

static bool str_eq(long a, long b, void *ctx)
{
	const struct evprof_profile *p = ctx;

	return !strcmp(a == PROBE ? p->probe : evprof__pstr(p, (uint32_t)a),
		       b == PROBE ? p->probe : evprof__pstr(p, (uint32_t)b));
}

struct lib_key {
	const char *path;
	const void *build_id;
	size_t build_id_len;
};

static struct lib_key lib_key(const struct evprof_profile *p, long key)
{
	const struct evprof__lib *l;

	if (key == PROBE)
		return *(const struct lib_key *)p->probe;
	l = &p->libs[key];
	return (struct lib_key){l->path, l->build_id, l->build_id_len};
}

static size_t lib_hash(long key, void *ctx)
{
	struct lib_key k = lib_key(ctx, key);

	return evprof__hash_mem(
	    evprof__hash_mem(EVPROF_HASH_INIT, k.build_id, k.build_id_len),
	    k.path, strlen(k.path));
}

static bool lib_eq(long a, long b, void *ctx)
{
	struct lib_key x = lib_key(ctx, a), y = lib_key(ctx, b);

	/* memcmp() must not see NULL, even for 0 bytes (UBSan). */
	return x.build_id_len == y.build_id_len &&
	       (!x.build_id_len ||
		!memcmp(x.build_id, y.build_id, x.build_id_len)) &&
	       !strcmp(x.path, y.path);
}

/* Identity of a function: start_line is not part of it. */
static size_t func_hash(long key, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__func *f = key == PROBE ? p->probe : &p->funcs[key];
	int32_t id[3] = {(int32_t)f->name, f->lib, f->file};

	return evprof__hash_mem(EVPROF_HASH_INIT, id, sizeof(id));
}

static bool func_eq(long a, long b, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__func *x = a == PROBE ? p->probe : &p->funcs[a];
	const struct evprof__func *y = b == PROBE ? p->probe : &p->funcs[b];

	return x->name == y->name && x->lib == y->lib && x->file == y->file;
}

/* Identity of a frame: its symbol fields are not part of it. */
static size_t frame_hash(long key, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__frame *f =
	    key == PROBE ? p->probe : &p->frames[key];
	uint64_t id[3] = {
	    (uint64_t)f->func << 32 | (uint32_t)f->lib, f->address,
	    (uint64_t)f->line << 32 | f->inline_depth << 1 | f->kernel};

	return evprof__hash_mem(EVPROF_HASH_INIT, id, sizeof(id));
}

static bool frame_eq(long a, long b, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__frame *x = a == PROBE ? p->probe : &p->frames[a];
	const struct evprof__frame *y = b == PROBE ? p->probe : &p->frames[b];

	return x->func == y->func && x->lib == y->lib &&
	       x->address == y->address && x->line == y->line &&
	       x->inline_depth == y->inline_depth && x->kernel == y->kernel;
}

static size_t stack_hash(long key, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__stack *s =
	    key == PROBE ? p->probe : &p->stacks[key];

	return evprof__hash_mem(EVPROF_HASH_INIT, s, sizeof(*s));
}

static bool stack_eq(long a, long b, void *ctx)
{
	const struct evprof_profile *p = ctx;
	const struct evprof__stack *x = a == PROBE ? p->probe : &p->stacks[a];
	const struct evprof__stack *y = b == PROBE ? p->probe : &p->stacks[b];

	return x->parent == y->parent && x->frame == y->frame;
}

int evprof__intern_init(struct evprof_profile *p)
{
	p->str_map = evprof__hashmap_new(str_hash, str_eq, p);
	p->lib_map = evprof__hashmap_new(lib_hash, lib_eq, p);
	p->func_map = evprof__hashmap_new(func_hash, func_eq, p);
	p->frame_map = evprof__hashmap_new(frame_hash, frame_eq, p);
	p->stack_map = evprof__hashmap_new(stack_hash, stack_eq, p);
	if (!p->str_map || !p->lib_map || !p->func_map || !p->frame_map ||
	    !p->stack_map)
		return -ENOMEM;
	return 0;
}

/* Adds index idx (its element already in its table) to m. */
static int add(struct evprof_hashmap *m, size_t idx)
{
	return evprof__hashmap_add(m, (long)idx, (long)idx) ? -ENOMEM : 0;
}

/* ---- strings ------------------------------------------------------------- */

/* Returns the string's index or -ENOMEM. */
static int64_t intern_str(struct evprof_profile *p, const char *s)
{
	size_t len = strlen(s);
	int64_t idx = find(p, p->str_map, s);

	if (idx >= 0)
		return idx;
	if (p->nr_strs >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->chars, &p->chars_cap, 1,
			     p->chars_len + len + 1, SIZE_MAX) ||
	    evprof__vec_grow((void **)&p->str_off, &p->cap_strs,
			     sizeof(*p->str_off), p->nr_strs + 1, SIZE_MAX))
		return -ENOMEM;
	memcpy(p->chars + p->chars_len, s, len + 1);
	p->str_off[p->nr_strs] = p->chars_len;
	if (add(p->str_map, p->nr_strs))
		return -ENOMEM;
	p->chars_len += len + 1;
	return (int64_t)p->nr_strs++;
}

/* ---- libs ---------------------------------------------------------------- */

int evprof_profile__add_lib(struct evprof_profile *p,
			    const struct evprof_profile_lib *lib)
{
	struct lib_key k;
	struct evprof__lib *l;
	const char *name;
	int64_t idx, name_idx;

	if (!lib || !lib->path || lib->build_id_len > sizeof(l->build_id) ||
	    (lib->build_id_len && !lib->build_id))
		return -EINVAL;
	k = (struct lib_key){lib->path, lib->build_id, lib->build_id_len};
	idx = find(p, p->lib_map, &k);
	if (idx >= 0)
		return (int)idx;

	name = lib->name;
	if (!name) {
		name = strrchr(lib->path, '/');
		name = name ? name + 1 : lib->path;
	}
	name_idx = intern_str(p, name);
	if (name_idx < 0 || p->nr_libs >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->libs, &p->cap_libs, sizeof(*p->libs),
			     p->nr_libs + 1, SIZE_MAX))
		return -ENOMEM;
	l = &p->libs[p->nr_libs];
	memset(l, 0, sizeof(*l));
	l->path = strdup(lib->path);
	l->arch = lib->arch ? strdup(lib->arch) : NULL;
	l->name = (uint32_t)name_idx;
	l->build_id_len = (uint8_t)lib->build_id_len;
	if (lib->build_id_len)
		memcpy(l->build_id, lib->build_id, lib->build_id_len);
	if (!l->path || (lib->arch && !l->arch) ||
	    add(p->lib_map, p->nr_libs)) {
		free(l->path);
		free(l->arch);
		return -ENOMEM;
	}
	return (int)p->nr_libs++;
}

/* ---- funcs, frames, stacks ----------------------------------------------- */

static int64_t intern_func(struct evprof_profile *p,
			   const struct evprof__func *f)
{
	int64_t idx = find(p, p->func_map, f);

	if (idx >= 0)
		return idx;
	if (p->nr_funcs >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->funcs, &p->cap_funcs,
			     sizeof(*p->funcs), p->nr_funcs + 1, SIZE_MAX))
		return -ENOMEM;
	p->funcs[p->nr_funcs] = *f;
	if (add(p->func_map, p->nr_funcs))
		return -ENOMEM;
	return (int64_t)p->nr_funcs++;
}

int evprof_profile__frame(struct evprof_profile *p,
			  const struct evprof_profile_frame *f)
{
	struct evprof__func fn = {.lib = -1, .file = -1};
	struct evprof__frame fr;
	char hexname[2 + 16 + 1];
	int64_t idx;

	if (!f || f->lib < -1 || (f->lib >= 0 && (size_t)f->lib >= p->nr_libs))
		return -EINVAL;
	if (!f->function)
		snprintf(hexname, sizeof(hexname), "0x%" PRIx64, f->address);
	idx = intern_str(p, f->function ? f->function : hexname);
	if (idx < 0)
		return (int)idx;
	fn.name = (uint32_t)idx;
	fn.lib = f->lib;
	if (f->file) {
		idx = intern_str(p, f->file);
		if (idx < 0)
			return (int)idx;
		fn.file = (int32_t)idx;
	}
	idx = intern_func(p, &fn);
	if (idx < 0)
		return (int)idx;
	if (!p->funcs[idx].start_line)
		p->funcs[idx].start_line = f->function_line;

	fr = (struct evprof__frame){
	    .func = (uint32_t)idx,
	    .lib = f->lib,
	    .address = f->address,
	    .line = f->line,
	    .inline_depth = f->inline_depth,
	    .kernel = f->kernel,
	    .symbol_address = f->symbol_address,
	    .symbol_size = f->symbol_size,
	};
	idx = find(p, p->frame_map, &fr);
	if (idx >= 0)
		return (int)idx;
	if (p->nr_frames >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->frames, &p->cap_frames,
			     sizeof(*p->frames), p->nr_frames + 1, SIZE_MAX))
		return -ENOMEM;
	p->frames[p->nr_frames] = fr;
	if (add(p->frame_map, p->nr_frames))
		return -ENOMEM;
	return (int)p->nr_frames++;
}

int evprof_profile__stack(struct evprof_profile *p, int parent, int frame)
{
	struct evprof__stack st = {parent, frame};
	int64_t idx;

	if (parent < -1 || (parent >= 0 && (size_t)parent >= p->nr_stacks) ||
	    frame < 0 || (size_t)frame >= p->nr_frames)
		return -EINVAL;
	idx = find(p, p->stack_map, &st);
	if (idx >= 0)
		return (int)idx;
	/* A new stack's index exceeds its parent's: parents come first. */
	if (p->nr_stacks >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->stacks, &p->cap_stacks,
			     sizeof(*p->stacks), p->nr_stacks + 1, SIZE_MAX))
		return -ENOMEM;
	p->stacks[p->nr_stacks] = st;
	if (add(p->stack_map, p->nr_stacks))
		return -ENOMEM;
	return (int)p->nr_stacks++;
}

void evprof__intern_free(struct evprof_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_libs; i++) {
		free(p->libs[i].path);
		free(p->libs[i].arch);
	}
	evprof__hashmap_free(p->str_map);
	evprof__hashmap_free(p->lib_map);
	evprof__hashmap_free(p->func_map);
	evprof__hashmap_free(p->frame_map);
	evprof__hashmap_free(p->stack_map);
	free(p->chars);
	free(p->str_off);
	free(p->libs);
	free(p->funcs);
	free(p->frames);
	free(p->stacks);
}
