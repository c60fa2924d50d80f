/* SPDX-License-Identifier: MIT */
/*
 * Control groups as perf events see them: the hierarchy that holds the
 * perf_event controller (a cgroup v1 mount with it where the host has one,
 * else cgroup v2, where it is always on), and a cgroup of it by path. An
 * event opened on a cgroup (PERF_FLAG_PID_CGROUP, per CPU) counts the
 * tasks in it and in its descendants.
 */
#ifndef EVPROF_CGROUP_H
#define EVPROF_CGROUP_H

#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <evprof/common.h>

#ifdef __cplusplus
extern "C" {
#endif

struct evprof_cgroup_fs {
	char mount[PATH_MAX]; /* where the hierarchy is mounted */
	int version;	      /* 2, or 1 for a v1 perf_event mount */
};

/*
 * Finds the hierarchy in /proc/self/mountinfo. Returns 0, -ENOENT when
 * none is mounted (no cgroup2 and no v1 perf_event mount), or -errno.
 */
EVPROF_API int evprof_cgroup_fs__find(struct evprof_cgroup_fs *fs);

struct evprof_cgroup {
	char path[PATH_MAX]; /* absolute, under the mount */
	char name[PATH_MAX]; /* from the hierarchy's root: "/", "/a/b" */
	uint64_t id;	     /* inode number: the cgroup id of cgroup v2 */
};

/*
 * Resolves path in fs: a directory under its mount, or a path from the
 * hierarchy's root ("a/b" or "/a/b", as perf -G takes it). Returns 0,
 * -ENOENT (no such cgroup), -EXDEV (an existing directory outside the
 * mount), -ENOTDIR, or -errno.
 */
EVPROF_API int evprof_cgroup__resolve(const struct evprof_cgroup_fs *fs,
				      const char *path,
				      struct evprof_cgroup *cg);

/*
 * What err from evprof_cgroup_fs__find() (fs NULL) or
 * evprof_cgroup__resolve() means for a user, into buf: "no such cgroup in
 * the perf_event hierarchy (cgroup v2 at /sys/fs/cgroup)", ... Returns buf.
 */
EVPROF_API const char *evprof_cgroup__why(int err,
					  const struct evprof_cgroup_fs *fs,
					  char *buf, size_t len);

/* True when a is b or one of its descendants. */
EVPROF_API bool evprof_cgroup__within(const struct evprof_cgroup *a,
				      const struct evprof_cgroup *b);

/*
 * Who a cgroup path says ran in it: the container runtimes' cgroups
 * (systemd driver: docker-ID.scope, cri-containerd-ID.scope,
 * crio-ID.scope, libpod-ID.scope; cgroupfs driver: /docker/ID,
 * /libpod_parent/libpod-ID, /kubepods/.../ID) and Kubernetes' pod
 * cgroups (kubepods[-burstable|-besteffort]-pod<UID>.slice, '_' read as
 * '-', or /kubepods/[burstable|besteffort/]pod<UID>). The innermost
 * container cgroup of the path counts.
 */
struct evprof_container {
	/* "docker", "containerd", "cri-o", "podman"; "" where the path names
	 * no runtime (a bare id under /kubepods), NULL: no container. */
	const char *runtime;
	char id[65];	  /* the container id in full, "" without one */
	char pod_uid[37]; /* the pod's UID with dashes, "" outside a pod */
	/* "guaranteed", "burstable", "besteffort"; NULL outside kubepods */
	const char *qos;
};

/*
 * Reads path (a cgroup's path from its hierarchy's root, as
 * /proc/PID/cgroup and PERF_RECORD_CGROUP give it) into *c. Pure string
 * work. Returns true when it names a container, a pod or a QoS class.
 */
EVPROF_API bool evprof_cgroup__container(const char *path,
					 struct evprof_container *c);

#ifdef __cplusplus
}
#endif

#endif /* EVPROF_CGROUP_H */
