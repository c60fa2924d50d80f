// SPDX-License-Identifier: MIT
/* The profile model: interning of strings, libs, frames and stacks; samples. */
#define _GNU_SOURCE /* qsort_r */
#include <errno.h>
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profile_internal.h"

/* ---- helpers ------------------------------------------------------------ */

int evprof__grow(void *arr, size_t *cap, size_t need, size_t elem)
{
	void **a = arr;
	size_t n = *cap;
	void *q;

	if (need <= n)
		return 0;
	n = n < 16 ? 16 : n + n / 2;
	if (n < need)
		n = need;
	if (n > SIZE_MAX / elem)
		return -ENOMEM;
	q = realloc(*a, n * elem);
	if (!q)
		return -ENOMEM;
	*a = q;
	*cap = n;
	return 0;
}

uint32_t evprof__hash_u64(uint64_t v)
{
	/* splitmix64's finalizer: every input bit reaches every output bit. */
	v ^= v >> 30;
	v *= 0xbf58476d1ce4e5b9ULL;
	v ^= v >> 27;
	v *= 0x94d049bb133111ebULL;
	v ^= v >> 31;
	return (uint32_t)(v >> 32);
}

static uint64_t hmix(uint64_t h, uint64_t v)
{
	return ((h << 5 | h >> 59) ^ v) * 0x9e3779b97f4a7c15ULL;
}

uint32_t evprof__hash_bytes(const void *b, size_t n, uint64_t seed)
{
	const unsigned char *c = b;
	uint64_t h = 0xcbf29ce484222325ULL ^ seed; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++)
		h = (h ^ c[i]) * 0x100000001b3ULL;
	return evprof__hash_u64(h);
}

int64_t evprof__hset_find(const struct evprof__hset *h, uint32_t hash,
			  evprof__heq_fn eq, const void *ctx, const void *key)
{
	uint32_t i;

	if (!h->slots)
		return -1;
	for (i = hash & h->mask;; i = (i + 1) & h->mask) {
		const struct evprof__hslot *s = &h->slots[i];

		if (!s->idx1)
			return -1;
		if (s->hash == hash && eq(ctx, s->idx1 - 1, key))
			return s->idx1 - 1;
	}
}

static void hset_put(struct evprof__hslot *slots, uint32_t mask,
		     struct evprof__hslot v)
{
	uint32_t i = v.hash & mask;

	while (slots[i].idx1)
		i = (i + 1) & mask;
	slots[i] = v;
}

int evprof__hset_add(struct evprof__hset *h, uint32_t hash, uint32_t idx)
{
	uint64_t cap = h->slots ? (uint64_t)h->mask + 1 : 0;

	/* Linear probing stays short up to a load of 0.7. */
	if ((uint64_t)(h->used + 1) * 10 > cap * 7) {
		uint64_t ncap = cap ? cap * 2 : 64, i;
		struct evprof__hslot *ns;

		if (ncap > (1ULL << 31))
			return -ENOMEM;
		ns = calloc(ncap, sizeof(*ns));
		if (!ns)
			return -ENOMEM;
		for (i = 0; i < cap; i++)
			if (h->slots[i].idx1)
				hset_put(ns, (uint32_t)(ncap - 1), h->slots[i]);
		free(h->slots);
		h->slots = ns;
		h->mask = (uint32_t)(ncap - 1);
	}
	hset_put(h->slots, h->mask,
		 (struct evprof__hslot){.hash = hash, .idx1 = idx + 1});
	h->used++;
	return 0;
}

void evprof__hset_free(struct evprof__hset *h)
{
	free(h->slots);
	memset(h, 0, sizeof(*h));
}

/* ---- profile ------------------------------------------------------------ */

struct evprof_profile *evprof_profile__new(const struct evprof_profile_opts *o)
{
	struct evprof_profile *p;
	const char *product = EVPROF_OPTS_GET(o, product, NULL);
	const char *os = EVPROF_OPTS_GET(o, os, NULL);

