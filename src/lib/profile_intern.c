// SPDX-License-Identifier: MIT
/*
 * The profile model's interned tables: strings, libs, functions, frames
 * and stacks, each deduplicated through a hash set, and the small helpers
 * (growth, hashing) the profile modules share.
 */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

/* ---- helpers ------------------------------------------------------------ */

int evprof__grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **a = arr;
	size_t n = *cap;
	void *q;

	if (need <= n)
		return 0;
	n = n < 16 ? 16 : n + n / 2;
	if (n < need)
		n = need;
	if (n > SIZE_MAX / elem)
		return -ENOMEM;
	q = realloc(*a, n * elem);
	if (!q)
		return -ENOMEM;
	*a = q;
	*cap = n;
	return 0;
}

uint32_t evprof__hash_u64(uint64_t v)
{
	/* splitmix64's finalizer: every input bit reaches every output bit. */
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	v ^= v >> 31;
	return (uint32_t)(v >> 32);
}

static uint64_t hmix(uint64_t h, uint64_t v)
{
	return ((h << 5 | h >> 59) ^ v) * 0x9e3779b97f4a7c15ULL;
}

uint32_t evprof__hash_bytes(const void *b, size_t n, uint64_t seed)
{
	const unsigned char *c = b;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return evprof__hash_u64(h);
}

int64_t evprof__hset_find(const struct evprof__hset *h, uint32_t hash,
			  evprof__heq_fn eq, const void *ctx, const void *key)
{
	uint32_t i;

	if (!h->slots)
		return -1;
	for (i = hash & h->mask;; i = (i + 1) & h->mask) {
		const struct evprof__hslot *s = &h->slots[i];

		if (!s->idx1)
			return -1;
		if (s->hash == hash && eq(ctx, s->idx1 - 1, key))
			return s->idx1 - 1;
	}
}

static void hset_put(struct evprof__hslot *slots, uint32_t mask,
		     struct evprof__hslot v)
{
	uint32_t i = v.hash & mask;

	while (slots[i].idx1)
		i = (i + 1) & mask;
	slots[i] = v;
}

int evprof__hset_add(struct evprof__hset *h, uint32_t hash, uint32_t idx)
{
	uint64_t cap = h->slots ? (uint64_t)h->mask + 1 : 0;

	/* Linear probing stays short up to a load of 0.7. */
	if ((uint64_t)(h->used + 1) * 10 > cap * 7) {
		uint64_t ncap = cap ? cap * 2 : 64, i;
		struct evprof__hslot *ns;

		if (ncap > (1ULL << 31))
			return -ENOMEM;
		ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (i = 0; i < cap; i++)
			if (h->slots[i].idx1)
				hset_put(ns, (uint32_t)(ncap - 1), h->slots[i]);
		free(h->slots);
		h->slots = ns;
		h->mask = (uint32_t)(ncap - 1);
	}
	hset_put(h->slots, h->mask,
		 (struct evprof__hslot){.hash = hash, .idx1 = idx + 1});
	h->used++;
	return 0;
}

void evprof__hset_free(struct evprof__hset *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

/* ---- strings ------------------------------------------------------------- */

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(evprof__pstr(ctx, idx), key);
}

/* Returns the string's index or -ENOMEM. */
static int64_t intern_str(struct evprof_profile *p, const char *s)
{
	size_t len = strlen(s);
	uint32_t h = evprof__hash_bytes(s, len, 0);
	int64_t idx = evprof__hset_find(&p->str_set, h, str_eq, p, s);

	if (idx >= 0)
		return idx;
	if (p->nr_strs >= INT32_MAX ||
	    evprof__grow(&p->chars, &p->chars_cap, p->chars_len + len + 1, 1) ||
	    evprof__grow(&p->str_off, &p->cap_strs, p->nr_strs + 1,
			 sizeof(*p->str_off)) ||
	    evprof__hset_add(&p->str_set, h, (uint32_t)p->nr_strs))
		return -ENOMEM;
	memcpy(p->chars + p->chars_len, s, len + 1);
	p->str_off[p->nr_strs] = p->chars_len;
	p->chars_len += len + 1;
	return (int64_t)p->nr_strs++;
}

/* ---- libs ---------------------------------------------------------------- */

struct lib_key {
	const char *path;
	const void *build_id;
	size_t build_id_len;
};

static bool lib_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__lib *l =
	    &((const struct evprof_profile *)ctx)->libs[idx];
	const struct lib_key *k = key;

	/* memcmp() must not see NULL, even for 0 bytes (UBSan). */
	return l->build_id_len == k->build_id_len &&
	       (!k->build_id_len ||
		!memcmp(l->build_id, k->build_id, k->build_id_len)) &&
	       !strcmp(l->path, k->path);
}

