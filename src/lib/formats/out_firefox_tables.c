// SPDX-License-Identifier: MIT
/*
 * The Firefox writer's tables shared by all threads (profile.shared):
 * stringArray (the profile's strings, then the waits' names), stackTable,
 * frameTable, funcTable, resourceTable, nativeSymbols and sources, with
 * what they derive at write time: one source per file a function names,
 * one native symbol per (lib, symbol address, name).
 */
#include <errno.h>
#include <stdlib.h>

#include "out_firefox.h"

struct sym_key {
	int32_t lib;
	uint64_t address;
	uint32_t name;
};

static int build_sources(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	size_t i;

	c->source_of = malloc((p->nr_strs + 1) * sizeof(*c->source_of));
	c->sources = malloc((p->nr_funcs + 1) * sizeof(*c->sources));
	if (!c->source_of || !c->sources)
		return -ENOMEM;
	for (i = 0; i < p->nr_strs; i++)
		c->source_of[i] = -1;
	for (i = 0; i < p->nr_funcs; i++) {
		int32_t f = p->funcs[i].file;

		if (f >= 0 && c->source_of[f] < 0) {
			c->source_of[f] = (int32_t)c->nr_sources;
			c->sources[c->nr_sources++] = (uint32_t)f;
		}
	}
	return 0;
}

/* Symbol map keys: a frame index, or PROBE for c->probe. */
#define PROBE (-1L)

static struct sym_key sym_key(const struct fx_ctx *c, long key)
{
	const struct evprof__frame *f;

	if (key == PROBE)
		return *c->probe;
	f = &c->p->frames[key];
	return (struct sym_key){f->lib, f->symbol_address,
				c->p->funcs[f->func].name};
}

static size_t sym_hash(long key, void *ctx)
{
	struct sym_key k = sym_key(ctx, key);
	uint64_t id[2] = {(uint64_t)(uint32_t)k.lib << 32 | k.name, k.address};

	return evprof__hash_mem(EVPROF_HASH_INIT, id, sizeof(id));
}

static bool sym_eq(long a, long b, void *ctx)
{
	struct sym_key x = sym_key(ctx, a), y = sym_key(ctx, b);

	return x.lib == y.lib && x.address == y.address && x.name == y.name;
}

/* One native symbol per (lib, symbol address, name) among known symbols. */
static int build_symbols(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof_hashmap *set = evprof__hashmap_new(sym_hash, sym_eq, c);
	size_t i;
	int err = 0;

	c->sym_of = malloc((p->nr_frames + 1) * sizeof(*c->sym_of));
	c->syms = malloc((p->nr_frames + 1) * sizeof(*c->syms));
	if (!set || !c->sym_of || !c->syms) {
		evprof__hashmap_free(set);
		return -ENOMEM;
	}
	for (i = 0; i < p->nr_frames; i++) {
		const struct evprof__frame *f = &p->frames[i];
		struct sym_key k = {f->lib, f->symbol_address,
				    p->funcs[f->func].name};
		long idx;

		c->sym_of[i] = -1;
		if (f->lib < 0 || !f->symbol_size)
			continue;
		c->probe = &k;
		if (!evprof__hashmap_find(set, PROBE, &idx)) {
			/* Keyed by this, the symbol's first frame. */
			idx = (long)c->nr_syms;
			if (evprof__hashmap_add(set, (long)i, idx)) {
				err = -ENOMEM;
				break;
			}
			c->syms[c->nr_syms++] = (uint32_t)i;
		}
		c->sym_of[i] = (int32_t)idx;
	}
	evprof__hashmap_free(set);
	return err;
}

static void key_len(struct evprof__json *j, size_t n)
{
	evprof__json_key(j, "length");
	evprof__json_u64(j, n);
}

/* "key": [v, v, ...] with n copies of a constant token. */
static void const_col(struct evprof__json *j, const char *key, size_t n,
		      const char *tok)
{
	size_t i;

	evprof__json_key(j, key);
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_raw(j, tok);
	evprof__json_arr_end(j);
}

static void write_stack_table(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i;

	evprof__json_key(j, "stackTable");
	evprof__json_obj(j);
	key_len(j, p->nr_stacks);
	evprof__json_key(j, "frame");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_stacks; i++)
		evprof__json_u64(j, (uint64_t)p->stacks[i].frame);
	evprof__json_arr_end(j);
	/* Interning puts parents before children, so offsets are > 0. */
	evprof__json_key(j, "prefixOffset");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_stacks; i++)
		evprof__json_u64(j, p->stacks[i].parent < 0
					? 0
					: i - (size_t)p->stacks[i].parent);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
}

