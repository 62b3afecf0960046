/*
 * audit.c - the store's record of each task's audit (kjudge/store.h, "A
 * task's audit"; the tables are schema.sql's task_audits and
 * audit_canaries, docs/store.md): the tables made in a store of an older
 * schema, an audit written and looked up, the rows carried by a merge,
 * and the latest audit of each task of a run read for the metrics.
 *
 * The store only keeps what the audit (lib/audit/) established: it never
 * makes a verdict of its own.  A row that holds a value no judge writes
 * (check.c's checks of these tables) is refused by a merge and read by
 * nobody: a task whose audit cannot be read is one without an audit.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "kjudge/store.h"
#include "store/store_internal.h"
#include "base/json.h"
#include "base/text.h"
#include "base/banned.h"

extern const char kj__store_schema[];

/* The part of schema.sql that version 4 added: from its marker to the
 * next version's marker or the end (one text for a new store and for an
 * older one brought up to date). */
#define MARK "-- schema 4:"
#define NEXT_MARK "\n-- schema "

int kj__store_audit_upgrade(sqlite3 *db, struct kj_error *err)
{
	const char *from = strstr(kj__store_schema, MARK), *to;
	char *sql;
	int rc;

	if (!from)
		return kj_error_set(err, KJ_ESTORE, "the store's schema lacks its audit tables");
	to = strstr(from + strlen(MARK), NEXT_MARK);
	sql = to ? strndup(from, (size_t)(to - from)) : strdup(from);
	if (!sql)
		return kj_error_set(err, KJ_ENOMEM, "the store's audit tables: out of memory");
	rc = sqlite3_exec(db, sql, NULL, NULL, NULL);
	free(sql);
	return rc == SQLITE_OK ? KJ_OK : kj__store_fail(db, rc, err, "the store's audit tables");
}

int kj__store_has_audits(sqlite3 *db, const char *schema)
{
	char sql[160];
	sqlite3_stmt *st = NULL;
	int found = 0;

	snprintf(sql, sizeof(sql), "SELECT 1 FROM \"%s\".sqlite_schema WHERE type = 'table' AND "
		 "name = 'task_audits'", schema);
	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) == SQLITE_OK)
		found = sqlite3_step(st) == SQLITE_ROW;
	sqlite3_finalize(st);
	return found;
}

int kj_store_audit_put(struct kj_store *s, const struct kj_store_audit *a, struct kj_error *err)
{
	sqlite3 *db = kj__store_db(s);
	sqlite3_stmt *del = NULL, *ins = NULL, *can = NULL;
	size_t i;
	int rc = kj__store_begin(s, err), b;

	if (rc != KJ_OK)
		return rc;
	b = sqlite3_prepare_v2(db, "DELETE FROM audit_canaries WHERE task_key = ?1 AND "
			       "audit_key = ?2", -1, &del, NULL);
	if (b == SQLITE_OK)
		b = sqlite3_prepare_v2(db, "INSERT OR REPLACE INTO task_audits (task_key, audit_key, "
				       "run_id, verdict, device, reasons, audited_at) VALUES (?1, ?2, "
				       "?3, ?4, ?5, ?6, strftime('%Y-%m-%dT%H:%M:%SZ', 'now'))", -1,
				       &ins, NULL);
	if (b == SQLITE_OK)
		b = sqlite3_prepare_v2(db, "INSERT INTO audit_canaries (task_key, audit_key, canary, "
				       "outcome) VALUES (?1, ?2, ?3, ?4)", -1, &can, NULL);
	if (b == SQLITE_OK)
		b = sqlite3_bind_text(del, 1, a->task_key, -1, SQLITE_STATIC);
	if (b == SQLITE_OK)
		b = sqlite3_bind_text(del, 2, a->audit_key, -1, SQLITE_STATIC);
	if (b == SQLITE_OK && (b = sqlite3_step(del)) == SQLITE_DONE)
		b = SQLITE_OK;
	if (b == SQLITE_OK)
		b = sqlite3_bind_text(ins, 1, a->task_key, -1, SQLITE_STATIC);
	if (b == SQLITE_OK)
		b = sqlite3_bind_text(ins, 2, a->audit_key, -1, SQLITE_STATIC);
	if (b == SQLITE_OK)
		b = a->run_id > 0 ? sqlite3_bind_int64(ins, 3, a->run_id) : sqlite3_bind_null(ins, 3);
	if (b == SQLITE_OK)
		b = sqlite3_bind_text(ins, 4, a->verdict, -1, SQLITE_STATIC);
	if (b == SQLITE_OK)
		b = a->device && *a->device ? sqlite3_bind_text(ins, 5, a->device, -1, SQLITE_STATIC)
					    : sqlite3_bind_null(ins, 5);
	if (b == SQLITE_OK)
		b = sqlite3_bind_text(ins, 6, a->reasons ? a->reasons : "[]", -1, SQLITE_STATIC);
	if (b == SQLITE_OK && (b = sqlite3_step(ins)) == SQLITE_DONE)
		b = SQLITE_OK;
	for (i = 0; b == SQLITE_OK && i < a->n_canaries; i++) {
		sqlite3_reset(can);
		b = sqlite3_bind_text(can, 1, a->task_key, -1, SQLITE_STATIC);
		if (b == SQLITE_OK)
			b = sqlite3_bind_text(can, 2, a->audit_key, -1, SQLITE_STATIC);
		if (b == SQLITE_OK)
			b = sqlite3_bind_text(can, 3, a->canary[i], -1, SQLITE_STATIC);
		if (b == SQLITE_OK)
			b = sqlite3_bind_text(can, 4, a->outcome[i], -1, SQLITE_STATIC);
		if (b == SQLITE_OK && (b = sqlite3_step(can)) == SQLITE_DONE)
			b = SQLITE_OK;
	}
	if (b != SQLITE_OK)
		rc = kj__store_fail(db, b, err, "the store: a task's audit");
	sqlite3_finalize(del);
	sqlite3_finalize(ins);
	sqlite3_finalize(can);
	return kj__store_commit(s, rc, err);
}

