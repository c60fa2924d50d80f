// SPDX-License-Identifier: MIT
/*
 * Seeding a session from a live process: the only session code that reads
 * /proc (and keeps the binaries of its mappings that only its mount
 * namespace has: evprof__dso_pin()). It gathers what the proc module reads into one
 * evprof_session_seed and hands it to the pure evprof_session__seed(), so
 * everything below can be driven on bytes alone (tests, fuzzers).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <evprof/proc.h>
#include <evprof/session.h>

#include "symbols/symbols.h"

#define NAME_LEN 64 /* TASK_COMM_LEN is 16 */

struct seed_buf {
	struct evprof_map *maps;
	size_t nr_maps, cap;
};

/* Keeps the executable mappings, their paths copied. */
static int keep_map(const struct evprof_map *m, void *arg)
{
	struct seed_buf *b = arg;
	char *path;

	if (!(m->prot & EVPROF_MAP_EXEC))
		return 0;
	if (b->nr_maps == b->cap) {
		size_t cap = b->cap ? b->cap * 2 : 32;
		struct evprof_map *p = realloc(b->maps, cap * sizeof(*p));

		if (!p)
			return -ENOMEM;
		b->maps = p;
		b->cap = cap;
	}
	path = strdup(m->path);
	if (!path)
		return -ENOMEM;
	b->maps[b->nr_maps] = *m;
	b->maps[b->nr_maps++].path = path;
	return 0;
}

/*
 * The cgroup v2 path of pid (the "0::" line of /proc/PID/cgroup) into buf,
 * or "" (no cgroup2, or gone).
 */
static void read_cgroup(pid_t pid, char *buf, size_t len)
{
	char path[64], line[4096];
	FILE *f;

	*buf = '\0';
	snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
	f = fopen(path, "re");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		if (strncmp(line, "0::", 3))
			continue;
		line[strcspn(line, "\n")] = '\0';
		snprintf(buf, len, "%s", line + 3);
		break;
	}
	fclose(f);
}

int evprof_session__seed_process(struct evprof_session *s, pid_t pid)
{
	char cgroup[4096];
	struct evprof_session_thread_seed *threads = NULL;
	struct seed_buf maps = {0};
	char name[NAME_LEN], (*names)[NAME_LEN] = NULL;
	int *tids = NULL;
	size_t nr_threads = 0;
	int n, err;

	if (!s || pid <= 0)
		return -EINVAL;
	err = evprof_proc__read_comm(pid, 0, name, sizeof(name));
	if (err < 0)
		goto out;
	n = evprof_proc__read_tids(pid, &tids);
	if (n < 0) {
		err = n;
		goto out;
	}
	threads = calloc((size_t)n + 1, sizeof(*threads));
	names = calloc((size_t)n + 1, sizeof(*names));
	if (!threads || !names) {
		err = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < n; i++) {
		err = evprof_proc__read_comm(pid, tids[i], names[nr_threads],
					     sizeof(names[0]));
		/* A thread may exit while we read: not an error. */
		if (err == -ESRCH)
			continue;
		if (err < 0)
			goto out;
		threads[nr_threads].tid = tids[i];
		threads[nr_threads].name = names[nr_threads];
		nr_threads++;
	}
	err = evprof_maps__read(pid, keep_map, &maps);
	if (err < 0)
		goto out;
	read_cgroup(pid, cgroup, sizeof(cgroup));
	/* A container's binaries, readable later only if kept now. */
	for (size_t i = 0; i < maps.nr_maps; i++)
		evprof__dso_pin(pid, maps.maps[i].path, maps.maps[i].inode);
	err = evprof_session__seed(s,
				   &(struct evprof_session_seed){
				       .sz = sizeof(struct evprof_session_seed),
				       .pid = pid,
				       .name = name,
				       .threads = threads,
				       .nr_threads = nr_threads,
				       .maps = maps.maps,
				       .nr_maps = maps.nr_maps,
				       .cgroup = cgroup,
				   });
	/* A container's view of it, where it has a pid namespace of its own. */
	for (size_t i = 0; !err && i < nr_threads; i++) {
		int ns_pid, ns_tid;
		int in =
		    evprof_proc__ns_ids(pid, threads[i].tid, &ns_pid, &ns_tid);

		if (in == 0)
			break; /* threads share their pid namespace */
		if (in == 1)
			err = evprof_session__name_ns_ids(
			    s, 0, pid, threads[i].tid, ns_pid, ns_tid);
	}
out:
	for (size_t i = 0; i < maps.nr_maps; i++)
		free((char *)maps.maps[i].path);
	free(maps.maps);
	free(names);
	free(threads);
	free(tids);
	return err < 0 ? err : 0;
}
