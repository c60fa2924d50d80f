// SPDX-License-Identifier: MIT
/*
 * evprof stat: counting mode, like perf stat.
 *
 * Each group of the event list is opened once per "instance": the launched
 * command (pid, cpu -1, inherit), every thread of -p processes, or every
 * online CPU with -a. Events that this machine lacks are dropped from their
 * group and shown as <not supported>; the rest of the group still counts.
 * On a hybrid machine (several core PMUs) a group with generic hardware
 * events is opened once per core PMU, as perf does: each event's count is
 * the sum of its per-PMU counts, each scaled on its own, and the split is
 * shown under it. With -a --cgroup PATH each CPU instance is opened once
 * per cgroup (PERF_FLAG_PID_CGROUP: the cgroup's directory fd as pid), and
 * each cgroup's count is printed on its own lines, as perf stat -G does.
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <evprof/evprof.h>

#include "cli.h"

#define DEFAULT_EVENTS                                                         \
	"task-clock,context-switches,cpu-migrations,page-faults,cycles,"       \
	"instructions,branches,branch-misses"

const char cli_stat_usage[] =
    "usage: evprof stat [-e LIST] [-I MS] [--per-thread]\n"
    "                   [-p PID[,PID...] | -a [-G PATH]...] [--] [CMD ARGS...]\n"
    "\n"
    "  -e, --events LIST  events to count, comma separated; {a,b} is a group\n"
    "                     (default: " DEFAULT_EVENTS ")\n"
    "  -I, --interval MS  print counts every MS milliseconds\n"
    "      --per-thread   one line per thread (with -p)\n"
    "  -p, --pid PIDS     count existing processes, all their threads;\n"
    "                     PID@HOSTPID: PID in HOSTPID's pid namespace\n"
    "  -a, --all-cpus     count system-wide, on every online CPU\n"
    "  -G, --cgroup PATH  with -a, only the tasks of that cgroup and its\n"
    "                     descendants, counted and printed per cgroup (of the\n"
    "                     perf_event hierarchy: a path under its mount or from\n"
    "                     its root); repeatable\n";

struct instance {
	pid_t pid; /* -1 for a CPU-wide instance, or the cgroup's fd */
	int cpu;   /* -1 for a task instance */
	long cg;   /* the cgroup it counts (st->cgs), -1 for none */
	char label[48];
};

struct counts {
	uint64_t raw, ena, run;
};

struct stat_event {
	const struct evprof_event_spec *spec;
	bool supported;
	bool split; /* opened once per core PMU */
	int err;    /* open errno when not supported */
	/* over instances (per-PMU counts summed); prev for -I deltas */
	struct counts total, prev;
};

/* The core PMUs a hybrid machine opens generic events on, at most. */
#define MAX_PMUS 4

struct stat_group {
	size_t range;		    /* the list's group it opens */
	size_t slot;		    /* its core PMU, 0 when not split */
	bool planned;		    /* members chosen: it opened once */
	size_t nr;		    /* members opened */
	size_t *member;		    /* event index of each opened member */
	struct evprof_group **inst; /* one per instance; NULL if it vanished */
};

/* Every option of stat; defaults in cmd_stat. */
struct stat_options {
	const char *events;
	const char *pids; /* -p as given */
	long interval_ms; /* 0: no intervals */
	bool per_thread, system_wide;
	struct cli_cgroups cg; /* -G as given */
};

struct stat {
	struct stat_options o;
	struct evprof_event_list *list;
	struct stat_event *ev;
	struct stat_group *grp;
	size_t nr_grp;
	/* Core PMUs generic events open on: nslot > 1 on a hybrid machine. */
	struct evprof_core_pmu pmus[MAX_PMUS];
	int *cpus[MAX_PMUS]; /* each one's CPUs, ncpus[k] < 0: every CPU */
	int ncpus[MAX_PMUS];
	size_t nslot;
	struct counts *slots; /* [event * nslot + slot], from read_totals() */
	struct instance *inst;
	size_t ninst;
	bool launched;
	bool user_only; /* kernel counting refused: everything :u */
	struct evprof_launch *launch;
	pid_t child;
	pid_t *pids; /* -p's processes */
	size_t nr_pids;
	/* -G's cgroups: each one's directory fd, its previous interval. */
	struct evprof_cgroup *cgs;
	int cg_fd[CLI_CGROUPS_MAX];
	size_t nr_cgs;
	struct counts *cg_prev; /* [cgroup * events + event] */
	char what[512];		/* header text */
};

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void report_open_error(const struct evprof_event_spec *spec, int err)
{
	char advice[512];

	cli_err("cannot open %s: %s", spec->name,
		evprof_open_advice(err, spec->name, advice, sizeof(advice)));
}

/*
 * Whether event i belongs to the copy of its group on slot: every copy
 * has the generic events; other events go with their own core PMU's copy,
 * or the first.
 */
