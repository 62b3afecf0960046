/*
 * config.c - the machine's defaults of a run's context (see kjudge/config.h).
 */
#include <string.h>
#include <unistd.h>

#include "kjudge/config.h"
#include "base/internal.h"

void kj_config_init(struct kj_config *c, char *const *env)
{
	static char *const empty[] = { NULL };
	long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
	long long ram = pages > 0 && psize > 0 ? (long long)pages * psize : 16LL << 30;

	memset(c, 0, sizeof(*c));
	c->python = "python3";
	c->python_source = "the default";
	c->scratch_parent = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
	c->scratch_private = 1;
	c->cache_max_bytes = -1;
	c->sandbox = 1;
	c->device_outputs = 1;
	c->limits.cpu_s = 4 * 3600.0;
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
