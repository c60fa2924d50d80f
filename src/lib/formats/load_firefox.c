// SPDX-License-Identifier: MIT
/*
 * Firefox Profiler processed-format reader (the layout out_firefox.c
 * writes: shared tables, stackTable.prefixOffset or prefix), parsed with
 * json-c. Every index is checked against its table.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <json-c/json.h>

#include "load.h"
#include "load_common.h"
#include "profile/profile.h"

#define MALFORMED (-EVPROF_ERR_MALFORMED)

typedef struct json_object jo;

struct fx {
	struct evprof_profile *p;
	jo *root, *shared;
	jo *strings;
	size_t nr_strs;
	int *lib_of; /* per libs[] entry: lib index */
	size_t nr_libs;
	int32_t *frame_of; /* per frameTable row: frame index */
	int32_t *stack_of; /* per stackTable row: stack index */
	size_t nr_stacks;
};

static jo *get(jo *o, const char *key)
{
	jo *v = NULL;

	if (!o || !json_object_is_type(o, json_type_object) ||
	    !json_object_object_get_ex(o, key, &v))
		return NULL;
	return v;
}

/* o[key] when it is an array of at least n elements. */
static jo *col(jo *o, const char *key, size_t n)
{
	jo *a = get(o, key);

	if (!a || !json_object_is_type(a, json_type_array) ||
	    json_object_array_length(a) < n)
		return NULL;
	return a;
}

/* a[i] as an integer; false for null, a fraction or another type. */
static bool int_at(jo *a, size_t i, int64_t *v)
{
	jo *e = json_object_array_get_idx(a, i);

	if (!e || !json_object_is_type(e, json_type_int))
		return false;
	*v = json_object_get_int64(e);
	return true;
}

/*
 * e * 10^dec exactly, from the number's own text ("1234.567"), as the
 * writer prints fixed-point values; other spellings go through a double.
 */
static bool fixed(jo *e, unsigned dec, int64_t *v)
{
	const char *s;
	int64_t x = 0, sign = 1;
	unsigned d = 0;
	bool frac = false, digits = false;

	if (!e || !(json_object_is_type(e, json_type_int) ||
		    json_object_is_type(e, json_type_double)))
		return false;
	s = json_object_get_string(e);
	if (*s == '-') {
		sign = -1;
		s++;
	}
	for (; *s; s++) {
		if (*s == '.' && !frac) {
			frac = true;
			continue;
		}
		if (*s < '0' || *s > '9' || (frac && d == dec) ||
		    x > (INT64_MAX - 9) / 10)
			break;
		x = x * 10 + (*s - '0');
		digits = true;
		d += frac;
	}
	if (*s || !digits) {
		double f = json_object_get_double(e) * pow(10, dec);

		if (!(fabs(f) < 9e18))
			return false;
		*v = llround(f);
		return true;
	}
	for (; d < dec; d++) {
		if (x > INT64_MAX / 10)
			return false;
		x *= 10;
	}
	*v = sign * x;
	return true;
}

/* A table's "length", at most INT32_MAX. */
static bool table_len(jo *t, int64_t *n)
{
	jo *l = get(t, "length");

	if (!l || !json_object_is_type(l, json_type_int))
		return false;
	*n = json_object_get_int64(l);
	return *n >= 0 && *n <= INT32_MAX;
}

/* String table entry idx, or NULL. */
static const char *str_at(struct fx *c, int64_t idx)
{
	jo *e;

	if (idx < 0 || (size_t)idx >= c->nr_strs)
		return NULL;
	e = json_object_array_get_idx(c->strings, (size_t)idx);
	if (!e || !json_object_is_type(e, json_type_string))
		return NULL;
	return json_object_get_string(e);
}

