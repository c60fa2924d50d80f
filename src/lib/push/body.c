// SPDX-License-Identifier: MIT
/*
 * The bytes of a push to Pyroscope's /ingest. Facts from grafana/pyroscope
 * (2026-08): pkg/ingester/pyroscope/ingest_handler.go picks the parser from
 * format= before Content-Type; pkg/og/convert/pprof/profile.go reads the
 * "profile" and "sample_type_config" form fields; api/model/labelset
 * parses name= as APP{k=v,...} without escapes; pkg/og/storage/tree/pprof.go
 * SampleTypeConfig has units, display-name, aggregation, sampled.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "body.h"

#define MAX_TYPES 64

void evprof__buf_add(struct evprof__buf *b, const void *d, size_t n)
{
	if (b->err || !n)
		return;
	if (b->len + n + 1 > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		char *nb;

		while (cap < b->len + n + 1)
			cap *= 2;
		nb = realloc(b->b, cap);
		if (!nb) {
			b->err = -ENOMEM;
			return;
		}
		b->b = nb;
		b->cap = cap;
	}
	memcpy(b->b + b->len, d, n);
	b->len += n;
	b->b[b->len] = 0;
}

void evprof__buf_str(struct evprof__buf *b, const char *s)
{
	evprof__buf_add(b, s, strlen(s));
}

static bool name_char(char c, bool app)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '_' || c == '.' ||
	       (app && (c == '-' || c == '/'));
}

int evprof__push_check_name(const char *app, const char *const *labels,
			    char *why, size_t why_len)
{
	size_t i, n = app ? strlen(app) : 0;

	if (!n || n > 100) {
		snprintf(why, why_len,
			 "app name must have 1 to 100 characters");
		return -EINVAL;
	}
	for (i = 0; i < n; i++) {
		if (!name_char(app[i], true)) {
			snprintf(why, why_len,
				 "app name '%s': character '%c' not allowed "
				 "(A-Z a-z 0-9 _ . - /)",
				 app, app[i]);
			return -EINVAL;
		}
	}
	for (; labels && *labels; labels++) {
		const char *l = *labels, *eq = strchr(l, '=');
		size_t vl;

		if (!eq || eq == l) {
			snprintf(why, why_len, "label '%s': not key=value", l);
			return -EINVAL;
		}
		for (i = 0; l + i < eq; i++) {
			if (!name_char(l[i], false)) {
				snprintf(why, why_len,
					 "label '%s': character '%c' not "
					 "allowed in a key (A-Z a-z 0-9 _ .)",
					 l, l[i]);
				return -EINVAL;
			}
		}
		if (!strncmp(l, "__name__=", 9)) {
			snprintf(why, why_len, "label '%s': reserved key", l);
			return -EINVAL;
		}
		vl = strlen(eq + 1);
		if (!vl || strpbrk(eq + 1, ",{}=") || eq[1] == ' ' ||
		    eq[vl] == ' ') {
			snprintf(why, why_len,
				 "label '%s': the value must be non-empty, "
				 "without , { } = or spaces at its ends",
				 l);
			return -EINVAL;
		}
	}
	return 0;
}

static void put_escaped(struct evprof__buf *out, const char *s)
{
	static const char hex[] = "0123456789ABCDEF";

	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		char e[3] = {'%', hex[c >> 4], hex[c & 15]};

		if (name_char((char)c, true) && c != '/')
			evprof__buf_add(out, s, 1);
		else
			evprof__buf_add(out, e, 3);
	}
}

void evprof__push_url(struct evprof__buf *out, const char *base,
		      const char *app, const char *const *labels,
		      uint64_t start_ns, uint64_t end_ns,
		      unsigned int sample_rate)
{
	size_t bl = strlen(base);
	uint64_t from = start_ns / 1000000000ull;
	uint64_t until = (end_ns + 999999999ull) / 1000000000ull;
	char num[96];

	while (bl && base[bl - 1] == '/')
		bl--;
	evprof__buf_add(out, base, bl);
	evprof__buf_str(out, "/ingest?name=");
	put_escaped(out, app);
	put_escaped(out, "{");
	for (const char *const *l = labels; l && *l; l++) {
		if (l != labels)
			put_escaped(out, ",");
		put_escaped(out, *l);
	}
	put_escaped(out, "}");
	if (until <= from)
		until = from + 1;
	snprintf(num, sizeof(num), "&from=%llu&until=%llu&spyName=evprof",
		 (unsigned long long)from, (unsigned long long)until);
	evprof__buf_str(out, num);
	if (sample_rate) {
		snprintf(num, sizeof(num), "&sampleRate=%u", sample_rate);
		evprof__buf_str(out, num);
	}
}

/* ---- reading the pprof's sample types ----------------------------------- */

