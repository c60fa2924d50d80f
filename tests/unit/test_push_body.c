// SPDX-License-Identifier: MIT
/*
 * What a push to Pyroscope sends, on bytes alone: the name checks that
 * follow Pyroscope's label-set parser, the ingest URL, the
 * sample_type_config read from hand-encoded pprof bytes (protobuf written
 * out byte by byte here, not by our writer), and gzip checked by zlib's
 * own inflate.
 */
#define _GNU_SOURCE /* memmem */
#include <errno.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>
#include <zlib.h>

#include "cases.h"
#include "push/body.h"

static void test_names(void **state)
{
	const char *good[] = {"env=prod", "region=eu-west/1", NULL};
	const char *comma[] = {"env=a,b", NULL};
	const char *key[] = {"my-key=v", NULL};
	const char *reserved[] = {"__name__=x", NULL};
	const char *noeq[] = {"env", NULL};
	char why[256];

	(void)state;
	assert_int_equal(
	    evprof__push_check_name("my.app/x-1", good, why, sizeof(why)), 0);
	assert_int_equal(evprof__push_check_name("", NULL, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(
	    evprof__push_check_name("my app", NULL, why, sizeof(why)), -EINVAL);
	assert_non_null(strstr(why, "' '"));
	assert_int_equal(evprof__push_check_name("a", comma, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(evprof__push_check_name("a", key, why, sizeof(why)),
			 -EINVAL);
	assert_int_equal(
	    evprof__push_check_name("a", reserved, why, sizeof(why)), -EINVAL);
	assert_int_equal(evprof__push_check_name("a", noeq, why, sizeof(why)),
			 -EINVAL);
}

static void test_url(void **state)
{
	const char *labels[] = {"env=prod", "host=a.b", NULL};
	struct evprof__buf u = {0};

	(void)state;
	/* 1000.2 s to 1010.0000001 s: from rounds down, until up. */
	evprof__push_url(&u, "http://h:4040/", "app/x", labels,
			 1000200000000ull, 1010000000100ull, 19);
	assert_int_equal(u.err, 0);
	assert_string_equal(u.b, "http://h:4040/ingest?name=app%2Fx%7Benv%3D"
				 "prod%2Chost%3Da.b%7D&from=1000&until=1011"
				 "&spyName=evprof&sampleRate=19");
	free(u.b);
	/* An empty window still spans a second; no rate, no parameter. */
	u = (struct evprof__buf){0};
	evprof__push_url(&u, "https://h", "a", NULL, 5000000000ull,
			 5000000000ull, 0);
	assert_string_equal(u.b, "https://h/ingest?name=a%7B%7D&from=5&"
				 "until=6&spyName=evprof");
	free(u.b);
}

/*
 * Profile{sample_type: [{1,2},{3,2},{4,5}], string_table: ["", "samples",
 * "count", "page-faults", "cpu", "nanoseconds"]}, with a sample (field 2)
 * in between that must be skipped.
 */
static const uint8_t pprof3[] = {
    0x0a, 0x04, 0x08, 0x01, 0x10, 0x02, /* sample_type samples/count */
    0x0a, 0x04, 0x08, 0x03, 0x10, 0x02, /* page-faults/count */
    0x12, 0x04, 0x12, 0x02, 0x07, 0x09, /* sample {value: [7, 9]} */
    0x0a, 0x04, 0x08, 0x04, 0x10, 0x05, /* cpu/nanoseconds */
    0x32, 0x00,				/* "" */
    0x32, 0x07, 's',  'a',  'm',  'p',	0x6c, 'e', 's', 0x32, 0x05, 'c',
    'o',  'u',	'n',  't',  0x32, 0x0b, 'p',  'a', 'g', 'e',  '-',  'f',
    'a',  'u',	'l',  't',  's',  0x32, 0x03, 'c', 'p', 'u',  0x32, 0x0b,
    'n',  'a',	'n',  'o',  's',  'e',	'c',  'o', 'n', 'd',  's',
};

static void test_type_config(void **state)
{
	struct evprof__buf j = {0};

	(void)state;
	assert_int_equal(evprof__push_type_config(&j, pprof3, sizeof(pprof3)),
			 3);
	assert_string_equal(
	    j.b, "{\n"
		 "\"samples\":{\"units\":\"samples\",\"aggregation\":\"sum\","
		 "\"display-name\":\"samples\",\"sampled\":true},\n"
		 "\"page-faults\":{\"units\":\"samples\",\"aggregation\":"
		 "\"sum\",\"display-name\":\"page-faults\"},\n"
		 "\"cpu\":{\"units\":\"nanoseconds\",\"aggregation\":\"sum\","
		 "\"display-name\":\"cpu\"}\n}\n");
	free(j.b);
}

static void test_type_config_bad(void **state)
{
	static const uint8_t no_types[] = {0x32, 0x00};
	static const uint8_t bad_index[] = {0x0a, 0x02, 0x08, 0x09, 0x32, 0x00};
	struct evprof__buf j = {0};

	(void)state;
	/* Every truncation of a valid profile is refused or still valid. */
	for (size_t n = 0; n < sizeof(pprof3); n++) {
		int r = evprof__push_type_config(&j, pprof3, n);

		assert_true(r == -EINVAL || (r > 0 && r <= 3));
		j.len = 0;
	}
	assert_int_equal(evprof__push_type_config(&j, pprof3, 10), -EINVAL);
	assert_int_equal(
	    evprof__push_type_config(&j, no_types, sizeof(no_types)), -EINVAL);
	assert_int_equal(
	    evprof__push_type_config(&j, bad_index, sizeof(bad_index)),
	    -EINVAL);
	free(j.b);
}

static void test_gzip_form(void **state)
{
	static const char head[] = "--BND\r\nContent-Disposition: form-data; "
				   "name=\"profile\"";
	static const char second[] = "\r\n--BND\r\nContent-Disposition: "
				     "form-data; name=\"sample_type_config\"";
	char in[5000], out[6000];
	struct evprof__buf gz = {0}, json = {0}, form = {0};
	z_stream z = {0};

	(void)state;
	for (size_t i = 0; i < sizeof(in); i++)
		in[i] = (char)(i * 7 % 13);
	assert_int_equal(evprof__push_gzip(&gz, in, sizeof(in)), 0);
	assert_true(gz.len > 18 && (uint8_t)gz.b[0] == 0x1f &&
		    (uint8_t)gz.b[1] == 0x8b);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz.b;
	z.avail_in = (uInt)gz.len;
	z.next_out = (Bytef *)out;
	z.avail_out = sizeof(out);
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	assert_int_equal(z.total_out, sizeof(in));
	assert_memory_equal(out, in, sizeof(in));
	inflateEnd(&z);

	evprof__buf_str(&json, "{}");
	evprof__push_form(&form, "BND", &gz, &json);
	assert_int_equal(form.err, 0);
	assert_int_equal(strncmp(form.b, head, strlen(head)), 0);
	assert_non_null(memmem(form.b, form.len, second, strlen(second)));
	assert_int_equal(strcmp(form.b + form.len - 13, "{}\r\n--BND--\r\n"),
			 0);
	free(gz.b);
	free(json.b);
	free(form.b);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_names),
	    cmocka_unit_test(test_url),
	    cmocka_unit_test(test_type_config),
	    cmocka_unit_test(test_type_config_bad),
	    cmocka_unit_test(test_gzip_form),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
