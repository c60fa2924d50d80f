// SPDX-License-Identifier: MIT
/*
 * evprof record: parses the options, runs the library's recorder until the
 * command (or every attached process) exits, the duration ends or Ctrl-C,
 * then writes the profile in every requested format and a closing line.
 * The recording policy (groups, hidden members, fallbacks, modes) is the
 * recorder's: include/evprof/recorder.h.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>

#include <evprof/evprof.h>

#include "cli.h"
#include "continuous.h"

const char cli_record_usage[] =
    "usage: evprof record [-e LIST] [-F HZ | -c N] [-g fp[,noleaf]|dwarf[,SIZE]|none]\n"
    "                     [-o FILE]... [--format firefox|folded|pprof|speedscope|svg]\n"
    "                     [--weight EVENT] [--mode auto|task|cpu] [--duration S]\n"
    "                     [--off-cpu] [--engine ring|bpf] [--attribution own|ride]\n"
    "                     [--push URL [--tag KEY=VALUE]... [--push-wait S]\n"
    "                     [--push-label LIST]]\n"
    "                     [--continuous [--interval S]\n"
    "                     [--output-dir DIR [--keep N]]]\n"
    "                     [-p PID[,PID...] | -a [--include-idle]] [-- CMD ARGS...]\n"
    "\n"
    "  -e, --events LIST   first event samples time, the others are counted\n"
    "                      in its group and sample on their own (default:\n"
    "                      cycles); EVENT/period=N/ or /freq=N/ sets one's\n"
    "                      rate\n"
    "  -F, --freq HZ       samples per second of the sampling event (1000)\n"
    "  -c, --count N       sample every N events instead\n"
    "  -g, --call-graph M  fp (default): kernel + frame-pointer user stacks\n"
    "                      (user part deferred where the kernel can), with\n"
    "                      512-byte stack copies that give frameless leaves\n"
    "                      (libc's syscall wrappers) their callers back\n"
    "                      (ring engine); fp,noleaf: without the copies;\n"
    "                      dwarf[,SIZE]: user stacks unwound with DWARF CFI\n"
    "                      from SIZE-byte stack copies (8192; x86-64, arm64);\n"
    "                      none: the sampled instruction only\n"
    "  -o, --output FILE   default evprof.json.gz (evprof.folded, evprof.pb.gz);\n"
    "                      repeat to write several files of one recording\n"
    "      --format F      firefox (default), folded, pprof, speedscope or\n"
    "                      svg for every output; else each name picks\n"
    "                      (.folded, .pb.gz, .speedscope.json, .svg: a\n"
    "                      flame graph, .html: the page of evprof view)\n"
    "      --weight EVENT  weigh samples by that event's deltas (or by\n"
    "                      off-cpu or preempted ns with --off-cpu)\n"
    "      --off-cpu       every wait with its stack and duration: weights\n"
    "                      off-cpu (voluntary) and preempted, in ns\n"
    "      --mode M        auto (default: task where the kernel can), task\n"
    "                      (per-task groups with inherit, Linux 6.12), cpu\n"
    "                      (per-CPU groups filtered to the process tree)\n"
    "      --engine E      ring (default): every sample to user space;\n"
    "                      bpf: sums per thread and stack in the kernel\n"
    "                      (root or CAP_BPF + CAP_PERFMON; no timeline)\n"
    "      --attribution A own (default): each counter's counts on the stacks\n"
    "                      of its own samples, where its events happened;\n"
    "                      ride: on the first event's samples, each interval's\n"
    "                      counts where it ended (cheaper; ratios per interval)\n"
    "      --duration S    stop after S seconds (the command gets SIGTERM)\n"
    "  -p, --pid PIDS      attach to running processes (all their threads);\n"
    "                      PID@HOSTPID: PID in HOSTPID's pid namespace\n"
    "  -a, --all-cpus      system-wide (per-CPU mode)\n"
    "  -G, --cgroup PATH   with -a, only the tasks of that cgroup and its\n"
    "                      descendants (of the perf_event hierarchy: a path\n"
    "                      under its mount or from its root); repeatable\n"
    "      --include-idle  with -a, keep the idle task's samples\n"
    "      --push URL      also send the profile to Grafana Pyroscope at URL\n"
    "                      (POST URL/ingest; credentials from EVPROF_PUSH_*)\n"
    "      --tag KEY=VALUE a label of the pushed series (service_name=NAME\n"
    "                      names it; default evprof); repeatable\n"
    "      --push-label L  also push these sample labels of each thread's\n"
    "                      cgroup: cgroup,container_id,pod_uid,qos_class\n"
    "                      (new series at every restart: opt-in)\n"
    "      --push-wait S   at the end, wait at most S seconds for the push\n"
    "                      (30)\n"
    "      --continuous    a complete profile per window, written into\n"
    "                      --output-dir DIR as evprof-<UTC start>.pb.gz\n"
    "                      (pprof unless --format) and/or pushed; the last,\n"
    "                      partial one at the end\n"
    "      --interval S    seconds per window (10)\n"
    "      --keep N        keep only the last N windows' files\n";

static volatile sig_atomic_t interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static void print_note(const char *note, void *ctx)
{
	(void)ctx;
	cli_err("%s", note);
}

/*
 * Records until the command exits (or every attached process), Ctrl-C, or
 * the duration ends; a command is asked to stop (SIGTERM at the duration,
 * SIGINT on Ctrl-C, SIGKILL 2 s later). Returns the command's wait status,
 * 0 without one.
 */
