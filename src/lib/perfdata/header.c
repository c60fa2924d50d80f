// SPDX-License-Identifier: MIT
/*
 * What describes a perf.data file: the file header, the attrs with their
 * ids, the feature sections (file mode, after the data) and the user
 * records that carry the same in pipe mode (HEADER_ATTR, HEADER_FEATURE)
 * or complete it (ID_INDEX, EVENT_UPDATE, THREAD_MAP, HEADER_BUILD_ID).
 * Layouts: tools/perf/Documentation/perf.data-file-format.txt.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define PERF_MAGIC2    0x32454c4946524550ULL /* "PERFILE2" little-endian */
#define PERF_MAGIC2_SW 0x50455246494c4532ULL /* the same, other-endian */
#define FILE_HEADER    104
#define PIPE_HEADER    16
/* EVENT_UPDATE types (tools/lib/perf/include/perf/event.h). */
#define EVENT_UPDATE_NAME 2
/* HEADER_BUILD_ID: misc bit saying the size byte is valid. */
#define MISC_BUILD_ID_SIZE (1 << 15)
/* Most bytes of attrs, ids and features we read into memory. */
#define META_MAX ((size_t)64 << 20)

static int bad(struct pd_header *h, uint64_t off, const char *what)
{
	snprintf(h->err, sizeof(h->err), "%s at offset 0x%" PRIx64, what, off);
	return -EVPROF_ERR_BAD_PERFDATA;
}

void evprof__pd_header_free(struct pd_header *h)
{
	for (uint32_t i = 0; i < h->nr_attrs; i++) {
		free(h->attrs[i].name);
		EVPROF_VEC_FREE(&h->attrs[i].ids);
	}
	for (size_t i = 0; i < h->bids.n; i++)
		free(h->bids.a[i].path);
	EVPROF_VEC_FREE(&h->bids);
	EVPROF_VEC_FREE(&h->idx);
	evprof__hashmap_free(h->by_id);
	free(h->hostname);
	free(h->osrelease);
	free(h->version);
	free(h->arch);
	free(h->cpudesc);
	free(h->cmdline);
}

/* ---- attrs -------------------------------------------------------------- */

static int add_id(struct pd_header *h, uint32_t a, uint64_t id)
{
	if (!h->by_id) {
		h->by_id = evprof__hashmap_new(evprof__hashmap_u64_hash,
					       evprof__hashmap_u64_equal, NULL);
		if (!h->by_id)
			return -ENOMEM;
	}
	/* An id given twice keeps its first attr. */
	if (evprof__hashmap_find(h->by_id, (long)id, NULL))
		return 0;
	if (EVPROF_VEC_PUSH(&h->attrs[a].ids, id) ||
	    evprof__hashmap_add(h->by_id, (long)id, (long)a))
		return -ENOMEM;
	return 0;
}

/* An attr of len bytes (its own size field says how many are meant). */
static int add_attr(struct pd_header *h, const uint8_t *b, size_t len,
		    uint64_t off)
{
	struct pd_attr *a;
	uint32_t size;

	if (h->nr_attrs >= PD_MAX_ATTRS)
		return bad(h, off, "more than 256 events");
	if (len < PERF_ATTR_SIZE_VER0)
		return bad(h, off, "attr shorter than 64 bytes");
	size = evprof__load_u32(b + 4);
	if (!size)
		size = PERF_ATTR_SIZE_VER0;
	if (size < len)
		len = size;
	a = &h->attrs[h->nr_attrs++];
	memset(a, 0, sizeof(*a));
	/* Newer fields than ours are dropped, older files zero-extended. */
	memcpy(&a->attr, b, len < sizeof(a->attr) ? len : sizeof(a->attr));
	evprof_record_fmt__from_attr(&a->fmt, &a->attr);
	a->role = PD_ROLE_NONE;
	return 0;
}

struct pd_attr *evprof__pd_attr_of(struct pd_header *h, uint64_t id)
{
	long a;

	/* An id never changes attr once added: the last answer holds. */
	if (h->last_attr && h->last_id == id)
		return h->last_attr;
	if (!h->by_id || !evprof__hashmap_find(h->by_id, (long)id, &a))
		return NULL;
	h->last_id = id;
	h->last_attr = &h->attrs[a];
	return h->last_attr;
}

