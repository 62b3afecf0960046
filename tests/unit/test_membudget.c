/*
 * test_membudget.c - the memory budget of the workers (config.h): the
 * formula as a function of what is available, the workers at once and the
 * judge's headroom; what /proc/meminfo and the judge's cgroup say is
 * available (the cgroup trees made here, v1 and v2); how many workers an
 * eval batch runs at once.
 */
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "kjudge/config.h"
#include "kjudge/eval.h"
#include "kjudge/sandbox.h"
#include "unit.h"

#define MiB (1LL << 20)
#define GiB (1LL << 30)

KJ_TEST(membudget_formula)
{
	static const struct {
		long long avail;
		int workers;
		long long user, headroom, per_worker;
		int over;
	} cases[] = {
		/* a 24 GiB machine, 22 GiB available: verify's two workers,
		 * eval -j 8 on GPUs (16), the headroom an eighth */
		{ 22 * GiB, 2, 0, 22 * GiB / 8, (22 * GiB - 22 * GiB / 8) / 2, 0 },
		{ 22 * GiB, 16, 0, 22 * GiB / 8, ((22 * GiB - 22 * GiB / 8) / 16) & ~(MiB - 1), 0 },
		/* a small machine: the headroom's floor of 1 GiB */
		{ 4 * GiB, 2, 0, GiB, 1536 * MiB, 0 },
		/* too little for the floor of 256 MiB each: the floor, and
		 * said to oversubscribe */
		{ 2 * GiB, 16, 0, GiB, 256 * MiB, 1 },
		{ 512 * MiB, 1, 0, GiB, 256 * MiB, 1 },
		/* the user's limit wins, and is said to oversubscribe when
		 * it does */
		{ 22 * GiB, 2, 512 * MiB, 22 * GiB / 8, (22 * GiB - 22 * GiB / 8) / 2, 0 },
		{ 22 * GiB, 16, 12 * GiB, 22 * GiB / 8, ((22 * GiB - 22 * GiB / 8) / 16) & ~(MiB - 1),
		  1 },
		{ 22 * GiB, 2, (1LL << 30) * MiB, 22 * GiB / 8, (22 * GiB - 22 * GiB / 8) / 2, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct kj_mem_budget b;

		kj_mem_budget_make(&b, cases[i].avail, "MemAvailable", cases[i].workers,
				   cases[i].user);
		if (b.headroom != cases[i].headroom || b.per_worker != cases[i].per_worker ||
		    b.oversubscribed != cases[i].over)
			kj_test_fail(__FILE__, __LINE__, "case %zu: headroom %lld, per worker %lld, "
				     "oversubscribed %d", i, b.headroom, b.per_worker,
				     b.oversubscribed);
		KJ_CHECK_INT(b.limit, cases[i].user ? cases[i].user : cases[i].per_worker);
		KJ_CHECK_INT(b.user_limit, cases[i].user > 0);
		KJ_CHECK_INT(b.workers, cases[i].workers);
		KJ_CHECK_INT(b.per_worker % MiB, 0);
		/* Whatever the formula gives above its floor fits. */
		if (b.per_worker > KJ_MEM_WORKER_MIN)
			KJ_CHECK(b.per_worker * b.workers + b.headroom <= b.available);
		KJ_CHECK_INT(kj_mem_worker_limit(cases[i].avail, cases[i].workers,
						 kj_mem_headroom(cases[i].avail)), b.per_worker);
	}
}

KJ_TEST(membudget_json)
{
	struct kj_mem_budget b;
	json_t *o;

	kj_mem_budget_make(&b, 8 * GiB, "cgroup", 4, 0);
	o = kj_mem_budget_json(&b);
	KJ_CHECK(o != NULL);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "available_bytes")), 8 * GiB);
	KJ_CHECK_STR(json_string_value(json_object_get(o, "source")), "cgroup");
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "workers")), 4);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "headroom_bytes")), GiB);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "per_worker_bytes")), 1792 * MiB);
	KJ_CHECK_INT(json_integer_value(json_object_get(o, "limit_bytes")), 1792 * MiB);
	KJ_CHECK(json_is_false(json_object_get(o, "user_limit")));
	KJ_CHECK(json_is_false(json_object_get(o, "oversubscribed")));
	json_decref(o);
}