static int record_loop(struct evprof_recorder *r, double duration,
		       void (*tick)(void *), void *tick_ctx)
{
	uint64_t end =
	    duration > 0 ? cli_now_ns() + (uint64_t)(duration * 1e9) : 0;
	uint64_t stop_deadline = 0;
	pid_t child = evprof_recorder__pid(r);
	bool stopping = false;
	int status = 0;

	for (;;) {
		uint64_t now;

		evprof_recorder__poll(r, 100);
		if (tick)
			tick(tick_ctx);
		if (evprof_recorder__done(r))
			break; /* the command, or every attached process, exited */
		now = cli_now_ns();
		if (child <= 0) {
			/* Attached or system-wide: never signal anyone. */
			if (end && now >= end)
				cli_err("duration reached");
			if ((end && now >= end) || interrupted)
				break;
			continue;
		}
		if (end && now >= end && !stopping) {
			cli_err("duration reached: stopping the command");
			kill(child, SIGTERM);
			stopping = true;
			stop_deadline = now + 2000000000ull;
		}
		if (interrupted && !stopping) {
			/* The command decides what Ctrl-C means to it. */
			kill(child, SIGINT);
			stopping = true;
			stop_deadline = now + 2000000000ull;
		}
		if (stopping && now >= stop_deadline) {
			kill(child, SIGKILL);
			stop_deadline = UINT64_MAX;
		}
	}
	evprof_recorder__stop(r);
	if (child > 0)
		waitpid(child, &status, 0);
	return status;
}

/*
 * The event of the session's counter slot i of n events: the counters are
 * the events after the sampler, whose own slot comes last.
 */
static const char *slot_event(struct evprof_recorder *r, size_t i, size_t n)
{
	return evprof_recorder__event(r, i + 1 < n ? i + 1 : 0);
}

/* "page-faults 3, cpu-clock 1": THROTTLE records by event, into buf. */
static void throttled_by(struct evprof_recorder *r,
			 const struct evprof_session_stats *ss, char *buf,
			 size_t len)
{
	size_t n = evprof_recorder__nr_events(r), off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < EVPROF_PROFILE_MAX_COUNTERS; i++) {
		uint64_t t = ss->throttled_by[i];

		if (t && off < len)
			off += (size_t)snprintf(
			    buf + off, len - off, "%s%s %llu", off ? ", " : "",
			    slot_event(r, i, n), (unsigned long long)t);
	}
	if (ss->throttled_hidden && off < len)
		snprintf(buf + off, len - off, "%shidden members %llu",
			 off ? ", " : "",
			 (unsigned long long)ss->throttled_hidden);
}

/*
 * The -g dwarf copy size that would hold needed bytes of stack: the next
 * power of two, 0 past the largest copy the kernel takes.
 */
static unsigned copy_for(uint64_t needed)
{
	uint64_t size = 1024;

	while (size < needed)
		size *= 2;
	return size <= 65528 ? (unsigned)size : needed <= 65528 ? 65528 : 0;
}

/* Where a stack of end cause i stopped, and what reaches further. */
static const char *stack_end_why(int i, const struct evprof_session_stats *ss,
				 unsigned stack_size, char *buf, size_t len)
{
	unsigned want;

	switch (i) {
	case EVPROF_STACK_FRAME_POINTERS:
		return "where the frame-pointer walk ended (code built without "
		       "frame pointers: -g dwarf unwinds it with its CFI)";
	case EVPROF_STACK_DEPTH:
		return stack_size ? "at the unwinder's limit of 256 frames"
				  : "at the depth limit (deeper stacks: raise "
				    "kernel.perf_event_max_stack)";
	case EVPROF_STACK_COPY:
		want = copy_for(ss->stack_copy_needed);
		if (want)
			snprintf(buf, len,
				 "at the end of the %u-byte stack copy (the "
				 "deepest needed %llu bytes: -g dwarf,%u)",
				 stack_size,
				 (unsigned long long)ss->stack_copy_needed,
				 want);
		else
			snprintf(buf, len,
				 "at the end of the %u-byte stack copy (the "
				 "deepest needed %llu bytes: past the kernel's "
				 "65528, frame pointers instead: -g fp with "
				 "code built with them)",
				 stack_size,
				 (unsigned long long)ss->stack_copy_needed);
		return buf;
	case EVPROF_STACK_NO_CFI:
		return "at code without CFI (JIT or assembly: -g fp where it "
		       "keeps frame pointers)";
	default:
		return "where the CFI's rules gave no caller (a corrupt stack "
		       "or CFI)";
	}
}

/*
 * One line for the stacks that stop short of their thread's first frame:
 * the share of each cause and what would reach further.
 */