static bool in_slot(const struct stat *st, const struct stat_group *g, size_t i)
{
	const struct perf_event_attr *a = &st->ev[i].spec->attr;
	uint32_t type = a->type;

	if (st->ev[i].split)
		return true;
	if (type == PERF_TYPE_HARDWARE || type == PERF_TYPE_HW_CACHE)
		type = (uint32_t)(a->config >> 32);
	for (size_t k = 0; k < st->nslot; k++)
		if (st->pmus[k].type == type)
			return g->slot == k;
	return g->slot == 0;
}

/* Whether the core PMU of slot counts on cpu (-1: a task, anywhere). */
static bool slot_has_cpu(const struct stat *st, size_t slot, int cpu)
{
	if (cpu < 0 || st->nslot == 1 || st->ncpus[slot] < 0)
		return true;
	for (int i = 0; i < st->ncpus[slot]; i++)
		if (st->cpus[slot][i] == cpu)
			return true;
	return false;
}

/*
 * Opens group gi on instance ii. The first instance it opens on decides
 * which members are supported; later instances open the same members. A
 * copy for one core PMU of a hybrid machine opens on that PMU's CPUs only.
 * Returns 0, 1 when the instance's thread vanished or the CPU is not the
 * PMU's (skipped), or -1 after an error message.
 */
static int open_group(struct stat *st, size_t gi, size_t ii)
{
	struct stat_group *g = &st->grp[gi];
	const struct evprof_event_group_range *r = &st->list->groups[g->range];
	const struct instance *in = &st->inst[ii];
	struct perf_event_attr attrs[EVPROF_SNAPSHOT_MAX];

	if (!slot_has_cpu(st, g->slot, in->cpu))
		return 1;
	for (;;) {
		int failed = -1;
		struct evprof_group_opts opts = {
		    .sz = sizeof(opts),
		    .failed_member = &failed,
		    .cgroup = in->cg >= 0,
		};
		size_t n = 0;

		if (!g->planned) {
			g->nr = 0;
			for (size_t i = r->first; i < r->first + r->nr; i++)
				if (st->ev[i].supported && in_slot(st, g, i))
					g->member[g->nr++] = i;
		}
		if (g->nr == 0)
			return 0;
		for (size_t m = 0; m < g->nr; m++) {
			struct perf_event_attr *a = &attrs[n++];

			*a = st->ev[g->member[m]].spec->attr;
			if (st->ev[g->member[m]].split) {
				struct evprof_event_spec on;

				evprof_event_spec__on_pmu(
				    &on, st->ev[g->member[m]].spec,
				    &st->pmus[g->slot]);
				a->config = on.attr.config;
			}
			if (st->user_only) {
				a->exclude_kernel = 1;
				a->exclude_hv = 1;
			}
			a->inherit = in->cpu < 0;
			if (m == 0 && st->launched && in->cpu < 0) {
				/* Count from the exec, not from the fork. */
				a->disabled = 1;
				a->enable_on_exec = 1;
			} else if (m == 0 && st->launched) {
				a->disabled = 1; /* enabled at release */
			}
		}
		g->inst[ii] =
		    evprof_group__open(attrs, n, in->pid, in->cpu, &opts);
		if (g->inst[ii]) {
			g->planned = true;
			return 0;
		}
		if (errno == ESRCH && !st->launched && in->cpu < 0)
			return 1;
		if (failed < 0 || failed >= (int)n)
			failed = 0;
		if ((errno == EACCES || errno == EPERM) && !st->user_only &&
		    !st->o.system_wide) {
			/* As record does: what paranoid 2 still allows. */
			char advice[512];

			cli_err("kernel counting is not allowed (%s): counting "
				"user space only (:u)",
				evprof_open_advice(
				    errno, st->ev[g->member[0]].spec->name,
				    advice, sizeof(advice)));
			st->user_only = true;
			continue;
		}
		if (!g->planned && evprof_open_unsupported(errno)) {
			struct stat_event *e = &st->ev[g->member[failed]];

			e->supported = false;
			e->err = errno;
			continue;
		}
		report_open_error(st->ev[g->member[failed]].spec, errno);
		return -1;
	}
}

/*
 * The groups to open: one per group of the list, or on a hybrid machine
 * one per core PMU for a group with generic hardware events. Returns 0 or
 * -ENOMEM.
 */
