// SPDX-License-Identifier: MIT
/* sys:name tracepoints: their ids, read from tracefs. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "host.h"
#include "spec_trace.h"

int evprof__spec_resolve_tracepoint(struct perf_event_attr *attr, const char *s,
				    struct spec_notes *why,
				    struct spec_notes *fail)
{
	const char *const *roots = evprof__host()->tracefs;
	const char *colon = strchr(s, ':');
	size_t syslen = (size_t)(colon - s);
	char path[PATH_MAX], buf[32], tried[2 * PATH_MAX] = "";
	size_t off = 0;

	if (!evprof__spec_safe_component(s, syslen) ||
	    !evprof__spec_safe_component(colon + 1, strlen(colon + 1)))
		return -EVPROF_ERR_UNKNOWN_EVENT;
	for (size_t i = 0; i < EVPROF_HOST_TRACEFS_MAX; i++) {
		struct stat st;
		uint64_t id;
		int n;

		if (!roots[i])
			continue;
		if (off < sizeof(tried))
			off += (size_t)snprintf(tried + off,
						sizeof(tried) - off, "%s%s",
						off ? " or " : "", roots[i]);
		snprintf(path, sizeof(path), "%s/events", roots[i]);
		if (stat(path, &st) < 0) {
			if (errno == ENOENT)
				continue;
			n = -errno;
			evprof__spec_note(fail, "cannot read tracefs at %s: %s",
					  path, strerror(errno));
			return n;
		}
		snprintf(path, sizeof(path), "%s/events/%.*s/%s/id", roots[i],
			 (int)syslen, s, colon + 1);
		n = evprof__read_file(path, buf, sizeof(buf));
		if (n == -ENOENT || n == -ENOTDIR) {
			evprof__spec_note(why, "no tracepoint at %s", path);
			return -EVPROF_ERR_UNKNOWN_EVENT;
		}
		if (n < 0) {
			evprof__spec_note(fail,
					  "cannot read tracepoint id %s: %s",
					  path, strerror(-n));
			return n;
		}
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
			n--;
		if (evprof__spec_u64(buf, (size_t)n, &id)) {
			evprof__spec_note(
			    fail, "tracepoint id file %s holds no number",
			    path);
			return -EVPROF_ERR_MALFORMED;
		}
		attr->type = PERF_TYPE_TRACEPOINT;
		attr->config = id;
		return 0;
	}
	if (off)
		evprof__spec_note(why,
				  "tracefs is not mounted at %s (mount -t "
				  "tracefs nodev /sys/kernel/tracing)",
				  tried);
	else
		evprof__spec_note(why, "no tracefs on this host");
	return -EVPROF_ERR_UNKNOWN_EVENT;
}