KJ_TEST(membudget_meminfo)
{
	KJ_CHECK_INT(kj_meminfo_available("MemTotal:       24731400 kB\n"
					  "MemFree:        14000000 kB\n"
					  "MemAvailable:   23235404 kB\n"
					  "Buffers:          100 kB\n"), 23235404LL * 1024);
	KJ_CHECK_INT(kj_meminfo_available("MemAvailable: 1 kB"), 1024);
	/* No such line (kernels before 3.14), or not a number. */
	KJ_CHECK_INT(kj_meminfo_available("MemTotal: 1 kB\nMemFree: 1 kB\n"), -1);
	KJ_CHECK_INT(kj_meminfo_available("MemAvailable: kB\n"), -1);
	KJ_CHECK_INT(kj_meminfo_available("XMemAvailable: 5 kB\n"), -1);
	KJ_CHECK_INT(kj_meminfo_available(""), -1);
}

/* Write text into the file at rel, a path under the test's directory. */
static void put(const char *rel, const char *text)
{
	FILE *f = fopen(kj_test_path(rel), "w");

	KJ_CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void mk(const char *rel)
{
	KJ_CHECK(mkdir(kj_test_path(rel), 0755) == 0);
}

KJ_TEST(membudget_cgroup_limits)
{
	char root[2048];

	/* v2: the smallest memory.max from the judge's group up; "max" is
	 * none, and the root has no such file. */
	mk("v2");
	mk("v2/a");
	mk("v2/a/b");
	snprintf(root, sizeof(root), "%s", kj_test_path("v2"));
	put("v2/cgroup.controllers", "cpu memory pids\n");
	put("v2/a/memory.max", "8589934592\n");
	put("v2/a/b/memory.max", "max\n");
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "0::/a/b\n"), 8LL << 30);
	put("v2/a/b/memory.max", "2147483648\n");
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "0::/a/b\n"), 2LL << 30);
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "0::/\n"), 0);
	/* A path the hierarchy does not show: what is above it still counts. */
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "0::/a/gone\n"), 8LL << 30);

	/* v1: the memory controller's line, in root/memory; v1's
	 * "unlimited" is near 2^63. */
	mk("v1");
	mk("v1/memory");
	mk("v1/memory/job");
	mk("v1/memory/job/step");
	snprintf(root, sizeof(root), "%s", kj_test_path("v1"));
	put("v1/memory/tasks", "");
	put("v1/memory/memory.limit_in_bytes", "9223372036854771712\n");
	put("v1/memory/job/memory.limit_in_bytes", "9223372036854771712\n");
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "4:memory:/job/step\n0::/\n"), 0);
	put("v1/memory/job/step/memory.limit_in_bytes", "3221225472\n");
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "12:pids:/x\n4:cpu,memory:/job/step\n0::/\n"),
		     3LL << 30);
	/* No memory line, or no hierarchy: none. */
	KJ_CHECK_INT(kj_cgroup_mem_limit(root, "12:pids:/job/step\n"), 0);
	KJ_CHECK_INT(kj_cgroup_mem_limit(kj_test_path("nothing"), "4:memory:/job\n0::/job\n"), 0);
}

KJ_TEST(membudget_eval_workers_at_once)
{
	/* GPUs: two workers an attempt, every attempt's at once. */
	KJ_CHECK_INT(kj_eval_workers_at_once(8, 0, 0), 16);
	KJ_CHECK_INT(kj_eval_workers_at_once(1, 0, 0), 2);
	/* The CPU: an attempt holds the machine before its workers start. */
	KJ_CHECK_INT(kj_eval_workers_at_once(8, 1, 0), 2);
	/* Suites of specs: one program an attempt. */
	KJ_CHECK_INT(kj_eval_workers_at_once(8, 1, 1), 8);
	KJ_CHECK_INT(kj_eval_workers_at_once(0, 0, 0), 2);
}
