// SPDX-License-Identifier: MIT
/*
 * pprof reader: a bounds-checked protobuf decoder for profile.proto into
 * the profile model. Every length and index comes from an untrusted file.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "load.h"
#include "load_common.h"
#include "pprof.h"
#include "profile/profile.h"

#define MALFORMED (-EVPROF_ERR_MALFORMED)

struct span {
	const uint8_t *p, *end;
};

static int rd_varint(struct span *s, uint64_t *v)
{
	uint64_t x = 0;
	unsigned shift;

	for (shift = 0; shift < 64; shift += 7) {
		uint8_t b;

		if (s->p == s->end)
			return MALFORMED;
		b = *s->p++;
		x |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*v = x;
			return 0;
		}
	}
	return MALFORMED;
}

struct field {
	uint32_t num;
	uint32_t wire;
	uint64_t v;	 /* PB_VARINT */
	struct span sub; /* PB_LEN */
};

/* Reads the next field of s. Returns 1, 0 at the end, or MALFORMED. */
static int rd_field(struct span *s, struct field *f)
{
	uint64_t key, len;

	if (s->p == s->end)
		return 0;
	if (rd_varint(s, &key) || key >> 32 || !(key >> 3))
		return MALFORMED;
	f->num = (uint32_t)(key >> 3);
	f->wire = (uint32_t)(key & 7);
	switch (f->wire) {
	case PB_VARINT:
		return rd_varint(s, &f->v) ? MALFORMED : 1;
	case PB_LEN:
		if (rd_varint(s, &len) || len > (uint64_t)(s->end - s->p))
			return MALFORMED;
		f->sub = (struct span){s->p, s->p + len};
		s->p += len;
		return 1;
	case PB_I64:
	case PB_I32:
		len = f->wire == PB_I64 ? 8 : 4;
		if (len > (uint64_t)(s->end - s->p))
			return MALFORMED;
		s->p += len;
		f->v = 0;
		return 1;
	}
	return MALFORMED;
}

/* A repeated varint field, packed or not, appended to *arr. */
struct u64s {
	uint64_t *v;
	size_t n, cap;
};

static int add_varints(struct u64s *a, const struct field *f)
{
	struct span s = f->sub;
	uint64_t v;

	if (f->wire == PB_VARINT) {
		if (evprof__vec_grow((void **)&a->v, &a->cap, sizeof(*a->v),
				     a->n + 1, SIZE_MAX))
			return -ENOMEM;
		a->v[a->n++] = f->v;
		return 0;
	}
	if (f->wire != PB_LEN)
		return MALFORMED;
	while (s.p < s.end) {
		if (rd_varint(&s, &v))
			return MALFORMED;
		if (evprof__vec_grow((void **)&a->v, &a->cap, sizeof(*a->v),
				     a->n + 1, SIZE_MAX))
			return -ENOMEM;
		a->v[a->n++] = v;
	}
	return 0;
}

/* An id -> index table: ids are sorted once, then binary searched. */
struct idmap {
	struct {
		uint64_t id;
		uint32_t idx;
	} * e;
	size_t n, cap;
};

static int idmap_add(struct idmap *m, uint64_t id, uint32_t idx)
{
	if (evprof__vec_grow((void **)&m->e, &m->cap, sizeof(*m->e), m->n + 1,
			     SIZE_MAX))
		return -ENOMEM;
	m->e[m->n].id = id;
	m->e[m->n++].idx = idx;
	return 0;
}

