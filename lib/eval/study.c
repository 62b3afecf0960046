/*
 * study.c - a study in its store, and its batch run (eval.h): what `kjudge
 * eval` does between reading its options and printing its summary.
 *
 * kj_eval_study_open  the store, and the lock that keeps a second eval off it
 * kj_eval_study_begin the batch's bytes, the run's row with the suite's
 *                     tasks, each attempt's key, the shard's attempts and
 *                     which of them the store already holds
 * kj_eval_study_run   the attempts left, through the batch runner (pool.c);
 *                     those whose device's memory ran out while others
 *                     shared it again, one at a time
 * kj_eval_study_end   the run's row finished
 * kj_eval_study_close everything the study holds
 *
 * The command prints: the study says what happened through its hooks.
 */
#include <errno.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "base/fs.h"
#include "base/internal.h"
#include "base/banned.h"

void kj_eval_study_init(struct kj_eval_study *st)
{
	memset(st, 0, sizeof(*st));
	st->lock = -1;
}

void kj_eval_study_close(struct kj_eval_study *st)
{
	kj_store_close(st->store);
	if (st->lock >= 0)
		close(st->lock);
	free(st->keys);
	free(st->todo);
	free(st->in_shard);
	kj_eval_study_init(st);
}

int kj_eval_study_open(struct kj_eval_study *st, const char *db_path, int wait_s,
		       struct kj_error *err)
{
	int rc = kj_store_open(db_path, KJ_STORE_CREATE, 5000, &st->store, err);

	if (rc != KJ_OK)
		return rc;
	/* One eval per store at a time (a shard waits a while for it). */
	st->lock = kj_eval_lock_store(db_path, wait_s, err);
	return st->lock < 0 ? err->code : KJ_OK;
}

/* The batch's bytes as the store and a plan write them: 32 hex digits. */
static void hex_of(const unsigned char b[16], char hex[33])
{
	int i;

	for (i = 0; i < 16; i++)
		snprintf(hex + 2 * i, 3, "%02x", b[i]);
}

/* And back: 1 when hex is 32 hex digits (b filled), else 0. */
static int of_hex(const char *hex, unsigned char b[16])
{
	int i;

	if (!hex || strlen(hex) != 32)
		return 0;
	for (i = 0; i < 16; i++) {
		unsigned x;

		if (sscanf(hex + 2 * i, "%2x", &x) != 1)
			return 0;
		b[i] = (unsigned char)x;
	}
	return 1;
}

/* The batch's 16 bytes (meta 'batch', made at the first eval of the
 * store): every attempt of the study sees the same secret inputs, so golden
 * outputs are computed once per task and case, and a resumed run judges
 * on the inputs the first one did.  want: a plan's, or NULL. */
static int batch_bytes(struct kj_eval_study *st, const char *want, struct kj_error *err)
{
	unsigned char fresh[16];
	char hex[33], have[33];
	const char *offer = NULL;
	int rand_errno = 0, rc;

	/* What is written when the store holds no batch yet: the plan's, or
	 * 16 random bytes. */
	if (want ? of_hex(want, fresh)
		 : getrandom(fresh, sizeof(fresh), 0) == (ssize_t)sizeof(fresh)) {
		hex_of(fresh, hex);
		offer = hex;
	} else if (!want) {
		rand_errno = errno;
	}
	if ((rc = kj_store_batch(st->store, offer, have, err)) != KJ_OK)
		return rc;
	if (!*have)
		return want ? kj_error_set(err, KJ_EINVAL, "the plan's batch '%s' is not 32 hex "
					   "digits", want)
			    : kj_error_set(err, KJ_EINVAL, "getrandom: %s", strerror(rand_errno));
	/* The store holds 32 hex digits (kj_store_batch checks). */
	(void)of_hex(have, st->batch);
	hex_of(st->batch, st->batch_hex);
	if (want && strcmp(st->batch_hex, want) != 0)
		/* A shard's store is of one plan: the batch is the plan's. */
		return kj_error_set(err, KJ_EINVAL, "the store's batch (%s) is not the plan's "
				    "(%s): a store of another plan", st->batch_hex, want);
	return KJ_OK;
}

