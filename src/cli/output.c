// SPDX-License-Identifier: MIT
/* Picks and writes the output formats record and report share. */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <evprof/page.h>
#include <evprof/profile.h>

#include "cli.h"

static bool ends_with(const char *s, const char *suffix)
{
	size_t n = strlen(s), m = strlen(suffix);

	return n >= m && !strcmp(s + n - m, suffix);
}

int out_parse_format(const char *name)
{
	if (!strcmp(name, "firefox"))
		return OUT_FIREFOX;
	if (!strcmp(name, "folded"))
		return OUT_FOLDED;
	if (!strcmp(name, "pprof"))
		return OUT_PPROF;
	if (!strcmp(name, "speedscope"))
		return OUT_SPEEDSCOPE;
	if (!strcmp(name, "svg"))
		return OUT_SVG;
	return -1;
}

/*
 * The names that say a format, longest first where one ends another
 * (.speedscope.json before .json); a name without one is -1.
 */
static int named_format(const char *path)
{
	static const struct {
		const char *suffix;
		enum out_format fmt;
	} names[] = {
	    {".folded", OUT_FOLDED},
	    {".folded.gz", OUT_FOLDED},
	    {".pb.gz", OUT_PPROF},
	    {".pb", OUT_PPROF},
	    {".pprof", OUT_PPROF},
	    {".speedscope.json", OUT_SPEEDSCOPE},
	    {".speedscope.json.gz", OUT_SPEEDSCOPE},
	    {".svg", OUT_SVG},
	    {".svg.gz", OUT_SVG},
	    {".html", OUT_PAGE},
	    {".htm", OUT_PAGE},
	    {".json", OUT_FIREFOX},
	    {".json.gz", OUT_FIREFOX},
	};

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (ends_with(path, names[i].suffix))
			return (int)names[i].fmt;
	return -1;
}

enum out_format out_format_of(const char *path)
{
	int fmt = named_format(path);

	return fmt < 0 ? OUT_FIREFOX : (enum out_format)fmt;
}

int out_named(const char *path, int fmt)
{
	struct stat st;

	if (fmt >= 0 || named_format(path) >= 0 || !strcmp(path, "-") ||
	    (!stat(path, &st) && !S_ISREG(st.st_mode)))
		return 0;
	cli_err("-o %s: no format of that name: .json[.gz] (Firefox "
		"Profiler), .pb[.gz] or .pprof (pprof), .folded[.gz], "
		".speedscope.json[.gz], .svg (a flame graph), .html (a page), "
		"- (Firefox JSON on "
		"stdout); --format FORMAT writes any name",
		path);
	return -EINVAL;
}

const char *out_path(const char *path)
{
	return strcmp(path, "-") ? path : "/dev/stdout";
}

int out_write(const struct evprof_profile *p, const char *path,
	      enum out_format fmt, const char *weight)
{
	path = out_path(path);
	if (fmt == OUT_PPROF) {
		struct evprof_pprof_opts o = {.sz = sizeof(o),
					      .default_type = weight};

		return evprof_profile__write_pprof(p, path, &o);
	}
	if (fmt == OUT_SPEEDSCOPE) {
		struct evprof_speedscope_opts o = {.sz = sizeof(o),
						   .default_type = weight};

		return evprof_profile__write_speedscope(p, path, &o);
	}
	if (fmt == OUT_PAGE) {
		struct evprof_page_opts o = {.sz = sizeof(o), .weight = weight};

		if (!evprof_page__available())
			cli_err("%s", cli_page_missing);
		return evprof_profile__write_page(p, path, &o);
	}
	if (fmt == OUT_FOLDED) {
		struct evprof_folded_opts o = {.sz = sizeof(o),
					       .weight_counter = weight};

		return evprof_profile__write_folded(p, path, &o);
	}
	if (fmt == OUT_SVG) {
		struct evprof_svg_opts o = {.sz = sizeof(o),
					    .weight_counter = weight};

		return evprof_profile__write_svg(p, path, &o);
	}
	{
		struct evprof_firefox_opts o = {.sz = sizeof(o),
						.weight_counter = weight};

		return evprof_profile__write_firefox(p, path, &o);
	}
}

/* A scratch file in dir can be made: a rename into dir will work. */
static int dir_writable(const char *dir)
{
	char tmp[PATH_MAX];
	int fd;

	if (snprintf(tmp, sizeof(tmp), "%s/.evprof-check-XXXXXX", dir) >=
	    (int)sizeof(tmp))
		return -ENAMETOOLONG;
	fd = mkstemp(tmp);
	if (fd < 0)
		return -errno;
	close(fd);
	unlink(tmp);
	return 0;
}

const char cli_page_missing[] =
    "this evprof was built without its page (no node and npm at build "
    "time, or EVPROF_WITH_PAGE=OFF): evprof view and .html outputs are disabled";