static int plan_groups(struct stat *st)
{
	size_t nev = st->list->nr_events;
	int n = evprof_core_pmus(st->pmus, MAX_PMUS);

	st->nslot = n > 1 ? (n < MAX_PMUS ? (size_t)n : MAX_PMUS) : 1;
	for (size_t k = 0; k < st->nslot && n > 1; k++) {
		int c = evprof_core_pmu__cpus(&st->pmus[k], NULL, 0), got;

		st->ncpus[k] = -1;
		if (c <= 0)
			continue;
		st->cpus[k] = calloc((size_t)c, sizeof(int));
		if (!st->cpus[k])
			return -ENOMEM;
		/* A list grown between the two reads is cut to the first. */
		got = evprof_core_pmu__cpus(&st->pmus[k], st->cpus[k], c);
		st->ncpus[k] = got < 0 ? -1 : got < c ? got : c;
	}
	st->ev = calloc(nev, sizeof(*st->ev));
	st->grp = calloc(st->list->nr_groups * st->nslot, sizeof(*st->grp));
	st->slots = calloc(nev * st->nslot, sizeof(*st->slots));
	if (!st->ev || !st->grp || !st->slots)
		return -ENOMEM;
	for (size_t i = 0; i < nev; i++) {
		st->ev[i].spec = &st->list->events[i];
		st->ev[i].supported = true;
		st->ev[i].split = st->nslot > 1 &&
				  evprof_event_spec__is_generic(st->ev[i].spec);
	}
	for (size_t gi = 0; gi < st->list->nr_groups; gi++) {
		const struct evprof_event_group_range *r =
		    &st->list->groups[gi];
		size_t copies = 1;

		for (size_t i = r->first; i < r->first + r->nr; i++)
			if (st->ev[i].split)
				copies = st->nslot;
		for (size_t k = 0; k < copies; k++) {
			struct stat_group *g = &st->grp[st->nr_grp++];

			g->range = gi;
			g->slot = k;
			g->member = calloc(r->nr, sizeof(size_t));
			g->inst = calloc(st->ninst, sizeof(void *));
			if (!g->member || !g->inst)
				return -ENOMEM;
		}
	}
	return 0;
}

static void close_all(struct stat *st)
{
	for (size_t gi = 0; st->grp && gi < st->nr_grp; gi++) {
		for (size_t ii = 0; ii < st->ninst; ii++)
			evprof_group__free(st->grp[gi].inst[ii]);
		free(st->grp[gi].inst);
		free(st->grp[gi].member);
	}
	free(st->grp);
	free(st->slots);
	for (size_t k = 0; k < MAX_PMUS; k++)
		free(st->cpus[k]);
	free(st->ev);
	free(st->inst);
	for (size_t k = 0; k < st->nr_cgs; k++)
		close(st->cg_fd[k]);
	free(st->cgs);
	free(st->cg_prev);
	evprof_event_list__free(st->list);
}

static int add_instance(struct stat *st, pid_t pid, int cpu, const char *label,
			long cg)
{
	struct instance *in = realloc(st->inst, (st->ninst + 1) * sizeof(*in));

	if (!in)
		return -ENOMEM;
	st->inst = in;
	in += st->ninst++;
	in->pid = pid;
	in->cpu = cpu;
	in->cg = cg;
	snprintf(in->label, sizeof(in->label), "%s", label);
	return 0;
}

