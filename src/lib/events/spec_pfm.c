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
 * events take 41,000 relocations at load, 1.2 ms of every evprof start
 * here, and only event names need it.
 */
static struct {
	pfm_err_t (*initialize)(void);
	pfm_err_t (*encode)(const char *, int, pfm_os_t, void *);
	const char *(*strerror)(int);
	int (*version)(void);
	char missing[160]; /* why it is not loaded, or "" */
	int err;	   /* pfm_initialize()'s */
} pfm;
static pthread_once_t load_once = PTHREAD_ONCE_INIT;
static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void pfm_load(void)
{
	void *h = dlopen(PFM_SONAME, RTLD_NOW | RTLD_LOCAL);

#define SYM(f, name) (*(void **)&pfm.f = dlsym(h, name))
	if (!h || !SYM(initialize, "pfm_initialize") ||
	    !SYM(encode, "pfm_get_os_event_encoding") ||
	    !SYM(strerror, "pfm_strerror") || !SYM(version, "pfm_get_version"))
		snprintf(pfm.missing, sizeof(pfm.missing),
			 "cannot load libpfm4: %s", dlerror());
#undef SYM
}

/* Probes the PMUs: only for resolving names. */
static void pfm_init(void)
{
	pthread_once(&load_once, pfm_load);
	if (!pfm.missing[0])
		pfm.err = pfm.initialize();
}

bool evprof__spec_have_pfm(void)
{
	pthread_once(&load_once, pfm_load);
	return !pfm.missing[0];
}

const char *evprof__spec_pfm_version(void)
{
	static char v[16];
	int n;

	pthread_once(&load_once, pfm_load);
	if (pfm.missing[0])
		return NULL;
	n = pfm.version();
	snprintf(v, sizeof(v), "%d.%d", PFM_MAJ_VERSION(n), PFM_MIN_VERSION(n));
	return v;
}

int evprof__spec_resolve_pfm(struct perf_event_attr *attr, const char *s,
			     struct spec_notes *why)
{
	struct perf_event_attr a;
	pfm_perf_encode_arg_t arg;
	int ret;

	pthread_once(&init_once, pfm_init);
	if (pfm.missing[0] || pfm.err != PFM_SUCCESS) {
		evprof__spec_note(why, "libpfm4 unavailable: %s",
				  pfm.missing[0] ? pfm.missing
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
