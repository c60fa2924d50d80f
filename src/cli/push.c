// SPDX-License-Identifier: MIT
/*
 * The command line's side of pushing to Pyroscope: --tag parsing, the
 * series labels every push carries, credentials from the environment
 * (never the command line, where ps shows them), and the closing report.
 * The sending itself is the library's (include/evprof/push.h).
 */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <evprof/pmu.h>
#include <evprof/profile.h>
#include <evprof/push.h>

#include "cli.h"

int cli_push_tag(struct cli_push_conf *c, const char *kv)
{
	if (!strchr(kv, '=') || kv[0] == '=') {
		cli_err("--tag takes KEY=VALUE, not '%s'", kv);
		return -1;
	}
	if (c->nr_tags == CLI_PUSH_TAGS_MAX) {
		cli_err("at most %d --tag", CLI_PUSH_TAGS_MAX);
		return -1;
	}
	c->tags[c->nr_tags++] = kv;
	return 0;
}

int cli_push_label(struct cli_push_conf *c, const char *list)
{
	static const struct {
		const char *name;
		int bit;
	} known[] = {
	    {"cgroup", EVPROF_PPROF_CGROUP},
	    {"container_id", EVPROF_PPROF_CONTAINER_ID},
	    {"pod_uid", EVPROF_PPROF_POD_UID},
	    {"qos_class", EVPROF_PPROF_QOS_CLASS},
	};
	const char *p = list;

	for (;;) {
		size_t n = strcspn(p, ",");
		size_t i;

		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strlen(known[i].name) == n &&
			    !strncmp(p, known[i].name, n))
				break;
		if (i == sizeof(known) / sizeof(known[0])) {
			/* pid and tid would make a series per thread. */
			cli_err("--push-label takes cgroup, container_id, "
				"pod_uid and qos_class, not '%.*s'",
				(int)n, p);
			return -1;
		}
		c->labels |= known[i].bit;
		if (!p[n])
			return 0;
		p += n + 1;
	}
}

static void push_log(void *ctx, const char *msg)
{
	(void)ctx;
	cli_err("%s", msg);
}

static bool has_tag(const struct cli_push_conf *c, const char *key)
{
	size_t n = strlen(key);

	for (int i = 0; i < c->nr_tags; i++)
		if (!strncmp(c->tags[i], key, n) && c->tags[i][n] == '=')
			return true;
	return false;
}

/*
 * "vendor-family-model" of the CPU from /proc/cpuinfo (x86), so that
 * counters of different PMUs land in different series; "" if unknown.
 */
static void cpu_model(char *out, size_t len)
{
	char line[256], vendor[64] = "", fam[16] = "", model[16] = "";
	FILE *f = fopen("/proc/cpuinfo", "re");

	out[0] = 0;
	if (!f)
		return;
	while (fgets(line, sizeof(line), f) &&
	       !(vendor[0] && fam[0] && model[0])) {
		if (!vendor[0])
			sscanf(line, "vendor_id : %63s", vendor);
		if (!fam[0])
			sscanf(line, "cpu family : %15s", fam);
		if (!model[0])
			sscanf(line, "model : %15s", model);
	}
	fclose(f);
	if (vendor[0] && fam[0] && model[0])
		snprintf(out, len, "%s-%s-%s", vendor, fam, model);
}

/*
 * EVPROF_PUSH_QUEUE=N: windows kept unsent behind the one in flight (the
 * library's 8 by default): what an outage of N windows can hold.
 */
static int queue_len(unsigned int *n)
{
	const char *env = getenv("EVPROF_PUSH_QUEUE");
	char *end;
	long v;

	*n = 0;
	if (!env)
		return 0;
	errno = 0;
	v = strtol(env, &end, 10);
	if (errno || end == env || *end || v < 1 || v > 100000) {
		cli_err("EVPROF_PUSH_QUEUE takes 1 to 100000 windows, not '%s'",
			env);
		return -1;
	}
	*n = (unsigned int)v;
	return 0;
}

