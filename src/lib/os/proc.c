// SPDX-License-Identifier: MIT
/* /proc readers: memory maps, thread lists, thread names. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <evprof/proc.h>

#include "base/base.h"
#include "os.h"

#define MAPS_MAX_BYTES (256u << 20)

/* Cursor over one line: [p, end). */
struct cur {
	const char *p;
	const char *end;
};

/* Parses 1..16 hex digits (base 16) or 1..20 decimal digits (base 10). */
static bool cur_num(struct cur *c, int base, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0, d;

	while (c->p < c->end) {
		d = evprof__hexval(*c->p);
		if (d < 0 || d >= base)
			break;
		if (v > (UINT64_MAX - (uint64_t)d) / (uint64_t)base)
			return false;
		v = v * (uint64_t)base + (uint64_t)d;
		c->p++;
		n++;
	}
	*out = v;
	return n > 0;
}

static bool cur_char(struct cur *c, char ch)
{
	if (c->p >= c->end || *c->p != ch)
		return false;
	c->p++;
	return true;
}

static int parse_perms(struct cur *c, uint32_t *prot)
{
	static const char want[4][2] = {
	    {'r', '-'}, {'w', '-'}, {'x', '-'}, {'s', 'p'}};
	static const uint32_t bit[4] = {EVPROF_MAP_READ, EVPROF_MAP_WRITE,
					EVPROF_MAP_EXEC, EVPROF_MAP_SHARED};
	int i;

	if (c->end - c->p < 4)
		return -1;
	*prot = 0;
	for (i = 0; i < 4; i++) {
		if (c->p[i] == want[i][0])
			*prot |= bit[i];
		else if (c->p[i] != want[i][1])
			return -1;
	}
	c->p += 4;
	return 0;
}

/* Grows *buf to hold n + 1 bytes. */
static int reserve(char **buf, size_t *cap, size_t n)
{
	char *nb;
	size_t ncap;

	if (n + 1 <= *cap)
		return 0;
	ncap = *cap ? *cap : 256;
	while (ncap < n + 1)
		ncap *= 2;
	nb = realloc(*buf, ncap);
	if (!nb)
		return -ENOMEM;
	*buf = nb;
	*cap = ncap;
	return 0;
}

static int parse_line(const char *line, size_t len, struct evprof_map *m,
		      char **pathbuf, size_t *pathcap)
{
	static const char deleted[] = " (deleted)";
	const size_t dlen = sizeof(deleted) - 1;
	struct cur c = {line, line + len};
	uint64_t maj, min;
	size_t plen;
	int err;

	memset(m, 0, sizeof(*m));
	if (!cur_num(&c, 16, &m->start) || !cur_char(&c, '-') ||
	    !cur_num(&c, 16, &m->end) || !cur_char(&c, ' ') ||
	    parse_perms(&c, &m->prot) || !cur_char(&c, ' ') ||
	    !cur_num(&c, 16, &m->pgoff) || !cur_char(&c, ' ') ||
	    !cur_num(&c, 16, &maj) || !cur_char(&c, ':') ||
	    !cur_num(&c, 16, &min) || !cur_char(&c, ' ') ||
	    !cur_num(&c, 10, &m->inode))
		return -EVPROF_ERR_MALFORMED;
	if (m->end < m->start || maj > UINT32_MAX || min > UINT32_MAX)
		return -EVPROF_ERR_MALFORMED;
	m->dev_major = (uint32_t)maj;
	m->dev_minor = (uint32_t)min;
	/* The path, if any, follows one or more spaces of padding. */
	if (c.p < c.end && *c.p != ' ')
		return -EVPROF_ERR_MALFORMED;
	while (c.p < c.end && *c.p == ' ')
		c.p++;
	plen = (size_t)(c.end - c.p);
	if (plen >= dlen && !memcmp(c.end - dlen, deleted, dlen)) {
		m->flags |= EVPROF_MAP_DELETED;
		plen -= dlen;
	}
	err = reserve(pathbuf, pathcap, plen);
	if (err)
		return err;
	memcpy(*pathbuf, c.p, plen);
	(*pathbuf)[plen] = '\0';
	m->path = *pathbuf;
	if (plen == 0)
		m->flags |= EVPROF_MAP_ANON;
	else if ((*pathbuf)[0] == '[' && (*pathbuf)[plen - 1] == ']')
		m->flags |= EVPROF_MAP_SPECIAL;
	return 0;
}