int out_check(const char *path, bool *in_dir)
{
	char copy[PATH_MAX];
	struct stat st;
	int fd;

	*in_dir = false;
	if (!*path)
		return -ENOENT;
	if (!strcmp(path, "-"))
		return 0; /* stdout: the shell opened it */
	if (out_format_of(path) == OUT_PAGE && !evprof_page__available()) {
		cli_err("%s", cli_page_missing);
		return -ENOTSUP;
	}
	if (!stat(path, &st) && !S_ISREG(st.st_mode)) {
		/* A device or pipe (/dev/stdout) is written in place. */
		fd = open(path, O_WRONLY | O_CLOEXEC | O_NONBLOCK);
		if (fd < 0)
			return -errno;
		close(fd);
		return 0;
	}
	if (!access(path, F_OK) && access(path, W_OK))
		return -errno;
	if (snprintf(copy, sizeof(copy), "%s", path) >= (int)sizeof(copy))
		return -ENAMETOOLONG;
	*in_dir = true;
	return dir_writable(dirname(copy));
}

bool out_has_column(const struct evprof_profile *p, const char *name)
{
	const char *c;

	if (!strcmp(name, "samples") || !strcmp(name, "cpu"))
		return true;
	for (int i = 0; (c = evprof_profile__counter_name(p, i)); i++)
		if (!strcmp(c, name))
			return true;
	for (int i = 0; (c = evprof_profile__weight_name(p, i)); i++)
		if (!strcmp(c, name))
			return true;
	return false;
}

void out_no_column(const struct evprof_profile *p, const char *name,
		   const char *path)
{
	const char *names[EVPROF_PROFILE_MAX_COUNTERS + 8] = {"samples", "cpu"};
	size_t n = 2, off = 0;
	const char *c, *closest;
	char list[512] = "";

	for (int i = 0; (c = evprof_profile__counter_name(p, i)) &&
			n < EVPROF_PROFILE_MAX_COUNTERS + 4;
	     i++)
		names[n++] = c;
	for (int i = 0; (c = evprof_profile__weight_name(p, i)) &&
			n < EVPROF_PROFILE_MAX_COUNTERS + 8;
	     i++)
		names[n++] = c;
	for (size_t i = 0; i < n && off < sizeof(list); i++)
		off += (size_t)snprintf(list + off, sizeof(list) - off, "%s%s",
					i ? ", " : "", names[i]);
	closest = evprof_closest_name(name, names, n);
	cli_err("no counter named '%s' in %s%s%s%s (it has %s)", name, path,
		closest ? "; did you mean '" : "", closest ? closest : "",
		closest ? "'?" : "", list);
}

static const char *file_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s && s[1] ? s + 1 : path;
}

const char *out_page_title(char *buf, size_t n, const char *base,
			   const char *path)
{
	if (!base)
		return file_name(path);
	snprintf(buf, n, "evprof diff: %s vs %s", file_name(base),
		 file_name(path));
	return buf;
}

/* Errors of the place, not of the profile: another place may work. */
static bool place_error(int err)
{
	return err == -ENOSPC || err == -EDQUOT || err == -EACCES ||
	       err == -EPERM || err == -EROFS || err == -EIO || err == -ENOENT;
}

int out_write_somewhere(const struct evprof_profile *p, const char *path,
			enum out_format fmt, const char *weight, char *saved,
			size_t len)
{
	const char *dirs[] = {getenv("TMPDIR"), "/tmp", "/var/tmp",
			      getenv("HOME")};
	char copy[PATH_MAX];
	int err = out_write(p, path, fmt, weight), err2;

	snprintf(saved, len, "%s", path);
	if (!err || !place_error(err))
		return err;
	snprintf(copy, sizeof(copy), "%s", path);
	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		if (!dirs[i] || !*dirs[i])
			continue;
		/* The format follows the name: keep the original's. */
		snprintf(saved, len, "%s/evprof-%d-%s", dirs[i], (int)getpid(),
			 basename(copy));
		err2 = out_write(p, saved, fmt, weight);
		if (!err2) {
			cli_err("cannot write %s: %s; saved the profile as %s",
				path, evprof_strerror(err), saved);
			return 0;
		}
	}
	snprintf(saved, len, "%s", path);
	return err;
}

const char *cli_spill_dir(void)
{
	const char *t = getenv("TMPDIR");

	return t && *t ? t : "/var/tmp";
}

const char *cli_debug_cache_dir(void)
{
	static char buf[PATH_MAX];
	const char *e = getenv("EVPROF_DEBUG_CACHE");
	const char *x = getenv("XDG_CACHE_HOME"), *h = getenv("HOME");

	if (e)
		return *e ? e : NULL;
	if (x && *x == '/')
		snprintf(buf, sizeof(buf), "%s/evprof/debug", x);
	else if (h && *h == '/')
		snprintf(buf, sizeof(buf), "%s/.cache/evprof/debug", h);
	else
		return NULL;
	return buf;
}

bool out_wants_timeline(const char *const *outs, size_t n, int fmt)
{
	for (size_t i = 0; i < n; i++)
		if ((fmt < 0 ? out_format_of(outs[i]) : (enum out_format)fmt) ==
		    OUT_FIREFOX)
			return true;
	return false;
}
