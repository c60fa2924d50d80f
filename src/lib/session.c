// SPDX-License-Identifier: MIT
/*
 * Sessions, feeding side: per-sample counter deltas keyed by (kernel id,
 * tid) or, per CPU, by kernel id (held across context-switch cuts in
 * session_cut.c), compact sample storage with deduplicated callchains, and
 * side-band events (COMM, FORK, EXIT, MMAP, /proc seeds) kept for the
 * time-ordered replay in session_build.c. Nothing on the per-sample path
 * allocates except the amortised growth of its arrays and tables.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include <evprof/proc.h>
#include <evprof/read.h>
#include <evprof/session.h>

#include "session_internal.h"

#ifndef PERF_RECORD_MISC_MMAP_DATA
#define PERF_RECORD_MISC_MMAP_DATA (1 << 13)
#endif

struct role_ent {
	uint64_t id;
	int role;
	bool used;
};

/* The counter instance of one thread on one kernel id. */
struct last_ent {
	uint64_t id;
	uint64_t last; /* raw value at the latest sample */
	uint64_t time; /* of that sample, or of the FORK that reset it */
	uint32_t tid;
	bool used;
};

int evprof__vec_reserve(struct evprof__vec *v, size_t elem, size_t n)
{
	size_t cap;
	void *p;

	if (n <= v->cap - v->len)
		return 0;
	if (n > SIZE_MAX / elem - v->len)
		return -ENOMEM;
	cap = v->cap ? v->cap : 16;
	while (cap < v->len + n)
		cap = cap > SIZE_MAX / elem / 2 ? SIZE_MAX / elem : cap * 2;
	p = realloc(v->data, cap * elem);
	if (!p)
		return -ENOMEM;
	v->data = p;
	v->cap = cap;
	return 0;
}

static uint64_t mix64(uint64_t x)
{
	x ^= x >> 33;
	x *= 0xff51afd7ed558ccdULL;
	x ^= x >> 33;
	x *= 0xc4ceb9fe1a85ec53ULL;
	x ^= x >> 33;
	return x;
}

int evprof__session_str(struct evprof_session *s, const void *p, size_t len,
			uint32_t *off)
{
	int err;

	if (s->strs.len + len > UINT32_MAX)
		return -ENOMEM;
	err = evprof__vec_reserve(&s->strs, 1, len);
	if (err)
		return err;
	*off = (uint32_t)s->strs.len;
	memcpy((char *)s->strs.data + s->strs.len, p, len);
	s->strs.len += len;
	return 0;
}

static int add_string(struct evprof_session *s, const char *str, uint32_t *off)
{
	return evprof__session_str(s, str, strlen(str) + 1, off);
}

/* ---- lifecycle ---------------------------------------------------------- */

void evprof_session__free(struct evprof_session *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nr_counters; i++)
		free(s->counters[i]);
	free(s->counters);
	free(s->sampler_counter);
	free(s->pids);
	free(s->roles);
	free(s->ids);
	free(s->last);
	free(s->ts);
	free(s->ts_vals.data);
	free(s->exit_tid);
	free(s->chains.data);
	free(s->chain_set);
	free(s->samples.data);
	free(s->deltas.data);
	free(s->sb.data);
	free(s->strs.data);
	free(s->ustacks.data);
	free(s->deferred.data);
	free(s);
}

