/*
 * keys.c - the store's keys (docs/store.md, "Keys"): one definition, used
 * by the judge that writes the rows and by the upgrade that re-keys a store
 * of schema version 2 or older.
 *
 * A task's key names it by its name, its path in the suite and its content
 * key (the SHA-256 of what judging it reads): two tasks with byte-identical
 * files are two operators, with a row, attempts and verdicts each.  Up to
 * schema version 2 the key was the content key alone, so such tasks
 * collapsed into one row and their attempts into one.
 *
 * An attempt's key is the SHA-256 of its task's key, the candidate's
 * source hash, the model and attempt label, the device kind, the judge's
 * version and the settings' text.  Free-form fields are length-prefixed:
 * no two different attempts or tasks spell the same text.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jansson.h>
#include <sqlite3.h>

#include "store/store_internal.h"
#include "base/hash.h"
#include "base/json.h"
#include "base/internal.h"

int kj__store_task_key(const char *name, const char *path, const char *content,
		       char key[65])
{
	size_t n = strlen(name) + strlen(path) + strlen(content) + 96;
	char *text = malloc(n);
	int rc;

	if (!text)
		return -1;
	snprintf(text, n, "kjudge-task-2\n%zu:%s\n%zu:%s\n%s", strlen(name), name, strlen(path),
		 path, content);
	rc = kj__sha256_hex(text, strlen(text), key);
	free(text);
	return rc;
}

int kj__store_attempt_key(const char *task_key, const char *cand_sha256, const char *model,
			  const char *attempt, const char *device_kind, const char *version,
			  const char *settings, char key[65])
{
	size_t n = strlen(task_key) + strlen(cand_sha256) + strlen(model) + strlen(attempt) +
		   strlen(device_kind) + strlen(version) + strlen(settings) + 128;
	char *text = malloc(n);
	int rc;

	if (!text)
		return -1;
	snprintf(text, n, "kjudge-attempt-1\n%s\n%s\n%zu:%s\n%zu:%s\n%s\n%s\n%s", task_key,
		 cand_sha256, strlen(model), model, strlen(attempt), attempt, device_kind, version,
		 settings);
	rc = kj__sha256_hex(text, strlen(text), key);
	free(text);
	return rc;
}

/* --- re-keying a store of version 2 or older --------------------------------------------- */

static const char *col(sqlite3_stmt *st, int i)
{
	const unsigned char *s = sqlite3_column_text(st, i);

	return s ? (const char *)s : "";
}

/* One row (old, new) of a re-keying map through ins: SQLite's code. */
static int map_row(sqlite3_stmt *ins, const char *old, const char *key)
{
	int rc = sqlite3_bind_text(ins, 1, old, -1, SQLITE_TRANSIENT);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(ins, 2, key, -1, SQLITE_TRANSIENT);
	if (rc == SQLITE_OK && (rc = sqlite3_step(ins)) == SQLITE_DONE)
		rc = SQLITE_OK;
	sqlite3_reset(ins);
	return rc;
}