static int read_meta(struct fx *c)
{
	jo *meta = get(c->root, "meta"), *a;
	int64_t v;
	size_t i, n;
	int err;

	if (!meta)
		return MALFORMED;
	if (fixed(get(meta, "startTimeAsClockMonotonicNanosecondsSinceBoot"), 0,
		  &v) &&
	    v >= 0)
		c->p->start_mono_ns = (uint64_t)v;
	if (fixed(get(meta, "startTime"), 6, &v) && v >= 0)
		c->p->start_wall_ns = (uint64_t)v;
	if (fixed(get(meta, "interval"), 6, &v) && v > 0)
		c->p->interval_ns = (uint64_t)v;
	a = col(meta, "evprofNotes", 0);
	n = a ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++) {
		jo *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			return MALFORMED;
		err = evprof_profile__add_note(c->p, json_object_get_string(e));
		if (err)
			return err;
	}
	/* Counters in the order recorded, then any a thread adds. */
	a = col(meta, "evprofCounters", 0);
	n = a ? json_object_array_length(a) : 0;
	for (i = 0; i < n; i++) {
		jo *e = json_object_array_get_idx(a, i);

		if (!json_object_is_type(e, json_type_string))
			return MALFORMED;
		err = evprof_profile__add_counter(c->p,
						  json_object_get_string(e));
		if (err < 0)
			return err;
	}
	return 0;
}

static int read_libs(struct fx *c)
{
	jo *libs = col(c->root, "libs", 0);
	size_t i;

	c->nr_libs = libs ? json_object_array_length(libs) : 0;
	c->lib_of = calloc(c->nr_libs + 1, sizeof(*c->lib_of));
	if (!c->lib_of)
		return -ENOMEM;
	for (i = 0; i < c->nr_libs; i++) {
		jo *l = json_object_array_get_idx(libs, i);
		jo *path = get(l, "path"), *name = get(l, "name");
		jo *code = get(l, "codeId");
		struct evprof_profile_lib lib = {0};
		uint8_t id[64];

		if (!json_object_is_type(path, json_type_string))
			return MALFORMED;
		lib.path = json_object_get_string(path);
		if (json_object_is_type(name, json_type_string))
			lib.name = json_object_get_string(name);
		if (json_object_is_type(code, json_type_string)) {
			int n = evprof__unhex(json_object_get_string(code), id,
					      sizeof(id));

			if (n < 0)
				return MALFORMED;
			lib.build_id = id;
			lib.build_id_len = (size_t)n;
		}
		c->lib_of[i] = evprof_profile__add_lib(c->p, &lib);
		if (c->lib_of[i] < 0)
			return c->lib_of[i];
	}
	return 0;
}