	if (!EVPROF_OPTS_VALID(o, true)) {
		errno = EINVAL;
		return NULL;
	}
	p = calloc(1, sizeof(*p));
	if (!p)
		goto nomem;
	p->product = strdup(product ? product : "evprof");
	p->os = os ? strdup(os) : NULL;
	if (!p->product || (os && !p->os))
		goto nomem;
	p->start_wall_ns = EVPROF_OPTS_GET(o, start_wall_ns, 0);
	p->start_mono_ns = EVPROF_OPTS_GET(o, start_mono_ns, 0);
	p->interval_ns = EVPROF_OPTS_GET(o, interval_ns, 0);
	if (!p->interval_ns)
		p->interval_ns = 1000000;
	return p;
nomem:
	evprof_profile__free(p);
	errno = ENOMEM;
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
	for (i = 0; i < p->nr_libs; i++) {
		free(p->libs[i].path);
		free(p->libs[i].arch);
	}
	for (i = 0; i < p->nr_procs; i++)
		free(p->procs[i].name);
	for (i = 0; i < p->nr_threads; i++) {
		struct evprof__samples *s = &p->threads[i].s;

		free(p->threads[i].name);
		free(s->time);
		free(s->stack);
		free(s->weight);
		free(s->cpu);
		free(s->has);
		free(s->vals);
	}
	evprof__hset_free(&p->str_set);
	evprof__hset_free(&p->lib_set);
	evprof__hset_free(&p->func_set);
	evprof__hset_free(&p->frame_set);
	evprof__hset_free(&p->stack_set);
	free(p->notes);
	free(p->chars);
	free(p->str_off);
	free(p->libs);
	free(p->procs);
	free(p->threads);
	free(p->funcs);
	free(p->frames);
	free(p->stacks);
	free(p->product);
	free(p->os);
	free(p);
}

int evprof_profile__add_note(struct evprof_profile *p, const char *note)
{
	char *copy;

	if (!note)
		return -EINVAL;
	if (evprof__grow(&p->notes, &p->cap_notes, p->nr_notes + 1,
			 sizeof(*p->notes)))
		return -ENOMEM;
	copy = strdup(note);
	if (!copy)
		return -ENOMEM;
	p->notes[p->nr_notes++] = copy;
	return 0;
}

int evprof__profile_counter(const struct evprof_profile *p, const char *name)
{
	uint32_t i;

	for (i = 0; i < p->nr_counters; i++)
		if (!strcmp(p->counters[i], name))
			return (int)i;
	return -ENOENT;
}

int evprof_profile__add_counter(struct evprof_profile *p, const char *name)
{
	int i;

	if (!name || !*name)
		return -EINVAL;
	i = evprof__profile_counter(p, name);
	if (i >= 0)
		return i;
	if (p->nr_samples)
		return -EBUSY;
	if (p->nr_counters == EVPROF_PROFILE_MAX_COUNTERS)
		return -E2BIG;
	p->counters[p->nr_counters] = strdup(name);
	if (!p->counters[p->nr_counters])
		return -ENOMEM;
	return (int)p->nr_counters++;
}

/* ---- strings --------------------------------------------------------------
 */

static bool str_eq(const void *ctx, uint32_t idx, const void *key)
{
	return !strcmp(evprof__pstr(ctx, idx), key);
}

/* Returns the string's index or -ENOMEM. */
static int64_t intern_str(struct evprof_profile *p, const char *s)
{
	size_t len = strlen(s);
	uint32_t h = evprof__hash_bytes(s, len, 0);
	int64_t idx = evprof__hset_find(&p->str_set, h, str_eq, p, s);

	if (idx >= 0)
		return idx;
	if (p->nr_strs >= INT32_MAX ||
	    evprof__grow(&p->chars, &p->chars_cap, p->chars_len + len + 1, 1) ||
	    evprof__grow(&p->str_off, &p->cap_strs, p->nr_strs + 1,
			 sizeof(*p->str_off)) ||
	    evprof__hset_add(&p->str_set, h, (uint32_t)p->nr_strs))
		return -ENOMEM;
	memcpy(p->chars + p->chars_len, s, len + 1);
	p->str_off[p->nr_strs] = p->chars_len;
	p->chars_len += len + 1;
	return (int64_t)p->nr_strs++;
}

/* ---- libs, processes, threads ------------------------------------------- */

struct lib_key {
	const char *path;
	const void *build_id;
	size_t build_id_len;
};

