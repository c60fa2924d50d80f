// SPDX-License-Identifier: MIT
/*
 * The pusher's queue against a loopback server that accepts a connection
 * and never answers: pushes return at once, a full queue drops its oldest
 * unsent windows (counted), flush gives up at its deadline, free aborts
 * the attempt in flight. The counts follow from the arithmetic of the
 * pushes, not from the pusher.
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <cmocka.h>

#include <evprof/push.h>

#include "cases.h"

/* Profile{sample_type: [{1, 2}], string_table: ["", "samples", "count"]} */
static const unsigned char pprof1[] = {
    0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, 0x32, 0x00, 0x32, 0x07, 's', 'a',
    'm',  'p',	'l',  'e',  's',  0x32, 0x05, 'c',  'o',  'u',	'n', 't',
};

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_queue_drops_oldest(void **state)
{
	struct sockaddr_in a = {.sin_family = AF_INET,
				.sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t al = sizeof(a);
	struct evprof_push_window w = {.sz = sizeof(w),
				       .start_ns = 1000000000000ull,
				       .end_ns = 1010000000000ull};
	struct evprof_push_stats st = {.sz = sizeof(st)};
	struct evprof_push_opts o = {.sz = sizeof(o)};
	struct evprof_pusher *pu;
	struct pollfd pfd;
	char url[64];
	double t;
	int ls, conn;

	(void)state;
	ls = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	assert_true(ls >= 0);
	assert_int_equal(bind(ls, (struct sockaddr *)&a, sizeof(a)), 0);
	assert_int_equal(listen(ls, 8), 0);
	assert_int_equal(getsockname(ls, (struct sockaddr *)&a, &al), 0);
	snprintf(url, sizeof(url), "http://127.0.0.1:%u", ntohs(a.sin_port));
	o.url = url;
	o.app_name = "test";
	o.queue_max = 2;
	o.timeout_ms = 60000;
	pu = evprof_pusher__new(&o);
	if (!pu && errno == EOPNOTSUPP)
		skip_because("built without libcurl");
	assert_non_null(pu);

	/* The first window goes in flight: the server sees the connection. */
	assert_int_equal(evprof_pusher__push(pu, pprof1, sizeof(pprof1), &w),
			 0);
	pfd = (struct pollfd){.fd = ls, .events = POLLIN};
	assert_int_equal(poll(&pfd, 1, 30000), 1);
	conn = accept(ls, NULL, NULL);
	assert_true(conn >= 0);

	/* Four more while it hangs: 2 queued, the 2 oldest dropped. */
	t = now_s();
	for (int i = 0; i < 4; i++)
		assert_int_equal(
		    evprof_pusher__push(pu, pprof1, sizeof(pprof1), &w), 0);
	assert_true(now_s() - t < 5); /* no waiting on the network */
	assert_int_equal(evprof_pusher__stats(pu, &st), 0);
	assert_int_equal(st.queued, 5);
	assert_int_equal(st.dropped, 2);
	assert_int_equal(st.pending, 3);
	assert_int_equal(st.sent, 0);

	assert_int_equal(evprof_pusher__flush(pu, 200), -ETIMEDOUT);
	t = now_s();
	evprof_pusher__free(pu);
	assert_true(now_s() - t < 10); /* the hanging attempt was aborted */
	close(conn);
	close(ls);
}

static void test_bad_opts(void **state)
{
	const char *bad_label[] = {"a,b=c", NULL};
	struct evprof_push_opts o = {
	    .sz = sizeof(o), .url = "http://127.0.0.1:1", .app_name = "ok"};
	struct evprof_pusher *pu;

	(void)state;
	o.labels = bad_label;
	pu = evprof_pusher__new(&o);
	if (!pu && errno == EOPNOTSUPP)
		skip_because("built without libcurl");
	assert_null(pu);
	assert_int_equal(errno, EINVAL);
	o.labels = NULL;
	o.url = "ftp://x";
	assert_null(evprof_pusher__new(&o));
	o.url = "http://127.0.0.1:1";
	o.user = "u";
	o.token = "t";
	assert_null(evprof_pusher__new(&o));
	o.user = NULL;
	o.token = NULL;
	pu = evprof_pusher__new(&o);
	assert_non_null(pu);
	/* Not a pprof: refused before queueing. */
	{
		struct evprof_push_window w = {.sz = sizeof(w)};

		assert_int_equal(evprof_pusher__push(pu, "xyz", 3, &w),
				 -EINVAL);
	}
	evprof_pusher__free(pu);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_queue_drops_oldest),
	    cmocka_unit_test(test_bad_opts),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
