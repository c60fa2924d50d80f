// SPDX-License-Identifier: MIT
/*
 * Fuzzes evprof_profile__load_buf (gzip, the pprof decoder, the Firefox
 * JSON reader, folded stacks), then runs the report, every writer and the read API (store
 * entries, timelines, stacks and frames) over whatever loaded: a loaded
 * model must be as sound as a recorded one.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <evprof/page.h>
#include <evprof/profile.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Walks every entry's stack to its root through the public accessors. */
static int walk(const struct evprof_profile_entry *e, void *ctx)
{
	const struct evprof_profile *p = ctx;
	struct evprof_profile_frame f;
	int st = e->stack, frame;

	while (st >= 0) {
		if (evprof_profile__stack_info(p, st, &st, &frame) ||
		    evprof_profile__frame_info(p, frame, &f) || !f.function)
			abort();
	}
	return 0;
}

/* Reads every thread's timeline; times must not go backwards. */
static void timelines(const struct evprof_profile *p)
{
	struct evprof_profile_thread_info ti;
	struct evprof_profile_sample s;
	int thr, ret;

	for (thr = 0; !evprof_profile__thread_info(p, thr, &ti); thr++) {
		struct evprof_profile_timeline *it =
		    evprof_profile_timeline__new(p, thr);
		uint64_t prev = 0;

		if (!it)
			continue; /* a pprof profile has none */
		while ((ret = evprof_profile_timeline__next(it, &s)) == 1) {
			if (s.time_ns < prev)
				abort();
			prev = s.time_ns;
		}
		if (ret)
			abort();
		evprof_profile_timeline__free(it);
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evprof_profile *p = evprof_profile__load_buf(data, size);
	FILE *null;

	if (!p)
		return 0;
	null = fopen("/dev/null", "w");
	if (!null)
		abort();
	if (evprof_profile__write_report(p, null, NULL) ||
	    evprof_profile__write_pprof(p, "/dev/null", NULL) ||
	    evprof_profile__write_firefox(p, "/dev/null", NULL) ||
	    evprof_profile__write_folded(p, "/dev/null", NULL) ||
	    evprof_profile__for_each_entry(p, -1, walk, p))
		abort();
	/* A build without the page's scripts says so, and only that. */
	if (evprof_profile__write_page(p, "/dev/null", NULL) !=
	    (evprof_page__available() ? 0 : -ENOTSUP))
		abort();
	timelines(p);
	fclose(null);
	evprof_profile__free(p);
	return 0;
}
