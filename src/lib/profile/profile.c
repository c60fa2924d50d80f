// SPDX-License-Identifier: MIT
/*
 * The profile model's lifecycle, metadata (notes, value columns),
 * processes and threads, and the read accessors users walk it with. The
 * interned tables live in profile_intern.c, the aggregated store in
 * profile_store.c, the timeline in profile_timeline.c.
 */
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "intern.h"
#include "internal.h"
#include "store.h"
#include "timeline.h"

#define SPILL_ROWS_DEFAULT 65536

struct evprof_profile *evprof_profile__new(const struct evprof_profile_opts *o)
{
	struct evprof_profile *p;
	const char *product = EVPROF_OPTS_GET(o, product, NULL);
	const char *os = EVPROF_OPTS_GET(o, os, NULL);
	const char *spill = EVPROF_OPTS_GET(o, spill_dir, NULL);
	int err = -ENOMEM;

	if (!EVPROF_OPTS_VALID(o, true)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto fail;
	p->spill_fd = -1;
	p->product = strdup(product ? product : "evprof");
	p->os = os ? strdup(os) : NULL;
	if (!p->product || (os && !p->os) || evprof__intern_init(p))
		goto fail;
	p->start_wall_ns = EVPROF_OPTS_GET(o, start_wall_ns, 0);
	p->start_mono_ns = EVPROF_OPTS_GET(o, start_mono_ns, 0);
	p->interval_ns = EVPROF_OPTS_GET(o, interval_ns, 0);
	if (!p->interval_ns)
		p->interval_ns = 1000000;
	p->timeline = !EVPROF_OPTS_GET(o, no_timeline, false);
	p->spill_rows = EVPROF_OPTS_GET(o, spill_rows, 0);
	if (!p->spill_rows)
		p->spill_rows = SPILL_ROWS_DEFAULT;
	if (p->timeline && spill) {
		err = evprof__timeline_spill_open(p, spill);
		if (err)
			goto fail;
	}
	return p;
fail:
	evprof_profile__free(p);
	errno = -err;
	return NULL;
}

void evprof_profile__free(struct evprof_profile *p)
{
	size_t i;

	if (!p)
		return;
	for (i = 0; i < p->nr_notes; i++)
		free(p->notes[i]);
	for (i = 0; i < p->nr_counters; i++)
		free(p->counters[i]);
	for (i = 0; i < p->nr_weights; i++)
		free(p->weights[i]);
	for (i = 0; i < p->nr_procs; i++)
		free(p->procs[i].name);
	for (i = 0; i < p->nr_threads; i++) {
		free(p->threads[i].name);
		free(p->threads[i].cgroup);
	}
	evprof__timeline_free(p);
	evprof__store_free(&p->store);
	evprof__intern_free(p);
	free(p->notes);
	free(p->procs);
	free(p->threads);
	free(p->product);
	free(p->os);
	free(p);
}

int evprof_profile__set_end(struct evprof_profile *p, uint64_t end_mono_ns)
{
	if (!p || (end_mono_ns && end_mono_ns < p->start_mono_ns))
		return -EINVAL;
	p->end_mono_ns = end_mono_ns;
	return 0;
}

uint64_t evprof_profile__end(const struct evprof_profile *p)
{
	return p ? p->end_mono_ns : 0;
}

int evprof_profile__add_note(struct evprof_profile *p, const char *note)
{
	char *copy;

	if (!note)
		return -EINVAL;
	if (evprof__vec_grow((void **)&p->notes, &p->cap_notes,
			     sizeof(*p->notes), p->nr_notes + 1, SIZE_MAX))
		return -ENOMEM;
	copy = strdup(note);
	if (!copy)
		return -ENOMEM;
	p->notes[p->nr_notes++] = copy;
	return 0;
}

/* ---- value columns ------------------------------------------------------ */

static int find_name(char *const *names, uint32_t n, const char *name)
{
	uint32_t i;

	for (i = 0; i < n; i++)
		if (!strcmp(names[i], name))
			return (int)i;
	return -ENOENT;
}

int evprof__profile_counter(const struct evprof_profile *p, const char *name)
{
	return find_name(p->counters, p->nr_counters, name);
}

int evprof__profile_column(const struct evprof_profile *p, const char *name)
{
	int i;

	if (!strcmp(name, "samples"))
		return COL_SAMPLES;
	if (!strcmp(name, "cpu"))
		return COL_CPU;
	i = evprof__profile_counter(p, name);
	if (i >= 0)
		return COL_COUNTERS + i;
	i = find_name(p->weights, p->nr_weights, name);
	if (i >= 0)
		return COL_COUNTERS + (int)p->nr_counters + i;
	return -ENOENT;
}

/*
 * Registers name in names[*n] (at most max). Returns its index, -EBUSY
 * once the store has values (its rows have their layout), -E2BIG, -ENOMEM.
 */
static int add_column(struct evprof_profile *p, char **names, uint32_t *n,
		      uint32_t max, const char *name)
{
	if (p->store.n)
		return -EBUSY;
	if (*n == max)
		return -E2BIG;
	names[*n] = strdup(name);
	if (!names[*n])
		return -ENOMEM;
	return (int)(*n)++;
}

int evprof_profile__add_counter(struct evprof_profile *p, const char *name)
{
	int i;

	if (!name || !*name)
		return -EINVAL;
	i = evprof__profile_counter(p, name);
	if (i >= 0)
		return i;
	if (evprof__profile_column(p, name) >= 0)
		return -EEXIST;
	return add_column(p, p->counters, &p->nr_counters,
			  EVPROF_PROFILE_MAX_COUNTERS, name);
}

int evprof_profile__add_weight_type(struct evprof_profile *p, const char *name)
{
	int i;

	if (!name || !*name)
		return -EINVAL;
	i = find_name(p->weights, p->nr_weights, name);
	if (i >= 0)
		return i;
	if (evprof__profile_column(p, name) >= 0)
		return -EEXIST;
	return add_column(p, p->weights, &p->nr_weights,
			  EVPROF_PROFILE_MAX_WEIGHTS, name);
}

const char *evprof_profile__counter_name(const struct evprof_profile *p, int i)
{
	return i >= 0 && (uint32_t)i < p->nr_counters ? p->counters[i] : NULL;
}

const char *evprof_profile__weight_name(const struct evprof_profile *p, int i)
{
	return i >= 0 && (uint32_t)i < p->nr_weights ? p->weights[i] : NULL;
}

/* ---- processes, threads -------------------------------------------------- */

static int set_name(char **dst, const char *name)
{
	char *copy;

	if (!name)
		return -EINVAL;
	copy = strdup(name);
	if (!copy)
		return -ENOMEM;
	free(*dst);
	*dst = copy;
	return 0;
}

int evprof_profile__add_process(struct evprof_profile *p, int pid,
				const char *name, uint64_t start_ns)
{
	struct evprof__process *pr;

	if (!name)
		return -EINVAL;
	if (p->nr_procs >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->procs, &p->cap_procs,
			     sizeof(*p->procs), p->nr_procs + 1, SIZE_MAX))
		return -ENOMEM;
	pr = &p->procs[p->nr_procs];
	memset(pr, 0, sizeof(*pr));
	pr->name = strdup(name);
	if (!pr->name)
		return -ENOMEM;
	pr->pid = pid;
	pr->start_ns = start_ns ? start_ns : p->start_mono_ns;
	return (int)p->nr_procs++;
}

