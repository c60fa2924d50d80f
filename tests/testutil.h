/* SPDX-License-Identifier: MIT */
/* Helpers the integration tests share (include after <cmocka.h>). */
#ifndef EVPROF_TESTUTIL_H
#define EVPROF_TESTUTIL_H

#include <dirent.h>
#include <stddef.h>
#include <sys/mman.h>
#include <unistd.h>

/*
 * Takes exactly n fresh minor faults (no THP: one fault per 4 KiB). Not
 * instrumented: ASan's shadow checks would fault shadow pages too.
 */
__attribute__((no_sanitize_address)) static inline void touch_pages(size_t n)
{
	size_t psz = (size_t)sysconf(_SC_PAGESIZE);
	volatile char *p;

	p = mmap(NULL, n * psz, PROT_READ | PROT_WRITE,
		 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	madvise((void *)p, n * psz, MADV_NOHUGEPAGE);
	for (size_t i = 0; i < n; i++)
		p[i * psz] = 1;
	munmap((void *)p, n * psz);
}

/* Open fds of this process, to prove a failure path closed its own. */
static inline int count_fds(void)
{
	DIR *d = opendir("/proc/self/fd");
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	closedir(d);
	return n;
}

#endif /* EVPROF_TESTUTIL_H */
