/* SPDX-License-Identifier: MIT */
/*
 * fuzz_session's reader of the pprof files evprof writes: zlib's gzread,
 * then a protobuf decoder of its own for what google/pprof's
 * profile.proto says of a Profile (1: sample_type {1: type, 2: unit},
 * 2: sample {1: location_id, 2: value, 3: label {1: key, 2: str, 3: num}},
 * 6: string_table), not evprof's pprof loader. It sums every value column
 * per thread, by each sample's tid label.
 */
#ifndef EVPROF_FUZZ_PPROF_READER_H
#define EVPROF_FUZZ_PPROF_READER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#define PP_MAX_TYPES 16

struct pp_cur {
	const uint8_t *p, *end;
};

struct pp_thread {
	uint32_t tid;
	uint64_t sum[PP_MAX_TYPES];
};

struct pp_profile {
	uint8_t *raw; /* the file, inflated */
	size_t len;
	struct pp_cur *strs; /* string_table */
	size_t nr_strs;
	size_t nr_types;
	uint64_t type[PP_MAX_TYPES], unit[PP_MAX_TYPES]; /* string indices */
	struct pp_thread *th;
	size_t nr_th;
	const char *err; /* what was wrong, NULL: nothing */
};

static inline bool pp_varint(struct pp_cur *c, uint64_t *v)
{
	*v = 0;
	for (unsigned s = 0; s < 64 && c->p < c->end; s += 7) {
		uint8_t b = *c->p++;

		*v |= (uint64_t)(b & 0x7f) << s;
		if (!(b & 0x80))
			return true;
	}
	return false;
}

/*
 * The next field of c: its number and wire type, its varint in *v or its
 * bytes in *sub (LEN). Returns 1, 0 at the end, -1 when malformed.
 */
static inline int pp_field(struct pp_cur *c, uint64_t *field, int *wire,
			   uint64_t *v, struct pp_cur *sub)
{
	uint64_t key;

	if (c->p == c->end)
		return 0;
	if (!pp_varint(c, &key))
		return -1;
	*field = key >> 3;
	*wire = (int)(key & 7);
	*v = 0;
	switch (*wire) {
	case 0:
		return pp_varint(c, v) ? 1 : -1;
	case 1:
	case 5:
		if ((uint64_t)(c->end - c->p) < (*wire == 1 ? 8u : 4u))
			return -1;
		c->p += *wire == 1 ? 8 : 4;
		return 1;
	case 2:
		if (!pp_varint(c, v) || *v > (uint64_t)(c->end - c->p))
			return -1;
		*sub = (struct pp_cur){c->p, c->p + *v};
		c->p += *v;
		return 1;
	}
	return -1;
}

static inline bool pp_is(const struct pp_profile *pp, uint64_t idx,
			 const char *s)
{
	return idx < pp->nr_strs &&
	       (size_t)(pp->strs[idx].end - pp->strs[idx].p) == strlen(s) &&
	       !memcmp(pp->strs[idx].p, s, strlen(s));
}

static inline struct pp_thread *pp_thread(struct pp_profile *pp, uint32_t tid)
{
	struct pp_thread *t;

	for (size_t i = 0; i < pp->nr_th; i++)
		if (pp->th[i].tid == tid)
			return &pp->th[i];
	t = realloc(pp->th, (pp->nr_th + 1) * sizeof(*t));
	if (!t)
		abort();
	pp->th = t;
	t += pp->nr_th++;
	memset(t, 0, sizeof(*t));
	t->tid = tid;
	return t;
}

/* Whether a Label's key is key; *num its num (proto3 leaves 0 out). */
static inline bool pp_label(const struct pp_profile *pp, struct pp_cur c,
			    const char *key, uint64_t *num)
{
	uint64_t f, v, k = 0;
	struct pp_cur sub;
	int wire;

	*num = 0;
	while (pp_field(&c, &f, &wire, &v, &sub) > 0) {
		if (f == 1 && !wire)
			k = v;
		else if (f == 3 && !wire)
			*num = v;
	}
	return pp_is(pp, k, key);
}