int evprof_profile__add_lib(struct evprof_profile *p,
			    const struct evprof_profile_lib *lib)
{
	struct lib_key k;
	struct evprof__lib *l;
	const char *name;
	int64_t idx, name_idx;
	uint32_t h;

	if (!lib || !lib->path || lib->build_id_len > sizeof(l->build_id) ||
	    (lib->build_id_len && !lib->build_id))
		return -EINVAL;
	k = (struct lib_key){lib->path, lib->build_id, lib->build_id_len};
	h = evprof__hash_bytes(
	    lib->path, strlen(lib->path),
	    evprof__hash_bytes(lib->build_id, lib->build_id_len, 0));
	idx = evprof__hset_find(&p->lib_set, h, lib_eq, p, &k);
	if (idx >= 0)
		return (int)idx;

	name = lib->name;
	if (!name) {
		name = strrchr(lib->path, '/');
		name = name ? name + 1 : lib->path;
	}
	name_idx = intern_str(p, name);
	if (name_idx < 0 || p->nr_libs >= INT32_MAX ||
	    evprof__grow(&p->libs, &p->cap_libs, p->nr_libs + 1,
			 sizeof(*p->libs)))
		return -ENOMEM;
	l = &p->libs[p->nr_libs];
	memset(l, 0, sizeof(*l));
	l->path = strdup(lib->path);
	l->arch = lib->arch ? strdup(lib->arch) : NULL;
	if (!l->path || (lib->arch && !l->arch) ||
	    evprof__hset_add(&p->lib_set, h, (uint32_t)p->nr_libs)) {
		free(l->path);
		free(l->arch);
		return -ENOMEM;
	}
	l->name = (uint32_t)name_idx;
	l->build_id_len = (uint8_t)lib->build_id_len;
	if (lib->build_id_len)
		memcpy(l->build_id, lib->build_id, lib->build_id_len);
	return (int)p->nr_libs++;
}

/* ---- funcs, frames, stacks ----------------------------------------------- */

static bool func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__func *a =
	    &((const struct evprof_profile *)ctx)->funcs[idx];
	const struct evprof__func *b = key;

	return a->name == b->name && a->lib == b->lib && a->file == b->file;
}

static int64_t intern_func(struct evprof_profile *p,
			   const struct evprof__func *f)
{
	uint32_t h =
	    evprof__hash_u64(hmix(hmix(f->name, (uint64_t)(int64_t)f->lib),
				  (uint64_t)(int64_t)f->file));
	int64_t idx = evprof__hset_find(&p->func_set, h, func_eq, p, f);

	if (idx >= 0)
		return idx;
	if (p->nr_funcs >= INT32_MAX ||
	    evprof__grow(&p->funcs, &p->cap_funcs, p->nr_funcs + 1,
			 sizeof(*p->funcs)) ||
	    evprof__hset_add(&p->func_set, h, (uint32_t)p->nr_funcs))
		return -ENOMEM;
	p->funcs[p->nr_funcs] = *f;
	return (int64_t)p->nr_funcs++;
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__frame *a =
	    &((const struct evprof_profile *)ctx)->frames[idx];
	const struct evprof__frame *b = key;

	return a->func == b->func && a->lib == b->lib &&
	       a->address == b->address && a->line == b->line &&
	       a->inline_depth == b->inline_depth && a->kernel == b->kernel;
}

int evprof_profile__frame(struct evprof_profile *p,
			  const struct evprof_profile_frame *f)
{
	struct evprof__func fn = {.lib = -1, .file = -1};
	struct evprof__frame fr;
	char hexname[2 + 16 + 1];
	int64_t idx;
	uint32_t h;

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
	h = evprof__hash_u64(hmix(hmix(hmix(fr.func, fr.address), fr.line),
				  (uint64_t)fr.inline_depth << 1 | fr.kernel));
	idx = evprof__hset_find(&p->frame_set, h, frame_eq, p, &fr);
	if (idx >= 0)
		return (int)idx;
	if (p->nr_frames >= INT32_MAX ||
	    evprof__grow(&p->frames, &p->cap_frames, p->nr_frames + 1,
			 sizeof(*p->frames)) ||
	    evprof__hset_add(&p->frame_set, h, (uint32_t)p->nr_frames))
		return -ENOMEM;
	p->frames[p->nr_frames] = fr;
	return (int)p->nr_frames++;
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__stack *a =
	    &((const struct evprof_profile *)ctx)->stacks[idx];
	const struct evprof__stack *b = key;

	return a->parent == b->parent && a->frame == b->frame;
}

int evprof_profile__stack(struct evprof_profile *p, int parent, int frame)
{
	struct evprof__stack st = {parent, frame};
	int64_t idx;
	uint32_t h;

	if (parent < -1 || (parent >= 0 && (size_t)parent >= p->nr_stacks) ||
	    frame < 0 || (size_t)frame >= p->nr_frames)
		return -EINVAL;
	h = evprof__hash_u64((uint64_t)(uint32_t)parent << 32 |
			     (uint32_t)frame);
	idx = evprof__hset_find(&p->stack_set, h, stack_eq, p, &st);
	if (idx >= 0)
		return (int)idx;
	/* A new stack's index exceeds its parent's: parents come first. */
	if (p->nr_stacks >= INT32_MAX ||
	    evprof__grow(&p->stacks, &p->cap_stacks, p->nr_stacks + 1,
			 sizeof(*p->stacks)) ||
	    evprof__hset_add(&p->stack_set, h, (uint32_t)p->nr_stacks))
		return -ENOMEM;
	p->stacks[p->nr_stacks] = st;
	return (int)p->nr_stacks++;
}

void evprof__intern_free(struct evprof_profile *p)
{
	size_t i;

	for (i = 0; i < p->nr_libs; i++) {
		free(p->libs[i].path);
		free(p->libs[i].arch);
	}
	evprof__hset_free(&p->str_set);
	evprof__hset_free(&p->lib_set);
	evprof__hset_free(&p->func_set);
	evprof__hset_free(&p->frame_set);
	evprof__hset_free(&p->stack_set);
	free(p->chars);
	free(p->str_off);
	free(p->libs);
	free(p->funcs);
	free(p->frames);
	free(p->stacks);
}