static int read_frames(struct fx *c)
{
	jo *ft = get(c->shared, "frameTable"),
	   *fn = get(c->shared, "funcTable");
	jo *rt = get(c->shared, "resourceTable"),
	   *src = get(c->shared, "sources");
	jo *ns = get(c->shared, "nativeSymbols");
	jo *cats = col(get(c->root, "meta"), "categories", 0);
	int64_t n, nf, nr = 0, nsrc = 0, nsym = 0;
	jo *f_addr, *f_depth, *f_cat, *f_func, *f_line, *f_sym;
	jo *fn_name, *fn_res, *fn_src, *fn_line, *r_lib, *s_file, *y_addr,
	    *y_size;
	size_t i;

	if (!table_len(ft, &n) || !table_len(fn, &nf) ||
	    (rt && !table_len(rt, &nr)) || (src && !table_len(src, &nsrc)) ||
	    (ns && !table_len(ns, &nsym)))
		return MALFORMED;
	f_addr = col(ft, "address", (size_t)n);
	f_depth = col(ft, "inlineDepth", (size_t)n);
	f_cat = col(ft, "category", (size_t)n);
	f_func = col(ft, "func", (size_t)n);
	f_line = col(ft, "line", (size_t)n);
	f_sym = col(ft, "nativeSymbol", (size_t)n);
	fn_name = col(fn, "name", (size_t)nf);
	fn_res = col(fn, "resource", (size_t)nf);
	fn_src = col(fn, "source", (size_t)nf);
	fn_line = col(fn, "lineNumber", (size_t)nf);
	r_lib = col(rt, "lib", (size_t)nr);
	s_file = col(src, "filename", (size_t)nsrc);
	y_addr = col(ns, "address", (size_t)nsym);
	y_size = col(ns, "functionSize", (size_t)nsym);
	if (!f_func || !fn_name || (n && !(f_addr && f_depth && f_cat)))
		return MALFORMED;
	c->frame_of = malloc(((size_t)n + 1) * sizeof(*c->frame_of));
	if (!c->frame_of)
		return -ENOMEM;
	for (i = 0; i < (size_t)n; i++) {
		struct evprof_profile_frame f = {.lib = -1};
		int64_t fi, v, cat;
		jo *cn;
		int idx;

		if (!int_at(f_func, i, &fi) || fi < 0 || fi >= nf ||
		    !int_at(fn_name, (size_t)fi, &v) ||
		    !(f.function = str_at(c, v)))
			return MALFORMED;
		if (fn_res && int_at(fn_res, (size_t)fi, &v) && v >= 0) {
			int64_t li;

			if (v >= nr || !r_lib ||
			    !int_at(r_lib, (size_t)v, &li) || li < 0 ||
			    (size_t)li >= c->nr_libs)
				return MALFORMED;
			f.lib = c->lib_of[li];
		}
		if (fn_src && int_at(fn_src, (size_t)fi, &v)) {
			int64_t si;

			if (v < 0 || v >= nsrc || !s_file ||
			    !int_at(s_file, (size_t)v, &si) ||
			    !(f.file = str_at(c, si)))
				return MALFORMED;
		}
		if (f.lib >= 0 && int_at(f_addr, i, &v) && v >= 0)
			f.address = (uint64_t)v;
		if (int_at(f_depth, i, &v) && v > 0 && v <= UINT16_MAX)
			f.inline_depth = (uint16_t)v;
		if (f_line && int_at(f_line, i, &v) && v > 0 && v <= UINT32_MAX)
			f.line = (uint32_t)v;
		if (fn_line && int_at(fn_line, (size_t)fi, &v) && v > 0 &&
		    v <= UINT32_MAX)
			f.function_line = (uint32_t)v;
		if (int_at(f_cat, i, &cat) && cats && cat >= 0 &&
		    (size_t)cat < json_object_array_length(cats) &&
		    (cn = get(json_object_array_get_idx(cats, (size_t)cat),
			      "name")) &&
		    json_object_is_type(cn, json_type_string))
			f.kernel =
			    !strcmp(json_object_get_string(cn), "Kernel");
		if (f_sym && int_at(f_sym, i, &v) && v >= 0 && v < nsym &&
		    y_addr && y_size) {
			int64_t a, sz;

			if (int_at(y_addr, (size_t)v, &a) && a >= 0 &&
			    int_at(y_size, (size_t)v, &sz) && sz > 0) {
				f.symbol_address = (uint64_t)a;
				f.symbol_size = (uint64_t)sz;
			}
		}
		idx = evprof_profile__frame(c->p, &f);
		if (idx < 0)
			return idx;
		c->frame_of[i] = idx;
	}
	return 0;
}

