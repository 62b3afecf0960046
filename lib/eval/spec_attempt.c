/*
 * spec_attempt.c - one attempt of an eval over a spec suite: a translation
 * judged as `kjudge spec verify --candidate` judges it, every row in the
 * store (kjudge/eval.h; the task and its candidates, spec_suite.c).
 *
 * Steps, each committed as it ends:
 *   1. the target's pristine reference verified with its own oracle (once
 *      per batch: the first attempt of the task does it under a lock of the
 *      batch, the others read its verdict); one that fails makes every
 *      attempt of the task a task_error, charged to the task;
 *   2. the translation's files overlaid on the target's source tree, built,
 *      run and verified (lib/spec/verify.c: the sandbox, the build cache,
 *      every strategy);
 *   3. after a pass, whole-program timing: the translation's run command
 *      and the source spec's pristine reference (its own run command and
 *      configuration, timed once per batch), each under the batch's timing
 *      lock so that no two timed runs share the machine; the speedup is the
 *      reference's median over the translation's.
 * A translation is clean when it passes: every strategy of the oracle
 * passed, and there is no static or anti-cheat layer for whole programs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "kjudge/eval.h"
#include "kjudge/spec.h"
#include "kjudge/store.h"
#include "eval/eval_internal.h"
#include "base/fs.h"
#include "base/hash.h"
#include "base/internal.h"
#include "base/json.h"
#include "base/banned.h"

/* A status of spec verify as the store's verdict. */
static void map_status(enum kj_spec_status st, struct kj_eval_outcome *o, const char **charged)
{
	static const struct {
		enum kj_spec_status st;
		const char *status, *category, *charged;
	} map[] = {
		{ KJ_SPEC_PASS, "pass", "", "none" },
		{ KJ_SPEC_BUILD_FAIL, "fail", "build", "candidate" },
		{ KJ_SPEC_RUN_FAIL, "fail", "runtime", "candidate" },
		{ KJ_SPEC_VERIFY_FAIL, "fail", "accuracy", "candidate" },
		{ KJ_SPEC_TIMEOUT, "fail", "timeout", "candidate" },
		{ KJ_SPEC_ERROR, "judge_error", "judge", "judge" },
		{ KJ_SPEC_SKIP, "task_error", "task", "task" },
	};
	size_t i;

	for (i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].st == st) {
			snprintf(o->status, sizeof(o->status), "%s", map[i].status);
			snprintf(o->category, sizeof(o->category), "%s", map[i].category);
			snprintf(o->error_type, sizeof(o->error_type), "%s",
				 st == KJ_SPEC_PASS ? "" : kj_spec_status_name(st));
			*charged = map[i].charged;
			return;
		}
	/* A status the table does not know is never a verdict on anyone. */
	snprintf(o->status, sizeof(o->status), "judge_error");
	snprintf(o->category, sizeof(o->category), "judge");
	snprintf(o->error_type, sizeof(o->error_type), "%s", kj_etype_name(KJ_ET_JUDGE));
	*charged = "judge";
}

/* --- the batch's references ---------------------------------------------------------------- */

/* A reference's verdict and time, shared by the batch's attempts through a
 * small JSON file in the batch's directory. */
struct ref {
	enum kj_spec_status status;
	double median_s;        /* 0: not timed */
	int samples;
	char msg[600];
};

static int ref_read(const char *path, struct ref *r)
{
	json_error_t je;
	int is_oom = 0, k;
	json_t *j = kj__json_load_file(path, 0, &je, &is_oom);
	const char *st;

	if (!j)
		return -1;
	st = json_string_value(json_object_get(j, "status"));
	for (k = 0; st && k < KJ_SPEC_STATUS_COUNT_; k++)
		if (!strcmp(st, kj_spec_status_name((enum kj_spec_status)k)))
			r->status = (enum kj_spec_status)k;
	r->median_s = json_number_value(json_object_get(j, "median_s"));
	r->samples = (int)json_integer_value(json_object_get(j, "samples"));
	snprintf(r->msg, sizeof(r->msg), "%s", json_string_value(json_object_get(j, "message"))
		 ? json_string_value(json_object_get(j, "message")) : "");
	json_decref(j);
	return st ? 0 : -1;
}

/*
 * The pristine reference of spec_file, verified (timed when o->repeats) or
 * read from the batch's file for it: the first attempt to need it does it,
 * under the batch's lock named after it.  Returns KJ_OK with r filled, or
 * the judge's error.
 */
static int reference(const struct kj_eval_slot *slot, const char *root, const char *spec_file,
		     const struct kj_spec_verify_opts *o, const char *what, struct ref *r,
		     struct kj_error *err)
{
	char id[65], name[80], path[PATH_MAX], text[PATH_MAX + 64];
	struct kj_spec s;
	json_t *rec = NULL, *j;
	int fd, rc;

