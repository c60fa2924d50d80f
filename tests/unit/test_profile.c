// SPDX-License-Identifier: MIT
/*
 * Profile model and writers. A profile is built by hand from the tables
 * below; the expected folded lines and Firefox columns are computed here
 * from those same tables, never from the writers' earlier output. Firefox
 * files are also checked by tests/tools/fxcheck.mjs and loaded by the
 * Firefox Profiler's own loader (tests/tools/fxload.sh).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <setjmp.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>

#include <cmocka.h>

#include <evprof/profile.h>

#include "cases.h"

#define START_MONO 5000000000ULL /* ns */
#define START_WALL 1700000000123456789ULL
#define US	   1000ULL

/* ---- the profile, as tables ---------------------------------------------- */

enum { L_APP, L_LIBC, NR_LIBS };
enum { P_APP, P_TOOL, NR_PROCS };
enum { T_APP, T_WORK, T_TOOL, T_TOOL2, NR_THREADS };
enum { C_PF, C_CS, NR_COUNTERS };
static const char *const counter_names[NR_COUNTERS] = {"page-faults",
						       "context-switches"};

static const uint8_t app_build_id[20] = {
    0x51, 0x0d, 0x0a, 0x5c, 0x19, 0xea, 0xdf, 0x80, 0x43, 0xf2,
    0x03, 0xb4, 0x52, 0x5b, 0xe9, 0xbe, 0x3d, 0xcb, 0x95, 0x54,
};

static const struct {
	int proc, tid;
	const char *name;
} threads[NR_THREADS] = {
    [T_APP] = {P_APP, 100, "app"},
    [T_WORK] = {P_APP, 101, "worker"},
    [T_TOOL] = {P_TOOL, 200, "tool"},
    [T_TOOL2] = {P_TOOL, 201, "tool"}, /* same name: folded merges */
};

enum {
	F_MAIN,
	F_COMPUTE,
	F_INL,
	F_WORKER,
	F_MEMSET,
	F_ANON,
	F_PF,
	F_SYS,
	F_WEIRD,
	F_BAD,
	NR_FRAMES
};
static const struct evprof_profile_frame frame_tab[NR_FRAMES] = {
    [F_MAIN] = {.lib = L_APP,
		.address = 0x1010,
		.function = "main",
		.file = "app.c",
		.line = 10,
		.symbol_address = 0x1000,
		.symbol_size = 0x100},
    [F_COMPUTE] = {.lib = L_APP,
		   .address = 0x1180,
		   .function = "compute",
		   .file = "app.c",
		   .line = 20,
		   .symbol_address = 0x1150,
		   .symbol_size = 0x80},
    [F_INL] = {.lib = L_APP,
	       .address = 0x1180,
	       .function = "inlined_helper",
	       .file = "helper.h",
	       .line = 3,
	       .inline_depth = 1},
    [F_WORKER] = {.lib = L_APP,
		  .address = 0x1240,
		  .function = "worker_loop",
		  .file = "app.c",
		  .line = 30},
    [F_MEMSET] = {.lib = L_LIBC, .address = 0x2000, .function = "memset"},
    [F_ANON] = {.lib = L_LIBC, .address = 0x1234}, /* named "0x1234" */
    [F_PF] = {.lib = -1,
	      .address = 0xffffffff81000010ULL,
	      .function = "asm_exc_page_fault",
	      .kernel = true},
    [F_SYS] = {.lib = -1,
	       .address = 0xffffffff81000200ULL,
	       .function = "do_syscall_64",
	       .kernel = true},
    [F_WEIRD] = {.lib = L_APP,
		 .address = 0x1300,
		 .function = "weird \"q\" \\ \x01 ;semi"},
    [F_BAD] = {.lib = L_APP, .address = 0x1310, .function = "bad\xff"},
};

/* Stacks, root first, -1 terminated. */
#define MAX_DEPTH 8
enum {
	S_MAIN,
	S_COMPUTE,
	S_PF,
	S_WORK,
	S_WORK_SYS,
	S_WEIRD,
	S_BAD,
	S_SYS,
	NR_STACKS
};
static const int stack_tab[NR_STACKS][MAX_DEPTH] = {
    [S_MAIN] = {F_MAIN, -1},
    [S_COMPUTE] = {F_MAIN, F_COMPUTE, -1},
    [S_PF] = {F_MAIN, F_COMPUTE, F_INL, F_MEMSET, F_PF, -1},
    [S_WORK] = {F_MAIN, F_WORKER, -1},
    [S_WORK_SYS] = {F_MAIN, F_WORKER, F_SYS, -1},
    [S_WEIRD] = {F_MAIN, F_WEIRD, -1},
    [S_BAD] = {F_MAIN, F_BAD, F_ANON, -1},
    [S_SYS] = {F_SYS, -1}, /* a kernel-only stack */
};

