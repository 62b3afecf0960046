/*
 * test_store_audit.c - the tasks' audits in the store (lib/store/audit.c,
 * schema version 4): an audit written with its canaries and read back, one
 * written again under the same keys replacing the first whole; a store of
 * schema 3 given the tables when opened for writing and read without them
 * otherwise; a merge carrying the audits (its runs mapped), an established
 * audit replacing a not proven one and never the other way, and a source
 * whose audit holds a value no judge writes refused whole.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "kjudge/metrics.h"
#include "kjudge/store.h"
#include "store/store_internal.h"
#include "unit.h"

static const char task_key[] = "7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a7a";

static long long count(struct kj_store *s, const char *sql)
{
	return kj_test_store_int(s, sql);
}

/* A store at path holding one run of one task; the run's id. */
static long long store_with_run(const char *path, const char *suite, struct kj_store **out)
{
	static const char src[] = "class Model: pass\n";
	struct kj_store_run run = { .judge_version = "0.1.0", .command = "[\"kjudge\"]",
				    .suite = suite, .candidates = "c", .settings = "{}" };
	struct kj_store_task task = { .key = task_key, .name = "relu", .path = "relu.py",
				      .level = -1, .problem = -1, .sha256 = "ab",
				      .cases_sha256 = "", .source = src,
				      .source_len = sizeof(src) - 1 };
	struct kj_error err;
	long long id = -1;

	KJ_CHECK_OK(kj_store_open(path, KJ_STORE_CREATE, 0, out, &err), &err);
	KJ_CHECK_OK(kj_store_run_begin(*out, &run, &task, 1, &id, &err), &err);
	return id;
}

static int put(struct kj_store *s, long long run_id, const char *verdict, size_t n,
	       struct kj_error *err)
{
	static const char *const canary[] = { "zeros", "input" };
	static const char *const weak[] = { "fail", "pass" }, *const strong[] = { "fail", "fail" };
	struct kj_store_audit a = { .task_key = task_key, .audit_key = "k1", .run_id = run_id,
				    .verdict = verdict, .device = "cpu",
				    .reasons = strcmp(verdict, "weak") ? "[]"
						: "[\"input passes case 1\"]",
				    .n_canaries = n, .canary = canary,
				    .outcome = strcmp(verdict, "weak") ? strong : weak };

	return kj_store_audit_put(s, &a, err);
}

KJ_TEST(store_audit_written_read_and_replaced)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	char v[16];
	long long run = store_with_run(kj_test_path("a.db"), "suite", &s);

	KJ_CHECK_INT(kj_store_audit_get(s, task_key, "k1", v, &err), 0);
	KJ_CHECK_STR(v, "");
	KJ_CHECK_OK(put(s, run, "weak", 2, &err), &err);
	KJ_CHECK_INT(kj_store_audit_get(s, task_key, "k1", v, &err), 1);
	KJ_CHECK_STR(v, "weak");
	KJ_CHECK_INT(kj_store_audit_get(s, task_key, "k2", v, &err), 0);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM audit_canaries WHERE outcome = 'pass' AND "
			   "canary = 'input'"), 1);
	/* The same keys again: the audit and its canaries replaced whole. */
	KJ_CHECK_OK(put(s, run, "strong", 1, &err), &err);
	KJ_CHECK_INT(kj_store_audit_get(s, task_key, "k1", v, &err), 1);
	KJ_CHECK_STR(v, "strong");
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM audit_canaries"), 1);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM task_audits"), 1);
	/* A verdict off the list is refused by the table itself. */
	KJ_CHECK(put(s, run, "maybe", 0, &err) != KJ_OK);
	KJ_CHECK_INT(kj_store_audit_get(s, task_key, "k1", v, &err), 1);
	KJ_CHECK_STR(v, "strong");
	kj_store_close(s);
}

