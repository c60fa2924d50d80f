// SPDX-License-Identifier: MIT
/*
 * Fuzzes the perf.data reader: the input is a whole file (file or pipe
 * mode), imported from memory with symbols off (no file is opened), and
 * the profile is written in every format. A failure must come with a
 * message; success must leave the reader's counts consistent.
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <evprof/perfdata.h>
#include <evprof/profile.h>

#include "write_all.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct evprof_perfdata_opts o = {.sz = sizeof(o), .no_symbols = true};
	struct evprof_perfdata_stats st = {.sz = sizeof(st)};
	struct evprof_perfdata *pd = evprof_perfdata__open_mem(data, size, &o);
	struct evprof_profile *p;

	if (!pd)
		abort();
	p = evprof_perfdata__import(pd);
	if (!p) {
		/* Bad input: one message naming what and where. */
		if (errno == EVPROF_ERR_BAD_PERFDATA &&
		    !evprof_perfdata__error(pd)[0])
			abort();
	} else {
		if (evprof_perfdata__stats(pd, &st) || st.samples > st.records)
			abort();
		write_all(p);
		evprof_profile__free(p);
	}
	evprof_perfdata__free(pd);
	return 0;
}
