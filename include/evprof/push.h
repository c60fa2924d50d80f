/* SPDX-License-Identifier: MIT */
/*
 * Push: sends finished pprof profiles to a Grafana Pyroscope server
 * (HTTP POST /ingest, multipart/form-data with a "profile" part and a
 * "sample_type_config" part) from a sender thread, so that a recorder
 * hands a window over and goes back to sampling.
 *
 * A pusher owns a bounded queue of unsent windows: when it is full the
 * oldest window is dropped (counted). Windows go out oldest first; 5xx,
 * 408, 429 and network errors are retried with exponential back-off
 * (Retry-After honoured), other 4xx drop the window (counted as rejected).
 * TLS certificates are always verified. Needs libcurl at build time:
 * without it evprof_pusher__new() fails with EOPNOTSUPP.
 */
#ifndef EVPROF_PUSH_H
#define EVPROF_PUSH_H

#include <stddef.h>
#include <stdint.h>

#include "common.h"

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_pusher;

/* One line from the sender thread (no trailing newline). */
typedef void (*evprof_push_log_fn)(void *ctx, const char *msg);

struct evprof_push_opts {
	size_t sz; /* sizeof(struct evprof_push_opts) */
	/* Server base URL (http or https); "/ingest" is appended. */
	const char *url;
	/* The series' name: 1 to 100 of [A-Za-z0-9_./-]. */
	const char *app_name;
	/*
	 * Series labels as "key=value", NULL-terminated; NULL: none. Keys
	 * are [A-Za-z0-9_.], values must not hold ",{}=" nor spaces at the
	 * ends (Pyroscope's name syntax has no escapes). Keep them
	 * low-cardinality: every distinct set is a series.
	 */
	const char *const *labels;
	/* Windows kept waiting behind the one in flight; 0: 8. */
	unsigned int queue_max;
	/* One attempt, connect included; 0: 10 s. */
	unsigned int timeout_ms;
	/* Longest wait between attempts (from 0.5 s, doubling); 0: 30 s. */
	unsigned int backoff_max_ms;
	/* Credentials; NULL: none. Basic auth and a token exclude each other. */
	const char *user, *password; /* HTTP basic auth */
	const char *token;	     /* "Authorization: Bearer" */
	const char *tenant;	     /* X-Scope-OrgID header */
	const char *ca_file;	     /* CA bundle; NULL: the system's */
	evprof_push_log_fn log;	     /* NULL: silent */
	void *log_ctx;
};

/*
 * Checks opts and starts the sender thread. Returns a pusher the caller
 * frees with evprof_pusher__free(), or NULL with errno: EINVAL (bad
 * opts: the message went to opts->log), EOPNOTSUPP (built without
 * libcurl), ENOMEM or a thread creation error. opts and its strings are
 * copied.
 */
EVPROF_API struct evprof_pusher *
evprof_pusher__new(const struct evprof_push_opts *opts);

struct evprof_push_window {
	size_t sz; /* sizeof(struct evprof_push_window) */
	/* Wall-clock (CLOCK_REALTIME) bounds of the window, in ns. */
	uint64_t start_ns, end_ns;
	unsigned int sample_rate; /* Hz of the sampling; 0: not sent */
};

/*
 * Queues one window: pprof is an uncompressed pprof profile (e.g. from
 * evprof_profile__write_pprof_mem(), with EVPROF_PPROF_LABELS_PROCESS),
 * copied and gzip-compressed here; its sample types make the
 * sample_type_config part. Never waits on the network. Returns 0 (a full
 * queue dropped its oldest window to make room), -EINVAL (bad window, or
 * the bytes are no pprof with sample types) or -ENOMEM.
 */
EVPROF_API int evprof_pusher__push(struct evprof_pusher *pu, const void *pprof,
				   size_t len,
				   const struct evprof_push_window *w);

/*
 * Waits until every queued window was sent or given up (rejected), at
 * most timeout_ms. Returns 0, or -ETIMEDOUT when windows remain queued
 * (they stay queued).
 */
EVPROF_API int evprof_pusher__flush(struct evprof_pusher *pu,
				    unsigned int timeout_ms);

struct evprof_push_stats {
	size_t sz;	   /* sizeof(struct evprof_push_stats) */
	uint64_t queued;   /* windows accepted by evprof_pusher__push() */
	uint64_t sent;	   /* answered 2xx */
	uint64_t rejected; /* answered 4xx other than 408/429: not retried */
	uint64_t dropped;  /* pushed out of a full queue, or left at free */
	uint64_t retries;  /* attempts after a first one */
	uint64_t bytes;	   /* request bodies of the windows sent */
	uint32_t pending;  /* windows queued or in flight now */
	int last_status;   /* last HTTP status; 0: none or network error */
};

/*
 * Fills *st (up to st->sz bytes, set by the caller) and sets st->sz to the
 * bytes filled. Returns 0 or -EINVAL.
 */
EVPROF_API int evprof_pusher__stats(struct evprof_pusher *pu,
				    struct evprof_push_stats *st);

/*
 * Stops the sender (an attempt in flight is aborted) and frees the pusher;
 * windows still queued are counted as dropped and lost: call
 * evprof_pusher__flush() first. Accepts NULL.
 */
EVPROF_API void evprof_pusher__free(struct evprof_pusher *pu);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_PUSH_H */
