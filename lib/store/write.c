/*
 * write.c - the rows eval writes and the few it reads back (kjudge/store.h,
 * "What eval writes"): the run and its suite, the batch key, an attempt
 * begun, a case and its timing, the verdict, the run's end; the attempt's
 * state and the task's baseline.  The SQL of these tables lives here and
 * nowhere else outside lib/store/.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <sqlite3.h>

#include "kjudge/store.h"
#include "store/store_internal.h"
#include "base/internal.h"
#include "base/banned.h"

/* A statement's binding: each binds only while the ones before it did. */
#define B(expr) do { if (b == SQLITE_OK) b = (expr); } while (0)

/* Text, or NULL for a NULL pointer. */
static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

/* Bytes of text, or NULL for a NULL pointer. */
static int bind_bytes(sqlite3_stmt *st, int i, const char *s, size_t n)
{
	if (!s)
		return sqlite3_bind_null(st, i);
	if (n > 0x7fffffff)
		return SQLITE_TOOBIG;
	return sqlite3_bind_text(st, i, s, (int)n, SQLITE_STATIC);
}

/* A count, or NULL when negative (not given). */
static int bind_count(sqlite3_stmt *st, int i, long long v)
{
	return v >= 0 ? sqlite3_bind_int64(st, i, v) : sqlite3_bind_null(st, i);
}

/* A flag 0/1, or NULL when negative (not run). */
static int bind_flag(sqlite3_stmt *st, int i, int v)
{
	return v >= 0 ? sqlite3_bind_int(st, i, v) : sqlite3_bind_null(st, i);
}

/* A positive finite figure, or NULL for any other. */
static int bind_positive(sqlite3_stmt *st, int i, double v)
{
	return v > 0 && isfinite(v) ? sqlite3_bind_double(st, i, v) : sqlite3_bind_null(st, i);
}

/* Prepare sql into *st: SQLite's code. */
static int prepare(struct kj_store *s, const char *sql, sqlite3_stmt **st)
{
	*st = NULL;
	return sqlite3_prepare_v2(kj__store_db(s), sql, -1, st, NULL);
}

/* Run one prepared statement to its end (b: its preparing and binding)
 * and finalize it; err from the store on failure. */
static int step_done(struct kj_store *s, sqlite3_stmt *st, int b, const char *what,
		     struct kj_error *err)
{
	int rc = b == SQLITE_OK ? sqlite3_step(st) : b;

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_OK)
		return kj__store_fail(kj__store_db(s), rc, err, what);
	return KJ_OK;
}

/* --- the run ---------------------------------------------------------------------------- */

int kj_store_run_begin(struct kj_store *s, const struct kj_store_run *run,
		       const struct kj_store_task *tasks, size_t n, long long *run_id,
		       struct kj_error *err)
{
	sqlite3_stmt *st;
	char when[32];
	size_t i;
	int rc, b;

	*run_id = 0;
	kj__utc_now(when);
	rc = kj__store_begin(s, err);
	if (rc != KJ_OK)
		return rc;
	b = prepare(s, "INSERT INTO runs (started_at, judge_version, command, suite, "
		    "candidates, settings, env) VALUES (?, ?, ?, ?, ?, ?, ?)", &st);
	B(bind_text(st, 1, when));
	B(bind_text(st, 2, run->judge_version));
	B(bind_text(st, 3, run->command));
	B(bind_text(st, 4, run->suite));
	B(bind_text(st, 5, run->candidates));
	B(bind_text(st, 6, run->settings));
	B(bind_text(st, 7, run->env));
	rc = step_done(s, st, b, "the results store: the run", err);
	if (rc == KJ_OK)
		*run_id = sqlite3_last_insert_rowid(kj__store_db(s));
	for (i = 0; rc == KJ_OK && i < n; i++) {
		const struct kj_store_task *t = &tasks[i];

		b = prepare(s, "INSERT OR IGNORE INTO tasks VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", &st);
		B(bind_text(st, 1, t->key));
		B(bind_text(st, 2, t->name));
		B(bind_text(st, 3, t->path));
		B(bind_count(st, 4, t->level));
		B(bind_count(st, 5, t->problem));
		B(bind_text(st, 6, t->sha256));
		B(bind_text(st, 7, t->cases_sha256 && *t->cases_sha256 ? t->cases_sha256 : NULL));
		B(bind_bytes(st, 8, t->source, t->source_len));
		B(bind_bytes(st, 9, t->cases, t->cases_len));
		rc = step_done(s, st, b, "the results store: a task", err);
		if (rc != KJ_OK)
			break;
		b = prepare(s, "INSERT OR IGNORE INTO suite_tasks VALUES (?, ?)", &st);
		B(sqlite3_bind_int64(st, 1, *run_id));
		B(bind_text(st, 2, t->key));
		rc = step_done(s, st, b, "the results store: the suite", err);
	}
	rc = kj__store_commit(s, rc, err);
	if (rc != KJ_OK)
		*run_id = 0;
	return rc;
}