#define NONE UINT64_MAX /* no counter value */
static const struct {
	int thread, stack; /* stack -1: no stack */
	uint64_t t_us, weight, cpu_ns;
	uint64_t c[NR_COUNTERS];
} sample_tab[] = {
    {T_APP, S_COMPUTE, 1000, 1, 1000000, {0, 1}},
    {T_APP, S_PF, 2000, 1, 1000000, {5, 0}},
    {T_APP, S_PF, 4000, 1, 999000, {4, NONE}}, /* out of order */
    {T_APP, S_COMPUTE, 3000, 1, 1500, {2, NONE}},
    {T_APP, -1, 5000, 1, 0, {NONE, NONE}},
    {T_APP, S_WEIRD, 5500, 2, 250000, {NONE, 2}},
    {T_APP, S_BAD, 6000, 1, 1000000, {1, 1}},
    {T_WORK, S_WORK, 1500, 1, 1000000, {1, 1}},
    {T_WORK, S_WORK_SYS, 2500, 1, 500000, {NONE, 3}},
    {T_WORK, S_WORK, 3500, 3, 0, {7, NONE}},
    {T_TOOL, S_COMPUTE, 1200, 1, 1000000, {10, 0}},
    {T_TOOL, S_SYS, 1700, 1, 1000000, {0, 4}},
    {T_TOOL2, S_COMPUTE, 1300, 1, 1000000, {20, 1}},
};
#define NR_SAMPLES (sizeof(sample_tab) / sizeof(sample_tab[0]))

static char tmpdir[] = "/tmp/evprof-profile-XXXXXX";
static char srcdir[4096];
static int stack_idx[NR_STACKS];

static struct evprof_profile *build_profile(void)
{
	struct evprof_profile_opts o = {
	    .sz = sizeof(o),
	    .product = "evprof ./app",
	    .os = "Linux 6.18.0",
	    .start_wall_ns = START_WALL,
	    .start_mono_ns = START_MONO,
	    .interval_ns = 1000000,
	};
	struct evprof_profile_lib libs[NR_LIBS] = {
	    [L_APP] = {.path = "/usr/bin/app",
		       .build_id = app_build_id,
		       .build_id_len = sizeof(app_build_id),
		       .arch = "x86_64"},
	    [L_LIBC] = {.path = "/usr/lib/libc.so.6"},
	};
	int procs[NR_PROCS], thr[NR_THREADS], frames[NR_FRAMES];
	struct evprof_profile *p = evprof_profile__new(&o);
	size_t i;
	int k;

	assert_non_null(p);
	assert_int_equal(
	    evprof_profile__add_note(p, "cycles not supported -> cpu-clock"),
	    0);
	for (i = 0; i < NR_COUNTERS; i++)
		assert_int_equal(
		    evprof_profile__add_counter(p, counter_names[i]), (int)i);
	for (i = 0; i < NR_LIBS; i++)
		assert_int_equal(evprof_profile__add_lib(p, &libs[i]), (int)i);
	procs[P_APP] = evprof_profile__add_process(p, 100, "app", 0);
	procs[P_TOOL] =
	    evprof_profile__add_process(p, 200, "tool", START_MONO + 1000 * US);
	assert_int_equal(procs[P_APP], 0);
	assert_int_equal(procs[P_TOOL], 1);
	/* The worker is added first: the writer must still list app first. */
	thr[T_WORK] = evprof_profile__add_thread(p, procs[P_APP], 101, "worker",
						 START_MONO + 1400 * US);
	thr[T_APP] = evprof_profile__add_thread(p, procs[P_APP], 100, "app", 0);
	thr[T_TOOL] =
	    evprof_profile__add_thread(p, procs[P_TOOL], 200, "tool", 0);
	thr[T_TOOL2] =
	    evprof_profile__add_thread(p, procs[P_TOOL], 201, "tool", 0);
	for (i = 0; i < NR_THREADS; i++)
		assert_true(thr[i] >= 0);
	/* Far beyond the last sample: the writer keeps it near the samples. */
	assert_int_equal(evprof_profile__end_thread(p, thr[T_WORK],
						    START_MONO + 60000000 * US),
			 0);
	assert_int_equal(evprof_profile__end_process(p, procs[P_TOOL],
						     START_MONO + 1800 * US),
			 0);

	for (i = 0; i < NR_FRAMES; i++) {
		frames[i] = evprof_profile__frame(p, &frame_tab[i]);
		assert_true(frames[i] >= 0);
	}
	for (i = 0; i < NR_STACKS; i++) {
		int s = -1;

		for (k = 0; stack_tab[i][k] >= 0; k++) {
			s = evprof_profile__stack(p, s,
						  frames[stack_tab[i][k]]);
			assert_true(s >= 0);
		}
		stack_idx[i] = s;
	}
	for (i = 0; i < NR_SAMPLES; i++) {
		uint64_t vals[NR_COUNTERS] = {0};
		struct evprof_profile_sample s = {
		    .time_ns = START_MONO + sample_tab[i].t_us * US,
		    .stack = sample_tab[i].stack < 0
				 ? -1
				 : stack_idx[sample_tab[i].stack],
		    .weight = sample_tab[i].weight,
		    .cpu_delta_ns = sample_tab[i].cpu_ns,
		    .counters = vals,
		};

		for (k = 0; k < NR_COUNTERS; k++) {
			if (sample_tab[i].c[k] == NONE)
				continue;
			s.has_counters |= 1ULL << k;
			vals[k] = sample_tab[i].c[k];
		}
		assert_int_equal(evprof_profile__add_sample(
				     p, thr[sample_tab[i].thread], &s),
				 0);
	}
	return p;
}

