// SPDX-License-Identifier: MIT
/*
 * Firefox Profiler processed format writer.
 *
 * Layout of preprocessedProfileVersion 66 (as samply writes it): tables
 * shared by all threads in profile.shared, stackTable.prefixOffset (0: root,
 * else the parent is i - k), resourceTable.lib. The profiler upgrades older
 * versions on load and refuses newer ones, so we claim the version whose
 * layout we write, not the newest.
 *
 * After each thread's own track come its further tracks, all of its
 * process: per weight type (off-cpu, preempted: ns no sample carries)
 * "<thread> <weight>", marked evprofWeight for our reader, weighing each
 * wait's ns as "tracing-ms" at its start (out_firefox_rows.c; without the
 * waits, one sample per store entry at the thread's start), the waits
 * themselves markers of the thread's track (out_firefox_waits.c); per
 * counter "<thread> <counter> (count)", marked evprofCounter (our reader
 * skips it: its values are the thread's samplyEventDeltas), weighing each
 * sample that moved the counter by its delta, so the call tree ranks
 * stacks by that event. The tables the threads share are
 * out_firefox_tables.c, the process's counter tracks out_firefox_counters.c.
 */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "out_firefox.h"

#define FXP_VERSION	       66
#define FXP_GECKO_META_VERSION 24

/* ---- threads' order, end times ------------------------------------------- */

