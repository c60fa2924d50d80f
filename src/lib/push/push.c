// SPDX-License-Identifier: MIT
/*
 * The pusher: a bounded queue of ready request bodies and one sender
 * thread that posts them with libcurl. The caller's side (push, stats)
 * only takes the lock to link or unlink a window, so a slow or dead
 * server never stalls sampling.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "evprof/push.h"
#include "body.h"

#ifdef EVPROF_HAVE_CURL
#include <curl/curl.h>
#include <dlfcn.h>

#define DEF_QUEUE	   8
#define DEF_TIMEOUT_MS	   10000
#define DEF_BACKOFF_MAX_MS 30000
#define FIRST_BACKOFF_MS   500
#define RETRY_AFTER_MAX_S  3600 /* a longer Retry-After is taken as this */

/* libcurl's functions, from dlopen (see curl_init()). */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption o, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO i, ...);
	void (*easy_reset)(CURL *c);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	struct curl_slist *(*slist_append)(struct curl_slist *l, const char *s);
	void (*slist_free_all)(struct curl_slist *l);
} cu;

struct win {
	struct win *next;
	struct evprof__buf url, body;
	char boundary[48]; /* found nowhere in body's parts */
};

struct evprof_pusher {
	pthread_mutex_t lock;
	pthread_cond_t cond; /* queue changed, or stop */
	pthread_t thread;
	struct win *head, *tail; /* head: oldest; in flight while busy */
	unsigned int nr, max;
	bool busy, stop;
	struct evprof_push_stats st;
	char *url, *app, **labels;
	char *user, *password, *tenant, *ca_file, *auth_hdr;
	unsigned int timeout_ms, backoff_max_ms;
	evprof_push_log_fn log;
	void *log_ctx;
	unsigned int seq; /* makes boundaries */
};

__attribute__((format(printf, 2, 3))) static void say(struct evprof_pusher *pu,
						      const char *fmt, ...)
{
	char msg[512];
	va_list ap;

	if (!pu->log)
		return;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	pu->log(pu->log_ctx, msg);
}

static void win_free(struct win *w)
{
	if (!w)
		return;
	free(w->url.b);
	free(w->body.b);
	free(w);
}

static uint64_t now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* Waits on cond until deadline (CLOCK_MONOTONIC ms) or stop; locked. */
static void wait_until(struct evprof_pusher *pu, uint64_t deadline)
{
	struct timespec ts = {(time_t)(deadline / 1000),
			      (long)(deadline % 1000) * 1000000};

	while (!pu->stop && now_ms() < deadline)
		pthread_cond_timedwait(&pu->cond, &pu->lock, &ts);
}

static size_t keep_body(char *d, size_t sz, size_t n, void *ctx)
{
	struct evprof__buf *b = ctx;

	if (b->len < 512)
		evprof__buf_add(b, d, sz * n < 512 ? sz * n : 512);
	return sz * n;
}

/* Aborts a transfer when the pusher is being freed. */
static int check_stop(void *ctx, curl_off_t a, curl_off_t b, curl_off_t c,
		      curl_off_t d)
{
	struct evprof_pusher *pu = ctx;
	bool stop;

	(void)a, (void)b, (void)c, (void)d;
	pthread_mutex_lock(&pu->lock);
	stop = pu->stop;
	pthread_mutex_unlock(&pu->lock);
	return stop;
}

/*
 * One attempt. Returns the HTTP status, or 0 after a network error (the
 * reason in err); *retry_after_s is the server's Retry-After, 0: none.
 */
static long post(struct evprof_pusher *pu, CURL *c, const struct win *w,
		 struct evprof__buf *answer, long *retry_after_s,
		 char err[CURL_ERROR_SIZE])
{
	struct curl_slist *h = NULL;
	char ct[96], hdr[300];
	long status = 0;
	CURLcode rc;

	cu.easy_reset(c);
	snprintf(ct, sizeof(ct),
		 "Content-Type: multipart/form-data; boundary=%s", w->boundary);
	h = cu.slist_append(h, ct);
	h = cu.slist_append(h, "Expect:");
	if (pu->auth_hdr)
		h = cu.slist_append(h, pu->auth_hdr);
	if (pu->tenant) {
		snprintf(hdr, sizeof(hdr), "X-Scope-OrgID: %s", pu->tenant);
		h = cu.slist_append(h, hdr);
	}
	cu.easy_setopt(c, CURLOPT_URL, w->url.b);
	cu.easy_setopt(c, CURLOPT_HTTPHEADER, h);
	cu.easy_setopt(c, CURLOPT_POSTFIELDS, w->body.b);
	cu.easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)w->body.len);
	cu.easy_setopt(c, CURLOPT_TIMEOUT_MS, (long)pu->timeout_ms);
	cu.easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	cu.easy_setopt(c, CURLOPT_USERAGENT, "evprof");
