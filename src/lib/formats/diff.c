// SPDX-License-Identifier: MIT
/*
 * Differential profiles: per-function sums of two profiles (profile_funcs)
 * joined by name and lib (a name in one lib on each side joined whatever
 * the libs) over the columns both carry, and the pprof form of
 * the difference (one merged profile whose base half the pprof writer
 * negates).
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/diff.h>

#include "pprof.h"
#include "profile/profile.h"

#define MAX_COLS                                                               \
	(COL_COUNTERS + EVPROF_PROFILE_MAX_COUNTERS +                          \
	 EVPROF_PROFILE_MAX_WEIGHTS)

/* One compared column: where it is in each profile's store. */
struct dcol {
	const char *name;
	bool ns;
	int col[2];   /* store column in the base [0] and the new [1] */
	double scale; /* applied to the base's values */
	double total[2];
};

struct dfunc {
	const char *name;
	const char *lib;
};

/* Values per function: base self, new self, base total, new total. */
enum { V_BASE_SELF, V_NEW_SELF, V_BASE_TOTAL, V_NEW_TOTAL, V_N };

struct evprof_profile_diff {
	const struct evprof_profile *prof[2]; /* base, new */
	size_t nc;
	struct dcol cols[MAX_COLS];
	size_t nf;
	struct dfunc *funcs;
	uint8_t *has; /* per row: bit 0 base, bit 1 new */
	double *vals; /* nf * V_N * nc */
};

/* Registers the column named name when both profiles carry it. */
static void add_column(struct evprof_profile_diff *d, const char *name, bool ns)
{
	int b = evprof__profile_column(d->prof[0], name);
	int n = evprof__profile_column(d->prof[1], name);
	struct dcol *c = &d->cols[d->nc];

	if (b < 0 || n < 0)
		return;
	/* A counter in one and a time in the other are not comparable. */
	if (ns !=
	    (n >= COL_COUNTERS + (int)d->prof[1]->nr_counters || n == COL_CPU))
		return;
	*c = (struct dcol){.name = name, .ns = ns, .col = {b, n}, .scale = 1};
	d->nc++;
}

static void find_columns(struct evprof_profile_diff *d)
{
	const struct evprof_profile *base = d->prof[0];
	uint32_t i;

	add_column(d, "samples", false);
	if (base->has_cpu && d->prof[1]->has_cpu)
		add_column(d, "cpu", true);
	for (i = 0; i < base->nr_counters; i++)
		add_column(d, base->counters[i], false);
	for (i = 0; i < base->nr_weights; i++)
		add_column(d, base->weights[i], true);
}

static int cmp_group(const struct evprof__funcs *a, uint32_t x,
		     const struct evprof__funcs *b, uint32_t y)
{
	int c = strcmp(evprof__funcs_name(a, x), evprof__funcs_name(b, y));

	return c ? c : strcmp(evprof__funcs_lib(a, x), evprof__funcs_lib(b, y));
}

static int cmp_sorted(const void *a, const void *b, void *ctx)
{
	return cmp_group(ctx, *(const uint32_t *)a, ctx, *(const uint32_t *)b);
}

/* fs's functions sorted by (name, lib); NULL for no memory. */
static uint32_t *sorted(const struct evprof__funcs *fs)
{
	uint32_t *idx = malloc((fs->n + 1) * sizeof(*idx));

	if (!idx)
		return NULL;
	for (size_t i = 0; i < fs->n; i++)
		idx[i] = (uint32_t)i;
	qsort_r(idx, fs->n, sizeof(*idx), cmp_sorted, (void *)fs);
	return idx;
}

/* Adds function g of side s (a group of fs[s]) to row f's values: one
 * row may sum several groups (two libs of one file name). */
static void add_values(struct evprof_profile_diff *d,
		       const struct evprof__funcs *fs, int s, uint32_t g,
		       size_t f)
{
	double *v = &d->vals[f * V_N * d->nc];

	for (size_t c = 0; c < d->nc; c++) {
		const struct dcol *col = &d->cols[c];
		size_t at = (size_t)g * fs->nv + (size_t)col->col[s];
		double k = s ? 1 : col->scale;

		v[(s ? V_NEW_SELF : V_BASE_SELF) * d->nc + c] +=
		    (double)fs->self[at] * k;
		v[(s ? V_NEW_TOTAL : V_BASE_TOTAL) * d->nc + c] +=
		    (double)fs->total[at] * k;
	}
}

/*
 * The rows of one function name: groups[s][0..n[s]) of side s, sorted by
 * lib. Same lib name, one row. A name left in one lib on each side (the
 * program renamed, app-v1 against app-v2) is the same function: one row
 * under the new lib.
 */
