// SPDX-License-Identifier: MIT
/* The BPF engine when evprof is built without it (EVPROF_WITH_BPF=OFF). */
#include <errno.h>
#include <stdio.h>

#include <evprof/recorder.h>

#include "engine_bpf.h"
#include "base/util.h"

bool evprof_recorder__engine_available(enum evprof_recorder_engine e, char *why,
				       size_t len)
{
	bool ring = e == EVPROF_RECORDER_ENGINE_RING;

	if (why && len)
		snprintf(why, len, "%s",
			 ring ? "the ring engine is always built"
			      : "not built in (needs clang, libbpf and "
				"bpftool at build time)");
	return ring;
}

int evprof__bpf_open(struct evprof_recorder *r)
{
	(void)r;
	pr_warn("this evprof was built without the BPF engine (needs clang, "
		"libbpf and bpftool at build time)\n");
	return -EOPNOTSUPP;
}

int evprof__bpf_start(struct evprof_recorder *r)
{
	(void)r;
	return -EOPNOTSUPP;
}

int evprof__bpf_window(struct evprof_recorder *r, uint64_t until)
{
	(void)r;
	(void)until;
	return -EOPNOTSUPP;
}

int evprof__bpf_stop(struct evprof_recorder *r)
{
	(void)r;
	return -EOPNOTSUPP;
}

void evprof__bpf_close(struct evprof_bpf *b)
{
	(void)b;
}
