// SPDX-License-Identifier: MIT
/*
 * The BPF engine's maps read into the session: the aggregates of a set
 * with their stacks, the threads' last slices, the programs' counts, and
 * the waits and clearing a set's flip needs (engine_bpf.c flips).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpf/engine.h"
#include "engine_bpf.h"
#include "engine.skel.h"
#include "os/os.h"
#include "session/session.h"

/* Appends marker + the ips of stack h to chain; returns the new length. */
static size_t add_stack(int map, uint64_t h, uint64_t marker, uint64_t *chain,
			size_t n)
{
	struct evprof_bpf_stack st;

	if (h <= EVPROF_BPF_LOST_STACK || bpf_map_lookup_elem(map, &h, &st))
		return n;
	chain[n++] = marker;
	for (size_t i = 0; i < EVPROF_BPF_STACK_DEPTH && st.ips[i]; i++)
		chain[n++] = st.ips[i];
	return n;
}

/*
 * Feeds one aggregate, its stacks from the stack map of its set, with
 * cgroup (0: none) as its thread's.
 */
static int feed(struct evprof_bpf *b, int map, const struct evprof_bpf_key *k,
		uint64_t time, const struct evprof_bpf_value *v,
		uint64_t cgroup)
{
	uint64_t vals[EVPROF_BPF_MAX_COUNTERS];
	uint64_t chain[2 * (EVPROF_BPF_STACK_DEPTH + 1)];
	size_t n = add_stack(map, k->kstack, PERF_CONTEXT_KERNEL, chain, 0);
	struct evprof_session_aggr a = {
	    .unsampled = k->ustack == EVPROF_BPF_UNSAMPLED,
	    .time = time,
	    .pid = k->pid,
	    .tid = k->tid,
	    .ips = chain,
	    .samples = v->samples,
	    .cpu_ns = v->cpu_ns,
	    /* The counters, then the sampling event's count (its slot). */
	    .has = (1ULL << b->nr_slots) - 1,
	    .counters = vals,
	    .cgroup = cgroup,
	};

	for (size_t i = 0; i < EVPROF_BPF_MAX_COUNTERS; i++)
		vals[i] = v->counts[i];
	a.nr = add_stack(map, k->ustack, PERF_CONTEXT_USER, chain, n);
	return evprof__session_aggregate(b->e.session, &a);
}

struct entry {
	struct evprof_bpf_key k;
	struct evprof_bpf_value v;
};

struct entries { /* an EVPROF_VEC(struct entry) with a name */
	struct entry *a;
	size_t n, cap;
};

static int cmp_key(const void *pa, const void *pb)
{
	return memcmp(pa, pb, sizeof(struct evprof_bpf_key));
}

/* Every aggregate of set gen, sorted by key. */
static int read_aggregates(struct evprof_bpf *b, uint32_t gen,
			   struct entries *out)
{
	int map = b->aggr_fd[gen];
	struct evprof_bpf_key k, *prev = NULL;
	struct entry e;

	while (!bpf_map_get_next_key(map, prev, &e.k)) {
		k = e.k;
		prev = &k;
		if (bpf_map_lookup_elem(map, &e.k, &e.v))
			continue;
		if (EVPROF_VEC_PUSH(out, e))
			return -ENOMEM;
	}
	qsort(out->a, out->n, sizeof(*out->a), cmp_key);
	return 0;
}

/*
 * What threads still running counted after their last sample goes to
 * their "[unsampled]" aggregate, as the switch program settles it at their
 * last switch-out.
 */
