/*
 * serve.c - what `kjudge serve` keeps in the store (kjudge/store.h, "What
 * serve writes"): its requests, one row each in serve_requests, from the
 * moment one is accepted to its end, and the result it answers, read from
 * the attempt's row eval's judging wrote.  The SQL of these rows lives here
 * and nowhere else outside lib/store/.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "kjudge/store.h"
#include "store/store_internal.h"
#include "base/internal.h"
#include "base/json.h"
#include "base/banned.h"

/* jansson's, through base/json.c's guards (a failed allocation is a NULL). */
static json_t *loadb(const char *b, size_t n, size_t flags, json_error_t *je)
{
	int oom;

	return kj__json_loadb(b, n, flags, je, &oom);
}

/* The table of the server's requests (docs/serve.md, "The store"): made
 * when a server first opens the store, so a store eval alone wrote keeps
 * the schema docs/store.md gives it. */
static const char serve_sql[] =
	"CREATE TABLE IF NOT EXISTS serve_requests (\n"
	"	seq          INTEGER PRIMARY KEY,\n"
	"	eval_id      TEXT NOT NULL UNIQUE,\n"
	"	model        TEXT NOT NULL,\n"
	"	attempt      TEXT NOT NULL,\n"
	"	mode         TEXT NOT NULL,\n"
	"	options      TEXT,\n"
	"	task_key     TEXT NOT NULL,\n"
	"	task_name    TEXT NOT NULL,\n"
	"	by_name      INTEGER NOT NULL,\n"
	"	source       TEXT NOT NULL,\n"
	"	attempt_key  TEXT NOT NULL,\n"
	"	deadline_s   REAL,\n"
	"	state        TEXT NOT NULL CHECK (state IN ('queued', 'running', 'done', "
	"'cancelled')),\n"
	"	outcome      TEXT,\n"
	"	submitted_at TEXT NOT NULL,\n"
	"	finished_at  TEXT\n"
	");\n"
	"CREATE INDEX IF NOT EXISTS serve_by_attempt ON serve_requests (attempt_key);\n";

#define B(expr) do { if (b == SQLITE_OK) b = (expr); } while (0)

static int bind_text(sqlite3_stmt *st, int i, const char *s)
{
	return s ? sqlite3_bind_text(st, i, s, -1, SQLITE_TRANSIENT) : sqlite3_bind_null(st, i);
}

/* Run one statement (prepared and bound while b is SQLITE_OK) to its end. */
static int run(struct kj_store *s, sqlite3_stmt *st, int b, const char *what,
	       struct kj_error *err)
{
	int rc = b == SQLITE_OK ? sqlite3_step(st) : b;

	sqlite3_finalize(st);
	if (rc != SQLITE_DONE && rc != SQLITE_ROW && rc != SQLITE_OK)
		return kj__store_fail(kj__store_db(s), rc, err, what);
	return KJ_OK;
}

static int prepare(struct kj_store *s, const char *sql, sqlite3_stmt **st)
{
	*st = NULL;
	return sqlite3_prepare_v2(kj__store_db(s), sql, -1, st, NULL);
}

int kj_store_serve_open(struct kj_store *s, long long run_id, struct kj_error *err)
{
	sqlite3_stmt *st;
	int rc = kj_store_exec(s, serve_sql, err), b;

	if (rc != KJ_OK)
		return rc;
	rc = kj__store_begin(s, err);
	if (rc != KJ_OK)
		return rc;
	/* A server killed while judging left those running: they are judged
	 * again, whole (the attempt's rows are replaced when it begins). */
	b = prepare(s, "UPDATE serve_requests SET state = 'queued' WHERE state = 'running'", &st);
	rc = run(s, st, b, "serve: the requests left running", err);
	/* The run's suite holds every task a request names, so that report
	 * counts them (a server's run is the store's latest). */
	if (rc == KJ_OK) {
		b = prepare(s, "INSERT OR IGNORE INTO suite_tasks (run_id, task_key) SELECT DISTINCT "
			    "?, task_key FROM serve_requests", &st);
		B(sqlite3_bind_int64(st, 1, run_id));
		rc = run(s, st, b, "serve: the run's tasks", err);
	}
	return kj__store_commit(s, rc, err);
}