static void thread_label(char *buf, size_t len, pid_t pid, pid_t tid)
{
	char path[64], comm[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/task/%d/comm", pid, tid);
	f = fopen(path, "re");
	if (f) {
		if (fgets(comm, sizeof(comm), f))
			comm[strcspn(comm, "\n")] = '\0';
		fclose(f);
	}
	snprintf(buf, len, "%s-%d", comm[0] ? comm : "?", tid);
}

/* One instance per thread of each process. */
static int add_pid_instances(struct stat *st, const pid_t *pids, size_t nr_pids)
{
	for (size_t p = 0; p < nr_pids; p++) {
		int *tids = NULL;
		int n = evprof_proc__read_tids(pids[p], &tids), err = 0;

		if (n < 0) {
			cli_err("no process %d: %s", pids[p], strerror(-n));
			return n;
		}
		for (int i = 0; i < n && !err; i++) {
			char label[48];

			thread_label(label, sizeof(label), pids[p], tids[i]);
			err = add_instance(st, tids[i], -1, label, -1);
		}
		free(tids);
		if (err)
			return err;
	}
	return 0;
}

/* One instance per online CPU: of cgroup cg (its fd as pid), or of all. */
static int add_cpu_instances(struct stat *st, long cg)
{
	int n = evprof_cpus_online(NULL, 0), got, err = 0;
	int *cpus;

	if (n <= 0) {
		err = n < 0 ? n : -ENODEV;
		cli_err("cannot list online CPUs: %s", evprof_strerror(err));
		return err;
	}
	cpus = calloc((size_t)n, sizeof(*cpus));
	if (!cpus)
		return -ENOMEM;
	got = evprof_cpus_online(cpus, n);
	if (got < 0)
		cli_err("cannot list online CPUs: %s", evprof_strerror(got));
	/* A CPU come online since the count is left out, as a set does. */
	for (int i = 0; i < n && i < got && !err; i++) {
		char label[32];

		snprintf(label, sizeof(label), "CPU%d", cpus[i]);
		if (add_instance(st, cg < 0 ? -1 : st->cg_fd[cg], cpus[i],
				 label, cg))
			err = -ENOMEM;
	}
	free(cpus);
	return got < 0 ? got : err;
}

/* Reads instance ii of every group, adding into s[event * nslot + slot]. */
static void read_instance(struct stat *st, size_t ii, struct counts *s)
{
	struct evprof_snapshot snap;

	for (size_t gi = 0; gi < st->nr_grp; gi++) {
		struct stat_group *g = &st->grp[gi];
		struct evprof_group *grp = g->inst[ii];

		if (!grp || evprof_group__read(grp, 0, &snap) < 0)
			continue;
		for (size_t m = 0; m < g->nr; m++) {
			const struct evprof_counter_value *v =
			    evprof_snapshot__find(&snap,
						  evprof_group__id(grp, m));
			struct counts *t =
			    &s[g->member[m] * st->nslot + g->slot];

			if (!v)
				continue;
			t->raw += v->raw;
			t->ena += snap.time_enabled;
			t->run += snap.time_running;
		}
	}
}

/*
 * c[i] from event i's per-PMU counts s: one as it is; several summed, each
 * scaled on its own, as running all the time (or never, when none ran).
 */
static void combine(const struct stat *st, const struct counts *s,
		    struct counts *c)
{
	for (size_t i = 0; i < st->list->nr_events; i++) {
		const struct counts *e = &s[i * st->nslot];
		uint64_t v;

		if (st->nslot == 1) {
			c[i] = e[0];
			continue;
		}
		memset(&c[i], 0, sizeof(c[i]));
		for (size_t k = 0; k < st->nslot; k++) {
			c[i].ena += e[k].ena;
			if (evprof_scale(e[k].raw, e[k].ena, e[k].run, &v) < 0)
				continue;
			c[i].raw += v;
			c[i].run = 1;
		}
		c[i].run = c[i].run ? c[i].ena : 0;
	}
}

/* Reads the instances of cgroup cg (-1: every one) into st->slots and c. */
static void read_sum(struct stat *st, long cg, struct counts *c)
{
	memset(st->slots, 0,
	       st->list->nr_events * st->nslot * sizeof(*st->slots));
	for (size_t ii = 0; ii < st->ninst; ii++)
		if (cg < 0 || st->inst[ii].cg == cg)
			read_instance(st, ii, st->slots);
	combine(st, st->slots, c);
}

/* Reads every instance into st->slots and the events' totals. */
static void read_totals(struct stat *st)
{
	size_t n = st->list->nr_events;
	struct counts *c = calloc(n, sizeof(*c));

	if (!c)
		return;
	read_sum(st, -1, c);
	for (size_t i = 0; i < n; i++)
		st->ev[i].total = c[i];
	free(c);
}

/* Event i's count on each core PMU, under its summed line. */
static void print_split(const struct stat *st, size_t i, const char *prefix)
{
	const struct counts *e = &st->slots[i * st->nslot];
	char name[200], num[32], pct[32] = "";
	uint64_t v;

	if (!st->ev[i].split || !st->ev[i].supported)
		return;
	for (size_t k = 0; k < st->nslot; k++) {
		snprintf(name, sizeof(name), "%s/%s/", st->pmus[k].name,
			 st->ev[i].spec->name);
		if (evprof_scale(e[k].raw, e[k].ena, e[k].run, &v) < 0) {
			printf("%s%18s        %s\n", prefix, "<not counted>",
			       name);
			continue;
		}
		snprintf(num, sizeof(num), "%18" PRIu64, v);
		if (e[k].run < e[k].ena)
			snprintf(pct, sizeof(pct), "  (%.2f%%)",
				 100.0 * (double)e[k].run / (double)e[k].ena);
		printf("%s%s        %s%s\n", prefix, num, name, pct);
	}
}

static bool is_event(const struct evprof_event_spec *s, uint32_t type,
		     uint64_t config)
{
	return s->attr.type == type && s->attr.config == config;
}

static bool is_clock(const struct evprof_event_spec *s)
{
	return is_event(s, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK) ||
	       is_event(s, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK);
}

/* Scaled value of event i in c; false when it was not counted. */
static bool value_of(const struct stat *st, const struct counts *c, size_t i,
		     double *out)
{
	uint64_t v;

	if (!st->ev[i].supported ||
	    evprof_scale(c[i].raw, c[i].ena, c[i].run, &v) < 0)
		return false;
	*out = (double)v;
	return true;
}

/* Index of the first supported event of (type, config), or -1. */
static long find_event(const struct stat *st, uint32_t type, uint64_t config)
{
	for (size_t i = 0; i < st->list->nr_events; i++)
		if (st->ev[i].supported &&
		    is_event(st->ev[i].spec, type, config))
			return (long)i;
	return -1;
}

static long find_clock(const struct stat *st)
{
	long i = find_event(st, PERF_TYPE_SOFTWARE, PERF_COUNT_SW_TASK_CLOCK);

	return i >= 0 ? i
		      : find_event(st, PERF_TYPE_SOFTWARE,
				   PERF_COUNT_SW_CPU_CLOCK);
}

#define CACHE_CFG(c, op, res) ((c) | ((op) << 8) | ((res) << 16))

/* Derived ratio for event i, printed after '#'; empty when none applies. */
static void ratio(const struct stat *st, const struct counts *c, size_t i,
		  double wall_ns, char *buf, size_t len)
{
	const struct perf_event_attr *a = &st->ev[i].spec->attr;
	static const struct {
		uint32_t type;
		uint64_t num, den;
		const char *what;
	} pct[] = {
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES,
	     PERF_COUNT_HW_BRANCH_INSTRUCTIONS, "of all branches"},
	    {PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES,
	     PERF_COUNT_HW_CACHE_REFERENCES, "of all cache refs"},
	    {PERF_TYPE_HW_CACHE,
	     CACHE_CFG(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
		       PERF_COUNT_HW_CACHE_RESULT_MISS),
	     CACHE_CFG(PERF_COUNT_HW_CACHE_L1D, PERF_COUNT_HW_CACHE_OP_READ,
		       PERF_COUNT_HW_CACHE_RESULT_ACCESS),
	     "of all L1-dcache accesses"},
	    {PERF_TYPE_HW_CACHE,
	     CACHE_CFG(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
		       PERF_COUNT_HW_CACHE_RESULT_MISS),
	     CACHE_CFG(PERF_COUNT_HW_CACHE_LL, PERF_COUNT_HW_CACHE_OP_READ,
		       PERF_COUNT_HW_CACHE_RESULT_ACCESS),
	     "of all LL-cache accesses"},
	    {PERF_TYPE_HW_CACHE,
	     CACHE_CFG(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
		       PERF_COUNT_HW_CACHE_RESULT_MISS),
	     CACHE_CFG(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ,
		       PERF_COUNT_HW_CACHE_RESULT_ACCESS),
	     "of all dTLB cache accesses"},
	};
	long clk = find_clock(st), j;
	double v, w, ms;

	buf[0] = '\0';
	if (!value_of(st, c, i, &v))
		return;
	if (is_clock(st->ev[i].spec)) {
		if (wall_ns > 0)
			snprintf(buf, len, "%8.3f CPUs utilized", v / wall_ns);
		return;
	}
	if (is_event(st->ev[i].spec, PERF_TYPE_HARDWARE,
		     PERF_COUNT_HW_INSTRUCTIONS)) {
		j = find_event(st, PERF_TYPE_HARDWARE,
			       PERF_COUNT_HW_CPU_CYCLES);
		if (j >= 0 && value_of(st, c, (size_t)j, &w) && w > 0)
			snprintf(buf, len, "%8.2f insn per cycle", v / w);
		return;
	}
	for (size_t k = 0; k < sizeof(pct) / sizeof(pct[0]); k++) {
		if (a->type != pct[k].type || a->config != pct[k].num)
			continue;
		j = find_event(st, pct[k].type, pct[k].den);
		if (j >= 0 && value_of(st, c, (size_t)j, &w) && w > 0)
			snprintf(buf, len, "%7.2f%% %s", 100.0 * v / w,
				 pct[k].what);
		return;
	}
	/* Anything else: a rate per second of CPU time, as perf shows. */
	if (clk < 0 || !value_of(st, c, (size_t)clk, &ms) || ms <= 0)
		return;
	if (is_event(st->ev[i].spec, PERF_TYPE_HARDWARE,
		     PERF_COUNT_HW_CPU_CYCLES))
		snprintf(buf, len, "%8.3f GHz", v / ms);
	else
		snprintf(buf, len, "%8.3f K/sec", v / ms * 1e6);
}

