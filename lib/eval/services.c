/*
 * services.c - what every kind of attempt uses alike (eval_internal.h):
 * the attempt's first row in the store, its scratch directory, the batch's
 * locks, the environment attempts.env keeps (the clock is lib/base's
 * kj__now_s).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "kjudge/proc.h"
#include "kjudge/store.h"
#include "eval/eval_internal.h"
#include "base/text.h"
#include "base/banned.h"

/* --- the store ------------------------------------------------------------------------- */

/* An attempt's row as 'running', its earlier rows gone: one transaction
 * (a torch attempt's and a spec attempt's alike). */
int kj__eval_record_start(struct kj_store *store, const char *key, const struct kj_eval_task *t,
			  const struct kj_eval_cand *c, const struct kj_eval_slot *slot,
			  struct kj_error *err)
{
	struct kj_store_attempt a = {
		.key = key, .run_id = slot->run_id, .task_key = t->key,
		.task = t->name, .model = c->model, .attempt = c->attempt,
		.round = c->round, .cand_sha256 = c->sha256, .source = c->source,
		.source_len = c->source_len, .origin = c->origin,
		.prompt_tokens = c->prompt_tokens, .completion_tokens = c->completion_tokens,
		.generation_s = c->generation_s, .device = slot->device,
	};

	return kj_store_attempt_begin(store, &a, err);
}

/* --- scratch and locks ---------------------------------------------------------------- */

/*
 * An attempt's scratch directory, WORK/PREFIX-KEY16-XXXXXX, made by mkdtemp:
 * its own whatever its key, since two judges of the same key (a task twice
 * in a suite, or a second eval of another store on the same batch
 * directory) must never stage into one folder and remove each other's
 * files.  On failure dir is "" (nothing to remove) and err says why.
 */
int kj__eval_scratch(const struct kj_eval_slot *slot, const char *prefix, const char *key,
		     char *dir, size_t size, struct kj_error *err)
{
	if (snprintf(dir, size, "%s/%s-%.16s-XXXXXX", slot->work_dir, prefix, key) >= (int)size) {
		*dir = '\0';
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", slot->work_dir);
	}
	if (!mkdtemp(dir)) {
		int e = errno;

		*dir = '\0';
		return kj_error_set(err, kj_err_from_errno(e), "'%s': cannot make a scratch "
				    "directory: %s", slot->work_dir, strerror(e));
	}
	return KJ_OK;
}

/* The batch's locks (flock on WORK/NAME.lock, op LOCK_EX or LOCK_SH):
 * the device's (no two timed phases share a device) and the quiet one
 * (shared by every worker start, taken whole by a timing run again alone).
 * Returns the descriptor (held until closed) or -1 with err filled. */
int kj__eval_lock_file(const struct kj_eval_slot *slot, const char *name, int op,
		       struct kj_error *err)
{
	char path[PATH_MAX], dev[32];
	size_t i;
	int fd;

	snprintf(dev, sizeof(dev), "%s", name);
	for (i = 0; dev[i]; i++)
		if (dev[i] == ':' || dev[i] == '/')
			dev[i] = '_';
	snprintf(path, sizeof(path), "%s/%s.lock", slot->work_dir, dev);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0600);
	if (fd < 0) {
		kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", path, strerror(errno));
		return -1;
	}
	/* Another attempt's timed phase may hold it for minutes while this
	 * attempt's workers wait: no lack of progress of this judge's. */
	kj_proc_watchdog_pause();
	while (flock(fd, op) < 0) {
		if (errno != EINTR) {
			kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", path, strerror(errno));
			close(fd);
			return -1;
		}
	}
	return fd;
}

int kj__eval_lock_device(const struct kj_eval_slot *slot, struct kj_error *err)
{
	char name[48];

	snprintf(name, sizeof(name), "device-%s", slot->device);
	return kj__eval_lock_file(slot, name, LOCK_EX, err);
}

/* --- where the figures were measured --------------------------------------------------- */

/* The judge's Slurm variables that attempts.env keeps, under their own names. */
static const char *const slurm_vars[] = { "SLURM_JOB_ID", "SLURM_ARRAY_JOB_ID",
					  "SLURM_ARRAY_TASK_ID", "SLURM_RESTART_COUNT",
					  "SLURMD_NODENAME", "SLURM_CLUSTER_NAME" };

/* o[key] = s made valid UTF-8 and bounded (a host name or a variable is
 * the machine's text, not necessarily UTF-8); -1 when out of memory. */
static int set_clean(json_t *o, const char *key, const char *s)
{
	char *clean = kj__text_cleans(s, 256);
	int rc = clean ? json_object_set_new(o, key, json_string(clean)) : -1;

	free(clean);
	return rc;
}

json_t *kj__eval_env(const struct kj_config *cfg, const json_t *base)
{
	json_t *env = json_is_object(base) ? json_copy((json_t *)(uintptr_t)base) : json_object();
	json_t *slurm = json_object();
	char host[256];
	size_t i;

	if (!env || !slurm)
		goto oom;
	/* The judge's own host: a sharded study's figures come from many
	 * nodes, and the worker's word for it is not the judge's. */
	memset(host, 0, sizeof(host));
	if (gethostname(host, sizeof(host) - 1) == 0 && *host) {
		if (set_clean(env, "node", host) != 0)
			goto oom;
	} else if (json_object_set_new(env, "node", json_null()) != 0) {
		goto oom;
	}
	for (i = 0; i < sizeof(slurm_vars) / sizeof(slurm_vars[0]); i++) {
		const char *v = kj_config_env(cfg, slurm_vars[i]);

		if (v && *v && set_clean(slurm, slurm_vars[i], v) != 0)
			goto oom;
	}
	/* Only a judge under Slurm says so; a "slurm" of the worker's never
	 * stands. */
	json_object_del(env, "slurm");
	if (json_object_size(slurm) && json_object_set(env, "slurm", slurm) != 0)
		goto oom;
	json_decref(slurm);
	return env;
oom:
	json_decref(env);
	json_decref(slurm);
	return NULL;
}

/* --- the clock ------------------------------------------------------------------------- */

int kj__eval_lock(const struct kj_eval_slot *slot, const char *name, struct kj_error *err)
{
	return kj__eval_lock_file(slot, name, LOCK_EX, err);
}

int kj_eval_parse_gpus(const char *list, char devs[][16], int max, int *n, struct kj_error *err)
{
	const char *p = list;
	int k;

	*n = 0;
	while (*p) {
		char *end;
		long v = strtol(p, &end, 10);

		if (end == p || v < 0 || v > 1023 || (*end && *end != ',') || *n == max)
			return kj_error_set(err, KJ_EINVAL, "--gpus '%s': a comma list of GPU "
					    "numbers, e.g. 0,1", list);
		for (k = 0; k < *n; k++)
			if (strtol(devs[k] + 5, NULL, 10) == v)
				return kj_error_set(err, KJ_EINVAL, "--gpus '%s': GPU %ld is named "
						    "twice", list, v);
		snprintf(devs[(*n)++], 16, "cuda:%ld", v);
		p = *end ? end + 1 : end;
	}
	if (*n == 0)
		return kj_error_set(err, KJ_EINVAL, "--gpus: no GPU named");
	return KJ_OK;
}
