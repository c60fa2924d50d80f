// SPDX-License-Identifier: MIT
/* What the library was built from and with (evprof --version). */
#include <stdio.h>

#include <json-c/json_c_version.h>
#include <zlib.h>
#ifdef EVPROF_HAVE_LIBPFM
#include <perfmon/pfmlib.h>
#endif

#include <evprof/common.h>

#include "dso.h"

#ifndef EVPROF_VERSION
#define EVPROF_VERSION "unknown"
#endif
#ifndef EVPROF_REVISION
#define EVPROF_REVISION "unknown"
#endif

const struct evprof_build_info *evprof_version(void)
{
	static struct evprof_build_info info;
	static char pfm[16];

	if (info.version)
		return &info;
	info.revision = EVPROF_REVISION;
	info.elfutils = evprof__dso_elfutils_version();
	info.zlib = zlibVersion();
	info.json_c = json_c_version();
#ifdef EVPROF_HAVE_LIBPFM
	{
		int v = pfm_get_version();

		snprintf(pfm, sizeof(pfm), "%d.%d", PFM_MAJ_VERSION(v),
			 PFM_MIN_VERSION(v));
		info.libpfm = pfm;
	}
#endif
	info.version = EVPROF_VERSION; /* last: the "filled" mark */
	return &info;
}