static const char *const sw_names[] = {
    "cpu-clock",	"task-clock",	"page-faults",	"context-switches",
    "cpu-migrations",	"minor-faults", "major-faults", "alignment-faults",
    "emulation-faults", "dummy",	"bpf-output",	"cgroup-switches",
};
static const char *const hw_names[] = {
    "cycles",
    "instructions",
    "cache-references",
    "cache-misses",
    "branches",
    "branch-misses",
    "bus-cycles",
    "stalled-cycles-frontend",
    "stalled-cycles-backend",
    "ref-cycles",
};

const char *evprof__pd_attr_name(struct pd_attr *a)
{
	char buf[64];
	uint64_t c = a->attr.config;

	if (a->name)
		return a->name;
	if (a->attr.type == PERF_TYPE_SOFTWARE &&
	    c < sizeof(sw_names) / sizeof(sw_names[0]))
		snprintf(buf, sizeof(buf), "%s", sw_names[c]);
	else if (a->attr.type == PERF_TYPE_HARDWARE &&
		 c < sizeof(hw_names) / sizeof(hw_names[0]))
		snprintf(buf, sizeof(buf), "%s", hw_names[c]);
	else
		snprintf(buf, sizeof(buf), "event-%u:0x%" PRIx64, a->attr.type,
			 c);
	a->name = strdup(buf);
	return a->name ? a->name : "event";
}

static void set_name(struct pd_attr *a, const char *name, size_t max)
{
	size_t n = strnlen(name, max);

	if (a->name || !n)
		return;
	a->name = strndup(name, n);
}

/* ---- feature sections --------------------------------------------------- */

/* A perf string {u32 len; char s[len]} at *pos; NULL when malformed. */
static const char *str_at(const uint8_t *b, size_t len, size_t *pos, size_t *n)
{
	uint32_t l;

	if (len - *pos < 4)
		return NULL;
	l = evprof__load_u32(b + *pos);
	if (l > len - *pos - 4)
		return NULL;
	*n = strnlen((const char *)b + *pos + 4, l);
	*pos += 4 + (size_t)l;
	return (const char *)b + *pos - l;
}

static int feat_string(char **dst, const uint8_t *b, size_t len)
{
	size_t pos = 0, n;
	const char *s = str_at(b, len, &pos, &n);

	if (!s)
		return -EVPROF_ERR_BAD_PERFDATA;
	free(*dst);
	*dst = strndup(s, n);
	return *dst ? 0 : -ENOMEM;
}

static int feat_cmdline(struct pd_header *h, const uint8_t *b, size_t len)
{
	size_t pos = 4, n, total = 0;
	uint32_t nr;
	char *out;

	if (len < 4)
		return -EVPROF_ERR_BAD_PERFDATA;
	nr = evprof__load_u32(b);
	out = calloc(1, len + 1);
	if (!out)
		return -ENOMEM;
	for (uint32_t i = 0; i < nr; i++) {
		const char *s = str_at(b, len, &pos, &n);

		if (!s) {
			free(out);
			return -EVPROF_ERR_BAD_PERFDATA;
		}
		if (total + n + 1 > len)
			break;
		if (total)
			out[total++] = ' ';
		memcpy(out + total, s, n);
		total += n;
	}
	free(h->cmdline);
	h->cmdline = out;
	return 0;
}

static int feat_event_desc(struct pd_header *h, const uint8_t *b, size_t len)
{
	uint32_t nr, asz;
	size_t pos = 8, n;

	if (len < 8)
		return -EVPROF_ERR_BAD_PERFDATA;
	nr = evprof__load_u32(b);
	asz = evprof__load_u32(b + 4);
	for (uint32_t i = 0; i < nr; i++) {
		const char *name;
		uint32_t nr_ids;
		struct pd_attr *a = NULL;

		if (asz > len - pos || len - pos - asz < 4)
			return -EVPROF_ERR_BAD_PERFDATA;
		pos += asz;
		nr_ids = evprof__load_u32(b + pos);
		pos += 4;
		name = str_at(b, len, &pos, &n);
		if (!name || nr_ids > (len - pos) / 8)
			return -EVPROF_ERR_BAD_PERFDATA;
		if (nr_ids)
			a = evprof__pd_attr_of(h, evprof__load_u64(b + pos));
		else if (i < h->nr_attrs)
			a = &h->attrs[i];
		if (a)
			set_name(a, name, n);
		pos += (size_t)nr_ids * 8;
	}
	return 0;
}