/* The run's env (docs/store.md): the machine, a shard's place, and what
 * discovery left out ("skipped": the record of a study keeps what it did
 * not judge, and why).  NULL when it cannot be made (the run is recorded
 * without; nothing depends on it). */
static char *run_env(const struct kj_config *cfg, const struct kj_eval_study_opts *o,
		     const json_t *skipped)
{
	const struct {
		const char *name, *value;
	} slurm_vars[] = { { "SLURM_JOB_ID", cfg->slurm.job_id },
			   { "SLURM_ARRAY_JOB_ID", cfg->slurm.array_job_id },
			   { "SLURM_ARRAY_TASK_ID", cfg->slurm.array_task_id },
			   { "SLURM_RESTART_COUNT", cfg->slurm.restart_count },
			   { "SLURMD_NODENAME", cfg->slurm.nodename },
			   { "SLURM_CLUSTER_NAME", cfg->slurm.cluster_name } };
	char host[256] = "";
	json_t *env;
	char *text;
	struct kj_error err;
	size_t i;

	gethostname(host, sizeof(host) - 1);
	env = json_pack("{s:s, s:I, s:s, s:s}", "hostname", host, "cpus",
			(json_int_t)sysconf(_SC_NPROCESSORS_ONLN), "kjudge", KJ_VERSION, "gpus",
			o->gpus ? o->gpus : "");
	/* A shard says which, of which plan, and where Slurm ran it. */
	if (env && o->shard)
		json_object_set_new(env, "shard", json_string(o->shard));
	if (env && o->plan)
		json_object_set_new(env, "plan", json_string(o->plan->id));
	for (i = 0; env && o->shard && i < sizeof(slurm_vars) / sizeof(slurm_vars[0]); i++)
		if (slurm_vars[i].value)
			json_object_set_new(env, slurm_vars[i].name,
					    json_string(slurm_vars[i].value));
	if (env && json_array_size(skipped) &&
	    json_object_set_new(env, "skipped", json_deep_copy(skipped)) != 0) {
		json_decref(env);
		return NULL;
	}
	text = env ? kj_json_text(env, JSON_COMPACT, &err) : NULL;
	json_decref(env);
	return text;
}

int kj_eval_task_row(const struct kj_eval_task *t, struct kj_store_task *r,
		     struct kj_error *err)
{
	memset(r, 0, sizeof(*r));
	r->source = kj__read_file(t->path, 64u << 20, &r->source_len, err);
	if (r->source && t->cases_path)
		r->cases = kj__read_file(t->cases_path, 64u << 20, &r->cases_len, err);
	if (!r->source || (t->cases_path && !r->cases)) {
		kj_eval_task_row_release(r);
		return err->code ? err->code : KJ_EIO;
	}
	r->key = t->key;
	r->name = t->name;
	r->path = t->rel;
	r->level = t->level;
	r->problem = t->problem;
	r->sha256 = t->task_sha256;
	r->cases_sha256 = t->cases_sha256;
	return KJ_OK;
}

void kj_eval_task_row_release(struct kj_store_task *r)
{
	free((char *)(uintptr_t)r->source);
	free((char *)(uintptr_t)r->cases);
	r->source = r->cases = NULL;
}

/* The run's row, the suite's tasks and which tasks the run's suite holds:
 * one transaction, after every file of the suite was read (a file that
 * cannot be read leaves nothing written). */
static int record_run(struct kj_eval_study *st, const struct kj_config *cfg,
		      const struct kj_eval_set *set, const struct kj_eval_study_opts *o,
		      struct kj_error *err)
{
	json_t *argj = json_array();
	char *args_text = NULL, *env_text = NULL;
	struct kj_store_task *rows;
	size_t i;
	int rc = KJ_OK, k;