/*
 * Prints event i of c. An interval in which a counter that ran before did
 * not run shows 0, not <not counted>: it exists, it just had nothing to do.
 */
static void print_event(const struct stat *st, const struct counts *c, size_t i,
			double wall_ns, const char *prefix, const char *cgroup)
{
	const struct stat_event *e = &st->ev[i];
	char num[64], rat[96] = "", pct[32] = "", name[PATH_MAX + 200];
	uint64_t v;

	/* perf's way of saying only user space was counted. */
	snprintf(name, sizeof(name), "%s%s", e->spec->name,
		 st->user_only && !strchr(e->spec->name, ':') ? ":u" : "");
	/* The cgroup after the event, as perf stat -G prints it. */
	if (cgroup) {
		size_t len = strlen(name);

		snprintf(name + len, sizeof(name) - len, "%*s%s",
			 len < 24 ? (int)(24 - len) : 1, "", cgroup);
	}

	if (!e->supported) {
		printf("%s%18s      %s\n", prefix, "<not supported>", name);
		return;
	}
	if (evprof_scale(c[i].raw, c[i].ena, c[i].run, &v) < 0) {
		if (e->total.run == 0 || c[i].raw) {
			printf("%s%18s      %s\n", prefix, "<not counted>",
			       name);
			return;
		}
		v = 0;
	}
	if (is_clock(e->spec))
		snprintf(num, sizeof(num), "%13.2f msec", (double)v / 1e6);
	else
		snprintf(num, sizeof(num), "%18" PRIu64, v);
	ratio(st, c, i, wall_ns, rat, sizeof(rat));
	if (c[i].run < c[i].ena)
		snprintf(pct, sizeof(pct), "  (%.2f%%)",
			 100.0 * (double)c[i].run / (double)c[i].ena);
	printf("%s%s      %-24s%s%s%s%s\n", prefix, num, name,
	       cgroup && rat[0] ? "  " : "", rat[0] ? "#" : "", rat, pct);
}

