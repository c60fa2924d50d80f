/* SPDX-License-Identifier: MIT */
/*
 * libevprof conventions shared by every public header.
 *
 * Errors: functions returning int give 0 (or a count) on success and a
 * negative number on failure: either -errno, or -EVPROF_ERR_* for failures
 * that are not errno values. evprof_strerror() names both. Constructors
 * return NULL and set errno (positive).
 *
 * Destructors: whatever made an object (evprof_<object>__new, __open,
 * __parse, __load ...), evprof_<object>__free() releases it and everything
 * it holds (memory, fds, mappings), returns void and accepts NULL. One name
 * for all, never __close, __delete or __destroy.
 *
 * Sized structs: every options struct and every stats struct starts with
 * size_t sz, which the caller sets to the sizeof() it was compiled with
 * (struct evprof_x_stats st = {.sz = sizeof(st)}), so a struct can grow
 * at its end without breaking callers built before. Options: fields past
 * the caller's sz take their defaults, and bytes past the library's own
 * size must be zero. Stats: the library writes no byte past the caller's
 * sz, fills what both sizes cover and sets sz to the bytes it filled. No
 * stats struct holds another; each object has its own getter.
 *
 * Messages: the library never writes to stderr itself; it hands messages to
 * the print callback (none by default).
 */
#ifndef EVPROF_COMMON_H
#define EVPROF_COMMON_H

#include <stdarg.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#ifndef EVPROF_API
#define EVPROF_API __attribute__((visibility("default")))
#endif

#define EVPROF_VERSION_MAJOR 0
#define EVPROF_VERSION_MINOR 2

/* Error codes that are not errno values; returned negated. */
enum evprof_errc {
	EVPROF_ERR_FIRST = 4000,
	EVPROF_ERR_TRUNCATED = EVPROF_ERR_FIRST, /* shorter than its layout */
	EVPROF_ERR_MALFORMED,	  /* bytes do not follow the ABI */
	EVPROF_ERR_UNKNOWN_EVENT, /* no event of that name */
	EVPROF_ERR_BAD_SPEC,	  /* event specification syntax */
	EVPROF_ERR_GROUP_TOO_BIG, /* more hardware slots than counters */
	EVPROF_ERR_NOT_COUNTED,	  /* time_running == 0: no value exists */
	EVPROF_ERR_BAD_ELF,	  /* unreadable or malformed ELF file */
	EVPROF_ERR_BAD_PERFDATA,  /* malformed perf.data */
	EVPROF_ERR_NEGATIVE,	  /* negative values: a difference profile */
	EVPROF_ERR_LAST
};

/*
 * Returns a static string describing err, which may be a negative or
 * positive errno or EVPROF_ERR_* value. Never NULL. Lives forever.
 */
EVPROF_API const char *evprof_strerror(int err);

/*
 * The name of names[0..nr) that word most likely misspells (edits: a
 * letter changed, added, removed, or two swapped; at most one per three
 * letters of word, and fewer than word's length), ignoring case; NULL
 * when none is that close or two are equally close. For "did you mean".
 */
EVPROF_API const char *evprof_closest_name(const char *word,
					   const char *const *names, size_t nr);

enum evprof_print_level {
	EVPROF_WARN,
	EVPROF_INFO,
	EVPROF_DEBUG,
};

typedef int (*evprof_print_fn_t)(enum evprof_print_level level, const char *fmt,
				 va_list ap);

/*
 * Installs fn as the receiver of library messages (NULL silences them).
 * Returns the previous callback.
 */
EVPROF_API evprof_print_fn_t evprof_set_print(evprof_print_fn_t fn);

/* What this library was built from and with. */
struct evprof_build_info {
	const char *version;  /* e.g. "0.2.0" */
	const char *revision; /* git describe of the source, or "unknown" */
	const char *elfutils; /* libdw's version */
	const char *zlib;
	const char *json_c;
	const char *libpfm; /* "4.13" style, or NULL: built without or absent */
};

/* Returns the build facts; they live until the program ends. */
EVPROF_API const struct evprof_build_info *evprof_version(void);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_COMMON_H */
