// SPDX-License-Identifier: MIT
/*
 * A synthetic profile for bench/view_open.sh: SAMPLES samples (default
 * 500000) on 4 threads with CPU time and three counters (instructions,
 * cycles, page-faults), drawn from PATHS distinct call paths (default
 * 20000) over 3000 functions in two libs, 6 to 40 frames deep, with a
 * skewed popularity (a few paths take most samples, as in real programs).
 * Frames have several addresses per function, so there are more stacks
 * than paths, as a recording has. Deterministic (fixed seed).
 *
 * Usage: bench_view_profile OUT [SAMPLES [PATHS]]   (OUT's name picks the
 * format: .pb.gz pprof, else Firefox JSON)
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/profile.h>

#define NFUNCS	 3000
#define MAXDEPTH 40

static uint64_t rng = 0x9e3779b97f4a7c15ULL;

static uint32_t next(void)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	return (uint32_t)(rng >> 16);
}

static int die(const char *what, int err)
{
	fprintf(stderr, "bench_view_profile: %s: %s\n", what, strerror(-err));
	return 1;
}

int main(int argc, char **argv)
{
	struct evprof_profile_opts po = {.sz = sizeof(po),
					 .product = "synthetic"};
	struct evprof_profile *p;
	long samples = argc > 2 ? atol(argv[2]) : 500000;
	long paths = argc > 3 ? atol(argv[3]) : 20000;
	int *stack, libs[2], threads[4], proc, err;
	uint64_t vals[3], t = 1000000;
	char name[64];

	if (argc < 2 || samples <= 0 || paths <= 0) {
		fprintf(stderr,
			"usage: bench_view_profile OUT [SAMPLES [PATHS]]\n");
		return 2;
	}
	p = evprof_profile__new(&po);
	stack = malloc((size_t)paths * sizeof(*stack));
	if (!p || !stack)
		return die("profile", -ENOMEM);
	evprof_profile__add_counter(p, "instructions");
	evprof_profile__add_counter(p, "cycles");
	evprof_profile__add_counter(p, "page-faults");
	libs[0] = evprof_profile__add_lib(
	    p, &(struct evprof_profile_lib){.path = "/usr/bin/app"});
	libs[1] = evprof_profile__add_lib(
	    p, &(struct evprof_profile_lib){.path = "/usr/lib/libwork.so"});
	proc = evprof_profile__add_process(p, 100, "app", 0);
	for (int i = 0; i < 4; i++) {
		snprintf(name, sizeof(name), "worker-%d", i);
		threads[i] =
		    evprof_profile__add_thread(p, proc, 100 + i, name, 0);
	}
	/* Paths: random walks from a few roots, callees near their callers. */
	for (long i = 0; i < paths; i++) {
		int depth = 6 + (int)(next() % (MAXDEPTH - 5)), s = -1;
		uint32_t f = next() % 8;

		for (int d = 0; d < depth; d++) {
			struct evprof_profile_frame fr = {
			    .lib = libs[f % 2],
			    .address = f * 256 + (next() % 4) * 16,
			    .function = name,
			};
			int frame;

			snprintf(name, sizeof(name), "func_%u", f);
			frame = evprof_profile__frame(p, &fr);
			if (frame < 0)
				return die("frame", frame);
			s = evprof_profile__stack(p, s, frame);
			if (s < 0)
				return die("stack", s);
			f = (f * 7 + 1 + next() % 64) % NFUNCS;
		}
		stack[i] = s;
	}
	for (long i = 0; i < samples; i++) {
		/* Squaring a uniform draw skews towards the first paths. */
		uint64_t u = next() % 65536;
		long k = (long)(u * u * (uint64_t)paths >> 32);
		struct evprof_profile_sample sm = {
		    .time_ns = t += 1000000,
		    .stack = stack[k],
		    .cpu_delta_ns = 900000 + next() % 200000,
		    .has_counters = 7,
		    .counters = vals,
		};

		vals[1] = 2000000 + next() % 1000000;
		vals[0] = vals[1] * (k % 4 + 1) / 2;
		vals[2] = k % 16 == 0 ? next() % 64 : 0;
		err = evprof_profile__add_sample(p, threads[i % 4], &sm);
		if (err)
			return die("sample", err);
	}
	if (strstr(argv[1], ".pb"))
		err = evprof_profile__write_pprof(p, argv[1], NULL);
	else
		err = evprof_profile__write_firefox(p, argv[1], NULL);
	if (err)
		return die(argv[1], err);
	free(stack);
	evprof_profile__free(p);
	return 0;
}