static void print_interval(struct stat *st, double t_s)
{
	size_t n = st->list->nr_events;
	struct counts *d = calloc(n, sizeof(*d));
	char prefix[32];

	if (!d)
		return;
	read_totals(st);
	for (size_t i = 0; i < n; i++) {
		d[i].raw = st->ev[i].total.raw - st->ev[i].prev.raw;
		d[i].ena = st->ev[i].total.ena - st->ev[i].prev.ena;
		d[i].run = st->ev[i].total.run - st->ev[i].prev.run;
		st->ev[i].prev = st->ev[i].total;
	}
	snprintf(prefix, sizeof(prefix), "%14.6f ", t_s);
	for (size_t k = 0; k < st->nr_cgs; k++) {
		struct counts *prev = &st->cg_prev[k * n];

		/* Each cgroup's delta: its own sum less its previous one. */
		read_sum(st, (long)k, d);
		for (size_t i = 0; i < n; i++) {
			struct counts now = d[i];

			d[i].raw -= prev[i].raw;
			d[i].ena -= prev[i].ena;
			d[i].run -= prev[i].run;
			prev[i] = now;
		}
		for (size_t i = 0; i < n; i++)
			print_event(st, d, i, 0, prefix, st->cgs[k].name);
	}
	for (size_t i = 0; !st->nr_cgs && i < n; i++)
		print_event(st, d, i, 0, prefix, NULL);
	fflush(stdout);
	free(d);
}

static void print_final(struct stat *st, double wall_ns,
			const struct rusage *ru)
{
	size_t n = st->list->nr_events;

	printf("\n Performance counter stats for %s:\n\n", st->what);
	if (st->o.per_thread) {
		struct counts *c = calloc(n, sizeof(*c));

		for (size_t ii = 0; c && ii < st->ninst; ii++) {
			char prefix[64];

			memset(st->slots, 0,
			       n * st->nslot * sizeof(*st->slots));
			read_instance(st, ii, st->slots);
			combine(st, st->slots, c);
			snprintf(prefix, sizeof(prefix), "%24s ",
				 st->inst[ii].label);
			for (size_t i = 0; i < n; i++) {
				print_event(st, c, i, wall_ns, prefix, NULL);
				print_split(st, i, prefix);
			}
		}
		free(c);
	} else {
		struct counts *c = calloc(n, sizeof(*c));

		read_totals(st);
		for (size_t i = 0; c && i < n; i++)
			c[i] = st->ev[i].total;
		for (size_t i = 0; c && !st->nr_cgs && i < n; i++) {
			print_event(st, c, i, wall_ns, "", NULL);
			print_split(st, i, "");
		}
		/* Each cgroup's lines: its tasks and its descendants'. */
		for (size_t k = 0; c && k < st->nr_cgs; k++) {
			read_sum(st, (long)k, c);
			for (size_t i = 0; i < n; i++) {
				print_event(st, c, i, wall_ns, "",
					    st->cgs[k].name);
				print_split(st, i, "");
			}
		}
		free(c);
	}
	printf("\n%17.9f seconds time elapsed\n", wall_ns / 1e9);
	if (ru)
		printf("\n%17.9f seconds user\n%17.9f seconds sys\n",
		       (double)ru->ru_utime.tv_sec +
			   (double)ru->ru_utime.tv_usec / 1e6,
		       (double)ru->ru_stime.tv_sec +
			   (double)ru->ru_stime.tv_usec / 1e6);
	printf("\n");
	fflush(stdout);
}

/*
 * Waits until the targets are done (the child exits, every -p process
 * exits, or Ctrl-C), printing intervals on the way. Returns the child's
 * wait status, or 0 without a child.
 */