KJ_TEST(store_of_schema_3_gets_the_audit_tables)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	json_t *m = NULL;
	const char *p = kj_test_path("old.db");

	store_with_run(p, "suite", &s);
	KJ_CHECK_OK(kj_store_exec(s, "DROP TABLE audit_canaries; DROP TABLE task_audits; "
				  "UPDATE meta SET value = '3' WHERE key = 'schema_version'; "
				  "PRAGMA user_version = 3;", &err), &err);
	kj_store_close(s);
	/* Read as it is: no audit, and the report says none was recorded. */
	KJ_CHECK_OK(kj_store_open(p, KJ_STORE_READONLY, 0, &s, &err), &err);
	KJ_CHECK_INT(count(s, "PRAGMA user_version"), 3);
	KJ_CHECK_OK(kj_metrics_compute(s, &m, &err), &err);
	KJ_CHECK(json_is_false(json_object_get(json_object_get(json_object_get(m, "suite"),
							       "audit"), "recorded")));
	json_decref(m);
	kj_store_close(s);
	/* Opened for writing: brought to this schema, the tables there. */
	KJ_CHECK_OK(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), &err);
	KJ_CHECK_INT(count(s, "PRAGMA user_version"), KJ_STORE_SCHEMA_VERSION);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM sqlite_schema WHERE type = 'table' AND name "
			   "IN ('task_audits', 'audit_canaries')"), 2);
	KJ_CHECK_OK(put(s, 1, "weak", 2, &err), &err);
	kj_store_close(s);
}

KJ_TEST(store_merge_carries_the_audits)
{
	struct kj_store *src = NULL, *dst = NULL;
	struct kj_store_merge_stats st;
	struct kj_error err;
	char v[16];
	char sp[4096], bp[4096];

	/* kj_test_path's buffer is its next call's: each path kept. */
	snprintf(sp, sizeof(sp), "%s", kj_test_path("src.db"));
	snprintf(bp, sizeof(bp), "%s", kj_test_path("bad.db"));
	/* The target's own run first: the source's run is mapped to id 2. */
	store_with_run(kj_test_path("dst.db"), "other", &dst);
	KJ_CHECK_OK(put(dst, 1, "not_proven", 0, &err), &err);
	store_with_run(sp, "suite", &src);
	KJ_CHECK_OK(put(src, 1, "weak", 2, &err), &err);
	kj_store_close(src);
	KJ_CHECK_OK(kj_store_merge(dst, sp, &st, &err), &err);
	/* The target's not proven audit gave way to the source's. */
	KJ_CHECK_INT(kj_store_audit_get(dst, task_key, "k1", v, &err), 1);
	KJ_CHECK_STR(v, "weak");
	KJ_CHECK_INT(count(dst, "SELECT run_id FROM task_audits"), 2);
	KJ_CHECK_INT(count(dst, "SELECT count(*) FROM audit_canaries"), 2);
	/* Merged again: nothing changes. */
	KJ_CHECK_OK(kj_store_merge(dst, sp, &st, &err), &err);
	KJ_CHECK_INT(count(dst, "SELECT count(*) FROM audit_canaries"), 2);
	/* A proven audit is never replaced by a not proven one. */
	store_with_run(bp, "suite", &src);
	KJ_CHECK_OK(put(src, 1, "not_proven", 0, &err), &err);
	kj_store_close(src);
	KJ_CHECK_OK(kj_store_merge(dst, bp, &st, &err), &err);
	KJ_CHECK_INT(kj_store_audit_get(dst, task_key, "k1", v, &err), 1);
	KJ_CHECK_STR(v, "weak");
	/* A source whose audit holds what no judge writes: nothing merged. */
	KJ_CHECK_OK(kj_store_open(bp, KJ_STORE_CREATE, 0, &src, &err), &err);
	KJ_CHECK_OK(kj_store_exec(src, "UPDATE task_audits SET reasons = 'not json', "
				  "audit_key = 'k9'", &err), &err);
	kj_store_close(src);
	KJ_CHECK_INT(kj_store_merge(dst, bp, &st, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "task_audits.reasons") != NULL);
	KJ_CHECK_INT(count(dst, "SELECT count(*) FROM task_audits WHERE audit_key = 'k9'"), 0);
	kj_store_close(dst);
}
