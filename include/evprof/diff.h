/* SPDX-License-Identifier: MIT */
/*
 * Differential profiles: two profiles (a base and a new one, e.g. before
 * and after a change) compared per function, for every value column both
 * carry. What `evprof diff` prints, and what a differential view draws.
 *
 * A function is a name in a lib (the lib's file name, not its path, so
 * two builds in different directories compare); kernel functions are in
 * "[kernel]", frames without a lib in "[?]". Libs of one file name are one;
 * a name found in one lib only on each side is one function whatever the
 * libs (the program renamed: app-v1 against app-v2), shown in the new lib. Its self value sums the
 * stacks it is the leaf of, its total value every stack it is on (once
 * per stack, however often it recurses), as evprof_profile__write_report()
 * counts them.
 */
#ifndef EVPROF_DIFF_H
#define EVPROF_DIFF_H

#include <stdbool.h>
#include <stddef.h>

#include <evprof/common.h>
#include <evprof/profile.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_profile_diff;

struct evprof_profile_diff_opts {
	size_t sz; /* sizeof(struct evprof_profile_diff_opts) */
	/*
	 * true: the base's values of each column are scaled so that their
	 * total equals the new profile's (base value * new total / base
	 * total; a base total of 0 stays 0), so that differences compare
	 * shares when the two recordings differ in length.
	 */
	bool normalize;
};

/*
 * Compares base and new per function. Both profiles must outlive the
 * result and must not change while it lives. The columns compared are
 * those both carry: "samples", "cpu" (when both have CPU time), every
 * counter registered in both and every weight type registered in both.
 * Returns a diff freed with evprof_profile_diff__free(), or NULL with
 * errno set: EINVAL (a NULL profile, bad opts->sz), ENOMEM.
 */
EVPROF_API struct evprof_profile_diff *
evprof_profile_diff__new(const struct evprof_profile *base,
			 const struct evprof_profile *new_,
			 const struct evprof_profile_diff_opts *opts);
EVPROF_API void evprof_profile_diff__free(struct evprof_profile_diff *d);

struct evprof_profile_diff_column {
	const char *name;  /* "samples", "cpu", a counter or a weight type */
	bool ns;	   /* values are nanoseconds (cpu, weight types) */
	double base_total; /* the base's total (scaled with normalize) */
	double new_total;  /* the new profile's total */
};

/* Number of columns compared (at least 1: "samples"). */
EVPROF_API size_t
evprof_profile_diff__nr_columns(const struct evprof_profile_diff *d);

/*
 * Fills *col with column c; name lives as long as d. Returns 0 or -EINVAL
 * (c out of range).
 */
EVPROF_API int
evprof_profile_diff__column(const struct evprof_profile_diff *d, size_t c,
			    struct evprof_profile_diff_column *col);

/* The index of the column named name, or -ENOENT (not in both). */
EVPROF_API int
evprof_profile_diff__find_column(const struct evprof_profile_diff *d,
				 const char *name);

struct evprof_profile_diff_function {
	const char *name; /* function name */
	const char *lib;  /* lib file name, "[kernel]" or "[?]" */
	/*
	 * Per column (evprof_profile_diff__nr_columns() values each): self
	 * and total in the base (scaled with normalize) and in the new
	 * profile. A function found in one profile only has zeros in the
	 * other.
	 */
	const double *base_self;
	const double *new_self;
	const double *base_total;
	const double *new_total;
};

/* Number of functions: those of either profile, each once. */
EVPROF_API size_t
evprof_profile_diff__nr_functions(const struct evprof_profile_diff *d);

/*
 * Fills *f with function i (functions sorted by name, then lib); its
 * strings and arrays live as long as d. Returns 0 or -EINVAL.
 */
EVPROF_API int
evprof_profile_diff__function(const struct evprof_profile_diff *d, size_t i,
			      struct evprof_profile_diff_function *f);

/*
 * Writes the difference as one pprof profile, as `pprof -diff_base BASE
 * NEW` sees it: the new profile's samples, then the base's samples with
 * every value negated (scaled first with normalize, rounded to integers)
 * and the label pprof::base=true, sample types the compared columns.
 * pprof then shows NEW - BASE per function and percentages of the base's
 * total. Files, opts and errors as evprof_profile__write_pprof()
 * (default_type must name a compared column).
 */
EVPROF_API int
evprof_profile_diff__write_pprof(const struct evprof_profile_diff *d,
				 const char *path,
				 const struct evprof_pprof_opts *opts);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_DIFF_H */