	memset(r, 0, sizeof(*r));
	snprintf(text, sizeof(text), "%s\n%s\n%d\n%d", spec_file, what, o->warmup, o->repeats);
	if (kj__sha256_hex(text, strlen(text), id) != 0)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	snprintf(name, sizeof(name), "ref-%.32s", id);
	snprintf(path, sizeof(path), "%s/%s.json", slot->work_dir, name);
	fd = kj__eval_lock(slot, name, err);
	if (fd < 0)
		return err->code;
	if (ref_read(path, r) == 0) {
		close(fd);
		return KJ_OK;
	}
	rc = kj_spec_load(&s, spec_file, root, err);
	if (rc == KJ_OK) {
		rc = kj_spec_verify(&s, o, &r->status, &rec, err);
		if (rc == KJ_EINVAL || rc == KJ_ENOENT) {
			/* The spec itself is bad (an unknown configuration): the
			 * task's fault. */
			r->status = KJ_SPEC_ERROR;
			snprintf(r->msg, sizeof(r->msg), "%.590s", err->msg);
			rc = KJ_OK;
		}
	} else if (rc == KJ_EINVAL || rc == KJ_ENOENT) {
		r->status = KJ_SPEC_ERROR;
		snprintf(r->msg, sizeof(r->msg), "%.590s", err->msg);
		rc = KJ_OK;
	}
	kj_spec_release(&s);
	if (rc == KJ_OK && rec) {
		const json_t *t = json_object_get(rec, "timing");

		kj_spec_record_why(rec, r->msg, sizeof(r->msg));
		if (r->status == KJ_SPEC_PASS && o->repeats > 0) {
			r->median_s = json_number_value(json_object_get(json_object_get(t, "program"),
									"median_s"));
			r->samples = (int)json_integer_value(json_object_get(t, "repeats"));
			if (json_object_get(t, "error") || !(r->median_s > 0)) {
				r->status = KJ_SPEC_RUN_FAIL;
				snprintf(r->msg, sizeof(r->msg), "timing: %.500s",
					 json_string_value(json_object_get(t, "error")) ?
					 json_string_value(json_object_get(t, "error")) : "no time");
			}
		}
	}
	json_decref(rec);
	if (rc == KJ_OK) {
		j = json_pack("{s:s, s:f, s:i, s:s}", "status", kj_spec_status_name(r->status),
			      "median_s", r->median_s, "samples", r->samples, "message", r->msg);
		int is_oom = 0, out;
		char *dump = j ? kj__json_dumps(j, JSON_COMPACT, &is_oom) : NULL;

		/* Whole or not at all: readers hold the same lock. */
		out = dump ? open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600) : -1;
		if (out < 0 || kj__write_full(out, dump, strlen(dump)) < 0)
			rc = kj_error_set(err, KJ_EIO, "'%s': cannot write the reference's verdict",
					  path);
		if (out >= 0)
			close(out);
		free(dump);
		json_decref(j);
	}
	close(fd);
	return rc;
}

/* --- the store's rows ---------------------------------------------------------------------- */

/* Text, or NULL for "". */
static const char *or_null(const char *s)
{
	return s && *s ? s : NULL;
}