/* ---- helpers ------------------------------------------------------------- */

static char *path_in_tmp(const char *name)
{
	static char buf[8][512];
	static int n;
	char *b = buf[n++ % 8];

	snprintf(b, sizeof(buf[0]), "%s/%s", tmpdir, name);
	return b;
}

static char *slurp(const char *path, size_t *len)
{
	gzFile gz = gzopen(path, "rb"); /* reads plain files as they are */
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap + 1);
	int got;

	assert_non_null(gz);
	assert_non_null(buf);
	while ((got = gzread(gz, buf + n, (unsigned)(cap - n))) > 0) {
		n += (size_t)got;
		if (n == cap) {
			cap *= 2;
			buf = realloc(buf, cap + 1);
			assert_non_null(buf);
		}
	}
	assert_int_equal(got, 0);
	gzclose(gz);
	buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static bool exists(const char *path)
{
	struct stat st;

	return stat(path, &st) == 0;
}

/* Folded text of one name: separators become '_' (FlameGraph's format). */
static void folded_name(char *out, size_t size, const char *name, bool kernel)
{
	size_t n = strlen(out), i;

	for (i = 0; name[i] && n + 1 < size; i++)
		out[n++] = strchr(";\n\r", name[i]) ? '_' : name[i];
	out[n] = 0;
	if (kernel)
		strncat(out, "_[k]", size - n - 1);
}

static void frame_name(char *out, size_t size, int f)
{
	if (frame_tab[f].function)
		snprintf(out, size, "%s", frame_tab[f].function);
	else
		snprintf(out, size, "0x%llx",
			 (unsigned long long)frame_tab[f].address);
}

struct exp_line {
	char text[512];
	uint64_t sum;
};

static int cmp_exp(const void *a, const void *b)
{
	return strcmp(((const struct exp_line *)a)->text,
		      ((const struct exp_line *)b)->text);
}

/* Expected folded output for weights by sample (counter -1) or counter. */
static char *expected_folded(int counter)
{
	static struct exp_line lines[NR_SAMPLES];
	size_t n = 0, i, j, len = 0;
	char *out = malloc(NR_SAMPLES * 600);

	assert_non_null(out);
	for (i = 0; i < NR_SAMPLES; i++) {
		struct exp_line l = {"", 0};
		int st = sample_tab[i].stack, k;

		folded_name(l.text, sizeof(l.text),
			    threads[sample_tab[i].thread].name, false);
		for (k = 0; st >= 0 && stack_tab[st][k] >= 0; k++) {
			char name[128];
			int f = stack_tab[st][k];

			frame_name(name, sizeof(name), f);
			strcat(l.text, ";");
			folded_name(l.text, sizeof(l.text), name,
				    frame_tab[f].kernel);
		}
		if (counter < 0)
			l.sum = sample_tab[i].weight;
		else if (sample_tab[i].c[counter] != NONE)
			l.sum = sample_tab[i].c[counter];
		for (j = 0; j < n && strcmp(lines[j].text, l.text); j++)
			;
		if (j == n)
			lines[n++] = l;
		else
			lines[j].sum += l.sum;
	}
	qsort(lines, n, sizeof(lines[0]), cmp_exp);
	out[0] = 0;
	for (i = 0; i < n; i++)
		if (lines[i].sum)
			len += (size_t)sprintf(
			    out + len, "%s %llu\n", lines[i].text,
			    (unsigned long long)lines[i].sum);
	return out;
}

static void assert_folded(const char *path, int counter)
{
	char *got = slurp(path, NULL), *want = expected_folded(counter);
	char *g = got, *w = want;

	/* Line by line, so a failure names the line. */
	while (*g || *w) {
		size_t gl = strcspn(g, "\n"), wl = strcspn(w, "\n");

		if (gl != wl || memcmp(g, w, gl)) {
			print_error(
			    "folded line differs:\n got: %.*s\nwant: %.*s\n",
			    (int)gl, g, (int)wl, w);
			fail();
		}
		g += gl + (g[gl] == '\n');
		w += wl + (w[wl] == '\n');
	}
	free(got);
	free(want);
}

/* ---- tests --------------------------------------------------------------- */

