/*
 * dispatch.c - the server's dispatcher (kjudge/serve.h): eval's batch
 * runner fed from the fair queue, the judging child over eval's attempt,
 * and what ends an evaluation (its row, the metrics, the long polls woken).
 * Runs in the thread of kj_serve_run; the child is a fork of it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "serve/serve_internal.h"
#include "eval/eval_internal.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/internal.h"
#include "base/json.h"
#include "base/banned.h"

/* jansson's, through base/json.c's guards (a failed allocation is a NULL). */
static char *dumps(const json_t *v, size_t flags)
{
	int oom;

	return kj__json_dumps(v, flags, &oom);
}

/* --- the dispatcher ----------------------------------------------------------------------- */

/* A request that will not be judged (its deadline passed in the queue):
 * its row ended with why (under mu). */
static void expire(struct kj_serve *s, long long seq)
{
	struct kj_error err;
	json_t *o = json_pack("{s:s, s:s}", "status", "expired", "message",
			      "its deadline_s passed before it was judged");
	char *why = o ? dumps(o, JSON_COMPACT) : NULL;

	json_decref(o);
	kj_store_serve_set_state(s->store, seq, "queued", "cancelled", why ? why : "{}", NULL,
				 &err);
	free(why);
	s->finished[4]++;
	pthread_cond_broadcast(&s->changed);
}

static int next(void *ctx, size_t *cand)
{
	struct kj_serve *s = ctx;
	long long seq;
	int got = -1;

	if (kj__serve_draining(s)) {
		s->draining = 1;
		return 0;
	}
	pthread_mutex_lock(&s->mu);
	/* One that ran out of device memory beside others goes next, alone:
	 * nothing starts while it waits for the running ones, or runs. */
	if (s->alone_seq || kj_serve_queue_depth(s->alone)) {
		int changed = 0;
		struct kj_error err;

		if (!s->alone_seq && s->running == 0 && kj_serve_queue_pop(s->alone, &seq) &&
		    kj_store_serve_set_state(s->store, seq, "queued", "running", NULL, &changed,
					     &err) == KJ_OK && changed) {
			s->alone_seq = seq;
			*cand = (size_t)seq;
			s->running++;
			got = 1;
		}
		pthread_mutex_unlock(&s->mu);
		return got;
	}
	while (got < 0 && kj_serve_queue_pop(s->q, &seq)) {
		struct kj_error err;
		json_t *row = NULL;
		int changed = 0;

		if (kj_store_serve_get(s->store, NULL, seq, &row, &err) != KJ_OK || !row)
			continue;
		{
			json_t *d = json_object_get(row, "deadline_s"), *at;
			char k[32];

			snprintf(k, sizeof(k), "%lld", seq);
			at = json_object_get(s->since, k);
			if (json_is_number(d) && at &&
			    kj__now_s() - json_real_value(at) > json_number_value(d)) {
				expire(s, seq);
				json_decref(row);
				continue;
			}
		}
		json_decref(row);
		if (kj_store_serve_set_state(s->store, seq, "queued", "running", NULL, &changed,
					     &err) == KJ_OK && changed) {
			*cand = (size_t)seq;
			s->running++;
			got = 1;
		}
	}
	pthread_mutex_unlock(&s->mu);
	return got;
}

/*
 * The secret bytes the seeds of request seq are made from: the store's
 * batch for the first epoch, and for epoch e > 0 (e = (seq - 1) / per) the
 * first 16 bytes of HMAC-SHA256(batch, "kjudge serve seed epoch e").  A
 * client that learned something of one epoch's inputs from many verdicts
 * learns nothing of the next's; the golden outputs are made again once per
 * epoch (their cache is keyed by the seeds).  The epoch follows from the
 * request's number, so a request judged again after a restart gets the
 * same seeds.  0, or -1 when the HMAC failed (out is then not to be used).
 */
int kj__serve_epoch_batch(const unsigned char batch[16], long long per, long long seq,
			  unsigned char out[16])
{
	long long e = per > 0 && seq > 0 ? (seq - 1) / per : 0;
	unsigned char d[32];
	char msg[64];
	int n;

	memcpy(out, batch, 16);
	if (e == 0)
		return 0;
	n = snprintf(msg, sizeof(msg), "kjudge serve seed epoch %lld", e);
	if (kj__hmac_sha256(batch, 16, msg, (size_t)n, d) != 0)
		return -1;
	memcpy(out, d, 16);
	return 0;
}

