/* SPDX-License-Identifier: MIT */
/*
 * Feeds records built with recstream.h to a session opened on the layout
 * the session tests use: a sample is a group read (include after
 * <cmocka.h>).
 */
#ifndef EVPROF_SESSFEED_H
#define EVPROF_SESSFEED_H

#include <evprof/session.h>

#include "recstream.h"

#define ST_BITS                                                                \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |           \
	 PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |             \
	 PERF_SAMPLE_READ | PERF_SAMPLE_CALLCHAIN)
#define RF_BITS                                                                \
	(PERF_FORMAT_GROUP | PERF_FORMAT_ID | PERF_FORMAT_TOTAL_TIME_ENABLED | \
	 PERF_FORMAT_TOTAL_TIME_RUNNING)

/* Ends b's record (rb_end) and feeds it to s: what the session answers. */
static inline int rb_feed(struct evprof_session *s, struct rb *b)
{
	rb_end(b);
	return evprof_session__feed(s, b->words, b->len);
}

#endif /* EVPROF_SESSFEED_H */
