// SPDX-License-Identifier: MIT
/* What the library was built from and with (evprof --version). */
#include <json-c/json_c_version.h>
#include <zlib.h>

#include <evprof/common.h>

#include "symbols/symbols.h"
#include "revision.h" /* the build writes it at every build */
#include "events/events.h"

/* The header's version is the one the map's newest node and the build name. */
_Static_assert(
    EVPROF_VERSION_MAJOR == EVPROF_PROJECT_MAJOR &&
	EVPROF_VERSION_MINOR == EVPROF_PROJECT_MINOR,
    "include/evprof/common.h and CMakeLists.txt disagree on the version");

const struct evprof_build_info *evprof_version(void)
{
	static struct evprof_build_info info;
	if (info.version)
		return &info;
	info.revision = EVPROF_REVISION;
	info.elfutils = evprof__dso_elfutils_version();
	info.zlib = zlibVersion();
	info.json_c = json_c_version();
	info.libpfm = evprof__spec_pfm_version();
	info.version = EVPROF_VERSION; /* last: the "filled" mark */
	return &info;
}
