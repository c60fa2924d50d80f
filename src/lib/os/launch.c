// SPDX-License-Identifier: MIT
/* Launching the profiled command: see include/evprof/launch.h. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <evprof/launch.h>

#include "launch.h"

struct evprof_launch {
	pid_t pid;
	int go_fd;  /* write end: one byte releases the child */
	int err_fd; /* read end: errno of a failed exec, EOF on success */
};

static void close_fd(int *fd)
{
	if (*fd >= 0)
		close(*fd);
	*fd = -1;
}

struct evprof_launch *evprof_launch__new(char *const argv[])
{
	struct evprof_launch *l;
	int go[2] = {-1, -1}, err[2] = {-1, -1}, e;

	if (!argv || !argv[0]) {
		errno = EINVAL;
		return NULL;
	}
	l = calloc(1, sizeof(*l));
	if (!l)
		return NULL;
	if (pipe2(go, O_CLOEXEC) < 0 || pipe2(err, O_CLOEXEC) < 0)
		goto fail;
	l->pid = fork();
	if (l->pid < 0)
		goto fail;
	if (l->pid == 0) {
		char c;

		close(go[1]);
		close(err[0]);
		/* A parent that ignores SIGINT while we run: we must not. */
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		if (read(go[0], &c, 1) != 1)
			_exit(127); /* the parent gave up before releasing us */
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
	return l;
fail:
	e = errno;
	close_fd(&go[0]);
	close_fd(&go[1]);
	close_fd(&err[0]);
	close_fd(&err[1]);
	free(l);
	errno = e;
	return NULL;
}

pid_t evprof_launch__pid(const struct evprof_launch *l)
{
	return l ? l->pid : -1;
}

int evprof_launch__go(struct evprof_launch *l)
{
	int e = 0;
	ssize_t n;

	if (!l || l->go_fd < 0)
		return -EINVAL;
	if (write(l->go_fd, "g", 1) != 1)
		e = errno;
	close_fd(&l->go_fd);
	if (e)
		return -e;
	do
		n = read(l->err_fd, &e, sizeof(e));
	while (n < 0 && errno == EINTR);
	close_fd(&l->err_fd);
	if (n == (ssize_t)sizeof(e)) {
		waitpid(l->pid, NULL, 0);
		return -e;
	}
	return 0;
}

void evprof_launch__free(struct evprof_launch *l)
{
	if (!l)
		return;
	if (l->go_fd >= 0) {
		/* Never released: it must not outlive us. */
		kill(l->pid, SIGKILL);
		close_fd(&l->go_fd);
		waitpid(l->pid, NULL, 0);
	}
	close_fd(&l->err_fd);
	free(l);
}

int evprof__pidfd_open(pid_t pid)
{
	/* pidfds are always close-on-exec (Linux 5.3). */
	int fd = (int)syscall(SYS_pidfd_open, pid, 0);

	return fd < 0 ? -errno : fd;
}
