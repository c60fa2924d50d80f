// SPDX-License-Identifier: MIT
/*
 * The processes of record and stat: -p PID[,PID...], --cgroup PATH, pidfds,
 * exit codes.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <evprof/cgroup.h>

#include "cli.h"

int cli_cgroup_add(struct cli_cgroups *c, const char *arg)
{
	if (c->n == CLI_CGROUPS_MAX) {
		cli_err("at most %d cgroups", CLI_CGROUPS_MAX);
		return -1;
	}
	c->v[c->n++] = arg;
	return 0;
}

int cli_cgroup_fs(struct evprof_cgroup_fs *fs)
{
	int err = evprof_cgroup_fs__find(fs);

	if (err)
		cli_err("cannot filter by cgroup: %s",
			err == -ENOENT ? "this host mounts no cgroup2 and no "
					 "cgroup v1 hierarchy with the "
					 "perf_event controller"
				       : strerror(-err));
	return err;
}

int cli_cgroup_open(const struct evprof_cgroup_fs *fs, const char *path,
		    struct evprof_cgroup *cg)
{
	int err = evprof_cgroup__resolve(fs, path, cg), fd = -1;

	if (!err) {
		fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = fd < 0 ? -errno : 0;
	}
	if (err == -ENOENT)
		cli_err("cgroup '%s': no such cgroup in the perf_event "
			"hierarchy (cgroup v%d at %s)",
			path, fs->version, fs->mount);
	else if (err == -EXDEV)
		cli_err("cgroup '%s': outside the perf_event hierarchy "
			"(cgroup v%d at %s); give a path under it or from its "
			"root",
			path, fs->version, fs->mount);
	else if (err)
		cli_err("cgroup '%s': %s", path, strerror(-err));
	return err ? err : fd;
}

int cli_parse_pids(const char *list, pid_t **pids)
{
	const char *p = list;
	size_t n = 0;

	*pids = NULL;
	while (*p) {
		char *end;
		long pid = strtol(p, &end, 10);
		pid_t *t;

		if (end == p || pid <= 0 || pid > INT32_MAX ||
		    (*end && *end != ',')) {
			cli_err("bad pid list '%s'", list);
			goto fail;
		}
		if (kill((pid_t)pid, 0) < 0 && errno == ESRCH) {
			cli_err("no process %ld", pid);
			goto fail;
		}
		t = realloc(*pids, (n + 1) * sizeof(*t));
		if (!t) {
			cli_err("out of memory");
			goto fail;
		}
		*pids = t;
		(*pids)[n++] = (pid_t)pid;
		p = *end ? end + 1 : end;
	}
	if (!n) {
		cli_err("bad pid list '%s'", list);
		goto fail;
	}
	return (int)n;
fail:
	free(*pids);
	*pids = NULL;
	return -1;
}

int cli_pidfd_open(pid_t pid)
{
	/* pidfds are always close-on-exec (Linux 5.3). */
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}

int cli_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}
