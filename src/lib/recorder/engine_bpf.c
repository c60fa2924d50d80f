// SPDX-License-Identifier: MIT
/*
 * The BPF engine's ops: see engine_bpf.h, and bpf/engine.bpf.c for what
 * runs in the kernel.
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

#include <evprof/cgroup.h>

#include "perf/perf.h"
#include "bpf/engine.h"
#include "engine_bpf.h"
#include "engine.skel.h"
#include "pmu.h"

#define CAP_BPF_     39 /* Linux 5.8; older headers lack it */
#define CAP_PERFMON_ 38 /* Linux 5.8 */

static struct evprof_bpf *bpf_of(struct evprof__engine *e)
{
	return (struct evprof_bpf *)e;
}

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

static bool bpf_available(char *why, size_t len)
{
	struct evprof_engine *skel;
	int err;

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

void evprof__bpf_attr(const struct evprof__engine_setup *s,
		      const struct evprof__pmu_map *map, size_t e, int cpu,
		      struct perf_event_attr *a)
{
	*a = s->events[e].attr; /* its own :u/:k kept */
	a->sample_type = 0;
	if (s->exclude_kernel)
		a->exclude_kernel = a->exclude_hv = 1;
	if (!e) {
		evprof__engine_sampler_rate(s, a);
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
		if (s->own >> e & 1) {
			/* At its period= or freq= term, or the default. */
			evprof__engine_member_period(s, &s->events[e], a);
			a->sample_type = PERF_SAMPLE_IP;
		} else {
			a->sample_period = 0; /* counting only */
			a->freq = 0;
		}
		a->disabled = 0;
		a->inherit = 0; /* an inherited event cannot go in the array */
		a->read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
				 PERF_FORMAT_TOTAL_TIME_RUNNING;
	}
	evprof__pmu_map_bind(map, cpu, a, 1);
}

static int open_sampler(struct evprof_bpf *b, int cpu)
{
	struct perf_event_attr a;

	evprof__bpf_attr(b->s, &b->pmu_map, 0, cpu, &a);
	return evprof__perf_open(&a, -1, cpu, -1, 0);
}

/* Counter k (the user's event k + 1) on cpu. */
static int open_counter(struct evprof_bpf *b, size_t k, int cpu)
{
	struct perf_event_attr a;

	evprof__bpf_attr(b->s, &b->pmu_map, k + 1, cpu, &a);
	return evprof__perf_open(&a, -1, cpu, -1, 0);
}

/* A sampler that cannot sample here becomes cpu-clock, as in ring mode. */
static int open_samplers(struct evprof_bpf *b)
{
	for (int i = 0; i < b->nr_cpus; i++) {
		int fd = open_sampler(b, b->cpus[i]);

		if (fd < 0 && i == 0 && evprof_open_unsupported(errno) &&
		    strcmp(b->s->events[0].name, "cpu-clock")) {
			evprof__note(b->s->notes,
				     "%s cannot sample (%s): "
				     "sampling cpu-clock",
				     b->s->events[0].name, strerror(errno));
			evprof_event_spec__parse(&b->s->events[0], "cpu-clock");
			fd = open_sampler(b, b->cpus[i]);
		}
		if (fd < 0) {
			int err = errno;

			pr_warn("cannot open %s on CPU %d: %s%s\n",
				b->s->events[0].name, b->cpus[i], strerror(err),
				cpu_msg(err));
			return -err;
		}
		b->sampler[i] = fd;
	}
	return 0;
}

/*
 * Counter k opened on cpu into *fd; one that cannot sample on its own
 * (EINVAL: a period the kernel refuses, or no sampling there) is opened
 * counting, its counts riding on the sampling event's, with a note.
 */
static int open_counter_or_ride(struct evprof_bpf *b, size_t k, int cpu)
{
	int fd = open_counter(b, k, cpu), err = errno;

	if (fd >= 0 || !(b->s->own >> (k + 1) & 1) ||
	    (err != EINVAL && !evprof_open_unsupported(err)))
		return fd;
	evprof__engine_ride(b->s, k + 1, strerror(err));
	return open_counter(b, k, cpu);
}

/* Drops counter k (event k + 1), as the ring engine drops an extra. */
static void drop_counter(struct evprof_bpf *b, size_t k, int err)
{
	evprof__note(b->s->notes, "%s cannot be counted (%s): dropped",
		     b->s->events[k + 1].name, strerror(err));
	evprof__engine_drop_event(b->s, k + 1);
}

/*
 * Opens every counter on every CPU; one that cannot be counted here (no
 * such event or PMU) is dropped with a note. Before the programs load:
 * they are told how many there are.
 */
static int open_counters(struct evprof_bpf *b)
{
	for (size_t k = 0; k + 1 < b->s->nr;) {
		int i, fd = -1, err = 0;

		for (i = 0; i < b->nr_cpus; i++) {
			fd = i ? open_counter(b, k, b->cpus[i])
			       : open_counter_or_ride(b, k, b->cpus[i]);
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
				b->s->events[k + 1].name, b->cpus[i],
				strerror(err), cpu_msg(err));
			return -err;
		}
		drop_counter(b, k, err);
	}
	return 0;
}