static bool lib_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__lib *l =
	    &((const struct evprof_profile *)ctx)->libs[idx];
	const struct lib_key *k = key;

	/* memcmp() must not see NULL, even for 0 bytes (UBSan). */
	return l->build_id_len == k->build_id_len &&
	       (!k->build_id_len ||
		!memcmp(l->build_id, k->build_id, k->build_id_len)) &&
	       !strcmp(l->path, k->path);
}

int evprof_profile__add_lib(struct evprof_profile *p,
			    const struct evprof_profile_lib *lib)
{
	struct lib_key k;
	struct evprof__lib *l;
	const char *name;
	int64_t idx, name_idx;
	uint32_t h;

	if (!lib || !lib->path || lib->build_id_len > sizeof(l->build_id) ||
	    (lib->build_id_len && !lib->build_id))
		return -EINVAL;
	k = (struct lib_key){lib->path, lib->build_id, lib->build_id_len};
	h = evprof__hash_bytes(
	    lib->path, strlen(lib->path),
	    evprof__hash_bytes(lib->build_id, lib->build_id_len, 0));
	idx = evprof__hset_find(&p->lib_set, h, lib_eq, p, &k);
	if (idx >= 0)
		return (int)idx;

	name = lib->name;
	if (!name) {
		name = strrchr(lib->path, '/');
		name = name ? name + 1 : lib->path;
	}
	name_idx = intern_str(p, name);
	if (name_idx < 0 || p->nr_libs >= INT32_MAX ||
	    evprof__grow(&p->libs, &p->cap_libs, p->nr_libs + 1,
			 sizeof(*p->libs)))
		return -ENOMEM;
	l = &p->libs[p->nr_libs];
	memset(l, 0, sizeof(*l));
	l->path = strdup(lib->path);
	l->arch = lib->arch ? strdup(lib->arch) : NULL;
	if (!l->path || (lib->arch && !l->arch) ||
	    evprof__hset_add(&p->lib_set, h, (uint32_t)p->nr_libs)) {
		free(l->path);
		free(l->arch);
		return -ENOMEM;
	}
	l->name = (uint32_t)name_idx;
	l->build_id_len = (uint8_t)lib->build_id_len;
	if (lib->build_id_len)
		memcpy(l->build_id, lib->build_id, lib->build_id_len);
	return (int)p->nr_libs++;
}

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
	    evprof__grow(&p->procs, &p->cap_procs, p->nr_procs + 1,
			 sizeof(*p->procs)))
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
	    evprof__grow(&p->threads, &p->cap_threads, p->nr_threads + 1,
			 sizeof(*p->threads)))
		return -ENOMEM;
	t = &p->threads[p->nr_threads];
	memset(t, 0, sizeof(*t));
	t->name = strdup(name);
	if (!t->name)
		return -ENOMEM;
	t->proc = proc;
	t->tid = tid;
	t->start_ns = start_ns ? start_ns : p->procs[proc].start_ns;
	return (int)p->nr_threads++;
}

int evprof_profile__set_thread_name(struct evprof_profile *p, int thr,
				    const char *name)
{
	if (thr < 0 || (size_t)thr >= p->nr_threads)
		return -EINVAL;
	return set_name(&p->threads[thr].name, name);
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

/* ---- funcs, frames, stacks ------------------------------------------------
 */

static bool func_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__func *a =
	    &((const struct evprof_profile *)ctx)->funcs[idx];
	const struct evprof__func *b = key;

	return a->name == b->name && a->lib == b->lib && a->file == b->file;
}

static int64_t intern_func(struct evprof_profile *p,
			   const struct evprof__func *f)
{
	uint32_t h =
	    evprof__hash_u64(hmix(hmix(f->name, (uint64_t)(int64_t)f->lib),
				  (uint64_t)(int64_t)f->file));
	int64_t idx = evprof__hset_find(&p->func_set, h, func_eq, p, f);

	if (idx >= 0)
		return idx;
	if (p->nr_funcs >= INT32_MAX ||
	    evprof__grow(&p->funcs, &p->cap_funcs, p->nr_funcs + 1,
			 sizeof(*p->funcs)) ||
	    evprof__hset_add(&p->func_set, h, (uint32_t)p->nr_funcs))
		return -ENOMEM;
	p->funcs[p->nr_funcs] = *f;
	return (int64_t)p->nr_funcs++;
}