/*
 * The libs whose frames no symbol names ("LIB+0x...", "0x...") are the
 * leaves of a share of a column: 60 of 100 ms in liblzma's unnamed code,
 * 20 in its named compress (not counted), 15 in app's address, 5 in the
 * kernel.
 */
static void test_unnamed_libs(void **state)
{
	struct evprof_profile_opts o = {.sz = sizeof(o), .product = "t"};
	struct evprof_profile *p = evprof_profile__new(&o);
	struct evprof_profile_lib lz = {.path = "/usr/lib/liblzma.so.5"};
	struct evprof_profile_lib app = {.path = "/usr/bin/app",
					 .build_id = app_build_id,
					 .build_id_len = sizeof(app_build_id)};
	struct evprof_profile_frame f[4] = {
	    {.function = "liblzma.so.5+0x100", .address = 0x104},
	    {.function = "compress", .address = 0x200},
	    {.address = 0x4005},
	    {.lib = -1, .function = "clear_page", .kernel = true},
	};
	const uint64_t ms[4] = {60, 20, 15, 5};
	struct evprof_profile_unnamed u[2];
	int thr;

	(void)state;
	assert_non_null(p);
	f[0].lib = f[1].lib = evprof_profile__add_lib(p, &lz);
	f[2].lib = evprof_profile__add_lib(p, &app);
	thr = evprof_profile__add_thread(
	    p, evprof_profile__add_process(p, 1, "app", 0), 1, "app", 0);
	for (int i = 0; i < 4; i++) {
		struct evprof_profile_sample s = {
		    .time_ns = 1 + (uint64_t)i,
		    .stack = evprof_profile__stack(
			p, -1, evprof_profile__frame(p, &f[i])),
		    .weight = 1,
		    .cpu_delta_ns = ms[i] * 1000000};

		assert_int_equal(evprof_profile__add_sample(p, thr, &s), 0);
	}
	assert_int_equal(evprof_profile__unnamed_libs(p, NULL, 0.1, u, 2), 2);
	assert_string_equal(u[0].path, "/usr/lib/liblzma.so.5");
	assert_string_equal(u[0].name, "liblzma.so.5");
	assert_string_equal(u[0].column, "cpu");
	assert_true(u[0].share > 0.599 && u[0].share < 0.601);
	assert_null(u[0].build_id);
	assert_string_equal(u[1].path, "/usr/bin/app");
	assert_int_equal(u[1].build_id_len, sizeof(app_build_id));
	assert_memory_equal(u[1].build_id, app_build_id, sizeof(app_build_id));
	assert_true(u[1].share > 0.149 && u[1].share < 0.151);
	/* Above the threshold only; counted even where out has no room. */
	assert_int_equal(evprof_profile__unnamed_libs(p, "cpu", 0.2, u, 2), 1);
	assert_int_equal(evprof_profile__unnamed_libs(p, NULL, 0.1, NULL, 0),
			 2);
	/* By samples: one each of 4. */
	assert_int_equal(evprof_profile__unnamed_libs(p, "samples", 0.25, u, 2),
			 2);
	assert_string_equal(u[0].column, "samples");
	assert_true(u[0].share > 0.249 && u[0].share < 0.251);
	assert_int_equal(evprof_profile__unnamed_libs(p, "nope", 0.1, u, 2),
			 -ENOENT);
	assert_int_equal(evprof_profile__unnamed_libs(NULL, NULL, 0.1, u, 2),
			 -EINVAL);
	evprof_profile__free(p);
}

