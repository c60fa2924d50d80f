// SPDX-License-Identifier: MIT
/*
 * speedscope's file format (https://www.speedscope.app/file-format-schema.json,
 * the schema its npm package ships): shared frames, then "sampled"
 * profiles, each a list of stacks (frame indices, root first) with one
 * weight per stack. One profile per thread and column of the store (CPU
 * time, each counter, each weight type), so each gets its own flame graph
 * and sandwich view; a profile's samples are its thread's store entries
 * (one per distinct stack), so its time-order view is in stack order, not
 * in time.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "profile/profile.h"

struct ss_col {
	size_t col;	  /* store column */
	const char *name; /* as profiles are named */
	const char *unit; /* speedscope's ValueUnit */
};

struct ss_ctx {
	const struct evprof_profile *p;
	struct evprof__json j;
	struct ss_col
	    cols[2 + EVPROF_PROFILE_MAX_COUNTERS + EVPROF_PROFILE_MAX_WEIGHTS];
	size_t nr_cols;
	int32_t *chain; /* frames of one stack, leaf first */
};

/*
 * CPU time when samples carry it, every counter, every weight type; the
 * sample counts alone for a profile with none of them.
 */
static void pick_columns(struct ss_ctx *c)
{
	const struct evprof_profile *p = c->p;
	uint32_t i;

	if (p->has_cpu)
		c->cols[c->nr_cols++] =
		    (struct ss_col){COL_CPU, "cpu", "nanoseconds"};
	for (i = 0; i < p->nr_counters; i++)
		c->cols[c->nr_cols++] =
		    (struct ss_col){COL_COUNTERS + i, p->counters[i], "none"};
	for (i = 0; i < p->nr_weights; i++)
		c->cols[c->nr_cols++] =
		    (struct ss_col){COL_COUNTERS + p->nr_counters + i,
				    p->weights[i], "nanoseconds"};
	if (!c->nr_cols)
		c->cols[c->nr_cols++] =
		    (struct ss_col){COL_SAMPLES, "samples", "none"};
}

/* One frame per function: its name, its source file or else its lib. */
static void write_frames(struct ss_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i;

	evprof__json_key(j, "shared");
	evprof__json_obj(j);
	evprof__json_key(j, "frames");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_funcs; i++) {
		const struct evprof__func *f = &p->funcs[i];

		evprof__json_obj(j);
		evprof__json_key(j, "name");
		evprof__json_str(j, evprof__pstr(p, f->name));
		if (f->file >= 0) {
			evprof__json_key(j, "file");
			evprof__json_str(j, evprof__pstr(p, (uint32_t)f->file));
			if (f->start_line) {
				evprof__json_key(j, "line");
				evprof__json_u64(j, f->start_line);
			}
		} else if (f->lib >= 0) {
			evprof__json_key(j, "file");
			evprof__json_str(j,
					 evprof__pstr(p, p->libs[f->lib].name));
		}
		evprof__json_obj_end(j);
	}
	/* The frame of samples without a stack. */
	evprof__json_raw(j, "{\"name\":\"[no stack]\"}");
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
}

/* Stack as frame indices, root first. */
static void write_stack(struct ss_ctx *c, int32_t stack)
{
	const struct evprof_profile *p = c->p;
	size_t depth = 0;

	evprof__json_arr(&c->j);
	if (stack < 0)
		evprof__json_u64(&c->j, p->nr_funcs);
	for (; stack >= 0; stack = p->stacks[stack].parent)
		c->chain[depth++] = p->stacks[stack].frame;
	while (depth--)
		evprof__json_u64(&c->j, p->frames[c->chain[depth]].func);
	evprof__json_arr_end(&c->j);
}