struct pbr {
	const uint8_t *p, *end;
	bool bad;
};

static uint64_t rd_varint(struct pbr *r)
{
	uint64_t v = 0;

	for (int sh = 0; sh < 64; sh += 7) {
		if (r->p >= r->end)
			break;
		v |= (uint64_t)(*r->p & 0x7f) << sh;
		if (!(*r->p++ & 0x80))
			return v;
	}
	r->bad = true;
	return 0;
}

/*
 * Next field of the message in r: its number, wire type and (for length-
 * delimited fields) its bytes in *sub. Returns false at the end or on
 * malformed bytes (r->bad).
 */
static bool rd_field(struct pbr *r, uint32_t *field, uint64_t *v,
		     struct pbr *sub)
{
	uint64_t key, n;

	if (r->bad || r->p >= r->end)
		return false;
	key = rd_varint(r);
	*field = (uint32_t)(key >> 3);
	switch (key & 7) {
	case 0:
		*v = rd_varint(r);
		break;
	case 1:
	case 5:
		n = (key & 7) == 1 ? 8 : 4;
		if ((uint64_t)(r->end - r->p) < n)
			r->bad = true;
		else
			r->p += n;
		break;
	case 2:
		n = rd_varint(r);
		if (r->bad || n > (uint64_t)(r->end - r->p)) {
			r->bad = true;
			break;
		}
		sub->p = r->p;
		sub->end = r->p + n;
		sub->bad = false;
		r->p += n;
		break;
	default:
		r->bad = true;
	}
	if (!*field)
		r->bad = true;
	return !r->bad;
}

struct vtype {
	uint64_t type, unit; /* string indices */
	const uint8_t *ts, *us;
	size_t tl, ul;
};

static const char *units_of(const struct vtype *t)
{
	/* Pyroscope's units vocabulary (pkg/og/storage/metadata). */
	if (t->ul == 5 && !memcmp(t->us, "bytes", 5))
		return "bytes";
	if (t->ul == 11 && !memcmp(t->us, "nanoseconds", 11))
		return "nanoseconds";
	return "samples"; /* counts: samples, page faults, cycles, ... */
}

static void put_json_str(struct evprof__buf *out, const uint8_t *s, size_t n)
{
	evprof__buf_str(out, "\"");
	for (size_t i = 0; i < n; i++) {
		char e[8];

		if (s[i] == '"' || s[i] == '\\' || s[i] < 0x20) {
			snprintf(e, sizeof(e), "\\u%04x", s[i]);
			evprof__buf_str(out, e);
		} else {
			evprof__buf_add(out, s + i, 1);
		}
	}
	evprof__buf_str(out, "\"");
}