/* The case (the one verification) and, when timed, its timing. */
static int record_case(struct kj_store *store, const char *key, const struct kj_eval_outcome *o,
		       const char *charged, const char *msg, const json_t *rec,
		       double impl_s, const struct ref *src, int samples, struct kj_error *err)
{
	char *text = NULL;
	int rc, is_oom = 0;

	if (rec && !(text = kj__json_dumps(rec, JSON_COMPACT, &is_oom)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	{
		struct kj_store_case row = {
			.phase = "verify", .case_idx = 1, .status = o->status,
			.error_type = o->error_type, .category = or_null(o->category),
			.charged = charged, .message = or_null(msg), .record = or_null(text),
		};
		struct kj_store_timing tm = {
			.impl_ms = impl_s * 1e3, .ref_ms = src->median_s * 1e3,
			.speedup = impl_s > 0 ? src->median_s / impl_s : 0,
			.impl_samples = samples, .ref_samples = src->samples,
		};

		rc = kj_store_case(store, key, &row, impl_s > 0 ? &tm : NULL, err);
	}
	free(text);
	return rc;
}

static int record_done(struct kj_store *store, const char *key, const struct kj_eval_outcome *o,
		       const char *charged, const char *msg, int ran, const json_t *env,
		       struct kj_error *err)
{
	char *env_text = NULL;
	int rc, is_oom = 0;

	if (env && !(env_text = kj__json_dumps(env, JSON_COMPACT, &is_oom)))
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	{
		/* A translation has no anti-cheat layers: their columns stay NULL. */
		struct kj_store_verdict row = {
			.status = o->status, .clean = o->clean,
			.error_type = or_null(o->error_type), .category = or_null(o->category),
			.charged = charged, .message = or_null(msg),
			.cases_total = ran, .cases_passed = !strcmp(o->status, "pass"),
			.static_ok = -1, .disabled_ok = -1, .profile_ok = -1,
			.speedup = o->speedup, .judge_s = o->judge_s, .env = or_null(env_text),
		};

		rc = kj_store_attempt_done(store, key, &row, err);
	}
	free(env_text);
	return rc;
}

/* --- the attempt --------------------------------------------------------------------------- */

/* The translation's files (discovery's list of them) under dir. */
static int write_translation(const struct kj_eval_cand *c, const char *dir, struct kj_error *err)
{
	size_t i;
	int rc = KJ_OK;

	if (!c->n_files)
		return kj_error_set(err, KJ_EINVAL, "the translation holds no file");
	for (i = 0; i < c->n_files; i++) {
		const struct kj_eval_file *f = &c->files[i];
		char path[PATH_MAX], *slash;
		int fd;

		if (snprintf(path, sizeof(path), "%s/%s", dir, f->name) >= (int)sizeof(path)) {
			rc = kj_error_set(err, KJ_EINVAL, "'%s': a name too long", f->name);
			break;
		}
		slash = strrchr(path, '/');
		*slash = '\0';
		if (kj__mkdirs(path, 0700) < 0) {
			rc = kj_error_set(err, KJ_EIO, "'%s': %s", path, strerror(errno));
			break;
		}
		*slash = '/';
		fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
		if (fd < 0 || kj__write_full(fd, f->data, f->len) < 0) {
			rc = kj_error_set(err, KJ_EIO, "'%s': %s", path, strerror(errno));
			if (fd >= 0)
				close(fd);
			break;
		}
		close(fd);
	}
	return rc;
}

int kj__eval_spec_attempt(const struct kj_config *cfg, const struct kj_eval_settings *s,
			  const struct kj_eval_slot *slot, const struct kj_eval_set *set,
			  size_t cand, const char *attempt_key, struct kj_eval_outcome *out,
			  struct kj_error *err)
{
	const struct kj_eval_cand *c = &set->cands[cand];
	const struct kj_eval_task *t = &set->tasks[c->task];
	struct kj_store *store = NULL;
	struct kj_spec_verify_opts o;
	struct kj_spec target;
	struct ref tref, sref;
	enum kj_spec_status st = KJ_SPEC_ERROR;
	json_t *rec = NULL, *env = NULL;
	const char *charged = "none";
	char dir[PATH_MAX], msg[1024] = "";
	double t0 = kj__now_s(), impl_s = 0;
	int rc, ran = 0, samples = 0, lock = -1;

	memset(out, 0, sizeof(*out));
	memset(&sref, 0, sizeof(sref));
	kj_spec_init(&target);
	*dir = '\0';
	rc = kj_store_open(slot->store_path, 0, 30000, &store, err);
	if (rc != KJ_OK)
		return rc;
	rc = kj__eval_record_start(store, attempt_key, t, c, slot, err);
	if (rc != KJ_OK)
		goto out;
	memset(&o, 0, sizeof(o));
	o.cfg = cfg;

	/* 1. The references: the target's, then the source's, timed. */
	rc = reference(slot, t->spec_root, t->spec_target, &o, "target", &tref, err);
	if (rc == KJ_OK && tref.status == KJ_SPEC_PASS && !s->no_benchmark) {
		struct kj_spec_verify_opts to = o;

		to.warmup = s->bench.warmup;
		to.repeats = s->bench.repeats > 0 ? s->bench.repeats : 1;
		lock = kj__eval_lock(slot, "spec-timing", err);
		rc = lock < 0 ? err->code
			      : reference(slot, t->spec_root, t->spec_source, &to, "source", &sref, err);
		if (lock >= 0)
			close(lock);
		lock = -1;
	}
	if (rc != KJ_OK)
		goto judge_error;
	if (tref.status != KJ_SPEC_PASS || (!s->no_benchmark && sref.status != KJ_SPEC_PASS)) {
		int tgt = tref.status != KJ_SPEC_PASS;

		snprintf(out->status, sizeof(out->status), "%s",
			 kj_status_name(kj_etype_status(KJ_ET_BASELINE_FAILED)));
		snprintf(out->error_type, sizeof(out->error_type), "%s",
			 kj_etype_name(KJ_ET_BASELINE_FAILED));
		snprintf(out->category, sizeof(out->category), "%s",
			 kj_category_name(kj_etype_category(KJ_ET_BASELINE_FAILED)));
		charged = kj_charge_name(kj_etype_charge(KJ_ET_BASELINE_FAILED));
		snprintf(msg, sizeof(msg), "the %s spec's own reference does not pass its oracle "
			 "(%s: %.700s); no translation %s it is judged", tgt ? "target" : "source",
			 kj_spec_status_name(tgt ? tref.status : sref.status),
			 tgt ? tref.msg : sref.msg, tgt ? "into" : "from");
		goto done;
	}

	/* 2. The translation, verified. */
	rc = kj__eval_scratch(slot, "s", attempt_key, dir, sizeof(dir), err);
	if (rc != KJ_OK)
		goto judge_error;
	rc = write_translation(c, dir, err);
	if (rc == KJ_OK)
		rc = kj_spec_load(&target, t->spec_target, t->spec_root, err);
	if (rc != KJ_OK)
		goto judge_error;
	o.candidate = dir;
	rc = kj_spec_verify(&target, &o, &st, &rec, err);
	if (rc == KJ_EINVAL || rc == KJ_ENOENT) {
		/* The reference passed with the same options: what is wrong is
		 * the translation's (no file of translation_targets). */
		snprintf(out->status, sizeof(out->status), "%s",
			 kj_status_name(kj_etype_status(KJ_ET_NO_TARGET)));
		snprintf(out->error_type, sizeof(out->error_type), "%s",
			 kj_etype_name(KJ_ET_NO_TARGET));
		snprintf(out->category, sizeof(out->category), "%s",
			 kj_category_name(kj_etype_category(KJ_ET_NO_TARGET)));
		charged = kj_charge_name(kj_etype_charge(KJ_ET_NO_TARGET));
		snprintf(msg, sizeof(msg), "%.1000s", err->msg);
		ran = 1;
		rc = record_case(store, attempt_key, out, charged, msg, NULL, 0, &sref, 0, err);
		if (rc != KJ_OK)
			goto out;
		goto done;
	}
	if (rc != KJ_OK)
		goto judge_error;
	ran = 1;
	map_status(st, out, &charged);
	kj_spec_record_why(rec, msg, sizeof(msg));

	/* 3. Timed, alone, after a pass. */
	if (st == KJ_SPEC_PASS && !s->no_benchmark) {
		struct kj_spec_verify_opts to = o;
		enum kj_spec_status st2 = KJ_SPEC_ERROR;
		json_t *rec2 = NULL;

		to.warmup = s->bench.warmup;
		to.repeats = s->bench.repeats > 0 ? s->bench.repeats : 1;
		lock = kj__eval_lock(slot, "spec-timing", err);
		if (lock < 0)
			goto judge_error;
		rc = kj_spec_verify(&target, &to, &st2, &rec2, err);
		close(lock);
		lock = -1;
		if (rc != KJ_OK)
			goto judge_error;
		if (st2 == KJ_SPEC_PASS) {
			const json_t *tj = json_object_get(rec2, "timing");

			impl_s = json_number_value(json_object_get(json_object_get(tj, "program"),
								   "median_s"));
			samples = (int)json_integer_value(json_object_get(tj, "repeats"));
			json_decref(rec);
			rec = rec2;
			if (impl_s > 0)
				out->speedup = sref.median_s / impl_s;
		} else {
			/* It passed once and not again: not a pass to time. */
			map_status(st2, out, &charged);
			kj_spec_record_why(rec2, msg, sizeof(msg));
			json_decref(rec);
			rec = rec2;
		}
	}
	out->clean = !strcmp(out->status, "pass");
	env = json_pack("{s:s, s:O?, s:O?}", "judge", "spec verify", "limits",
			json_object_get(rec, "limits"), "clock",
			json_object_get(json_object_get(rec, "timing"), "clock"));
	if (!env) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	rc = record_case(store, attempt_key, out, charged, msg, rec, impl_s, &sref, samples, err);
	if (rc != KJ_OK)
		goto out;
	goto done;

judge_error:
	if (rc == KJ_EINTR)
		goto out;
	snprintf(out->status, sizeof(out->status), "judge_error");
	snprintf(out->error_type, sizeof(out->error_type), "%s", kj_etype_name(KJ_ET_JUDGE));
	snprintf(out->category, sizeof(out->category), "judge");
	charged = "judge";
	snprintf(msg, sizeof(msg), "%.1000s", err->msg);
	out->clean = 0;
	out->speedup = 0;
done:
	out->judge_s = kj__now_s() - t0;
	snprintf(out->message, sizeof(out->message), "%s", msg);
	/* Every verdict, a judge error's too, says which node gave it. */
	{
		json_t *full = kj__eval_env(cfg, env);

		json_decref(env);
		env = full;
	}
	rc = env ? record_done(store, attempt_key, out, charged, msg, ran, env, err)
		 : kj_error_set(err, KJ_ENOMEM, "out of memory");
out:
	json_decref(rec);
	json_decref(env);
	kj_spec_release(&target);
	if (*dir)
		kj__rm_rf(dir);
	kj_store_close(store);
	return rc;
}