static void write_one(struct ss_ctx *c, size_t thr, const struct ss_col *col)
{
	const struct evprof_profile *p = c->p;
	const struct evprof__thread *t = &p->threads[thr];
	struct evprof__json *j = &c->j;
	uint64_t total = 0;
	char name[320];
	int64_t k;

	for (k = t->first_entry; k >= 0; k = p->store.e[k].next)
		total += evprof__entry_vals(p, (size_t)k)[col->col];
	evprof__json_obj(j);
	evprof__json_key(j, "type");
	evprof__json_str(j, "sampled");
	snprintf(name, sizeof(name), "%s (tid %d) %s", t->name, t->tid,
		 col->name);
	evprof__json_key(j, "name");
	evprof__json_str(j, name);
	evprof__json_key(j, "unit");
	evprof__json_str(j, col->unit);
	evprof__json_key(j, "startValue");
	evprof__json_u64(j, 0);
	evprof__json_key(j, "endValue");
	evprof__json_u64(j, total);
	evprof__json_key(j, "samples");
	evprof__json_arr(j);
	for (k = t->first_entry; k >= 0; k = p->store.e[k].next)
		if (evprof__entry_vals(p, (size_t)k)[col->col])
			write_stack(c, p->store.e[k].stack);
	evprof__json_arr_end(j);
	evprof__json_key(j, "weights");
	evprof__json_arr(j);
	for (k = t->first_entry; k >= 0; k = p->store.e[k].next) {
		uint64_t v = evprof__entry_vals(p, (size_t)k)[col->col];

		if (v)
			evprof__json_u64(j, v);
	}
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
}

/* Index of column name, or -ENOENT. */
static int column_index(const struct ss_ctx *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->nr_cols; i++)
		if (!strcmp(c->cols[i].name, name))
			return (int)i;
	return -ENOENT;
}

/*
 * The profile of column col with the most weight: speedscope opens on it
 * (profile 0 is often a launcher script's thread with next to nothing).
 */
static size_t heaviest(const struct ss_ctx *c, size_t col)
{
	const struct evprof_profile *p = c->p;
	uint64_t best = 0;
	size_t thr, at = col;
	int64_t k;

	for (thr = 0; thr < p->nr_threads; thr++) {
		uint64_t total = 0;

		for (k = p->threads[thr].first_entry; k >= 0;
		     k = p->store.e[k].next)
			total +=
			    evprof__entry_vals(p, (size_t)k)[c->cols[col].col];
		if (total > best) {
			best = total;
			at = thr * c->nr_cols + col;
		}
	}
	return at;
}

static int write_file(struct ss_ctx *c, size_t active)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t thr, k;

	evprof__json_obj(j);
	evprof__json_key(j, "$schema");
	evprof__json_str(j,
			 "https://www.speedscope.app/file-format-schema.json");
	evprof__json_key(j, "exporter");
	evprof__json_str(j, p->product);
	evprof__json_key(j, "name");
	evprof__json_str(j, p->nr_procs ? p->procs[0].name : p->product);
	evprof__json_key(j, "activeProfileIndex");
	evprof__json_u64(j, active);
	write_frames(c);
	evprof__json_key(j, "profiles");
	evprof__json_arr(j);
	for (thr = 0; thr < p->nr_threads && !j->out->err; thr++)
		for (k = 0; k < c->nr_cols; k++)
			write_one(c, thr, &c->cols[k]);
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
	evprof__sink_putc(j->out, '\n');
	return j->out->err;
}

int evprof_profile__write_speedscope(const struct evprof_profile *p,
				     const char *path,
				     const struct evprof_speedscope_opts *opts)
{
	const char *first = EVPROF_OPTS_GET(opts, default_type, NULL);
	struct ss_ctx c = {.p = p};
	struct evprof__sink out;
	int col = 0, err, cerr;

	if (!p || !path || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	pick_columns(&c);
	if (first) {
		col = column_index(&c, first);
		if (col < 0)
			return col;
	}
	c.chain = malloc((p->nr_stacks + 1) * sizeof(*c.chain));
	if (!c.chain)
		return -ENOMEM;
	err = evprof__sink_open(&out, path);
	if (!err) {
		evprof__json_init(&c.j, &out);
		err = write_file(&c, heaviest(&c, (size_t)col));
		cerr = evprof__sink_close(&out, !err);
		if (!err)
			err = cerr;
	}
	free(c.chain);
	return err;
}