static void stack_ends(const struct evprof_session_stats *ss,
		       unsigned stack_size)
{
	uint64_t all = 0, cut;
	char line[1024], why[256];
	size_t n = 0;

	line[0] = '\0';
	for (int i = 0; i < EVPROF_STACK_ENDS; i++)
		all += ss->stack_ends[i];
	cut = all - ss->stack_ends[EVPROF_STACK_WHOLE];
	if (!cut)
		return;
	for (int i = EVPROF_STACK_WHOLE + 1;
	     i < EVPROF_STACK_ENDS && n < sizeof(line); i++) {
		uint64_t k = ss->stack_ends[i];

		if (k)
			n += (size_t)snprintf(
			    line + n, sizeof(line) - n, "; %.1f%% %s",
			    100.0 * (double)k / (double)all,
			    stack_end_why(i, ss, stack_size, why, sizeof(why)));
	}
	fprintf(stderr,
		"evprof: %llu of %llu stacks (%.1f%%) end before their "
		"thread's first frame%s\n",
		(unsigned long long)cut, (unsigned long long)all,
		100.0 * (double)cut / (double)all, line);
}

/* "page-faults 12.3%": each counter's share on [unsampled], into buf. */
static bool unsampled_by(struct evprof_recorder *r,
			 const struct evprof_session_stats *ss, char *buf,
			 size_t len)
{
	size_t n = evprof_recorder__nr_events(r), off = 0;

	buf[0] = '\0';
	for (size_t i = 0; i < n && i < EVPROF_PROFILE_MAX_COUNTERS; i++)
		if (ss->unsampled[i] && off < len)
			off += (size_t)snprintf(
			    buf + off, len - off, "%s%s %.1f%%",
			    off ? ", " : "", slot_event(r, i, n),
			    100.0 * (double)ss->unsampled[i] /
				(double)ss->counted[i]);
	return off;
}

/* What the kernel lost, and what could not be read. */
static void say_losses(const struct evprof_recorder_stats *st,
		       const struct evprof_session_stats *ss)
{
	if (st->ring_lost_events)
		fprintf(stderr,
			"evprof: the kernel lost %llu records in %llu gaps: a "
			"ring was full while evprof read the others; their "
			"samples, switches and forks are missing, and what a "
			"lost sample counted %s (fewer samples keep them: a "
			"lower -F, a longer EVENT/period=N/)\n",
			(unsigned long long)st->ring_lost_events,
			(unsigned long long)st->ring_lost_records,
			ss->reads_after_lost
			    ? "is on no thread: a CPU's counters went from "
			      "thread to thread in the gap, and the records "
			      "that said which are gone"
			    : "lands on its thread's next one");
	if (st->ring_lost_samples)
		fprintf(stderr,
			"evprof: the kernel dropped %llu samples before "
			"writing them (PERF_RECORD_LOST_SAMPLES)\n",
			(unsigned long long)st->ring_lost_samples);
	if (st->ring_malformed || ss->malformed)
		fprintf(stderr,
			"evprof: records skipped unread: a ring lost its "
			"record boundaries %llu times (a size or head the "
			"kernel never writes: what it held then is missing), "
			"%llu records did not decode\n",
			(unsigned long long)st->ring_malformed,
			(unsigned long long)ss->malformed);
}