static int read_stacks(struct fx *c)
{
	jo *st = get(c->shared, "stackTable"), *frame, *off, *prefix;
	int64_t n, nframes;
	size_t i;

	if (!table_len(st, &n) ||
	    !table_len(get(c->shared, "frameTable"), &nframes))
		return MALFORMED;
	frame = col(st, "frame", (size_t)n);
	off = col(st, "prefixOffset", (size_t)n);
	prefix = off ? NULL : col(st, "prefix", (size_t)n);
	if (n && (!frame || (!off && !prefix)))
		return MALFORMED;
	c->nr_stacks = (size_t)n;
	c->stack_of = malloc(((size_t)n + 1) * sizeof(*c->stack_of));
	if (!c->stack_of)
		return -ENOMEM;
	for (i = 0; i < (size_t)n; i++) {
		int64_t f, k, parent = -1;
		int idx;

		if (!int_at(frame, i, &f) || f < 0 || f >= nframes)
			return MALFORMED;
		if (off) {
			if (!int_at(off, i, &k) || k < 0 || (uint64_t)k > i)
				return MALFORMED;
			parent = k ? (int64_t)i - k : -1;
		} else if (int_at(prefix, i, &k)) {
			/* Parents come first in the processed format. */
			if (k < 0 || (uint64_t)k >= i)
				return MALFORMED;
			parent = k;
		}
		idx = evprof_profile__stack(
		    c->p, parent < 0 ? -1 : c->stack_of[parent],
		    c->frame_of[f]);
		if (idx < 0)
			return idx;
		c->stack_of[i] = idx;
	}
	return 0;
}

static bool int_str(jo *o, int64_t *v)
{
	const char *s;
	char *end;

	if (json_object_is_type(o, json_type_int)) {
		*v = json_object_get_int64(o);
		return true;
	}
	if (!json_object_is_type(o, json_type_string))
		return false;
	s = json_object_get_string(o);
	errno = 0;
	*v = strtoll(s, &end, 10);
	return !errno && *s && !*end;
}

/* Registers the counters the threads carry beyond meta.evprofCounters. */
static int thread_counters(struct fx *c, jo *threads)
{
	size_t i, n = json_object_array_length(threads);

	for (i = 0; i < n; i++) {
		jo *t = json_object_array_get_idx(threads, i);
		jo *ev = get(get(t, "samples"), "samplyEventDeltas");
		jo *w = get(t, "evprofWeight");

		/* Our weight tracks (off-cpu, preempted), see out_firefox.c. */
		if (json_object_is_type(w, json_type_string)) {
			int err = evprof_profile__add_weight_type(
			    c->p, json_object_get_string(w));

			if (err < 0)
				return err;
		}
		if (!ev || !json_object_is_type(ev, json_type_object))
			continue;
		json_object_object_foreach(ev, key, val)
		{
			int err = evprof_profile__add_counter(c->p, key);

			(void)val;
			if (err < 0)
				return err;
		}
	}
	return 0;
}

static int read_samples(struct fx *c, int thr, jo *s)
{
	struct evprof_profile *p = c->p;
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS];
	jo *cols[EVPROF_PROFILE_MAX_COUNTERS] = {0};
	jo *stack, *dt, *w, *cpu, *ev = get(s, "samplyEventDeltas");
	uint64_t t = p->start_mono_ns;
	int64_t n;
	uint32_t k;
	size_t i;

	if (!table_len(s, &n))
		return MALFORMED;
	stack = col(s, "stack", (size_t)n);
	dt = col(s, "timeDeltas", (size_t)n);
	w = col(s, "weight", (size_t)n);
	cpu = col(s, "threadCPUDelta", (size_t)n);
	if (!stack || !dt)
		return MALFORMED;
	for (k = 0; k < p->nr_counters; k++) {
		cols[k] = get(ev, p->counters[k]);
		if (cols[k] && !col(ev, p->counters[k], (size_t)n))
			return MALFORMED;
	}
	for (i = 0; i < (size_t)n; i++) {
		struct evprof_profile_sample smp = {.stack = -1,
						    .counters = vals};
		int64_t v;
		int err;

		if (int_at(stack, i, &v)) {
			if (v < 0 || (size_t)v >= c->nr_stacks)
				return MALFORMED;
			smp.stack = c->stack_of[v];
		}
		if (!fixed(json_object_array_get_idx(dt, i), 6, &v))
			return MALFORMED;
		t += (uint64_t)v;
		smp.time_ns = t;
		/* Weight 0: values that stand for no sample (a counter's). */
		if (w && int_at(w, i, &v) && v >= 0) {
			smp.weight = (uint64_t)v;
			smp.values_only = !v;
		}
		if (cpu && fixed(json_object_array_get_idx(cpu, i), 3, &v) &&
		    v > 0)
			smp.cpu_delta_ns = (uint64_t)v;
		for (k = 0; k < p->nr_counters; k++) {
			if (cols[k] && int_at(cols[k], i, &v) && v >= 0) {
				vals[k] = (uint64_t)v;
				smp.has_counters |= 1ULL << k;
			}
		}
		err = evprof_profile__add_sample(p, thr, &smp);
		if (err)
			return err;
	}
	return 0;
}

