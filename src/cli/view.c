// SPDX-License-Identifier: MIT
/*
 * evprof view: a profile as the page (include/evprof/page.h), served on
 * 127.0.0.1 at a free port until Ctrl-C, or written to one HTML file.
 *
 * The server answers GET / with the page (everything inline, so one
 * response is all a browser needs) and 404 to anything else. It listens on
 * the loopback only and checks the Host header, so another site's page in
 * the same browser cannot read the profile through DNS rebinding.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <pthread.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#include <evprof/evprof.h>

#include "cli.h"

extern char **environ;

const char cli_view_usage[] =
    "usage: evprof view [--port N] [--no-open] [--weight EVENT] [--base BASE]\n"
    "                   FILE\n"
    "       evprof view -o OUT.html [--weight EVENT] [--base BASE] FILE\n"
    "\n"
    "  FILE                a profile from evprof: .json.gz, .pb.gz or folded\n"
    "  -o, --output OUT    write the page to OUT, data inline (opens offline)\n"
    "                      instead of serving it\n"
    "      --port N        serve on 127.0.0.1:N (default: a free port)\n"
    "      --no-open       do not start a browser (xdg-open, when there is\n"
    "                      a display)\n"
    "  -w, --weight EVENT  open weighed by samples, cpu or a counter\n"
    "  -b, --base BASE     a differential view: changes from BASE to FILE\n"
    "                      (red grew, blue shrank)\n";

/* What every connection's thread reads: the page and the expected Host. */
struct site {
	const char *page;
	size_t len;
	char host_ip[64];
	char host_name[64];
};

struct conn {
	const struct site *site;
	int fd;
};

static int send_all(int fd, const char *b, size_t n)
{
	while (n) {
		ssize_t k = send(fd, b, n, MSG_NOSIGNAL);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return -1;
		b += k;
		n -= (size_t)k;
	}
	return 0;
}

static void reply(int fd, const char *status, const char *type,
		  const char *body, size_t len, bool head)
{
	char hdr[256];
	int n = snprintf(hdr, sizeof(hdr),
			 "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
			 "Content-Length: %zu\r\nCache-Control: no-store\r\n"
			 "Connection: close\r\n\r\n",
			 status, type, len);

	if (send_all(fd, hdr, (size_t)n) == 0 && !head)
		send_all(fd, body, len);
}

/* The Host header's value in req (NUL-terminated), or NULL. */
static const char *host_of(char *req)
{
	char *h = strcasestr(req, "\r\nHost:"), *e;

	if (!h)
		return NULL;
	h += strlen("\r\nHost:");
	while (*h == ' ' || *h == '\t')
		h++;
	e = strstr(h, "\r\n");
	if (e)
		*e = 0;
	return h;
}

static void *serve_conn(void *arg)
{
	struct conn *c = arg;
	const struct site *s = c->site;
	struct timeval tv = {.tv_sec = 10};
	char req[8192], path[256];
	size_t n = 0;
	const char *host;
	bool head;

	/* A browser's idle preconnect, or a reader that stopped reading,
	 * must not hold a thread forever. */
	setsockopt(c->fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(c->fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (n < sizeof(req) - 1) {
		ssize_t k = recv(c->fd, req + n, sizeof(req) - 1 - n, 0);

		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			break;
		n += (size_t)k;
		req[n] = 0;
		if (strstr(req, "\r\n\r\n"))
			break;
	}
	req[n] = 0;
	head = !strncmp(req, "HEAD ", 5);
	if (!n || (!head && strncmp(req, "GET ", 4)) ||
	    sscanf(req + (head ? 5 : 4), "%255s", path) != 1) {
		if (n)
			reply(c->fd, "405 Method Not Allowed", "text/plain",
			      "GET only\n", 9, false);
	} else if (!(host = host_of(req)) ||
		   (strcmp(host, s->host_ip) && strcmp(host, s->host_name))) {
		reply(c->fd, "403 Forbidden", "text/plain",
		      "wrong Host header\n", 18, head);
	} else if (!strcmp(path, "/") || !strcmp(path, "/index.html")) {
		reply(c->fd, "200 OK", "text/html; charset=utf-8", s->page,
		      s->len, head);
	} else {
		reply(c->fd, "404 Not Found", "text/plain", "not found\n", 10,
		      head);
	}
	close(c->fd);
	free(c);
	return NULL;
}

/* xdg-open URL in the background, its output discarded; best effort. */
static void open_browser(const char *url)
{
	char *argv[] = {"xdg-open", (char *)url, NULL};
	posix_spawn_file_actions_t fa;
	pid_t pid;

	if (!getenv("DISPLAY") && !getenv("WAYLAND_DISPLAY"))
		return;
	/* Nothing waits for it: the kernel reaps it. */
	signal(SIGCHLD, SIG_IGN);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
	if (posix_spawnp(&pid, "xdg-open", &fa, NULL, argv, environ))
		cli_err("cannot run xdg-open; open %s in a browser", url);
	posix_spawn_file_actions_destroy(&fa);
}

static int serve(struct site *s, int port, bool open)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_port = htons((uint16_t)port),
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t alen = sizeof(a);
	pthread_attr_t attr;
	char url[64];
	int fd, one = 1;

	fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 ||
	    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&a, sizeof(a)) || listen(fd, 64) ||
	    getsockname(fd, (struct sockaddr *)&a, &alen)) {
		cli_err("cannot listen on 127.0.0.1:%d: %s", port,
			strerror(errno));
		if (fd >= 0)
			close(fd);
		return 1;
	}
	port = ntohs(a.sin_port);
	snprintf(s->host_ip, sizeof(s->host_ip), "127.0.0.1:%d", port);
	snprintf(s->host_name, sizeof(s->host_name), "localhost:%d", port);
	snprintf(url, sizeof(url), "http://127.0.0.1:%d/", port);
	printf("evprof view: %s (Ctrl-C ends)\n", url);
	fflush(stdout);
	if (open)
		open_browser(url);
	signal(SIGPIPE, SIG_IGN);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	for (;;) {
		struct conn *c;
		pthread_t t;
		int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

		if (cfd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE) {
				/* Out of fds until connections close: wait
				 * rather than spin. */
				nanosleep(
				    &(struct timespec){.tv_nsec = 100000000},
				    NULL);
				continue;
			}
			cli_err("accept: %s", strerror(errno));
			break;
		}
		c = malloc(sizeof(*c));
		if (!c) {
			close(cfd);
			continue;
		}
		*c = (struct conn){s, cfd};
		if (pthread_create(&t, &attr, serve_conn, c)) {
			close(cfd);
			free(c);
		}
	}
	pthread_attr_destroy(&attr);
	close(fd);
	return 1;
}