static void join_name(struct evprof_profile_diff *d,
		      const struct evprof__funcs *fs, uint32_t *const groups[2],
		      const size_t n[2])
{
	size_t first = d->nf, only[2] = {0, 0}, at[2] = {0, 0};
	uint8_t *has = d->has + first;

	for (int s = 0; s < 2; s++) {
		for (size_t k = 0; k < n[s]; k++) {
			uint32_t g = groups[s][k];
			const char *lib = evprof__funcs_lib(&fs[s], g);
			size_t r = first;

			while (r < d->nf && strcmp(d->funcs[r].lib, lib))
				r++;
			if (r == d->nf) {
				d->funcs[d->nf++] = (struct dfunc){
				    evprof__funcs_name(&fs[s], g), lib};
			}
			add_values(d, &fs[s], s, g, r);
			d->has[r] |= 1 << s;
		}
	}
	for (size_t r = 0; r < d->nf - first; r++) {
		for (int s = 0; s < 2; s++) {
			if (has[r] == 1 << s) {
				only[s]++;
				at[s] = first + r;
			}
		}
	}
	if (only[0] == 1 && only[1] == 1) {
		double *b = &d->vals[at[0] * V_N * d->nc];
		double *o = &d->vals[at[1] * V_N * d->nc];

		for (size_t c = 0; c < d->nc; c++) {
			b[V_NEW_SELF * d->nc + c] = o[V_NEW_SELF * d->nc + c];
			b[V_NEW_TOTAL * d->nc + c] = o[V_NEW_TOTAL * d->nc + c];
		}
		d->funcs[at[0]].lib = d->funcs[at[1]].lib;
		/* The new-only row goes: the last row takes its place. */
		d->nf--;
		d->has[at[0]] = 3;
		if (at[1] != d->nf) {
			d->funcs[at[1]] = d->funcs[d->nf];
			d->has[at[1]] = d->has[d->nf];
			memcpy(o, &d->vals[d->nf * V_N * d->nc],
			       V_N * d->nc * sizeof(*o));
		}
		d->has[d->nf] = 0;
		memset(&d->vals[d->nf * V_N * d->nc], 0,
		       V_N * d->nc * sizeof(*o));
	}
}

/* Joins the two sorted function lists into d's rows, name by name. */
static int join(struct evprof_profile_diff *d, const struct evprof__funcs *fs)
{
	uint32_t *idx[2] = {sorted(&fs[0]), sorted(&fs[1])};
	size_t i[2] = {0, 0}, n = fs[0].n + fs[1].n;
	int err = -ENOMEM;

	d->funcs = calloc(n + 1, sizeof(*d->funcs));
	d->vals = calloc((n + 1) * V_N * d->nc, sizeof(*d->vals));
	d->has = calloc(n + 1, 1);
	if (!idx[0] || !idx[1] || !d->funcs || !d->vals || !d->has)
		goto out;
	while (i[0] < fs[0].n || i[1] < fs[1].n) {
		const char *name = NULL;
		uint32_t *groups[2];
		size_t run[2];

		/* The first name of either side. */
		for (int s = 0; s < 2; s++) {
			const char *c;

			if (i[s] == fs[s].n)
				continue;
			c = evprof__funcs_name(&fs[s], idx[s][i[s]]);
			if (!name || strcmp(c, name) < 0)
				name = c;
		}
		for (int s = 0; s < 2; s++) {
			groups[s] = idx[s] + i[s];
			run[s] = 0;
			while (i[s] + run[s] < fs[s].n &&
			       !strcmp(evprof__funcs_name(
					   &fs[s], idx[s][i[s] + run[s]]),
				       name))
				run[s]++;
			i[s] += run[s];
		}
		join_name(d, fs, groups, run);
	}
	err = 0;
out:
	free(idx[0]);
	free(idx[1]);
	return err;
}

static int compare(struct evprof_profile_diff *d, bool normalize)
{
	struct evprof__funcs fs[2] = {0};
	int err = 0, s;

	for (s = 0; s < 2; s++) {
		err = evprof__funcs_init(&fs[s], d->prof[s]);
		if (err)
			break;
		for (size_t t = 0; t < d->prof[s]->nr_threads; t++)
			evprof__funcs_add_thread(&fs[s], t);
	}
	for (size_t c = 0; !err && c < d->nc; c++) {
		struct dcol *col = &d->cols[c];

		for (s = 0; s < 2; s++)
			col->total[s] = (double)fs[s].all[col->col[s]];
		if (normalize && col->total[0] > 0) {
			col->scale = col->total[1] / col->total[0];
			col->total[0] = col->total[1];
		}
	}
	if (!err)
		err = join(d, fs);
	evprof__funcs_fini(&fs[0]);
	evprof__funcs_fini(&fs[1]);
	return err;
}

