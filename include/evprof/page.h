/* SPDX-License-Identifier: MIT */
/*
 * The page: one self-contained HTML file (no request to any network) that
 * draws a profile as a flame graph and a function table, weighed by
 * samples, CPU time or any counter, coloured by a ratio of two columns
 * (instructions per cycle, misses per kilo-instruction, faults per ms),
 * filtered by thread, searchable; with a base profile, a differential
 * view (red grew, blue shrank). `evprof view` serves it, `-o x.html`
 * writes it.
 *
 * The page reads the profile's aggregated store only (per thread and call
 * path sums of every column), never the timeline, so its size follows the
 * number of distinct call paths, not the number of samples.
 */
#ifndef EVPROF_PAGE_H
#define EVPROF_PAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_profile;

struct evprof_page_opts {
	size_t sz;	   /* sizeof(struct evprof_page_opts) */
	const char *title; /* the page's title; NULL: the profile's product */
	/*
	 * The column the page opens weighed by: "samples", "cpu", a counter
	 * or a weight type. NULL: cpu when the profile has CPU time.
	 */
	const char *weight;
	/*
	 * A profile to compare against (e.g. an earlier run): the page then
	 * colours each call path by its change from base to the profile, in
	 * share points or in the weight's unit. Paths match by thread name
	 * and function names. NULL: no differential view.
	 */
	const struct evprof_profile *base;
};

/*
 * Whether this libevprof carries the page's scripts: false when it was
 * built without node/npm (or with EVPROF_WITH_PAGE=OFF); the writers below then
 * return -ENOTSUP.
 */
EVPROF_API bool evprof_page__available(void);

/*
 * Writes p (and opts->base) as the page to path, the data inline. Files as
 * evprof_profile__write_firefox(): written to path.tmp and renamed, ".gz"
 * compresses. opts may be NULL. Returns 0, -ENOTSUP (no page in this
 * build), -ENOENT (opts->weight names no column of p), -EINVAL, -ENOMEM or
 * -errno of writing.
 */
EVPROF_API int evprof_profile__write_page(const struct evprof_profile *p,
					  const char *path,
					  const struct evprof_page_opts *opts);

/*
 * As evprof_profile__write_page() into an open stream (e.g. one from
 * open_memstream() that a server sends), flushed, not closed. Returns 0 or
 * -errno as above.
 */
EVPROF_API int
evprof_profile__write_page_file(const struct evprof_profile *p, FILE *f,
				const struct evprof_page_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_PAGE_H */
