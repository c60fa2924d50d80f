/* SPDX-License-Identifier: MIT */
/* Private helpers shared by every library module: messages, small I/O. */
#ifndef EVPROF_LIB_UTIL_H
#define EVPROF_LIB_UTIL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <evprof/common.h>

#define EVPROF_HIDDEN __attribute__((visibility("hidden")))
#define ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

__attribute__((format(printf, 2, 3))) EVPROF_HIDDEN void
evprof__print(enum evprof_print_level level, const char *fmt, ...);

#define pr_warn(...) evprof__print(EVPROF_WARN, __VA_ARGS__)
#define pr_info(...) evprof__print(EVPROF_INFO, __VA_ARGS__)
#define pr_debug(...) evprof__print(EVPROF_DEBUG, __VA_ARGS__)

/*
 * Reads up to len - 1 bytes of path into buf and NUL-terminates it.
 * Returns the byte count or -errno.
 */
EVPROF_HIDDEN int evprof__read_file(const char *path, char *buf, size_t len);

/*
 * Reads all of path (a /proc file has no size to ask for) into a malloc'd
 * buffer with a NUL after its len bytes; the caller frees *out. Returns 0,
 * -EFBIG past max bytes, or -errno.
 */
EVPROF_HIDDEN int evprof__read_all(const char *path, size_t max, char **out,
				   size_t *len);

/*
 * Parses a CPU list such as "0-3,5" into cpus[] (ascending, as written).
 * Returns how many CPUs the list names (may exceed max) or -EINVAL.
 */
EVPROF_HIDDEN int evprof__parse_cpu_list(const char *s, int *cpus, int max);

/* Unaligned little helpers for untrusted bytes. */
static inline uint64_t evprof__load_u64(const void *p)
{
	uint64_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

static inline uint32_t evprof__load_u32(const void *p)
{
	uint32_t v;
	memcpy(&v, p, sizeof(v));
	return v;
}

#endif /* EVPROF_LIB_UTIL_H */
