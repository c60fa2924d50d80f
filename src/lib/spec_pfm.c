// SPDX-License-Identifier: MIT
/* libpfm4's event names, when the library was built with it. */
#include <string.h>

#include "spec_pfm.h"

#ifdef EVPROF_HAVE_LIBPFM
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
/* After <linux/perf_event.h>: libpfm4 then skips its own copy of it. */
#include <perfmon/pfmlib_perf_event.h>

#define PFM_SONAME "libpfm.so.4" /* libpfm4's ABI */

/*
 * libpfm4 is opened on first use, not linked: its tables of every PMU's
 * events take 41,000 relocations at load, 0.6 ms of every evprof start
 * here, and only event names need it.
 */
static struct {
	pfm_err_t (*initialize)(void);
	pfm_err_t (*encode)(const char *, int, pfm_os_t, void *);
	const char *(*strerror)(int);
	int (*version)(void);
	int err;	     /* pfm_initialize()'s, when loaded */
	const char *missing; /* why not loaded, or NULL */
} pfm;
static pthread_once_t pfm_once = PTHREAD_ONCE_INIT;

static void pfm_load(void)
{
	void *h = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		pfm.missing = "cannot load " PFM_SONAME;
		return;
	}
	pfm.initialize = (pfm_err_t(*)(void))dlsym(h, "pfm_initialize");
	pfm.encode = (pfm_err_t(*)(const char *, int, pfm_os_t, void *))dlsym(
	    h, "pfm_get_os_event_encoding");
	pfm.strerror = (const char *(*)(int))dlsym(h, "pfm_strerror");
	pfm.version = (int (*)(void))dlsym(h, "pfm_get_version");
	if (!pfm.initialize || !pfm.encode || !pfm.strerror || !pfm.version) {
		pfm.missing = PFM_SONAME " lacks a function";
		return;
	}
	pfm.err = pfm.initialize();
}

bool evprof__spec_have_pfm(void)
{
	return true;
}

const char *evprof__spec_pfm_version(void)
{
	static char v[16];

	pthread_once(&pfm_once, pfm_load);
	if (pfm.missing)
		return NULL;
	snprintf(v, sizeof(v), "%d.%d", PFM_MAJ_VERSION(pfm.version()),
		 PFM_MIN_VERSION(pfm.version()));
	return v;
}

int evprof__spec_resolve_pfm(struct perf_event_attr *attr, const char *s,
			     struct spec_notes *why)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	int ret;

	pthread_once(&pfm_once, pfm_load);
	if (pfm.missing || pfm.err != PFM_SUCCESS) {
		evprof__spec_note(why, "libpfm4 unavailable: %s",
				  pfm.missing ? pfm.missing
					      : pfm.strerror(pfm.err));
		return -EVPROF_ERR_UNKNOWN_EVENT;
	}
	memset(&a, 0, sizeof(a));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &a;
	arg.size = sizeof(arg);
	/* User and kernel by default, like every other kind; :u/:k narrow. */
	ret = pfm.encode(s, PFM_PLM0 | PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		evprof__spec_note(why, "libpfm4: %s", pfm.strerror(ret));
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

const char *evprof__spec_pfm_version(void)
{
	return NULL;
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