int kj_store_run_end(struct kj_store *s, long long run_id, struct kj_error *err)
{
	sqlite3_stmt *st;
	char when[32];
	int b;

	kj__utc_now(when);
	b = prepare(s, "UPDATE runs SET finished_at = ? WHERE run_id = ?", &st);
	B(bind_text(st, 1, when));
	B(sqlite3_bind_int64(st, 2, run_id));
	return step_done(s, st, b, "the results store: the run's end", err);
}

/* 1 when v is 32 hex digits. */
static int is_batch_hex(const char *v)
{
	return v && strlen(v) == 32 && strspn(v, "0123456789abcdefABCDEF") == 32;
}

int kj_store_batch(struct kj_store *s, const char *fresh, char batch[33], struct kj_error *err)
{
	sqlite3_stmt *st;
	int rc, b, found = 0;

	*batch = '\0';
	rc = kj__store_begin(s, err);
	if (rc != KJ_OK)
		return rc;
	b = prepare(s, "SELECT value FROM meta WHERE key = 'batch'", &st);
	if (b == SQLITE_OK && (b = sqlite3_step(st)) == SQLITE_ROW) {
		const char *v = (const char *)sqlite3_column_text(st, 0);

		/* A value that is not a batch is written over, as a missing one. */
		if (is_batch_hex(v)) {
			memcpy(batch, v, 33);
			found = 1;
		}
		b = SQLITE_DONE;
	}
	rc = step_done(s, st, b, "the results store: the batch key", err);
	if (rc == KJ_OK && !found && is_batch_hex(fresh)) {
		b = prepare(s, "INSERT OR REPLACE INTO meta VALUES ('batch', ?)", &st);
		B(bind_text(st, 1, fresh));
		rc = step_done(s, st, b, "the results store: the batch key", err);
		if (rc == KJ_OK)
			memcpy(batch, fresh, 33);
	}
	rc = kj__store_commit(s, rc, err);
	if (rc != KJ_OK)
		*batch = '\0';
	return rc;
}

/* --- an attempt --------------------------------------------------------------------------- */

int kj_store_attempt_begin(struct kj_store *s, const struct kj_store_attempt *a,
			   struct kj_error *err)
{
	sqlite3_stmt *st;
	char when[32];
	int rc, b;

	kj__utc_now(when);
	rc = kj__store_begin(s, err);
	if (rc != KJ_OK)
		return rc;
	b = prepare(s, "INSERT OR IGNORE INTO candidates VALUES (?, ?)", &st);
	B(bind_text(st, 1, a->cand_sha256));
	B(bind_bytes(st, 2, a->source, a->source_len));
	rc = step_done(s, st, b, "the results store: a candidate", err);
	if (rc == KJ_OK) {
		b = prepare(s, "DELETE FROM case_results WHERE attempt_key = ?1; ", &st);
		B(bind_text(st, 1, a->key));
		rc = step_done(s, st, b, "the results store: earlier cases", err);
	}
	if (rc == KJ_OK) {
		b = prepare(s, "DELETE FROM timings WHERE attempt_key = ?1", &st);
		B(bind_text(st, 1, a->key));
		rc = step_done(s, st, b, "the results store: earlier timings", err);
	}
	if (rc == KJ_OK) {
		b = prepare(s,
			"INSERT OR REPLACE INTO attempts (attempt_key, run_id, task_key, task, model, "
			"attempt, round, cand_sha256, origin, prompt_tokens, completion_tokens, "
			"generation_s, device, state, started_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, "
			"?8, ?9, ?10, ?11, ?12, ?13, 'running', ?14)", &st);
		B(bind_text(st, 1, a->key));
		B(sqlite3_bind_int64(st, 2, a->run_id));
		B(bind_text(st, 3, a->task_key));
		B(bind_text(st, 4, a->task));
		B(bind_text(st, 5, a->model));
		B(bind_text(st, 6, a->attempt));
		B(bind_count(st, 7, a->round));
		B(bind_text(st, 8, a->cand_sha256));
		B(bind_text(st, 9, a->origin));
		B(bind_count(st, 10, a->prompt_tokens));
		B(bind_count(st, 11, a->completion_tokens));
		B(a->generation_s >= 0 ? sqlite3_bind_double(st, 12, a->generation_s)
				       : sqlite3_bind_null(st, 12));
		B(bind_text(st, 13, a->device));
		B(bind_text(st, 14, when));
		rc = step_done(s, st, b, "the results store: the attempt", err);
	}
	return kj__store_commit(s, rc, err);
}