static void summary(struct evprof_recorder *r, const char *path)
{
	struct evprof_recorder_stats st = {.sz = sizeof(st)};
	struct evprof_session_stats ss = {.sz = sizeof(ss)};
	char own[64] = "", by[256];
	double secs;

	evprof_recorder__stats(r, &st);
	evprof_session__stats(evprof_recorder__session(r), &ss);
	secs = (double)(cli_now_ns() - st.start_mono_ns) / 1e9;
	if (ss.counter_samples)
		snprintf(own, sizeof(own), " (+%llu of counters on their own)",
			 (unsigned long long)ss.counter_samples);
	fprintf(stderr,
		"evprof: %llu samples of %s%s, %u threads in %u processes, "
		"%.3f s; lost %llu records (%llu LOST records), %llu samples; "
		"wrote %s\n",
		(unsigned long long)ss.samples, evprof_recorder__event(r, 0),
		own, ss.threads, ss.processes, secs,
		(unsigned long long)st.ring_lost_events,
		(unsigned long long)st.ring_lost_records,
		(unsigned long long)st.ring_lost_samples, path);
	if (!ss.samples) {
		char period[64];

		if (st.sample_freq)
			snprintf(period, sizeof(period), "%g ms at %llu Hz",
				 1e3 / (double)st.sample_freq,
				 (unsigned long long)st.sample_freq);
		else if (st.sample_time)
			snprintf(period, sizeof(period), "%g ms",
				 (double)st.sample_period / 1e6);
		else
			snprintf(period, sizeof(period), "%llu %s",
				 (unsigned long long)st.sample_period,
				 evprof_recorder__event(r, 0));
		fprintf(stderr,
			"evprof: no sample of %s: every thread ran less than "
			"one sampling period of it (%s); a higher -F, or "
			"%s/period=N/, samples shorter runs\n",
			evprof_recorder__event(r, 0), period,
			evprof_recorder__event(r, 0));
	}
	say_losses(&st, &ss);
	if (ss.samples_moved)
		fprintf(stderr,
			"evprof: %llu samples named another task than the one "
			"their CPU ran (another session in another pid "
			"namespace counts the same software event, and Linux "
			"gives its task ids to every session's sample): they "
			"went to the task the CPU's switch records name\n",
			(unsigned long long)ss.samples_moved);
	stack_ends(&ss, st.stack_size);
	if (ss.offcpu_voluntary || ss.offcpu_preempted || ss.offcpu_unmatched ||
	    ss.offcpu_unstarted)
		fprintf(stderr,
			"evprof: off-CPU: %llu voluntary and %llu preempted "
			"intervals; %llu lost their end, %llu their start "
			"(a lost or throttled switch sample)\n",
			(unsigned long long)ss.offcpu_voluntary,
			(unsigned long long)ss.offcpu_preempted,
			(unsigned long long)ss.offcpu_unmatched,
			(unsigned long long)ss.offcpu_unstarted);
	if (unsampled_by(r, &ss, by, sizeof(by)))
		fprintf(stderr,
			"evprof: counted after each thread's last sample, on "
			"[unsampled]: %s (tasks shorter than a period: a "
			"shorter one, EVENT/period=N/, samples them)\n",
			by);
	if (ss.throttled) {
		throttled_by(r, &ss, by, sizeof(by));
		fprintf(stderr,
			"evprof: the kernel throttled sampling %llu times (%s; "
			"past kernel.perf_event_max_sample_rate / HZ "
			"interrupts in a tick); the counters of a throttled "
			"group miss what happened until its next tick: raise "
			"that event's period=N\n",
			(unsigned long long)ss.throttled, by);
	}
	if (st.stack_size)
		fprintf(stderr,
			"evprof: call graph dwarf: %llu stacks unwound, %llu "
			"truncated at %u bytes, %llu copies dropped\n",
			(unsigned long long)ss.stacks_unwound,
			(unsigned long long)ss.stacks_truncated, st.stack_size,
			(unsigned long long)ss.stacks_dropped);
	else if (st.deferred)
		fprintf(stderr,
			"evprof: call graph fp, deferred user part: %llu "
			"deferred samples, %llu left unstitched\n",
			(unsigned long long)ss.deferred_samples,
			(unsigned long long)ss.deferred_unstitched);
	if (ss.leaf_checked)
		fprintf(stderr,
			"evprof: call graph fp, leaves: %llu stacks checked, "
			"%.1f%% gained the callers the frame pointers skip, "
			"%.1f%% leaf not recovered\n",
			(unsigned long long)ss.leaf_checked,
			100.0 * (double)ss.leaf_gained /
			    (double)ss.leaf_checked,
			100.0 * (double)ss.leaf_lost / (double)ss.leaf_checked);
}

/* True when name is one of p's weight types (ns, e.g. "off-cpu"). */
static bool is_weight_type(const struct evprof_profile *p, const char *name)
{
	for (int i = 0; name && evprof_profile__weight_name(p, i); i++)
		if (!strcmp(evprof_profile__weight_name(p, i), name))
			return true;
	return false;
}

/* The --weight event, or NULL with a note when nothing counted it. */
static const char *check_weight(struct evprof_recorder *r,
				struct evprof_profile *p, const char *weight)
{
	char buf[256];

	if (!weight)
		return NULL;
	for (size_t i = 1; i < evprof_recorder__nr_events(r); i++)
		if (!strcmp(evprof_recorder__event(r, i), weight))
			return weight;
	if (is_weight_type(p, weight))
		return weight;
	snprintf(buf, sizeof(buf),
		 "--weight %s: no such counter in this recording, weighing by "
		 "samples",
		 weight);
	cli_err("%s", buf);
	evprof_profile__add_note(p, buf);
	return NULL;
}

/*
 * --weight against what the recorder opened (and the off-CPU weights), or
 * against the events typed when one fell back (cycles on a VM: said with
 * a note once the profile is made): 0, or 2 after a message.
 */
static int weight_known(struct evprof_recorder *r, const char *events,
			const char *weight, bool off_cpu)
{
	const char *names[EVPROF_PROFILE_MAX_COUNTERS + 3];
	size_t n = 0, len = strlen(weight);
	const char *hit, *closest;

	for (size_t i = 0; i < evprof_recorder__nr_events(r) &&
			   n < EVPROF_PROFILE_MAX_COUNTERS + 1;
	     i++)
		names[n++] = evprof_recorder__event(r, i);
	if (off_cpu) {
		names[n++] = "off-cpu";
		names[n++] = "preempted";
	}
	for (size_t i = 0; i < n; i++)
		if (!strcmp(names[i], weight))
			return 0;
	/* A name of the list typed, ended by a separator or its terms. */
	for (hit = len ? strstr(events, weight) : NULL; hit;
	     hit = strstr(hit + 1, weight))
		if ((hit == events || strchr(",{", hit[-1])) &&
		    strchr(",}/", hit[len]))
			return 0;
	if (!off_cpu &&
	    (!strcmp(weight, "off-cpu") || !strcmp(weight, "preempted"))) {
		cli_err("--weight %s: a weight of --off-cpu recordings: add "
			"--off-cpu",
			weight);
		return 2;
	}
	closest = evprof_closest_name(weight, names, n);
	if (closest) {
		cli_err("--weight %s: no such event in this recording (-e %s); "
			"did you mean '%s'?",
			weight, events, closest);
		return 2;
	}
	/* An event of its own: the library says when it knows none such. */
	struct evprof_event_spec spec;

	if (!evprof_event_spec__parse(&spec, weight))
		cli_err("--weight %s: not an event of this recording: add it "
			"(-e %s,%s)",
			weight, events, weight);
	else
		cli_err("--weight %s: no such event", weight);
	return 2;
}