static int cmp_thread(const void *a, const void *b, void *ctx)
{
	const struct evprof_profile *p = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	const struct evprof__thread *tx = &p->threads[x], *ty = &p->threads[y];
	bool mx = tx->tid == p->procs[tx->proc].pid;
	bool my = ty->tid == p->procs[ty->proc].pid;

	if (tx->proc != ty->proc)
		return tx->proc < ty->proc ? -1 : 1;
	if (mx != my)
		return mx ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* Threads grouped by process, main thread first; latest sample per process. */
static int build_threads(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	size_t i;

	c->thread_order = malloc((p->nr_threads + 1) * sizeof(uint32_t));
	c->proc_last = calloc(p->nr_procs + 1, sizeof(uint64_t));
	c->proc_main = malloc((p->nr_procs + 1) * sizeof(int64_t));
	if (!c->thread_order || !c->proc_last || !c->proc_main)
		return -ENOMEM;
	for (i = 0; i < p->nr_procs; i++) {
		c->proc_last[i] = p->procs[i].start_ns;
		c->proc_main[i] = -1;
	}
	for (i = 0; i < p->nr_threads; i++) {
		uint64_t *last = &c->proc_last[p->threads[i].proc];

		c->thread_order[i] = (uint32_t)i;
		if (evprof__fx_thread_last(p, (int)i) > *last)
			*last = evprof__fx_thread_last(p, (int)i);
	}
	c->cpu = p->has_cpu;
	qsort_r(c->thread_order, p->nr_threads, sizeof(uint32_t), cmp_thread,
		(void *)p);
	return 0;
}

/*
 * An end time is kept within one interval of the last sample: profiler-cli's
 * timestamp naming asserts on end times far outside the samples' range.
 */
static void json_end_time(struct fx_ctx *c, bool ended, uint64_t end,
			  uint64_t start, uint64_t last)
{
	uint64_t limit = (last > start ? last : start) + c->p->interval_ns;

	if (!ended) {
		evprof__json_null(&c->j);
		return;
	}
	if (end > limit)
		end = limit;
	evprof__fx_ms(c, end < start ? start : end);
}

/* ---- meta, libs ---------------------------------------------------------- */

static void write_category(struct evprof__json *j, const char *name,
			   const char *color)
{
	evprof__json_obj(j);
	evprof__json_key(j, "name");
	evprof__json_str(j, name);
	evprof__json_key(j, "color");
	evprof__json_str(j, color);
	evprof__json_key(j, "subcategories");
	evprof__json_arr(j);
	evprof__json_str(j, "Other");
	evprof__json_arr_end(j);
	evprof__json_obj_end(j);
}

static void write_extra_entry(struct evprof__json *j, const char *label,
			      const char *value)
{
	evprof__json_obj(j);
	evprof__json_key(j, "label");
	evprof__json_str(j, label);
	evprof__json_key(j, "format");
	evprof__json_str(j, "string");
	evprof__json_key(j, "value");
	evprof__json_str(j, value);
	evprof__json_obj_end(j);
}

static void write_meta(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	size_t i;

	evprof__json_key(j, "meta");
	evprof__json_obj(j);
	evprof__json_key(j, "version");
	evprof__json_u64(j, FXP_GECKO_META_VERSION);
	evprof__json_key(j, "preprocessedProfileVersion");
	evprof__json_u64(j, FXP_VERSION);
	evprof__json_key(j, "interval");
	evprof__json_fixed(j, (int64_t)p->interval_ns, 6);
	evprof__json_key(j, "startTime");
	evprof__json_fixed(j, (int64_t)p->start_wall_ns, 6);
	evprof__json_key(j, "startTimeAsClockMonotonicNanosecondsSinceBoot");
	evprof__json_u64(j, p->start_mono_ns);
	evprof__json_key(j, "processType");
	evprof__json_u64(j, 0);
	evprof__json_key(j, "product");
	evprof__json_str(j, p->product);
	if (p->os) {
		evprof__json_key(j, "oscpu");
		evprof__json_str(j, p->os);
	}
	evprof__json_key(j, "debug");
	evprof__json_bool(j, false);
	evprof__json_key(j, "symbolicated");
	evprof__json_bool(j, true);
	evprof__json_key(j, "pausedRanges");
	evprof__json_raw(j, "[]");
	evprof__json_key(j, "usesOnlyOneStackType");
	evprof__json_bool(j, true);
	evprof__json_key(j, "sourceCodeIsNotOnSearchfox");
	evprof__json_bool(j, true);
	evprof__json_key(j, "extensions");
	evprof__json_raw(j,
			 "{\"length\":0,\"baseURL\":[],\"id\":[],\"name\":[]}");
	/* The first grey category is the default one; it must exist. */
	evprof__json_key(j, "categories");
	evprof__json_arr(j);
	write_category(j, "Other", "grey");
	write_category(j, "User", "yellow");
	write_category(j, "Kernel", "orange");
	write_category(j, "Off-CPU", "blue"); /* FX_CAT_WAIT */
	evprof__json_arr_end(j);
	evprof__json_key(j, "sampleUnits");
	evprof__json_obj(j);
	evprof__json_key(j, "time");
	evprof__json_str(j, "ms");
	evprof__json_key(j, "eventDelay");
	evprof__json_str(j, "ms");
	if (c->cpu) {
		evprof__json_key(j, "threadCPUDelta");
		evprof__json_str(j, "\xc2\xb5s");
	}
	evprof__json_obj_end(j);
	evprof__fx_write_marker_schema(c);

	/* Ours, ignored by the loader: for tools that read the file. */
	evprof__json_key(j, "evprofNotes");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_notes; i++)
		evprof__json_str(j, p->notes[i]);
	evprof__json_arr_end(j);
	evprof__json_key(j, "evprofCounters");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_counters; i++)
		evprof__json_str(j, p->counters[i]);
	evprof__json_arr_end(j);

	/* Shown by the profiler in its profile-info panel. */
	if (p->nr_notes || p->nr_counters) {
		evprof__json_key(j, "extra");
		evprof__json_arr(j);
		evprof__json_obj(j);
		evprof__json_key(j, "label");
		evprof__json_str(j, "evprof");
		evprof__json_key(j, "entries");
		evprof__json_arr(j);
		for (i = 0; i < p->nr_counters; i++)
			write_extra_entry(j, "Counter", p->counters[i]);
		for (i = 0; i < p->nr_notes; i++)
			write_extra_entry(j, "Note", p->notes[i]);
		evprof__json_arr_end(j);
		evprof__json_obj_end(j);
		evprof__json_arr_end(j);
	}
	evprof__json_obj_end(j);
}