#if LIBCURL_VERSION_NUM >= 0x075500 /* 7.85 */
	cu.easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
#else
	cu.easy_setopt(c, CURLOPT_PROTOCOLS, CURLPROTO_HTTP | CURLPROTO_HTTPS);
#endif
	cu.easy_setopt(c, CURLOPT_SSL_VERIFYPEER, 1L);
	cu.easy_setopt(c, CURLOPT_SSL_VERIFYHOST, 2L);
	if (pu->ca_file)
		cu.easy_setopt(c, CURLOPT_CAINFO, pu->ca_file);
	if (pu->user) {
		cu.easy_setopt(c, CURLOPT_HTTPAUTH, CURLAUTH_BASIC);
		cu.easy_setopt(c, CURLOPT_USERNAME, pu->user);
		cu.easy_setopt(c, CURLOPT_PASSWORD,
			       pu->password ? pu->password : "");
	}
	cu.easy_setopt(c, CURLOPT_WRITEFUNCTION, keep_body);
	cu.easy_setopt(c, CURLOPT_WRITEDATA, answer);
	cu.easy_setopt(c, CURLOPT_XFERINFOFUNCTION, check_stop);
	cu.easy_setopt(c, CURLOPT_XFERINFODATA, pu);
	cu.easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	cu.easy_setopt(c, CURLOPT_ERRORBUFFER, err);
	err[0] = 0;
	*retry_after_s = 0;
	rc = cu.easy_perform(c);
	if (rc == CURLE_OK) {
		curl_off_t ra = 0;

		cu.easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
		if (!cu.easy_getinfo(c, CURLINFO_RETRY_AFTER, &ra) && ra > 0)
			*retry_after_s = ra > RETRY_AFTER_MAX_S
					     ? RETRY_AFTER_MAX_S
					     : (long)ra;
	} else if (!err[0]) {
		snprintf(err, CURL_ERROR_SIZE, "%s", cu.easy_strerror(rc));
	}
	cu.slist_free_all(h);
	return status;
}

static bool retryable(long status)
{
	return !status || status == 408 || status == 429 || status >= 500;
}

/*
 * Sends the head window until it is done; called unlocked, busy set,
 * returns locked: true when the window is finished (sent or rejected),
 * false when the pusher stops first.
 */
static bool send_head(struct evprof_pusher *pu, CURL *c, struct win *w)
{
	unsigned int backoff = FIRST_BACKOFF_MS;
	char err[CURL_ERROR_SIZE];
	bool first = true;

	for (;;) {
		struct evprof__buf answer = {0};
		long ra, status;
		uint64_t wait;

		status = post(pu, c, w, &answer, &ra, err);
		pthread_mutex_lock(&pu->lock);
		pu->st.last_status = (int)status;
		if (!first)
			pu->st.retries++;
		first = false;
		if (status >= 200 && status < 300) {
			pu->st.sent++;
			pu->st.bytes += w->body.len;
			free(answer.b);
			return true;
		}
		if (!retryable(status)) {
			pu->st.rejected++;
			pthread_mutex_unlock(&pu->lock);
			say(pu,
			    "push: %s answered %ld, window not retried: %.300s",
			    pu->url, status, answer.b ? answer.b : "");
			free(answer.b);
			pthread_mutex_lock(&pu->lock);
			return true;
		}
		if (pu->stop) {
			free(answer.b);
			return false;
		}
		wait = ra ? (uint64_t)ra * 1000 : backoff;
		pthread_mutex_unlock(&pu->lock);
		if (status)
			say(pu, "push: %s answered %ld, retrying in %.1f s%s",
			    pu->url, status, (double)wait / 1000,
			    ra ? " (Retry-After)" : "");
		else
			say(pu, "push: %s: %s, retrying in %.1f s", pu->url,
			    err, (double)wait / 1000);
		free(answer.b);
		backoff = backoff * 2 > pu->backoff_max_ms ? pu->backoff_max_ms
							   : backoff * 2;
		pthread_mutex_lock(&pu->lock);
		wait_until(pu, now_ms() + wait);
		if (pu->stop)
			return false;
		pthread_mutex_unlock(&pu->lock);
	}
}