int kj_store_audit_get(struct kj_store *s, const char *task_key, const char *audit_key,
		       char verdict[16], struct kj_error *err)
{
	sqlite3 *db = kj__store_db(s);
	sqlite3_stmt *st = NULL;
	char *ok = kj__store_check_sql("task_audits", 0), *sql = NULL;
	int rc, found = 0;

	*verdict = '\0';
	if (!ok || asprintf(&sql, "SELECT verdict FROM task_audits WHERE task_key = ?1 AND "
			    "audit_key = ?2 AND (%s) IS NULL", ok) < 0)
		sql = NULL;
	free(ok);
	if (!sql)
		return kj_error_set(err, KJ_ENOMEM, "the store: out of memory");
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, task_key, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 2, audit_key, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		snprintf(verdict, 16, "%s", (const char *)sqlite3_column_text(st, 0));
		found = 1;
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return kj__store_fail(db, rc, err, "the store: a task's audit");
	return found;
}

/* The first row of schema's audit tables that holds a value no judge
 * writes, said in err (KJ_ESTORE, `src` the store's name); KJ_OK when
 * none does. */
static int check_audits(sqlite3 *db, const char *schema, const char *src, struct kj_error *err)
{
	static const char *const tables[] = { "task_audits", "audit_canaries" };
	size_t i, n;
	int rc = KJ_OK;

	for (i = 0; rc == KJ_OK && i < sizeof(tables) / sizeof(tables[0]); i++) {
		const struct kj__store_check *ck = kj__store_checks(tables[i], &n);
		char *which = kj__store_check_sql(tables[i], 0), *sql = NULL;
		sqlite3_stmt *st = NULL;
		int r;

		if (!which || asprintf(&sql, "SELECT task_key, %s FROM \"%s\".%s WHERE (%s) IS NOT "
				       "NULL LIMIT 1", which, schema, tables[i], which) < 0)
			sql = NULL;
		free(which);
		if (!sql)
			return kj_error_set(err, KJ_ENOMEM, "the store's checks: out of memory");
		r = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
		free(sql);
		if (r == SQLITE_OK && (r = sqlite3_step(st)) == SQLITE_ROW) {
			long long k = sqlite3_column_int64(st, 1);
			char key[80];

			rc = kj_error_set(err, KJ_ESTORE, "'%s': the audit of task %s: %s.%s is not "
					  "%s: a value no judge writes; nothing of this store was "
					  "merged", src,
					  kj__text_brief((const char *)sqlite3_column_text(st, 0), 64,
							 key, sizeof(key)), tables[i],
					  k >= 0 && (size_t)k < n ? ck[k].column : "?",
					  k >= 0 && (size_t)k < n ? ck[k].want : "?");
			r = SQLITE_DONE;
		}
		sqlite3_finalize(st);
		if (rc == KJ_OK && r != SQLITE_DONE)
			rc = kj__store_fail(db, r, err, src);
	}
	return rc;
}

