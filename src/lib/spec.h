/* SPDX-License-Identifier: MIT */
/*
 * Private header of event specs. spec.c parses one spec and asks the
 * resolvers below, one file per kind of name, what it names; spec_list.c
 * parses lists of specs; spec_text.c holds the small parsers they share.
 * Resolvers return 0, -EVPROF_ERR_UNKNOWN_EVENT quietly (saying why in a
 * note), or an error they have already reported.
 */
#ifndef EVPROF_LIB_SPEC_H
#define EVPROF_LIB_SPEC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <linux/perf_event.h>

#include <evprof/event.h>

#include "util.h"

/* Strings in a message are user input: keep them short. */
#define SHOW_MAX   160
#define SHOWN(len) (int)((len) < SHOW_MAX ? (len) : SHOW_MAX)

/* ---- spec_text.c: notes, numbers, names, modifiers ---------------------- */

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

/* ---- spec.c: one spec ---------------------------------------------------- */

/* evprof_event_spec__parse() without the argument checks. */
EVPROF_HIDDEN int evprof__spec_parse(struct evprof_event_spec *spec,
				     const char *str);

/* ---- spec_builtin.c: hardware, software, cache and raw names ------------ */

/* No I/O, no message on a miss. */
EVPROF_HIDDEN int evprof__spec_resolve_builtin(struct perf_event_attr *attr,
					       const char *s);
/* Appends the built-in names to buf at *off, for the "known:" message. */
EVPROF_HIDDEN void evprof__spec_builtin_known(char *buf, size_t len,
					      size_t *off);

/* ---- spec_trace.c: sys:name tracepoints --------------------------------- */

/*
 * s has exactly one ':'. -errno failures leave their message in fail
 * (libpfm4 may still know the name, e.g. when tracefs is closed to
 * non-root users).
 */
EVPROF_HIDDEN int evprof__spec_resolve_tracepoint(struct perf_event_attr *attr,
						  const char *s,
						  struct spec_notes *why,
						  struct spec_notes *fail);

/* ---- spec_sysfs.c: pmu/term=val,.../ ------------------------------------ */

/* s ends with the second '/'. */
EVPROF_HIDDEN int evprof__spec_resolve_pmu(struct perf_event_attr *attr,
					   const char *s,
					   struct spec_notes *why);

/*
 * Places value into attr as the sysfs format text describes it
 * ("config:0-7,32-35": the value's low 8 bits go to config bits 0-7, the
 * next 4 to bits 32-35). Returns 0, or -EVPROF_ERR_BAD_SPEC when the text
 * is malformed or the value has bits the format cannot hold (no message).
 */
EVPROF_HIDDEN int evprof__pmu_format_apply(struct perf_event_attr *attr,
					   const char *format, uint64_t value);

/* ---- spec_pfm.c: libpfm4 names ------------------------------------------ */

/* Whether the library was built with libpfm4. */
EVPROF_HIDDEN bool evprof__spec_have_pfm(void);
EVPROF_HIDDEN int evprof__spec_resolve_pfm(struct perf_event_attr *attr,
					   const char *s,
					   struct spec_notes *why);

#endif /* EVPROF_LIB_SPEC_H */
