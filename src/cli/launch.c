// SPDX-License-Identifier: MIT
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"
#include "launch.h"

int launch_prepare(struct launch *l, char *const argv[])
{
	int go[2], err[2];

	if (pipe2(go, O_CLOEXEC) < 0)
		return -errno;
	if (pipe2(err, O_CLOEXEC) < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		return e;
	}
	l->pid = fork();
	if (l->pid < 0) {
		int e = -errno;

		close(go[0]);
		close(go[1]);
		close(err[0]);
		close(err[1]);
		return e;
	}
	if (l->pid == 0) {
		char c;
		int e;

		close(go[1]);
		close(err[0]);
		/* The parent ignores SIGINT while we run; we must not. */
		signal(SIGINT, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* parent gave up before releasing us */
		execvp(argv[0], argv);
		e = errno;
		if (write(err[1], &e, sizeof(e)) < 0)
			_exit(127);
		_exit(127);
	}
	close(go[0]);
	close(err[1]);
	l->go_fd = go[1];
	l->err_fd = err[0];
	return 0;
}

int launch_go(struct launch *l)
{
	int e = 0;
	ssize_t n;

	if (write(l->go_fd, "g", 1) != 1)
		e = errno;
	close(l->go_fd);
	l->go_fd = -1;
	if (e)
		return -e;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close(l->err_fd);
	l->err_fd = -1;
	if (n == (ssize_t)sizeof(e)) {
		waitpid(l->pid, NULL, 0);
		return -e;
	}
	return 0;
}

void launch_abort(struct launch *l)
{
	kill(l->pid, SIGKILL);
	if (l->go_fd >= 0)
		close(l->go_fd);
	if (l->err_fd >= 0)
		close(l->err_fd);
	l->go_fd = l->err_fd = -1;
	waitpid(l->pid, NULL, 0);
}

int launch_exit_code(int status)
{
	if (WIFEXITED(status))
		return WEXITSTATUS(status);
	if (WIFSIGNALED(status))
		return 128 + WTERMSIG(status);
	return 1;
}

int launch_parse_pids(const char *list, pid_t **pids)
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

int launch_pidfd(pid_t pid)
{
	/* pidfds are always close-on-exec (Linux 5.3). */
	return (int)syscall(SYS_pidfd_open, pid, 0);
}