	for (k = 0; argj && k < o->argc; k++)
		if (json_array_append_new(argj, json_string(o->argv[k])) != 0)
			break;
	rows = calloc(set->n_tasks ? set->n_tasks : 1, sizeof(*rows));
	if (!rows || !argj || !(args_text = kj_json_text(argj, JSON_COMPACT, err))) {
		json_decref(argj);
		free(rows);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	json_decref(argj);
	for (i = 0; i < set->n_tasks && rc == KJ_OK; i++)
		rc = kj_eval_task_row(&set->tasks[i], &rows[i], err);
	if (rc == KJ_OK) {
		struct kj_store_run run = {
			.judge_version = KJ_VERSION, .command = args_text, .suite = o->suite,
			.candidates = o->cands, .settings = o->settings_text,
		};

		env_text = run_env(cfg, o, set->problems);
		run.env = env_text;
		rc = kj_store_run_begin(st->store, &run, rows, set->n_tasks, &st->run_id, err);
	}
	for (i = 0; i < set->n_tasks; i++)
		kj_eval_task_row_release(&rows[i]);
	free(rows);
	free(env_text);
	free(args_text);
	return rc;
}

/* What the store holds of an attempt: 0 nothing or running (to run), 1
 * done, 2 done as a judge error; -1 on error, err filled.  The verdict of
 * an earlier run counts in the study's counts. */
static int attempt_state(struct kj_eval_study *st, const char *key, struct kj_error *err)
{
	struct kj_store_state s;
	int v = 0;

	if (kj_store_attempt_state(st->store, key, &s, err) != KJ_OK)
		return -1;
	if (s.found && strcmp(s.state, "done") == 0)
		v = strcmp(s.status, "judge_error") == 0 ? 2 : 1;
	if (v == 1) {
		if (strcmp(s.status, "pass") == 0) {
			st->counts.passed++;
			st->counts.clean += s.clean;
		} else if (strcmp(s.status, "fail") == 0) {
			st->counts.failed++;
		} else {
			st->counts.errors++;
		}
	}
	return v;
}

int kj_eval_study_begin(struct kj_eval_study *st, const struct kj_config *cfg,
			const struct kj_eval_set *set, const struct kj_eval_study_opts *o,
			struct kj_error *err)
{
	size_t n = set->n_cands ? set->n_cands : 1, i;
	int rc;

	if ((rc = batch_bytes(st, o->plan ? o->plan->batch : NULL, err)) != KJ_OK ||
	    (rc = record_run(st, cfg, set, o, err)) != KJ_OK)
		return rc;
	st->keys = calloc(n, sizeof(*st->keys));
	st->todo = calloc(n, sizeof(*st->todo));
	if (o->shard_k)
		st->in_shard = calloc(n, 1);
	if (!st->keys || !st->todo || (o->shard_k && !st->in_shard))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (i = 0; i < set->n_cands; i++)
		if ((rc = kj_eval_attempt_key(&set->tasks[set->cands[i].task], &set->cands[i],
					      o->device, o->settings_text, st->keys[i], err)) != KJ_OK)
			return rc;
	if (o->shard_k &&
	    (rc = kj_eval_shard_select(set, (const char (*)[65])st->keys, o->plan, o->shard_i,
				       o->shard_k, st->in_shard, err)) != KJ_OK)
		return rc;
	for (i = 0; i < set->n_cands; i++) {
		int s;

		if (st->in_shard && !st->in_shard[i])
			continue;
		st->counts.total++;
		if ((s = attempt_state(st, st->keys[i], err)) < 0)
			return err->code;
		if (s == 2 && !o->retry) {
			st->counts.errors++;
			st->counts.judge_errors++;
		}
		if (s == 1 || (s == 2 && !o->retry)) {
			st->counts.done++;
			st->counts.skipped++;
			continue;
		}
		st->todo[st->n_todo++] = i;
	}
	return KJ_OK;
}

int kj_eval_study_end(struct kj_eval_study *st, struct kj_error *err)
{
	return kj_store_run_end(st->store, st->run_id, err);
}

/* --- the batch run ----------------------------------------------------------------------- */

/* What the batch runner's callbacks share. */
struct batch {
	struct kj_eval_run *run;
	const struct kj_eval_study *st;
	const struct kj_eval_run_hooks *h;
	void *ctx;
	const size_t *todo;
	size_t n_todo, next;
	/* The attempts whose device's memory ran out while others shared it
	 * (KJ_EDEVMEM): judged again, one at a time, after the others. */
	size_t *alone;
	size_t n_alone;
	double last_publish;
};

static int batch_next(void *ctx, size_t *cand)
{
	struct batch *b = ctx;

	if (b->next >= b->n_todo)
		return 0;
	*cand = b->todo[b->next++];
	return 1;
}

/* In the child: judge one attempt. */
static void batch_judge(void *ctx, size_t cand, const char *device, void *warm,
			struct kj_eval_result *r)
{
	struct batch *b = ctx;
	struct kj_eval_run *run = b->run;
	struct kj_error err;