static void *sender(void *arg)
{
	struct evprof_pusher *pu = arg;
	CURL *c = cu.easy_init();

	pthread_mutex_lock(&pu->lock);
	for (;;) {
		struct win *w;
		bool done = false;

		while (!pu->head && !pu->stop)
			pthread_cond_wait(&pu->cond, &pu->lock);
		if (pu->stop)
			break;
		w = pu->head;
		pu->busy = true;
		pthread_mutex_unlock(&pu->lock);
		if (c) {
			done = send_head(pu, c, w);
		} else {
			say(pu, "push: cannot start libcurl");
			pthread_mutex_lock(&pu->lock);
			pu->stop = true;
		}
		/* Locked; a full queue never drops the head while busy. */
		pu->busy = false;
		if (done) {
			pu->head = w->next;
			if (!pu->head)
				pu->tail = NULL;
			pu->nr--;
			win_free(w);
		}
		pthread_cond_broadcast(&pu->cond);
	}
	pthread_mutex_unlock(&pu->lock);
	cu.easy_cleanup(c);
	return NULL;
}

static char *dup_or_null(const char *s, bool *oom)
{
	char *d;

	if (!s)
		return NULL;
	d = strdup(s);
	if (!d)
		*oom = true;
	return d;
}

static void pusher_release(struct evprof_pusher *pu)
{
	for (char **l = pu->labels; l && *l; l++)
		free(*l);
	free(pu->labels);
	free(pu->url);
	free(pu->app);
	free(pu->user);
	free(pu->password);
	free(pu->tenant);
	free(pu->ca_file);
	free(pu->auth_hdr);
	free(pu);
}

static CURLcode curl_rc;
static int curl_errno; /* for the caller: ELIBACC when not loaded */
static char curl_why[256];

/*
 * libcurl is loaded when the first pusher is made: linked, it and the
 * thirty libraries it needs (TLS, HTTP/2, Kerberos, LDAP...) were loaded
 * and relocated by every run of evprof, 4 of the 5.7 ms of `evprof
 * --help` here.
 */
static void curl_init(void)
{
	static const char *const names[] = {"libcurl.so.4",
					    "libcurl-gnutls.so.4"};
	void *h = NULL;

	for (size_t i = 0; !h && i < sizeof(names) / sizeof(names[0]); i++)
		h = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
#define SYM(f) (*(void **)&cu.f = dlsym(h, "curl_" #f))
	if (!h || !SYM(global_init) || !SYM(easy_init) || !SYM(easy_setopt) ||
	    !SYM(easy_perform) || !SYM(easy_getinfo) || !SYM(easy_reset) ||
	    !SYM(easy_cleanup) || !SYM(easy_strerror) || !SYM(slist_append) ||
	    !SYM(slist_free_all)) {
		snprintf(curl_why, sizeof(curl_why), "cannot load libcurl: %s",
			 dlerror());
		curl_rc = CURLE_FAILED_INIT;
		curl_errno = ELIBACC;
		return;
	}
#undef SYM
	curl_rc = cu.global_init(CURL_GLOBAL_DEFAULT);
	if (curl_rc) {
		snprintf(curl_why, sizeof(curl_why),
			 "libcurl failed to initialize");
		curl_errno = ENOMEM; /* what curl_global_init() can lack */
	}
}

/* curl_global_init is not thread-safe before curl 7.84: once, here. */
static int curl_once(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	pthread_once(&once, curl_init);
	return curl_rc;
}

struct evprof_pusher *evprof_pusher__new(const struct evprof_push_opts *opts)
{
	const char *const *labels = EVPROF_OPTS_GET(opts, labels, NULL);
	const char *token = EVPROF_OPTS_GET(opts, token, NULL);
	struct evprof_pusher *pu;
	char why[256];
	size_t nl = 0;
	bool oom = false;
	int err;

