// SPDX-License-Identifier: MIT
/*
 * Fuzzes evprof_profile__load_buf (gzip, the pprof decoder, the Firefox
 * JSON reader), then runs the report and every writer over whatever
 * loaded: a loaded model must be as sound as a recorded one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include <evprof/profile.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	    evprof_profile__write_folded(p, "/dev/null", NULL))
		abort();
	fclose(null);
	evprof_profile__free(p);
	return 0;
}