static void test_interning(void **state)
{
	struct evprof_profile *p = build_profile();
	struct evprof_profile_stats st = {.sz = sizeof(st)};
	struct evprof_profile_frame f = frame_tab[F_COMPUTE];
	struct evprof_profile_lib lib = {.path = "/usr/bin/app",
					 .build_id = app_build_id,
					 .build_id_len = sizeof(app_build_id)};
	struct evprof_profile_sample s = {.time_ns = 1, .stack = 1000};
	uint64_t v = 1;
	int a, b;

	(void)state;
	/* Same inputs, same indices; different build id, new lib. */
	assert_int_equal(evprof_profile__add_lib(p, &lib), L_APP);
	lib.build_id_len = 19;
	assert_int_equal(evprof_profile__add_lib(p, &lib), NR_LIBS);
	a = evprof_profile__frame(p, &f);
	b = evprof_profile__frame(p, &f);
	assert_true(a >= 0);
	assert_int_equal(a, b);
	f.line = 21;
	assert_int_not_equal(evprof_profile__frame(p, &f), a);
	assert_int_equal(evprof_profile__stack(p, -1, 0), stack_idx[S_MAIN]);
	assert_int_equal(evprof_profile__stack(p, stack_idx[S_MAIN], a),
			 stack_idx[S_COMPUTE]);
	/* Parents come first. */
	assert_true(stack_idx[S_PF] > stack_idx[S_COMPUTE]);

	evprof_profile__stats(p, &st);
	assert_int_equal(st.samples, NR_SAMPLES);
	assert_int_equal(st.processes, NR_PROCS);
	assert_int_equal(st.threads, NR_THREADS);
	assert_int_equal(st.counters, NR_COUNTERS);
	/* Shared prefixes: 1 + 1 + 3 + 1 + 1 + 1 + 2 + 1 stacks. */
	assert_int_equal(st.stacks, 11);

	/* Bad arguments. */
	assert_int_equal(evprof_profile__stack(p, 1000, 0), -EINVAL);
	assert_int_equal(evprof_profile__stack(p, -1, 1000), -EINVAL);
	assert_int_equal(evprof_profile__add_sample(p, 0, &s), -EINVAL);
	s.stack = -1;
	assert_int_equal(evprof_profile__add_sample(p, NR_THREADS, &s),
			 -EINVAL);
	s.has_counters = 1ULL << NR_COUNTERS;
	s.counters = &v;
	assert_int_equal(evprof_profile__add_sample(p, 0, &s), -EINVAL);
	f.lib = NR_LIBS + 5;
	assert_int_equal(evprof_profile__frame(p, &f), -EINVAL);
	assert_int_equal(evprof_profile__add_thread(p, 7, 1, "x", 0), -EINVAL);
	/* Known counters keep their index; new ones are refused after samples.
	 */
	assert_int_equal(evprof_profile__add_counter(p, "context-switches"),
			 C_CS);
	assert_int_equal(evprof_profile__add_counter(p, "instructions"),
			 -EBUSY);
	evprof_profile__free(p);
	evprof_profile__free(NULL);
}

static void test_folded(void **state)
{
	struct evprof_profile *p = build_profile();
	char *a, *b;
	FILE *f;

	(void)state;
	assert_int_equal(
	    evprof_profile__write_folded(p, path_in_tmp("p.folded"), NULL), 0);
	assert_false(exists(path_in_tmp("p.folded.tmp")));
	assert_folded(path_in_tmp("p.folded"), -1);

	/* The FILE * variant writes the same bytes; .gz compresses. */
	f = fopen(path_in_tmp("p2.folded"), "w");
	assert_non_null(f);
	assert_int_equal(evprof_profile__write_folded_file(p, f, NULL), 0);
	fclose(f);
	assert_int_equal(
	    evprof_profile__write_folded(p, path_in_tmp("p.folded.gz"), NULL),
	    0);
	a = slurp(path_in_tmp("p.folded"), NULL);
	b = slurp(path_in_tmp("p2.folded"), NULL);
	assert_string_equal(a, b);
	free(b);
	b = slurp(path_in_tmp("p.folded.gz"), NULL);
	assert_string_equal(a, b);
	free(a);
	free(b);
	evprof_profile__free(p);
}

static void test_folded_weight_counter(void **state)
{
	struct evprof_profile *p = build_profile();
	struct evprof_folded_opts o = {.sz = sizeof(o)};
	uint64_t total = 0, got = 0;
	char *text, *line;
	size_t i;

	(void)state;
	o.weight_counter = "page-faults";
	assert_int_equal(
	    evprof_profile__write_folded(p, path_in_tmp("pf.folded"), &o), 0);
	assert_folded(path_in_tmp("pf.folded"), C_PF);
	o.weight_counter = "context-switches";
	assert_int_equal(
	    evprof_profile__write_folded(p, path_in_tmp("cs.folded"), &o), 0);
	assert_folded(path_in_tmp("cs.folded"), C_CS);

	/* Conservation: the lines sum to the counter's total. */
	for (i = 0; i < NR_SAMPLES; i++)
		if (sample_tab[i].c[C_PF] != NONE)
			total += sample_tab[i].c[C_PF];
	text = slurp(path_in_tmp("pf.folded"), NULL);
	for (line = strtok(text, "\n"); line; line = strtok(NULL, "\n"))
		got += strtoull(strrchr(line, ' ') + 1, NULL, 10);
	assert_int_equal(got, total);
	free(text);

	o.weight_counter = "instructions";
	assert_int_equal(
	    evprof_profile__write_folded(p, path_in_tmp("x.folded"), &o),
	    -ENOENT);
	assert_false(exists(path_in_tmp("x.folded")));
	evprof_profile__free(p);
}

static void fmt_ms(char *out, size_t size, int64_t ns)
{
	snprintf(out, size, "%g", (double)ns / 1e6);
}

/* Time-sorted (stable) sample rows of thread t; returns their count. */
static size_t thread_rows(int t, size_t *rows)
{
	size_t n = 0, i, j;

	for (i = 0; i < NR_SAMPLES; i++) {
		if (sample_tab[i].thread != t)
			continue;
		for (j = n;
		     j > 0 && sample_tab[rows[j - 1]].t_us > sample_tab[i].t_us;
		     j--)
			rows[j] = rows[j - 1];
		rows[j] = i;
		n++;
	}
	return n;
}