struct totals {
	uint64_t v[EVPROF_PROFILE_MAX_COUNTERS];
};

static int add_entry(const struct evprof_profile_entry *e, void *ctx)
{
	struct totals *t = ctx;

	for (int i = 0; i < EVPROF_PROFILE_MAX_COUNTERS; i++)
		if (e->has_counters & (1ULL << i))
			t->v[i] += e->counters[i];
	return 0;
}

/* Each counter's total, as perf stat would print it (1,234,567). */
static void totals_line(const struct evprof_profile *p)
{
	struct totals t = {{0}};
	char line[1024];
	int off = 0;

	if (!evprof_profile__counter_name(p, 0) ||
	    evprof_profile__for_each_entry(p, -1, add_entry, &t))
		return;
	for (int i = 0; evprof_profile__counter_name(p, i) && off >= 0 &&
			(size_t)off < sizeof(line);
	     i++) {
		char num[32], grouped[48];
		int n = snprintf(num, sizeof(num), "%llu",
				 (unsigned long long)t.v[i]),
		    g = 0;

		for (int k = 0; k < n; k++) {
			if (k && (n - k) % 3 == 0)
				grouped[g++] = ',';
			grouped[g++] = num[k];
		}
		grouped[g] = '\0';
		off += snprintf(line + off, sizeof(line) - (size_t)off,
				"%s%s %s", i ? ", " : "", grouped,
				evprof_profile__counter_name(p, i));
	}
	fprintf(stderr, "evprof: totals: %s\n", line);
}

#define RECORD_OUTS 8

/* Every option of record (perf's record_options); defaults in cmd_record. */
struct record_options {
	const char *events;
	const char *outs[RECORD_OUTS];
	int nr_outs;
	const char *format; /* --format as given */
	int fmt;	    /* its enum out_format; -1: each output's name */
	const char *weight;
	const char *mode;
	const char *pid_list;
	struct cli_cgroups cg;
	double duration; /* seconds; 0: until the end */
	bool continuous;
	struct evprof_recorder_opts ro;
	struct evprof_recorder_target tg;
	struct cont cont; /* --interval, --output-dir, --keep */
	struct cli_push_conf push;
};

/* One recording: its options and what they made. */
struct record {
	struct record_options o;
	pid_t *pids;
	struct evprof_pusher *pusher;
	struct evprof_recorder *r;
	struct evprof_profile *prof;
	struct timespec t0; /* CLOCK_REALTIME at the start */
};

static int opt_freq(void *p, const char *arg)
{
	struct record_options *o = p;
	long v = atol(arg);

	if (v <= 0) {
		cli_err("-F needs a positive frequency");
		return -1;
	}
	o->ro.freq = (uint64_t)v;
	return 0;
}

static int opt_count(void *p, const char *arg)
{
	struct record_options *o = p;
	long v = atol(arg);

	if (v <= 0) {
		cli_err("-c needs a positive count");
		return -1;
	}
	o->ro.period = (uint64_t)v;
	return 0;
}

/* -g fp[,noleaf] | dwarf[,SIZE] | none */
static int opt_call_graph(void *p, const char *arg)
{
	struct evprof_recorder_opts *o = &((struct record_options *)p)->ro;
	char *end;
	long size;

	o->stack_size = 0;
	if (!strcmp(arg, "fp") || !strcmp(arg, "none")) {
		o->call_graph = arg[0] == 'f' ? EVPROF_CALL_GRAPH_FP
					      : EVPROF_CALL_GRAPH_NONE;
		return 0;
	}
	if (!strcmp(arg, "fp,noleaf")) {
		o->call_graph = EVPROF_CALL_GRAPH_FP_NOLEAF;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ',')) {
		cli_err("-g takes fp[,noleaf], dwarf[,SIZE] or none");
		return -1;
	}
	if (!evprof_session__unwind_regs()) {
		cli_err("-g dwarf: DWARF unwinding is only implemented for "
			"x86-64 and arm64");
		return -1;
	}
	o->call_graph = EVPROF_CALL_GRAPH_DWARF;
	if (!arg[5])
		return 0;
	errno = 0;
	size = strtol(arg + 6, &end, 0);
	if (errno || *end || size < 8 || size > EVPROF_RECORDER_STACK_MAX) {
		cli_err("-g dwarf,SIZE: SIZE from 8 to %d bytes",
			EVPROF_RECORDER_STACK_MAX);
		return -1;
	}
	o->stack_size = (uint32_t)size;
	return 0;
}