/*
 * Slot k on CPU c goes to the programs' array at c * MAX + k: counter k,
 * or the sampling event.
 */
static int give_counters(struct evprof_bpf *b)
{
	int map = bpf_map__fd(b->skel->maps.counters);

	for (int i = 0; i < b->nr_cpus; i++) {
		for (size_t k = 0; k < b->nr_slots; k++) {
			uint32_t idx =
			    (uint32_t)b->cpus[i] * EVPROF_BPF_MAX_COUNTERS +
			    (uint32_t)k;
			bool sampler = k + 1 == b->s->nr;
			int fd =
			    sampler
				? b->sampler[i]
				: b->counters[i * EVPROF_BPF_MAX_COUNTERS + k];

			if (bpf_map_update_elem(map, &idx, &fd, BPF_ANY)) {
				int err = errno;

				pr_warn("cannot give %s on CPU %d to BPF: %s\n",
					b->s->events[sampler ? 0 : k + 1].name,
					b->cpus[i], strerror(err));
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

/* The cgroups the programs keep to, by their directory fds. */
static int give_cgroups(struct evprof_bpf *b)
{
	int map = bpf_map__fd(b->skel->maps.cgroups);

	for (size_t i = 0; i < b->s->nr_cgroups; i++) {
		uint32_t k = (uint32_t)i, fd = (uint32_t)b->s->cgroup_fds[i];

		if (bpf_map_update_elem(map, &k, &fd, BPF_ANY)) {
			int err = -errno;

			pr_warn("cannot give the BPF engine cgroup fd %d: %s\n",
				b->s->cgroup_fds[i], strerror(-err));
			return err;
		}
	}
	if (b->s->nr_cgroups)
		evprof__note(b->s->notes,
			     "the BPF programs keep to %zu cgroup%s (a cgroup "
			     "array they test each task against): no perf "
			     "event fd per cgroup",
			     b->s->nr_cgroups,
			     b->s->nr_cgroups == 1 ? "" : "s");
	return 0;
}

/*
 * The slots counting context switches (engine.bpf.c's switch_slots): the
 * session's, of those the programs sum (the sampler's last, where it has
 * one), as the ring engine's.
 */
static uint32_t switch_slots(const struct evprof_bpf *b)
{
	return (uint32_t)(evprof__engine_switch_slots(b->s) &
			  ((1ULL << b->nr_slots) - 1));
}

static int load(struct evprof_bpf *b)
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
	/*
	 * The counters, then the sampling event's count when it counts no
	 * time (the session's sampler_counter, its last slot).
	 */
	b->nr_slots = b->s->nr - 1 + !evprof__event_is_time(&b->s->events[0]);
	s->rodata->nr_counters = (uint32_t)b->nr_slots;
	s->rodata->switch_slots = switch_slots(b);
	s->rodata->follow_all = b->s->system_wide;
	s->rodata->kernel_stacks = !b->s->exclude_kernel;
	s->rodata->ns_mode = nested_pid_ns(&dev, &ino);
	s->rodata->ns_dev = dev;
	s->rodata->ns_ino = ino;
	s->rodata->nr_cgroups = (uint32_t)b->s->nr_cgroups;
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
	if (!err)
		err = give_cgroups(b);
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
static int follow_targets(struct evprof_bpf *b)
{
	int map = bpf_map__fd(b->skel->rodata->ns_mode ? b->skel->maps.ns_pids
						       : b->skel->maps.pids);
	uint8_t one = 1;

	if (b->s->child > 0) {
		uint32_t pid = (uint32_t)b->s->child;

		if (bpf_map_update_elem(map, &pid, &one, BPF_ANY))
			return -errno;
	}
	for (size_t i = 0; i < b->s->nr_pids; i++) {
		uint32_t pid = (uint32_t)b->s->pids[i];

		if (bpf_map_update_elem(map, &pid, &one, BPF_ANY))
			return -errno;
	}
	return 0;
}

/*
 * Whether the perf_event controller is on cgroup v2, whose ids the
 * programs take: CGROUP records come from that controller's hierarchy,
 * and a v1 one's ids would name other cgroups.
 */
static bool perf_event_on_v2(void)
{
	struct evprof_cgroup_fs fs;

	return !evprof_cgroup_fs__find(&fs) && fs.version == 2;
}

/*
 * Side-band only: a dummy event per CPU with the records symbolization
 * needs (comm, mmap, fork, exit), in one ring per CPU, and where they
 * name the programs' ids a CGROUP record for each cgroup made while
 * recording (those made before are named from the mount at start, those
 * still unnamed by walking it again: engine_bpf_read.c).
 */
static int open_side_band(struct evprof_bpf *b)
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

	a.wakeup_watermark = (uint32_t)(b->s->ring_pages * 4096 / 4);
	a.cgroup =
	    evprof_probe(EVPROF_FEAT_SAMPLE_CGROUP)->yes && perf_event_on_v2();
	set = evprof_group_set__open(&a, 1, -1, &o);
	if (!set) {
		int err = errno;

		pr_warn("cannot open the side-band events: %s%s\n",
			strerror(err), cpu_msg(err));
		return -err;
	}
	b->side = set;
	b->side_band = a;
	return evprof__rings_map(&b->rings, set, b->s);
}

static int new_session(struct evprof_bpf *b)
{
	const char *counters[EVPROF_BPF_MAX_COUNTERS];
	struct evprof_session_opts so;

	evprof__engine_session_opts(b->s, counters, &so);
	so.per_cpu = true;
	so.max_stack = EVPROF_BPF_STACK_DEPTH; /* what bpf_get_stack() keeps */
	evprof_record_fmt__from_attr(&so.fmt, &b->side_band);
	b->e.session = evprof_session__new(&so);
	if (!b->e.session)
		return -errno;
	for (size_t i = 0; i < evprof_group_set__nr(b->side); i++) {
		struct evprof_group *g = evprof_group_set__group(b->side, i);
		int err =
		    evprof_session__set_id(b->e.session, evprof_group__id(g, 0),
					   EVPROF_SESSION_SAMPLER);

		if (err)
			return err;
	}
	return 0;
}

static int check_options(const struct evprof__engine_setup *s)
{
	const struct evprof__engine_caps *c = &evprof__engine_bpf.caps;

	if (s->nr - 1 > c->max_counters) {
		pr_warn("the BPF engine reads at most %zu counters\n",
			c->max_counters);
		return -E2BIG;
	}
	if ((s->dwarf_stack && !(c->unwinders & EVPROF__UNWIND_DWARF)) ||
	    (s->off_cpu && !c->off_cpu)) {
		pr_warn("the BPF engine takes frame-pointer stacks only, "
			"without off-CPU intervals\n");
		return -EOPNOTSUPP;
	}
	/*
	 * Its programs test the running task's cgroup v2 (a cgroup array
	 * holds only cgroup v2 directories): a v1 perf_event hierarchy has
	 * nothing the programs could compare.
	 */
	if (s->nr_cgroups && s->cgroup_version != 2) {
		pr_warn("the BPF engine filters by cgroup v2 only, and this "
			"host's perf_event controller is on a cgroup v1 "
			"hierarchy (%s): use --engine ring\n",
			s->cgroup_mount);
		return -EOPNOTSUPP;
	}
	if (s->nr_cgroups > EVPROF_BPF_MAX_CGROUPS) {
		pr_warn("the BPF engine filters by at most %d cgroups\n",
			EVPROF_BPF_MAX_CGROUPS);
		return -E2BIG;
	}
	if (geteuid() && !has_caps()) {
		pr_warn("the BPF engine needs root, or CAP_BPF and "
			"CAP_PERFMON\n");
		return -EPERM;
	}
	return 0;
}

/*
 * Counters sample on their own only where the programs can tell which
 * event fired: by its attach cookie (bpf_get_attach_cookie(), Linux
 * 5.15).
 */
static void check_cookies(struct evprof_bpf *b)
{
	if (!b->s->own ||
	    libbpf_probe_bpf_helper(BPF_PROG_TYPE_PERF_EVENT,
				    BPF_FUNC_get_attach_cookie, NULL) == 1)
		return;
	b->s->own = 0;
	evprof__note(b->s->notes,
		     "this kernel cannot tell the BPF engine which event "
		     "sampled (no bpf_get_attach_cookie(), Linux 5.15): each "
		     "counter's counts ride on %s's samples",
		     b->s->events[0].name);
}

/* Every CPU's sampler and counters, the programs, the side-band. */
static int open_all(struct evprof_bpf *b)
{
	int n = evprof_cpus_online(NULL, 0), err;

	if (n <= 0)
		return n < 0 ? n : -ENODEV;
	b->cpus = calloc((size_t)n, sizeof(*b->cpus));
	b->sampler = malloc((size_t)n * sizeof(*b->sampler));
	b->counters =
	    malloc((size_t)n * EVPROF_BPF_MAX_COUNTERS * sizeof(*b->counters));
	b->sample_links = calloc((size_t)n, sizeof(*b->sample_links));
	b->counter_links = calloc((size_t)n * EVPROF_BPF_MAX_COUNTERS,
				  sizeof(*b->counter_links));
	if (!b->cpus || !b->sampler || !b->counters || !b->sample_links ||
	    !b->counter_links)
		return -ENOMEM;
	b->nr_cpus = evprof_cpus_online(b->cpus, n);
	if (b->nr_cpus != n)
		return -EAGAIN; /* a CPU came or went meanwhile */
	for (int i = 0; i < n; i++)
		b->sampler[i] = -1;
	for (int i = 0; i < n * EVPROF_BPF_MAX_COUNTERS; i++)
		b->counters[i] = -1;
	check_cookies(b);
	err = evprof__recorder_map_pmus(&b->pmu_map);
	if (!err)
		err = open_samplers(b);
	if (!err)
		err = open_counters(b);
	if (!err)
		err = load(b);
	if (!err)
		err = give_counters(b);
	if (!err)
		err = follow_targets(b);
	if (!err)
		err = open_side_band(b);
	if (!err)
		err = new_session(b);
	return err;
}

static void bpf_close(struct evprof__engine *e);

static int bpf_open(struct evprof__engine_setup *s, struct evprof__engine **out)
{
	struct evprof_bpf *b;
	int err;

	s->per_cpu = true;
	s->defer = false;
	err = check_options(s);
	if (err)
		return err;
	b = calloc(1, sizeof(*b));
	if (!b)
		return -ENOMEM;
	b->e.ops = &evprof__engine_bpf;
	b->s = s;
	b->aggr_fd[1] = b->stack_fd[1] = -1;
	err = open_all(b);
	if (err) {
		bpf_close(&b->e);
		return err;
	}
	*out = &b->e;
	return 0;
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

/* Destroys the links of counter k's own samples. */
static void detach_counter(struct evprof_bpf *b, size_t k)
{
	for (int i = 0; i < b->nr_cpus; i++) {
		bpf_link__destroy(
		    b->counter_links[i * EVPROF_BPF_MAX_COUNTERS + k]);
		b->counter_links[i * EVPROF_BPF_MAX_COUNTERS + k] = NULL;
	}
}

/*
 * The program on every counter that samples on its own, its cookie k + 1
 * for slot k (the sampling event's is 0), then which slots wait for their
 * own samples, before the sampling event's samples start. A counter whose
 * attaching fails rides along, with a note.
 */
static void attach_counters(struct evprof_bpf *b)
{
	uint32_t own = 0;

	for (size_t k = 0; k + 1 < b->s->nr; k++) {
		LIBBPF_OPTS(bpf_perf_event_opts, o, .bpf_cookie = k + 1);
		long err = 0;

		if (!(b->s->own >> (k + 1) & 1))
			continue;
		for (int i = 0; !err && i < b->nr_cpus; i++) {
			size_t at = (size_t)i * EVPROF_BPF_MAX_COUNTERS + k;

			b->counter_links[at] =
			    bpf_program__attach_perf_event_opts(
				b->skel->progs.on_sample, b->counters[at], &o);
			err = libbpf_get_error(b->counter_links[at]);
			if (err)
				b->counter_links[at] = NULL;
		}
		if (!err) {
			own |= 1u << k;
			continue;
		}
		detach_counter(b, k);
		b->s->own &= ~(1ULL << (k + 1));
		evprof__note(b->s->notes,
			     "the BPF engine cannot attach to %s's samples "
			     "(%s): its counts ride on %s's samples",
			     b->s->events[k + 1].name, strerror((int)-err),
			     b->s->events[0].name);
	}
	__atomic_store_n(&b->skel->bss->own_slots, own, __ATOMIC_RELEASE);
}

static int bpf_start(struct evprof__engine *e)
{
	struct evprof_bpf *b = bpf_of(e);
	int err = evprof_group_set__enable(b->side);

	if (err) {
		pr_warn("cannot enable the events: %s\n", strerror(-err));
		return err;
	}
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
	attach_counters(b);
	for (int i = 0; i < b->nr_cpus; i++) {
		/* Also enables the event. */
		b->sample_links[i] = bpf_program__attach_perf_event(
		    b->skel->progs.on_sample, b->sampler[i]);
		err = libbpf_get_error(b->sample_links[i]);
		if (err) {
			b->sample_links[i] = NULL;
			pr_warn("cannot attach the BPF engine to %s on CPU "
				"%d: %s\n",
				b->s->events[0].name, b->cpus[i],
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
	for (size_t k = 0; b->counter_links && k + 1 < b->s->nr; k++)
		detach_counter(b, k);
	bpf_link__destroy(b->switch_link);
	bpf_link__destroy(b->fork_link);
	b->switch_link = b->fork_link = NULL;
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

static int bpf_window(struct evprof__engine *eng, uint64_t until)
{
	struct evprof_bpf *b = bpf_of(eng);
	uint32_t idle = b->gen;
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
	err = evprof__bpf_wait_programs(b);
	if (err) {
		/* Back to the set not read: it stays whole for the next. */
		b->gen ^= 1;
		__atomic_store_n(&b->skel->bss->gen, b->gen, __ATOMIC_RELEASE);
		pr_warn("cannot wait for the BPF programs: %s\n",
			strerror(-err));
		return err;
	}
	/* Names, mappings and exits up to now, before the sums. */
	evprof__rings_feed(&b->rings, b->e.session);
	evprof__bpf_carry_stacks(b, idle);
	err = evprof__bpf_feed_set(b, idle, false, until);
	/* Cleared whatever happened: the set takes the window after next. */
	e = evprof__bpf_clear_map(b->aggr_fd[idle],
				  sizeof(struct evprof_bpf_key));
	if (!err)
		err = e;
	e = evprof__bpf_clear_map(b->stack_fd[idle], sizeof(uint64_t));
	return err ? err : e;
}

static int bpf_stop(struct evprof__engine *e)
{
	uint64_t st[EVPROF_BPF_STAT__COUNT];
	struct evprof_bpf *b = bpf_of(e);
	char alive[64] = "";
	int err, side;

	detach(b);
	if (!b->s->system_wide)
		snprintf(alive, sizeof(alive),
			 "; %llu processes followed alive",
			 (unsigned long long)evprof__bpf_count_pids(b));
	/*
	 * A program may still run on another CPU until then; if the wait
	 * fails, reading now is all there is left to do.
	 */
	evprof__bpf_wait_programs(b);
	evprof__bpf_read_stats(b, st);
	err = evprof__bpf_feed_set(b, b->gen, true, UINT64_MAX);
	evprof__note(
	    b->s->notes,
	    "engine bpf: %llu samples (+%llu of counters on their own) in "
	    "%llu aggregates, %llu threads' "
	    "last slices; lost: %llu user and %llu kernel stacks (stack "
	    "map full, or no memory in interrupt context), %llu samples and "
	    "%llu slices (full maps), %llu processes not followed, %llu "
	    "failed reads, %llu nested samples; %llu deltas scaled, %llu of "
	    "counters that did not run; baselines %s%s",
	    (unsigned long long)st[EVPROF_BPF_STAT_SAMPLES],
	    (unsigned long long)st[EVPROF_BPF_STAT_OWN_SAMPLES],
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
	side = evprof_group_set__disable(b->side);
	return err ? err : side;
}

static void bpf_close(struct evprof__engine *e)
{
	struct evprof_bpf *b = bpf_of(e);

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
	evprof_session__free(b->e.session);
	evprof__rings_close(&b->rings);
	evprof_group_set__free(b->side);
	evprof__pmu_map_fini(&b->pmu_map);
	evprof__hashmap_free(b->cg_unnamed);
	free(b->sample_links);
	free(b->counter_links);
	free(b->sampler);
	free(b->counters);
	free(b->cpus);
	free(b);
}

static size_t bpf_fds(const struct evprof__engine *e, int *fds, size_t max)
{
	return evprof__rings_fds(&((const struct evprof_bpf *)e)->rings, fds,
				 max);
}

/* Names, mappings and exits: the sums come at windows and the stop. */
static int bpf_poll(struct evprof__engine *e)
{
	return evprof__rings_feed(&bpf_of(e)->rings, e->session);
}

static void bpf_stats(const struct evprof__engine *e,
		      struct evprof_recorder_stats *st)
{
	evprof__rings_stats(&((const struct evprof_bpf *)e)->rings, st);
}

/* Exits are followed in the kernel: no tracepoint to find. */
static void bpf_prepare(struct evprof__engine_setup *s)
{
	(void)s;
}

/* Each counter opens on its own: the kernel multiplexes them. */
static int bpf_check(struct evprof__engine_setup *s)
{
	(void)s;
	return 0;
}

/* The hybrid split of the ring engine's groups has no equal here. */
static void bpf_notes(struct evprof__engine *e, struct evprof_profile *p)
{
	(void)e;
	(void)p;
}

const struct evprof__engine_ops evprof__engine_bpf = {
    .caps =
	{
	    .unwinders = EVPROF__UNWIND_FP,
	    .counter_samples = true,
	    .cgroup_v2_ids = true, /* bpf_get_current_cgroup_id() */
	    /* The last slot is the sampling event's. */
	    .max_counters = EVPROF_BPF_MAX_COUNTERS - 1,
	},
    .available = bpf_available,
    .prepare = bpf_prepare,
    .check = bpf_check,
    .open = bpf_open,
    .fds = bpf_fds,
    .start = bpf_start,
    .poll = bpf_poll,
    .window = bpf_window,
    .stop = bpf_stop,
    .notes = bpf_notes,
    .stats = bpf_stats,
    .close = bpf_close,
};