/* The id of the request whose column col is val (not a cancelled one,
 * for the attempt's key) into id, or "" when none. */
static int find(struct kj_store *s, const char *sql, const char *val, char *id, size_t size,
		struct kj_error *err)
{
	sqlite3_stmt *st;
	int b = prepare(s, sql, &st), rc;

	*id = '\0';
	B(bind_text(st, 1, val));
	rc = b == SQLITE_OK ? sqlite3_step(st) : b;
	if (rc == SQLITE_ROW) {
		snprintf(id, size, "%s", (const char *)sqlite3_column_text(st, 0));
		rc = SQLITE_DONE;
	}
	return run(s, st, rc == SQLITE_DONE ? SQLITE_OK : rc, "serve: a request", err);
}

int kj_store_serve_submit(struct kj_store *s, long long run_id, const struct kj_store_task *task,
			  const struct kj_store_serve_req *r, char *id, size_t size,
			  struct kj_error *err)
{
	sqlite3_stmt *st;
	int rc = kj__store_begin(s, err), b;

	if (rc != KJ_OK)
		return rc;
	/* The same id, or the same attempt (task, candidate, model, label and
	 * settings), is the same evaluation. */
	rc = find(s, "SELECT eval_id FROM serve_requests WHERE eval_id = ?", r->id, id, size, err);
	if (rc == KJ_OK && !*id)
		rc = find(s, "SELECT eval_id FROM serve_requests WHERE attempt_key = ? AND state "
			  "<> 'cancelled' ORDER BY seq LIMIT 1", r->attempt_key, id, size, err);
	if (rc != KJ_OK || *id)
		return kj__store_commit(s, rc, err);
	if (task) {
		b = prepare(s, "INSERT OR IGNORE INTO tasks (task_key, name, path, level, problem, "
			    "task_sha256, cases_sha256, source, cases_json) VALUES "
			    "(?, ?, ?, NULL, NULL, ?, ?, ?, ?)", &st);
		B(bind_text(st, 1, task->key));
		B(bind_text(st, 2, task->name));
		B(bind_text(st, 3, task->path));
		B(bind_text(st, 4, task->sha256));
		B(bind_text(st, 5, task->cases_sha256 && *task->cases_sha256 ? task->cases_sha256
								       : NULL));
		B(sqlite3_bind_text(st, 6, task->source, (int)task->source_len, SQLITE_STATIC));
		B(task->cases ? sqlite3_bind_text(st, 7, task->cases, (int)task->cases_len,
						  SQLITE_STATIC)
			      : sqlite3_bind_null(st, 7));
		rc = run(s, st, b, "serve: the task", err);
	}
	if (rc == KJ_OK) {
		b = prepare(s, "INSERT OR IGNORE INTO suite_tasks (run_id, task_key) VALUES (?, ?)",
			    &st);
		B(sqlite3_bind_int64(st, 1, run_id));
		B(bind_text(st, 2, r->task_key));
		rc = run(s, st, b, "serve: the run's task", err);
	}
	if (rc == KJ_OK) {
		b = prepare(s, "INSERT INTO serve_requests (eval_id, model, attempt, mode, options, "
			    "task_key, task_name, by_name, source, attempt_key, deadline_s, state, "
			    "submitted_at) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'queued', "
			    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now'))", &st);
		B(bind_text(st, 1, r->id));
		B(bind_text(st, 2, r->model));
		B(bind_text(st, 3, r->attempt));
		B(bind_text(st, 4, r->mode));
		B(bind_text(st, 5, r->options));
		B(bind_text(st, 6, r->task_key));
		B(bind_text(st, 7, r->task_name));
		B(sqlite3_bind_int(st, 8, r->by_name));
		B(r->source_len > 0x7fffffff ? SQLITE_TOOBIG
		  : sqlite3_bind_text(st, 9, r->source, (int)r->source_len, SQLITE_STATIC));
		B(bind_text(st, 10, r->attempt_key));
		B(r->deadline_s > 0 ? sqlite3_bind_double(st, 11, r->deadline_s)
				    : sqlite3_bind_null(st, 11));
		rc = run(s, st, b, "serve: the request", err);
	}
	return kj__store_commit(s, rc, err);
}

/* A column as JSON text (a string), or null. */
static json_t *col_str(sqlite3_stmt *st, int i)
{
	const char *t = (const char *)sqlite3_column_text(st, i);

	return t ? json_stringn(t, (size_t)sqlite3_column_bytes(st, i)) : json_null();
}

static const char request_cols[] =
	"SELECT r.seq, r.eval_id, r.model, r.attempt, r.mode, r.options, r.task_key, "
	"r.task_name, r.by_name, r.source, r.attempt_key, r.deadline_s, r.state, r.outcome, "
	"r.submitted_at, r.finished_at, t.source, t.cases_json FROM serve_requests r LEFT JOIN "
	"tasks t ON t.task_key = r.task_key ";

int kj_store_serve_get(struct kj_store *s, const char *id, long long seq, json_t **out,
		       struct kj_error *err)
{
	static const char *const names[] = { "seq", "id", "model", "attempt", "mode", "options",
					     "task_key", "task_name", "by_name", "source",
					     "attempt_key", "deadline_s", "state", "outcome",
					     "submitted_at", "finished_at", "task_source",
					     "task_cases" };
	char sql[sizeof(request_cols) + 40];
	sqlite3_stmt *st;
	int b, rc;
	size_t i;