/* A ValueType: its type and unit string indices. */
static inline void pp_value_type(struct pp_cur c, uint64_t *type,
				 uint64_t *unit)
{
	uint64_t f, v;
	struct pp_cur sub;
	int wire;

	*type = *unit = 0;
	while (pp_field(&c, &f, &wire, &v, &sub) > 0) {
		if (f == 1 && !wire)
			*type = v;
		else if (f == 2 && !wire)
			*unit = v;
	}
}

/* A Sample: its values added to its thread's sums. */
static inline const char *pp_sample(struct pp_profile *pp, struct pp_cur c)
{
	uint64_t f, v, vals[PP_MAX_TYPES], tid = 0, num;
	size_t nv = 0;
	bool has_tid = false, has_pid = false, has_thread = false;
	struct pp_thread *t;
	struct pp_cur sub;
	int ret, wire;

	while ((ret = pp_field(&c, &f, &wire, &v, &sub)) > 0) {
		if (f == 2 && (wire == 0 || wire == 2)) {
			/* values: packed, or one varint per field */
			while (wire == 2 && sub.p < sub.end) {
				if (!pp_varint(&sub, &v))
					return "a bad packed value";
				if (nv == PP_MAX_TYPES)
					return "too many values";
				vals[nv++] = v;
			}
			if (wire == 0 && nv < PP_MAX_TYPES)
				vals[nv++] = v;
		} else if (f == 3 && wire == 2) {
			if (pp_label(pp, sub, "tid", &num)) {
				has_tid = true;
				tid = num;
			}
			has_pid |= pp_label(pp, sub, "pid", &num);
			has_thread |= pp_label(pp, sub, "thread", &num);
		}
	}
	if (ret < 0)
		return "a bad Sample";
	if (nv != pp->nr_types)
		return "a sample's values are not one per sample type";
	if (!has_tid || !has_pid || !has_thread)
		return "a sample without its pid, tid and thread labels";
	t = pp_thread(pp, (uint32_t)tid);
	for (size_t i = 0; i < nv; i++)
		t->sum[i] += vals[i];
	return NULL;
}

/* Reads the pprof file at path into *pp; pp->err says what was wrong. */
static inline void pp_read(struct pp_profile *pp, const char *path)
{
	gzFile f = gzopen(path, "rb");
	size_t cap = 1 << 16;
	struct pp_cur c, sub;
	uint64_t field, v;
	int n, ret, wire;

	memset(pp, 0, sizeof(*pp));
	pp->raw = malloc(cap);
	if (!f || !pp->raw)
		abort();
	while ((n = gzread(f, pp->raw + pp->len, (unsigned)(cap - pp->len))) >
	       0) {
		pp->len += (size_t)n;
		if (pp->len == cap && !(pp->raw = realloc(pp->raw, cap *= 2)))
			abort();
	}
	if (n < 0 || gzclose(f) != Z_OK) {
		pp->err = "not gzip";
		return;
	}
	/* Strings and types first: the writer puts the strings last. */
	c = (struct pp_cur){pp->raw, pp->raw + pp->len};
	while ((ret = pp_field(&c, &field, &wire, &v, &sub)) > 0) {
		if (field == 6 && wire == 2) {
			pp->strs =
			    realloc(pp->strs, (pp->nr_strs + 1) * sizeof(sub));
			if (!pp->strs)
				abort();
			pp->strs[pp->nr_strs++] = sub;
		} else if (field == 1 && wire == 2) {
			if (pp->nr_types == PP_MAX_TYPES) {
				pp->err = "too many sample types";
				return;
			}
			pp_value_type(sub, &pp->type[pp->nr_types],
				      &pp->unit[pp->nr_types]);
			pp->nr_types++;
		}
	}
	if (ret < 0 || !pp->nr_strs || pp->strs[0].p != pp->strs[0].end) {
		pp->err = ret < 0 ? "bad protobuf" : "string_table[0] not \"\"";
		return;
	}
	c = (struct pp_cur){pp->raw, pp->raw + pp->len};
	while (!pp->err && pp_field(&c, &field, &wire, &v, &sub) > 0)
		if (field == 2 && wire == 2)
			pp->err = pp_sample(pp, sub);
}

static inline void pp_free(struct pp_profile *pp)
{
	free(pp->raw);
	free(pp->strs);
	free(pp->th);
}

#endif /* EVPROF_FUZZ_PPROF_READER_H */
