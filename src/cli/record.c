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
#include <getopt.h>
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
    "usage: evprof record [-e LIST] [-F HZ | -c N] [-g fp|dwarf[,SIZE]|none]\n"
    "                     [-o FILE]... [--format firefox|folded|pprof|speedscope]\n"
    "                     [--weight EVENT] [--mode auto|task|cpu] [--duration S]\n"
    "                     [--off-cpu] [--engine ring|bpf]\n"
    "                     [--push URL [--tag KEY=VALUE]... [--push-wait S]]\n"
    "                     [--continuous [--interval S]\n"
    "                     [--output-dir DIR [--keep N]]]\n"
    "                     [-p PID[,PID...] | -a [--include-idle]] [-- CMD ARGS...]\n"
    "\n"
    "  -e, --events LIST   first event samples, the others are counted with\n"
    "                      every sample (default: cycles)\n"
    "  -F, --freq HZ       samples per second of the sampling event (1000)\n"
    "  -c, --count N       sample every N events instead\n"
    "  -g, --call-graph M  fp (default): kernel + frame-pointer user stacks\n"
    "                      (user part deferred where the kernel can);\n"
    "                      dwarf[,SIZE]: user stacks unwound with DWARF CFI\n"
    "                      from SIZE-byte stack copies (8192; x86-64);\n"
    "                      none: the sampled instruction only\n"
    "  -o, --output FILE   default evprof.json.gz (evprof.folded, evprof.pb.gz);\n"
    "                      repeat to write several files of one recording\n"
    "      --format F      firefox (default), folded, pprof or speedscope for\n"
    "                      every output; else each name picks (.folded,\n"
    "                      .pb.gz, .speedscope.json, .html: the page of\n"
    "                      evprof view)\n"
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
    "      --duration S    stop after S seconds (the command gets SIGTERM)\n"
    "  -p, --pid PIDS      attach to running processes (all their threads)\n"
    "  -a, --all-cpus      system-wide (per-CPU mode)\n"
    "      --include-idle  with -a, keep the idle task's samples\n"
    "      --push URL      also send the profile to Grafana Pyroscope at URL\n"
    "                      (POST URL/ingest; credentials from EVPROF_PUSH_*)\n"
    "      --tag KEY=VALUE a label of the pushed series (service_name=NAME\n"
    "                      names it; default evprof); repeatable\n"
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

