/* SPDX-License-Identifier: MIT */
/* The evprof command line: one entry point per subcommand. */
#ifndef EVPROF_CLI_H
#define EVPROF_CLI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

int cmd_stat(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_import(int argc, char **argv);
int cmd_view(int argc, char **argv);

/* Each command's --help text: also its man page's synopsis and options. */
extern const char cli_stat_usage[];
extern const char cli_info_usage[];
extern const char cli_record_usage[];
extern const char cli_report_usage[];
extern const char cli_diff_usage[];
extern const char cli_import_usage[];
extern const char cli_view_usage[];

/*
 * One option of a command: its names, and what it does to the command's
 * options struct o. parse takes the argument (NULL without one) and
 * returns 0, or -1 after a message (the command exits 2); without parse,
 * the field at off is set: to the argument, or to true.
 */
struct cli_opt {
	const char *name; /* --name */
	char short_name;  /* -c, or 0: long only */
	bool arg;	  /* takes an argument */
	int (*parse)(void *o, const char *arg);
	size_t off;
};

/* The field is checked to be what the parser stores (a type error else). */
#define CLI_OPT_STR(name, c, type, field)                                      \
	{                                                                      \
		name, c, true, NULL,                                           \
		    offsetof(type, field) +                                    \
			0 * sizeof(_Generic(((type *)0)->field,                \
					    const char * : 1))                 \
	}
#define CLI_OPT_FLAG(name, c, type, field)                                     \
	{                                                                      \
		name, c, false, NULL,                                          \
		    offsetof(type, field) +                                    \
			0 * sizeof(_Generic(((type *)0)->field, bool : 1))     \
	}
#define CLI_OPT_FN(name, c, arg, fn)                                           \
	{                                                                      \
		name, c, arg, fn, 0                                            \
	}

#define CLI_OPTS_MAX 32

/* A command's option table, in the order getopt lists ambiguous names. */
struct cli_opts {
	const char *usage; /* --help, and after an option refused */
	bool in_order;	   /* the first operand ends the options (a command) */
	struct cli_opt opt[CLI_OPTS_MAX]; /* up to the first without a name */
};

/* A step of a command that lets the next one run (else: the exit status). */
#define CLI_GO_ON (-1)

/*
 * Parses argv's options into o by c's table with getopt_long(), plus
 * -h/--help. Returns CLI_GO_ON with *first the index of the first
 * operand, or the exit status: 0 after --help (the usage on stdout), 2
 * after a message (one line for an option refused, with the nearest name).
 */
int cli_parse_opts(const struct cli_opts *c, int argc, char **argv, void *o,
		   int *first);

/* The kernel feature probes, one line each (info and --version). */
void cli_print_features(void);

/* CLOCK_MONOTONIC in ns. */
uint64_t cli_now_ns(void);

struct evprof_profile;

/* Output formats of record and report (output.c). */
enum out_format {
	OUT_FIREFOX,
	OUT_FOLDED,
	OUT_PPROF,
	OUT_SPEEDSCOPE,
	OUT_PAGE,
	OUT_SVG
};

/* "firefox", "folded", "pprof", "speedscope" or "svg" as a format, or -1. */
int out_parse_format(const char *name);
/*
 * The format a file name asks for (.folded, .pb.gz, .pprof, .html; else
 * firefox).
 */
enum out_format out_format_of(const char *path);
/*
 * 0 when path can be written: its name says a format, or fmt (>= 0) does,
 * or it is "-" (stdout) or an existing device or pipe; else -EINVAL after
 * a message listing the names.
 */
int out_named(const char *path, int fmt);
/* Where path is written: "-" is stdout. */
const char *out_path(const char *path);
/*
 * Writes p to path in fmt, weighed by counter weight (NULL: samples; the
 * page opens weighed by it).
 */
int out_write(const struct evprof_profile *p, const char *path,
	      enum out_format fmt, const char *weight);

/*
 * -p PID[,PID...]: *pids receives a malloc'ed array (the caller frees it)
 * of processes that exist. Returns their number, or -1 after a message
 * (*pids NULL).
 */
int cli_parse_pids(const char *list, pid_t **pids);

/* --cgroup PATH, repeatable (record and stat, with -a). */
#define CLI_CGROUPS_MAX 64
struct cli_cgroups {
	const char *v[CLI_CGROUPS_MAX];
	size_t n;
};

/* Adds arg to c; -1 after a message when full. */
int cli_cgroup_add(struct cli_cgroups *c, const char *arg);

struct evprof_cgroup_fs;
struct evprof_cgroup;

/*
 * The perf_event hierarchy --cgroup paths resolve in; -errno after a
 * message.
 */
int cli_cgroup_fs(struct evprof_cgroup_fs *fs);

/*
 * Resolves path in fs into cg and opens its directory (CLOEXEC): the fd
 * perf_event_open() takes with PERF_FLAG_PID_CGROUP, or -errno after a
 * message (the words of record's).
 */
int cli_cgroup_open(const struct evprof_cgroup_fs *fs, const char *path,
		    struct evprof_cgroup *cg);

/* A CLOEXEC pidfd that polls readable once pid exits, or -errno. */
int cli_pidfd_open(pid_t pid);

/* Shell-style exit status of a wait status: the code, or 128 + signal. */
int cli_exit_code(int status);

/*
 * Checks before recording that path can be written: an existing non-regular
 * file (a device, a pipe) opens for writing; else the file, if it exists, is
 * writable and its directory takes a new file (profiles are written to a
 * temporary file there, then renamed). Returns 0 or -errno; *in_dir tells
 * whether the directory failed.
 */
int out_check(const char *path, bool *in_dir);

/* True when p has a column (samples, cpu, a counter or a weight type) of
 * that name: what --weight may name. */
bool out_has_column(const struct evprof_profile *p, const char *name);
/* Says p has no column name (with a "did you mean" and the list). */
void out_no_column(const struct evprof_profile *p, const char *name,
		   const char *path);

/* The page's title: FILE's name, or "evprof diff: BASE vs NEW" with a
 * base (the names without their directories), in buf of n bytes. */
const char *out_page_title(char *buf, size_t n, const char *base,
			   const char *path);

/*
 * out_write(), and when the place fails (full disk, no permission...) the
 * same profile under $TMPDIR, /tmp, /var/tmp or $HOME, said on stderr.
 * saved receives the path written. Returns 0 or the first -errno.
 */
/*
 * Where a timeline spills (a file unlinked at creation): $TMPDIR, else
 * /var/tmp, on disk where /tmp may be memory.
 */
const char *cli_spill_dir(void);
/*
 * Where inflated debug files are kept (evprof_symbolizer_opts
 * .debug_cache_dir): $EVPROF_DEBUG_CACHE (empty: nowhere), else
 * $XDG_CACHE_HOME/evprof/debug, else $HOME/.cache/evprof/debug; NULL for
 * nowhere.
 */
const char *cli_debug_cache_dir(void);
/*
 * On stderr, for each image whose code without symbols holds 10% or more
 * of column (NULL: CPU time, else samples): how to get its symbols.
 */
void cli_symbol_hints(const struct evprof_profile *p, const char *column);

/*
 * What a container left out of evprof's view, one line each between
 * prefix and end (evprof_proc__confinement()): the host's cgroup
 * namespace, and with attached (-a, -p) its pid namespace and /proc; a
 * seccomp filter where CPU-wide events do not open. Returns the lines
 * said.
 */
int cli_say_confinement(FILE *f, const char *prefix, bool attached,
			const char *end);
/* true when some output of outs[n] (in fmt, or by name when fmt < 0) is
 * the Firefox one, the only reader of a timeline. */
bool out_wants_timeline(const char *const *outs, size_t n, int fmt);
int out_write_somewhere(const struct evprof_profile *p, const char *path,
			enum out_format fmt, const char *weight, char *saved,
			size_t len);

/* Why .html outputs and evprof view fail in a build without the page. */
extern const char cli_page_missing[];

/* --push and --tag (push.c). */
#define CLI_PUSH_TAGS_MAX 16
struct cli_push_conf {
	const char *url;		     /* NULL: no push */
	const char *tags[CLI_PUSH_TAGS_MAX]; /* "key=value" */
	int nr_tags;
	int labels;	     /* --push-label: evprof_pprof_cgroup_labels bits */
	unsigned int wait_s; /* how long the end waits for the sender */
	unsigned int timeout_ms; /* one attempt; 0: the library's */
};
struct evprof_pusher;
/* Adds a --tag KEY=VALUE. Returns 0, or -1 after a message. */
int cli_push_tag(struct cli_push_conf *c, const char *kv);
/*
 * Adds --push-label LIST: sample labels pushed besides process_name
 * (cgroup, container_id, pod_uid, qos_class). Returns 0, or -1 after a
 * message.
 */
int cli_push_label(struct cli_push_conf *c, const char *list);
/*
 * A pusher for c->url: app name from the tag service_name (default
 * "evprof"), labels from the other tags plus hostname, pmu and cpu;
 * credentials from EVPROF_PUSH_USER/_PASSWORD, _TOKEN, _TENANT and
 * _CA_FILE; the queue's length from EVPROF_PUSH_QUEUE. NULL after a
 * message.
 */
struct evprof_pusher *cli_pusher_new(struct cli_push_conf *c);
/*
 * Queues p (one window, wall-clock ns bounds, sampling rate in Hz or 0) as
 * pprof with process-level sample labels and the cgroup labels asked for
 * (cli_push_conf.labels). Returns 0 or -errno after a
 * message. Never waits on the network: a continuous recording calls it per
 * window.
 */
int cli_push_profile(struct evprof_pusher *pu, const struct evprof_profile *p,
		     uint64_t start_ns, uint64_t end_ns, unsigned int rate,
		     int labels);
/*
 * Waits up to wait_s for the queue to drain, reports what was sent,
 * rejected, dropped or left unsent, and frees pu. Returns 0 when every
 * window was sent, else -1.
 */
int cli_push_finish(struct evprof_pusher *pu, unsigned int wait_s);

/* Prints "evprof: <message>\n" to stderr. */
__attribute__((format(printf, 1, 2))) void cli_err(const char *fmt, ...);

#endif /* EVPROF_CLI_H */
