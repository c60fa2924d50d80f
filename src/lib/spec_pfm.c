// SPDX-License-Identifier: MIT
/* libpfm4's event names, when the library was built with it. */
#include <string.h>

#include "spec_pfm.h"

#ifdef EVPROF_HAVE_LIBPFM
#include <pthread.h>
/* After <linux/perf_event.h>: libpfm4 then skips its own copy of it. */
#include <perfmon/pfmlib_perf_event.h>

static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;
static int pfm_init_err;

static void pfm_init(void)
{
	pfm_init_err = pfm_initialize();
}

bool evprof__spec_have_pfm(void)
{
	return true;
}

int evprof__spec_resolve_pfm(struct perf_event_attr *attr, const char *s,
			     struct spec_notes *why)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	int ret;

	pthread_once(&pfm_once, pfm_init);
	if (pfm_init_err != PFM_SUCCESS) {
		evprof__spec_note(why, "libpfm4 unavailable: %s",
				  pfm_strerror(pfm_init_err));
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	/* User and kernel by default, like every other kind; :u/:k narrow. */
	ret = pfm_get_os_event_encoding(s, PFM_PLM0 | PFM_PLM3,
					PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		evprof__spec_note(why, "libpfm4: %s", pfm_strerror(ret));
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	*attr = a;
	return 0;
}
#else
bool evprof__spec_have_pfm(void)
{
	return false;
}

int evprof__spec_resolve_pfm(struct perf_event_attr *attr, const char *s,
			     struct spec_notes *why)
{
	(void)attr;
	(void)s;
	(void)why;
	return -EVPROF_ERR_UNKNOWN_EVENT;
}
#endif