/*
 * Breakpad's id for an ELF file: the first 16 build id bytes read as a
 * little-endian GUID (u32, u16, u16, then 8 bytes as they are), printed
 * big-endian in uppercase, plus the age, always 0 for ELF.
 */
static void breakpad_id(char out[34], const struct evprof__lib *l)
{
	static const uint8_t swap[16] = {3, 2, 1,  0,  5,  4,  7,  6,
					 8, 9, 10, 11, 12, 13, 14, 15};
	uint8_t guid[16] = {0}, b[16];
	size_t i;

	memcpy(guid, l->build_id, l->build_id_len < 16 ? l->build_id_len : 16);
	for (i = 0; i < 16; i++)
		b[i] = guid[swap[i]];
	evprof__hex(out, b, 16, true);
	out[32] = '0';
	out[33] = 0;
}

static void write_libs(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	char hex[2 * 64 + 1], bp[34];
	size_t i;

	evprof__json_key(j, "libs");
	evprof__json_arr(j);
	for (i = 0; i < p->nr_libs; i++) {
		const struct evprof__lib *l = &p->libs[i];
		const char *name = evprof__pstr(p, l->name);

		evprof__json_obj(j);
		evprof__json_key(j, "name");
		evprof__json_str(j, name);
		evprof__json_key(j, "path");
		evprof__json_str(j, l->path);
		evprof__json_key(j, "debugName");
		evprof__json_str(j, name);
		evprof__json_key(j, "debugPath");
		evprof__json_str(j, l->path);
		breakpad_id(bp, l);
		evprof__json_key(j, "breakpadId");
		evprof__json_str(j, bp);
		evprof__hex(hex, l->build_id, l->build_id_len, false);
		evprof__json_key(j, "codeId");
		evprof__json_str(j, l->build_id_len ? hex : NULL);
		evprof__json_key(j, "arch");
		evprof__json_str(j, l->arch);
		evprof__json_obj_end(j);
	}
	evprof__json_arr_end(j);
}

/* ---- threads
 * ------------------------------------------------------------------ */

enum col { C_STACK, C_TIME, C_WEIGHT, C_CPU, C_COUNTER };

/* Whether job is a thread's own track. */
static bool own_track(const struct fx_job *job)
{
	return job->wtype < 0 && job->ctr < 0;
}

/* One sample's value in column col (counter ci for C_COUNTER), into j. */
static void put_cell(const struct fx_ctx *c, const struct fx_job *job,
		     struct evprof__json *j, enum col col, uint32_t ci,
		     const struct evprof_profile_sample *s, uint64_t *prev)
{
	int wc = c->weight_counter;

	switch (col) {
	case C_STACK:
		if (s->stack >= 0)
			evprof__json_u64(j, (uint64_t)s->stack);
		else
			evprof__json_null(j);
		break;
	case C_TIME:
		evprof__json_fixed(j, (int64_t)(s->time_ns - *prev), 6);
		*prev = s->time_ns;
		break;
	case C_WEIGHT:
		if (job->wtype >= 0)
			evprof__json_fixed(j, (int64_t)s->weight, 6); /* ms */
		else if (wc < 0 || job->ctr >= 0)
			evprof__json_u64(j, s->weight);
		else
			evprof__json_u64(
			    j, s->has_counters >> wc & 1 ? s->counters[wc] : 0);
		break;
	case C_CPU:
		evprof__json_fixed(j, (int64_t)s->cpu_delta_ns, 3);
		break;
	case C_COUNTER:
		if (s->has_counters >> ci & 1)
			evprof__json_u64(j, s->counters[ci]);
		else
			evprof__json_null(j);
		break;
	}
}

/*
 * The columns of job's track into cols (counter cis[i] for C_COUNTER):
 * stack, time, weight, then for a thread's own track its CPU time if any
 * sample has some and each counter. Returns how many.
 */