/* The samples columns the writer must produce for thread t. */
static void expected_columns(int t, char *out, size_t size, int weight_counter)
{
	size_t rows[NR_SAMPLES], n = thread_rows(t, rows), i, len;
	uint64_t prev = 0;
	char num[64];
	int c;

	len = (size_t)snprintf(out, size, "\"stack\":[");
	for (i = 0; i < n; i++) {
		int s = sample_tab[rows[i]].stack;

		if (s < 0)
			len += (size_t)snprintf(out + len, size - len, "%snull",
						i ? "," : "");
		else
			len += (size_t)snprintf(out + len, size - len, "%s%d",
						i ? "," : "", stack_idx[s]);
	}
	len += (size_t)snprintf(out + len, size - len, "],\"timeDeltas\":[");
	for (i = 0; i < n; i++) {
		fmt_ms(num, sizeof(num),
		       (int64_t)((sample_tab[rows[i]].t_us - prev) * US));
		prev = sample_tab[rows[i]].t_us;
		len += (size_t)snprintf(out + len, size - len, "%s%s",
					i ? "," : "", num);
	}
	for (i = 0; i < n && weight_counter < 0; i++)
		if (sample_tab[rows[i]].weight != 1)
			break;
	if (weight_counter < 0 && i == n) {
		/* All weights 1: the column is null. */
		len += (size_t)snprintf(out + len, size - len,
					"],\"weight\":null");
	} else {
		len +=
		    (size_t)snprintf(out + len, size - len, "],\"weight\":[");
		for (i = 0; i < n; i++) {
			uint64_t w = sample_tab[rows[i]].weight;

			if (weight_counter >= 0)
				w = sample_tab[rows[i]].c[weight_counter] ==
					    NONE
					? 0
					: sample_tab[rows[i]].c[weight_counter];
			len += (size_t)snprintf(out + len, size - len, "%s%llu",
						i ? "," : "",
						(unsigned long long)w);
		}
		len += (size_t)snprintf(out + len, size - len, "]");
	}
	len += (size_t)snprintf(out + len, size - len, ",\"threadCPUDelta\":[");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(
		    out + len, size - len, "%s%g", i ? "," : "",
		    (double)sample_tab[rows[i]].cpu_ns / 1e3);
	len += (size_t)snprintf(out + len, size - len,
				"],\"samplyEventDeltas\":{");
	for (c = 0; c < NR_COUNTERS; c++) {
		len += (size_t)snprintf(out + len, size - len, "%s\"%s\":[",
					c ? "," : "", counter_names[c]);
		for (i = 0; i < n; i++) {
			uint64_t v = sample_tab[rows[i]].c[c];

			if (v == NONE)
				len += (size_t)snprintf(out + len, size - len,
							"%snull", i ? "," : "");
			else
				len += (size_t)snprintf(out + len, size - len,
							"%s%llu", i ? "," : "",
							(unsigned long long)v);
		}
		len += (size_t)snprintf(out + len, size - len, "]");
	}
	snprintf(out + len, size - len, "}");
}

static void assert_contains(const char *text, const char *want)
{
	if (!strstr(text, want)) {
		print_error("missing in the profile: %s\n", want);
		fail();
	}
}

static bool have_node(void)
{
	return system("node --version >/dev/null 2>&1") == 0;
}

