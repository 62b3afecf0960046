/*
 * config.c - the machine's defaults of a run's context, and the memory
 * budget of its workers (see kjudge/config.h).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/config.h"
#include "kjudge/sandbox.h"
#include "base/locate.h"
#include "base/internal.h"

void kj_config_init(struct kj_config *c, char *const *env)
{
	static char *const empty[] = { NULL };
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	long long ram = pages > 0 && psize > 0 ? (long long)pages * psize : 16LL << 30;

	memset(c, 0, sizeof(*c));
	/* The install's record, the checkout's .venv, else python3. */
	kj__default_python(&c->python, &c->python_source);
	c->scratch_parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	c->scratch_private = 1;
	c->cache_max_bytes = -1;
	c->sandbox = 1;
	c->device_outputs = 1;
	c->publish_s = 30;
	c->eval_audit = 1;
	c->worker_template = 1;
	c->slurm_poll_s = 10;
	c->slurm_cmd_s = 300;
	c->tmp_dir = "/tmp";
	c->limits.cpu_s = 4 * 3600.0;
	/* Until the CLI budgets it for the machine (kj_mem_budget_make). */
	c->limits.mem_bytes = ram / 2;
	c->limits.file_bytes = ram / 4;
	c->limits.procs = 1024;
	c->limits.nofile = 4096;
	c->limits.tmp_bytes = 256LL << 20;
	c->limits.output_bytes = 256u << 10;
	c->environ = env ? env : empty;
}

const char *kj_config_env(const struct kj_config *c, const char *name)
{
	size_t n = strlen(name);
	char *const *e;

	for (e = c->environ; e && *e; e++)
		if (!strncmp(*e, name, n) && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

json_t *kj_limits_json(const struct kj_limits *l)
{
	return json_pack("{s:f, s:I, s:I, s:I, s:I, s:I, s:I}",
			 "cpu_s", l->cpu_s,
			 "memory_bytes", (json_int_t)l->mem_bytes,
			 "file_bytes", (json_int_t)l->file_bytes,
			 "procs", (json_int_t)l->procs,
			 "open_files", (json_int_t)l->nofile,
			 "tmp_bytes", (json_int_t)l->tmp_bytes,
			 "output_bytes_per_call", (json_int_t)l->output_bytes);
}

/* --- the memory budget ------------------------------------------------------------- */

long long kj_mem_headroom(long long available)
{
	return available / 8 > KJ_MEM_HEADROOM_MIN ? available / 8 : KJ_MEM_HEADROOM_MIN;
}

long long kj_mem_worker_limit(long long available, int workers, long long headroom)
{
	long long share;

	if (workers < 1)
		workers = 1;
	share = available > headroom ? (available - headroom) / workers : 0;
	share &= ~((1LL << 20) - 1);
	return share > KJ_MEM_WORKER_MIN ? share : KJ_MEM_WORKER_MIN;
}

void kj_mem_budget_make(struct kj_mem_budget *b, long long available, const char *source,
			int workers, long long user_bytes)
{
	memset(b, 0, sizeof(*b));
	b->available = available > 0 ? available : 0;
	b->source = source;
	b->workers = workers > 0 ? workers : 1;
	b->headroom = kj_mem_headroom(b->available);
	b->per_worker = kj_mem_worker_limit(b->available, b->workers, b->headroom);
	b->user_limit = user_bytes > 0;
	b->limit = b->user_limit ? user_bytes : b->per_worker;
	/* In long double: a user's limit times many workers must not wrap. */
	b->oversubscribed = (long double)b->limit * b->workers + b->headroom >
			    (long double)b->available;
}

json_t *kj_mem_budget_json(const struct kj_mem_budget *b)
{
	return json_pack("{s:I, s:s?, s:i, s:I, s:I, s:I, s:b, s:b, s:i}",
			 "available_bytes", (json_int_t)b->available,
			 "source", b->source,
			 "workers", b->workers,
			 "headroom_bytes", (json_int_t)b->headroom,
			 "per_worker_bytes", (json_int_t)b->per_worker,
			 "limit_bytes", (json_int_t)b->limit,
			 "user_limit", b->user_limit,
			 "oversubscribed", b->oversubscribed,
			 "judge_oom_score_adj", b->judge_oom_score_adj);
}

long long kj_meminfo_available(const char *text)
{
	const char *at;

	for (at = text; at && *at; at = strchr(at, '\n'), at = at ? at + 1 : NULL)
		if (!strncmp(at, "MemAvailable:", 13)) {
			char *end;
			long long kb = strtoll(at + 13, &end, 10);

			if (end == at + 13 || kb < 0 || kb > (1LL << 52))
				return -1;
			return kb << 10;
		}
	return -1;
}

long long kj_mem_available(const char **source)
{
	char buf[8192];
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	long long avail = -1, cg;

	if (kj__read_text("/proc/meminfo", buf, sizeof(buf)) > 0)
		avail = kj_meminfo_available(buf);
	*source = "MemAvailable";
	if (avail < 0) {
		avail = pages > 0 && psize > 0 ? (long long)pages * psize / 2 : 8LL << 30;
		*source = "RAM";
	}
	cg = kj__read_text("/proc/self/cgroup", buf, sizeof(buf)) > 0
		     ? kj_cgroup_mem_limit(NULL, buf) : 0;
	if (cg > 0 && cg < avail) {
		avail = cg;
		*source = "cgroup";
	}
	return avail;
}
