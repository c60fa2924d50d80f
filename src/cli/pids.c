// SPDX-License-Identifier: MIT
/*
 * The processes of record and stat: -p PID[,PID...], --cgroup PATH, pidfds,
 * exit codes.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <evprof/cgroup.h>
#include <evprof/proc.h>

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

/*
 * PID@NS: pid PID as the pid namespace NS sees it, NS being
 * /proc/HOSTPID/ns/pid or HOSTPID for short (a process in a container).
 * Returns the pid here (*end past NS), or -1 after a message.
 */
static long ns_pid(long pid, const char *ns, char **end)
{
	size_t len = strcspn(ns, ",");
	char path[PATH_MAX];
	int r;

	if (len && strspn(ns, "0123456789") == len)
		snprintf(path, sizeof(path), "/proc/%.*s/ns/pid", (int)len, ns);
	else
		snprintf(path, sizeof(path), "%.*s", (int)len, ns);
	*end = (char *)ns + len;
	r = evprof_proc__ns_pid((int)pid, path);
	if (r == -ESRCH)
		cli_err("no process %ld in the pid namespace %s", pid, path);
	else if (r < 0)
		cli_err("pid namespace %s: %s", path, strerror(-r));
	else
		cli_err("pid %ld of the pid namespace %s is pid %d here", pid,
			path, r);
	return r < 0 ? -1 : r;
}

int cli_cgroup_fs(struct evprof_cgroup_fs *fs)
{
	int err = evprof_cgroup_fs__find(fs);
	char why[128];

	if (err)
		cli_err("cannot filter by cgroup: %s",
			evprof_cgroup__why(err, NULL, why, sizeof(why)));
	return err;
}

int cli_cgroup_open(const struct evprof_cgroup_fs *fs, const char *path,
		    struct evprof_cgroup *cg)
{
	int err = evprof_cgroup__resolve(fs, path, cg), fd = -1;
	char why[PATH_MAX + 128];

	if (!err) {
		fd = open(cg->path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		err = fd < 0 ? -errno : 0;
	}
	if (err)
		cli_err("cgroup '%s': %s", path,
			evprof_cgroup__why(err, fs, why, sizeof(why)));
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

		if (end != p && *end == '@' && pid > 0 && pid <= INT32_MAX) {
			pid = ns_pid(pid, end + 1, &end);
			if (pid < 0)
				goto fail;
		}
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