	*out = NULL;
	snprintf(sql, sizeof(sql), "%sWHERE %s", request_cols, id ? "r.eval_id = ?" : "r.seq = ?");
	b = prepare(s, sql, &st);
	B(id ? bind_text(st, 1, id) : sqlite3_bind_int64(st, 1, seq));
	rc = b == SQLITE_OK ? sqlite3_step(st) : b;
	if (rc == SQLITE_ROW) {
		json_t *o = json_object();

		for (i = 0; o && i < sizeof(names) / sizeof(*names); i++) {
			json_t *v;
			int t = sqlite3_column_type(st, (int)i);

			if (t == SQLITE_INTEGER)
				v = json_integer(sqlite3_column_int64(st, (int)i));
			else if (t == SQLITE_FLOAT)
				v = json_real(sqlite3_column_double(st, (int)i));
			else
				v = col_str(st, (int)i);
			if (json_object_set_new(o, names[i], v)) {
				json_decref(o);
				o = NULL;
			}
		}
		if (!o) {
			sqlite3_finalize(st);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		*out = o;
		rc = SQLITE_DONE;
	}
	return run(s, st, rc == SQLITE_DONE ? SQLITE_OK : rc, "serve: a request", err);
}

int kj_store_serve_queued(struct kj_store *s, json_t **out, struct kj_error *err)
{
	sqlite3_stmt *st;
	int b = prepare(s, "SELECT seq, model FROM serve_requests WHERE state = 'queued' "
			"ORDER BY seq", &st), rc;
	json_t *list = json_array();

	*out = NULL;
	if (!list) {
		sqlite3_finalize(st);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	while (b == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW)
		if (json_array_append_new(list, json_pack("[I, s]",
				(json_int_t)sqlite3_column_int64(st, 0),
				(const char *)sqlite3_column_text(st, 1)))) {
			b = SQLITE_NOMEM;
			break;
		}
	if (b == SQLITE_OK && rc != SQLITE_DONE)
		b = rc;
	rc = run(s, st, b, "serve: the queue", err);
	if (rc != KJ_OK) {
		json_decref(list);
		return rc;
	}
	*out = list;
	return KJ_OK;
}

int kj_store_serve_set_state(struct kj_store *s, long long seq, const char *from,
			     const char *state, const char *outcome, int *changed,
			     struct kj_error *err)
{
	sqlite3_stmt *st;
	int rc = kj__store_begin(s, err), b;

	if (changed)
		*changed = 0;
	if (rc != KJ_OK)
		return rc;
	b = prepare(s, "UPDATE serve_requests SET state = ?, outcome = coalesce(?, outcome), "
		    "finished_at = CASE WHEN ? IN ('done', 'cancelled') THEN "
		    "strftime('%Y-%m-%dT%H:%M:%fZ', 'now') END WHERE seq = ? AND "
		    "(? IS NULL OR state = ?)", &st);
	B(bind_text(st, 1, state));
	B(bind_text(st, 2, outcome));
	B(bind_text(st, 3, state));
	B(sqlite3_bind_int64(st, 4, seq));
	B(bind_text(st, 5, from));
	B(bind_text(st, 6, from));
	rc = run(s, st, b, "serve: a request's state", err);
	if (rc == KJ_OK && changed)
		*changed = sqlite3_changes(kj__store_db(s)) > 0;
	return kj__store_commit(s, rc, err);
}

/* A case's timing fields that a client may see: the latencies, their
 * interval and the speedup; nothing of the inputs (their seeds). */
static json_t *timing_of(const char *record, long long idx)
{
	static const char *const keep[] = { "ref_judge_ms", "impl_judge_ms", "ref_median_ms",
					    "impl_median_ms", "ref_overhead_ms", "ref_samples",
					    "impl_samples", "judge_speedup", "judge_speedup_hi",
					    "speedup_bounded", "speedup", "timer" };
	json_t *rec = record ? loadb(record, strlen(record), 0, NULL) : NULL;
	json_t *t = json_object_get(rec, "timing"), *o = json_pack("{s:I}", "case_idx",
								    (json_int_t)idx);
	size_t i;

	for (i = 0; o && json_is_object(t) && i < sizeof(keep) / sizeof(*keep); i++) {
		json_t *v = json_object_get(t, keep[i]);

		if (v && json_object_set(o, keep[i], v)) {
			json_decref(o);
			o = NULL;
		}
	}
	json_decref(rec);
	return o;
}

int kj_store_serve_result(struct kj_store *s, const char *attempt_key, json_t **out,
			  struct kj_error *err)
{
	static const char *const names[] = { "state", "status", "clean", "error_type", "category",
					     "charged", "message", "cases_total", "cases_passed",
					     "speedup", "judge_s", "device", "static_ok",
					     "static_msg", "disabled_ok", "disabled_msg",
					     "profile_ok", "profile_msg" };
	sqlite3_stmt *st;
	json_t *o = NULL, *cases;
	int b = prepare(s, "SELECT state, status, clean, error_type, category, charged, message, "
			"cases_total, cases_passed, speedup, judge_s, device, static_ok, static_msg, "
			"disabled_ok, disabled_msg, profile_ok, profile_msg FROM attempts WHERE "
			"attempt_key = ?", &st), rc;
	size_t i;

	*out = NULL;
	B(bind_text(st, 1, attempt_key));
	rc = b == SQLITE_OK ? sqlite3_step(st) : b;
	if (rc == SQLITE_ROW) {
		o = json_object();
		for (i = 0; o && i < sizeof(names) / sizeof(*names); i++) {
			int t = sqlite3_column_type(st, (int)i);
			json_t *v = t == SQLITE_INTEGER ? json_integer(sqlite3_column_int64(st, (int)i))
				    : t == SQLITE_FLOAT ? json_real(sqlite3_column_double(st, (int)i))
				    : col_str(st, (int)i);

			if (json_object_set_new(o, names[i], v)) {
				json_decref(o);
				o = NULL;
			}
		}
		rc = o ? SQLITE_DONE : SQLITE_NOMEM;
	}
	rc = run(s, st, rc == SQLITE_DONE ? SQLITE_OK : rc, "serve: an attempt", err);
	if (rc != KJ_OK || !o) {
		json_decref(o);
		return rc;
	}
	/* The timed cases, each side's latencies. */
	cases = json_array();
	b = prepare(s, "SELECT case_idx, record FROM case_results WHERE attempt_key = ? AND "
		    "phase = 'benchmark' ORDER BY case_idx", &st);
	B(bind_text(st, 1, attempt_key));
	while (b == SQLITE_OK && cases && (rc = sqlite3_step(st)) == SQLITE_ROW)
		if (json_array_append_new(cases, timing_of((const char *)sqlite3_column_text(st, 1),
							   sqlite3_column_int64(st, 0))))
			b = SQLITE_NOMEM;
	if (b == SQLITE_OK && rc != SQLITE_DONE && rc != SQLITE_ROW)
		b = rc;
	if (!cases)
		b = SQLITE_NOMEM;
	rc = run(s, st, b, "serve: an attempt's timings", err);
	if (rc != KJ_OK || json_object_set_new(o, "timings", cases)) {
		json_decref(o);
		return rc != KJ_OK ? rc : kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	*out = o;
	return KJ_OK;
}