	if (!opts || !EVPROF_OPTS_VALID(opts, false) || !opts->url) {
		errno = EINVAL;
		return NULL;
	}
	pu = calloc(1, sizeof(*pu));
	if (!pu)
		return NULL;
	pu->log = EVPROF_OPTS_GET(opts, log, NULL);
	pu->log_ctx = EVPROF_OPTS_GET(opts, log_ctx, NULL);
	if (evprof__push_check_name(opts->app_name, labels, why, sizeof(why))) {
		say(pu, "push: %s", why);
		goto einval;
	}
	if (strncmp(opts->url, "http://", 7) &&
	    strncmp(opts->url, "https://", 8)) {
		say(pu, "push: URL '%s' is not http:// or https://", opts->url);
		goto einval;
	}
	if (token && EVPROF_OPTS_GET(opts, user, NULL)) {
		say(pu, "push: basic auth and a bearer token are exclusive");
		goto einval;
	}
	for (nl = 0; labels && labels[nl]; nl++)
		;
	pu->labels = calloc(nl + 1, sizeof(*pu->labels));
	oom = !pu->labels;
	for (size_t i = 0; !oom && i < nl; i++)
		pu->labels[i] = dup_or_null(labels[i], &oom);
	pu->url = dup_or_null(opts->url, &oom);
	pu->app = dup_or_null(opts->app_name, &oom);
	pu->user = dup_or_null(EVPROF_OPTS_GET(opts, user, NULL), &oom);
	pu->password = dup_or_null(EVPROF_OPTS_GET(opts, password, NULL), &oom);
	pu->tenant = dup_or_null(EVPROF_OPTS_GET(opts, tenant, NULL), &oom);
	pu->ca_file = dup_or_null(EVPROF_OPTS_GET(opts, ca_file, NULL), &oom);
	if (token && !oom) {
		pu->auth_hdr = malloc(strlen(token) + 32);
		if (pu->auth_hdr)
			sprintf(pu->auth_hdr, "Authorization: Bearer %s",
				token);
		oom = !pu->auth_hdr;
	}
	if (oom) {
		pusher_release(pu);
		errno = ENOMEM;
		return NULL;
	}
	pu->max = EVPROF_OPTS_GET(opts, queue_max, 0) ?: DEF_QUEUE;
	pu->timeout_ms = EVPROF_OPTS_GET(opts, timeout_ms, 0) ?: DEF_TIMEOUT_MS;
	pu->backoff_max_ms =
	    EVPROF_OPTS_GET(opts, backoff_max_ms, 0) ?: DEF_BACKOFF_MAX_MS;
	if (pu->backoff_max_ms < FIRST_BACKOFF_MS)
		pu->backoff_max_ms = FIRST_BACKOFF_MS;
	if (curl_once()) {
		say(pu, "push: %s", curl_why);
		pusher_release(pu);
		errno = curl_errno;
		return NULL;
	}
	pthread_mutex_init(&pu->lock, NULL);
	{
		pthread_condattr_t ca;

		pthread_condattr_init(&ca);
		pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
		pthread_cond_init(&pu->cond, &ca);
		pthread_condattr_destroy(&ca);
	}
	err = pthread_create(&pu->thread, NULL, sender, pu);
	if (err) {
		pthread_cond_destroy(&pu->cond);
		pthread_mutex_destroy(&pu->lock);
		pusher_release(pu);
		errno = err;
		return NULL;
	}
	return pu;
einval:
	free(pu);
	errno = EINVAL;
	return NULL;
}

static bool holds(const struct evprof__buf *b, const char *s)
{
	return b->len && memmem(b->b, b->len, s, strlen(s));
}

/* Builds the request of one window; no lock needed. */
static int build(struct evprof_pusher *pu, struct win *w, const void *pprof,
		 size_t len, const struct evprof_push_window *win,
		 unsigned int seq)
{
	struct evprof__buf gz = {0}, json = {0};
	int err;

	err = evprof__push_type_config(&json, pprof, len);
	if (err < 0)
		goto out;
	err = evprof__push_gzip(&gz, pprof, len);
	if (err)
		goto out;
	for (unsigned int k = 0;; k++) {
		snprintf(w->boundary, sizeof(w->boundary),
			 "evprof-boundary-%lx-%x-%x", (unsigned long)now_ms(),
			 seq, k);
		if (!holds(&gz, w->boundary) && !holds(&json, w->boundary))
			break;
	}
	evprof__push_form(&w->body, w->boundary, &gz, &json);
	evprof__push_url(&w->url, pu->url, pu->app,
			 (const char *const *)pu->labels, win->start_ns,
			 win->end_ns, EVPROF_OPTS_GET(win, sample_rate, 0));
	err = w->body.err ? w->body.err : w->url.err;
out:
	free(gz.b);
	free(json.b);
	return err;
}

