/* SPDX-License-Identifier: MIT */
/*
 * Private header of spec_text.c: the small parsers every part of spec
 * parsing shares, at the bottom of the spec modules.
 */
#ifndef EVPROF_LIB_SPEC_TEXT_H
#define EVPROF_LIB_SPEC_TEXT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include "base/base.h"

/* Strings in a message are user input: keep them short. */
#define SHOW_MAX   160
#define SHOWN(len) (int)((len) < SHOW_MAX ? (len) : SHOW_MAX)

/* Why a name was not found, for the one "unknown event" message. */
struct spec_notes {
	char text[384];
	size_t len;
};

/* Appends one reason (once: a retried name can fail the same way). */
__attribute__((format(printf, 2, 3))) EVPROF_HIDDEN void
evprof__spec_note(struct spec_notes *n, const char *fmt, ...);

/* All of s[0..len) as digits of base 10 or 16: 0, -EINVAL or -ERANGE. */
EVPROF_HIDDEN int evprof__spec_digits(const char *s, size_t len,
				      unsigned int base, uint64_t *out);
/* "0x1f" (hex) or "31" (decimal), as evprof__spec_digits(). */
EVPROF_HIDDEN int evprof__spec_u64(const char *s, size_t len, uint64_t *out);

/*
 * perf's sampling terms, period=N and freq=N, into attr: a period or a
 * frequency for this event alone. Returns 1 when t[0..klen) named one, 0
 * when not, -EVPROF_ERR_BAD_SPEC for a value of 0 (said).
 */
EVPROF_HIDDEN int evprof__spec_sample_term(struct perf_event_attr *attr,
					   const char *t, size_t klen,
					   uint64_t v);

/* Longest PMU, term or tracepoint component we look up in sysfs/tracefs. */
#define SPEC_COMPONENT_MAX 64

/*
 * Whether s[0..len) may go into a sysfs or tracefs path: letters, digits,
 * '_' and '-', so that nothing typed can climb out of the directory.
 */
EVPROF_HIDDEN bool evprof__spec_safe_component(const char *s, size_t len);

/* Modifiers: any of u, k, h and up to three p. */
struct spec_mods {
	bool u, k, h;
	unsigned int p;
};

/* Parses s[0..len); 0 or -EVPROF_ERR_BAD_SPEC (no message). */
EVPROF_HIDDEN int evprof__spec_parse_mods(const char *s, size_t len,
					  struct spec_mods *m);
EVPROF_HIDDEN void evprof__spec_apply_mods(struct perf_event_attr *attr,
					   const struct spec_mods *m);

#endif /* EVPROF_LIB_SPEC_TEXT_H */