int evprof_maps__parse(const char *text, size_t len, evprof_map_fn_t fn,
		       void *ctx)
{
	const char *p = text, *end = text + len;
	char *pathbuf = NULL;
	size_t pathcap = 0;
	int count = 0, err = 0;

	if (!text && len)
		return -EINVAL;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *eol = nl ? nl : end;
		struct evprof_map m;

		if (eol > p) {
			err = parse_line(p, (size_t)(eol - p), &m, &pathbuf,
					 &pathcap);
			if (err)
				break;
			if (fn) {
				err = fn(&m, ctx);
				if (err < 0)
					break;
				err = 0;
			}
			if (count == INT32_MAX) {
				err = -EOVERFLOW;
				break;
			}
			count++;
		}
		p = nl ? nl + 1 : end;
	}
	free(pathbuf);
	return err ? err : count;
}

/* /proc/PID/... path; pid 0 means "self". */
static void proc_path(char *buf, size_t len, int pid, const char *rest)
{
	if (pid > 0)
		snprintf(buf, len, "/proc/%d/%s", pid, rest);
	else
		snprintf(buf, len, "/proc/self/%s", rest);
}

/*
 * A vanished process shows as ENOENT at open and as ESRCH (or an empty
 * read) afterwards; callers see one code.
 */
static int gone(int err)
{
	return err == -ENOENT ? -ESRCH : err;
}

int evprof_maps__read(int pid, evprof_map_fn_t fn, void *ctx)
{
	char path[64];
	char *buf;
	size_t len;
	int err;

	if (pid < 0)
		return -EINVAL;
	proc_path(path, sizeof(path), pid, "maps");
	err = evprof__read_all(path, MAPS_MAX_BYTES, &buf, &len);
	if (err)
		return gone(err);
	/* Every live process has mappings: an empty read means it exited. */
	err = len ? evprof_maps__parse(buf, len, fn, ctx) : -ESRCH;
	free(buf);
	return err;
}

static bool parse_pid(const char *s, int *out)
{
	long v = 0;

	if (!*s)
		return false;
	for (; *s; s++) {
		if (*s < '0' || *s > '9')
			return false;
		v = v * 10 + (*s - '0');
		if (v > INT32_MAX)
			return false;
	}
	*out = (int)v;
	return v > 0;
}

int evprof_proc__read_tids(int pid, int **tids)
{
	char path[64];
	struct dirent *de;
	int *arr = NULL, *na;
	size_t nr = 0, cap = 0;
	int err = 0, tid;
	DIR *d;

	*tids = NULL;
	if (pid < 0)
		return -EINVAL;
	proc_path(path, sizeof(path), pid, "task");
	d = opendir(path);
	if (!d)
		return gone(-errno);
	for (;;) {
		errno = 0;
		de = readdir(d);
		if (!de) {
			err = gone(-errno);
			break;
		}
		if (!parse_pid(de->d_name, &tid))
			continue;
		if (nr == cap) {
			cap = cap ? cap * 2 : 16;
			na = realloc(arr, cap * sizeof(*arr));
			if (!na) {
				err = -ENOMEM;
				break;
			}
			arr = na;
		}
		arr[nr++] = tid;
	}
	closedir(d);
	/* A zombie or exited process lists no tasks. */
	if (!err && nr == 0)
		err = -ESRCH;
	if (err) {
		free(arr);
		return err;
	}
	*tids = arr;
	return (int)nr;
}

int evprof_proc__read_comm(int pid, int tid, char *buf, size_t len)
{
	char path[96], tmp[64];
	int n;

	if (len == 0 || pid < 0)
		return -EINVAL;
	buf[0] = '\0';
	if (tid > 0) {
		snprintf(tmp, sizeof(tmp), "task/%d/comm", tid);
		proc_path(path, sizeof(path), pid, tmp);
	} else {
		proc_path(path, sizeof(path), pid, "comm");
	}
	/* comm is at most TASK_COMM_LEN (16) bytes; tmp has room to spare. */
	n = evprof__read_file(path, tmp, sizeof(tmp));
	if (n < 0)
		return gone(n);
	if (n == 0)
		return -ESRCH;
	if (tmp[n - 1] == '\n')
		tmp[--n] = '\0';
	if ((size_t)n >= len)
		n = (int)len - 1;
	memcpy(buf, tmp, (size_t)n);
	buf[n] = '\0';
	return n;
}

/*
 * The last numbers of the NStgid and NSpid lines of status file path (the
 * task's ids in its innermost pid namespace) and how many namespaces the
 * NSpid line lists. Returns that count (0: no such line), or -errno.
 */