static void write_frame_table(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i, n = p->nr_frames;

	evprof__json_key(j, "frameTable");
	evprof__json_obj(j);
	key_len(j, n);
	evprof__json_key(j, "address");
	evprof__json_arr(j);
	for (i = 0; i < n; i++) {
		if (p->frames[i].lib >= 0)
			evprof__json_u64(j, p->frames[i].address);
		else
			evprof__json_raw(j, "-1");
	}
	evprof__json_arr_end(j);
	evprof__json_key(j, "inlineDepth");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->frames[i].inline_depth);
	evprof__json_arr_end(j);
	evprof__json_key(j, "category");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->frames[i].kernel ? FX_CAT_KERNEL
							: FX_CAT_USER);
	evprof__json_arr_end(j);
	const_col(j, "subcategory", n, "0");
	evprof__json_key(j, "func");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->frames[i].func);
	evprof__json_arr_end(j);
	evprof__json_key(j, "nativeSymbol");
	evprof__json_arr(j);
	for (i = 0; i < n; i++) {
		if (c->sym_of[i] >= 0)
			evprof__json_u64(j, (uint64_t)c->sym_of[i]);
		else
			evprof__json_null(j);
	}
	evprof__json_arr_end(j);
	const_col(j, "innerWindowID", n, "0");
	evprof__json_key(j, "line");
	evprof__json_arr(j);
	for (i = 0; i < n; i++) {
		if (p->frames[i].line)
			evprof__json_u64(j, p->frames[i].line);
		else
			evprof__json_null(j);
	}
	evprof__json_arr_end(j);
	const_col(j, "column", n, "null");
	const_col(j, "originalLocation", n, "null");
	evprof__json_obj_end(j);
}

static void write_func_table(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i, n = p->nr_funcs;

	evprof__json_key(j, "funcTable");
	evprof__json_obj(j);
	key_len(j, n);
	evprof__json_key(j, "name");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->funcs[i].name);
	evprof__json_arr_end(j);
	const_col(j, "isJS", n, "false");
	const_col(j, "relevantForJS", n, "false");
	/* Resource i is lib i. */
	evprof__json_key(j, "resource");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_i64(j, p->funcs[i].lib);
	evprof__json_arr_end(j);
	evprof__json_key(j, "source");
	evprof__json_arr(j);
	for (i = 0; i < n; i++) {
		if (p->funcs[i].file >= 0)
			evprof__json_u64(
			    j, (uint64_t)c->source_of[p->funcs[i].file]);
		else
			evprof__json_null(j);
	}
	evprof__json_arr_end(j);
	/* The function's first line, where DWARF names it. */
	evprof__json_key(j, "lineNumber");
	evprof__json_arr(j);
	for (i = 0; i < n; i++) {
		if (p->funcs[i].start_line)
			evprof__json_u64(j, p->funcs[i].start_line);
		else
			evprof__json_null(j);
	}
	evprof__json_arr_end(j);
	const_col(j, "columnNumber", n, "null");
	const_col(j, "originalLocation", n, "null");
	evprof__json_obj_end(j);
}

static void write_other_tables(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i, n = p->nr_libs;

	evprof__json_key(j, "resourceTable");
	evprof__json_obj(j);
	key_len(j, n);
	evprof__json_key(j, "lib");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, i);
	evprof__json_arr_end(j);
	evprof__json_key(j, "name");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->libs[i].name);
	evprof__json_arr_end(j);
	const_col(j, "host", n, "null");
	const_col(j, "type", n, "1"); /* library */
	evprof__json_obj_end(j);

	n = c->nr_syms;
	evprof__json_key(j, "nativeSymbols");
	evprof__json_obj(j);
	key_len(j, n);
	evprof__json_key(j, "libIndex");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, (uint64_t)p->frames[c->syms[i]].lib);
	evprof__json_arr_end(j);
	evprof__json_key(j, "address");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->frames[c->syms[i]].symbol_address);
	evprof__json_arr_end(j);
	evprof__json_key(j, "name");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->funcs[p->frames[c->syms[i]].func].name);
	evprof__json_arr_end(j);
	evprof__json_key(j, "functionSize");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, p->frames[c->syms[i]].symbol_size);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);

	n = c->nr_sources;
	evprof__json_key(j, "sources");
	evprof__json_obj(j);
	key_len(j, n);
	const_col(j, "id", n, "null");
	evprof__json_key(j, "filename");
	evprof__json_arr(j);
	for (i = 0; i < n; i++)
		evprof__json_u64(j, c->sources[i]);
	evprof__json_arr_end(j);
	const_col(j, "startLine", n, "1");
	const_col(j, "startColumn", n, "1");
	const_col(j, "sourceMapURL", n, "null");
	const_col(j, "content", n, "null");
	evprof__json_obj_end(j);

	evprof__json_key(j, "sourceLocationTable");
	evprof__json_raw(
	    j, "{\"length\":0,\"source\":[],\"line\":[],\"column\":[]}");
}

void evprof__fx_write_shared(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i;

	evprof__json_key(j, "shared");
	evprof__json_obj(j);
	evprof__json_key(j, "stringArray");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_strs; i++)
		evprof__json_str(j, evprof__pstr(p, (uint32_t)i));
	evprof__fx_write_wait_names(c);
	evprof__json_arr_end(j);
	write_stack_table(c);
	write_frame_table(c);
	write_func_table(c);
	write_other_tables(c);
	evprof__json_obj_end(j);
}

int evprof__fx_build_tables(struct fx_ctx *c)
{
	return build_sources(c) ?: build_symbols(c);
}
