// SPDX-License-Identifier: MIT
/* The BPF engine when evprof is built without it (EVPROF_WITH_BPF=OFF). */
#include <errno.h>
#include <stdio.h>

#include "engine.h"

static bool bpf_available(char *why, size_t len)
{
	snprintf(
	    why, len, "%s",
	    "not built in (needs clang, libbpf and bpftool at build time)");
	return false;
}

static void bpf_prepare(struct evprof__engine_setup *s)
{
	(void)s;
}

static int bpf_check(struct evprof__engine_setup *s)
{
	(void)s;
	return 0;
}

static int bpf_open(struct evprof__engine_setup *s, struct evprof__engine **out)
{
	(void)s;
	(void)out;
	pr_warn("this evprof was built without the BPF engine (needs clang, "
		"libbpf and bpftool at build time)\n");
	return -EOPNOTSUPP;
}

/* Opens nothing: the recorder calls no other op. */
const struct evprof__engine_ops evprof__engine_bpf = {
    .available = bpf_available,
    .prepare = bpf_prepare,
    .check = bpf_check,
    .open = bpf_open,
};