static bool frame_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__frame *a =
	    &((const struct evprof_profile *)ctx)->frames[idx];
	const struct evprof__frame *b = key;

	return a->func == b->func && a->lib == b->lib &&
	       a->address == b->address && a->line == b->line &&
	       a->inline_depth == b->inline_depth && a->kernel == b->kernel;
}

int evprof_profile__frame(struct evprof_profile *p,
			  const struct evprof_profile_frame *f)
{
	struct evprof__func fn = {.lib = -1, .file = -1};
	struct evprof__frame fr;
	char hexname[2 + 16 + 1];
	int64_t idx;
	uint32_t h;

	if (!f || f->lib < -1 || (f->lib >= 0 && (size_t)f->lib >= p->nr_libs))
		return -EINVAL;
	if (!f->function)
		snprintf(hexname, sizeof(hexname), "0x%" PRIx64, f->address);
	idx = intern_str(p, f->function ? f->function : hexname);
	if (idx < 0)
		return (int)idx;
	fn.name = (uint32_t)idx;
	fn.lib = f->lib;
	if (f->file) {
		idx = intern_str(p, f->file);
		if (idx < 0)
			return (int)idx;
		fn.file = (int32_t)idx;
	}
	idx = intern_func(p, &fn);
	if (idx < 0)
		return (int)idx;
	if (!p->funcs[idx].start_line)
		p->funcs[idx].start_line = f->function_line;

	fr = (struct evprof__frame){
	    .func = (uint32_t)idx,
	    .lib = f->lib,
	    .address = f->address,
	    .line = f->line,
	    .inline_depth = f->inline_depth,
	    .kernel = f->kernel,
	    .symbol_address = f->symbol_address,
	    .symbol_size = f->symbol_size,
	};
	h = evprof__hash_u64(hmix(hmix(hmix(fr.func, fr.address), fr.line),
				  (uint64_t)fr.inline_depth << 1 | fr.kernel));
	idx = evprof__hset_find(&p->frame_set, h, frame_eq, p, &fr);
	if (idx >= 0)
		return (int)idx;
	if (p->nr_frames >= INT32_MAX ||
	    evprof__grow(&p->frames, &p->cap_frames, p->nr_frames + 1,
			 sizeof(*p->frames)) ||
	    evprof__hset_add(&p->frame_set, h, (uint32_t)p->nr_frames))
		return -ENOMEM;
	p->frames[p->nr_frames] = fr;
	return (int)p->nr_frames++;
}

static bool stack_eq(const void *ctx, uint32_t idx, const void *key)
{
	const struct evprof__stack *a =
	    &((const struct evprof_profile *)ctx)->stacks[idx];
	const struct evprof__stack *b = key;

	return a->parent == b->parent && a->frame == b->frame;
}

int evprof_profile__stack(struct evprof_profile *p, int parent, int frame)
{
	struct evprof__stack st = {parent, frame};
	int64_t idx;
	uint32_t h;

	if (parent < -1 || (parent >= 0 && (size_t)parent >= p->nr_stacks) ||
	    frame < 0 || (size_t)frame >= p->nr_frames)
		return -EINVAL;
	h = evprof__hash_u64((uint64_t)(uint32_t)parent << 32 |
			     (uint32_t)frame);
	idx = evprof__hset_find(&p->stack_set, h, stack_eq, p, &st);
	if (idx >= 0)
		return (int)idx;
	/* A new stack's index exceeds its parent's: parents come first. */
	if (p->nr_stacks >= INT32_MAX ||
	    evprof__grow(&p->stacks, &p->cap_stacks, p->nr_stacks + 1,
			 sizeof(*p->stacks)) ||
	    evprof__hset_add(&p->stack_set, h, (uint32_t)p->nr_stacks))
		return -ENOMEM;
	p->stacks[p->nr_stacks] = st;
	return (int)p->nr_stacks++;
}

/* ---- samples ----------------------------------------------------------------
 */

