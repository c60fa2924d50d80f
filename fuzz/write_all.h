/* SPDX-License-Identifier: MIT */
/* Every writer over a fuzzed profile: none may fail or crash on it. */
#ifndef EVPROF_FUZZ_WRITE_ALL_H
#define EVPROF_FUZZ_WRITE_ALL_H

#include <stdio.h>
#include <stdlib.h>

#include <evprof/profile.h>

static inline void write_all(const struct evprof_profile *p)
{
	FILE *null = fopen("/dev/null", "w");

	if (!null)
		abort();
	if (evprof_profile__write_report(p, null, NULL) ||
	    evprof_profile__write_pprof(p, "/dev/null", NULL) ||
	    evprof_profile__write_firefox(p, "/dev/null", NULL) ||
	    evprof_profile__write_folded(p, "/dev/null", NULL))
		abort();
	fclose(null);
}

#endif /* EVPROF_FUZZ_WRITE_ALL_H */
