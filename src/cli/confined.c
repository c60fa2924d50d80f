// SPDX-License-Identifier: MIT
/* What a container left out of evprof's view, in words: info and record. */
#include <stdio.h>

#include <evprof/evprof.h>

#include "cli.h"

int cli_say_confinement(FILE *f, const char *prefix, bool attached,
			const char *end)
{
	struct evprof_confinement c = {.sz = sizeof(c)};
	int n = 0;

	if (evprof_proc__confinement(&c))
		return 0;
	if (attached && c.own_pid_ns && ++n)
		fprintf(f,
			"%sevprof runs in a pid namespace of its own (a "
			"container): the kernel gives the tasks outside it "
			"pid 0, so -a leaves them out as idle, and -p reaches "
			"only its own; give it the host's "
			"(docker or podman run --pid=host, Kubernetes "
			"hostPID: true)%s\n",
			prefix, end);
	if (attached && c.foreign_proc && ++n)
		fprintf(f,
			"%s/proc belongs to another pid namespace than "
			"evprof's: its pids are not the ones samples carry; "
			"mount the /proc of the pid namespace evprof runs in "
			"(the host's, with the host's pid namespace)%s\n",
			prefix, end);
	if (c.own_cgroup_ns && ++n)
		fprintf(f,
			"%sevprof runs in a cgroup namespace of its own: "
			"--cgroup paths and cgroup labels are relative to it "
			"and miss the container ids above it; give it the "
			"host's (docker or podman run --cgroupns=host)%s\n",
			prefix, end);
	if (c.seccomp_filter && !evprof_probe(EVPROF_FEAT_SYSTEM_WIDE)->yes &&
	    ++n)
		fprintf(f,
			"%sa seccomp filter is on, and CPU-wide events do not "
			"open: older container runtimes' default filters "
			"refuse perf_event_open without CAP_SYS_ADMIN, "
			"whatever the other capabilities; run with "
			"--security-opt seccomp=unconfined or a profile that "
			"allows perf_event_open (and bpf for --engine bpf)"
			"%s\n",
			prefix, end);
	return n;
}