static int col_grow(void *col, size_t cap, size_t elem)
{
	void **c = col;
	void *q = realloc(*c, cap * elem);

	if (!q)
		return -ENOMEM;
	*c = q;
	return 0;
}

static int samples_reserve(struct evprof__samples *s, uint32_t nr_counters)
{
	size_t cap = s->cap < 256 ? 256 : s->cap * 2;

	if (s->n < s->cap)
		return 0;
	if (cap > SIZE_MAX / (8 * (nr_counters + 1)))
		return -ENOMEM;
	/* A failed step leaves bigger columns behind, which is harmless. */
	if (col_grow(&s->time, cap, sizeof(*s->time)) ||
	    col_grow(&s->stack, cap, sizeof(*s->stack)) ||
	    col_grow(&s->weight, cap, sizeof(*s->weight)) ||
	    col_grow(&s->cpu, cap, sizeof(*s->cpu)))
		return -ENOMEM;
	if (nr_counters &&
	    (col_grow(&s->has, cap, sizeof(*s->has)) ||
	     col_grow(&s->vals, cap * nr_counters, sizeof(*s->vals))))
		return -ENOMEM;
	s->cap = cap;
	return 0;
}

int evprof_profile__add_sample(struct evprof_profile *p, int thr,
			       const struct evprof_profile_sample *smp)
{
	uint32_t nc = p->nr_counters, i;
	struct evprof__samples *s;
	uint64_t has;
	size_t n;

	if (thr < 0 || (size_t)thr >= p->nr_threads || !smp ||
	    smp->stack < -1 ||
	    (smp->stack >= 0 && (size_t)smp->stack >= p->nr_stacks))
		return -EINVAL;
	has = smp->has_counters;
	if (has && (!smp->counters || (nc < 64 && (has >> nc))))
		return -EINVAL;
	s = &p->threads[thr].s;
	if (s->n >= UINT32_MAX) /* sample orders are u32 */
		return -E2BIG;
	if (samples_reserve(s, nc))
		return -ENOMEM;
	n = s->n;
	if (n && smp->time_ns < s->time[n - 1])
		s->unsorted = true;
	s->time[n] = smp->time_ns;
	s->stack[n] = smp->stack;
	s->weight[n] = smp->weight ? smp->weight : 1;
	s->cpu[n] = smp->cpu_delta_ns;
	if (nc) {
		uint64_t *v = &s->vals[n * nc];

		s->has[n] = has;
		for (i = 0; i < nc; i++)
			v[i] = has >> i & 1 ? smp->counters[i] : 0;
	}
	s->n++;
	p->nr_samples++;
	return 0;
}

static int cmp_time(const void *a, const void *b, void *ctx)
{
	const uint64_t *time = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	if (time[x] != time[y])
		return time[x] < time[y] ? -1 : 1;
	return x < y ? -1 : x > y; /* stable */
}

uint32_t *evprof__samples_order(const struct evprof__thread *t, int *err)
{
	uint32_t *order;
	size_t i;

	*err = 0;
	if (!t->s.unsorted)
		return NULL;
	order = malloc(t->s.n * sizeof(*order));
	if (!order) {
		*err = -ENOMEM;
		return NULL;
	}
	for (i = 0; i < t->s.n; i++)
		order[i] = (uint32_t)i;
	qsort_r(order, t->s.n, sizeof(*order), cmp_time, t->s.time);
	return order;
}

bool evprof__profile_has_cpu(const struct evprof_profile *p)
{
	size_t i, k;

	for (i = 0; i < p->nr_threads; i++)
		for (k = 0; k < p->threads[i].s.n; k++)
			if (p->threads[i].s.cpu[k])
				return true;
	return false;
}

void evprof__hex(char *out, const uint8_t *b, size_t n, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

void evprof_profile__stats(const struct evprof_profile *p,
			   struct evprof_profile_stats *st)
{
	memset(st, 0, sizeof(*st));
	st->samples = p->nr_samples;
	st->processes = (uint32_t)p->nr_procs;
	st->threads = (uint32_t)p->nr_threads;
	st->libs = (uint32_t)p->nr_libs;
	st->frames = (uint32_t)p->nr_frames;
	st->stacks = (uint32_t)p->nr_stacks;
	st->counters = p->nr_counters;
}