/* In a judging child, once: its own process group (a terminal's Ctrl-C
 * drains the server, it does not interrupt the evaluations the drain lets
 * finish; the server's death still ends this child: the pool's
 * PDEATHSIG), and the command's setup.  0, or -1: the child cannot judge. */
static int child_ready(struct kj_serve *s)
{
	static int done, rc;

	if (!done) {
		done = 1;
		setpgid(0, 0);
		rc = s->o.child_setup && s->o.child_setup() != 0 ? -1 : 0;
	}
	return rc;
}

/* The slot warm workers are started in: the server's work directory,
 * the device. */
static struct kj_eval_slot warm_slot(const struct kj_serve *s, const char *device)
{
	struct kj_eval_slot slot;

	memset(&slot, 0, sizeof(slot));
	slot.work_dir = s->work;
	slot.device = device;
	return slot;
}

/* In a warm child, before its request is known: the workers started. */
static void *prestart(void *ctx, const char *device)
{
	struct kj_serve *s = ctx;
	struct kj_eval_slot slot = warm_slot(s, device);
	struct kj_eval_warm *w = NULL;
	struct kj_error err;

	if (child_ready(s) != 0)
		return NULL;
	/* A start that fails here is the attempt's to report: it starts its
	 * own workers, and fails as it does. */
	if (kj_eval_warm_start(s->o.cfg, &slot, &w, &err) != KJ_OK)
		return NULL;
	return w;
}

/* ... and, once it has waited a second unasked, the kernel layer's pair
 * (nothing without a first one). */
static void prestart_more(void *ctx, void *warm, const char *device)
{
	struct kj_serve *s = ctx;
	struct kj_eval_slot slot = warm_slot(s, device);
	struct kj_error err;

	(void)kj_eval_warm_more(s->o.cfg, &slot, warm, &err);
}

static void release_warm(void *ctx, void *warm)
{
	(void)ctx;
	kj_eval_warm_release(warm);
}

/* In the child: the request's row read, its task found or staged, the
 * attempt judged (with the warm workers, when there are) and committed as
 * eval's. */
static void judge(void *ctx, size_t cand, const char *device, void *warm,
		  struct kj_eval_result *r)
{
	struct kj_serve *s = ctx;
	struct kj_eval_set own, *set = (struct kj_eval_set *)(uintptr_t)s->o.suite;
	struct kj_eval_settings es;
	struct kj_eval_slot slot;
	struct kj_store *store = NULL;
	struct kj_error err;
	json_t *row = NULL;
	char dir[PATH_MAX + 32], origin[300], *settings = NULL, *src;
	unsigned char epoch_batch[16];
	const char *key, *tkey;
	int ti;