/*
 * A weight track of thread thr: each sample is a wait of weight type wt,
 * its weight the ms, its time the start (out_firefox_rows.c).
 */
static int read_weights(struct fx *c, int thr, const char *wname, jo *s)
{
	int wt = evprof_profile__add_weight_type(c->p, wname);
	uint64_t t = c->p->start_mono_ns;
	jo *stack, *weight, *dt;
	int64_t n, v;

	if (wt < 0)
		return wt;
	if (!table_len(s, &n))
		return MALFORMED;
	stack = col(s, "stack", (size_t)n);
	weight = col(s, "weight", (size_t)n);
	dt = col(s, "timeDeltas", (size_t)n);
	if (!stack || !weight || !dt)
		return MALFORMED;
	for (size_t i = 0; i < (size_t)n; i++) {
		struct evprof_profile_wait w = {.stack = -1, .weight = wt};
		int err;

		if (int_at(stack, i, &v)) {
			if (v < 0 || (size_t)v >= c->nr_stacks)
				return MALFORMED;
			w.stack = c->stack_of[v];
		}
		if (!fixed(json_object_array_get_idx(dt, i), 6, &v))
			return MALFORMED;
		t += (uint64_t)v;
		w.start_ns = t;
		if (!fixed(json_object_array_get_idx(weight, i), 6, &v) ||
		    v < 0)
			return MALFORMED;
		w.duration_ns = (uint64_t)v;
		err = evprof_profile__add_wait(c->p, thr, &w);
		if (err)
			return err;
	}
	return 0;
}

/* Who ran a thread, as evprof writes it: evprofCgroup, evprofNsPid/Tid. */
struct who {
	const char *cg;
	int64_t ns_pid, ns_tid;
};

static struct who read_who(jo *t)
{
	jo *cg = get(t, "evprofCgroup"), *np = get(t, "evprofNsPid"),
	   *nt = get(t, "evprofNsTid");
	struct who w = {0};

	if (json_object_is_type(cg, json_type_string))
		w.cg = json_object_get_string(cg);
	if (json_object_is_type(np, json_type_int))
		w.ns_pid = json_object_get_int64(np);
	if (w.ns_pid > 0 && w.ns_pid <= INT32_MAX &&
	    json_object_is_type(nt, json_type_int))
		w.ns_tid = json_object_get_int64(nt);
	if (w.ns_pid <= 0 || w.ns_pid > INT32_MAX)
		w.ns_pid = 0;
	if (w.ns_tid <= 0 || w.ns_tid > INT32_MAX)
		w.ns_tid = 0;
	return w;
}

/*
 * The process name pn as evprof wrote it before who ran its thread was
 * shown after it ("sh [container 0123456789ab]"): pn without that.
 */
static const char *without_who(const char *pn, const struct who *w, char *buf,
			       size_t len)
{
	char who[300], tail[310];
	size_t n = strlen(pn), k;

	if (!w->cg && !w->ns_pid)
		return pn;
	snprintf(tail, sizeof(tail), " [%s]",
		 evprof__who_show(w->cg, (int)w->ns_pid, who, sizeof(who)));
	k = strlen(tail);
	if (n <= k || n - k >= len || strcmp(pn + n - k, tail))
		return pn;
	memcpy(buf, pn, n - k);
	buf[n - k] = '\0';
	return buf;
}

