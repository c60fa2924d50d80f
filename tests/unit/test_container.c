// SPDX-License-Identifier: MIT
/*
 * evprof_cgroup__container(): the cgroup paths of the container runtimes
 * (systemd and cgroupfs drivers) and of Kubernetes pods, and paths that
 * only look like them.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include <evprof/cgroup.h>

#include "cases.h"

#define ID   "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef"
#define UID  "3f9b1c2d-4e5f-4a6b-8c7d-9e0f1a2b3c4d"
#define UID_ "3f9b1c2d_4e5f_4a6b_8c7d_9e0f1a2b3c4d"

struct want {
	const char *path;
	const char *runtime; /* NULL: none */
	const char *id;
	const char *pod;
	const char *qos;
	bool found;
};

static void check(const struct want *w)
{
	struct evprof_container c;
	bool found = evprof_cgroup__container(w->path, &c);

	print_message("%s\n", w->path);
	assert_int_equal(found, w->found);
	if (w->runtime)
		assert_string_equal(c.runtime, w->runtime);
	else
		assert_null(c.runtime);
	assert_string_equal(c.id, w->id ? w->id : "");
	assert_string_equal(c.pod_uid, w->pod ? w->pod : "");
	if (w->qos)
		assert_string_equal(c.qos, w->qos);
	else
		assert_null(c.qos);
}

static void test_systemd_driver(void **state)
{
	static const struct want w[] = {
	    {"/kubepods.slice/kubepods-burstable.slice/"
	     "kubepods-burstable-pod" UID_ ".slice/cri-containerd-" ID ".scope",
	     "containerd", ID, UID, "burstable", true},
	    {"/kubepods.slice/kubepods-besteffort.slice/"
	     "kubepods-besteffort-pod" UID_ ".slice/crio-" ID ".scope",
	     "cri-o", ID, UID, "besteffort", true},
	    {"/kubepods.slice/kubepods-pod" UID_ ".slice/crio-" ID ".scope",
	     "cri-o", ID, UID, "guaranteed", true},
	    /* The pod's own cgroup, no container yet. */
	    {"/kubepods.slice/kubepods-burstable.slice/"
	     "kubepods-burstable-pod" UID_ ".slice",
	     NULL, NULL, UID, "burstable", true},
	    {"/kubepods.slice/kubepods-besteffort.slice", NULL, NULL, NULL,
	     "besteffort", true},
	    {"/system.slice/docker-" ID ".scope", "docker", ID, NULL, NULL,
	     true},
	    {"/machine.slice/libpod-" ID ".scope", "podman", ID, NULL, NULL,
	     true},
	    {"/machine.slice/libpod-" ID ".scope/container", "podman", ID, NULL,
	     NULL, true},
	    /* Rootless podman, under the user's manager. */
	    {"/user.slice/user-1000.slice/user@1000.service/user.slice/"
	     "libpod-" ID ".scope",
	     "podman", ID, NULL, NULL, true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
}

static void test_cgroupfs_driver(void **state)
{
	static const struct want w[] = {
	    {"/kubepods/burstable/pod" UID "/" ID, "", ID, UID, "burstable",
	     true},
	    {"/kubepods/besteffort/pod" UID "/" ID, "", ID, UID, "besteffort",
	     true},
	    {"/kubepods/pod" UID "/" ID "/", "", ID, UID, "guaranteed", true},
	    {"/docker/" ID, "docker", ID, NULL, NULL, true},
	    {"/libpod_parent/libpod-" ID, "podman", ID, NULL, NULL, true},
	    /* A static pod's UID: 32 hex digits, no dashes. */
	    {"/kubepods/pod0123456789abcdef0123456789abcdef/" ID, "", ID,
	     "0123456789abcdef0123456789abcdef", "guaranteed", true},
	};

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
}

static void test_not_containers(void **state)
{
	static const struct want w[] = {
	    {"/", NULL, NULL, NULL, NULL, false},
	    {"", NULL, NULL, NULL, NULL, false},
	    {"/user.slice/user-1000.slice/session-3.scope", NULL, NULL, NULL,
	     NULL, false},
	    {"/system.slice/docker.service", NULL, NULL, NULL, NULL, false},
	    /* conmon, the monitor beside a container, is no container. */
	    {"/machine.slice/libpod-conmon-" ID ".scope", NULL, NULL, NULL,
	     NULL, false},
	    {"/system.slice/crio-conmon-" ID ".scope", NULL, NULL, NULL, NULL,
	     false},
	    /* Not hex, too short, upper case. */
	    {"/system.slice/docker-xyz.scope", NULL, NULL, NULL, NULL, false},
	    {"/docker/0123456789abcdef", NULL, NULL, NULL, NULL, false},
	    {"/system.slice/docker-0123456789ABCDEF0123.scope", NULL, NULL,
	     NULL, NULL, false},
	    /* A pod-like name outside kubepods, a bad UID inside. */
	    {"/pod" UID, NULL, NULL, NULL, NULL, false},
	    {"/kubepods/podnot-a-uid", NULL, NULL, NULL, "guaranteed", true},
	    {"/my-kubepods.slice/x", NULL, NULL, NULL, NULL, false},
	};
	struct evprof_container c;

	(void)state;
	for (size_t i = 0; i < sizeof(w) / sizeof(w[0]); i++)
		check(&w[i]);
	assert_false(evprof_cgroup__container(NULL, &c));
	assert_false(evprof_cgroup__container("/docker/" ID, NULL));
}

int main(int argc, char **argv)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_systemd_driver),
	    cmocka_unit_test(test_cgroupfs_driver),
	    cmocka_unit_test(test_not_containers),
	};

	return run_cases(argc, argv, tests, NULL, NULL);
}