struct evprof_profile_diff *
evprof_profile_diff__new(const struct evprof_profile *base,
			 const struct evprof_profile *new_,
			 const struct evprof_profile_diff_opts *opts)
{
	struct evprof_profile_diff *d;
	int err;

	if (!base || !new_ || !EVPROF_OPTS_VALID(opts, true)) {
		errno = EINVAL;
		return NULL;
	}
	d = calloc(1, sizeof(*d));
	if (!d) {
		errno = ENOMEM;
		return NULL;
	}
	d->prof[0] = base;
	d->prof[1] = new_;
	find_columns(d);
	err = compare(d, EVPROF_OPTS_GET(opts, normalize, false));
	if (err) {
		evprof_profile_diff__free(d);
		errno = -err;
		return NULL;
	}
	return d;
}

void evprof_profile_diff__free(struct evprof_profile_diff *d)
{
	if (!d)
		return;
	free(d->funcs);
	free(d->has);
	free(d->vals);
	free(d);
}

size_t evprof_profile_diff__nr_columns(const struct evprof_profile_diff *d)
{
	return d ? d->nc : 0;
}

int evprof_profile_diff__column(const struct evprof_profile_diff *d, size_t c,
				struct evprof_profile_diff_column *col)
{
	if (!d || !col || c >= d->nc)
		return -EINVAL;
	*col = (struct evprof_profile_diff_column){
	    d->cols[c].name, d->cols[c].ns, d->cols[c].total[0],
	    d->cols[c].total[1]};
	return 0;
}

int evprof_profile_diff__find_column(const struct evprof_profile_diff *d,
				     const char *name)
{
	if (!d || !name)
		return -EINVAL;
	for (size_t c = 0; c < d->nc; c++)
		if (!strcmp(d->cols[c].name, name))
			return (int)c;
	return -ENOENT;
}

size_t evprof_profile_diff__nr_functions(const struct evprof_profile_diff *d)
{
	return d ? d->nf : 0;
}

int evprof_profile_diff__function(const struct evprof_profile_diff *d, size_t i,
				  struct evprof_profile_diff_function *f)
{
	const double *v;

	if (!d || !f || i >= d->nf)
		return -EINVAL;
	v = &d->vals[i * V_N * d->nc];
	*f = (struct evprof_profile_diff_function){
	    .name = d->funcs[i].name,
	    .lib = d->funcs[i].lib,
	    .base_self = v + V_BASE_SELF * d->nc,
	    .new_self = v + V_NEW_SELF * d->nc,
	    .base_total = v + V_BASE_TOTAL * d->nc,
	    .new_total = v + V_NEW_TOTAL * d->nc,
	};
	return 0;
}

/* ---- pprof ---------------------------------------------------------------
 * The merged profile m holds the new profile's threads, then the base's,
 * with only the compared columns (counters and weight types in d's order).
 */

/* Index maps from one source profile into m. */
struct copy {
	struct evprof_profile *m;
	const struct evprof_profile_diff *d;
	int side; /* 0: base, 1: new */
	const struct evprof_profile *src;
	int *lib, *proc, *frame, *stack;
};

static int copy_tables(struct copy *c)
{
	const struct evprof_profile *p = c->src;
	size_t i;
	int r = 0;

	for (i = 0; r >= 0 && i < p->nr_libs; i++) {
		const struct evprof__lib *l = &p->libs[i];
		struct evprof_profile_lib pl = {
		    .path = l->path,
		    .name = evprof__pstr(p, l->name),
		    .build_id = l->build_id_len ? l->build_id : NULL,
		    .build_id_len = l->build_id_len,
		    .arch = l->arch,
		};

		r = c->lib[i] = evprof_profile__add_lib(c->m, &pl);
	}
	for (i = 0; r >= 0 && i < p->nr_procs; i++)
		r = c->proc[i] = evprof_profile__add_process(
		    c->m, p->procs[i].pid, p->procs[i].name,
		    p->procs[i].start_ns);
	for (i = 0; r >= 0 && i < p->nr_frames; i++) {
		const struct evprof__frame *f = &p->frames[i];
		const struct evprof__func *fn = &p->funcs[f->func];
		struct evprof_profile_frame pf = {
		    .lib = f->lib >= 0 ? c->lib[f->lib] : -1,
		    .address = f->address,
		    .function = evprof__pstr(p, fn->name),
		    .file = fn->file >= 0 ? evprof__pstr(p, (uint32_t)fn->file)
					  : NULL,
		    .line = f->line,
		    .inline_depth = f->inline_depth,
		    .kernel = f->kernel,
		    .symbol_address = f->symbol_address,
		    .symbol_size = f->symbol_size,
		    .function_line = fn->start_line,
		};

		r = c->frame[i] = evprof_profile__frame(c->m, &pf);
	}
	/* A stack's parent is interned before it: a lower index. */
	for (i = 0; r >= 0 && i < p->nr_stacks; i++) {
		int32_t parent = p->stacks[i].parent;

		r = c->stack[i] = evprof_profile__stack(
		    c->m, parent >= 0 ? c->stack[parent] : -1,
		    c->frame[p->stacks[i].frame]);
	}
	return r < 0 ? r : 0;
}