int evprof__push_type_config(struct evprof__buf *out, const uint8_t *pprof,
			     size_t len)
{
	struct vtype t[MAX_TYPES];
	struct pbr r = {pprof, pprof + len, false}, sub, vt;
	uint64_t v, str = 0;
	uint32_t f, g;
	int nr = 0, i;

	while (rd_field(&r, &f, &v, &sub)) {
		if (f != 1)
			continue;
		if (nr == MAX_TYPES)
			return -EINVAL;
		memset(&t[nr], 0, sizeof(t[nr]));
		while (rd_field(&sub, &g, &v, &vt)) {
			if (g == 1)
				t[nr].type = v;
			else if (g == 2)
				t[nr].unit = v;
		}
		if (sub.bad)
			return -EINVAL;
		nr++;
	}
	if (r.bad || !nr)
		return -EINVAL;
	r = (struct pbr){pprof, pprof + len, false};
	while (rd_field(&r, &f, &v, &sub)) {
		if (f != 6)
			continue;
		for (i = 0; i < nr; i++) {
			if (t[i].type == str) {
				t[i].ts = sub.p;
				t[i].tl = (size_t)(sub.end - sub.p);
			}
			if (t[i].unit == str) {
				t[i].us = sub.p;
				t[i].ul = (size_t)(sub.end - sub.p);
			}
		}
		str++;
	}
	if (r.bad)
		return -EINVAL;
	evprof__buf_str(out, "{");
	for (i = 0; i < nr; i++) {
		if (!t[i].tl) /* index out of the table, or "" */
			return -EINVAL;
		evprof__buf_str(out, i ? ",\n" : "\n");
		put_json_str(out, t[i].ts, t[i].tl);
		evprof__buf_str(out, ":{\"units\":\"");
		evprof__buf_str(out, units_of(&t[i]));
		evprof__buf_str(out, "\",\"aggregation\":\"sum\",");
		evprof__buf_str(out, "\"display-name\":");
		put_json_str(out, t[i].ts, t[i].tl);
		/* Only the sample count is a count of samples taken. */
		if (t[i].tl == 7 && !memcmp(t[i].ts, "samples", 7))
			evprof__buf_str(out, ",\"sampled\":true");
		evprof__buf_str(out, "}");
	}
	evprof__buf_str(out, "\n}\n");
	return out->err ? out->err : nr;
}

int evprof__push_gzip(struct evprof__buf *out, const void *d, size_t n)
{
	z_stream z = {0};
	uLong bound;
	int rc;

	if (deflateInit2(&z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY))
		return -ENOMEM;
	bound = deflateBound(&z, (uLong)n) + 32;
	if (!out->err && out->len + bound + 1 > out->cap) {
		char *nb = realloc(out->b, out->len + bound + 1);

		if (!nb)
			out->err = -ENOMEM;
		else {
			out->b = nb;
			out->cap = out->len + bound + 1;
		}
	}
	if (out->err) {
		deflateEnd(&z);
		return out->err;
	}
	z.next_in = (Bytef *)(uintptr_t)d;
	z.avail_in = (uInt)n;
	z.next_out = (Bytef *)out->b + out->len;
	z.avail_out = (uInt)bound;
	rc = deflate(&z, Z_FINISH);
	if (rc == Z_STREAM_END)
		out->len += z.total_out;
	deflateEnd(&z);
	return rc == Z_STREAM_END ? 0 : -ENOMEM;
}

static void put_part(struct evprof__buf *out, const char *boundary,
		     const char *name, const char *file, const char *type,
		     const struct evprof__buf *data)
{
	evprof__buf_str(out, "--");
	evprof__buf_str(out, boundary);
	evprof__buf_str(out, "\r\nContent-Disposition: form-data; name=\"");
	evprof__buf_str(out, name);
	evprof__buf_str(out, "\"; filename=\"");
	evprof__buf_str(out, file);
	evprof__buf_str(out, "\"\r\nContent-Type: ");
	evprof__buf_str(out, type);
	evprof__buf_str(out, "\r\n\r\n");
	evprof__buf_add(out, data->b, data->len);
	evprof__buf_str(out, "\r\n");
}

void evprof__push_form(struct evprof__buf *out, const char *boundary,
		       const struct evprof__buf *gz,
		       const struct evprof__buf *json)
{
	put_part(out, boundary, "profile", "profile.pprof.gz",
		 "application/octet-stream", gz);
	put_part(out, boundary, "sample_type_config", "sample_type_config.json",
		 "application/json", json);
	evprof__buf_str(out, "--");
	evprof__buf_str(out, boundary);
	evprof__buf_str(out, "--\r\n");
}
