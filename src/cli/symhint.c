// SPDX-License-Identifier: MIT
/* Where a hot image without symbols gets them: one line per image. */
#define _GNU_SOURCE
#include <fcntl.h>
#include <limits.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <evprof/profile.h>

#include "cli.h"

extern char **environ;

/* Images without symbols holding this share of the weight get a line. */
#define HINT_SHARE 0.10

/*
 * The Debian package that installed path (dpkg -S), into pkg without its
 * architecture; false without dpkg or an owner. Asked by the file's name
 * and matched by realpath, as dpkg may list it under /lib for /usr/lib.
 */
static bool owner(const char *path, char *pkg, size_t len)
{
	const char *base = strrchr(path, '/');
	char pattern[PATH_MAX + 2], line[PATH_MAX + 256];
	char *real = realpath(path, NULL),
	     *argv[] = {"dpkg", "-S", pattern, NULL};
	posix_spawn_file_actions_t fa;
	bool found = false;
	int fds[2], st;
	pid_t pid;
	FILE *f;

	if (!real || !base || pipe2(fds, O_CLOEXEC)) {
		free(real);
		return false;
	}
	snprintf(pattern, sizeof(pattern), "*%s", base);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, fds[1], 1);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "dpkg", &fa, NULL, argv, environ))
		pid = -1;
	posix_spawn_file_actions_destroy(&fa);
	close(fds[1]);
	f = fdopen(fds[0], "r");
	/* "liblzma5:amd64: /lib/x86_64-linux-gnu/liblzma.so.5.4.1" */
	while (f && fgets(line, sizeof(line), f)) {
		char *sep = strstr(line, ": "), *file, *r;
		size_t n;

		if (found || !sep || strncmp(sep + 2, "/", 1))
			continue;
		*sep = '\0';
		file = sep + 2;
		file[strcspn(file, "\n")] = '\0';
		r = realpath(file, NULL);
		n = strcspn(line, ":,");
		if (r && !strcmp(r, real) && n < len) {
			memcpy(pkg, line, n);
			pkg[n] = '\0';
			found = true;
		}
		free(r);
	}
	if (f)
		fclose(f);
	else
		close(fds[0]);
	if (pid > 0)
		waitpid(pid, &st, 0);
	free(real);
	return found;
}

void cli_symbol_hints(const struct evprof_profile *p, const char *column)
{
	struct evprof_profile_unnamed u[4];
	const char *urls = getenv("DEBUGINFOD_URLS");
	int n = evprof_profile__unnamed_libs(p, column, HINT_SHARE, u, 4);

	for (int i = 0; i < n && i < 4; i++) {
		const unsigned char *id = u[i].build_id;
		char pkg[200], way[3][256], ways[800] = "", hex[129] = "";
		int nw = 0;
		size_t off = 0;

		for (size_t k = 0; k < u[i].build_id_len && k < 64; k++)
			snprintf(hex + 2 * k, 3, "%02x", id[k]);
		if (owner(u[i].path, pkg, sizeof(pkg)))
			snprintf(way[nw++], sizeof(way[0]),
				 "install %s-dbgsym (Debian's debug archive)",
				 pkg);
		/* Both are found by the image's build id. */
		if (hex[0] && (!urls || !*urls))
			snprintf(way[nw++], sizeof(way[0]),
				 "set DEBUGINFOD_URLS to a debuginfod server");
		if (hex[0])
			snprintf(way[nw++], sizeof(way[0]),
				 "put its debug file at "
				 "/usr/lib/debug/.build-id/%.2s/%s.debug",
				 hex, hex + 2);
		for (int k = 0; k < nw && off < sizeof(ways); k++)
			off += (size_t)snprintf(ways + off, sizeof(ways) - off,
						"%s%s",
						!k	     ? ""
						: k < nw - 1 ? ", "
						: nw > 2     ? ", or "
							     : " or ",
						way[k]);
		if (!nw)
			continue;
		cli_err("%.1f%% of %s is in %s without symbols (%s+0x...): to "
			"name its functions, %s",
			100 * u[i].share,
			!strcmp(u[i].column, "cpu")	  ? "the CPU time"
			: !strcmp(u[i].column, "samples") ? "the samples"
							  : u[i].column,
			u[i].path, u[i].name, ways);
	}
}
