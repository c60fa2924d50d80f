/* SPDX-License-Identifier: MIT */
/* Private header of spec_sysfs.c: pmu/term=val,.../ events. */
#ifndef EVPROF_LIB_SPEC_SYSFS_H
#define EVPROF_LIB_SPEC_SYSFS_H

#include <stdint.h>
#include <linux/perf_event.h>

#include "spec_text.h"

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

#endif /* EVPROF_LIB_SPEC_SYSFS_H */