/* temp.kj_rekey_tasks: every task's old key and its key by name. */
static int map_tasks(sqlite3 *db, struct kj_error *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT task_key, name, path FROM main.tasks", -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO temp.kj_rekey_tasks VALUES (?, ?)", -1,
					&ins, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		char key[KJ_SHA256_HEX];

		if (kj__store_task_key(col(sel, 1), col(sel, 2), col(sel, 0), key) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		rc = map_row(ins, col(sel, 0), key);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc == SQLITE_DONE ? KJ_OK : kj__store_fail(db, rc, err, "re-keying the tasks");
}

/*
 * The device kind an attempt's key was made with, as the run's settings say
 * it ("device"), into dev: 1, or 0 when they do not (the attempt is then
 * not re-keyed: its old key cannot be made again, so no new one can be
 * trusted), or -1 when out of memory.
 */
static int settings_device(const char *settings, char *dev, size_t size)
{
	int oom = 0;
	json_t *o = kj__json_loadb(settings, strlen(settings), 0, NULL, &oom);
	const char *d = json_string_value(json_object_get(o, "device"));
	int found = d && strlen(d) < size;

	if (found)
		memcpy(dev, d, strlen(d) + 1);
	json_decref(o);
	return oom ? -1 : found;
}

/*
 * temp.kj_rekey_attempts: the attempts whose old key this judge makes
 * again from their row and their run's version and settings, each with its
 * key under the task's new key.  An attempt whose key it cannot make again
 * keeps its key: it is read as before, and a resume judges it afresh rather
 * than trust a key it cannot check.  So does one whose task row bears
 * another name: two tasks of the same bytes shared one row, and the
 * attempt may be the other task's.
 */
static int map_attempts(sqlite3 *db, struct kj_error *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL;
	int rc;

	rc = sqlite3_prepare_v2(db, "SELECT a.attempt_key, a.task_key, t.new, a.cand_sha256, "
				"a.model, a.attempt, r.judge_version, r.settings FROM main.attempts "
				"a JOIN main.runs r ON r.run_id = a.run_id JOIN temp.kj_rekey_tasks "
				"t ON t.old = a.task_key JOIN main.tasks k ON k.task_key = a.task_key "
				"WHERE k.name = a.task", -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO temp.kj_rekey_attempts VALUES (?, ?)", -1,
					&ins, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		char was[KJ_SHA256_HEX], key[KJ_SHA256_HEX], device[64];
		int found = settings_device(col(sel, 7), device, sizeof(device));

		rc = SQLITE_OK;
		if (found == 0)
			continue;
		if (found < 0 ||
		    kj__store_attempt_key(col(sel, 1), col(sel, 3), col(sel, 4), col(sel, 5),
					  device, col(sel, 6), col(sel, 7), was) < 0 ||
		    kj__store_attempt_key(col(sel, 2), col(sel, 3), col(sel, 4), col(sel, 5),
					  device, col(sel, 6), col(sel, 7), key) < 0) {
			rc = SQLITE_NOMEM;
			break;
		}
		if (strcmp(was, col(sel, 0)) != 0)
			continue;
		rc = map_row(ins, was, key);
	}
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	return rc == SQLITE_DONE ? KJ_OK : kj__store_fail(db, rc, err, "re-keying the attempts");
}

int kj__store_rekey(sqlite3 *db, struct kj_error *err)
{
	int rc;

#define EXEC(sql) \
	(rc = sqlite3_exec(db, sql, NULL, NULL, NULL)) == SQLITE_OK \
		? KJ_OK : kj__store_fail(db, rc, err, "re-keying the store")
	/* The rows reference each other by key: the checks wait for the
	 * commit, when every reference has its new key. */
	rc = EXEC("PRAGMA defer_foreign_keys = ON;"
		  "DROP TABLE IF EXISTS temp.kj_rekey_tasks;"
		  "DROP TABLE IF EXISTS temp.kj_rekey_attempts;"
		  "CREATE TEMP TABLE kj_rekey_tasks (old TEXT PRIMARY KEY, new TEXT NOT NULL);"
		  "CREATE TEMP TABLE kj_rekey_attempts (old TEXT PRIMARY KEY, new TEXT NOT NULL);");
	if (rc == KJ_OK)
		rc = map_tasks(db, err);
	if (rc == KJ_OK)
		rc = map_attempts(db, err);
	if (rc == KJ_OK)
		rc = EXEC(
#define NEW_TASK(c) "(SELECT new FROM temp.kj_rekey_tasks WHERE old = " c ")"
#define NEW_ATTEMPT "(SELECT new FROM temp.kj_rekey_attempts WHERE old = attempt_key)"
#define HAS_NEW " WHERE attempt_key IN (SELECT old FROM temp.kj_rekey_attempts);"
			"UPDATE main.tasks SET task_key = " NEW_TASK("task_key") ";"
			"UPDATE main.suite_tasks SET task_key = coalesce(" NEW_TASK("task_key")
			", task_key);"
			"UPDATE main.attempts SET task_key = coalesce(" NEW_TASK("task_key")
			", task_key);"
			"UPDATE main.attempts SET attempt_key = " NEW_ATTEMPT HAS_NEW
			"UPDATE main.case_results SET attempt_key = " NEW_ATTEMPT HAS_NEW
			"UPDATE main.timings SET attempt_key = " NEW_ATTEMPT HAS_NEW
			"DROP TABLE temp.kj_rekey_tasks;"
			"DROP TABLE temp.kj_rekey_attempts;");
#undef NEW_TASK
#undef NEW_ATTEMPT
#undef HAS_NEW
#undef EXEC
	return rc;
}