/* The page in memory, for the server. Returns 0 or -errno. */
static int page_in_memory(const struct evprof_profile *p,
			  const struct evprof_page_opts *po, char **buf,
			  size_t *len)
{
	FILE *f = open_memstream(buf, len);
	int err;

	if (!f)
		return -errno;
	err = evprof_profile__write_page_file(p, f, po);
	if (fclose(f) && !err)
		err = -ENOMEM;
	return err;
}

static struct evprof_profile *load(const char *path)
{
	struct evprof_profile *p = evprof_profile__load(path);

	if (!p)
		cli_err("cannot read %s: %s", path, evprof_strerror(errno));
	return p;
}

/* Every option of view; defaults in cmd_view. */
struct view_options {
	struct evprof_page_opts po;
	const char *out, *base_path;
	long port; /* 0: any */
	bool no_open;
};

static int opt_port(void *p, const char *arg)
{
	struct view_options *o = p;
	char *end;

	o->port = strtol(arg, &end, 10);
	if (*end || o->port < 0 || o->port > 65535) {
		cli_err("--port takes 0..65535");
		return -1;
	}
	return 0;
}

#define O struct view_options
static const struct cli_opts view_cli = {
    .usage = cli_view_usage,
    .opt = {
	CLI_OPT_STR("output", 'o', O, out),
	CLI_OPT_FN("port", 0, true, opt_port),
	CLI_OPT_FLAG("no-open", 0, O, no_open),
	CLI_OPT_STR("weight", 'w', O, po.weight),
	CLI_OPT_STR("base", 'b', O, base_path),
    }};
#undef O

int cmd_view(int argc, char **argv)
{
	struct view_options o = {.po = {.sz = sizeof(o.po)}};
	struct evprof_profile *p = NULL, *base = NULL;
	struct site site = {0};
	char *page = NULL, title[PATH_MAX];
	int first, err, ret;

	ret = cli_parse_opts(&view_cli, argc, argv, &o, &first);
	if (ret != CLI_GO_ON)
		return ret;
	if (first != argc - 1) {
		cli_err("view needs one profile file");
		fputs(cli_view_usage, stderr);
		return 2;
	}
	ret = 1;
	if (!evprof_page__available()) {
		cli_err("%s", cli_page_missing);
		return 1;
	}
	p = load(argv[first]);
	if (!p)
		goto out;
	if (o.base_path) {
		base = load(o.base_path);
		if (!base)
			goto out;
		o.po.base = base;
	}
	o.po.title =
	    out_page_title(title, sizeof(title), o.base_path, argv[first]);
	if (o.po.weight && !out_has_column(p, o.po.weight)) {
		cli_err("no counter named '%s' in %s", o.po.weight,
			argv[first]);
		goto out;
	}
	if (o.out)
		err = evprof_profile__write_page(p, o.out, &o.po);
	else
		err = page_in_memory(p, &o.po, &page, &site.len);
	if (err)
		cli_err("cannot write %s: %s", o.out ? o.out : "the page",
			evprof_strerror(err));
	if (err || o.out) {
		ret = err ? 1 : 0;
		goto out;
	}
	evprof_profile__free(base);
	evprof_profile__free(p);
	base = p = NULL;
	site.page = page;
	ret = serve(&site, (int)o.port, !o.no_open);
out:
	free(page);
	evprof_profile__free(base);
	evprof_profile__free(p);
	return ret;
}