/* One build id entry: {header; s32 pid; u8 id[24]; char filename[]}. */
static int add_buildid(struct pd_header *h, const uint8_t *b, size_t len)
{
	uint16_t misc = (uint16_t)(b[4] | b[5] << 8);
	struct pd_buildid e = {.len = 20};
	size_t n;

	if (len < 8 + 4 + 24 + 1)
		return -EVPROF_ERR_BAD_PERFDATA;
	memcpy(e.id, b + 12, 20);
	if (misc & MISC_BUILD_ID_SIZE)
		e.len = b[32] <= 20 ? b[32] : 20;
	n = strnlen((const char *)b + 36, len - 36);
	if (n == len - 36)
		return -EVPROF_ERR_BAD_PERFDATA;
	e.kernel =
	    (misc & PERF_RECORD_MISC_CPUMODE_MASK) == PERF_RECORD_MISC_KERNEL;
	e.path = strndup((const char *)b + 36, n);
	if (!e.path || EVPROF_VEC_PUSH(&h->bids, e)) {
		free(e.path);
		return -ENOMEM;
	}
	return 0;
}

static int feat_build_id(struct pd_header *h, const uint8_t *b, size_t len)
{
	size_t pos = 0;
	int err;

	while (len - pos >= 8) {
		uint16_t size = (uint16_t)(b[pos + 6] | b[pos + 7] << 8);

		if (size < 8 || size > len - pos)
			return -EVPROF_ERR_BAD_PERFDATA;
		err = add_buildid(h, b + pos, size);
		if (err)
			return err;
		pos += size;
	}
	return 0;
}

const struct pd_buildid *evprof__pd_buildid(const struct pd_header *h,
					    const char *path, bool kernel)
{
	for (size_t i = 0; i < h->bids.n; i++) {
		const struct pd_buildid *e = &h->bids.a[i];

		if (kernel ? e->kernel && !strcmp(e->path, "[kernel.kallsyms]")
			   : !strcmp(e->path, path))
			return e;
	}
	return NULL;
}

/* Feature feat's section of len bytes. Unknown features are ignored. */
static int feature(struct pd_header *h, uint64_t feat, const uint8_t *b,
		   size_t len)
{
	switch (feat) {
	case PD_FEAT_BUILD_ID:
		return feat_build_id(h, b, len);
	case PD_FEAT_HOSTNAME:
		return feat_string(&h->hostname, b, len);
	case PD_FEAT_OSRELEASE:
		return feat_string(&h->osrelease, b, len);
	case PD_FEAT_VERSION:
		return feat_string(&h->version, b, len);
	case PD_FEAT_ARCH:
		return feat_string(&h->arch, b, len);
	case PD_FEAT_CPUDESC:
		return feat_string(&h->cpudesc, b, len);
	case PD_FEAT_CMDLINE:
		return feat_cmdline(h, b, len);
	case PD_FEAT_EVENT_DESC:
		return feat_event_desc(h, b, len);
	case PD_FEAT_SAMPLE_TIME:
		if (len < 16)
			return -EVPROF_ERR_BAD_PERFDATA;
		h->first_time = evprof__load_u64(b);
		h->last_time = evprof__load_u64(b + 8);
		return 0;
	default:
		return 0;
	}
}

/* ---- file header -------------------------------------------------------- */

static int read_meta(struct pd_header *h, struct pd_src *s, uint64_t off,
		     uint64_t len, uint8_t **out, const char *what)
{
	int err;

	*out = NULL;
	if (len > META_MAX)
		return bad(h, off, what);
	*out = malloc(len ? len : 1);
	if (!*out)
		return -ENOMEM;
	err = evprof__pd_src_pread(s, off, *out, len);
	if (err == -EVPROF_ERR_TRUNCATED) {
		snprintf(h->err, sizeof(h->err),
			 "%s at offset 0x%" PRIx64 " lies past the end of the "
			 "file",
			 what, off);
		err = -EVPROF_ERR_BAD_PERFDATA;
		h->past_end = true;
	}
	if (err) {
		free(*out);
		*out = NULL;
	}
	return err;
}