int evprof_profile__set_process_name(struct evprof_profile *p, int proc,
				     const char *name)
{
	if (proc < 0 || (size_t)proc >= p->nr_procs)
		return -EINVAL;
	return set_name(&p->procs[proc].name, name);
}

int evprof_profile__end_process(struct evprof_profile *p, int proc,
				uint64_t end_ns)
{
	if (proc < 0 || (size_t)proc >= p->nr_procs)
		return -EINVAL;
	p->procs[proc].ended = true;
	p->procs[proc].end_ns = end_ns;
	return 0;
}

int evprof_profile__add_thread(struct evprof_profile *p, int proc, int tid,
			       const char *name, uint64_t start_ns)
{
	struct evprof__thread *t;

	if (proc < 0 || (size_t)proc >= p->nr_procs || !name)
		return -EINVAL;
	if (p->nr_threads >= INT32_MAX ||
	    evprof__vec_grow((void **)&p->threads, &p->cap_threads,
			     sizeof(*p->threads), p->nr_threads + 1, SIZE_MAX))
		return -ENOMEM;
	t = &p->threads[p->nr_threads];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name)
		return -ENOMEM;
	t->proc = proc;
	t->tid = tid;
	t->start_ns = start_ns ? start_ns : p->procs[proc].start_ns;
	t->first_entry = -1;
	t->last_entry = -1;
	return (int)p->nr_threads++;
}

int evprof_profile__set_thread_name(struct evprof_profile *p, int thr,
				    const char *name)
{
	if (thr < 0 || (size_t)thr >= p->nr_threads)
		return -EINVAL;
	return set_name(&p->threads[thr].name, name);
}