int kj_store_case(struct kj_store *s, const char *attempt_key, const struct kj_store_case *c,
		  const struct kj_store_timing *t, struct kj_error *err)
{
	sqlite3_stmt *st;
	int rc, b;

	rc = kj__store_begin(s, err);
	if (rc == KJ_OK) {
		b = prepare(s, "INSERT OR REPLACE INTO case_results VALUES (?1, ?2, ?3, ?4, ?5, "
			    "?6, ?7, ?8, ?9, ?10)", &st);
		B(bind_text(st, 1, attempt_key));
		B(bind_text(st, 2, c->phase));
		B(sqlite3_bind_int(st, 3, c->case_idx));
		B(bind_text(st, 4, c->params));
		B(bind_text(st, 5, c->status));
		B(bind_text(st, 6, c->error_type));
		B(bind_text(st, 7, c->category));
		B(bind_text(st, 8, c->charged));
		B(bind_text(st, 9, c->message));
		B(bind_text(st, 10, c->record));
		rc = step_done(s, st, b, "the results store: a case", err);
	}
	if (rc == KJ_OK && t) {
		b = prepare(s, "INSERT OR REPLACE INTO timings (attempt_key, case_idx, impl_ms, "
			    "ref_ms, speedup, impl_samples, ref_samples, record, sol_ms) VALUES (?1, "
			    "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", &st);
		B(bind_text(st, 1, attempt_key));
		B(sqlite3_bind_int(st, 2, c->case_idx));
		B(sqlite3_bind_double(st, 3, t->impl_ms));
		B(sqlite3_bind_double(st, 4, t->ref_ms));
		B(bind_positive(st, 5, t->speedup));
		B(sqlite3_bind_int(st, 6, t->impl_samples));
		B(sqlite3_bind_int(st, 7, t->ref_samples));
		B(bind_text(st, 8, c->record));
		B(bind_positive(st, 9, t->sol_ms));
		rc = step_done(s, st, b, "the results store: a timing", err);
	}
	return kj__store_commit(s, rc, err);
}

int kj_store_attempt_done(struct kj_store *s, const char *attempt_key,
			  const struct kj_store_verdict *v, struct kj_error *err)
{
	sqlite3_stmt *st;
	char when[32];
	int rc, b;

	kj__utc_now(when);
	rc = kj__store_begin(s, err);
	if (rc == KJ_OK) {
		b = prepare(s,
			"UPDATE attempts SET state = 'done', status = ?2, clean = ?3, error_type = ?4, "
			"category = ?5, charged = ?6, message = ?7, cases_total = ?8, cases_passed = ?9, "
			"static_ok = ?10, static_msg = ?11, disabled_ok = ?12, disabled_msg = ?13, "
			"profile_ok = ?14, profile_msg = ?15, speedup = ?16, judge_s = ?17, "
			"finished_at = ?18, env = ?19 WHERE attempt_key = ?1", &st);
		B(bind_text(st, 1, attempt_key));
		B(bind_text(st, 2, v->status));
		B(sqlite3_bind_int(st, 3, v->clean));
		B(bind_text(st, 4, v->error_type));
		B(bind_text(st, 5, v->category));
		B(bind_text(st, 6, v->charged));
		B(bind_text(st, 7, v->message));
		B(sqlite3_bind_int(st, 8, v->cases_total));
		B(sqlite3_bind_int(st, 9, v->cases_passed));
		B(bind_flag(st, 10, v->static_ok));
		B(bind_text(st, 11, v->static_msg));
		B(bind_flag(st, 12, v->disabled_ok));
		B(bind_text(st, 13, v->disabled_msg));
		B(bind_flag(st, 14, v->profile_ok));
		B(bind_text(st, 15, v->profile_msg));
		B(v->speedup > 0 ? sqlite3_bind_double(st, 16, v->speedup)
				 : sqlite3_bind_null(st, 16));
		B(sqlite3_bind_double(st, 17, v->judge_s));
		B(bind_text(st, 18, when));
		B(bind_text(st, 19, v->env));
		rc = step_done(s, st, b, "the results store: the verdict", err);
		if (rc == KJ_OK && sqlite3_changes(kj__store_db(s)) != 1)
			rc = kj_error_set(err, KJ_ESTORE, "the results store: the attempt's row is gone");
	}
	return kj__store_commit(s, rc, err);
}