/* One column value of an entry as m holds it: the base's scaled. */
static uint64_t value(const struct copy *c, const uint64_t *v, size_t col)
{
	const struct dcol *dc = &c->d->cols[col];
	uint64_t x = v[dc->col[c->side]];

	if (c->side || dc->scale == 1)
		return x;
	return (uint64_t)llround((double)x * dc->scale);
}

static int copy_entries(struct copy *c)
{
	const struct evprof_profile *p = c->src;
	uint64_t counters[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t weights[EVPROF_PROFILE_MAX_WEIGHTS];
	struct evprof_profile_aggregate a = {.counters = counters,
					     .weights = weights};
	size_t t, col;
	int err = 0;

	for (t = 0; !err && t < p->nr_threads; t++) {
		const struct evprof__thread *th = &p->threads[t];
		int thr = evprof_profile__add_thread(
		    c->m, c->proc[th->proc], th->tid, th->name, th->start_ns);
		int64_t k;

		if (thr < 0)
			return thr;
		for (k = th->first_entry; !err && k >= 0;
		     k = p->store.e[k].next) {
			const uint64_t *v = evprof__entry_vals(p, (size_t)k);
			int32_t st = p->store.e[k].stack;
			uint32_t nc = 0, nw = 0;

			a.stack = st >= 0 ? c->stack[st] : -1;
			a.cpu_ns = 0;
			for (col = 0; col < c->d->nc; col++) {
				int at = c->d->cols[col].col[c->side];

				if (at == COL_SAMPLES)
					a.samples = value(c, v, col);
				else if (at == COL_CPU)
					a.cpu_ns = value(c, v, col);
				else if (c->d->cols[col].ns)
					weights[nw++] = value(c, v, col);
				else
					counters[nc++] = value(c, v, col);
			}
			a.has_counters = nc ? UINT64_MAX >> (64 - nc) : 0;
			a.has_weights = nw ? UINT64_MAX >> (64 - nw) : 0;
			err = evprof_profile__add_aggregate(c->m, thr, &a);
		}
	}
	return err;
}

static int copy_side(struct evprof_profile *m,
		     const struct evprof_profile_diff *d, int side)
{
	const struct evprof_profile *p = d->prof[side];
	struct copy c = {
	    .m = m,
	    .d = d,
	    .side = side,
	    .src = p,
	    .lib = malloc((p->nr_libs + 1) * sizeof(int)),
	    .proc = malloc((p->nr_procs + 1) * sizeof(int)),
	    .frame = malloc((p->nr_frames + 1) * sizeof(int)),
	    .stack = malloc((p->nr_stacks + 1) * sizeof(int)),
	};
	int err = -ENOMEM;

	if (c.lib && c.proc && c.frame && c.stack) {
		err = copy_tables(&c);
		if (!err)
			err = copy_entries(&c);
	}
	free(c.lib);
	free(c.proc);
	free(c.frame);
	free(c.stack);
	return err;
}

int evprof_profile_diff__write_pprof(const struct evprof_profile_diff *d,
				     const char *path,
				     const struct evprof_pprof_opts *opts)
{
	struct evprof_profile_opts mo = {.sz = sizeof(mo), .no_timeline = true};
	struct evprof_profile *m;
	size_t c, first_base;
	int err = 0;

	if (!d || !path || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	mo.product = d->prof[1]->product;
	mo.start_wall_ns = d->prof[1]->start_wall_ns;
	mo.start_mono_ns = d->prof[1]->start_mono_ns;
	m = evprof_profile__new(&mo);
	if (!m)
		return -errno;
	/* Counters, then weight types, in d's order: copy_entries' too. */
	for (c = 0; err >= 0 && c < d->nc; c++)
		if (d->cols[c].col[0] >= COL_COUNTERS && !d->cols[c].ns)
			err = evprof_profile__add_counter(m, d->cols[c].name);
	for (c = 0; err >= 0 && c < d->nc; c++)
		if (d->cols[c].col[0] >= COL_COUNTERS && d->cols[c].ns)
			err =
			    evprof_profile__add_weight_type(m, d->cols[c].name);
	err = err < 0 ? err : copy_side(m, d, 1);
	first_base = m->nr_threads;
	if (!err)
		err = copy_side(m, d, 0);
	if (!err)
		err = evprof__write_pprof_diff(m, path, opts, first_base);
	evprof_profile__free(m);
	return err;
}