static int status_ns_ids(const char *path, long *tgid, long *pid)
{
	char line[512];
	int levels = 0;
	FILE *f;

	f = fopen(path, "re");
	if (!f)
		return -errno;
	*tgid = *pid = -1;
	while (fgets(line, sizeof(line), f)) {
		bool is_pid = !strncmp(line, "NSpid:", 6);
		char *p = line + 6, *end;
		int n = 0;

		if (!is_pid && strncmp(line, "NStgid:", 7))
			continue;
		p += !is_pid;
		for (;; n++) {
			long x = strtol(p, &end, 10);

			if (end == p)
				break;
			*(is_pid ? pid : tgid) = x;
			p = end;
		}
		if (is_pid) {
			levels = n;
			break; /* NSpid follows NStgid */
		}
	}
	fclose(f);
	return levels;
}

/* The last pid of the NSpid line of /proc/PID/status, or -1. */
static long last_nspid(const char *pid)
{
	char path[sizeof("/proc//status") + NAME_MAX];
	long tgid, v;

	snprintf(path, sizeof(path), "/proc/%s/status", pid);
	return status_ns_ids(path, &tgid, &v) > 0 ? v : -1;
}

int evprof_proc__ns_ids(int pid, int tid, int *ns_pid, int *ns_tid)
{
	char path[64];
	struct stat self, st;
	long tgid, id;
	int n;

	if (pid <= 0 || tid <= 0 || !ns_pid || !ns_tid)
		return -EINVAL;
	/* Two stats decide the common case, a task of this namespace. */
	snprintf(path, sizeof(path), "/proc/%d/task/%d/ns/pid", pid, tid);
	if (stat(path, &st))
		return gone(-errno);
	if (!stat("/proc/self/ns/pid", &self) && self.st_ino == st.st_ino &&
	    self.st_dev == st.st_dev)
		return 0;
	snprintf(path, sizeof(path), "/proc/%d/task/%d/status", pid, tid);
	n = status_ns_ids(path, &tgid, &id);
	if (n < 0)
		return gone(n);
	if (n < 2 || tgid <= 0 || id <= 0)
		return 0;
	*ns_pid = (int)tgid;
	*ns_tid = (int)id;
	return 1;
}

/* The kernel's first namespaces have fixed inode numbers (proc_ns.h). */
#define PID_NS_INIT_INO	   0xEFFFFFFCu
#define CGROUP_NS_INIT_INO 0xEFFFFFFBu

/* The Seccomp line of /proc/self/status: 0 none, 1 strict, 2 filter. */
static int seccomp_mode(void)
{
	char line[128];
	int mode = 0;
	FILE *f = fopen("/proc/self/status", "re");

	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "Seccomp: %d", &mode) == 1)
			break;
	if (f)
		fclose(f);
	return mode;
}

int evprof_proc__confinement(struct evprof_confinement *out)
{
	struct evprof_confinement c = {.sz = sizeof(c)};
	char self[32];
	struct stat st;
	ssize_t n;

	if (!out)
		return -EINVAL;
	if (stat("/proc/self/ns/pid", &st))
		return -errno;
	c.own_pid_ns = st.st_ino != PID_NS_INIT_INO;
	c.own_cgroup_ns = !stat("/proc/self/ns/cgroup", &st) &&
			  st.st_ino != CGROUP_NS_INIT_INO &&
			  !evprof__cgroup2_whole();
	/* /proc/self names this process as /proc's pid namespace numbers it. */
	n = readlink("/proc/self", self, sizeof(self) - 1);
	self[n > 0 ? n : 0] = '\0';
	c.foreign_proc = n <= 0 || atol(self) != (long)getpid();
	c.seccomp_filter = seccomp_mode() == 2;
	/* An older caller's smaller struct gets what it knows. */
	return EVPROF_STATS_COPY(out, &c);
}

int evprof_proc__ns_pid(int nspid, const char *ns_path)
{
	struct stat ns, st;
	struct dirent *d;
	char path[sizeof("/proc//ns/pid") + NAME_MAX];
	int found = -ESRCH;
	DIR *dir;

	if (nspid <= 0 || !ns_path)
		return -EINVAL;
	if (stat(ns_path, &ns))
		return -errno;
	dir = opendir("/proc");
	if (!dir)
		return -errno;
	while (found < 0 && (d = readdir(dir))) {
		if (d->d_name[0] < '1' || d->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/ns/pid", d->d_name);
		if (stat(path, &st) || st.st_ino != ns.st_ino ||
		    st.st_dev != ns.st_dev)
			continue;
		if (last_nspid(d->d_name) == nspid)
			found = atoi(d->d_name);
	}
	closedir(dir);
	return found;
}
