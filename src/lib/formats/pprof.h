/* SPDX-License-Identifier: MIT */
/*
 * Field numbers of google/pprof proto/profile.proto (package
 * perftools.profiles), shared by the pprof writer and reader, and the
 * writer's entry for differential profiles.
 */
#ifndef EVPROF_LIB_PPROF_H
#define EVPROF_LIB_PPROF_H

#include <stddef.h>

#include <evprof/profile.h>

#include "base/base.h"

/* Protobuf wire types used by the format. */
enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };

enum {
	PROFILE_SAMPLE_TYPE = 1,
	PROFILE_SAMPLE = 2,
	PROFILE_MAPPING = 3,
	PROFILE_LOCATION = 4,
	PROFILE_FUNCTION = 5,
	PROFILE_STRING_TABLE = 6,
	PROFILE_TIME_NANOS = 9,
	PROFILE_DURATION_NANOS = 10,
	PROFILE_PERIOD_TYPE = 11,
	PROFILE_PERIOD = 12,
	PROFILE_COMMENT = 13,
	PROFILE_DEFAULT_SAMPLE_TYPE = 14,
};

enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3 };

enum {
	MAPPING_ID = 1,
	MAPPING_MEMORY_START = 2,
	MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILENAME = 5,
	MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7,
	MAPPING_HAS_FILENAMES = 8,
	MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};

enum {
	LOCATION_ID = 1,
	LOCATION_MAPPING_ID = 2,
	LOCATION_ADDRESS = 3,
	LOCATION_LINE = 4,
};
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2 };

enum {
	FUNCTION_ID = 1,
	FUNCTION_NAME = 2,
	FUNCTION_SYSTEM_NAME = 3,
	FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

/*
 * evprof_profile__write_pprof() of a differential profile (diff.c): the
 * samples of threads from first_base on are the base's, written with their
 * values negated (two's complement: protobuf's int64) and the label
 * pprof::base=true, as pprof -diff_base marks a base.
 */
EVPROF_HIDDEN int evprof__write_pprof_diff(const struct evprof_profile *p,
					   const char *path,
					   const struct evprof_pprof_opts *opts,
					   size_t first_base);

#endif /* EVPROF_LIB_PPROF_H */
