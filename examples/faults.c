// SPDX-License-Identifier: MIT
/*
 * Embedding evprof: record a command with cpu-clock sampling and a
 * page-faults counter, then print the page faults of every function (each
 * function counted once per stack, so a caller includes its callees).
 * Page faults are attributed by their own samples, one every 16th fault
 * here (64 by default): what a thread faults after its last such sample
 * has no stack and shows as [unsampled].
 *
 *	cc faults.c $(pkg-config --cflags --libs evprof) -o faults
 *	./faults task|cpu CMD [ARGS...]
 */
#define _GNU_SOURCE
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <evprof/evprof.h>

struct fn {
	char *name;
	unsigned long long faults;
};

static struct fn *fns;
static size_t nr_fns;

static void add(const char *name, unsigned long long faults)
{
	for (size_t i = 0; i < nr_fns; i++) {
		if (!strcmp(fns[i].name, name)) {
			fns[i].faults += faults;
			return;
		}
	}
	fns = realloc(fns, (nr_fns + 1) * sizeof(*fns));
	if (!fns)
		exit(1);
	fns[nr_fns].name = strdup(name);
	fns[nr_fns++].faults = faults;
}

/*
 * Folded lines weighed by page faults, "thread;root;...;leaf N": every
 * function of a line gets N once, however often it recurses.
 */
static void sum_folded(char *text)
{
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		char *count = strrchr(line, ' '), *save, *frame;
		char *seen[256];
		size_t nr_seen = 0;

		if (!count)
			continue;
		*count++ = 0;
		frame = strtok_r(line, ";", &save); /* the thread name */
		while ((frame = strtok_r(NULL, ";", &save))) {
			bool dup = false;

			for (size_t i = 0; i < nr_seen; i++)
				dup |= !strcmp(seen[i], frame);
			if (dup || nr_seen == 256)
				continue;
			seen[nr_seen++] = frame;
			add(frame, strtoull(count, NULL, 10));
		}
	}
}

int main(int argc, char **argv)
{
	struct evprof_recorder_opts opts = {.sz = sizeof(opts)};
	struct evprof_recorder_target target = {.sz = sizeof(target)};
	struct evprof_folded_opts fo = {.sz = sizeof(fo),
					.weight_counter = "page-faults"};
	struct evprof_session_stats st = {.sz = sizeof(st)};
	struct evprof_recorder *r;
	struct evprof_profile *p;
	char *text = NULL;
	size_t len = 0;
	int status = 0;
	FILE *f;

	if (argc < 3 || (strcmp(argv[1], "task") && strcmp(argv[1], "cpu"))) {
		fprintf(stderr, "usage: %s task|cpu CMD [ARGS...]\n", argv[0]);
		return 2;
	}
	opts.mode =
	    argv[1][0] == 't' ? EVPROF_RECORDER_TASK : EVPROF_RECORDER_CPU;
	target.argv = argv + 2;
	r = evprof_recorder__new(&target, "cpu-clock,page-faults/period=16/",
				 &opts);
	if (!r || evprof_recorder__start(r)) {
		perror("evprof_recorder");
		return 1;
	}
	while (!evprof_recorder__done(r))
		evprof_recorder__poll(r, 100);
	evprof_recorder__stop(r);
	waitpid(evprof_recorder__pid(r), &status, 0);
	/* A throttled group stops counting for a while: say so. */
	evprof_session__stats(evprof_recorder__session(r), &st);
	if (st.throttled)
		fprintf(stderr, "throttled %llu times: counts are short\n",
			(unsigned long long)st.throttled);

	p = evprof_recorder__profile(r, NULL);
	f = open_memstream(&text, &len);
	if (!p || !f || evprof_profile__write_folded_file(p, f, &fo)) {
		perror("evprof_profile");
		return 1;
	}
	fclose(f);
	sum_folded(text);
	for (size_t i = 0; i < nr_fns; i++)
		printf("%llu %s\n", fns[i].faults, fns[i].name);
	free(text);
	evprof_profile__free(p);
	evprof_recorder__free(r);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}
