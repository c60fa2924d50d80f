// SPDX-License-Identifier: MIT
/*
 * The BPF engine: see engine_bpf.h, and bpf/engine.bpf.c for what runs in
 * the kernel. Only this file includes libbpf.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include <evprof/session.h>

#include "perf/attr.h"
#include "bpf/engine.h"
#include "engine_bpf.h"
#include "engine.skel.h"
#include "open.h"
#include "session/aggr.h"

#define CAP_BPF_     39 /* Linux 5.8; older headers lack it */
#define CAP_PERFMON_ 38 /* Linux 5.8 */

struct evprof_bpf {
	struct evprof_engine *skel;
	int *cpus; /* online CPUs */
	int nr_cpus;
	int *sampler;  /* per CPU */
	int *counters; /* per CPU x EVPROF_BPF_MAX_COUNTERS */
	struct bpf_link **sample_links;
	struct bpf_link *switch_link, *fork_link;
	bool baselines; /* every CPU's baseline taken at enable */
	uint32_t gen;	/* the set the programs add to (engine.bpf.c) */
	int aggr_fd[2], stack_fd[2]; /* the sets' maps; set 1 is ours */
	uint64_t entries, slices;    /* aggregates and settled threads read */
	struct perf_event_attr side_band; /* the format the session decodes */
};

/* libbpf's own messages go through ours, at debug level. */
static int libbpf_print(enum libbpf_print_level level, const char *fmt,
			va_list ap)
{
	char buf[512];

	if (level == LIBBPF_DEBUG)
		return 0;
	vsnprintf(buf, sizeof(buf), fmt, ap);
	pr_debug("libbpf: %s", buf);
	return 0;
}

static bool has_caps(void)
{
	struct __user_cap_header_struct h = {.version =
						 _LINUX_CAPABILITY_VERSION_3};
	struct __user_cap_data_struct d[2] = {{0}};

	if (syscall(SYS_capget, &h, d))
		return false;
	/* Capabilities 32 and up live in the second word. */
	return (d[1].effective & (1u << (CAP_BPF_ - 32))) &&
	       (d[1].effective & (1u << (CAP_PERFMON_ - 32)));
}

/*
 * Our pid namespace when it is not the initial one (PROC_PID_INIT_INO,
 * include/linux/proc_ns.h, stable since Linux 3.8): its nsfs dev and
 * inode, which bpf_get_ns_current_pid_tgid() takes (Linux 5.7). Returns
 * whether it is nested.
 */
static bool nested_pid_ns(uint64_t *dev, uint64_t *ino)
{
	struct stat st;

	if (stat("/proc/self/ns/pid", &st) || st.st_ino == 0xEFFFFFFCu)
		return false;
	*dev = st.st_dev;
	*ino = st.st_ino;
	return true;
}

bool evprof_recorder__engine_available(enum evprof_recorder_engine e, char *why,
				       size_t len)
{
	struct evprof_engine *skel;
	char tmp[1];
	int err;

	if (!why || !len) {
		why = tmp;
		len = sizeof(tmp);
	}
	if (e == EVPROF_RECORDER_ENGINE_RING) {
		snprintf(why, len, "the ring engine is always built");
		return true;
	}
	if (e != EVPROF_RECORDER_ENGINE_BPF) {
		snprintf(why, len, "no such engine");
		return false;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK)) {
		snprintf(why, len,
			 "no kernel BTF (/sys/kernel/btf/vmlinux: %s; "
			 "CONFIG_DEBUG_INFO_BTF)",
			 strerror(errno));
		return false;
	}
	if (geteuid() && !has_caps()) {
		snprintf(why, len, "needs root, or CAP_BPF and CAP_PERFMON");
		return false;
	}
	libbpf_set_print(libbpf_print);
	skel = evprof_engine__open();
	err = skel ? evprof_engine__load(skel) : -errno;
	evprof_engine__destroy(skel);
	if (err) {
		snprintf(why, len, "its programs do not load: %s",
			 strerror(-err));
		return false;
	}
	snprintf(why, len,
		 "built in; its programs load (kernel BTF, privileges)");
	return true;
}