static int read_attrs(struct pd_header *h, struct pd_src *s, const uint8_t *fh)
{
	uint64_t attr_size = evprof__load_u64(fh + 16);
	uint64_t off = evprof__load_u64(fh + 24),
		 size = evprof__load_u64(fh + 32);
	uint8_t *b, *ids;
	int err;

	if (attr_size < PERF_ATTR_SIZE_VER0 + 16 || attr_size > 4096 ||
	    size % attr_size)
		return bad(h, 24, "attr section size");
	err = read_meta(h, s, off, size, &b, "attr section");
	if (err)
		return err;
	for (uint64_t i = 0; !err && i < size / attr_size; i++) {
		const uint8_t *e = b + i * attr_size;
		uint64_t ioff = evprof__load_u64(e + attr_size - 16);
		uint64_t isize = evprof__load_u64(e + attr_size - 8);

		err = add_attr(h, e, attr_size - 16, off + i * attr_size);
		if (err)
			break;
		if (isize % 8) {
			err = bad(h, off + i * attr_size, "attr ids size");
			break;
		}
		err = read_meta(h, s, ioff, isize, &ids, "attr ids");
		for (uint64_t j = 0; !err && j < isize / 8; j++)
			err = add_id(h, h->nr_attrs - 1,
				     evprof__load_u64(ids + j * 8));
		free(ids);
	}
	free(b);
	return err;
}

static int read_features(struct pd_header *h, struct pd_src *s)
{
	uint8_t *tab, *b;
	uint32_t nr = 0, k = 0;
	int err;

	for (int i = 0; i < PD_FEAT_BITS; i++)
		nr += (h->features[i / 64] >> (i % 64)) & 1;
	if (!nr)
		return 0;
	err = read_meta(h, s, h->feat_off, (uint64_t)nr * 16, &tab,
			"feature table");
	if (err)
		return err;
	for (int i = 0; !err && i < PD_FEAT_BITS; i++) {
		uint64_t off, len;

		if (!((h->features[i / 64] >> (i % 64)) & 1))
			continue;
		off = evprof__load_u64(tab + k * 16);
		len = evprof__load_u64(tab + k * 16 + 8);
		k++;
		/*
		 * A flagged feature with a 0-byte section (CPUDESC in an
		 * armv7 perf 3.14 file) says nothing: as if absent.
		 */
		if (!len)
			continue;
		err = read_meta(h, s, off, len, &b, "feature section");
		if (!err) {
			err = feature(h, (uint64_t)i, b, len);
			if (err == -EVPROF_ERR_BAD_PERFDATA)
				err = bad(h, off, "malformed feature section");
		}
		free(b);
	}
	free(tab);
	return err;
}

int evprof__pd_header_read(struct pd_header *h, struct pd_src *s)
{
	const uint8_t *p;
	uint8_t fh[FILE_HEADER];
	uint64_t magic, hsize;
	size_t got;
	int err;

	p = evprof__pd_src_at(s, 0, PIPE_HEADER, &got, &err);
	if (!p) {
		if (err)
			return err;
		return bad(h, 0, "no perf.data header (input too short)");
	}
	magic = evprof__load_u64(p);
	hsize = evprof__load_u64(p + 8);
	if (magic == PERF_MAGIC2_SW)
		return bad(h, 0, "big-endian perf.data (not supported)");
	/* "PERFFILE": the first format, before Linux 2.6.35. */
	if (magic == 0x454c494646524550ULL)
		return bad(h, 0, "perf.data version 1 (not supported)");
	if (magic != PERF_MAGIC2)
		return bad(h, 0, "not a perf.data file (no PERFILE2 magic)");
	if (hsize == PIPE_HEADER) {
		h->pipe = true;
		h->data_off = PIPE_HEADER;
		return 0;
	}
	if (hsize < FILE_HEADER)
		return bad(h, 8, "header size");
	if (!evprof__pd_src_seekable(s)) {
		err = evprof__pd_src_slurp(s);
		if (err)
			return err;
	}
	err = evprof__pd_src_pread(s, 0, fh, sizeof(fh));
	if (err)
		return err == -EVPROF_ERR_TRUNCATED
			   ? bad(h, 0, "file shorter than its header")
			   : err;
	h->data_off = evprof__load_u64(fh + 40);
	h->data_size = evprof__load_u64(fh + 48);
	memcpy(h->features, fh + 72, sizeof(h->features));
	if (h->data_off < hsize)
		return bad(h, 40, "data section offset");
	err = read_attrs(h, s, fh);
	if (err)
		return err;
	if (!h->data_size) /* perf did not finish: no features either */
		return 0;
	h->feat_off = h->data_off + h->data_size;
	if (h->feat_off < h->data_off)
		return bad(h, 48, "data section size");
	err = read_features(h, s);
	/* A file cut short (a copy that stopped): its data still counts. */
	if (err && h->past_end) {
		h->err[0] = '\0';
		return 0;
	}
	return err;
}

