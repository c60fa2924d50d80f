// SPDX-License-Identifier: MIT
/*
 * The cgroups a system-wide recording keeps to: resolved in the hierarchy
 * of the perf_event controller, nested ones dropped (a cgroup's events
 * count its descendants: both would count them twice), each opened as the
 * directory fd perf_event_open() takes with PERF_FLAG_PID_CGROUP.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <evprof/cgroup.h>

#include "engine.h"

static int say(int err, const struct evprof_cgroup_fs *fs, const char *path)
{
	char why[PATH_MAX + 128];

	pr_warn("cgroup '%s': %s\n", path,
		evprof_cgroup__why(err, fs, why, sizeof(why)));
	return err;
}

int evprof__engine_cgroups(struct evprof__engine_setup *s,
			   const struct evprof_recorder_target *t)
{
	size_t n = EVPROF_OPTS_GET(t, nr_cgroups, 0);
	const char *const *paths = EVPROF_OPTS_GET(t, cgroups, NULL);
	struct evprof_cgroup *cg;
	struct evprof_cgroup_fs fs;
	int err;

	if (!n)
		return 0;
	if (!paths || !t->system_wide)
		return -EINVAL;
	err = evprof_cgroup_fs__find(&fs);
	if (err) {
		char why[128];

		pr_warn("cannot filter by cgroup: %s\n",
			evprof_cgroup__why(err, NULL, why, sizeof(why)));
		return err;
	}
	s->cgroup_version = fs.version;
	snprintf(s->cgroup_mount, sizeof(s->cgroup_mount), "%s", fs.mount);
	cg = calloc(n, sizeof(*cg));
	s->cgroup_fds = calloc(n, sizeof(*s->cgroup_fds));
	s->cgroup_ids = calloc(n, sizeof(*s->cgroup_ids));
	if (!cg || !s->cgroup_fds || !s->cgroup_ids) {
		free(cg);
		return -ENOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		err = evprof_cgroup__resolve(&fs, paths[i], &cg[i]);
		if (err) {
			say(err, &fs, paths[i]);
			goto out;
		}
	}
	for (size_t i = 0; i < n; i++) {
		bool nested = false;

		/* Inside another (the first of equal ones stays). */
		for (size_t j = 0; j < n && !nested; j++)
			nested =
			    j != i && evprof_cgroup__within(&cg[i], &cg[j]) &&
			    (!evprof_cgroup__within(&cg[j], &cg[i]) || j < i);
		if (nested) {
			evprof__note(s->notes,
				     "cgroup %s is left out: a cgroup given "
				     "holds it, and its events count it "
				     "already",
				     cg[i].name);
			continue;
		}
		s->cgroup_fds[s->nr_cgroups] =
		    open(cg[i].path, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
		if (s->cgroup_fds[s->nr_cgroups] < 0) {
			err = say(-errno, &fs, paths[i]);
			goto out;
		}
		s->cgroup_ids[s->nr_cgroups++] = cg[i].id;
	}
	evprof__note(s->notes,
		     "recording %zu cgroup%s of the cgroup v%d hierarchy at "
		     "%s, filtered in the kernel",
		     s->nr_cgroups, s->nr_cgroups == 1 ? "" : "s", fs.version,
		     fs.mount);
	err = 0;
out:
	free(cg);
	return err;
}

void evprof__engine_cgroups_close(struct evprof__engine_setup *s)
{
	for (size_t i = 0; i < s->nr_cgroups; i++)
		close(s->cgroup_fds[i]);
	free(s->cgroup_fds);
	free(s->cgroup_ids);
	s->cgroup_fds = NULL;
	s->cgroup_ids = NULL;
	s->nr_cgroups = 0;
}