static int opt_output(void *p, const char *arg)
{
	struct record_options *o = p;

	if (o->nr_outs == RECORD_OUTS) {
		cli_err("at most %d outputs", o->nr_outs);
		return -1;
	}
	o->outs[o->nr_outs++] = arg;
	return 0;
}

static int opt_duration(void *p, const char *arg)
{
	((struct record_options *)p)->duration = atof(arg);
	return 0;
}

static int opt_tag(void *p, const char *arg)
{
	return cli_push_tag(&((struct record_options *)p)->push, arg);
}

static int opt_push_label(void *p, const char *arg)
{
	return cli_push_label(&((struct record_options *)p)->push, arg);
}

static int opt_cgroup(void *p, const char *arg)
{
	return cli_cgroup_add(&((struct record_options *)p)->cg, arg);
}

static int opt_push_wait(void *p, const char *arg)
{
	struct record_options *o = p;
	long v = atol(arg);

	if (v < 0 || v > 86400) {
		cli_err("--push-wait takes 0 to 86400 seconds");
		return -1;
	}
	o->push.wait_s = (unsigned int)v;
	return 0;
}

static int opt_interval(void *p, const char *arg)
{
	struct record_options *o = p;

	o->cont.interval = atof(arg);
	if (o->cont.interval <= 0) {
		cli_err("--interval needs positive seconds");
		return -1;
	}
	return 0;
}

static int opt_keep(void *p, const char *arg)
{
	struct record_options *o = p;

	o->cont.keep = atoi(arg);
	if (o->cont.keep <= 0) {
		cli_err("--keep needs a positive count");
		return -1;
	}
	return 0;
}

static int opt_engine(void *p, const char *arg)
{
	struct record_options *o = p;

	if (strcmp(arg, "ring") && strcmp(arg, "bpf")) {
		cli_err("--engine takes ring or bpf");
		return -1;
	}
	o->ro.engine = strcmp(arg, "bpf") ? EVPROF_RECORDER_ENGINE_RING
					  : EVPROF_RECORDER_ENGINE_BPF;
	return 0;
}

static int opt_attribution(void *opts, const char *arg)
{
	struct record_options *o = opts;

	if (strcmp(arg, "own") && strcmp(arg, "ride")) {
		cli_err("--attribution takes own or ride");
		return -1;
	}
	o->ro.ride_along = !strcmp(arg, "ride");
	return 0;
}

#define R struct record_options
static const struct cli_opts record_cli = {
    .usage = cli_record_usage,
    .in_order = true,
    .opt = {
	CLI_OPT_STR("events", 'e', R, events),
	CLI_OPT_FN("freq", 'F', true, opt_freq),
	CLI_OPT_FN("count", 'c', true, opt_count),
	CLI_OPT_FN("call-graph", 'g', true, opt_call_graph),
	CLI_OPT_FN("output", 'o', true, opt_output),
	CLI_OPT_STR("format", 0, R, format),
	CLI_OPT_STR("weight", 0, R, weight),
	CLI_OPT_STR("mode", 0, R, mode),
	CLI_OPT_FN("duration", 0, true, opt_duration),
	CLI_OPT_STR("pid", 'p', R, pid_list),
	CLI_OPT_FLAG("all-cpus", 'a', R, tg.system_wide),
	CLI_OPT_FN("cgroup", 'G', true, opt_cgroup),
	CLI_OPT_FLAG("include-idle", 0, R, ro.include_idle),
	CLI_OPT_FLAG("off-cpu", 0, R, ro.off_cpu),
	CLI_OPT_STR("push", 0, R, push.url),
	CLI_OPT_FN("tag", 0, true, opt_tag),
	CLI_OPT_FN("push-label", 0, true, opt_push_label),
	CLI_OPT_FN("push-wait", 0, true, opt_push_wait),
	CLI_OPT_FLAG("continuous", 0, R, continuous),
	CLI_OPT_FN("interval", 0, true, opt_interval),
	CLI_OPT_STR("output-dir", 0, R, cont.dir),
	CLI_OPT_FN("keep", 0, true, opt_keep),
	CLI_OPT_FN("engine", 0, true, opt_engine),
	CLI_OPT_FN("attribution", 0, true, opt_attribution),
    }};
#undef R

