/* SPDX-License-Identifier: MIT */
/* Private header of profile_intern.c: its part of the profile's lifecycle. */
#ifndef EVPROF_LIB_PROFILE_INTERN_H
#define EVPROF_LIB_PROFILE_INTERN_H

#include "model.h"

/* Creates the interning maps. Returns 0 or -ENOMEM. */
EVPROF_HIDDEN int evprof__intern_init(struct evprof_profile *p);
/* Frees the interned tables and their maps. */
EVPROF_HIDDEN void evprof__intern_free(struct evprof_profile *p);

#endif /* EVPROF_LIB_PROFILE_INTERN_H */