static size_t track_cols(const struct fx_ctx *c, const struct fx_job *job,
			 enum col *cols, uint32_t *cis)
{
	size_t n = 0;

	cols[n++] = C_STACK;
	cols[n++] = C_TIME;
	cols[n++] = C_WEIGHT;
	if (c->cpu && own_track(job))
		cols[n++] = C_CPU;
	for (uint32_t ci = 0; own_track(job) && ci < c->p->nr_counters; ci++) {
		cols[n] = C_COUNTER;
		cis[n++] = ci;
	}
	return n;
}

/*
 * A track's columns (track_cols()) in m, in one pass over its rows (a
 * pass per column read and merged the timeline again for each).
 */
static int make_track(const struct fx_ctx *c, const struct fx_job *job,
		      struct fx_made *m)
{
	const struct evprof_profile *p = c->p;
	enum col cols[FX_MAX_COLS];
	uint32_t cis[FX_MAX_COLS] = {0};
	struct evprof_profile_sample s;
	uint64_t prev = p->start_mono_ns;
	struct fx_rows r;
	size_t i, n = track_cols(c, job, cols, cis);
	int ret;

	m->n = n;
	for (i = 0; i < n; i++) {
		ret = evprof__fx_col_open(c, &m->o[i], n);
		if (ret)
			return ret;
	}
	ret = evprof__fx_rows_open(&r, p, job->thr, job->wtype, job->ctr);
	if (ret)
		return ret;
	m->ones = true;
	while ((ret = evprof__fx_rows_next(&r, &s)) > 0) {
		m->rows++;
		for (i = 0; i < n; i++)
			put_cell(c, job, &m->o[i].j, cols[i], cis[i], &s,
				 &prev);
		m->ones = m->ones && s.weight == 1;
	}
	evprof__fx_rows_close(&r);
	for (i = 0; i < n; i++) {
		int err = evprof__fx_col_end(&m->o[i]);

		if (!ret)
			ret = err;
	}
	return ret;
}

static int make_job(const struct fx_ctx *c, const struct fx_job *job,
		    struct fx_made *m)
{
	return job->thr >= 0 ? make_track(c, job, m)
			     : evprof__fx_make_points(c, job, m);
}

/* "samples" of job's track, from its columns m (track_cols()'s order). */
static int write_samples(struct fx_ctx *c, const struct fx_job *job,
			 const struct fx_made *m)
{
	const struct evprof_profile *p = c->p;
	struct evprof__json *j = &c->j;
	/* The weight column is null when every sample of the own track
	 * weighs 1 and no counter or weight type gives the weights. */
	bool may_null = own_track(job) && c->weight_counter < 0 && m->ones;
	enum col cols[FX_MAX_COLS];
	uint32_t cis[FX_MAX_COLS] = {0};
	size_t n = track_cols(c, job, cols, cis);
	int err = 0;

	evprof__json_key(j, "samples");
	evprof__json_obj(j);
	evprof__json_key(j, "length");
	evprof__json_u64(j, m->rows);
	evprof__json_key(j, "weightType");
	evprof__json_str(j, job->wtype < 0 ? "samples" : "tracing-ms");
	for (size_t k = 0; !err && k < n; k++) {
		switch (cols[k]) {
		case C_STACK:
			evprof__json_key(j, "stack");
			break;
		case C_TIME:
			evprof__json_key(j, "timeDeltas");
			break;
		case C_WEIGHT:
			evprof__json_key(j, "weight");
			if (may_null) {
				evprof__json_null(j);
				continue;
			}
			break;
		case C_CPU:
			evprof__json_key(j, "threadCPUDelta");
			break;
		case C_COUNTER:
			/* The counters, in order, in an object of their own. */
			if (!cis[k]) {
				evprof__json_key(j, "samplyEventDeltas");
				evprof__json_obj(j);
			}
			evprof__json_key(j, p->counters[cis[k]]);
			break;
		}
		err = evprof__json_copy(j, m->o[k].f);
		if (cols[k] == C_COUNTER && cis[k] + 1 == p->nr_counters)
			evprof__json_obj_end(j);
	}
	evprof__json_obj_end(j);
	return err;
}