static int run_fxcheck(const char *file)
{
	char cmd[8192];
	int st;

	snprintf(cmd, sizeof(cmd), "node '%s/tests/tools/fxcheck.mjs' '%s'",
		 srcdir, file);
	st = system(cmd);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_firefox(void **state)
{
	struct evprof_profile *p = build_profile();
	char want[4096];
	char *json, *gz;
	size_t n, ngz;

	(void)state;
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("p.json"), NULL), 0);
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("p.json.gz"), NULL),
	    0);
	assert_false(exists(path_in_tmp("p.json.tmp")));
	json = slurp(path_in_tmp("p.json"), &n);
	gz = slurp(path_in_tmp("p.json.gz"), &ngz);
	assert_int_equal(n, ngz);
	assert_memory_equal(json, gz, n);
	free(gz);

	assert_contains(json, "\"preprocessedProfileVersion\":66");
	assert_contains(json, "\"startTime\":1700000000123.456789");
	assert_contains(
	    json,
	    "\"startTimeAsClockMonotonicNanosecondsSinceBoot\":5000000000");
	assert_contains(json, "\"symbolicated\":true");
	assert_contains(
	    json, "\"evprofNotes\":[\"cycles not supported -> cpu-clock\"]");
	assert_contains(
	    json, "\"evprofCounters\":[\"page-faults\",\"context-switches\"]");
	/* Build id 510d0a5c... as Breakpad's byte-swapped GUID + age 0. */
	assert_contains(json,
			"\"breakpadId\":\"5C0A0D51EA1980DF43F203B4525BE9BE0\"");
	assert_contains(
	    json, "\"codeId\":\"510d0a5c19eadf8043f203b4525be9be3dcb9554\"");
	assert_contains(json,
			"\"breakpadId\":\"000000000000000000000000000000000\","
			"\"codeId\":null");
	/* Escapes and invalid UTF-8 (U+FFFD). */
	assert_contains(json, "\"weird \\\"q\\\" \\\\ \\u0001 ;semi\"");
	assert_contains(json, "\"bad\xef\xbf\xbd\"");
	assert_contains(json, "\"0x1234\"");
	/* Threads grouped by process, main thread first. */
	assert_true(strstr(json, "\"name\":\"app\",\"isMainThread\":true") <
		    strstr(json, "\"name\":\"worker\",\"isMainThread\":false"));
	assert_non_null(
	    strstr(json, "\"name\":\"worker\",\"isMainThread\":false"));
	/* worker registers at 1.4 ms; its end is kept near its last sample. */
	assert_contains(json, "\"registerTime\":1.4,\"unregisterTime\":4.5,");
	assert_contains(
	    json, "\"processStartupTime\":1,\"processShutdownTime\":1.8,");

	expected_columns(T_APP, want, sizeof(want), -1);
	assert_contains(json, want);
	expected_columns(T_WORK, want, sizeof(want), -1);
	assert_contains(json, want);
	expected_columns(T_TOOL, want, sizeof(want), -1);
	assert_contains(json, want);
	free(json);

	if (!have_node()) {
		evprof_profile__free(p);
		skip_because("node is not installed: fxcheck.mjs cannot check "
			     "the Firefox file");
	}
	assert_int_equal(run_fxcheck(path_in_tmp("p.json")), 0);
	assert_int_equal(run_fxcheck(path_in_tmp("p.json.gz")), 0);
	evprof_profile__free(p);
}

static void test_firefox_weight_counter(void **state)
{
	struct evprof_profile *p = build_profile();
	struct evprof_firefox_opts o = {.sz = sizeof(o),
					.weight_counter = "page-faults"};
	char want[4096];
	char *json;

	(void)state;
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("w.json"), &o), 0);
	json = slurp(path_in_tmp("w.json"), NULL);
	expected_columns(T_APP, want, sizeof(want), C_PF);
	assert_contains(json, want);
	expected_columns(T_WORK, want, sizeof(want), C_PF);
	assert_contains(json, want);
	assert_contains(json, "\"weightType\":\"samples\"");
	free(json);
	o.weight_counter = "cycles";
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("x.json"), &o),
	    -ENOENT);
	assert_false(exists(path_in_tmp("x.json")));
	evprof_profile__free(p);
}

/* The checker itself must catch a broken file. */
static void test_fxcheck_rejects(void **state)
{
	struct evprof_profile *p = build_profile();
	char *json, *at;
	FILE *f;

	(void)state;
	if (!have_node()) {
		evprof_profile__free(p);
		skip_because("node is not installed: fxcheck.mjs cannot check "
			     "the Firefox file");
	}
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("b.json"), NULL), 0);
	json = slurp(path_in_tmp("b.json"), NULL);
	at = strstr(json, "\"func\":[");
	assert_non_null(at);
	f = fopen(path_in_tmp("b.json"), "w");
	assert_non_null(f);
	/* One extra, out-of-range func index: wrong length and range. */
	fprintf(f, "%.*s\"func\":[999,%s", (int)(at - json), json, at + 8);
	fclose(f);
	assert_int_equal(run_fxcheck(path_in_tmp("b.json")), 1);
	free(json);
	evprof_profile__free(p);
}

/* Runs fxload.sh on file, returns its exit status and output in *out. */
static int run_fxload(const char *file, char **out)
{
	char cmd[8192];
	size_t cap = 1 << 16, n = 0, got;
	FILE *f;
	int st;

	snprintf(cmd, sizeof(cmd), "bash '%s/tests/tools/fxload.sh' '%s' 2>&1",
		 srcdir, file);
	f = popen(cmd, "r");
	assert_non_null(f);
	*out = malloc(cap + 1);
	assert_non_null(*out);
	while ((got = fread(*out + n, 1, cap - n, f)) > 0) {
		n += got;
		if (n == cap) {
			cap *= 2;
			*out = realloc(*out, cap + 1);
			assert_non_null(*out);
		}
	}
	(*out)[n] = 0;
	st = pclose(f);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void test_firefox_loader(void **state)
{
	struct evprof_profile *p = build_profile();
	char *out, *sec;
	int rc;

	(void)state;
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("l.json.gz"), NULL),
	    0);
	rc = run_fxload(path_in_tmp("l.json.gz"), &out);
	if (rc == 77) {
		printf("%s", out);
		free(out);
		evprof_profile__free(p);
		skip_because("the Firefox Profiler's loader is unavailable "
			     "(node, or the npm install of profiler-cli)");
	}
	if (rc != 0)
		print_error("%s", out);
	assert_int_equal(rc, 0);
	/* 4 threads, each with a track per counter it moved (all do). */
	assert_contains(out,
			"This profile contains 12 threads across 2 processes.");
	assert_contains(out, "worker page-faults (count)");
	assert_contains(out, "tool context-switches (count)");
	/* A counter per process and counter. */
	assert_contains(out, "Counters (4):");
	assert_contains(out, "page-faults (evprof) [p-0 app, pid 100]");
	assert_contains(out, "context-switches (evprof) [p-1 tool, pid 200]");
	assert_contains(out, "app [tid 100]");
	assert_contains(out, "worker [tid 101]");
	assert_contains(out, "tool [tid 200]");
	assert_contains(out, "tool [tid 201]");
	/* worker's tree: main > worker_loop > do_syscall_64 (kernel). */
	sec = strstr(out, "Thread: worker");
	assert_non_null(sec);
	sec = strstr(sec, "app!main [total: 100.0%");
	assert_non_null(sec);
	sec = strstr(sec, "app!worker_loop [total: 100.0%");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "do_syscall_64"));
	/* app's tree reaches the page fault through the inlined helper. */
	sec = strstr(out, "Thread: app");
	assert_non_null(sec);
	assert_non_null(strstr(sec, "app!compute"));
	assert_non_null(strstr(sec, "app!inlined_helper"));
	assert_non_null(strstr(sec, "asm_exc_page_fault"));
	free(out);
	evprof_profile__free(p);
}