static int read_threads(struct evprof_bpf *b, struct entries *out,
			uint64_t *slices)
{
	int map = bpf_map__fd(b->skel->maps.threads);
	size_t sorted = out->n;
	uint32_t k, next, *prev = NULL;
	struct evprof_bpf_thread t;

	while (!bpf_map_get_next_key(map, prev, &next)) {
		struct entry *e;

		k = next;
		prev = &k;
		if (bpf_map_lookup_elem(map, &k, &t))
			continue;
		(*slices)++;
		t.last.ustack = t.last.kstack = EVPROF_BPF_UNSAMPLED;
		e = bsearch(&t.last, out->a, sorted, sizeof(*out->a), cmp_key);
		if (!e) {
			struct entry x = {.k = t.last};

			if (EVPROF_VEC_PUSH(out, x))
				return -ENOMEM;
			e = &out->a[out->n - 1];
		}
		e->v.cpu_ns += t.cpu_ns;
		for (size_t i = 0; i < EVPROF_BPF_MAX_COUNTERS; i++)
			e->v.counts[i] += t.counts[i];
		if (t.time > e->v.time)
			e->v.time = t.time;
	}
	return 0;
}

void evprof__bpf_read_stats(struct evprof_bpf *b, uint64_t *st)
{
	int map = bpf_map__fd(b->skel->maps.stats), n;
	uint64_t *v;

	memset(st, 0, EVPROF_BPF_STAT__COUNT * sizeof(*st));
	n = libbpf_num_possible_cpus();
	v = n > 0 ? calloc((size_t)n, sizeof(*v)) : NULL;
	for (uint32_t k = 0; v && k < EVPROF_BPF_STAT__COUNT; k++) {
		if (bpf_map_lookup_elem(map, &k, v))
			continue;
		for (int c = 0; c < n; c++)
			st[k] += v[c];
	}
	free(v);
}

/*
 * Returns once no program run that may have taken the set it adds to
 * before now is still running. Programs on perf events and tracepoints do
 * not sleep: each runs in an RCU read-side critical section (preemption
 * off; a perf_event one in hard interrupt or NMI context, which RCU counts
 * as one since Linux 4.20). An update of a map-in-map slot returns only
 * after synchronize_rcu() (maybe_wait_bpf_programs(), Linux 4.16), made
 * for user space to snapshot what programs recorded through the old inner
 * map; writing a slot again with the map it holds is that wait alone. A
 * per-CPU "in a program" counter would cost two atomics in every program
 * run, and user space would spin on other CPUs' values.
 */
int evprof__bpf_wait_programs(struct evprof_bpf *b)
{
	uint32_t slot = 0;

	if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.aggrs), &slot,
				&b->aggr_fd[0], BPF_ANY))
		return -errno;
	return 0;
}

/*
 * Deletes every entry of an idle map, its keys listed first: a walk by
 * bpf_map_get_next_key() from a deleted key starts over.
 */
