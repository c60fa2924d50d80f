// SPDX-License-Identifier: MIT
/*
 * Containers and pods from a cgroup path (evprof/cgroup.h): what the
 * runtimes and the kubelet name their cgroups, read one component at a
 * time. Pure string work, here so that the session (which labels threads)
 * and the writers (which show them) reach it alike.
 *
 *   systemd driver: /kubepods.slice/kubepods-burstable.slice/
 *	 kubepods-burstable-pod<uid, '_' for '-'>.slice/cri-containerd-<id>.scope
 *     /system.slice/docker-<id>.scope, /machine.slice/libpod-<id>.scope
 *   cgroupfs driver: /kubepods/besteffort/pod<uid>/<id>, /docker/<id>,
 *     /libpod_parent/libpod-<id>
 */
#include <stdio.h>
#include <string.h>

#include <evprof/cgroup.h>

#include "internal.h"

static bool is_hex(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') ||
		      (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

/* A component [b, b+n) ending in suffix: its length without it, or 0. */
static size_t strip(const char *b, size_t n, const char *suffix)
{
	size_t k = strlen(suffix);

	return n > k && !memcmp(b + n - k, suffix, k) ? n - k : 0;
}

static bool starts(const char *b, size_t n, const char *prefix)
{
	size_t k = strlen(prefix);

	return n >= k && !memcmp(b, prefix, k);
}

/* An id: 12 to 64 lowercase hex digits (runtimes write 64). */
static bool take_id(struct evprof_container *c, const char *runtime,
		    const char *b, size_t n)
{
	if (n < 12 || n > 64 || !is_hex(b, n))
		return false;
	memcpy(c->id, b, n);
	c->id[n] = '\0';
	c->runtime = runtime;
	return true;
}

/* A pod UID: 32 hex digits with or without its 4 dashes ('_' or '-'). */
static bool take_pod(struct evprof_container *c, const char *b, size_t n)
{
	char uid[37];

	if (n != 32 && n != 36)
		return false;
	for (size_t i = 0; i < n; i++) {
		uid[i] = b[i] == '_' ? '-' : b[i];
		if (uid[i] != '-' && !is_hex(&uid[i], 1))
			return false;
	}
	uid[n] = '\0';
	memcpy(c->pod_uid, uid, n + 1);
	return true;
}

/* One path component [b, b+n); parent is the one before it (or empty). */
static void component(struct evprof_container *c, const char *b, size_t n,
		      const char *pb, size_t pn, bool *kube)
{
	static const struct {
		const char *prefix, *runtime;
	} scopes[] = {
	    {"docker-", "docker"},
	    {"cri-containerd-", "containerd"},
	    {"crio-", "cri-o"},
	    {"libpod-", "podman"},
	};
	size_t k;

	if ((n == 8 && !memcmp(b, "kubepods", 8)) ||
	    (n == 14 && !memcmp(b, "kubepods.slice", 14))) {
		*kube = true;
		c->qos = "guaranteed";
		return;
	}
	if (*kube && (k = strip(b, n, ".slice")) && starts(b, k, "kubepods-")) {
		const char *q = b + 9, *pod;

		k -= 9;
		if (starts(q, k, "burstable")) {
			c->qos = "burstable";
			q += 9, k -= 9;
		} else if (starts(q, k, "besteffort")) {
			c->qos = "besteffort";
			q += 10, k -= 10;
		}
		if (k > 0 && *q == '-')
			q++, k--;
		pod = q;
		if (starts(pod, k, "pod"))
			take_pod(c, pod + 3, k - 3);
		return;
	}
	if (*kube && n == 9 && !memcmp(b, "burstable", 9)) {
		c->qos = "burstable";
		return;
	}
	if (*kube && n == 10 && !memcmp(b, "besteffort", 10)) {
		c->qos = "besteffort";
		return;
	}
	if (*kube && starts(b, n, "pod") && take_pod(c, b + 3, n - 3))
		return;
	if ((k = strip(b, n, ".scope"))) {
		for (size_t i = 0; i < sizeof(scopes) / sizeof(scopes[0]);
		     i++) {
			size_t pl = strlen(scopes[i].prefix);

			/* crio-conmon-ID, libpod-conmon-ID: the monitor. */
			if (starts(b, k, scopes[i].prefix) &&
			    take_id(c, scopes[i].runtime, b + pl, k - pl))
				return;
		}
		return;
	}
	if (starts(b, n, "libpod-") && take_id(c, "podman", b + 7, n - 7))
		return;
	/* cgroupfs: the bare id, under /docker/ or a pod's cgroup. */
	if (n == 64 && is_hex(b, n)) {
		const char *rt = "";

		if (pn == 6 && !memcmp(pb, "docker", 6))
			rt = "docker";
		take_id(c, rt, b, n);
	}
}

bool evprof_cgroup__container(const char *path, struct evprof_container *c)
{
	const char *p = path, *pb = "";
	size_t pn = 0;
	bool kube = false;

	if (!c)
		return false;
	memset(c, 0, sizeof(*c));
	if (!path)
		return false;
	while (*p) {
		const char *e = strchr(p, '/');
		size_t n = e ? (size_t)(e - p) : strlen(p);

		if (n)
			component(c, p, n, pb, pn, &kube);
		if (n) {
			pb = p;
			pn = n;
		}
		p += n;
		if (*p == '/')
			p++;
	}
	return c->runtime || c->pod_uid[0] || c->qos;
}

const char *evprof__who_show(const char *path, int ns_pid, char *buf,
			     size_t len)
{
	struct evprof_container c;
	int n = 0;

	*buf = '\0';
	/* The root cgroup says nothing: every task outside any is there. */
	if (path && *path && strcmp(path, "/")) {
		evprof_cgroup__container(path, &c);
		if (c.runtime)
			n = snprintf(buf, len, "container %.12s", c.id);
		else if (c.pod_uid[0])
			n = snprintf(buf, len, "pod %s", c.pod_uid);
		else
			n = snprintf(buf, len, "cgroup %s", path);
	}
	if (ns_pid > 0 && n >= 0 && (size_t)n < len)
		snprintf(buf + n, len - (size_t)n, "%spid %d inside",
			 n ? ", " : "", ns_pid);
	return buf;
}
