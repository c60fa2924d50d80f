/* SPDX-License-Identifier: MIT */
/*
 * What a push sends, built from bytes alone (no network): the ingest URL,
 * the sample_type_config JSON read from the pprof's own sample types, and
 * the multipart/form-data body. Unit-tested without a server.
 */
#ifndef EVPROF_LIB_PUSH_BODY_H
#define EVPROF_LIB_PUSH_BODY_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

/* A growable byte buffer; err latches -ENOMEM. */
struct evprof__buf {
	char *b;
	size_t len, cap;
	int err;
};

EVPROF_HIDDEN void evprof__buf_add(struct evprof__buf *b, const void *d,
				   size_t n);
EVPROF_HIDDEN void evprof__buf_str(struct evprof__buf *b, const char *s);

/*
 * Checks an app name (1 to 100 of [A-Za-z0-9_./-]) and "key=value"
 * labels as Pyroscope's name parser reads them. Returns 0 or -EINVAL with
 * the reason in why (at least 128 bytes).
 */
EVPROF_HIDDEN int evprof__push_check_name(const char *app,
					  const char *const *labels, char *why,
					  size_t why_len);

/*
 * Appends "base/ingest?name=APP%7Bk%3Dv,...%7D&from=S&until=S&spyName=
 * evprof[&sampleRate=N]" to out (times in Unix seconds, until at least
 * from + 1). No format parameter: Pyroscope reads a multipart body as
 * pprof from its Content-Type, while format=pprof would take the whole
 * body for the pprof bytes and lose sample_type_config.
 */
EVPROF_HIDDEN void evprof__push_url(struct evprof__buf *out, const char *base,
				    const char *app, const char *const *labels,
				    uint64_t start_ns, uint64_t end_ns,
				    unsigned int sample_rate);

/*
 * Appends the sample_type_config JSON for the sample types of the
 * uncompressed pprof (bytes, untrusted: bounds-checked). Returns the
 * number of sample types (> 0), or -EINVAL when the bytes are no pprof or
 * have none.
 */
EVPROF_HIDDEN int evprof__push_type_config(struct evprof__buf *out,
					   const uint8_t *pprof, size_t len);

/* Appends the gzip of d[0..n-1]. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__push_gzip(struct evprof__buf *out, const void *d,
				    size_t n);

/*
 * Appends the multipart body: a "profile" file part (gz, the gzipped
 * pprof) and a "sample_type_config" file part (json), separated by
 * boundary (which must not occur in them).
 */
EVPROF_HIDDEN void evprof__push_form(struct evprof__buf *out,
				     const char *boundary,
				     const struct evprof__buf *gz,
				     const struct evprof__buf *json);

#endif /* EVPROF_LIB_PUSH_BODY_H */