static void test_write_errors(void **state)
{
	struct evprof_profile *p = build_profile();
	const char *final = path_in_tmp("big.json");
	char tmpname[600];
	pid_t pid;
	int st;
	FILE *f;

	(void)state;
	/* A device is written in place (never replaced by a rename). */
	assert_int_equal(evprof_profile__write_firefox(p, "/dev/full", NULL),
			 -ENOSPC);
	assert_int_equal(evprof_profile__write_folded(p, "/dev/full", NULL),
			 -ENOSPC);
	assert_true(exists("/dev/full"));
	assert_false(exists("/dev/full.tmp"));
	f = fopen("/dev/full", "w");
	assert_non_null(f);
	assert_int_equal(evprof_profile__write_folded_file(p, f, NULL),
			 -ENOSPC);
	fclose(f);

	/* A file that cannot be completed: the old file stays, no .tmp. */
	f = fopen(final, "w");
	assert_non_null(f);
	fputs("old", f);
	fclose(f);
	snprintf(tmpname, sizeof(tmpname), "%s.tmp", final);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		struct rlimit rl = {1024, 1024};

		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		_exit(evprof_profile__write_firefox(p, final, NULL) == -EFBIG
			  ? 0
			  : 1);
	}
	assert_int_equal(waitpid(pid, &st, 0), pid);
	assert_true(WIFEXITED(st));
	assert_int_equal(WEXITSTATUS(st), 0);
	assert_false(exists(tmpname));
	f = fopen(final, "r");
	assert_non_null(f);
	assert_non_null(fgets(tmpname, sizeof(tmpname), f));
	assert_string_equal(tmpname, "old");
	fclose(f);

	/* A directory that does not exist. */
	assert_int_equal(
	    evprof_profile__write_firefox(p, path_in_tmp("no/such.json"), NULL),
	    -ENOENT);
	evprof_profile__free(p);
}

static void find_srcdir(void)
{
	const char *env = getenv("SRCDIR");
	const char *tail = "/tests/unit/test_profile.c";
	size_t n = strlen(__FILE__), k = strlen(tail);

	if (env && *env) {
		snprintf(srcdir, sizeof(srcdir), "%s", env);
	} else if (n > k && !strcmp(__FILE__ + n - k, tail)) {
		/* CMake compiles with the absolute source path. */
		snprintf(srcdir, sizeof(srcdir), "%.*s", (int)(n - k),
			 __FILE__);
	} else {
		snprintf(srcdir, sizeof(srcdir), ".");
	}
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_interning),
	    cmocka_unit_test(test_unnamed_libs),
	    cmocka_unit_test(test_folded),
	    cmocka_unit_test(test_folded_weight_counter),
	    cmocka_unit_test(test_firefox),
	    cmocka_unit_test(test_firefox_weight_counter),
	    cmocka_unit_test(test_fxcheck_rejects),
	    cmocka_unit_test(test_firefox_loader),
	    cmocka_unit_test(test_write_errors),
	};
	char cmd[600];
	int failed;

	find_srcdir();
	if (!mkdtemp(tmpdir)) {
		perror("mkdtemp");
		return 1;
	}
	failed = run_cases(argc, argv, tests, NULL, NULL);
	if (!failed || failed == 77 || !getenv("EVPROF_KEEP_TMP")) {
		snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmpdir);
		if (system(cmd))
			fprintf(stderr, "could not remove %s\n", tmpdir);
	} else {
		fprintf(stderr, "outputs kept in %s\n", tmpdir);
	}
	return failed;
}