static int cmp_id(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* Sorts; a duplicate id is malformed (pprof's CheckValid agrees). */
static int idmap_seal(struct idmap *m)
{
	size_t i;

	if (m->n)
		qsort(m->e, m->n, sizeof(*m->e), cmp_id);
	for (i = 1; i < m->n; i++)
		if (m->e[i].id == m->e[i - 1].id)
			return MALFORMED;
	return 0;
}

static int64_t idmap_find(const struct idmap *m, uint64_t id)
{
	size_t lo = 0, hi = m->n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (m->e[mid].id == id)
			return m->e[mid].idx;
		if (m->e[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

struct spans {
	struct span *s;
	size_t n, cap;
};

static int spans_add(struct spans *a, struct span s)
{
	if (evprof__vec_grow((void **)&a->s, &a->cap, sizeof(*a->s), a->n + 1,
			     SIZE_MAX))
		return -ENOMEM;
	a->s[a->n++] = s;
	return 0;
}

/* Where a sample type goes: these, a counter (>= 0) or a weight. */
enum { VAL_DROP = -3, VAL_SAMPLES = -2, VAL_CPU = -1, VAL_WEIGHT = 1 << 16 };

struct func {
	uint64_t name, file, start_line;
};

struct map {
	int lib; /* lib index, or -1 */
	bool kernel;
};

struct rd {
	struct evprof_profile *p;
	struct spans strs, types, samples, maps, locs, funcs;
	int *val_to;  /* per type: VAL_*, a counter, VAL_WEIGHT + weight */
	bool counted; /* a samples/count type exists */
	struct func *fn;
	struct map *mp;
	struct idmap fn_ids, mp_ids, loc_ids;
	int32_t *loc_frames; /* frames of every location, root first */
	size_t nr_lf, cap_lf;
	uint32_t *loc_off; /* per location: first frame; +1: end */
	char *tmp;	   /* NUL-terminated copy of a string */
	size_t tmp_cap;
	struct u64s locs_tmp, vals_tmp, comments;
};

/* String idx as a C string (valid until the next call), or NULL. */
static const char *str_at(struct rd *r, uint64_t idx)
{
	const struct span *s;
	size_t n;

	if (idx >= r->strs.n)
		return NULL;
	s = &r->strs.s[idx];
	n = (size_t)(s->end - s->p);
	if (evprof__vec_grow((void **)&r->tmp, &r->tmp_cap, 1, n + 1, SIZE_MAX))
		return NULL;
	memcpy(r->tmp, s->p, n);
	r->tmp[n] = 0;
	return r->tmp;
}

static int top_level(struct rd *r, struct span s)
{
	struct field f;
	size_t i;
	int ret;

	while ((ret = rd_field(&s, &f)) == 1) {
		struct spans *to = NULL;

		switch (f.num) {
		case PROFILE_SAMPLE_TYPE:
			to = &r->types;
			break;
		case PROFILE_SAMPLE:
			to = &r->samples;
			break;
		case PROFILE_MAPPING:
			to = &r->maps;
			break;
		case PROFILE_LOCATION:
			to = &r->locs;
			break;
		case PROFILE_FUNCTION:
			to = &r->funcs;
			break;
		case PROFILE_STRING_TABLE:
			to = &r->strs;
			break;
		}
		if (f.num == PROFILE_COMMENT)
			ret = add_varints(&r->comments, &f);
		else if (f.num == PROFILE_TIME_NANOS && f.wire == PB_VARINT)
			r->p->start_wall_ns = f.v;
		if (ret < 0)
			return ret;
		if (!to)
			continue;
		if (f.wire != PB_LEN)
			return MALFORMED;
		if (spans_add(to, f.sub))
			return -ENOMEM;
	}
	if (ret < 0)
		return ret;
	/* As pprof requires: string_table[0] is "". */
	if (!r->strs.n || r->strs.s[0].p != r->strs.s[0].end)
		return MALFORMED;
	for (i = 0; i < r->comments.n; i++) {
		const char *c = str_at(r, r->comments.v[i]);

		if (r->comments.v[i] >= r->strs.n)
			return MALFORMED;
		if (!c || evprof_profile__add_note(r->p, c))
			return -ENOMEM;
	}
	return 0;
}

static int read_types(struct rd *r)
{
	size_t i;

	r->val_to = calloc(r->types.n + 1, sizeof(*r->val_to));
	if (!r->val_to)
		return -ENOMEM;
	for (i = 0; i < r->types.n; i++) {
		struct span s = r->types.s[i];
		uint64_t type = 0, unit = 0;
		const char *name, *u;
		struct field f;
		int ret;

		while ((ret = rd_field(&s, &f)) == 1) {
			if (f.wire == PB_VARINT && f.num == VALUE_TYPE_TYPE)
				type = f.v;
			else if (f.wire == PB_VARINT &&
				 f.num == VALUE_TYPE_UNIT)
				unit = f.v;
		}
		if (ret < 0 || type >= r->strs.n || unit >= r->strs.n)
			return MALFORMED;
		u = str_at(r, unit);
		if (!u)
			return -ENOMEM;
		u = strcmp(u, "count") ? (strcmp(u, "nanoseconds") ? "" : "ns")
				       : "count";
		name = str_at(r, type);
		if (!name)
			return -ENOMEM;
		if (!strcmp(name, "samples") && !strcmp(u, "count")) {
			r->val_to[i] = VAL_SAMPLES;
			r->counted = true;
		} else if (!strcmp(name, "cpu") && !strcmp(u, "ns")) {
			r->val_to[i] = VAL_CPU;
		} else if (!*name) {
			r->val_to[i] = VAL_DROP;
		} else if (!strcmp(u, "ns")) {
			int w = evprof_profile__add_weight_type(r->p, name);

			if (w < 0)
				return w == -EEXIST ? MALFORMED : w;
			r->val_to[i] = VAL_WEIGHT + w;
		} else {
			int c = evprof_profile__add_counter(r->p, name);

			if (c < 0)
				return c == -EEXIST ? MALFORMED : c;
			r->val_to[i] = c;
		}
	}
	return 0;
}

static int read_functions(struct rd *r)
{
	size_t i;

	r->fn = calloc(r->funcs.n + 1, sizeof(*r->fn));
	if (!r->fn)
		return -ENOMEM;
	for (i = 0; i < r->funcs.n; i++) {
		struct span s = r->funcs.s[i];
		uint64_t id = 0;
		struct field f;
		int ret;

		while ((ret = rd_field(&s, &f)) == 1) {
			if (f.wire != PB_VARINT)
				continue;
			if (f.num == FUNCTION_ID)
				id = f.v;
			else if (f.num == FUNCTION_NAME)
				r->fn[i].name = f.v;
			else if (f.num == FUNCTION_FILENAME)
				r->fn[i].file = f.v;
			else if (f.num == FUNCTION_START_LINE)
				r->fn[i].start_line = f.v;
		}
		if (ret < 0 || !id || r->fn[i].name >= r->strs.n ||
		    r->fn[i].file >= r->strs.n)
			return MALFORMED;
		if (idmap_add(&r->fn_ids, id, (uint32_t)i))
			return -ENOMEM;
	}
	return idmap_seal(&r->fn_ids);
}

static int read_mappings(struct rd *r)
{
	size_t i;

	r->mp = calloc(r->maps.n + 1, sizeof(*r->mp));
	if (!r->mp)
		return -ENOMEM;
	for (i = 0; i < r->maps.n; i++) {
		struct span s = r->maps.s[i];
		uint64_t id = 0, file = 0, bid = 0;
		struct evprof_profile_lib lib = {0};
		uint8_t build_id[64];
		char *path;
		const char *b;
		struct field f;
		int ret, n;

		while ((ret = rd_field(&s, &f)) == 1) {
			if (f.wire != PB_VARINT)
				continue;
			if (f.num == MAPPING_ID)
				id = f.v;
			else if (f.num == MAPPING_FILENAME)
				file = f.v;
			else if (f.num == MAPPING_BUILD_ID)
				bid = f.v;
		}
		if (ret < 0 || !id || file >= r->strs.n || bid >= r->strs.n)
			return MALFORMED;
		if (idmap_add(&r->mp_ids, id, (uint32_t)i))
			return -ENOMEM;
		r->mp[i].lib = -1;
		b = str_at(r, file);
		if (!b)
			return -ENOMEM;
		if (!*b)
			continue;
		r->mp[i].kernel = !strncmp(b, "[kernel", 7);
		path = strdup(b);
		b = str_at(r, bid);
		if (!path || !b) {
			free(path);
			return -ENOMEM;
		}
		n = evprof__unhex(b, build_id, sizeof(build_id));
		lib.path = path;
		lib.build_id = n > 0 ? build_id : NULL;
		lib.build_id_len = n > 0 ? (size_t)n : 0;
		r->mp[i].lib = evprof_profile__add_lib(r->p, &lib);
		free(path);
		if (r->mp[i].lib < 0)
			return r->mp[i].lib;
	}
	return idmap_seal(&r->mp_ids);
}

/* One location's frames: its lines reversed, the last line the real one. */
static int read_location(struct rd *r, size_t i)
{
	struct span s = r->locs.s[i], ls;
	uint64_t id = 0, mapping = 0, address = 0;
	struct spans lines = {0};
	struct map m = {.lib = -1};
	struct field f;
	size_t k;
	int ret;

	while ((ret = rd_field(&s, &f)) == 1) {
		if (f.num == LOCATION_LINE && f.wire == PB_LEN)
			ret = spans_add(&lines, f.sub);
		else if (f.wire != PB_VARINT)
			continue;
		else if (f.num == LOCATION_ID)
			id = f.v;
		else if (f.num == LOCATION_MAPPING_ID)
			mapping = f.v;
		else if (f.num == LOCATION_ADDRESS)
			address = f.v;
		if (ret < 0)
			break;
	}
	if (!ret && (!id || lines.n > UINT16_MAX))
		ret = MALFORMED;
	if (!ret && mapping) {
		int64_t mi = idmap_find(&r->mp_ids, mapping);

		/* pprof tolerates a mapping id that matches nothing. */
		if (mi >= 0)
			m = r->mp[mi];
	}
	if (!ret && (idmap_add(&r->loc_ids, id, (uint32_t)i) ||
		     evprof__vec_grow((void **)&r->loc_frames, &r->cap_lf,
				      sizeof(int32_t), r->nr_lf + lines.n + 1,
				      SIZE_MAX)))
		ret = -ENOMEM;
	if (!ret && !lines.n) {
		/* Unsymbolized: a frame named by its address. */
		struct evprof_profile_frame fr = {
		    .lib = m.lib, .address = address, .kernel = m.kernel};
		int idx = evprof_profile__frame(r->p, &fr);

		if (idx < 0)
			ret = idx;
		else
			r->loc_frames[r->nr_lf++] = idx;
	}
	for (k = lines.n; !ret && k-- > 0;) {
		struct evprof_profile_frame fr = {
		    .lib = m.lib,
		    .address = address,
		    .kernel = m.kernel,
		    .inline_depth = (uint16_t)(lines.n - 1 - k),
		};
		uint64_t fid = 0, line = 0;
		int64_t fi;
		char *name = NULL;
		const char *t;
		int idx;

		ls = lines.s[k];
		while ((ret = rd_field(&ls, &f)) == 1) {
			if (f.wire == PB_VARINT && f.num == LINE_FUNCTION_ID)
				fid = f.v;
			else if (f.wire == PB_VARINT && f.num == LINE_LINE)
				line = f.v;
		}
		if (ret < 0)
			break;
		fi = idmap_find(&r->fn_ids, fid);
		if (fi < 0) {
			ret = MALFORMED;
			break;
		}
		t = str_at(r, r->fn[fi].name);
		name = t ? strdup(t) : NULL;
		t = name ? str_at(r, r->fn[fi].file) : NULL;
		if (!t) {
			free(name);
			ret = -ENOMEM;
			break;
		}
		fr.function = *name ? name : NULL;
		fr.file = *t ? t : NULL;
		fr.line = line <= UINT32_MAX ? (uint32_t)line : 0;
		fr.function_line = r->fn[fi].start_line <= UINT32_MAX
				       ? (uint32_t)r->fn[fi].start_line
				       : 0;
		idx = evprof_profile__frame(r->p, &fr);
		free(name);
		if (idx < 0) {
			ret = idx;
			break;
		}
		r->loc_frames[r->nr_lf++] = idx;
	}
	free(lines.s);
	r->loc_off[i + 1] = (uint32_t)r->nr_lf;
	return ret;
}

static int read_locations(struct rd *r)
{
	size_t i;
	int err;

	r->loc_off = calloc(r->locs.n + 1, sizeof(*r->loc_off));
	if (!r->loc_off)
		return -ENOMEM;
	for (i = 0; i < r->locs.n; i++) {
		if (r->nr_lf > UINT32_MAX - UINT16_MAX)
			return -E2BIG;
		err = read_location(r, i);
		if (err)
			return err;
	}
	return idmap_seal(&r->loc_ids);
}

/* The thread for these labels (pid, tid, thread name), created once. */
static int thread_for(struct rd *r, int64_t pid, int64_t tid, const char *name)
{
	struct evprof_profile *p = r->p;
	size_t i;
	int proc;
	char buf[32];

	for (i = p->nr_threads; i-- > 0;)
		if (p->threads[i].tid == tid &&
		    p->procs[p->threads[i].proc].pid == pid &&
		    !strcmp(p->threads[i].name, name))
			return (int)i;
	snprintf(buf, sizeof(buf), "%lld", (long long)pid);
	proc = evprof__load_process(p, (int)pid, buf);
	if (proc < 0)
		return proc;
	return evprof_profile__add_thread(p, proc, (int)tid, *name ? name : buf,
					  0);
}

/* The labels evprof reads back: its own (out_pprof.c) and pprof's. */
struct labels {
	int64_t pid, tid, ns_pid, ns_tid;
	uint64_t thread, cgroup; /* strings */
};

static int read_label(struct rd *r, struct span ls, struct labels *l)
{
	uint64_t key = 0, str = 0, num = 0;
	struct field f;
	const char *kn;
	int ret;

	while ((ret = rd_field(&ls, &f)) == 1) {
		if (f.wire != PB_VARINT)
			continue;
		if (f.num == LABEL_KEY)
			key = f.v;
		else if (f.num == LABEL_STR)
			str = f.v;
		else if (f.num == LABEL_NUM)
			num = f.v;
	}
	if (ret < 0 || key >= r->strs.n || str >= r->strs.n)
		return MALFORMED;
	kn = str_at(r, key);
	if (!kn)
		return -ENOMEM;
	if (!strcmp(kn, "pid"))
		l->pid = (int64_t)num;
	else if (!strcmp(kn, "tid"))
		l->tid = (int64_t)num;
	else if (!strcmp(kn, "thread"))
		l->thread = str;
	else if (!strcmp(kn, "cgroup"))
		l->cgroup = str;
	else if (!strcmp(kn, "ns_pid"))
		l->ns_pid = (int64_t)num;
	else if (!strcmp(kn, "ns_tid"))
		l->ns_tid = (int64_t)num;
	return 0;
}

static int read_sample(struct rd *r, struct span s)
{
	uint64_t counters[EVPROF_PROFILE_MAX_COUNTERS] = {0};
	uint64_t weights[EVPROF_PROFILE_MAX_WEIGHTS] = {0};
	struct evprof_profile_aggregate smp = {
	    .stack = -1, .counters = counters, .weights = weights};
	struct labels l = {0};
	struct field f;
	size_t k;
	uint32_t j;
	int ret, thr;

	r->locs_tmp.n = r->vals_tmp.n = 0;
	while ((ret = rd_field(&s, &f)) == 1) {
		if (f.num == SAMPLE_LOCATION_ID)
			ret = add_varints(&r->locs_tmp, &f);
		else if (f.num == SAMPLE_VALUE)
			ret = add_varints(&r->vals_tmp, &f);
		if (ret < 0)
			return ret;
		if (f.num == SAMPLE_LABEL && f.wire == PB_LEN &&
		    (ret = read_label(r, f.sub, &l)) < 0)
			return ret;
	}
	if (ret < 0)
		return ret;
	/* pprof's CheckValid: as many values as sample types. */
	if (r->vals_tmp.n != r->types.n)
		return MALFORMED;
	for (k = 0; k < r->types.n; k++) {
		uint64_t v = r->vals_tmp.v[k];
		int to = r->val_to[k];

		/* A diff (evprof diff, pprof -diff_base) has negated
		 * samples; the model's sums are unsigned. */
		if ((int64_t)v < 0)
			return -EVPROF_ERR_NEGATIVE;
		if (to == VAL_SAMPLES) {
			smp.samples += v;
		} else if (to == VAL_CPU) {
			smp.cpu_ns += v;
		} else if (to >= VAL_WEIGHT) {
			weights[to - VAL_WEIGHT] += v;
			smp.has_weights |= 1ULL << (to - VAL_WEIGHT);
		} else if (to >= 0) {
			counters[to] += v;
			smp.has_counters |= 1ULL << to;
		}
	}
	/* Without a samples/count type, each Sample counts once. */
	if (!r->counted)
		smp.samples = 1;
	/* Location ids are leaf first; stacks are built from the root. */
	for (k = r->locs_tmp.n; k-- > 0;) {
		int64_t li = idmap_find(&r->loc_ids, r->locs_tmp.v[k]);

		if (li < 0)
			return MALFORMED;
		for (j = r->loc_off[li]; j < r->loc_off[li + 1]; j++) {
			smp.stack = evprof_profile__stack(r->p, smp.stack,
							  r->loc_frames[j]);
			if (smp.stack < 0)
				return smp.stack;
		}
	}
	{
		const char *name = str_at(r, l.thread);

		if (!name)
			return -ENOMEM;
		if (l.pid < INT32_MIN || l.pid > INT32_MAX ||
		    l.tid < INT32_MIN || l.tid > INT32_MAX)
			return MALFORMED;
		thr = thread_for(r, l.pid, l.tid, name);
	}
	if (thr < 0)
		return thr;
	/* Its cgroup label, which evprof writes on each of its samples. */
	if (l.cgroup) {
		const char *cg = str_at(r, l.cgroup);
		int err = cg ? evprof_profile__set_thread_cgroup(r->p, thr, cg)
			     : -ENOMEM;

		if (err)
			return err;
	}
	/* Its ids in its own pid namespace, when it had them. */
	if (l.ns_pid > 0 && l.ns_pid <= INT32_MAX) {
		int err = evprof_profile__set_thread_ns_ids(
		    r->p, thr, (int)l.ns_pid,
		    l.ns_tid > 0 && l.ns_tid <= INT32_MAX ? (int)l.ns_tid : 0);

		if (err)
			return err;
	}
	return evprof_profile__add_aggregate(r->p, thr, &smp);
}

int evprof__load_pprof(const uint8_t *buf, size_t len,
		       struct evprof_profile **out)
{
	/* pprof keeps no sample times: the store is all there is. */
	struct evprof_profile_opts opts = {.sz = sizeof(opts),
					   .no_timeline = true};
	struct evprof_profile *p = evprof_profile__new(&opts);
	struct rd r = {.p = p};
	size_t i;
	int err;

	if (!p)
		return -ENOMEM;
	err = top_level(&r, (struct span){buf, buf + len});
	if (!err)
		err = read_types(&r);
	if (!err)
		err = read_functions(&r);
	if (!err)
		err = read_mappings(&r);
	if (!err)
		err = read_locations(&r);
	for (i = 0; !err && i < r.samples.n; i++)
		err = read_sample(&r, r.samples.s[i]);
	free(r.strs.s);
	free(r.types.s);
	free(r.samples.s);
	free(r.maps.s);
	free(r.locs.s);
	free(r.funcs.s);
	free(r.val_to);
	free(r.fn);
	free(r.mp);
	free(r.fn_ids.e);
	free(r.mp_ids.e);
	free(r.loc_ids.e);
	free(r.loc_frames);
	free(r.loc_off);
	free(r.tmp);
	free(r.locs_tmp.v);
	free(r.vals_tmp.v);
	free(r.comments.v);
	if (err)
		evprof_profile__free(p);
	else
		*out = p;
	return err;
}
