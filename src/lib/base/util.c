// SPDX-License-Identifier: MIT
/* Messages, error strings and small file helpers. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util.h"

static evprof_print_fn_t print_fn;

evprof_print_fn_t evprof_set_print(evprof_print_fn_t fn)
{
	evprof_print_fn_t old = print_fn;

	print_fn = fn;
	return old;
}

void evprof__print(enum evprof_print_level level, const char *fmt, ...)
{
	va_list ap;

	if (!print_fn)
		return;
	va_start(ap, fmt);
	print_fn(level, fmt, ap);
	va_end(ap);
}

static const char *const errc_text[] = {
    [EVPROF_ERR_TRUNCATED - EVPROF_ERR_FIRST] = "data truncated",
    [EVPROF_ERR_MALFORMED - EVPROF_ERR_FIRST] = "malformed data",
    [EVPROF_ERR_UNKNOWN_EVENT - EVPROF_ERR_FIRST] = "unknown event",
    [EVPROF_ERR_BAD_SPEC - EVPROF_ERR_FIRST] = "invalid event specification",
    [EVPROF_ERR_GROUP_TOO_BIG - EVPROF_ERR_FIRST] =
	"group needs more hardware counters than the PMU has",
    [EVPROF_ERR_NOT_COUNTED - EVPROF_ERR_FIRST] = "not counted",
    [EVPROF_ERR_BAD_ELF - EVPROF_ERR_FIRST] = "unreadable or malformed ELF",
    [EVPROF_ERR_BAD_PERFDATA - EVPROF_ERR_FIRST] = "malformed perf.data",
    [EVPROF_ERR_NEGATIVE - EVPROF_ERR_FIRST] =
	"negative values: a difference profile (view it with pprof)",
};

const char *evprof_strerror(int err)
{
	if (err < 0)
		err = -err;
	if (err >= EVPROF_ERR_FIRST && err < EVPROF_ERR_LAST)
		return errc_text[err - EVPROF_ERR_FIRST];
	return strerror(err);
}

/*
 * Edits from a to b (optimal string alignment: a swap of neighbours is
 * one), ignoring case; stops counting past max + 1.
 */
static size_t edits(const char *a, const char *b, size_t max)
{
	size_t la = strlen(a), lb = strlen(b), row[3][64];
	size_t *prev2 = row[0], *prev = row[1], *cur = row[2], *t;

	if (la >= 64 || lb >= 64)
		return max + 1;
	for (size_t j = 0; j <= lb; j++)
		prev[j] = j;
	for (size_t i = 1; i <= la; i++) {
		size_t best = cur[0] = i;

		for (size_t j = 1; j <= lb; j++) {
			int ca = tolower((unsigned char)a[i - 1]);
			int cb = tolower((unsigned char)b[j - 1]);
			size_t d = prev[j - 1] + (ca != cb);

			if (prev[j] + 1 < d)
				d = prev[j] + 1;
			if (cur[j - 1] + 1 < d)
				d = cur[j - 1] + 1;
			if (i > 1 && j > 1 &&
			    ca == tolower((unsigned char)b[j - 2]) &&
			    cb == tolower((unsigned char)a[i - 2]) &&
			    prev2[j - 2] + 1 < d)
				d = prev2[j - 2] + 1;
			cur[j] = d;
			if (d < best)
				best = d;
		}
		if (best > max)
			return max + 1;
		t = prev2, prev2 = prev, prev = cur, cur = t;
	}
	return prev[lb];
}

const char *evprof_closest_name(const char *word, const char *const *names,
				size_t nr)
{
	size_t len = word ? strlen(word) : 0;
	size_t max = len / 3 ? len / 3 : 1, best = max + 1;
	const char *found = NULL;
	bool tie = false;

	if (len < 2)
		return NULL;
	for (size_t i = 0; i < nr; i++) {
		size_t d = names[i] ? edits(word, names[i], max) : max + 1;

		if (d > max || d >= len || d > best)
			continue;
		if (d < best) {
			found = names[i];
			best = d;
			tie = false;
		} else if (strcasecmp(found, names[i])) {
			tie = true; /* two as close: name neither */
		}
	}
	return tie ? NULL : found;
}