/* The options together, then the pid list: 2 after a message. */
static int record_check(struct record *rec, int argc, char **argv)
{
	static const char *const default_out[] = {
	    "evprof.json.gz", "evprof.folded", "evprof.pb.gz",
	    "evprof.speedscope.json"};
	struct record_options *o = &rec->o;

	if (argc == 0 && !o->pid_list && !o->tg.system_wide) {
		cli_err("record needs a command to run, -p PID or -a");
		fputs(cli_record_usage, stderr);
		return 2;
	}
	if (o->pid_list && (argc || o->tg.system_wide || o->cg.n)) {
		cli_err("-p cannot be combined with -a, --cgroup or a command");
		return 2;
	}
	if (o->cg.n && !o->tg.system_wide) {
		cli_err("--cgroup filters a system-wide recording: add -a");
		return 2;
	}
	o->tg.cgroups = o->cg.v;
	o->tg.nr_cgroups = o->cg.n;
	if (o->format && (o->fmt = out_parse_format(o->format)) < 0) {
		cli_err("--format takes firefox, folded, pprof, speedscope or "
			"svg");
		return 2;
	}
	if (o->continuous &&
	    ((!o->cont.dir && !o->push.url) || o->nr_outs || o->ro.off_cpu)) {
		cli_err(
		    !o->cont.dir && !o->push.url
			? "--continuous needs --output-dir DIR or --push URL"
		    : o->nr_outs ? "--continuous writes into --output-dir, "
				   "not -o"
				 : "--continuous does not take --off-cpu "
				   "(a wait ends after its window)");
		return 2;
	}
	if (!o->nr_outs)
		o->outs[o->nr_outs++] =
		    default_out[o->fmt < 0 ? OUT_FIREFOX : o->fmt];
	if (!strcmp(o->mode, "auto")) {
		o->ro.mode = EVPROF_RECORDER_AUTO;
	} else if (!strcmp(o->mode, "task")) {
		o->ro.mode = EVPROF_RECORDER_TASK;
	} else if (!strcmp(o->mode, "cpu")) {
		o->ro.mode = EVPROF_RECORDER_CPU;
	} else {
		cli_err("--mode takes auto, task or cpu");
		return 2;
	}
	if (o->tg.system_wide && o->ro.mode == EVPROF_RECORDER_TASK) {
		cli_err("-a records per CPU: --mode task does not apply");
		return 2;
	}
	if (o->pid_list) {
		int n = cli_parse_pids(o->pid_list, &rec->pids);

		if (n < 0)
			return 2;
		o->tg.pids = rec->pids;
		o->tg.nr_pids = (size_t)n;
	}
	if (argc)
		o->tg.argv = argv;
	return CLI_GO_ON;
}

/* Refused now, before the command runs: unwritable files, the pusher. */
static int record_outputs(struct record *rec)
{
	struct record_options *o = &rec->o;

	o->ro.no_timeline =
	    o->continuous
		? o->fmt != OUT_FIREFOX
		: !out_wants_timeline(o->outs, (size_t)o->nr_outs, o->fmt);
	for (int i = 0; i < o->nr_outs; i++) {
		bool in_dir;
		int err;

		if (out_named(o->outs[i], o->fmt))
			return 2;
		err = out_check(o->outs[i], &in_dir);

		if (err) {
			cli_err("cannot write %s: %s%s", o->outs[i],
				strerror(-err),
				in_dir ? " (no new file can be made in its "
					 "directory)"
				       : "");
			return 1;
		}
	}
	if ((o->push.nr_tags || o->push.labels) && !o->push.url) {
		cli_err("--tag and --push-label label pushed profiles: they "
			"need --push");
		return 2;
	}
	/* Bad labels, no libcurl. */
	if (o->push.url && !(rec->pusher = cli_pusher_new(&o->push)))
		return 1;
	return CLI_GO_ON;
}

/* The recorder made and started, the command run. */
static int record_start(struct record *rec)
{
	struct record_options *o = &rec->o;
	struct sigaction sa = {.sa_handler = on_sigint};
	int err;

	/* First what explains the fallbacks that follow. */
	if (!evprof_probe(EVPROF_FEAT_KERNEL_SAMPLES)->yes)
		fprintf(stderr,
			"evprof: without privileges here "
			"(kernel.perf_event_paranoid=%d, no CAP_PERFMON): "
			"user space only, no kernel stacks, no task exits, no "
			"context switches; as root, with CAP_PERFMON or after "
			"'sysctl -w kernel.perf_event_paranoid=1' evprof "
			"records them (the lines below say what each one "
			"leaves out)\n",
			evprof_paranoid());
	rec->r = evprof_recorder__new(&o->tg, o->events, &o->ro);
	if (!rec->r) {
		if (errno >= EVPROF_ERR_FIRST || errno == E2BIG)
			return 2; /* a bad event list, already said */
		if (o->tg.argv && errno != EINVAL)
			cli_err("cannot record '%s': %s", o->tg.argv[0],
				strerror(errno));
		return 1;
	}
	if (o->weight &&
	    weight_known(rec->r, o->events, o->weight, o->ro.off_cpu))
		return 2;
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_REALTIME, &rec->t0);
	err = evprof_recorder__start(rec->r);
	if (err && o->tg.argv) {
		cli_err("cannot run '%s': %s", o->tg.argv[0], strerror(-err));
		return 127;
	}
	if (err)
		return 1;
	/* Attached or system-wide: from here on, it all counts. */
	if (!o->tg.argv) {
		cli_err("recording %s%s", o->pid_list ? "pid " : "",
			o->pid_list ? o->pid_list : "every CPU");
		cli_say_confinement(stderr, "evprof: ", true, "");
	}
	return CLI_GO_ON;
}

/* The pusher drained and freed: ret, or 1 when something was not sent. */
static int record_push_end(struct record *rec, int ret)
{
	if (rec->pusher && cli_push_finish(rec->pusher, rec->o.push.wait_s))
		ret = ret ? ret : 1;
	rec->pusher = NULL;
	return ret;
}