static int read_threads(struct fx *c)
{
	struct evprof_profile *p = c->p;
	jo *threads = col(c->root, "threads", 0);
	int err, last = 0; /* the latest thread's index + 1 */
	size_t i, n;

	if (!threads)
		return MALFORMED;
	err = thread_counters(c, threads);
	if (err)
		return err;
	n = json_object_array_length(threads);
	for (i = 0; i < n; i++) {
		jo *t = json_object_array_get_idx(threads, i);
		jo *name = get(t, "name"), *pname = get(t, "processName");
		jo *wname = get(t, "evprofWeight");
		int64_t pid, tid;
		int proc, thr;
		const char *pn;
		struct who w;
		char pbuf[600];

		/* A counter track repeats its thread's deltas as weights. */
		if (get(t, "evprofCounter"))
			continue;
		/* A weight track follows its thread (same tid). */
		if (json_object_is_type(wname, json_type_string)) {
			struct evprof_profile_thread_info ti;

			if (!last || !int_str(get(t, "tid"), &tid) ||
			    evprof_profile__thread_info(p, last - 1, &ti) ||
			    ti.tid != tid)
				return MALFORMED;
			err = read_weights(c, last - 1,
					   json_object_get_string(wname),
					   get(t, "samples"));
			if (err)
				return err;
			continue;
		}

		if (!int_str(get(t, "pid"), &pid) ||
		    !int_str(get(t, "tid"), &tid) || pid < INT32_MIN ||
		    pid > INT32_MAX || tid < INT32_MIN || tid > INT32_MAX ||
		    !json_object_is_type(name, json_type_string))
			return MALFORMED;
		pn = json_object_is_type(pname, json_type_string)
			 ? json_object_get_string(pname)
			 : json_object_get_string(name);
		w = read_who(t);
		proc = evprof__load_process(
		    p, (int)pid, without_who(pn, &w, pbuf, sizeof(pbuf)));
		if (proc < 0)
			return proc;
		thr = evprof_profile__add_thread(
		    p, proc, (int)tid, json_object_get_string(name), 0);
		if (thr < 0)
			return thr;
		if (w.cg &&
		    (err = evprof_profile__set_thread_cgroup(p, thr, w.cg)))
			return err;
		if (w.ns_pid && (err = evprof_profile__set_thread_ns_ids(
				     p, thr, (int)w.ns_pid, (int)w.ns_tid)))
			return err;
		err = read_samples(c, thr, get(t, "samples"));
		if (err)
			return err;
		last = thr + 1;
	}
	return 0;
}

int evprof__load_firefox(const char *buf, size_t len,
			 struct evprof_profile **out)
{
	struct json_tokener *tok = json_tokener_new_ex(64);
	struct evprof_profile *p = evprof_profile__new(NULL);
	struct fx c = {.p = p};
	int err;

	if (!tok || !p) {
		json_tokener_free(tok);
		evprof_profile__free(p);
		return -ENOMEM;
	}
	if (len > INT32_MAX) {
		json_tokener_free(tok);
		evprof_profile__free(p);
		return -EFBIG;
	}
	c.root = json_tokener_parse_ex(tok, buf, (int)len);
	err = c.root && json_tokener_get_error(tok) == json_tokener_success
		  ? 0
		  : MALFORMED;
	json_tokener_free(tok);
	c.shared = get(c.root, "shared");
	c.strings = col(c.shared, "stringArray", 0);
	if (!err && !c.strings)
		err = MALFORMED;
	if (!err) {
		c.nr_strs = json_object_array_length(c.strings);
		err = read_meta(&c);
	}
	if (!err)
		err = read_libs(&c);
	if (!err)
		err = read_frames(&c);
	if (!err)
		err = read_stacks(&c);
	if (!err)
		err = read_threads(&c);
	json_object_put(c.root);
	free(c.lib_of);
	free(c.frame_of);
	free(c.stack_of);
	if (err)
		evprof_profile__free(p);
	else
		*out = p;
	return err;
}
