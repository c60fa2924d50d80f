// SPDX-License-Identifier: MIT
/* evprof_profile__load(): file, gzip, and which reader the bytes ask for. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <zlib.h>

#include "load.h"

/* Inflated profiles larger than this are refused rather than swapped in. */
#define LOAD_MAX ((size_t)1 << 32)

/* gzip members (as our writers and pprof make them) into one buffer. */
static int gunzip(const uint8_t *in, size_t len, uint8_t **out, size_t *olen)
{
	z_stream z = {0};
	uint8_t *buf = NULL;
	size_t cap = 0, done = 0; /* inflateReset() zeroes total_out */
	int ret = Z_OK, err = 0;

	if (inflateInit2(&z, 15 + 16) != Z_OK)
		return -ENOMEM;
	z.next_in = (Bytef *)in;
	z.avail_in = (uInt)(len < UINT32_MAX ? len : UINT32_MAX);
	while (ret != Z_STREAM_END) {
		size_t before;

		if (evprof__vec_grow((void **)&buf, &cap, 1, done + 65536,
				     SIZE_MAX)) {
			err = -ENOMEM;
			break;
		}
		z.next_out = buf + done;
		z.avail_out =
		    (uInt)(cap - done < UINT32_MAX ? cap - done : UINT32_MAX);
		before = z.avail_out;
		ret = inflate(&z, Z_NO_FLUSH);
		done += before - z.avail_out;
		if (ret == Z_STREAM_END && z.avail_in) {
			/* Concatenated members are one gzip file. */
			ret = inflateReset(&z);
			continue;
		}
		if ((ret != Z_OK && ret != Z_STREAM_END) ||
		    (ret == Z_OK && !z.avail_in && z.avail_out) ||
		    done > LOAD_MAX) {
			err = ret == Z_MEM_ERROR ? -ENOMEM
						 : -EVPROF_ERR_MALFORMED;
			break;
		}
	}
	if (!err && z.avail_in) /* beyond 4 GiB of input */
		err = -EFBIG;
	*olen = done;
	inflateEnd(&z);
	if (err) {
		free(buf);
		return err;
	}
	*out = buf;
	return 0;
}

struct evprof_profile *evprof_profile__load_buf(const void *data, size_t len)
{
	const uint8_t *b = data;
	uint8_t *plain = NULL;
	struct evprof_profile *p = NULL;
	int err = 0;

	if (!data && len) {
		errno = EINVAL;
		return NULL;
	}
	if (len >= 2 && b[0] == 0x1f && b[1] == 0x8b) {
		err = gunzip(b, len, &plain, &len);
		if (err) {
			errno = -err;
			return NULL;
		}
		b = plain;
	}
	/* Our JSON starts with '{'; as a protobuf key it would be invalid. */
	if (len && b[0] == '{')
		err = evprof__load_firefox((const char *)b, len, &p);
	else if (evprof__looks_folded(b, len))
		err = evprof__load_folded((const char *)b, len, &p);
	else
		err = evprof__load_pprof(b, len, &p);
	free(plain);
	if (err) {
		errno = -err;
		return NULL;
	}
	return p;
}

struct evprof_profile *evprof_profile__load(const char *path)
{
	struct evprof_profile *p;
	uint8_t *buf = NULL;
	size_t len = 0;
	int err;

	if (!path) {
		errno = EINVAL;
		return NULL;
	}
	err = evprof__read_all(path, LOAD_MAX, (char **)&buf, &len);
	if (err) {
		errno = -err;
		return NULL;
	}
	p = evprof_profile__load_buf(buf, len);
	err = errno;
	free(buf);
	errno = err;
	return p;
}