int evprof_pusher__push(struct evprof_pusher *pu, const void *pprof, size_t len,
			const struct evprof_push_window *win)
{
	struct win *w, *old = NULL;
	unsigned int seq;
	int err;

	if (!pu || !pprof || !len || !EVPROF_OPTS_VALID(win, false) ||
	    win->end_ns < win->start_ns)
		return -EINVAL;
	w = calloc(1, sizeof(*w));
	if (!w)
		return -ENOMEM;
	pthread_mutex_lock(&pu->lock);
	seq = pu->seq++;
	pthread_mutex_unlock(&pu->lock);
	err = build(pu, w, pprof, len, win, seq);
	if (err) {
		win_free(w);
		return err;
	}
	pthread_mutex_lock(&pu->lock);
	if (pu->nr - pu->busy == pu->max) {
		/* The oldest that is not in flight makes room. */
		struct win **pp = pu->busy ? &pu->head->next : &pu->head;

		if (*pp) {
			old = *pp;
			*pp = old->next;
			if (pu->tail == old)
				pu->tail = pp == &pu->head ? NULL : pu->head;
			pu->nr--;
			pu->st.dropped++;
		}
	}
	if (pu->tail)
		pu->tail->next = w;
	else
		pu->head = w;
	pu->tail = w;
	pu->nr++;
	pu->st.queued++;
	pthread_cond_broadcast(&pu->cond);
	pthread_mutex_unlock(&pu->lock);
	if (old) {
		win_free(old);
		say(pu, "push: queue full (%u windows), oldest unsent dropped",
		    pu->max);
	}
	return 0;
}

int evprof_pusher__flush(struct evprof_pusher *pu, unsigned int timeout_ms)
{
	uint64_t deadline = now_ms() + timeout_ms;
	int err;

	if (!pu)
		return -EINVAL;
	pthread_mutex_lock(&pu->lock);
	while (pu->head && !pu->stop && now_ms() < deadline) {
		struct timespec ts = {(time_t)(deadline / 1000),
				      (long)(deadline % 1000) * 1000000};

		pthread_cond_timedwait(&pu->cond, &pu->lock, &ts);
	}
	err = pu->head ? -ETIMEDOUT : 0;
	pthread_mutex_unlock(&pu->lock);
	return err;
}

int evprof_pusher__stats(struct evprof_pusher *pu, struct evprof_push_stats *st)
{
	int ret;

	if (!pu)
		return -EINVAL;
	pthread_mutex_lock(&pu->lock);
	pu->st.pending = pu->nr;
	ret = EVPROF_STATS_COPY(st, &pu->st);
	pthread_mutex_unlock(&pu->lock);
	return ret;
}

void evprof_pusher__free(struct evprof_pusher *pu)
{
	if (!pu)
		return;
	pthread_mutex_lock(&pu->lock);
	pu->stop = true;
	pthread_cond_broadcast(&pu->cond);
	pthread_mutex_unlock(&pu->lock);
	pthread_join(pu->thread, NULL);
	if (pu->nr)
		say(pu, "push: %u unsent windows dropped", pu->nr);
	while (pu->head) {
		struct win *w = pu->head;

		pu->head = w->next;
		win_free(w);
	}
	pthread_cond_destroy(&pu->cond);
	pthread_mutex_destroy(&pu->lock);
	pusher_release(pu);
}

#else /* !EVPROF_HAVE_CURL */

struct evprof_pusher *evprof_pusher__new(const struct evprof_push_opts *opts)
{
	(void)opts;
	errno = EOPNOTSUPP;
	return NULL;
}

int evprof_pusher__push(struct evprof_pusher *pu, const void *pprof, size_t len,
			const struct evprof_push_window *w)
{
	(void)pu, (void)pprof, (void)len, (void)w;
	return -EOPNOTSUPP;
}

int evprof_pusher__flush(struct evprof_pusher *pu, unsigned int timeout_ms)
{
	(void)pu, (void)timeout_ms;
	return -EOPNOTSUPP;
}

int evprof_pusher__stats(struct evprof_pusher *pu, struct evprof_push_stats *st)
{
	(void)pu, (void)st;
	return -EOPNOTSUPP;
}

void evprof_pusher__free(struct evprof_pusher *pu)
{
	(void)pu;
}

#endif /* EVPROF_HAVE_CURL */