/* Track job (c->jobs[i]), its columns made in m. */
static int write_track(struct fx_ctx *c, const struct fx_job *job,
		       const struct fx_made *m)
{
	const struct evprof_profile *p = c->p;
	const struct evprof__thread *t = &p->threads[job->thr];
	const struct evprof__process *pr = &p->procs[t->proc];
	struct evprof__json *j = &c->j;
	uint64_t last = evprof__fx_thread_last(p, job->thr);
	bool own = own_track(job);
	char num[21], name[256], who[300], pname[600];
	int err;

	evprof__json_obj(j);
	evprof__json_key(j, "name");
	if (job->wtype >= 0) {
		snprintf(name, sizeof(name), "%s %s", t->name,
			 p->weights[job->wtype]);
		evprof__json_str(j, name);
		evprof__json_key(j, "evprofWeight");
		evprof__json_str(j, p->weights[job->wtype]);
	} else if (job->ctr >= 0) {
		/* The call tree says "samples": the name gives the unit. */
		snprintf(name, sizeof(name), "%s %s (count)", t->name,
			 p->counters[job->ctr]);
		evprof__json_str(j, name);
		evprof__json_key(j, "evprofCounter");
		evprof__json_str(j, p->counters[job->ctr]);
	} else {
		evprof__json_str(j, t->name);
	}
	evprof__json_key(j, "isMainThread");
	evprof__json_bool(j, t->tid == pr->pid && own);
	evprof__json_key(j, "processType");
	evprof__json_str(j, "default");
	evprof__json_key(j, "processName");
	/* Who ran it: "sh [container 0123456789ab, pid 1 inside]". */
	if (*evprof__who_show(t->cgroup, t->ns_pid, who, sizeof(who))) {
		snprintf(pname, sizeof(pname), "%s [%s]", pr->name, who);
		evprof__json_str(j, pname);
	} else {
		evprof__json_str(j, pr->name);
	}
	if (t->cgroup) { /* its path, which the name shows in part */
		evprof__json_key(j, "evprofCgroup");
		evprof__json_str(j, t->cgroup);
	}
	if (t->ns_pid) {
		evprof__json_key(j, "evprofNsPid");
		evprof__json_i64(j, t->ns_pid);
	}
	if (t->ns_tid) {
		evprof__json_key(j, "evprofNsTid");
		evprof__json_i64(j, t->ns_tid);
	}
	evprof__json_key(j, "pid");
	snprintf(num, sizeof(num), "%d", pr->pid);
	evprof__json_str(j, num);
	evprof__json_key(j, "tid");
	snprintf(num, sizeof(num), "%d", t->tid);
	evprof__json_str(j, num);
	evprof__json_key(j, "processStartupTime");
	evprof__fx_ms(c, pr->start_ns);
	evprof__json_key(j, "processShutdownTime");
	json_end_time(c, pr->ended, pr->end_ns, pr->start_ns,
		      c->proc_last[t->proc]);
	evprof__json_key(j, "registerTime");
	evprof__fx_ms(c, t->start_ns);
	evprof__json_key(j, "unregisterTime");
	json_end_time(c, t->ended, t->end_ns, t->start_ns, last);
	evprof__json_key(j, "pausedRanges");
	evprof__json_raw(j, "[]");
	evprof__json_key(j, "showMarkersInTimeline");
	evprof__json_bool(j, own && t->nr_waits);
	err = write_samples(c, job, m);
	if (err)
		return err;
	err = evprof__fx_write_markers(c, job->thr, own);
	if (err)
		return err;
	evprof__json_obj_end(j);
	return c->j.out->err;
}

/*
 * The document's pieces in order: per thread, its own track, one per
 * weight type and one per counter it has; then per process with a track,
 * one per counter. Sets each process's first track (its main thread's).
 */