/* One read(2), retried on EINTR: bytes (> 0), 0 at EOF, or -errno. */
static ssize_t read_some(int fd, char *buf, size_t room)
{
	ssize_t n;

	do
		n = read(fd, buf, room);
	while (n < 0 && errno == EINTR);
	return n < 0 ? -errno : n;
}

ssize_t evprof__pread_full(int fd, void *buf, size_t n, uint64_t off)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r =
		    pread(fd, (char *)buf + got, n - got, (off_t)(off + got));

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return -errno;
		if (!r)
			break;
		got += (size_t)r;
	}
	return (ssize_t)got;
}

int evprof__pwrite_all(int fd, const void *buf, size_t n, uint64_t off)
{
	const char *c = buf;

	while (n) {
		ssize_t w = pwrite(fd, c, n, (off_t)off);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return -errno;
		if (!w)
			return -EIO;
		c += w;
		n -= (size_t)w;
		off += (uint64_t)w;
	}
	return 0;
}

int evprof__read_file(const char *path, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n = 0;
	int fd;

	if (len == 0)
		return -EINVAL;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	while (got < len - 1 &&
	       (n = read_some(fd, buf + got, len - 1 - got)) > 0)
		got += (size_t)n;
	close(fd);
	buf[got] = '\0';
	return n < 0 ? (int)n : (int)got;
}

int evprof__read_all(const char *path, size_t max, char **out, size_t *len)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), err;

	if (fd < 0)
		return -errno;
	err = evprof__read_fd_all(fd, max, out, len);
	close(fd);
	return err;
}

int evprof__read_fd_all(int fd, size_t max, char **out, size_t *len)
{
	char *buf = NULL, *nb;
	size_t got = 0, cap = 0;
	ssize_t n;
	int err = 0;

	for (;;) {
		if (cap - got < 4096) {
			if (cap >= max) {
				err = -EFBIG;
				break;
			}
			cap = cap ? cap * 2 : 65536;
			nb = realloc(buf, cap + 1);
			if (!nb) {
				err = -ENOMEM;
				break;
			}
			buf = nb;
		}
		n = read_some(fd, buf + got, cap - got);
		if (n <= 0) {
			err = (int)n;
			break;
		}
		got += (size_t)n;
	}
	if (!err && !buf && !(buf = malloc(1)))
		err = -ENOMEM;
	if (err) {
		free(buf);
		return err;
	}
	buf[got] = '\0';
	*out = buf;
	*len = got;
	return 0;
}

/*
 * Whether the deepest existing directory of path is ours to write in: this
 * user's, or sticky (/tmp). Not another user's: with sudo -E, HOME (and so
 * the cache) is the invoking user's, where root would leave files and
 * directories that user cannot remove and later runs of theirs pass over.
 */
static int check_owner(char *buf)
{
	struct stat st;
	char *slash;

	while (stat(buf, &st)) {
		if (errno != ENOENT || !strcmp(buf, ".") || !strcmp(buf, "/"))
			return -errno;
		slash = strrchr(buf, '/');
		if (!slash)
			strcpy(buf, "."); /* a relative path's top */
		else
			slash[slash == buf] = 0; /* "/x" leaves "/" */
	}
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	return st.st_uid == geteuid() || (st.st_mode & S_ISVTX) ? 0 : -EPERM;
}