/* ---- user records ------------------------------------------------------- */

static int id_index(struct pd_header *h, const struct pd_rec *r)
{
	const uint8_t *b = (const uint8_t *)r->data;
	uint64_t nr;

	if (r->size < 16)
		return bad(h, r->off, "ID_INDEX record size");
	nr = evprof__load_u64(b + 8);
	if (nr > (uint64_t)(r->size - 16) / 32)
		return bad(h, r->off, "ID_INDEX record count");
	for (uint64_t i = 0; i < nr; i++) {
		const uint8_t *e = b + 16 + i * 32;
		struct pd_idx x = {
		    .id = evprof__load_u64(e),
		    .cpu = (int32_t)evprof__load_u64(e + 16),
		    .tid = (int32_t)evprof__load_u64(e + 24),
		};

		if (EVPROF_VEC_PUSH(&h->idx, x))
			return -ENOMEM;
	}
	return 1;
}

int evprof__pd_header_record(struct pd_header *h, const struct pd_rec *r)
{
	const uint8_t *b = (const uint8_t *)r->data;
	struct pd_attr *a;
	int err;

	switch (r->type) {
	case PD_HEADER_ATTR: {
		uint32_t asz;

		if (r->size < 8 + PERF_ATTR_SIZE_VER0)
			return bad(h, r->off, "HEADER_ATTR record size");
		asz = evprof__load_u32(b + 8 + 4);
		if (!asz)
			asz = PERF_ATTR_SIZE_VER0;
		if (asz > (uint32_t)r->size - 8 || asz % 8)
			return bad(h, r->off, "HEADER_ATTR attr size");
		err = add_attr(h, b + 8, asz, r->off);
		for (size_t i = 8 + asz; !err && i + 8 <= r->size; i += 8)
			err =
			    add_id(h, h->nr_attrs - 1, evprof__load_u64(b + i));
		return err ? err : 1;
	}
	case PD_HEADER_FEATURE:
		if (r->size < 16)
			return bad(h, r->off, "HEADER_FEATURE record size");
		err =
		    feature(h, evprof__load_u64(b + 8), b + 16, r->size - 16u);
		if (err == -EVPROF_ERR_BAD_PERFDATA)
			return bad(h, r->off, "malformed HEADER_FEATURE");
		return err ? err : 1;
	case PD_HEADER_BUILD_ID:
		err = add_buildid(h, b, r->size);
		if (err == -EVPROF_ERR_BAD_PERFDATA)
			return bad(h, r->off, "malformed HEADER_BUILD_ID");
		return err ? err : 1;
	case PD_ID_INDEX:
		return id_index(h, r);
	case PD_EVENT_UPDATE:
		if (r->size >= 24 &&
		    evprof__load_u64(b + 8) == EVENT_UPDATE_NAME) {
			a = evprof__pd_attr_of(h, evprof__load_u64(b + 16));
			if (a)
				set_name(a, (const char *)b + 24,
					 r->size - 24u);
		}
		return 1;
	case PD_THREAD_MAP:
		/* {u64 nr; {u64 pid; char comm[16]}[nr]}: -1 for -a. */
		if (r->size >= 24 + 16 && evprof__load_u64(b + 8) >= 1 &&
		    !h->thread_map_pid)
			h->thread_map_pid = (int32_t)evprof__load_u64(b + 16);
		return 1;
	default:
		return 0;
	}
}