	(void)warm;
	if (b->h->child)
		b->h->child(b->ctx);
	run->slot.device = device;
	r->code = kj_eval_attempt(run->cfg, run->s, &run->slot, run->set, cand,
				  b->st->keys[cand], &r->outcome, &err);
	if (r->code != KJ_OK)
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
}

static void batch_start_failed(void *ctx, size_t cand, const char *why)
{
	struct batch *b = ctx;

	(void)cand;
	b->run->start_failed = 1;
	b->h->start_failed(b->ctx, why);
}

static void batch_tick(void *ctx)
{
	struct batch *b = ctx;

	if (b->h->tick)
		b->h->tick(b->ctx);
}

static int batch_finished(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct batch *b = ctx;
	struct kj_eval_run *run = b->run;
	struct kj_error err;

	if (r && r->code == KJ_ENODEVICE) {
		/* The device is not there: the machine's fault, for the whole
		 * batch; the attempt stays running, for a next run on a
		 * machine that has it. */
		snprintf(run->no_device, sizeof(run->no_device), "%s", r->error);
		return 1;
	}
	if (r && r->code == KJ_EDEVMEM && b->alone) {
		/* Nothing charged: the attempt waits for the pass alone. */
		b->alone[b->n_alone++] = cand;
		b->h->aside(b->ctx, cand, r->error);
		return 0;
	}
	b->h->done(b->ctx, cand, r, status);
	if (run->publish_dir && kj__now_s() - b->last_publish >= run->cfg->publish_s) {
		if (kj_eval_shard_publish(b->st->store, run->publish_dir, run->shard_i, &err) !=
		    KJ_OK)
			b->h->warn(b->ctx, err.msg);
		b->last_publish = kj__now_s();
	}
	return 0;
}

int kj_eval_study_run(const struct kj_eval_study *st, struct kj_eval_run *run,
		      const struct kj_eval_run_hooks *h, void *ctx, struct kj_error *err)
{
	static const struct kj_eval_pool_ops ops = { .next = batch_next, .judge = batch_judge,
						     .start_failed = batch_start_failed,
						     .finished = batch_finished,
						     .tick = batch_tick };
	struct kj_eval_pool pool = { .jobs = run->jobs, .devices = run->devices,
				     .n_devices = run->n_devices, .stop = run->stop };
	struct batch b = { .run = run, .st = st, .h = h, .ctx = ctx, .todo = st->todo,
			   .n_todo = st->n_todo };
	int rc;

	run->slot.run_id = st->run_id;
	run->slot.batch = st->batch;
	/* Attempts share a device where there are more at once than devices.
	 * (Without the list, such an attempt is "not judged" and stays
	 * running for the next run.) */
	run->slot.shared = run->jobs > run->n_devices;
	if (run->slot.shared)
		b.alone = calloc(st->n_todo ? st->n_todo : 1, sizeof(*b.alone));
	rc = kj_eval_pool_run(&pool, &ops, &b, err);
	if (rc == KJ_OK && b.n_alone && !*run->stop && !*run->no_device) {
		/* Each again with the device to itself: one attempt at a time. */
		b.todo = b.alone;
		b.n_todo = b.n_alone;
		b.next = 0;
		b.alone = NULL;
		run->slot.shared = 0;
		pool.jobs = 1;
		h->again(ctx, b.n_todo);
		rc = kj_eval_pool_run(&pool, &ops, &b, err);
		b.alone = (size_t *)(uintptr_t)b.todo;
	}
	free(b.alone);
	return rc;
}