/* -g fp | dwarf[,SIZE] | none */
static int parse_call_graph(struct evprof_recorder_opts *o, const char *arg)
{
	char *end;
	long size;

	o->stack_size = 0;
	if (!strcmp(arg, "fp") || !strcmp(arg, "none")) {
		o->call_graph = arg[0] == 'f' ? EVPROF_CALL_GRAPH_FP
					      : EVPROF_CALL_GRAPH_NONE;
		return 0;
	}
	if (strncmp(arg, "dwarf", 5) || (arg[5] && arg[5] != ',')) {
		cli_err("-g takes fp, dwarf[,SIZE] or none");
		return -1;
	}
	if (!evprof_session__unwind_regs()) {
		cli_err("-g dwarf: DWARF unwinding is only implemented for "
			"x86-64");
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

static void summary(struct evprof_recorder *r, const char *path)
{
	struct evprof_recorder_stats st = {.sz = sizeof(st)};
	struct evprof_session_stats ss = {.sz = sizeof(ss)};
	double secs;

	evprof_recorder__stats(r, &st);
	evprof_session__stats(evprof_recorder__session(r), &ss);
	secs = (double)(cli_now_ns() - st.start_mono_ns) / 1e9;
	fprintf(stderr,
		"evprof: %llu samples of %s, %u threads in %u processes, "
		"%.3f s; lost %llu records (%llu LOST records), %llu samples; "
		"wrote %s\n",
		(unsigned long long)ss.samples, evprof_recorder__event(r, 0),
		ss.threads, ss.processes, secs,
		(unsigned long long)st.ring_lost_events,
		(unsigned long long)st.ring_lost_records,
		(unsigned long long)st.ring_lost_samples, path);
	if (ss.stacks_cut) {
		double share = ss.samples ? 100.0 * (double)ss.stacks_cut /
						(double)ss.samples
					  : 0;

		fprintf(stderr,
			"evprof: %llu samples (%.1f%%) had their frame-pointer "
			"user stack cut where it left code%s\n",
			(unsigned long long)ss.stacks_cut, share,
			share >= 10 ? "; code built without frame pointers "
				      "unwinds with -g dwarf"
				    : "");
	}
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
	if (ss.throttled)
		fprintf(stderr,
			"evprof: the kernel throttled sampling %llu times "
			"(past kernel.perf_event_max_sample_rate / HZ "
			"interrupts in a tick); the counters of a throttled "
			"group miss what happened until its next tick\n",
			(unsigned long long)ss.throttled);
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

int cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
	    {"events", required_argument, NULL, 'e'},
	    {"freq", required_argument, NULL, 'F'},
	    {"count", required_argument, NULL, 'c'},
	    {"call-graph", required_argument, NULL, 'g'},
	    {"output", required_argument, NULL, 'o'},
	    {"format", required_argument, NULL, 'f'},
	    {"weight", required_argument, NULL, 'w'},
	    {"mode", required_argument, NULL, 'm'},
	    {"duration", required_argument, NULL, 'd'},
	    {"pid", required_argument, NULL, 'p'},
	    {"all-cpus", no_argument, NULL, 'a'},
	    {"include-idle", no_argument, NULL, 'I'},
	    {"off-cpu", no_argument, NULL, 'O'},
	    {"push", required_argument, NULL, 'P'},
	    {"tag", required_argument, NULL, 'T'},
	    {"push-wait", required_argument, NULL, 'W'},
	    {"continuous", no_argument, NULL, 'C'},
	    {"interval", required_argument, NULL, 'i'},
	    {"output-dir", required_argument, NULL, 'D'},
	    {"keep", required_argument, NULL, 'k'},
	    {"engine", required_argument, NULL, 'E'},
	    {"help", no_argument, NULL, 'h'},
	    {NULL, 0, NULL, 0},
	};
	static const char *const default_out[] = {
	    "evprof.json.gz", "evprof.folded", "evprof.pb.gz",
	    "evprof.speedscope.json"};
	const char *events = "cycles", *outs[8], *weight = NULL;
	const char *mode = "auto", *format = NULL, *pid_list = NULL;
	struct evprof_recorder_opts ro = {.sz = sizeof(ro),
					  .note = print_note,
					  .flat_memory = true,
					  .spill_dir = cli_spill_dir(),
					  .debug_cache_dir =
					      cli_debug_cache_dir()};
	struct cont cont = {.interval = 10, .fmt = OUT_PPROF};
	bool continuous = false;
	struct evprof_recorder_target tg = {.sz = sizeof(tg)};
	struct sigaction sa = {.sa_handler = on_sigint};
	struct evprof_recorder *r = NULL;
	struct evprof_profile *prof = NULL;
	struct cli_push_conf push = {.wait_s = 30};
	struct evprof_pusher *pusher = NULL;
	struct timespec t0, t1;
	pid_t *pids = NULL;
	char saved[4096];
	double duration = 0;
	int fmt = -1, nr_outs = 0;
	int c, err, status, ret = 1;
	long v;

	while ((c = getopt_long(argc, argv, "+e:F:c:g:o:p:ah", opts, NULL)) !=
	       -1) {
		switch (c) {
		case 'e':
			events = optarg;
			break;
		case 'F':
		case 'c':
			v = atol(optarg);
			if (v <= 0) {
				cli_err(c == 'F'
					    ? "-F needs a positive frequency"
					    : "-c needs a positive count");
				return 2;
			}
			*(c == 'F' ? &ro.freq : &ro.period) = (uint64_t)v;
			break;
		case 'g':
			if (parse_call_graph(&ro, optarg) < 0)
				return 2;
			break;
		case 'o':
			if (nr_outs == (int)(sizeof(outs) / sizeof(outs[0]))) {
				cli_err("at most %d outputs", nr_outs);
				return 2;
			}
			outs[nr_outs++] = optarg;
			break;
		case 'f':
			format = optarg;
			break;
		case 'w':
			weight = optarg;
			break;
		case 'm':
			mode = optarg;
			break;
		case 'd':
			duration = atof(optarg);
			break;
		case 'p':
			pid_list = optarg;
			break;
		case 'a':
			tg.system_wide = true;
			break;
		case 'I':
			ro.include_idle = true;
			break;
		case 'O':
			ro.off_cpu = true;
			break;
		case 'P':
			push.url = optarg;
			break;
		case 'T':
			if (cli_push_tag(&push, optarg))
				return 2;
			break;
		case 'W':
			v = atol(optarg);
			if (v < 0 || v > 86400) {
				cli_err("--push-wait takes 0 to 86400 seconds");
				return 2;
			}
			push.wait_s = (unsigned int)v;
			break;
		case 'C':
			continuous = true;
			break;
		case 'i':
			cont.interval = atof(optarg);
			if (cont.interval <= 0) {
				cli_err("--interval needs positive seconds");
				return 2;
			}
			break;
		case 'D':
			cont.dir = optarg;
			break;
		case 'k':
			cont.keep = atoi(optarg);
			if (cont.keep <= 0) {
				cli_err("--keep needs a positive count");
				return 2;
			}
			break;
		case 'E':
			if (strcmp(optarg, "ring") && strcmp(optarg, "bpf")) {
				cli_err("--engine takes ring or bpf");
				return 2;
			}
			ro.engine = strcmp(optarg, "bpf")
					? EVPROF_RECORDER_ENGINE_RING
					: EVPROF_RECORDER_ENGINE_BPF;
			break;
		case 'h':
			fputs(cli_record_usage, stdout);
			return 0;
		default:
			fputs(cli_record_usage, stderr);
			return 2;
		}
	}
	argv += optind;
	argc -= optind;
	if (argc == 0 && !pid_list && !tg.system_wide) {
		cli_err("record needs a command to run, -p PID or -a");
		fputs(cli_record_usage, stderr);
		return 2;
	}
	if (pid_list && (argc || tg.system_wide)) {
		cli_err("-p cannot be combined with -a or a command");
		return 2;
	}
	if (format && (fmt = out_parse_format(format)) < 0) {
		cli_err("--format takes firefox, folded, pprof or speedscope");
		return 2;
	}
	if (continuous && ((!cont.dir && !push.url) || nr_outs || ro.off_cpu)) {
		cli_err(
		    !cont.dir && !push.url
			? "--continuous needs --output-dir DIR or --push URL"
		    : nr_outs ? "--continuous writes into --output-dir, "
				"not -o"
			      : "--continuous does not take --off-cpu "
				"(a wait ends after its window)");
		return 2;
	}
	if (!nr_outs)
		outs[nr_outs++] = default_out[fmt < 0 ? OUT_FIREFOX : fmt];
	if (!strcmp(mode, "auto")) {
		ro.mode = EVPROF_RECORDER_AUTO;
	} else if (!strcmp(mode, "task")) {
		ro.mode = EVPROF_RECORDER_TASK;
	} else if (!strcmp(mode, "cpu")) {
		ro.mode = EVPROF_RECORDER_CPU;
	} else {
		cli_err("--mode takes auto, task or cpu");
		return 2;
	}
	if (tg.system_wide && ro.mode == EVPROF_RECORDER_TASK) {
		cli_err("-a records per CPU: --mode task does not apply");
		return 2;
	}
	if (pid_list) {
		int n = cli_parse_pids(pid_list, &pids);

		if (n < 0)
			return 2;
		tg.pids = pids;
		tg.nr_pids = (size_t)n;
	}
	if (argc)
		tg.argv = argv;
	ro.no_timeline = continuous
			     ? fmt != OUT_FIREFOX
			     : !out_wants_timeline(outs, (size_t)nr_outs, fmt);
	/* Refused now, before the command runs, not after it ran. */
	for (int i = 0; i < nr_outs; i++) {
		bool in_dir;

		err = out_check(outs[i], &in_dir);
		if (err) {
			cli_err("cannot write %s: %s%s", outs[i],
				strerror(-err),
				in_dir ? " (no new file can be made in its "
					 "directory)"
				       : "");
			goto out;
		}
	}

	if (push.nr_tags && !push.url) {
		cli_err("--tag labels pushed profiles: it needs --push");
		return 2;
	}
	/* Refused before recording: bad labels, no libcurl. */
	if (push.url && !(pusher = cli_pusher_new(&push)))
		goto out;

	r = evprof_recorder__new(&tg, events, &ro);
	if (!r) {
		if (errno >= EVPROF_ERR_FIRST || errno == E2BIG)
			ret = 2; /* a bad event list, already said */
		else if (argc && errno != EINVAL)
			cli_err("cannot record '%s': %s", argv[0],
				strerror(errno));
		goto out;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	clock_gettime(CLOCK_REALTIME, &t0);
	err = evprof_recorder__start(r);
	if (err && argc) {
		cli_err("cannot run '%s': %s", argv[0], strerror(-err));
		ret = 127;
		goto out;
	}
	if (err)
		goto out;
	/* Attached or system-wide: from here on, it all counts. */
	if (!argc)
		cli_err("recording %s%s", pid_list ? "pid " : "",
			pid_list ? pid_list : "every CPU");
	if (continuous) {
		cont.fmt = fmt < 0 ? OUT_PPROF : (enum out_format)fmt;
		cont.weight = weight;
		cont.pusher = pusher;
		cont.rate = (unsigned int)ro.freq;
		if (cont_init(&cont, r))
			goto out;
		status = record_loop(r, duration, cont_tick, &cont);
		ret = argc ? cli_exit_code(status) : 0;
		if (cont_finish(&cont))
			ret = ret ? ret : 1;
		/* Lost records and samples are said for windows too. */
		summary(r, cont.dir ? cont.dir : "windows (pushed)");
		goto push_end;
	}
	status = record_loop(r, duration, NULL, NULL);
	clock_gettime(CLOCK_REALTIME, &t1);
	ret = argc ? cli_exit_code(status) : 0;

	prof = evprof_recorder__profile(r, NULL);
	if (!prof) {
		cli_err("cannot build the profile: %s", evprof_strerror(errno));
		ret = ret ? ret : 1;
		goto out;
	}
	weight = check_weight(r, prof, weight);
	/* Queued first: it goes out while the files are written. */
	if (pusher &&
	    cli_push_profile(
		pusher, prof,
		(uint64_t)t0.tv_sec * 1000000000ull + (uint64_t)t0.tv_nsec,
		(uint64_t)t1.tv_sec * 1000000000ull + (uint64_t)t1.tv_nsec,
		(unsigned int)ro.freq))
		ret = ret ? ret : 1;
	for (int i = 0; i < nr_outs; i++) {
		enum out_format f =
		    fmt < 0 ? out_format_of(outs[i]) : (enum out_format)fmt;
		const char *w = weight;

		/* Firefox thread tracks weigh samples; ns have own tracks. */
		if (f == OUT_FIREFOX && is_weight_type(prof, weight)) {
			cli_err("--weight %s: %s is weighed by samples (its "
				"%s tracks hold the ns)",
				weight, outs[i], weight);
			w = NULL;
		}
		err = out_write_somewhere(prof, outs[i], f, w, saved,
					  sizeof(saved));
		if (err) {
			cli_err("cannot write %s: %s", outs[i],
				evprof_strerror(err));
			ret = ret ? ret : 1;
		}
	}
	summary(r, saved);
push_end:
	if (pusher) {
		if (cli_push_finish(pusher, push.wait_s))
			ret = ret ? ret : 1;
		pusher = NULL;
	}
out:
	cont_free(&cont);
	evprof_pusher__free(pusher);
	evprof_profile__free(prof);
	evprof_recorder__free(r);
	free(pids);
	return ret;
}