int evprof_profile__set_thread_cgroup(struct evprof_profile *p, int thr,
				      const char *path)
{
	char *c = NULL;

	if (!p || thr < 0 || (size_t)thr >= p->nr_threads)
		return -EINVAL;
	if (path && *path) {
		if (p->threads[thr].cgroup &&
		    !strcmp(p->threads[thr].cgroup, path))
			return 0;
		c = strdup(path);
		if (!c)
			return -ENOMEM;
	}
	free(p->threads[thr].cgroup);
	p->threads[thr].cgroup = c;
	return 0;
}

const char *evprof_profile__thread_cgroup(const struct evprof_profile *p,
					  int thr)
{
	if (!p || thr < 0 || (size_t)thr >= p->nr_threads)
		return NULL;
	return p->threads[thr].cgroup;
}

int evprof_profile__set_thread_ns_ids(struct evprof_profile *p, int thr,
				      int ns_pid, int ns_tid)
{
	if (!p || thr < 0 || (size_t)thr >= p->nr_threads || ns_pid < 0 ||
	    ns_tid < 0 || (!ns_pid && ns_tid))
		return -EINVAL;
	p->threads[thr].ns_pid = ns_pid;
	p->threads[thr].ns_tid = ns_tid;
	return 0;
}

bool evprof_profile__thread_ns_ids(const struct evprof_profile *p, int thr,
				   int *ns_pid, int *ns_tid)
{
	if (!p || thr < 0 || (size_t)thr >= p->nr_threads ||
	    !p->threads[thr].ns_pid)
		return false;
	*ns_pid = p->threads[thr].ns_pid;
	*ns_tid = p->threads[thr].ns_tid;
	return true;
}

int evprof_profile__end_thread(struct evprof_profile *p, int thr,
			       uint64_t end_ns)
{
	if (thr < 0 || (size_t)thr >= p->nr_threads)
		return -EINVAL;
	p->threads[thr].ended = true;
	p->threads[thr].end_ns = end_ns;
	return 0;
}

/* ---- reading ------------------------------------------------------------ */

int evprof_profile__thread_info(const struct evprof_profile *p, int thr,
				struct evprof_profile_thread_info *info)
{
	const struct evprof__thread *t;

	if (thr < 0 || (size_t)thr >= p->nr_threads || !info)
		return -EINVAL;
	t = &p->threads[thr];
	info->proc = t->proc;
	info->pid = p->procs[t->proc].pid;
	info->tid = t->tid;
	info->name = t->name;
	return 0;
}

int evprof_profile__stack_info(const struct evprof_profile *p, int st,
			       int *parent, int *frame)
{
	if (st < 0 || (size_t)st >= p->nr_stacks)
		return -EINVAL;
	if (parent)
		*parent = p->stacks[st].parent;
	if (frame)
		*frame = p->stacks[st].frame;
	return 0;
}

int evprof_profile__frame_info(const struct evprof_profile *p, int fr,
			       struct evprof_profile_frame *f)
{
	const struct evprof__frame *x;
	const struct evprof__func *fn;

	if (fr < 0 || (size_t)fr >= p->nr_frames || !f)
		return -EINVAL;
	x = &p->frames[fr];
	fn = &p->funcs[x->func];
	*f = (struct evprof_profile_frame){
	    .lib = x->lib,
	    .address = x->address,
	    .function = evprof__pstr(p, fn->name),
	    .file = fn->file >= 0 ? evprof__pstr(p, (uint32_t)fn->file) : NULL,
	    .line = x->line,
	    .inline_depth = x->inline_depth,
	    .kernel = x->kernel,
	    .symbol_address = x->symbol_address,
	    .symbol_size = x->symbol_size,
	    .function_line = fn->start_line,
	};
	return 0;
}

int evprof_profile__stats(const struct evprof_profile *p,
			  struct evprof_profile_stats *st)
{
	struct evprof_profile_stats full;
	const struct evprof__store *s;
	size_t i;

	if (!p)
		return -EINVAL;
	memset(&full, 0, sizeof(full)); /* padding too: it is copied out */
	s = &p->store;
	full.samples = p->nr_samples;
	full.processes = (uint32_t)p->nr_procs;
	full.threads = (uint32_t)p->nr_threads;
	full.libs = (uint32_t)p->nr_libs;
	full.frames = (uint32_t)p->nr_frames;
	full.stacks = (uint32_t)p->nr_stacks;
	full.counters = p->nr_counters;
	full.weights = p->nr_weights;
	full.entries = s->n;
	full.store_bytes = s->cap * (sizeof(*s->e) + s->nv * sizeof(uint64_t));
	full.timeline_rows = p->nr_rows;
	for (i = 0; i < p->nr_threads; i++)
		full.timeline_bytes +=
		    p->threads[i].cap_rows * p->row_words * sizeof(uint64_t);
	full.spilled_bytes = p->spill_len;
	return EVPROF_STATS_COPY(st, &full);
}