static int plan_jobs(struct fx_ctx *c)
{
	const struct evprof_profile *p = c->p;
	size_t i, n = 0, max;
	int k;

	max = p->nr_threads * (1 + p->nr_weights + p->nr_counters) +
	      p->nr_procs * p->nr_counters;
	c->jobs = malloc((max + 1) * sizeof(*c->jobs));
	if (!c->jobs)
		return -ENOMEM;
	for (i = 0; i < p->nr_threads; i++) {
		int thr = (int)c->thread_order[i];
		int proc = p->threads[thr].proc;

		if (c->proc_main[proc] < 0)
			c->proc_main[proc] = (int64_t)n;
		c->jobs[n++] = (struct fx_job){thr, -1, -1, proc, -1};
		for (k = 0; k < (int)p->nr_weights; k++)
			if (evprof__fx_has_track(p, thr, k, -1))
				c->jobs[n++] =
				    (struct fx_job){thr, k, -1, proc, -1};
		for (k = 0; k < (int)p->nr_counters; k++)
			if (evprof__fx_has_track(p, thr, -1, k))
				c->jobs[n++] =
				    (struct fx_job){thr, -1, k, proc, -1};
	}
	for (i = 0; i < p->nr_procs; i++)
		for (k = 0; evprof__fx_has_counters(c, (int)i) &&
			    k < (int)p->nr_counters;
		     k++)
			c->jobs[n++] = (struct fx_job){-1, -1, -1, (int)i, k};
	c->nr_jobs = n;
	return 0;
}

static int write_profile(struct fx_ctx *c)
{
	struct evprof__json *j = &c->j;
	struct fx_ahead *a;
	size_t i;
	int err = 0;

	a = evprof__fx_ahead_start(c, make_job);
	if (!a)
		return -ENOMEM;
	evprof__json_obj(j);
	write_meta(c);
	write_libs(c);
	evprof__fx_write_shared(c);
	evprof__json_key(j, "threads");
	evprof__json_arr(j);
	for (i = 0; !err && i < c->nr_jobs && c->jobs[i].thr >= 0; i++) {
		const struct fx_made *m = evprof__fx_ahead_take(a, i);

		err = m->err ?: write_track(c, &c->jobs[i], m);
		if (!err)
			evprof__fx_ahead_release(a, i);
	}
	if (!err) {
		evprof__json_arr_end(j);
		evprof__json_key(j, "pages");
		evprof__json_raw(j, "[]");
		evprof__json_key(j, "profilerOverhead");
		evprof__json_raw(j, "[]");
		err = evprof__fx_write_counters(c, a, i);
	}
	evprof__fx_ahead_stop(a);
	if (err)
		return err;
	evprof__json_obj_end(j);
	evprof__sink_putc(j->out, '\n');
	return 0;
}

int evprof_profile__write_firefox(const struct evprof_profile *p,
				  const char *path,
				  const struct evprof_firefox_opts *opts)
{
	const char *wname = EVPROF_OPTS_GET(opts, weight_counter, NULL);
	struct fx_ctx c = {.p = p, .weight_counter = -1};
	struct evprof__sink out;
	int err, cerr;

	if (!p || !path || !EVPROF_OPTS_VALID(opts, true))
		return -EINVAL;
	if (wname) {
		c.weight_counter = evprof__profile_counter(p, wname);
		if (c.weight_counter < 0)
			return -ENOENT;
	}
	err = evprof__fx_build_tables(&c);
	if (!err)
		err = build_threads(&c);
	if (!err)
		err = plan_jobs(&c);
	if (!err)
		err = evprof__sink_open(&out, path);
	if (!err) {
		evprof__json_init(&c.j, &out);
		err = write_profile(&c);
		cerr = evprof__sink_close(&out, !err);
		if (!err)
			err = cerr;
	}
	free(c.source_of);
	free(c.sources);
	free(c.sym_of);
	free(c.syms);
	free(c.thread_order);
	free(c.proc_last);
	free(c.proc_main);
	free(c.jobs);
	return err;
}
