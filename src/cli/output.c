// SPDX-License-Identifier: MIT
/* Picks and writes the output formats record and report share. */
#include <stdbool.h>
#include <string.h>

#include <evprof/profile.h>

#include "cli.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int out_parse_format(const char *name)
{
	if (!strcmp(name, "firefox"))
		return OUT_FIREFOX;
	if (!strcmp(name, "folded"))
		return OUT_FOLDED;
	if (!strcmp(name, "pprof"))
		return OUT_PPROF;
	return -1;
}

enum out_format out_format_of(const char *path)
{
	if (ends_with(path, ".folded") || ends_with(path, ".folded.gz"))
		return OUT_FOLDED;
	if (ends_with(path, ".pb.gz") || ends_with(path, ".pb") ||
	    ends_with(path, ".pprof"))
		return OUT_PPROF;
	return OUT_FIREFOX;
}

int out_write(const struct evprof_profile *p, const char *path,
	      enum out_format fmt, const char *weight)
{
	if (fmt == OUT_PPROF) {
		struct evprof_pprof_opts o = { .sz = sizeof(o),
					       .default_type = weight };

		return evprof_profile__write_pprof(p, path, &o);
	}
	if (fmt == OUT_FOLDED) {
		struct evprof_folded_opts o = { .sz = sizeof(o),
						.weight_counter = weight };

		return evprof_profile__write_folded(p, path, &o);
	}
	{
		struct evprof_firefox_opts o = { .sz = sizeof(o),
						 .weight_counter = weight };

		return evprof_profile__write_firefox(p, path, &o);
	}
}