static int wait_targets(struct stat *st, const pid_t *pids, size_t nr_pids,
			long interval_ms, uint64_t t0)
{
	struct pollfd pfd[64];
	int nfd = 0, status = 0, live;
	uint64_t next = t0 + (uint64_t)interval_ms * 1000000ull;

	if (st->launched) {
		pfd[nfd].fd = cli_pidfd_open(st->child);
		pfd[nfd++].events = POLLIN;
	}
	for (size_t i = 0; i < nr_pids && nfd < 64; i++) {
		pfd[nfd].fd = cli_pidfd_open(pids[i]);
		pfd[nfd++].events = POLLIN;
	}
	/* A process already gone reads as exited: fd -1. */
	live = 0;
	for (int i = 0; i < nfd; i++)
		live += pfd[i].fd >= 0;
	for (;;) {
		int timeout = -1, r;

		if (interval_ms > 0) {
			uint64_t now = cli_now_ns();

			timeout =
			    now >= next ? 0 : (int)((next - now) / 1000000);
		}
		if (interrupted && st->launched) {
			/* Forward Ctrl-C and keep waiting: the command decides. */
			kill(st->child, SIGINT);
			interrupted = 0;
		} else if (interrupted) {
			break;
		}
		r = poll(pfd, (nfds_t)nfd, timeout);
		if (r < 0 && errno != EINTR)
			break;
		if (interval_ms > 0 && cli_now_ns() >= next) {
			print_interval(st, (double)(next - t0) / 1e9);
			next += (uint64_t)interval_ms * 1000000ull;
		}
		for (int i = 0; r > 0 && i < nfd; i++) {
			if (pfd[i].fd < 0 || !(pfd[i].revents & POLLIN))
				continue;
			close(pfd[i].fd);
			pfd[i].fd = -1;
			live--;
		}
		if (nfd > 0 && live == 0)
			break;
	}
	for (int i = 0; i < nfd; i++)
		if (pfd[i].fd >= 0)
			close(pfd[i].fd);
	if (st->launched)
		waitpid(st->child, &status, 0);
	/* The last, partial interval: the intervals then add up to the total. */
	if (interval_ms > 0)
		print_interval(st, (double)(cli_now_ns() - t0) / 1e9);
	return status;
}

static void build_what(char *buf, size_t len, char **argv, const char *pids,
		       bool all)
{
	size_t off = 0;

	if (argv && argv[0]) {
		off += (size_t)snprintf(buf, len, "'");
		for (int i = 0; argv[i] && off < len; i++)
			off += (size_t)snprintf(buf + off, len - off, "%s%s",
						i ? " " : "", argv[i]);
		if (off < len)
			snprintf(buf + off, len - off, "'");
	} else if (pids) {
		snprintf(buf, len, "process id '%s'", pids);
	} else if (all) {
		snprintf(buf, len, "'system wide'");
	}
}

static int opt_interval(void *p, const char *arg)
{
	struct stat_options *o = p;

	o->interval_ms = atol(arg);
	if (o->interval_ms < 10) {
		cli_err("-I needs at least 10 ms");
		return -1;
	}
	return 0;
}

static int opt_cgroup(void *p, const char *arg)
{
	return cli_cgroup_add(&((struct stat_options *)p)->cg, arg);
}

#define O struct stat_options
static const struct cli_opts stat_cli = {
    .usage = cli_stat_usage,
    .in_order = true,
    .opt = {
	CLI_OPT_STR("events", 'e', O, events),
	CLI_OPT_FN("interval", 'I', true, opt_interval),
	CLI_OPT_FLAG("per-thread", 0, O, per_thread),
	CLI_OPT_STR("pid", 'p', O, pids),
	CLI_OPT_FLAG("all-cpus", 'a', O, system_wide),
	CLI_OPT_FN("cgroup", 'G', true, opt_cgroup),
    }};
#undef O

/* The options together, then the event list: 2 (or 1) after a message. */
static int stat_check(struct stat *st, int argc, char **argv)
{
	const struct stat_options *o = &st->o;
	int err;

	st->launched = argc > 0;
	if (!st->launched && !o->pids && !o->system_wide) {
		cli_err("stat needs a command, -p PID or -a");
		fputs(cli_stat_usage, stderr);
		return 2;
	}
	if (o->pids && (o->system_wide || st->launched || o->cg.n)) {
		cli_err("-p cannot be combined with -a, --cgroup or a command");
		return 2;
	}
	if (o->cg.n && !o->system_wide) {
		cli_err("--cgroup filters a system-wide count: add -a");
		return 2;
	}
	if (o->per_thread && !o->pids) {
		/*
		 * Per-thread totals of a launched command would need each
		 * inherited counter's value at thread exit, which the kernel
		 * does not report reliably (inherit_stat); perf refuses too.
		 */
		cli_err("--per-thread needs -p: threads created by a launched "
			"command are counted only in the total");
		return 2;
	}
	err = evprof_event_list__parse(&st->list, o->events);
	if (err) {
		cli_err("bad event list '%s': %s", o->events,
			evprof_strerror(err));
		return 2;
	}
	for (size_t gi = 0; gi < st->list->nr_groups; gi++) {
		const struct evprof_event_group_range *r =
		    &st->list->groups[gi];

		if (r->nr > EVPROF_SNAPSHOT_MAX) {
			cli_err("a group holds at most %d events",
				EVPROF_SNAPSHOT_MAX);
			return 1;
		}
		if (evprof_group__validate(st->list->events + r->first, r->nr) <
		    0)
			return 1;
	}
	build_what(st->what, sizeof(st->what), argv, o->pids, o->system_wide);
	return CLI_GO_ON;
}