	err.code = 0;
	kj_eval_set_init(&own);
	*dir = '\0';
	if (child_ready(s) != 0) {
		r->code = KJ_EINTR;
		snprintf(r->error, sizeof(r->error), "the judging child could not start");
		return;
	}
	r->code = kj_store_open(s->o.db_path, 0, 30000, &store, &err);
	if (r->code == KJ_OK)
		r->code = kj_store_serve_get(store, NULL, (long long)cand, &row, &err);
	if (r->code == KJ_OK && !row)
		r->code = kj_error_set(&err, KJ_ESTORE, "serve: request %zu is gone", cand);
	if (r->code != KJ_OK)
		goto out;
	tkey = json_string_value(json_object_get(row, "task_key"));
	key = json_string_value(json_object_get(row, "attempt_key"));
	if (json_integer_value(json_object_get(row, "by_name"))) {
		ti = kj__serve_task_named(set, json_string_value(json_object_get(row, "task_name")));
	} else {
		json_t *ts = json_object_get(row, "task_source");

		snprintf(dir, sizeof(dir), "%s/judge-%zu", s->work, cand);
		set = &own;
		r->code = kj__serve_stage_task(dir, json_string_value(ts), json_string_length(ts),
				     json_string_value(json_object_get(row, "task_cases")), set,
				     &err);
		ti = r->code == KJ_OK && set->n_tasks == 1 ? 0 : -1;
	}
	if (r->code == KJ_OK && (ti < 0 || strcmp(set->tasks[ti].key, tkey) != 0))
		r->code = kj_error_set(&err, KJ_ESTORE, "serve: the task of request %zu is not "
				       "the one it was accepted with", cand);
	if (r->code != KJ_OK)
		goto out;
	src = strndup(json_string_value(json_object_get(row, "source")),
		      json_string_length(json_object_get(row, "source")));
	snprintf(origin, sizeof(origin), "serve:%s", json_string_value(json_object_get(row, "id")));
	r->code = src ? kj__eval_add_cand(set, ti, json_string_value(json_object_get(row, "model")),
					  json_string_value(json_object_get(row, "attempt")), src,
					  strlen(src), origin, NULL)
		      : KJ_ENOMEM;
	if (r->code == KJ_OK && set->n_cands == 0)
		r->code = kj_error_set(&err, KJ_ESTORE, "serve: the candidate was refused");
	if (r->code != KJ_OK) {
		if (!err.code)
			kj_error_set(&err, r->code, "out of memory");
		goto out;
	}
	kj_serve_settings(s->o.base, json_string_value(json_object_get(row, "mode")),
			  json_string_value(json_object_get(row, "options")), &es);
	settings = kj__serve_settings_text(s, json_string_value(json_object_get(row, "mode")),
				 json_string_value(json_object_get(row, "options")));
	if (!settings) {
		r->code = kj_error_set(&err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	kj_store_close(store);
	store = NULL;
	memset(&slot, 0, sizeof(slot));
	slot.store_path = s->o.db_path;
	slot.run_id = s->run_id;
	slot.work_dir = s->work;
	slot.device = device;
	if (kj__serve_epoch_batch(s->batch, s->o.seed_epoch, (long long)cand, epoch_batch) != 0) {
		r->code = kj_error_set(&err, KJ_ENOMEM, "serve: the seed epoch's key: HMAC-SHA256 "
				       "failed (out of memory)");
		goto out;
	}
	slot.batch = epoch_batch;
	slot.settings_text = settings;
	slot.shared = s->o.jobs > s->o.n_devices && s->alone_seq != (long long)cand;
	slot.warm = warm;
	r->code = kj_eval_attempt(s->o.cfg, &es, &slot, set, set->n_cands - 1, key, &r->outcome,
				  &err);
out:
	if (r->code != KJ_OK)
		snprintf(r->error, sizeof(r->error), "%s", err.msg);
	kj_store_close(store);
	json_decref(row);
	free(settings);
	if (*dir)
		kj__rm_rf(dir);
	kj_eval_set_release(&own);
	kj_eval_warm_release(warm);
}

/* The judging child's pid, for a DELETE to kill; one cancelled before it
 * started is killed now. */
static void started(void *ctx, size_t cand, pid_t pid)
{
	struct kj_serve *s = ctx;
	char k[32];

	snprintf(k, sizeof(k), "%zu", cand);
	pthread_mutex_lock(&s->mu);
	json_object_set_new(s->pids, k, json_integer(pid));
	if (json_object_get(s->cancel, k))
		kj__serve_kill_child(pid);
	pthread_mutex_unlock(&s->mu);
}

static void start_failed(void *ctx, size_t cand, const char *why)
{
	struct kj_serve *s = ctx;
	struct kj_error err;
	char k[32];

	/* Queued again: the next start judges it (one cancelled ends so). */
	snprintf(k, sizeof(k), "%zu", cand);
	pthread_mutex_lock(&s->mu);
	json_object_del(s->pids, k);
	kj_store_serve_set_state(s->store, (long long)cand, "running", "queued", NULL, NULL, &err);
	s->running--;
	pthread_mutex_unlock(&s->mu);
	(void)why;
}

static int finished(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct kj_serve *s = ctx;
	struct kj_error err;
	char *outcome = NULL, k[32];
	json_t *res = NULL, *row = NULL, *at;
	const char *st = "judge_error";
	int i, cancelled;

	snprintf(k, sizeof(k), "%zu", cand);
	pthread_mutex_lock(&s->mu);
	json_object_del(s->pids, k);
	cancelled = json_object_get(s->cancel, k) != NULL;
	json_object_del(s->cancel, k);
	pthread_mutex_unlock(&s->mu);
	if (cancelled && !(r && r->code == KJ_OK)) {
		/* Killed by its client's DELETE: nothing charged, not judged
		 * again (its partial rows stay 'running', which no report
		 * counts). */
		pthread_mutex_lock(&s->mu);
		kj_store_serve_set_state(s->store, (long long)cand, "running", "cancelled",
					 "{\"status\": \"cancelled\", \"charged\": \"nobody\", "
					 "\"message\": \"cancelled by its client while it was being "
					 "judged\"}", NULL, &err);
		s->running--;
		if (s->alone_seq == (long long)cand)
			s->alone_seq = 0;
		s->finished[4]++;
		json_object_del(s->since, k);
		pthread_cond_broadcast(&s->changed);
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	if (r && r->code == KJ_EDEVMEM && s->alone_seq != (long long)cand) {
		/* A side ran out of device memory beside other evaluations:
		 * nothing charged, judged again with the device to itself. */
		pthread_mutex_lock(&s->mu);
		kj_store_serve_set_state(s->store, (long long)cand, "running", "queued", NULL, NULL,
					 &err);
		s->running--;
		if (kj_serve_queue_push(s->alone, (long long)cand, "") != KJ_OK)
			kj_serve_queue_push(s->q, (long long)cand, "");
		pthread_mutex_unlock(&s->mu);
		return 0;
	}
	if (s->alone_seq == (long long)cand)
		s->alone_seq = 0;
	if (!r || r->code != KJ_OK) {
		/* No verdict committed: the evaluation ends as the judge's
		 * error, charged to nobody, with why. */
		char why[KJ_ERROR_MSG_MAX + 64];
		json_t *o;

		if (r)
			snprintf(why, sizeof(why), "%s", r->error);
		else
			snprintf(why, sizeof(why), "the judging process ended without a verdict "
				 "(wait status %d)", status);
		o = json_pack("{s:s, s:b, s:s, s:s, s:s}", "status", "judge_error", "clean", 0,
			      "error_type", "JudgeError", "charged", "judge", "message", why);
		outcome = o ? dumps(o, JSON_COMPACT) : NULL;
		json_decref(o);
	}
	pthread_mutex_lock(&s->mu);
	kj_store_serve_set_state(s->store, (long long)cand, "running", "done",
				 outcome ? outcome : (r && r->code == KJ_OK ? NULL : "{}"), NULL,
				 &err);
	s->running--;
	if (r && r->code == KJ_OK) {
		st = r->outcome.status;
		if (kj_store_serve_get(s->store, NULL, (long long)cand, &row, &err) == KJ_OK && row &&
		    kj_store_serve_result(s->store, json_string_value(json_object_get(row,
						"attempt_key")), &res, &err) == KJ_OK && res) {
			const char *dev = json_string_value(json_object_get(res, "device"));
			double js = json_number_value(json_object_get(res, "judge_s"));

			if (dev)
				json_object_set_new(s->busy, dev, json_real(js +
					json_real_value(json_object_get(s->busy, dev))));
		}
	}
	for (i = 0; i < 4; i++)
		if (strcmp(st, kj__serve_finish_names[i]) == 0)
			s->finished[i]++;
	at = json_object_get(s->since, k);
	if (at) {
		double lat = kj__now_s() - json_real_value(at);

		for (i = 0; i < KJ__SERVE_BUCKETS && lat > kj__serve_buckets[i]; i++)
			;
		s->hist[i]++;
		s->lat_sum += lat;
		json_object_del(s->since, k);
	}
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->mu);
	json_decref(res);
	json_decref(row);
	free(outcome);
	return 0;
}

int kj_serve_run(struct kj_serve *s, const volatile sig_atomic_t *drain, struct kj_error *err)
{
	static const volatile sig_atomic_t never = 0;
	static const struct kj_eval_pool_ops cold = { .next = next, .judge = judge,
						      .start_failed = start_failed,
						      .finished = finished, .started = started };
	static const struct kj_eval_pool_ops warm = { .next = next, .judge = judge,
						      .start_failed = start_failed,
						      .finished = finished, .started = started,
						      .prestart = prestart,
						      .release_warm = release_warm,
						      .prestart_more = prestart_more };
	const struct kj_eval_pool_ops *ops = s->o.warm ? &warm : &cold;
	struct kj_eval_pool pool;
	int rc;

	memset(&pool, 0, sizeof(pool));
	pool.jobs = s->o.jobs;
	pool.devices = s->o.devices;
	pool.n_devices = s->o.n_devices;
	pool.stop = &never;
	s->drain_flag = drain;
	rc = kj_eval_pool_run(&pool, ops, s, err);
	s->draining = 1;
	/* Nothing more will end: a long poll on a queued evaluation answers
	 * now rather than hold the server's exit. */
	pthread_mutex_lock(&s->mu);
	s->closing = 1;
	pthread_cond_broadcast(&s->changed);
	pthread_mutex_unlock(&s->mu);
	return rc;
}