int evprof__bpf_clear_map(int map, size_t ksz)
{
	size_t n = 0, cap = 0;
	char *keys = NULL, *prev = NULL;
	int err = 0;

	for (;;) {
		if (n == cap) {
			char *k =
			    realloc(keys, (cap = cap ? 2 * cap : 256) * ksz);

			if (!k) {
				err = -ENOMEM;
				break;
			}
			keys = k;
		}
		prev = n ? keys + (n - 1) * ksz : NULL;
		if (bpf_map_get_next_key(map, prev, keys + n * ksz))
			break;
		n++;
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(map, keys + i * ksz);
	free(keys);
	return err;
}

static int name_cgroup(uint64_t id, const char *path, void *ctx)
{
	return evprof_session__name_cgroup(ctx, id, path);
}

/*
 * Names cgroup id where nothing did (no CGROUP record: perf_event on a
 * cgroup v1 hierarchy, a record lost) by walking the cgroup2 mount again,
 * at most once a batch (*walked), off the programs' path; an id that no
 * walk finds (its cgroup gone) is not looked for again.
 */
static void name_unknown(struct evprof_bpf *b, uint64_t id, bool *walked)
{
	struct evprof_session *s = b->e.session;

	if (evprof__session_cgroup_named(s, id) ||
	    (b->cg_unnamed &&
	     evprof__hashmap_find(b->cg_unnamed, (long)id, NULL)))
		return;
	if (!*walked) {
		*walked = true;
		evprof__cgroup_walk(true, name_cgroup, s);
		if (evprof__session_cgroup_named(s, id))
			return;
	}
	if (!b->cg_unnamed)
		b->cg_unnamed = evprof__hashmap_new(
		    evprof__hashmap_u64_hash, evprof__hashmap_u64_equal, NULL);
	if (b->cg_unnamed)
		evprof__hashmap_add(b->cg_unnamed, (long)id, 0);
}

static bool same_thread(const struct entry *a, const struct entry *b)
{
	return a->k.pid == b->k.pid && a->k.tid == b->k.tid;
}

/*
 * Feeds set gen's entries, their times at most until. A thread's entries
 * are adjacent (sorted by key; those read_threads() added have no
 * cgroup): its cgroup goes with its latest one alone, so that the session
 * sees each thread's cgroups in time order.
 */
static int feed_all(struct evprof_bpf *b, uint32_t gen,
		    const struct entries *es, uint64_t until)
{
	int map = b->stack_fd[gen], err = 0;
	size_t end, latest;
	bool walked = false;

	for (size_t i = 0; !err && i < es->n; i = end) {
		latest = i;
		for (end = i;
		     end < es->n && same_thread(&es->a[end], &es->a[i]); end++)
			if (es->a[end].v.cgroup &&
			    (!es->a[latest].v.cgroup ||
			     es->a[end].v.time > es->a[latest].v.time))
				latest = end;
		if (es->a[latest].v.cgroup)
			name_unknown(b, es->a[latest].v.cgroup, &walked);
		for (size_t j = i; !err && j < end; j++) {
			const struct entry *e = &es->a[j];
			uint64_t t = e->v.time;

			err = feed(b, map, &e->k, t < until ? t : until, &e->v,
				   j == latest ? e->v.cgroup : 0);
		}
	}
	return err;
}

int evprof__bpf_feed_set(struct evprof_bpf *b, uint32_t gen, bool threads,
			 uint64_t until)
{
	struct entries es = {0};
	int err = read_aggregates(b, gen, &es);

	b->entries += es.n;
	if (!err && threads)
		err = read_threads(b, &es, &b->slices);
	if (!err)
		err = feed_all(b, gen, &es, until);
	EVPROF_VEC_FREE(&es);
	return err;
}

/*
 * Copies the stacks of every live thread's latest sample from the idle
 * set to the live one: what the thread counts after that sample joins
 * that sample's key in the live set (at its exit or the stop), and its
 * stacks must be there when that set is read. The thread map is live:
 * read in batches, whose position is a bucket, not a key a program may
 * delete meanwhile (a walk by key would start over). Where it fails
 * (Linux < 5.6 has no batches), those slices lose their frames, not their
 * counts.
 */
void evprof__bpf_carry_stacks(struct evprof_bpf *b, uint32_t idle)
{
	enum { CHUNK = 256 };
	int threads = bpf_map__fd(b->skel->maps.threads);
	int from = b->stack_fd[idle], to = b->stack_fd[idle ^ 1];
	struct evprof_bpf_thread *t = malloc(CHUNK * sizeof(*t));
	uint32_t keys[CHUNK], pos, count;
	struct evprof_bpf_stack st;
	void *in = NULL;
	int err = 0;

	while (t && !err) {
		count = CHUNK;
		/* -ENOENT comes with the last ones. */
		err = bpf_map_lookup_batch(threads, in, &pos, keys, t, &count,
					   NULL);
		if (err && err != -ENOENT)
			break;
		in = &pos;
		for (uint32_t i = 0; i < count; i++) {
			uint64_t h[2] = {t[i].last.ustack, t[i].last.kstack};

			for (int j = 0; j < 2; j++)
				if (h[j] > EVPROF_BPF_LOST_STACK &&
				    !bpf_map_lookup_elem(from, &h[j], &st))
					bpf_map_update_elem(to, &h[j], &st,
							    BPF_NOEXIST);
		}
	}
	free(t);
}

/* Entries of the pid set: processes followed that had not ended. */
uint64_t evprof__bpf_count_pids(struct evprof_bpf *b)
{
	int map = bpf_map__fd(b->skel->maps.pids);
	uint32_t k, *prev = NULL;
	uint64_t n = 0;

	while (!bpf_map_get_next_key(map, prev, &k)) {
		prev = &k;
		n++;
	}
	return n;
}