/*
 * -G's cgroups resolved in the perf_event hierarchy and opened. A cgroup
 * inside another one given keeps its own lines, as with perf: each line
 * counts its cgroup and every cgroup below it. Returns 0 or -errno after
 * a message.
 */
static int open_cgroups(struct stat *st)
{
	size_t n = st->o.cg.n;
	struct evprof_cgroup_fs fs;
	int err = cli_cgroup_fs(&fs);

	if (err)
		return err;
	st->cgs = calloc(n, sizeof(*st->cgs));
	st->cg_prev = calloc(n * st->list->nr_events, sizeof(*st->cg_prev));
	if (!st->cgs || !st->cg_prev)
		return -ENOMEM;
	for (size_t k = 0; k < n; k++) {
		int fd = cli_cgroup_open(&fs, st->o.cg.v[k], &st->cgs[k]);

		if (fd < 0)
			return fd;
		st->cg_fd[st->nr_cgs++] = fd;
	}
	return 0;
}

/* The perf event fds the cgroups took, as record says it. */
static void say_fds(const struct stat *st)
{
	size_t groups = 0, fds = 0;

	for (size_t gi = 0; gi < st->nr_grp; gi++)
		for (size_t ii = 0; ii < st->ninst; ii++)
			if (st->grp[gi].inst[ii]) {
				groups++;
				fds += st->grp[gi].nr;
			}
	fprintf(stderr,
		"evprof: %zu groups on %zu CPUs for %zu cgroup%s: %zu perf "
		"event fds\n",
		groups, st->ninst / st->nr_cgs, st->nr_cgs,
		st->nr_cgs == 1 ? "" : "s", fds);
}

/* The command started (held before its exec), every group opened. */
static int stat_open(struct stat *st, char **argv)
{
	int n, err;

	if (st->launched) {
		st->launch = evprof_launch__new(argv);
		if (!st->launch) {
			cli_err("cannot start '%s': %s", argv[0],
				strerror(errno));
			return 1;
		}
		st->child = evprof_launch__pid(st->launch);
	}
	if (st->o.system_wide && st->o.cg.n) {
		err = open_cgroups(st);
		for (size_t k = 0; !err && k < st->nr_cgs; k++)
			err = add_cpu_instances(st, (long)k);
	} else if (st->o.system_wide) {
		err = add_cpu_instances(st, -1);
	} else if (st->o.pids) {
		n = cli_parse_pids(st->o.pids, &st->pids);
		if (n < 0)
			return 1;
		st->nr_pids = (size_t)n;
		err = add_pid_instances(st, st->pids, st->nr_pids);
	} else {
		err = add_instance(st, st->child, -1, argv[0], -1);
	}
	if (err || plan_groups(st))
		return 1;
	for (size_t ii = 0; ii < st->ninst; ii++)
		for (size_t gi = 0; gi < st->nr_grp; gi++)
			if (open_group(st, gi, ii) < 0)
				return 1;
	if (st->nr_cgs)
		say_fds(st);
	return CLI_GO_ON;
}

/* Counts until the targets are done, then prints: the command's status. */
static int stat_run(struct stat *st, char **argv)
{
	struct sigaction sa = {.sa_handler = on_sigint};
	struct rusage ru;
	int err, status;
	uint64_t t0;

	/* Ctrl-C ends counting (or reaches the command), then we print. */
	sigaction(SIGINT, &sa, NULL);
	t0 = cli_now_ns();
	if (st->launched) {
		if (st->o.system_wide)
			for (size_t gi = 0; gi < st->nr_grp; gi++)
				for (size_t ii = 0; ii < st->ninst; ii++)
					if (st->grp[gi].inst[ii])
						evprof_group__enable(
						    st->grp[gi].inst[ii]);
		err = evprof_launch__go(st->launch);
		if (err) {
			cli_err("cannot run '%s': %s", argv[0], strerror(-err));
			return 127;
		}
	}
	status = wait_targets(st, st->pids, st->nr_pids, st->o.interval_ms, t0);
	getrusage(RUSAGE_CHILDREN, &ru);
	print_final(st, (double)(cli_now_ns() - t0), st->launched ? &ru : NULL);
	return st->launched ? cli_exit_code(status) : 0;
}

int cmd_stat(int argc, char **argv)
{
	struct stat st = {.o = {.events = DEFAULT_EVENTS}};
	int first, ret;

	ret = cli_parse_opts(&stat_cli, argc, argv, &st.o, &first);
	if (ret == CLI_GO_ON)
		ret = stat_check(&st, argc - first, argv + first);
	if (ret == CLI_GO_ON)
		ret = stat_open(&st, argv + first);
	if (ret == CLI_GO_ON)
		ret = stat_run(&st, argv + first);
	/* Kills a command that never ran; one that ran is left alone. */
	evprof_launch__free(st.launch);
	close_all(&st);
	free(st.pids);
	return ret;
}
