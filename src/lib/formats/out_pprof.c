// SPDX-License-Identifier: MIT
/*
 * pprof writer (google/pprof proto/profile.proto, package
 * perftools.profiles) with a small protobuf encoder of our own: the format
 * needs only varints, length-delimited fields and packed varints.
 *
 * One Sample per store entry (thread, stack): pprof sums values element
 * wise and has no per-sample time, so the store holds all it can show. String
 * indices: 0 is
 * "", profile string i is i + 1, then the strings only pprof needs.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/cgroup.h>

#include "json.h"
#include "profile/profile.h"
#include "pprof.h"

/* Growable message buffer; allocation failure latches. */
struct pb {
	uint8_t *b;
	size_t len, cap;
	bool oom;
};

static void pb_bytes(struct pb *m, const void *d, size_t n)
{
	if (m->oom || evprof__vec_grow((void **)&m->b, &m->cap, 1, m->len + n,
				       SIZE_MAX)) {
		m->oom = true;
		return;
	}
	memcpy(m->b + m->len, d, n);
	m->len += n;
}

static size_t varint(uint8_t out[10], uint64_t v)
{
	size_t n = 0;

	do {
		out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static void pb_varint(struct pb *m, uint64_t v)
{
	uint8_t t[10];

	pb_bytes(m, t, varint(t, v));
}

/* A varint field; proto3 leaves zeros out. */
static void pb_u64(struct pb *m, uint32_t field, uint64_t v)
{
	if (!v)
		return;
	pb_varint(m, (uint64_t)field << 3 | PB_VARINT);
	pb_varint(m, v);
}

static void pb_len(struct pb *m, uint32_t field, const void *d, size_t n)
{
	pb_varint(m, (uint64_t)field << 3 | PB_LEN);
	pb_varint(m, n);
	pb_bytes(m, d, n);
}

static void pb_msg(struct pb *m, uint32_t field, const struct pb *sub)
{
	if (sub->oom)
		m->oom = true;
	pb_len(m, field, sub->b, sub->len);
}

/* A top-level Profile field straight to the output. */
static void emit(struct evprof__sink *out, uint32_t field, struct pb *m)
{
	uint8_t t[20];
	size_t n = varint(t, (uint64_t)field << 3 | PB_LEN);

	n += varint(t + n, m->len);
	evprof__sink_write(out, t, n);
	evprof__sink_write(out, m->b, m->len);
	m->len = 0;
}

struct loc {
	uint32_t off; /* frames in pp->lf, innermost first */
	uint32_t n;
};

struct loc_key {
	const int32_t *fr;
	uint32_t n;
};

struct mapping {
	uint64_t lo, hi; /* address range of its locations */
	bool used, files, lines, inl;
};

struct pp {
	const struct evprof_profile *p;
	struct evprof__sink *out;
	uint32_t nv;	   /* values per sample: the store's columns */
	uint64_t next_str; /* index of the next extra string */
	struct pb extra;   /* extra string_table entries, encoded */
	struct pb m, sub;  /* scratch messages */
	uint64_t key_pid, key_tid, key_thread; /* label key strings */
	uint64_t key_process;		       /* "process_name" */
	uint64_t key_ns_pid, key_ns_tid;       /* 0: no thread has them */
	int cg;				       /* cgroup labels written */
	uint64_t key_cg[4];  /* "cgroup", "container_id", "pod_uid", ... */
	uint64_t *proc_str;  /* per process: its name's string, 0: none yet */
	bool process_labels; /* EVPROF_PPROF_LABELS_PROCESS */
	size_t first_base;   /* threads of a diff's base */
	uint64_t key_base, str_true; /* "pprof::base", "true" */
	int32_t *lf;		     /* location frames */
	size_t nr_lf, cap_lf;
	struct loc *locs;
	size_t nr_locs, cap_locs;
	struct evprof_hashmap *loc_set; /* location index -> itself */
	const struct loc_key *probe;	/* what a lookup looks for */
	uint32_t *loc_at; /* per stack: location id whose leaf it is; 0 */
	int32_t *next_at; /* per stack: the stack below that location */
	int32_t *scratch;
	struct mapping *maps; /* per lib, then the kernel */
};

static const char *const cg_keys[4] = {"cgroup", "container_id", "pod_uid",
				       "qos_class"};

static uint64_t extra_str(struct pp *c, const char *s)
{
	pb_len(&c->extra, PROFILE_STRING_TABLE, s, strlen(s));
	return c->next_str++;
}

/* Location map keys: a location index, or PROBE for c->probe. */
#define PROBE (-1L)

static struct loc_key loc_key(const struct pp *c, long key)
{
	if (key == PROBE)
		return *c->probe;
	return (struct loc_key){c->lf + c->locs[key].off, c->locs[key].n};
}

static size_t loc_hash(long key, void *ctx)
{
	struct loc_key k = loc_key(ctx, key);

	return evprof__hash_mem(EVPROF_HASH_INIT, k.fr, k.n * sizeof(*k.fr));
}

static bool loc_eq(long a, long b, void *ctx)
{
	struct loc_key x = loc_key(ctx, a), y = loc_key(ctx, b);

	return x.n == y.n && !memcmp(x.fr, y.fr, x.n * sizeof(*x.fr));
}

/*
 * The location whose innermost frame is stack s's: s's frame and its
 * callers up to the real (inline depth 0) frame, as one address.
 */
static int stack_loc(struct pp *c, int32_t s)
{
	const struct evprof_profile *p = c->p;
	struct loc_key k = {c->scratch, 0};
	int32_t t = s;
	long idx;

	for (;;) {
		int32_t fr = p->stacks[t].frame;

		c->scratch[k.n++] = fr;
		t = p->stacks[t].parent;
		if (!p->frames[fr].inline_depth || t < 0)
			break;
	}
	c->probe = &k;
	if (!evprof__hashmap_find(c->loc_set, PROBE, &idx)) {
		idx = (long)c->nr_locs;
		if (evprof__vec_grow((void **)&c->lf, &c->cap_lf,
				     sizeof(*c->lf), c->nr_lf + k.n,
				     SIZE_MAX) ||
		    evprof__vec_grow((void **)&c->locs, &c->cap_locs,
				     sizeof(*c->locs), c->nr_locs + 1,
				     SIZE_MAX))
			return -ENOMEM;
		memcpy(c->lf + c->nr_lf, k.fr, k.n * sizeof(*k.fr));
		c->locs[idx] = (struct loc){(uint32_t)c->nr_lf, k.n};
		if (evprof__hashmap_add(c->loc_set, idx, idx))
			return -ENOMEM;
		c->nr_lf += k.n;
		c->nr_locs++;
	}
	c->loc_at[s] = (uint32_t)idx + 1;
	c->next_at[s] = t;
	return 0;
}

static void put_value_type(struct pp *c, const char *type, const char *unit)
{
	c->sub.len = 0;
	pb_u64(&c->sub, VALUE_TYPE_TYPE, extra_str(c, type));
	pb_u64(&c->sub, VALUE_TYPE_UNIT, extra_str(c, unit));
}

static void write_header(struct pp *c, const char *def)
{
	const struct evprof_profile *p = c->p;
	uint32_t i;

	put_value_type(c, "samples", "count");
	emit(c->out, PROFILE_SAMPLE_TYPE, &c->sub);
	put_value_type(c, "cpu", "nanoseconds");
	emit(c->out, PROFILE_SAMPLE_TYPE, &c->sub);
	for (i = 0; i < p->nr_counters; i++) {
		put_value_type(c, p->counters[i], "count");
		emit(c->out, PROFILE_SAMPLE_TYPE, &c->sub);
	}
	for (i = 0; i < p->nr_weights; i++) {
		put_value_type(c, p->weights[i], "nanoseconds");
		emit(c->out, PROFILE_SAMPLE_TYPE, &c->sub);
	}
	/* Each sample stands for itself: one sample per period. */
	put_value_type(c, "samples", "count");
	emit(c->out, PROFILE_PERIOD_TYPE, &c->sub);
	c->m.len = 0;
	pb_u64(&c->m, PROFILE_PERIOD, 1);
	pb_u64(&c->m, PROFILE_DEFAULT_SAMPLE_TYPE, extra_str(c, def));
	pb_u64(&c->m, PROFILE_TIME_NANOS, p->start_wall_ns);
	c->key_pid = extra_str(c, "pid");
	c->key_tid = extra_str(c, "tid");
	c->key_thread = extra_str(c, "thread");
	for (i = 0; i < p->nr_threads && !c->key_ns_pid; i++)
		if (p->threads[i].ns_pid) {
			c->key_ns_pid = extra_str(c, "ns_pid");
			c->key_ns_tid = extra_str(c, "ns_tid");
		}
	if (c->process_labels)
		c->key_process = extra_str(c, "process_name");
	for (i = 0; i < 4; i++)
		if (c->cg & (1 << i))
			c->key_cg[i] = extra_str(c, cg_keys[i]);
	if (c->first_base < p->nr_threads) {
		c->key_base = extra_str(c, "pprof::base");
		c->str_true = extra_str(c, "true");
	}
	for (i = 0; i < p->nr_notes; i++)
		pb_u64(&c->m, PROFILE_COMMENT, extra_str(c, p->notes[i]));
	evprof__sink_write(c->out, c->m.b, c->m.len);
}

static void put_label(struct pp *c, uint64_t key, uint32_t field, uint64_t v)
{
	c->sub.len = 0;
	pb_u64(&c->sub, LABEL_KEY, key);
	pb_u64(&c->sub, field, v);
	pb_msg(&c->m, SAMPLE_LABEL, &c->sub);
}

/*
 * The string values of thread t's cgroup labels into v (0: none): its
 * path and what evprof_cgroup__container() reads in it.
 */
static void cgroup_values(struct pp *c, const struct evprof__thread *t,
			  uint64_t v[4])
{
	struct evprof_container ct;
	const char *s[4];

	memset(v, 0, 4 * sizeof(*v));
	if (!c->cg || !t->cgroup)
		return;
	evprof_cgroup__container(t->cgroup, &ct);
	s[0] = t->cgroup;
	s[1] = ct.runtime ? ct.id : NULL;
	s[2] = ct.pod_uid[0] ? ct.pod_uid : NULL;
	s[3] = ct.qos;
	for (int i = 0; i < 4; i++)
		if ((c->cg & (1 << i)) && s[i])
			v[i] = extra_str(c, s[i]);
}

static void thread_labels(struct pp *c, const struct evprof__thread *t,
			  uint64_t name)
{
	put_label(c, c->key_pid, LABEL_NUM,
		  (uint64_t)(int64_t)c->p->procs[t->proc].pid);
	put_label(c, c->key_tid, LABEL_NUM, (uint64_t)(int64_t)t->tid);
	put_label(c, c->key_thread, LABEL_STR, name);
	if (t->ns_pid) /* a container's view of both */
		put_label(c, c->key_ns_pid, LABEL_NUM, (uint64_t)t->ns_pid);
	if (t->ns_tid)
		put_label(c, c->key_ns_tid, LABEL_NUM, (uint64_t)t->ns_tid);
}

/* One Sample per store entry of thread t. */
static int write_thread(struct pp *c, const struct evprof__thread *t)
{
	const struct evprof_profile *p = c->p;
	uint64_t name = c->process_labels ? 0 : extra_str(c, t->name);
	uint64_t proc_name = 0, cg[4];
	bool base = (size_t)(t - p->threads) >= c->first_base;
	uint32_t i;
	int64_t k;

	cgroup_values(c, t, cg);
	if (c->process_labels) {
		const char *pn = p->procs[t->proc].name;

		if (!c->proc_str[t->proc])
			c->proc_str[t->proc] =
			    extra_str(c, pn && *pn ? pn : t->name);
		proc_name = c->proc_str[t->proc];
	}
	for (k = t->first_entry; k >= 0; k = p->store.e[k].next) {
		const uint64_t *a = evprof__entry_vals(p, (size_t)k);
		int32_t st = p->store.e[k].stack;

		c->m.len = 0;
		c->sub.len = 0;
		while (st >= 0) {
			if (!c->loc_at[st] && stack_loc(c, st))
				return -ENOMEM;
			pb_varint(&c->sub, c->loc_at[st]);
			st = c->next_at[st];
		}
		pb_msg(&c->m, SAMPLE_LOCATION_ID, &c->sub);
		c->sub.len = 0;
		for (i = 0; i < c->nv; i++)
			pb_varint(&c->sub, base ? -a[i] : a[i]);
		pb_msg(&c->m, SAMPLE_VALUE, &c->sub);

		if (c->process_labels)
			put_label(c, c->key_process, LABEL_STR, proc_name);
		else
			thread_labels(c, t, name);
		for (i = 0; i < 4; i++)
			if (cg[i])
				put_label(c, c->key_cg[i], LABEL_STR, cg[i]);
		if (base)
			put_label(c, c->key_base, LABEL_STR, c->str_true);
		if (c->m.oom || c->sub.oom)
			return -ENOMEM;
		emit(c->out, PROFILE_SAMPLE, &c->m);
	}
	return c->out->err;
}

static int write_samples(struct pp *c)
{
	const struct evprof_profile *p = c->p;
	uint64_t last =
	    p->last_ns > p->start_mono_ns ? p->last_ns : p->start_mono_ns;
	size_t i;

	if (p->end_mono_ns)
		last = p->end_mono_ns;
	int err = 0;

	for (i = 0; !err && i < p->nr_threads; i++)
		err = write_thread(c, &p->threads[i]);
	if (err)
		return err;
	c->m.len = 0;
	pb_u64(&c->m, PROFILE_DURATION_NANOS, last - p->start_mono_ns);
	evprof__sink_write(c->out, c->m.b, c->m.len);
	return 0;
}

/* Index in c->maps of frame f's mapping, or -1 (none). */
static int map_of(const struct pp *c, const struct evprof__frame *f)
{
	if (f->lib >= 0)
		return f->lib;
	return f->kernel ? (int)c->p->nr_libs : -1;
}

static void write_locations(struct pp *c)
{
	const struct evprof_profile *p = c->p;
	size_t i, k;

	for (i = 0; i < c->nr_locs; i++) {
		const struct loc *l = &c->locs[i];
		const struct evprof__frame *real =
		    &p->frames[c->lf[l->off + l->n - 1]];
		int mi = map_of(c, real);

		c->m.len = 0;
		pb_u64(&c->m, LOCATION_ID, i + 1);
		if (mi >= 0) {
			struct mapping *m = &c->maps[mi];

			pb_u64(&c->m, LOCATION_MAPPING_ID, (uint64_t)mi + 1);
			if (!m->used || real->address < m->lo)
				m->lo = real->address;
			if (!m->used || real->address >= m->hi)
				m->hi = real->address + 1;
			m->used = true;
		}
		pb_u64(&c->m, LOCATION_ADDRESS, real->address);
		for (k = 0; k < l->n; k++) {
			const struct evprof__frame *f =
			    &p->frames[c->lf[l->off + k]];

			c->sub.len = 0;
			pb_u64(&c->sub, LINE_FUNCTION_ID, f->func + 1);
			pb_u64(&c->sub, LINE_LINE, f->line);
			pb_msg(&c->m, LOCATION_LINE, &c->sub);
			if (mi >= 0) {
				c->maps[mi].lines |= f->line != 0;
				c->maps[mi].inl |= f->inline_depth != 0;
				c->maps[mi].files |=
				    p->funcs[f->func].file >= 0;
			}
		}
		emit(c->out, PROFILE_LOCATION, &c->m);
	}
}

static void write_mappings(struct pp *c)
{
	const struct evprof_profile *p = c->p;
	char hex[2 * 64 + 1];
	size_t i;

	for (i = 0; i <= p->nr_libs; i++) {
		const struct mapping *m = &c->maps[i];
		const struct evprof__lib *l =
		    i < p->nr_libs ? &p->libs[i] : NULL;

		if (!m->used)
			continue;
		c->m.len = 0;
		pb_u64(&c->m, MAPPING_ID, i + 1);
		pb_u64(&c->m, MAPPING_MEMORY_START, m->lo);
		pb_u64(&c->m, MAPPING_MEMORY_LIMIT, m->hi);
		pb_u64(&c->m, MAPPING_FILENAME,
		       extra_str(c, l ? l->path : "[kernel.kallsyms]"));
		if (l && l->build_id_len) {
			evprof__hex(hex, l->build_id, l->build_id_len, false);
			pb_u64(&c->m, MAPPING_BUILD_ID, extra_str(c, hex));
		}
		pb_u64(&c->m, MAPPING_HAS_FUNCTIONS, 1);
		pb_u64(&c->m, MAPPING_HAS_FILENAMES, m->files);
		pb_u64(&c->m, MAPPING_HAS_LINE_NUMBERS, m->lines);
		pb_u64(&c->m, MAPPING_HAS_INLINE_FRAMES, m->inl);
		emit(c->out, PROFILE_MAPPING, &c->m);
	}
}

static void write_functions_strings(struct pp *c)
{
	const struct evprof_profile *p = c->p;
	size_t i;

	for (i = 0; i < p->nr_funcs; i++) {
		const struct evprof__func *f = &p->funcs[i];

		c->m.len = 0;
		pb_u64(&c->m, FUNCTION_ID, i + 1);
		pb_u64(&c->m, FUNCTION_NAME, f->name + 1);
		pb_u64(&c->m, FUNCTION_SYSTEM_NAME, f->name + 1);
		if (f->file >= 0)
			pb_u64(&c->m, FUNCTION_FILENAME, (uint64_t)f->file + 1);
		if (f->start_line)
			pb_u64(&c->m, FUNCTION_START_LINE, f->start_line);
		emit(c->out, PROFILE_FUNCTION, &c->m);
	}
	/* string_table[0] must be "". */
	c->m.len = 0;
	pb_len(&c->m, PROFILE_STRING_TABLE, "", 0);
	for (i = 0; i < p->nr_strs; i++) {
		const char *s = evprof__pstr(p, (uint32_t)i);

		pb_len(&c->m, PROFILE_STRING_TABLE, s, strlen(s));
		if (c->m.len >= EVPROF_SINK_BUF) {
			evprof__sink_write(c->out, c->m.b, c->m.len);
			c->m.len = 0;
		}
	}
	evprof__sink_write(c->out, c->m.b, c->m.len);
	evprof__sink_write(c->out, c->extra.b, c->extra.len);
}

static int write_pprof(struct pp *c, const char *def)
{
	const struct evprof_profile *p = c->p;
	int err;

	c->loc_at = calloc(p->nr_stacks + 1, sizeof(*c->loc_at));
	c->next_at = malloc((p->nr_stacks + 1) * sizeof(*c->next_at));
	c->scratch = malloc((p->nr_stacks + 1) * sizeof(*c->scratch));
	c->maps = calloc(p->nr_libs + 1, sizeof(*c->maps));
	c->loc_set = evprof__hashmap_new(loc_hash, loc_eq, c);
	if (!c->loc_set || !c->loc_at || !c->next_at || !c->scratch || !c->maps)
		return -ENOMEM;
	write_header(c, def);
	err = write_samples(c);
	if (err)
		return err;
	write_locations(c);
	write_mappings(c);
	write_functions_strings(c);
	if (c->m.oom || c->sub.oom || c->extra.oom)
		return -ENOMEM;
	return c->out->err;
}

/* Writes the profile into an opened sink; closing it is the caller's. */
static int write_to_sink(const struct evprof_profile *p,
			 struct evprof__sink *out,
			 const struct evprof_pprof_opts *opts,
			 size_t first_base)
{
	const char *def = EVPROF_OPTS_GET(opts, default_type, NULL);
	int labels = EVPROF_OPTS_GET(opts, labels, EVPROF_PPROF_LABELS_THREAD);
	struct pp c = {.p = p, .out = out, .first_base = first_base};
	int err;

	if (labels != EVPROF_PPROF_LABELS_THREAD &&
	    labels != EVPROF_PPROF_LABELS_PROCESS)
		return -EINVAL;
	c.process_labels = labels == EVPROF_PPROF_LABELS_PROCESS;
	c.cg =
	    EVPROF_OPTS_GET(opts, cgroup_labels, 0) & EVPROF_PPROF_CGROUP_ALL;
	if (!EVPROF_OPTS_GET(opts, cgroup_labels, 0) && !c.process_labels)
		c.cg = EVPROF_PPROF_CGROUP_ALL;
	if (!def)
		def = p->has_cpu ? "cpu" : "samples";
	c.nv = COL_COUNTERS + p->nr_counters + p->nr_weights;
	c.next_str = p->nr_strs + 1;
	c.proc_str = calloc(p->nr_procs + 1, sizeof(*c.proc_str));
	err = c.proc_str ? write_pprof(&c, def) : -ENOMEM;
	free(c.extra.b);
	free(c.m.b);
	free(c.sub.b);
	free(c.lf);
	free(c.locs);
	evprof__hashmap_free(c.loc_set);
	free(c.loc_at);
	free(c.next_at);
	free(c.scratch);
	free(c.maps);
	free(c.proc_str);
	return err;
}

static int check_args(const struct evprof_profile *p,
		      const struct evprof_pprof_opts *opts)
{
	const char *def = EVPROF_OPTS_GET(opts, default_type, NULL);

	if (!p || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	if (def && evprof__profile_column(p, def) < 0)
		return -ENOENT;
	return 0;
}

int evprof__write_pprof_diff(const struct evprof_profile *p, const char *path,
			     const struct evprof_pprof_opts *opts,
			     size_t first_base)
{
	struct evprof__sink out;
	int err, cerr;

	err = check_args(p, opts);
	if (err || !path)
		return err ? err : -EINVAL;
	err = evprof__sink_open(&out, path);
	if (err)
		return err;
	err = write_to_sink(p, &out, opts, first_base);
	cerr = evprof__sink_close(&out, !err);
	return err ? err : cerr;
}

int evprof_profile__write_pprof(const struct evprof_profile *p,
				const char *path,
				const struct evprof_pprof_opts *opts)
{
	return evprof__write_pprof_diff(p, path, opts, SIZE_MAX);
}

int evprof_profile__write_pprof_mem(const struct evprof_profile *p, void **buf,
				    size_t *len,
				    const struct evprof_pprof_opts *opts)
{
	struct evprof__sink out;
	char *b = NULL;
	size_t n = 0;
	FILE *f;
	int err, cerr;

	err = check_args(p, opts);
	if (err || !buf || !len)
		return err ? err : -EINVAL;
	f = open_memstream(&b, &n);
	if (!f)
		return -errno;
	err = evprof__sink_open_file(&out, f);
	if (!err) {
		err = write_to_sink(p, &out, opts, SIZE_MAX);
		cerr = evprof__sink_close(&out, !err);
		err = err ? err : cerr;
	}
	if (fclose(f) && !err)
		err = -ENOMEM;
	if (err) {
		free(b);
		return err;
	}
	*buf = b;
	*len = n;
	return 0;
}