int kj__store_audit_merge(sqlite3 *db, const char *src, struct kj_error *err)
{
	int rc;

	if (!kj__store_has_audits(db, "kj_src"))
		return KJ_OK;
	rc = check_audits(db, "kj_src", src, err);
	if (rc != KJ_OK)
		return rc;
	/* An audit the target could not establish gives way to one the source
	 * did; otherwise the target's stays (the same key: the same audit). */
	rc = sqlite3_exec(db,
		"CREATE TEMP TABLE IF NOT EXISTS kj_audit_take (task_key TEXT, audit_key TEXT, "
		"PRIMARY KEY (task_key, audit_key));"
		"DELETE FROM temp.kj_audit_take;"
		"INSERT INTO temp.kj_audit_take SELECT s.task_key, s.audit_key FROM "
		"kj_src.task_audits s LEFT JOIN main.task_audits m USING (task_key, audit_key) "
		"WHERE m.task_key IS NULL OR (m.verdict = 'not_proven' AND s.verdict != "
		"'not_proven');"
		"DELETE FROM main.audit_canaries WHERE (task_key, audit_key) IN "
		"(SELECT task_key, audit_key FROM temp.kj_audit_take);"
		"DELETE FROM main.task_audits WHERE (task_key, audit_key) IN "
		"(SELECT task_key, audit_key FROM temp.kj_audit_take);"
		"INSERT INTO main.task_audits (task_key, audit_key, run_id, verdict, device, "
		"reasons, audited_at) SELECT s.task_key, s.audit_key, m.dst, s.verdict, s.device, "
		"s.reasons, s.audited_at FROM kj_src.task_audits s JOIN temp.kj_audit_take t "
		"USING (task_key, audit_key) LEFT JOIN temp.kj_runmap m ON m.src = s.run_id;"
		"INSERT INTO main.audit_canaries (task_key, audit_key, canary, outcome) SELECT "
		"s.task_key, s.audit_key, s.canary, s.outcome FROM kj_src.audit_canaries s JOIN "
		"temp.kj_audit_take t USING (task_key, audit_key);"
		"DELETE FROM temp.kj_audit_take;", NULL, NULL, NULL);
	return rc == SQLITE_OK ? KJ_OK : kj__store_fail(db, rc, err, "merge: the tasks' audits");
}

int kj__store_audits_of_run(sqlite3 *db, long long run_id, json_t **out, struct kj_error *err)
{
	char *ok_a = kj__store_check_sql("task_audits", 0);
	char *ok_c = kj__store_check_sql("audit_canaries", 0), *sql = NULL;
	sqlite3_stmt *st = NULL;
	json_t *list = json_object();
	int rc;

	*out = NULL;
	/* The latest valid audit of each task of the run's suite, with its
	 * valid canaries as one JSON object. */
	if (!ok_a || !ok_c ||
	    asprintf(&sql, "WITH a AS (SELECT *, row_number() OVER (PARTITION BY task_key "
		     "ORDER BY audited_at DESC, audit_key DESC) AS rn FROM task_audits WHERE (%s) "
		     "IS NULL AND task_key IN (SELECT task_key FROM suite_tasks WHERE run_id = ?1)) "
		     "SELECT a.task_key, a.verdict, a.reasons, (SELECT json_group_object(c.canary, "
		     "c.outcome) FROM audit_canaries c WHERE c.task_key = a.task_key AND "
		     "c.audit_key = a.audit_key AND (%s) IS NULL), a.device FROM a WHERE rn = 1",
		     ok_a, ok_c) < 0)
		sql = NULL;
	free(ok_a);
	free(ok_c);
	if (!sql || !list) {
		free(sql);
		json_decref(list);
		return kj_error_set(err, KJ_ENOMEM, "metrics: out of memory");
	}
	rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);
	free(sql);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, run_id);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const char *key = (const char *)sqlite3_column_text(st, 0);
		const char *reasons = (const char *)sqlite3_column_text(st, 2);
		const char *canaries = (const char *)sqlite3_column_text(st, 3);
		const char *device = (const char *)sqlite3_column_text(st, 4);
		json_error_t je;
		int oom = 0;
		json_t *r = reasons ? kj__json_loadb(reasons, strlen(reasons), 0, &je, &oom) : NULL;
		json_t *c = canaries ? kj__json_loadb(canaries, strlen(canaries), 0, &je, &oom)
				     : NULL;
		json_t *o = json_pack("{s:s, s:o, s:o, s:s?}", "verdict",
				      (const char *)sqlite3_column_text(st, 1), "reasons",
				      json_is_array(r) ? r : json_array(), "canaries",
				      json_is_object(c) ? c : json_object(), "device", device);

		if (!json_is_array(r))
			json_decref(r);
		if (!json_is_object(c))
			json_decref(c);
		rc = key && o && json_object_set_new(list, key, o) == 0 ? SQLITE_OK : SQLITE_NOMEM;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE) {
		json_decref(list);
		return kj__store_fail(db, rc, err, "metrics: the tasks' audits");
	}
	*out = list;
	return KJ_OK;
}