static const char *cpu_msg(int err)
{
	return err == EACCES || err == EPERM
		   ? " (needs root, or CAP_BPF and CAP_PERFMON)"
		   : "";
}

void evprof__bpf_attr(const struct evprof_recorder *r, size_t e, int cpu,
		      struct perf_event_attr *a)
{
	*a = r->events[e].attr;
	a->sample_period = 0;
	a->freq = 0;
	a->sample_type = 0;
	a->exclude_kernel = a->exclude_hv = r->exclude_kernel;
	if (!e) {
		if (r->period) {
			a->sample_period = r->period;
		} else {
			a->freq = 1;
			a->sample_freq = r->freq;
		}
		a->sample_type = PERF_SAMPLE_IP;
		a->disabled = 1;
		/*
		 * The idle task is never followed: cpu-clock would run the
		 * program there for nothing, and on an idle CPU whose tick
		 * is stopped its interrupts reach the kernel's per-tick
		 * limit and throttle it, samples lost unseen until the next
		 * tick (as in ring mode: see recorder_open.c).
		 */
		a->exclude_idle = a->type == PERF_TYPE_SOFTWARE &&
				  a->config == PERF_COUNT_SW_CPU_CLOCK;
	} else {
		a->disabled = 0;
		a->inherit = 0; /* an inherited event cannot go in the array */
		a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				 PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	evprof__pmu_map_bind(&r->pmu_map, cpu, a, 1);
}

static int open_sampler(struct evprof_recorder *r, int cpu)
{
	struct perf_event_attr a;

	evprof__bpf_attr(r, 0, cpu, &a);
	return evprof__perf_open(&a, -1, cpu, -1);
}

/* Counter k (the user's event k + 1) on cpu. */
static int open_counter(struct evprof_recorder *r, size_t k, int cpu)
{
	struct perf_event_attr a;

	evprof__bpf_attr(r, k + 1, cpu, &a);
	return evprof__perf_open(&a, -1, cpu, -1);
}

/* A sampler that cannot sample here becomes cpu-clock, as in ring mode. */
static int open_samplers(struct evprof_recorder *r, struct evprof_bpf *b)
{
	for (int i = 0; i < b->nr_cpus; i++) {
		int fd = open_sampler(r, b->cpus[i]);

		if (fd < 0 && i == 0 && evprof_open_unsupported(errno) &&
		    strcmp(r->events[0].name, "cpu-clock")) {
			evprof__recorder_note(r,
					      "%s cannot sample (%s): "
					      "sampling cpu-clock",
					      r->events[0].name,
					      strerror(errno));
			evprof_event_spec__parse(&r->events[0], "cpu-clock");
			fd = open_sampler(r, b->cpus[i]);
		}
		if (fd < 0) {
			int err = errno;

			pr_warn("cannot open %s on CPU %d: %s%s\n",
				r->events[0].name, b->cpus[i], strerror(err),
				cpu_msg(err));
			return -err;
		}
		b->sampler[i] = fd;
	}
	return 0;
}

/* Drops counter k (event k + 1), as the ring engine drops an extra. */
static void drop_counter(struct evprof_recorder *r, size_t k, int err)
{
	evprof__recorder_note(r, "%s cannot be counted (%s): dropped",
			      r->events[k + 1].name, strerror(err));
	memmove(&r->events[k + 1], &r->events[k + 2],
		(r->nr - k - 2) * sizeof(r->events[0]));
	r->nr--;
}

/*
 * Opens every counter on every CPU; one that cannot be counted here (no
 * such event or PMU) is dropped with a note. Before the programs load:
 * they are told how many there are.
 */
static int open_counters(struct evprof_recorder *r, struct evprof_bpf *b)
{
	for (size_t k = 0; k + 1 < r->nr;) {
		int i, fd = -1, err = 0;

		for (i = 0; i < b->nr_cpus; i++) {
			fd = open_counter(r, k, b->cpus[i]);
			if (fd < 0)
				break;
			b->counters[i * EVPROF_BPF_MAX_COUNTERS + k] = fd;
		}
		if (fd >= 0) {
			k++;
			continue;
		}
		err = errno;
		if (i > 0 || !evprof_open_unsupported(err)) {
			pr_warn("cannot count %s on CPU %d: %s%s\n",
				r->events[k + 1].name, b->cpus[i],
				strerror(err), cpu_msg(err));
			return -err;
		}
		drop_counter(r, k, err);
	}
	return 0;
}

/* Counter k on CPU c goes to the programs' array at c * MAX + k. */
static int give_counters(struct evprof_recorder *r, struct evprof_bpf *b)
{
	int map = bpf_map__fd(b->skel->maps.counters);

	for (int i = 0; i < b->nr_cpus; i++) {
		for (size_t k = 0; k + 1 < r->nr; k++) {
			uint32_t idx =
			    (uint32_t)b->cpus[i] * EVPROF_BPF_MAX_COUNTERS +
			    (uint32_t)k;
			int fd = b->counters[i * EVPROF_BPF_MAX_COUNTERS + k];

			if (bpf_map_update_elem(map, &idx, &fd, BPF_ANY)) {
				int err = errno;

				pr_warn("cannot give %s on CPU %d to BPF: %s\n",
					r->events[k + 1].name, b->cpus[i],
					strerror(err));
				return -err;
			}
		}
	}
	return 0;
}

/* A new map like m, of n entries; returns its fd or -errno. */
static int map_like(struct bpf_map *m, const char *name, uint32_t n)
{
	LIBBPF_OPTS(bpf_map_create_opts, o, .map_flags = bpf_map__map_flags(m));
	int fd = bpf_map_create(bpf_map__type(m), name, bpf_map__key_size(m),
				bpf_map__value_size(m), n, &o);

	return fd < 0 ? -errno : fd;
}

/*
 * The template of outer's inner maps: like inner but of one entry (a hash
 * map's size is no part of what the kernel compares of a map-in-map's
 * inner maps); libbpf would make one as large as inner, 4 MiB of buckets
 * to clear for the load only. *fd is closed by the caller after the load.
 */
static int give_template(struct bpf_map *outer, struct bpf_map *inner, int *fd)
{
	*fd = map_like(inner, NULL, 1);
	if (*fd < 0)
		return *fd;
	return bpf_map__set_inner_map_fd(outer, *fd);
}

static int load(struct evprof_recorder *r, struct evprof_bpf *b)
{
	int possible = libbpf_num_possible_cpus(), err, tmpl[2] = {-1, -1};
	uint64_t dev = 0, ino = 0;
	struct evprof_engine *s;

	if (possible < 0)
		return possible;
	libbpf_set_print(libbpf_print);
	s = b->skel = evprof_engine__open();
	if (!s)
		return -errno;
	s->rodata->nr_counters = (uint32_t)(r->nr - 1);
	s->rodata->follow_all = r->system_wide;
	s->rodata->kernel_stacks = !r->exclude_kernel;
	s->rodata->ns_mode = nested_pid_ns(&dev, &ino);
	s->rodata->ns_dev = dev;
	s->rodata->ns_ino = ino;
	err = bpf_map__set_max_entries(
	    s->maps.counters, (uint32_t)possible * EVPROF_BPF_MAX_COUNTERS);
	if (!err)
		err = give_template(s->maps.aggrs, s->maps.aggr0, &tmpl[0]);
	if (!err)
		err = give_template(s->maps.stack_sets, s->maps.stacks0,
				    &tmpl[1]);
	if (!err)
		err = evprof_engine__load(s);
	for (int i = 0; i < 2; i++)
		if (tmpl[i] >= 0)
			close(tmpl[i]);
	if (!err) {
		b->aggr_fd[0] = bpf_map__fd(s->maps.aggr0);
		b->stack_fd[0] = bpf_map__fd(s->maps.stacks0);
	}
	if (err)
		pr_warn("cannot load the BPF engine: %s%s\n", strerror(-err),
			cpu_msg(-err));
	return err;
}

/*
 * The command, or the attached processes, start the kernel's filter; from
 * a nested pid namespace by their pids there, translated as they run.
 */
static int follow_targets(struct evprof_recorder *r, struct evprof_bpf *b)
{
	int map = bpf_map__fd(b->skel->rodata->ns_mode ? b->skel->maps.ns_pids
						       : b->skel->maps.pids);
	uint8_t one = 1;

	if (r->child > 0) {
		uint32_t pid = (uint32_t)r->child;

		if (bpf_map_update_elem(map, &pid, &one, BPF_ANY))
			return -errno;
	}
	for (size_t i = 0; i < r->nr_pids; i++) {
		uint32_t pid = (uint32_t)r->pids[i];

		if (bpf_map_update_elem(map, &pid, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * Side-band only: a dummy event per CPU with the records symbolization
 * needs (comm, mmap, fork, exit), in one ring per CPU.
 */
static int open_side_band(struct evprof_recorder *r)
{
	struct perf_event_attr a = {
	    .size = sizeof(a),
	    .type = PERF_TYPE_SOFTWARE,
	    .config = PERF_COUNT_SW_DUMMY,
	    .sample_type = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU,
	    .disabled = 1,
	    .mmap = 1,
	    .mmap2 = 1,
	    .comm = 1,
	    .comm_exec = 1,
	    .task = 1,
	    .sample_id_all = 1,
	    .use_clockid = 1,
	    .clockid = CLOCK_MONOTONIC, /* bpf_ktime_get_ns()'s clock */
	    .watermark = 1,
	};
	struct evprof_group_set *set;
	struct evprof_group_set_opts o = {.sz = sizeof(o)};

	a.wakeup_watermark = (uint32_t)(r->ring_pages * 4096 / 4);
	set = evprof_group_set__open(&a, 1, -1, &o);
	if (!set) {
		int err = errno;

		pr_warn("cannot open the side-band events: %s%s\n",
			strerror(err), cpu_msg(err));
		return -err;
	}
	r->sets = malloc(sizeof(*r->sets));
	if (!r->sets) {
		evprof_group_set__close(set);
		return -ENOMEM;
	}
	r->sets[0] = set;
	r->nr_sets = 1;
	r->nr_members = 1;
	r->bpf->side_band = a;
	return evprof__recorder_open_rings(r);
}

static int new_session(struct evprof_recorder *r)
{
	const char *counters[EVPROF_BPF_MAX_COUNTERS];
	struct evprof_session_opts so;

	evprof__recorder_session_opts(r, counters, &so);
	so.per_cpu = true;
	evprof_record_fmt__from_attr(&so.fmt, &r->bpf->side_band);
	r->session = evprof_session__new(&so);
	if (!r->session)
		return -errno;
	for (size_t i = 0; i < evprof_group_set__nr(r->sets[0]); i++) {
		struct evprof_group *g = evprof_group_set__group(r->sets[0], i);
		int err = evprof_session__set_id(
		    r->session, evprof_group__id(g, 0), EVPROF_SESSION_SAMPLER);

		if (err)
			return err;
	}
	return 0;
}

static int check_options(struct evprof_recorder *r)
{
	if (r->nr - 1 > EVPROF_BPF_MAX_COUNTERS) {
		pr_warn("the BPF engine reads at most %d counters\n",
			EVPROF_BPF_MAX_COUNTERS);
		return -E2BIG;
	}
	if (r->dwarf_stack || r->off_cpu) {
		pr_warn("the BPF engine takes frame-pointer stacks only, "
			"without off-CPU intervals\n");
		return -EOPNOTSUPP;
	}
	if (geteuid() && !has_caps()) {
		pr_warn("the BPF engine needs root, or CAP_BPF and "
			"CAP_PERFMON\n");
		return -EPERM;
	}
	return 0;
}

int evprof__bpf_open(struct evprof_recorder *r)
{
	struct evprof_bpf *b;
	int n, err;

	r->per_cpu = true;
	r->cpu_time_member = r->cut_member = r->exit_member = false;
	r->defer = false;
	err = check_options(r);
	if (err)
		return err;
	b = r->bpf = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->aggr_fd[1] = b->stack_fd[1] = -1;
	n = evprof_cpus_online(NULL, 0);
	if (n <= 0)
		return n < 0 ? n : -ENODEV;
	b->cpus = calloc((size_t)n, sizeof(*b->cpus));
	b->sampler = malloc((size_t)n * sizeof(*b->sampler));
	b->counters =
	    malloc((size_t)n * EVPROF_BPF_MAX_COUNTERS * sizeof(*b->counters));
	b->sample_links = calloc((size_t)n, sizeof(*b->sample_links));
	if (!b->cpus || !b->sampler || !b->counters || !b->sample_links)
		return -ENOMEM;
	b->nr_cpus = evprof_cpus_online(b->cpus, n);
	if (b->nr_cpus != n)
		return -EAGAIN; /* a CPU came or went meanwhile */
	for (int i = 0; i < n; i++)
		b->sampler[i] = -1;
	for (int i = 0; i < n * EVPROF_BPF_MAX_COUNTERS; i++)
		b->counters[i] = -1;
	err = evprof__recorder_map_pmus(r);
	if (!err)
		err = open_samplers(r, b);
	if (!err)
		err = open_counters(r, b);
	if (!err)
		err = load(r, b);
	if (!err)
		err = give_counters(r, b);
	if (!err)
		err = follow_targets(r, b);
	if (!err)
		err = open_side_band(r);
	if (!err)
		err = new_session(r);
	return err;
}

/*
 * Runs the baseline program on every CPU: the CPU's baseline (the first
 * time), its maps warmed. Returns whether it ran on every CPU.
 */
static bool run_baseline(struct evprof_bpf *b)
{
	int fd = bpf_program__fd(b->skel->progs.baseline);
	bool all = true;

	for (int i = 0; i < b->nr_cpus; i++) {
		LIBBPF_OPTS(bpf_test_run_opts, o,
			    .flags = BPF_F_TEST_RUN_ON_CPU,
			    .cpu = (uint32_t)b->cpus[i]);

		if (bpf_prog_test_run_opts(fd, &o))
			all = false;
	}
	return all;
}

int evprof__bpf_start(struct evprof_recorder *r)
{
	struct evprof_bpf *b = r->bpf;
	int err;

	b->switch_link = bpf_program__attach(b->skel->progs.on_switch);
	err = libbpf_get_error(b->switch_link);
	if (!err) {
		b->fork_link = bpf_program__attach(b->skel->progs.on_fork);
		err = libbpf_get_error(b->fork_link);
	}
	if (err) {
		pr_warn("cannot attach the BPF engine to the scheduler: %s\n",
			strerror((int)-err));
		return (int)err;
	}
	/* Every CPU's values at enable: nothing before its first event lost. */
	b->baselines = run_baseline(b);
	for (int i = 0; i < b->nr_cpus; i++) {
		/* Also enables the event. */
		b->sample_links[i] = bpf_program__attach_perf_event(
		    b->skel->progs.on_sample, b->sampler[i]);
		err = libbpf_get_error(b->sample_links[i]);
		if (err) {
			b->sample_links[i] = NULL;
			pr_warn("cannot attach the BPF engine to %s on CPU "
				"%d: %s\n",
				r->events[0].name, b->cpus[i],
				strerror((int)-err));
			return (int)err;
		}
	}
	return 0;
}

static void detach(struct evprof_bpf *b)
{
	for (int i = 0; b->sample_links && i < b->nr_cpus; i++) {
		bpf_link__destroy(b->sample_links[i]);
		b->sample_links[i] = NULL;
	}
	bpf_link__destroy(b->switch_link);
	bpf_link__destroy(b->fork_link);
	b->switch_link = b->fork_link = NULL;
}

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

/* Feeds one aggregate, its stacks from the stack map of its set. */
static int feed(struct evprof_recorder *r, int map,
		const struct evprof_bpf_key *k, uint64_t time, uint64_t samples,
		uint64_t cpu_ns, const __u64 *counts)
{
	uint64_t vals[EVPROF_BPF_MAX_COUNTERS];
	uint64_t chain[2 * (EVPROF_BPF_STACK_DEPTH + 1)];
	size_t n = add_stack(map, k->kstack, PERF_CONTEXT_KERNEL, chain, 0);
	struct evprof_session_aggr a = {
	    .time = time,
	    .pid = k->pid,
	    .tid = k->tid,
	    .ips = chain,
	    .samples = samples,
	    .cpu_ns = cpu_ns,
	    .has = (1ULL << (r->nr - 1)) - 1,
	    .counters = vals,
	};

	for (size_t i = 0; i < EVPROF_BPF_MAX_COUNTERS; i++)
		vals[i] = counts[i];
	a.nr = add_stack(map, k->ustack, PERF_CONTEXT_USER, chain, n);
	return evprof__session_aggregate(r->session, &a);
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
 * What threads counted after their last sample goes to that sample's
 * aggregate (one timeline row for both); threads never sampled get one of
 * their own, without samples.
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

static void read_stats(struct evprof_bpf *b, uint64_t *st)
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
static int wait_programs(struct evprof_bpf *b)
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
static int clear_map(int map, size_t ksz)
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

/* Feeds every entry of es, the stacks from set gen. */
/* Feeds set gen's entries, their times at most until. */
static int feed_all(struct evprof_recorder *r, uint32_t gen,
		    const struct entries *es, uint64_t until)
{
	int map = r->bpf->stack_fd[gen], err = 0;

	for (size_t i = 0; !err && i < es->n; i++) {
		uint64_t t = es->a[i].v.time;

		err = feed(r, map, &es->a[i].k, t < until ? t : until,
			   es->a[i].v.samples, es->a[i].v.cpu_ns,
			   es->a[i].v.counts);
	}
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
static void carry_stacks(struct evprof_bpf *b, uint32_t idle)
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

/*
 * Set 1, like set 0, made at the first window and put in the slots the
 * programs take it from; its maps warmed on every CPU as set 0's were.
 */
static int make_set1(struct evprof_bpf *b)
{
	struct bpf_map *aggr = b->skel->maps.aggr0;
	struct bpf_map *stacks = b->skel->maps.stacks0;
	int fa, fs, err = 0;
	uint32_t one = 1;

	fa = map_like(aggr, "aggr1", bpf_map__max_entries(aggr));
	fs = map_like(stacks, "stacks1", bpf_map__max_entries(stacks));
	if (fa < 0 || fs < 0)
		err = fa < 0 ? fa : fs;
	else if (bpf_map_update_elem(bpf_map__fd(b->skel->maps.aggrs), &one,
				     &fa, BPF_ANY) ||
		 bpf_map_update_elem(bpf_map__fd(b->skel->maps.stack_sets),
				     &one, &fs, BPF_ANY))
		err = -errno;
	if (err) {
		/* The programs never take set 1 before gen names it. */
		if (fa >= 0)
			close(fa);
		if (fs >= 0)
			close(fs);
		return err;
	}
	b->aggr_fd[1] = fa;
	b->stack_fd[1] = fs;
	run_baseline(b);
	return 0;
}

int evprof__bpf_window(struct evprof_recorder *r, uint64_t until)
{
	struct evprof_bpf *b = r->bpf;
	uint32_t idle = b->gen;
	struct entries es = {0};
	int err, e;

	if (b->aggr_fd[1] < 0) {
		err = make_set1(b);
		if (err) {
			pr_warn("cannot make the BPF engine's second set of "
				"maps: %s\n",
				strerror(-err));
			return err;
		}
	}
	/* The programs take the other set from their next run on. */
	b->gen ^= 1;
	__atomic_store_n(&b->skel->bss->gen, b->gen, __ATOMIC_RELEASE);
	err = wait_programs(b);
	if (err) {
		/* Back to the set not read: it stays whole for the next. */
		b->gen ^= 1;
		__atomic_store_n(&b->skel->bss->gen, b->gen, __ATOMIC_RELEASE);
		pr_warn("cannot wait for the BPF programs: %s\n",
			strerror(-err));
		return err;
	}
	/* Names, mappings and exits up to now, before the sums. */
	evprof_recorder__consume(r);
	carry_stacks(b, idle);
	err = read_aggregates(b, idle, &es);
	b->entries += es.n;
	if (!err)
		err = feed_all(r, idle, &es, until);
	EVPROF_VEC_FREE(&es);
	/* Cleared whatever happened: the set takes the window after next. */
	e = clear_map(b->aggr_fd[idle], sizeof(struct evprof_bpf_key));
	if (!err)
		err = e;
	e = clear_map(b->stack_fd[idle], sizeof(uint64_t));
	return err ? err : e;
}

/* Entries of the pid set: processes followed that had not ended. */
static uint64_t count_pids(struct evprof_bpf *b)
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

int evprof__bpf_stop(struct evprof_recorder *r)
{
	uint64_t st[EVPROF_BPF_STAT__COUNT];
	struct evprof_bpf *b = r->bpf;
	struct entries es = {0};
	char alive[64] = "";
	int err;

	detach(b);
	if (!r->system_wide)
		snprintf(alive, sizeof(alive),
			 "; %llu processes followed alive",
			 (unsigned long long)count_pids(b));
	/*
	 * A program may still run on another CPU until then; if the wait
	 * fails, reading now is all there is left to do.
	 */
	wait_programs(b);
	read_stats(b, st);
	err = read_aggregates(b, b->gen, &es);
	b->entries += es.n;
	if (!err)
		err = read_threads(b, &es, &b->slices);
	if (!err)
		err = feed_all(r, b->gen, &es, UINT64_MAX);
	EVPROF_VEC_FREE(&es);
	evprof__recorder_note(
	    r,
	    "engine bpf: %llu samples in %llu aggregates, %llu threads' "
	    "last slices; lost: %llu user and %llu kernel stacks (stack "
	    "map full, or no memory in interrupt context), %llu samples and "
	    "%llu slices (full maps), %llu processes not followed, %llu "
	    "failed reads, %llu nested samples; %llu deltas scaled, %llu of "
	    "counters that did not run; baselines %s%s",
	    (unsigned long long)st[EVPROF_BPF_STAT_SAMPLES],
	    (unsigned long long)b->entries, (unsigned long long)b->slices,
	    (unsigned long long)st[EVPROF_BPF_STAT_USTACK_LOST],
	    (unsigned long long)st[EVPROF_BPF_STAT_KSTACK_LOST],
	    (unsigned long long)st[EVPROF_BPF_STAT_AGGR_FULL],
	    (unsigned long long)st[EVPROF_BPF_STAT_THREAD_FULL],
	    (unsigned long long)st[EVPROF_BPF_STAT_PID_FULL],
	    (unsigned long long)st[EVPROF_BPF_STAT_READ_FAILED],
	    (unsigned long long)st[EVPROF_BPF_STAT_NESTED],
	    (unsigned long long)st[EVPROF_BPF_STAT_SCALED],
	    (unsigned long long)st[EVPROF_BPF_STAT_NOT_RUNNING],
	    b->baselines ? "at enable"
			 : "at each CPU's first event (what ran before "
			   "it is lost)",
	    alive);
	return err;
}

void evprof__bpf_close(struct evprof_bpf *b)
{
	if (!b)
		return;
	detach(b);
	for (int i = 0; b->sampler && i < b->nr_cpus; i++)
		if (b->sampler[i] >= 0)
			close(b->sampler[i]);
	for (int i = 0; b->counters && i < b->nr_cpus * EVPROF_BPF_MAX_COUNTERS;
	     i++)
		if (b->counters[i] >= 0)
			close(b->counters[i]);
	if (b->aggr_fd[1] >= 0)
		close(b->aggr_fd[1]);
	if (b->stack_fd[1] >= 0)
		close(b->stack_fd[1]);
	evprof_engine__destroy(b->skel);
	free(b->sample_links);
	free(b->sampler);
	free(b->counters);
	free(b->cpus);
	free(b);
}