struct evprof_session *
evprof_session__new(const struct evprof_session_opts *opts)
{
	struct evprof_session *s;

	/* Fields are read directly below: sz must cover them all. */
	if (!EVPROF_OPTS_VALID(opts, false) || opts->sz < sizeof(*opts) ||
	    (opts->nr_counters && !opts->counters) ||
	    (opts->nr_pids && !opts->pids) ||
	    opts->nr_counters + !!opts->sampler_counter >
		EVPROF_PROFILE_MAX_COUNTERS) {
		errno = EINVAL;
		return NULL;
	}
	for (size_t i = 0; i < opts->nr_counters; i++) {
		if (!opts->counters[i] || !*opts->counters[i]) {
			errno = EINVAL;
			return NULL;
		}
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		goto nomem;
	s->fmt = opts->fmt;
	s->exclude_idle = opts->exclude_idle;
	s->max_stack_bytes = opts->max_stack_bytes ? opts->max_stack_bytes
						   : (size_t)1 << 30;
	s->per_cpu = opts->per_cpu;
	s->nr_slots = opts->nr_counters + !!opts->sampler_counter;
	if (opts->nr_counters) {
		s->counters = calloc(opts->nr_counters, sizeof(*s->counters));
		if (!s->counters)
			goto nomem;
		for (size_t i = 0; i < opts->nr_counters; i++) {
			s->counters[i] = strdup(opts->counters[i]);
			if (!s->counters[i])
				goto nomem;
			s->nr_counters++;
		}
	}
	if (opts->sampler_counter) {
		s->sampler_counter = strdup(opts->sampler_counter);
		if (!s->sampler_counter)
			goto nomem;
	}
	if (opts->nr_pids) {
		s->pids = malloc(opts->nr_pids * sizeof(*s->pids));
		if (!s->pids)
			goto nomem;
		memcpy(s->pids, opts->pids, opts->nr_pids * sizeof(*s->pids));
		s->nr_pids = opts->nr_pids;
	}
	return s;
nomem:
	evprof_session__free(s);
	errno = ENOMEM;
	return NULL;
}

/* ---- kernel id roles ---------------------------------------------------- */

static struct role_ent *role_find(const struct evprof_session *s, uint64_t id)
{
	size_t mask = s->roles_cap - 1;

	if (!s->roles_cap)
		return NULL;
	for (size_t i = mix64(id) & mask;; i = (i + 1) & mask) {
		if (!s->roles[i].used)
			return NULL;
		if (s->roles[i].id == id)
			return &s->roles[i];
	}
}

static void role_put(struct role_ent *tab, size_t cap, uint64_t id, int role)
{
	size_t mask = cap - 1, i;

	for (i = mix64(id) & mask; tab[i].used; i = (i + 1) & mask)
		;
	tab[i] = (struct role_ent){.id = id, .role = role, .used = true};
}

int evprof_session__set_id(struct evprof_session *s, uint64_t id, int role)
{
	struct role_ent *e;
	uint64_t *ids;

	if (!s || (role != EVPROF_SESSION_SAMPLER &&
		   role != EVPROF_SESSION_CPU_TIME &&
		   role != EVPROF_SESSION_CUT &&
		   (role < 0 || (size_t)role >= s->nr_counters)))
		return -EINVAL;
	s->has_cut |= role == EVPROF_SESSION_CUT;
	e = role_find(s, id);
	if (e) {
		e->role = role;
		return 0;
	}
	if ((s->nr_roles + 1) * 2 > s->roles_cap) {
		size_t cap = s->roles_cap ? s->roles_cap * 2 : 16;
		struct role_ent *tab = calloc(cap, sizeof(*tab));

		if (!tab)
			return -ENOMEM;
		for (size_t i = 0; i < s->roles_cap; i++)
			if (s->roles[i].used)
				role_put(tab, cap, s->roles[i].id,
					 s->roles[i].role);
		free(s->roles);
		s->roles = tab;
		s->roles_cap = cap;
	}
	ids = realloc(s->ids, (s->nr_roles + 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	s->ids = ids;
	s->ids[s->nr_roles++] = id;
	role_put(s->roles, s->roles_cap, id, role);
	return 0;
}

/* ---- (id, tid) -> last value -------------------------------------------- */

/* The key of per-CPU instances: no task has this tid. */
#define PER_CPU_TID UINT32_MAX

static size_t last_slot(const struct last_ent *tab, size_t cap, uint64_t id,
			uint32_t tid)
{
	size_t mask = cap - 1;
	size_t i = mix64(id * 0x9e3779b97f4a7c15ULL ^ tid) & mask;

	while (tab[i].used && (tab[i].id != id || tab[i].tid != tid))
		i = (i + 1) & mask;
	return i;
}

/* Room for n more entries at most half full, so probes stay short. */
static int last_reserve(struct evprof_session *s, size_t n)
{
	struct last_ent *tab;
	size_t cap;

	if ((s->nr_last + n) * 2 <= s->last_cap)
		return 0;
	cap = s->last_cap ? s->last_cap : 64;
	while ((s->nr_last + n) * 2 > cap)
		cap *= 2;
	tab = calloc(cap, sizeof(*tab));
	if (!tab)
		return -ENOMEM;
	for (size_t i = 0; i < s->last_cap; i++) {
		if (s->last[i].used)
			tab[last_slot(tab, cap, s->last[i].id,
				      s->last[i].tid)] = s->last[i];
	}
	free(s->last);
	s->last = tab;
	s->last_cap = cap;
	return 0;
}

/*
 * Delta of one counter instance. A first sample carries the whole value
 * (counted since the instance started). A value below the last one cannot
 * come from the same instance (counters only grow): the tid was reused by a
 * new thread whose FORK was lost or is still in another ring, so the value
 * is taken as a new instance's first one and counted in counter_resets.
 */
static uint64_t take_delta(struct evprof_session *s, uint64_t id, uint32_t tid,
			   uint64_t raw, uint64_t time)
{
	size_t i = last_slot(s->last, s->last_cap, id, tid);
	struct last_ent *e = &s->last[i];
	uint64_t delta;

	if (!e->used) {
		*e = (struct last_ent){.id = id, .tid = tid, .used = true};
		s->nr_last++;
		delta = raw;
	} else if (raw >= e->last) {
		delta = raw - e->last;
	} else {
		s->st.counter_resets++;
		delta = raw;
	}
	e->last = raw;
	e->time = time;
	return delta;
}

/*
 * A FORK makes tid a new task whose counter instances start at zero. Only
 * instances last seen before the fork are reset: samples of the new task
 * may already have arrived from another ring.
 */
static void reset_tid(struct evprof_session *s, uint32_t tid, uint64_t time)
{
	if (!s->last_cap)
		return;
	for (size_t k = 0; k < s->nr_roles; k++) {
		size_t i = last_slot(s->last, s->last_cap, s->ids[k], tid);

		if (s->last[i].used && s->last[i].time < time) {
			s->last[i].last = 0;
			s->last[i].time = time;
		}
	}
}

/* ---- callchain arena ---------------------------------------------------- */

static uint64_t hash_words(const uint64_t *w, uint64_t nr)
{
	uint64_t h = mix64(nr + 1);

	for (uint64_t i = 0; i < nr; i++)
		h = mix64(h ^ w[i]) + i;
	return h;
}

static void chain_put(uint32_t *set, size_t cap, uint64_t h, uint32_t off)
{
	size_t mask = cap - 1, i;

	for (i = h & mask; set[i]; i = (i + 1) & mask)
		;
	set[i] = off + 1;
}

static int chain_set_grow(struct evprof_session *s)
{
	size_t cap = s->chain_set_cap ? s->chain_set_cap * 2 : 1024;
	const uint64_t *words = s->chains.data;
	uint32_t *set = calloc(cap, sizeof(*set));

	if (!set)
		return -ENOMEM;
	for (size_t i = 0; i < s->chain_set_cap; i++) {
		uint32_t off = s->chain_set[i];

		if (off--)
			chain_put(set, cap,
				  hash_words(words + off + 1, words[off]), off);
	}
	free(s->chain_set);
	s->chain_set = set;
	s->chain_set_cap = cap;
	return 0;
}

/* Finds or stores the chain ips[nr]; *off receives its word offset. */
static int intern_chain(struct evprof_session *s, const uint64_t *ips,
			uint64_t nr, uint32_t *off)
{
	uint64_t h = hash_words(ips, nr);
	uint64_t *words;
	size_t mask, i;
	int err;

	if ((s->nr_chain_set + 1) * 2 > s->chain_set_cap) {
		err = chain_set_grow(s);
		if (err)
			return err;
	}
	words = s->chains.data;
	mask = s->chain_set_cap - 1;
	for (i = h & mask; s->chain_set[i]; i = (i + 1) & mask) {
		uint32_t o = s->chain_set[i] - 1;

		if (words[o] == nr &&
		    !memcmp(words + o + 1, ips, nr * sizeof(*ips))) {
			*off = o;
			return 0;
		}
	}
	if (s->chains.len + nr + 1 >= UINT32_MAX)
		return -ENOMEM;
	err = evprof__vec_reserve(&s->chains, sizeof(uint64_t), nr + 1);
	if (err)
		return err;
	words = s->chains.data;
	*off = (uint32_t)s->chains.len;
	words[*off] = nr;
	memcpy(words + *off + 1, ips, nr * sizeof(*ips));
	s->chains.len += nr + 1;
	s->chain_set[i] = *off + 1;
	s->nr_chain_set++;
	return 0;
}

int evprof__session_chain(struct evprof_session *s, const uint64_t *ips,
			  uint64_t nr, uint32_t *off)
{
	return intern_chain(s, ips, nr, off);
}

/* ---- feeding ------------------------------------------------------------ */

int evprof__sample_reserve(struct evprof_session *s)
{
	if (evprof__vec_reserve(&s->samples, sizeof(struct ssample), 1) ||
	    evprof__vec_reserve(&s->deltas, sizeof(uint64_t), s->nr_slots) ||
	    s->deltas.len + s->nr_slots > UINT32_MAX ||
	    s->samples.len >= NO_SAMPLE)
		return -ENOMEM;
	return 0;
}

struct ssample *evprof__sample_store(struct evprof_session *s,
				     const struct ssample *x,
				     const uint64_t *vals)
{
	struct ssample *ss = (struct ssample *)s->samples.data;
	uint64_t *d = s->deltas.data;

	ss += s->samples.len++;
	*ss = *x;
	ss->deltas = (uint32_t)s->deltas.len;
	for (size_t i = 0; i < s->nr_slots; i++)
		if (x->has & (1ULL << i))
			d[s->deltas.len++] = vals[i];
	if (!s->st.first_time || x->time < s->st.first_time)
		s->st.first_time = x->time;
	if (x->time > s->st.last_time)
		s->st.last_time = x->time;
	return ss;
}

/* The sample's callchain, or its ip alone in the context cpumode names. */
static void sample_chain(const struct evprof_session *s,
			 const struct evprof_record *r, uint64_t one[2],
			 const uint64_t **ips, uint64_t *nr)
{
	const struct evprof_sample *smp = &r->sample;

	*ips = smp->callchain;
	*nr = smp->callchain_nr;
	if ((s->fmt.sample_type & PERF_SAMPLE_CALLCHAIN) && *nr)
		return;
	*nr = 0;
	if (s->fmt.sample_type & PERF_SAMPLE_IP) {
		bool k = (r->misc & PERF_RECORD_MISC_CPUMODE_MASK) ==
			 PERF_RECORD_MISC_KERNEL;

		one[0] = k ? PERF_CONTEXT_KERNEL : PERF_CONTEXT_USER;
		one[1] = smp->ip;
		*ips = one;
		*nr = 2;
	}
}

static bool is_cut(const struct evprof_session *s,
		   const struct evprof_sample *smp)
{
	const struct role_ent *e;

	if (!s->has_cut)
		return false;
	e = role_find(s, smp->id);
	return e && e->role == EVPROF_SESSION_CUT;
}

static int feed_sample(struct evprof_session *s, const struct evprof_record *r)
{
	const struct evprof_sample *smp = &r->sample;
	uint32_t tid = smp->tid == UINT32_MAX && s->per_cpu
			       ? evprof__cut_dead_tid(s, smp->cpu)
			       : smp->tid;
	struct evprof_snapshot snap;
	uint64_t vals[EVPROF_PROFILE_MAX_COUNTERS];
	uint64_t one[2], has = 0, cpu = 0;
	const uint64_t *ips;
	uint64_t nr;
	struct ssample *ss;
	struct tstate *ts = NULL;
	bool has_cpu = false, cut = is_cut(s, smp);
	/* Per-CPU values must follow every read, the idle task's too. */
	bool idle = s->exclude_idle &&
		    (s->fmt.sample_type & PERF_SAMPLE_TID) && smp->pid == 0;
	uint32_t chain = 0;
	int err;

	if (idle && !s->per_cpu) {
		s->idle++;
		return 0;
	}
	snap.nr = 0;
	if (s->fmt.sample_type & PERF_SAMPLE_READ) {
		err = evprof_snapshot__parse(&snap, smp->read, smp->read_size,
					     s->fmt.read_format);
		if (err < 0)
			return err;
	}
	/* Everything that can fail comes before the state changes. */
	err = last_reserve(s, snap.nr);
	if (!err && s->has_cut && !idle) {
		ts = evprof__tstate_get(s, tid);
		if (!ts)
			err = -ENOMEM;
	}
	/* A cut's stack is kept while its thread has no sample. */
	if (!err && !idle && (!cut || (ts->last == NO_SAMPLE &&
				       !ts->has_chain))) {
		sample_chain(s, r, one, &ips, &nr);
		err = intern_chain(s, ips, nr, &chain);
	}
	if (!err && !idle && !cut)
		err = evprof__sample_reserve(s);
	if (err)
		return err;

	for (uint32_t i = 0; i < snap.nr; i++) {
		const struct evprof_counter_value *v = &snap.values[i];
		const struct role_ent *e = role_find(s, v->id);
		uint64_t d;
		int slot;

		if (!e) {
			s->st.unknown_ids++;
			continue;
		}
		if (e->role == EVPROF_SESSION_CUT ||
		    (e->role == EVPROF_SESSION_SAMPLER && !s->sampler_counter))
			continue;
		/* Per CPU, every thread continues the CPU's one instance. */
		d = take_delta(s, v->id, s->per_cpu ? PER_CPU_TID : tid,
			       v->raw, smp->time);
		if (e->role == EVPROF_SESSION_CPU_TIME) {
			cpu += d;
			has_cpu = true;
			continue;
		}
		slot = e->role == EVPROF_SESSION_SAMPLER ? (int)s->nr_counters
							 : e->role;
		if (!(has & (1ULL << slot)))
			vals[slot] = 0;
		vals[slot] += d;
		has |= 1ULL << slot;
	}
	if (idle) {
		s->idle += !cut;
		return 0;
	}
	if (ts) {
		ts->pid = smp->pid;
		ts->time = smp->time;
	}
	if (cut) {
		if (ts->last == NO_SAMPLE && !ts->has_chain) {
			ts->chain = chain;
			ts->has_chain = true;
		}
		evprof__cut_hold(s, ts, vals, has, cpu, has_cpu);
		return 0;
	}
	if (ts) {
		evprof__cut_take(s, ts, vals, &has, &cpu, &has_cpu);
		ts->last = (uint32_t)s->samples.len;
	}

	ss = evprof__sample_store(s,
				  &(struct ssample){
				      .time = smp->time,
				      .cpu_delta = cpu,
				      .has = has,
				      .pid = smp->pid,
				      .tid = tid,
				      .chain = chain,
				      .flags = has_cpu ? SS_HAS_CPU : 0,
				  },
				  vals);
	evprof__session_sample_ext(s, smp, ss);
	return 0;
}

static struct sb_event *sb_new(struct evprof_session *s, enum sb_kind kind,
			       uint64_t time)
{
	struct sb_event *e;

	if (evprof__vec_reserve(&s->sb, sizeof(*e), 1))
		return NULL;
	e = (struct sb_event *)s->sb.data + s->sb.len;
	*e = (struct sb_event){.time = time, .kind = (uint8_t)kind};
	return e;
}

/* Appends the event sb_new() prepared, once its strings are stored. */
static void sb_commit(struct evprof_session *s)
{
	s->sb.len++;
}

static int feed_comm(struct evprof_session *s, const struct evprof_record *r)
{
	struct sb_event *e = sb_new(s, SB_COMM, r->sid.time);
	uint32_t off;

	if (!e || add_string(s, r->comm.comm, &off))
		return -ENOMEM;
	e->pid = r->comm.pid;
	e->tid = r->comm.tid;
	e->exec = r->comm.exec;
	e->str = off;
	sb_commit(s);
	return 0;
}

static int feed_task(struct evprof_session *s, const struct evprof_record *r)
{
	bool fork = r->type == PERF_RECORD_FORK;
	struct sb_event *e = sb_new(s, fork ? SB_FORK : SB_EXIT, r->task.time);

	if (!e)
		return -ENOMEM;
	e->pid = r->task.pid;
	e->ppid = r->task.ppid;
	e->tid = r->task.tid;
	e->ptid = r->task.ptid;
	sb_commit(s);
	if (fork) {
		reset_tid(s, r->task.tid, r->task.time);
		evprof__cut_fork(s, r->task.tid, r->task.time);
	} else if (s->per_cpu && r->sid.present &&
		   (s->fmt.sample_type & PERF_SAMPLE_CPU)) {
		return evprof__cut_exit(s, r->sid.cpu, r->task.tid);
	}
	return 0;
}

static int feed_mmap(struct evprof_session *s, const struct evprof_record *r)
{
	const struct evprof_record_mmap *m = &r->mmap;
	struct sb_event *e;
	uint32_t off, bid = 0;

	/* Only code matters for stacks. */
	if (r->type == PERF_RECORD_MMAP2
		? !(m->prot & PROT_EXEC)
		: (r->misc & PERF_RECORD_MISC_MMAP_DATA))
		return 0;
	/* pid -1: kernel images, symbolized from kallsyms. */
	if (m->pid == UINT32_MAX || !m->len || m->addr + m->len < m->addr)
		return 0;
	e = sb_new(s, SB_MMAP, r->sid.time);
	if (!e || add_string(s, m->filename, &off) ||
	    (m->build_id_size &&
	     evprof__session_str(s, m->build_id, m->build_id_size, &bid)))
		return -ENOMEM;
	e->pid = m->pid;
	e->tid = m->tid;
	e->addr = m->addr;
	e->len = m->len;
	e->pgoff = m->pgoff;
	e->ino = m->ino;
	e->str = off;
	e->build_id = bid;
	e->build_id_len = m->build_id_size;
	sb_commit(s);
	return 0;
}

int evprof_session__feed(struct evprof_session *s, const void *rec, size_t size)
{
	struct evprof_record r;
	int err;

	if (!s || !rec)
		return -EINVAL;
	s->st.records++;
	err = evprof_record__parse(&r, rec, size, &s->fmt);
	if (err == -ENOTSUP && r.type != PERF_RECORD_SAMPLE)
		return 0; /* a newer record type: nothing we use */
	if (err < 0) {
		s->st.malformed++;
		return err;
	}
	switch (r.type) {
	case PERF_RECORD_SAMPLE:
		err = feed_sample(s, &r);
		break;
	case PERF_RECORD_COMM:
		err = feed_comm(s, &r);
		break;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		err = feed_task(s, &r);
		break;
	case PERF_RECORD_MMAP:
	case PERF_RECORD_MMAP2:
		err = feed_mmap(s, &r);
		break;
	case PERF_RECORD_LOST:
		s->st.lost_records++;
		s->st.lost_events += r.lost.lost;
		break;
	case PERF_RECORD_LOST_SAMPLES:
		s->st.lost_samples += r.lost_samples;
		break;
	case PERF_RECORD_THROTTLE:
		s->st.throttled++;
		break;
	case EVPROF_RECORD_CALLCHAIN_DEFERRED:
		err = evprof__session_feed_deferred(s, &r);
		break;
	default:
		break;
	}
	if (err < 0 && err != -ENOMEM)
		s->st.malformed++;
	return err;
}

/* ---- /proc seeds -------------------------------------------------------- */

struct seed_ctx {
	struct evprof_session *s;
	pid_t pid;
};

static int seed_map(const struct evprof_map *m, void *arg)
{
	struct seed_ctx *c = arg;
	struct sb_event *e;
	uint32_t off;

	if (!(m->prot & EVPROF_MAP_EXEC) || m->end <= m->start)
		return 0;
	e = sb_new(c->s, SB_MMAP, 0);
	if (!e || add_string(c->s, m->path, &off))
		return -ENOMEM;
	e->pid = (uint32_t)c->pid;
	e->tid = (uint32_t)c->pid;
	e->addr = m->start;
	e->len = m->end - m->start;
	e->pgoff = m->pgoff;
	e->ino = m->inode;
	e->str = off;
	sb_commit(c->s);
	return 0;
}

static int seed_name(struct evprof_session *s, enum sb_kind kind, pid_t pid,
		     pid_t tid)
{
	char name[64];
	struct sb_event *e;
	uint32_t off;
	int err;

	err = evprof_proc__read_comm(pid, kind == SB_SEED_PROC ? 0 : tid, name,
				     sizeof(name));
	if (err < 0)
		return err;
	/* Seeds come before every record: time 0. */
	e = sb_new(s, kind, 0);
	if (!e || add_string(s, name, &off))
		return -ENOMEM;
	e->pid = (uint32_t)pid;
	e->tid = (uint32_t)tid;
	e->str = off;
	sb_commit(s);
	return 0;
}

int evprof_session__seed_process(struct evprof_session *s, pid_t pid)
{
	struct seed_ctx ctx = {s, pid};
	size_t mark;
	int *tids = NULL;
	int n, err;

	if (!s || pid <= 0)
		return -EINVAL;
	mark = s->sb.len;
	err = seed_name(s, SB_SEED_PROC, pid, pid);
	if (err < 0)
		goto out;
	n = evprof_proc__read_tids(pid, &tids);
	if (n < 0) {
		err = n;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		err = seed_name(s, SB_SEED_THREAD, pid, tids[i]);
		/* A thread may exit while we read: not an error. */
		if (err == -ESRCH)
			err = 0;
		if (err < 0)
			goto out;
	}
	err = evprof_maps__read(pid, seed_map, &ctx);
out:
	free(tids);
	if (err < 0) {
		s->sb.len = mark; /* all or nothing */
		return err;
	}
	return 0;
}

/* ---- queries ------------------------------------------------------------ */

void evprof_session__stats(const struct evprof_session *s,
			   struct evprof_session_stats *st)
{
	*st = s->st;
	if (!s->built) {
		st->samples = s->samples.len;
		st->samples_filtered = s->idle;
	}
}

uint64_t evprof_session__thread_total(const struct evprof_session *s, pid_t tid,
				      int counter)
{
	const struct ssample *ss = s->samples.data;
	const uint64_t *deltas = s->deltas.data;
	uint64_t sum = 0;
	int slot = counter;

	if (counter == EVPROF_SESSION_SAMPLER) {
		if (!s->sampler_counter)
			return 0;
		slot = (int)s->nr_counters;
	} else if (counter != EVPROF_SESSION_CPU_TIME &&
		   (counter < 0 || (size_t)counter >= s->nr_counters)) {
		return 0;
	}
	for (size_t i = 0; i < s->samples.len; i++) {
		const struct ssample *x = &ss[i];

		if (x->tid != (uint32_t)tid ||
		    (s->built && !(x->flags & SS_KEPT)))
			continue;
		if (counter == EVPROF_SESSION_CPU_TIME) {
			if (x->flags & SS_HAS_CPU)
				sum += x->cpu_delta;
		} else if (x->has & (1ULL << slot)) {
			uint64_t below = x->has & ((1ULL << slot) - 1);

			sum += deltas[x->deltas + __builtin_popcountll(below)];
		}
	}
	return sum;
}