int evprof__mkdirs(const char *dir)
{
	char buf[PATH_MAX], *p;
	int err;

	if ((size_t)snprintf(buf, sizeof(buf), "%s", dir) >= sizeof(buf))
		return -ENAMETOOLONG;
	err = check_owner(buf);
	if (err)
		return err;
	snprintf(buf, sizeof(buf), "%s", dir);
	for (p = buf + 1;; p++) {
		bool end = !*p;

		if (*p != '/' && !end)
			continue;
		*p = 0;
		if (mkdir(buf, 0700) && errno != EEXIST)
			return -errno;
		if (end)
			return 0;
		*p = '/';
	}
}

int evprof__parse_cpu_list(const char *s, int *cpus, int max)
{
	int n = 0;

	while (*s && *s != '\n') {
		char *end;
		long lo, hi;

		errno = 0;
		lo = strtol(s, &end, 10);
		if (end == s || errno || lo < 0 || lo > INT_MAX)
			return -EINVAL;
		hi = lo;
		s = end;
		if (*s == '-') {
			s++;
			hi = strtol(s, &end, 10);
			if (end == s || errno || hi < lo || hi > INT_MAX)
				return -EINVAL;
			s = end;
		}
		for (long c = lo; c <= hi; c++, n++)
			if (n < max)
				cpus[n] = (int)c;
		if (*s == ',')
			s++;
		else if (*s && *s != '\n')
			return -EINVAL;
	}
	return n;
}

bool evprof__opts_valid(const void *opts, size_t known_sz, size_t user_sz,
			const char *who)
{
	const unsigned char *extra = (const unsigned char *)opts + known_sz;

	if (user_sz < sizeof(size_t)) {
		pr_warn("%s: opts->sz %zu is too small\n", who, user_sz);
		return false;
	}
	for (size_t i = known_sz; i < user_sz; i++) {
		if (extra[i - known_sz]) {
			pr_warn("%s: opts byte %zu is unknown but not zero\n",
				who, i);
			return false;
		}
	}
	return true;
}

int evprof__stats_copy(void *dst, const void *full, size_t known_sz)
{
	size_t sz;

	if (!dst)
		return -EINVAL;
	/* Read and written as bytes: dst may be shorter than our struct. */
	memcpy(&sz, dst, sizeof(sz));
	if (sz < sizeof(sz))
		return -EINVAL;
	if (sz > known_sz)
		sz = known_sz;
	memcpy((char *)dst + sizeof(sz), (const char *)full + sizeof(sz),
	       sz - sizeof(sz));
	memcpy(dst, &sz, sizeof(sz));
	return 0;
}

int evprof__vec_grow(void **p, size_t *cap, size_t elem_sz, size_t need,
		     size_t max)
{
	/* malloc cannot return more than PTRDIFF_MAX bytes anyway. */
	size_t limit = PTRDIFF_MAX / elem_sz, ncap;
	void *np;

	if (need <= *cap)
		return 0;
	if (max < limit)
		limit = max;
	if (need > limit)
		return -E2BIG;
	ncap = *cap < 8 ? 8 : *cap;
	while (ncap < need && ncap <= limit / 2)
		ncap *= 2;
	if (ncap < need || ncap > limit)
		ncap = limit; /* the next doubling would pass the limit */
	np = realloc(*p, ncap * elem_sz);
	if (!np)
		return -ENOMEM;
	*p = np;
	*cap = ncap;
	return 0;
}

void evprof__hex(char *out, const uint8_t *b, size_t n, bool upper)
{
	const char *digits = upper ? "0123456789ABCDEF" : "0123456789abcdef";
	size_t i;

	for (i = 0; i < n; i++) {
		out[2 * i] = digits[b[i] >> 4];
		out[2 * i + 1] = digits[b[i] & 15];
	}
	out[2 * n] = 0;
}

int evprof__unhex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = strlen(hex), i;

	if (n % 2 || n / 2 > max)
		return -1;
	for (i = 0; i < n; i += 2) {
		int hi = evprof__hexval(hex[i]),
		    lo = evprof__hexval(hex[i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	return (int)(n / 2);
}