struct evprof_pusher *cli_pusher_new(struct cli_push_conf *c)
{
	struct evprof_push_opts o = {.sz = sizeof(o), .log = push_log};
	struct evprof_core_pmu pmu;
	const char *labels[CLI_PUSH_TAGS_MAX + 4];
	char host[256], hl[300], pl[64], cl[128], model[96];
	struct evprof_pusher *pu;
	int n = 0;

	o.url = c->url;
	o.app_name = "evprof";
	for (int i = 0; i < c->nr_tags; i++) {
		if (!strncmp(c->tags[i], "service_name=", 13))
			o.app_name = c->tags[i] + 13;
		else
			labels[n++] = c->tags[i];
	}
	if (!has_tag(c, "hostname") && !gethostname(host, sizeof(host))) {
		host[sizeof(host) - 1] = 0;
		snprintf(hl, sizeof(hl), "hostname=%s", host);
		labels[n++] = hl;
	}
	/* Counters of different PMUs must never share a series. */
	if (!has_tag(c, "pmu")) {
		snprintf(pl, sizeof(pl), "pmu=%s",
			 evprof_core_pmus(&pmu, 1) > 0 ? pmu.name : "none");
		labels[n++] = pl;
	}
	cpu_model(model, sizeof(model));
	if (!has_tag(c, "cpu") && model[0]) {
		snprintf(cl, sizeof(cl), "cpu=%s", model);
		labels[n++] = cl;
	}
	labels[n] = NULL;
	o.labels = labels;
	o.user = getenv("EVPROF_PUSH_USER");
	o.password = getenv("EVPROF_PUSH_PASSWORD");
	o.token = getenv("EVPROF_PUSH_TOKEN");
	o.tenant = getenv("EVPROF_PUSH_TENANT");
	o.ca_file = getenv("EVPROF_PUSH_CA_FILE");
	o.timeout_ms = c->timeout_ms;
	if (queue_len(&o.queue_max))
		return NULL;
	pu = evprof_pusher__new(&o);
	if (!pu && errno == EOPNOTSUPP)
		cli_err("--push: this evprof was built without libcurl "
			"(Debian: libcurl4-openssl-dev, then rebuild)");
	else if (!pu && errno != EINVAL)
		cli_err("--push: %s", strerror(errno));
	return pu;
}

int cli_push_profile(struct evprof_pusher *pu, const struct evprof_profile *p,
		     uint64_t start_ns, uint64_t end_ns, unsigned int rate,
		     int labels)
{
	struct evprof_pprof_opts po = {.sz = sizeof(po),
				       .labels = EVPROF_PPROF_LABELS_PROCESS,
				       .cgroup_labels = labels};
	struct evprof_push_window w = {.sz = sizeof(w),
				       .start_ns = start_ns,
				       .end_ns = end_ns,
				       .sample_rate = rate};
	void *buf;
	size_t len;
	int err;

	err = evprof_profile__write_pprof_mem(p, &buf, &len, &po);
	if (!err) {
		err = evprof_pusher__push(pu, buf, len, &w);
		free(buf);
	}
	if (err)
		cli_err("--push: cannot queue the profile: %s",
			evprof_strerror(err));
	return err;
}

int cli_push_finish(struct evprof_pusher *pu, unsigned int wait_s)
{
	struct evprof_push_stats st = {.sz = sizeof(st)};
	int err = evprof_pusher__flush(pu, wait_s * 1000);

	evprof_pusher__stats(pu, &st);
	cli_err("push: %llu profiles sent (%llu bytes), %llu rejected, "
		"%llu dropped, %llu retries, %u left unsent%s",
		(unsigned long long)st.sent, (unsigned long long)st.bytes,
		(unsigned long long)st.rejected, (unsigned long long)st.dropped,
		(unsigned long long)st.retries, st.pending,
		err ? " after waiting --push-wait seconds" : "");
	evprof_pusher__free(pu);
	return err || st.rejected || st.dropped ? -1 : 0;
}