/* --continuous: a profile per window until the end. */
static int record_windows(struct record *rec)
{
	struct record_options *o = &rec->o;
	struct cont *cont = &o->cont;
	int status, ret;

	cont->fmt = o->fmt < 0 ? OUT_PPROF : (enum out_format)o->fmt;
	cont->weight = o->weight;
	cont->pusher = rec->pusher;
	cont->rate = (unsigned int)o->ro.freq;
	cont->labels = o->push.labels;
	if (cont_init(cont, rec->r))
		return 1;
	status = record_loop(rec->r, o->duration, cont_tick, cont);
	ret = o->tg.argv ? cli_exit_code(status) : 0;
	if (cont_finish(cont))
		ret = ret ? ret : 1;
	/* Lost records and samples are said for windows too. */
	summary(rec->r, cont->dir ? cont->dir : "windows (pushed)");
	return record_push_end(rec, ret);
}

/* Writes the profile to every output: ret, or 1 when one failed. */
static int record_write(struct record *rec, const char *weight, int ret)
{
	struct record_options *o = &rec->o;
	char saved[4096], wrote[4096] = "";
	size_t off = 0;

	for (int i = 0; i < o->nr_outs; i++) {
		enum out_format f = o->fmt < 0 ? out_format_of(o->outs[i])
					       : (enum out_format)o->fmt;
		const char *w = weight;
		int err;

		/* Firefox thread tracks weigh samples; ns have own tracks. */
		if (f == OUT_FIREFOX && is_weight_type(rec->prof, weight)) {
			cli_err("--weight %s: %s is weighed by samples (its "
				"%s tracks hold the ns)",
				weight, o->outs[i], weight);
			w = NULL;
		}
		err = out_write_somewhere(rec->prof, o->outs[i], f, w, saved,
					  sizeof(saved));
		if (err) {
			cli_err("cannot write %s: %s", o->outs[i],
				evprof_strerror(err));
			ret = ret ? ret : 1;
		} else if (off < sizeof(wrote)) {
			/* Each file written, where it went ("-": stdout). */
			off += (size_t)snprintf(
			    wrote + off, sizeof(wrote) - off, "%s%s",
			    off ? ", " : "",
			    strcmp(saved, "-") ? saved : "stdout");
		}
	}
	summary(rec->r, off ? wrote : "nothing");
	totals_line(rec->prof);
	cli_symbol_hints(rec->prof, NULL);
	return ret;
}

/* One profile of the whole recording, pushed and written. */
static int record_once(struct record *rec)
{
	struct record_options *o = &rec->o;
	struct timespec t1;
	const char *weight;
	int status, ret;

	status = record_loop(rec->r, o->duration, NULL, NULL);
	clock_gettime(CLOCK_REALTIME, &t1);
	ret = o->tg.argv ? cli_exit_code(status) : 0;
	rec->prof = evprof_recorder__profile(rec->r, NULL);
	if (!rec->prof) {
		cli_err("cannot build the profile: %s", evprof_strerror(errno));
		return ret ? ret : 1;
	}
	weight = check_weight(rec->r, rec->prof, o->weight);
	/* Queued first: it goes out while the files are written. */
	if (rec->pusher &&
	    cli_push_profile(rec->pusher, rec->prof,
			     (uint64_t)rec->t0.tv_sec * 1000000000ull +
				 (uint64_t)rec->t0.tv_nsec,
			     (uint64_t)t1.tv_sec * 1000000000ull +
				 (uint64_t)t1.tv_nsec,
			     (unsigned int)o->ro.freq, o->push.labels))
		ret = ret ? ret : 1;
	ret = record_write(rec, weight, ret);
	return record_push_end(rec, ret);
}

int cmd_record(int argc, char **argv)
{
	struct record rec = {
	    .o = {.events = "cycles",
		  .fmt = -1,
		  .mode = "auto",
		  .ro = {.sz = sizeof(rec.o.ro),
			 .note = print_note,
			 .flat_memory = true,
			 .spill_dir = cli_spill_dir(),
			 .debug_cache_dir = cli_debug_cache_dir()},
		  .tg = {.sz = sizeof(rec.o.tg)},
		  .cont = {.interval = 10, .fmt = OUT_PPROF},
		  .push = {.wait_s = 30}},
	};
	int first, ret;

	ret = cli_parse_opts(&record_cli, argc, argv, &rec.o, &first);
	if (ret == CLI_GO_ON)
		ret = record_check(&rec, argc - first, argv + first);
	if (ret == CLI_GO_ON)
		ret = record_outputs(&rec);
	if (ret == CLI_GO_ON)
		ret = record_start(&rec);
	if (ret == CLI_GO_ON)
		ret =
		    rec.o.continuous ? record_windows(&rec) : record_once(&rec);
	cont_free(&rec.o.cont);
	evprof_pusher__free(rec.pusher);
	evprof_profile__free(rec.prof);
	evprof_recorder__free(rec.r);
	free(rec.pids);
	return ret;
}
