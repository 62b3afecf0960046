/*
 * publish.c - what a shard of a cluster run leaves for the judge that
 * follows it (kjudge/eval.h, docs/slurm.md): its store published as one
 * file, its ending as a status file, and the store's lock that keeps a
 * second eval off the same store.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include <jansson.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "eval/eval_internal.h"
#include "base/json.h"
#include "base/internal.h"

int kj_eval_shard_publish(struct kj_store *store, const char *dir, int i, struct kj_error *err)
{
	char path[PATH_MAX];
	struct kj_error e;
	int rc;

	snprintf(path, sizeof(path), "%s/shard-%d.db", dir, i);
	if ((rc = kj_store_publish(store, path, &e)) != KJ_OK)
		return kj_error_set(err, rc, "publishing the shard: %s", e.msg);
	return KJ_OK;
}

int kj_eval_shard_status(const struct kj_config *cfg, const char *dir, int i, int k,
			 const char *plan_id, int exit_code, size_t total, size_t done,
			 struct kj_error *err)
{
	char path[PATH_MAX], host[256] = "", when[32], *text;
	struct kj_error e;
	json_t *o;
	int rc;

	gethostname(host, sizeof(host) - 1);
	kj__utc_now(when);
	o = json_pack("{s:i, s:i, s:s, s:i, s:s, s:s, s:I, s:I, s:s?, s:s?, s:s?}", "shard", i,
		      "shards", k, "plan", plan_id ? plan_id : "", "exit", exit_code, "node", host,
		      "finished_at", when, "attempts", (json_int_t)total, "done", (json_int_t)done,
		      "slurm_job_id", cfg->slurm.job_id, "slurm_array_job_id",
		      cfg->slurm.array_job_id, "slurm_restart_count", cfg->slurm.restart_count);
	text = o ? kj_json_text(o, JSON_COMPACT, &e) : NULL;
	json_decref(o);
	snprintf(path, sizeof(path), "%s/shard-%d.json", dir, i);
	if (!text)
		return kj_error_set(err, KJ_ENOMEM, "'%s': out of memory", path);
	if ((rc = kj_write_file_atomic(path, text, strlen(text), &e)) != KJ_OK)
		kj_error_set(err, rc, "'%s': %s", path, e.msg);
	free(text);
	return rc;
}

void kj_eval_shard_clean(const char *dir, int i)
{
	char prefix[64], path[PATH_MAX];
	struct dirent *e;
	DIR *d = opendir(dir);
	size_t n;

	if (!d)
		return;
	n = (size_t)snprintf(prefix, sizeof(prefix), "shard-%d.db.tmp-", i);
	while ((e = readdir(d)) != NULL)
		if (strncmp(e->d_name, prefix, n) == 0 &&
		    snprintf(path, sizeof(path), "%s/%s", dir, e->d_name) < (int)sizeof(path))
			unlink(path);
	closedir(d);
}

int kj_eval_lock_store(const char *db_path, int wait_s, struct kj_error *err)
{
	int fd = open(db_path, O_RDONLY | O_CLOEXEC), t;

	if (fd < 0) {
		kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", db_path, strerror(errno));
		return -1;
	}
	for (t = 0; t <= wait_s * 10; t++) {
		if (flock(fd, LOCK_EX | LOCK_NB) == 0)
			return fd;
		if (errno != EWOULDBLOCK || t == wait_s * 10)
			break;
		usleep(100000);
	}
	close(fd);
	kj_error_set(err, KJ_EBUSY, "'%s': another kjudge eval is writing to this store; wait "
		     "for it, or stop it (the same command goes on where it stopped)", db_path);
	return -1;
}
