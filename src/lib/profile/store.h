/* SPDX-License-Identifier: MIT */
/* Private header of profile_store.c: its part of the profile's lifecycle. */
#ifndef EVPROF_LIB_PROFILE_STORE_H
#define EVPROF_LIB_PROFILE_STORE_H

#include "model.h"

EVPROF_HIDDEN void evprof__store_free(struct evprof__store *st);

#endif /* EVPROF_LIB_PROFILE_STORE_H */