/* --- what eval reads back ------------------------------------------------------------------ */

int kj_store_attempt_state(struct kj_store *s, const char *attempt_key,
			   struct kj_store_state *out, struct kj_error *err)
{
	sqlite3_stmt *st;
	int b;

	memset(out, 0, sizeof(*out));
	b = prepare(s, "SELECT state, status, clean FROM attempts WHERE attempt_key = ?", &st);
	B(bind_text(st, 1, attempt_key));
	if (b == SQLITE_OK && (b = sqlite3_step(st)) == SQLITE_ROW) {
		const char *state = (const char *)sqlite3_column_text(st, 0);
		const char *status = (const char *)sqlite3_column_text(st, 1);

		out->found = 1;
		snprintf(out->state, sizeof(out->state), "%s", state ? state : "");
		snprintf(out->status, sizeof(out->status), "%s", status ? status : "");
		out->clean = sqlite3_column_int(st, 2) != 0;
		b = SQLITE_DONE;
	}
	return step_done(s, st, b, "the results store: an attempt's state", err);
}

int kj_store_baseline(struct kj_store *s, const char *task_key, const char *device,
		      const char *settings, const char *attempt_key, int n, double *ref,
		      struct kj_error *err)
{
	sqlite3_stmt *st;
	int b;

	b = prepare(s,
		"SELECT t.case_idx, json_extract(t.record, '$.timing.ref_judge_ms'), "
		"json_extract(t.record, '$.timing.ref_overhead_ms'), t.ref_ms, "
		"json_extract(t.record, '$.timing.rounds') = 'queued' "
		"FROM timings t JOIN attempts a USING (attempt_key) "
		"JOIN runs r ON r.run_id = a.run_id WHERE a.task_key = ?1 AND a.device = ?2 AND "
		"r.settings = ?3 AND a.attempt_key != ?4 AND t.ref_ms > 0 AND "
		"json_extract(t.record, '$.timing.ref_judge_ms') > 0 AND "
		"json_extract(t.record, '$.timing.ref_measured') = 1 "
		"ORDER BY a.state = 'done', a.finished_at DESC, a.attempt_key DESC", &st);
	B(bind_text(st, 1, task_key));
	B(bind_text(st, 2, device));
	B(bind_text(st, 3, settings));
	B(bind_text(st, 4, attempt_key));
	/* Ordered running attempts first, then the done ones last finished
	 * first: each case keeps the earliest finished measurement, else one
	 * of an attempt still running (its benchmark's rows are committed as
	 * it goes; eval gives up the device between an attempt's benchmark
	 * and its later layers, so the next attempt may time its own before
	 * the first is done: the first candidate's baseline is everyone's). */
	while (b == SQLITE_OK && (b = sqlite3_step(st)) == SQLITE_ROW) {
		int k = sqlite3_column_int(st, 0) - 1;

		if (k >= 0 && k < n) {
			ref[k] = sqlite3_column_double(st, 1);
			ref[n + k] = sqlite3_column_double(st, 2);
			ref[2 * n + k] = sqlite3_column_double(st, 3);
			ref[3 * n + k] = sqlite3_column_int(st, 4) == 1;
		}
		b = SQLITE_OK;
	}
	return step_done(s, st, b, "the results store: the baseline", err);
}

#undef B
