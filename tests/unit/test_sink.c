// SPDX-License-Identifier: MIT
/*
 * The output sink's gzip, compressed in chunks on other threads: zlib's own
 * inflate must read back exactly the bytes written, as one gzip member
 * (its trailer's CRC-32 and length checked by zlib), for sizes around the
 * chunk and window boundaries, past the chunks in flight (their slots
 * reused), for data that does not compress, and when a worker thread
 * cannot be started.
 */
#include <dlfcn.h>
#include <errno.h>
#include <pthread.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>
#include <zlib.h>

#include "cases.h"
#include "formats/json.h"

static char dir[] = "/tmp/evprof-sink-XXXXXX";

/* pthread_create calls made, and which one fails (0: none). */
static int creates, fail_create;

/* The library's thread starts come here first (it is linked in). */
int pthread_create(pthread_t *t, const pthread_attr_t *attr,
		   void *(*fn)(void *), void *arg)
{
	static int (*real)(pthread_t *, const pthread_attr_t *,
			   void *(*)(void *), void *);

	if (++creates == fail_create)
		return EAGAIN;
	if (!real)
		*(void **)&real = dlsym(RTLD_NEXT, "pthread_create");
	return real(t, attr, fn, arg);
}

static int setup(void **state)
{
	(void)state;
	return mkdtemp(dir) ? 0 : -1;
}

static int teardown(void **state)
{
	char cmd[64];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

/* n bytes: JSON-like digits and commas, or (random) anything. */
static unsigned char *make_data(size_t n, bool random, uint64_t seed)
{
	unsigned char *d = malloc(n + 1);
	uint64_t x = seed | 1;

	assert_non_null(d);
	for (size_t i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		d[i] = random  ? (unsigned char)x
		       : x % 7 ? (unsigned char)('0' + x % 10)
			       : (unsigned char)',';
	}
	return d;
}

/* The file at path inflated as one gzip member of at most max bytes. */
static unsigned char *gunzip(const char *path, size_t max, size_t *len)
{
	FILE *f = fopen(path, "rb");
	unsigned char *in, *out;
	size_t n, cap;
	struct stat st;
	z_stream z = {0};
	int ret;

	assert_non_null(f);
	assert_int_equal(fstat(fileno(f), &st), 0);
	n = (size_t)st.st_size;
	in = malloc(n + 1);
	assert_non_null(in);
	assert_int_equal(fread(in, 1, n, f), n);
	fclose(f);
	cap = max + 1;
	out = malloc(cap);
	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = in;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	ret = inflate(&z, Z_FINISH);
	if (ret != Z_STREAM_END)
		fail_msg("inflate: %d (%s)", ret, z.msg ? z.msg : "");
	/* One member: nothing after its trailer. */
	assert_int_equal(z.avail_in, 0);
	*len = z.total_out;
	inflateEnd(&z);
	free(in);
	return out;
}

/* Writes d through a gzip sink in pieces of every size up to 4099. */
static int write_gz(const char *path, const unsigned char *d, size_t n,
		    bool commit)
{
	struct evprof__sink s;
	size_t off = 0, step = 1;

	assert_int_equal(evprof__sink_open(&s, path), 0);
	while (off < n) {
		size_t k = n - off < step ? n - off : step;

		if (k == 1)
			evprof__sink_putc(&s, (char)d[off]);
		else
			evprof__sink_write(&s, d + off, k);
		off += k;
		step = step * 7 % 4099 + 1;
	}
	return evprof__sink_close(&s, commit);
}

static void test_gzip_round_trip(void **state)
{
	static const size_t sizes[] = {0,
				       1,
				       32 * 1024 - 1,
				       64 * 1024 - 1,
				       64 * 1024,
				       64 * 1024 + 1,
				       64 * 1024 + 32 * 1024,
				       320 * 1024 + 5,
				       1024 * 1024 + 17,
				       3 * 1024 * 1024 + 4096,
				       9 * 1024 * 1024 + 3};
	char path[sizeof(dir) + 16];

	(void)state;
	snprintf(path, sizeof(path), "%s/out.gz", dir);
	for (int random = 0; random < 2; random++) {
		for (size_t i = 0; i < sizeof(sizes) / sizeof(sizes[0]); i++) {
			size_t n = sizes[i], got;
			unsigned char *d = make_data(n, random, n + 1), *back;

			assert_int_equal(write_gz(path, d, n, true), 0);
			back = gunzip(path, n, &got);
			if (got != n || memcmp(back, d, n))
				fail_msg("%zu bytes (random %d): %zu back, "
					 "differ",
					 n, random, got);
			free(back);
			free(d);
		}
	}
}

/*
 * A worker that cannot be started: the first (no pool: the stream begun
 * in place goes on to the end, never a second start halfway) or a later
 * one (fewer workers).
 */
static void test_gzip_no_thread(void **state)
{
	char path[sizeof(dir) + 16];
	size_t n = 2 * 1024 * 1024 + 5, got;
	unsigned char *d = make_data(n, false, 3), *back;

	(void)state;
	snprintf(path, sizeof(path), "%s/nothread.gz", dir);
	for (int k = 1; k <= 2; k++) {
		creates = 0;
		fail_create = k;
		assert_int_equal(write_gz(path, d, n, true), 0);
		fail_create = 0;
		assert_true(creates >= k);
		back = gunzip(path, n, &got);
		if (got != n || memcmp(back, d, n))
			fail_msg("thread start %d failing: %zu back, differ", k,
				 got);
		free(back);
	}
	free(d);
}

/* Not committed, or a write that fails: no file, and the error said. */
static void test_gzip_fail(void **state)
{
	char path[sizeof(dir) + 16], full[sizeof(dir) + 16];
	size_t n = 2 * 1024 * 1024;
	unsigned char *d = make_data(n, false, 7);

	(void)state;
	snprintf(path, sizeof(path), "%s/gone.gz", dir);
	assert_int_equal(write_gz(path, d, n, false), -ECANCELED);
	assert_int_equal(access(path, F_OK), -1);
	snprintf(path, sizeof(path), "%s/gone.gz.tmp", dir);
	assert_int_equal(access(path, F_OK), -1);
	if (access("/dev/full", W_OK) == 0) {
		snprintf(full, sizeof(full), "%s/full.gz", dir);
		assert_int_equal(symlink("/dev/full", full), 0);
		assert_int_equal(write_gz(full, d, n, true), -ENOSPC);
	}
	free(d);
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_gzip_round_trip),
	    cmocka_unit_test(test_gzip_no_thread),
	    cmocka_unit_test(test_gzip_fail),
	};

	return run_cases(argc, argv, tests, setup, teardown);
}
