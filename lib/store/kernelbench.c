/*
 * kernelbench.c - the store's attempts in KernelBench's eval_results.json
 * format (kjudge/store.h, kj_store_kernelbench; docs/cli.md, "report"), so
 * that the tools written for KernelBench's runs read a study of kjudge's.
 *
 * KernelBench keeps one file per run (one model, one level): problem id ->
 * the list of its samples' results.  A study may hold several models and
 * levels, so the caller names the one model and level the file is of
 * whenever there is a choice, never a file whose keys mix them.
 *
 * A sample is "correctness": true only for a clean pass: a candidate that
 * passed by leaving the work to PyTorch, or whose kernels were not what
 * made it correct, is not one of KernelBench's correct samples here, and
 * its metadata says why.  Rows holding a value no judge writes are left
 * out (counted), as the metrics leave them out.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/pipeline.h"
#include "kjudge/store.h"
#include "store/store_internal.h"
#include "base/vec.h"
#include "base/banned.h"

/* The latest finished row of each (model, task, attempt label), as the
 * metrics count them, with its task's level and problem. */
static const char attempts_sql[] =
	"WITH a AS (SELECT a.*, a.rowid AS rid, row_number() OVER (PARTITION BY a.model, "
	"a.task_key, a.attempt ORDER BY a.finished_at DESC, a.run_id DESC, a.attempt_key DESC) "
	"AS rn FROM attempts a WHERE a.state = 'done') "
	"SELECT a.attempt_key, a.model, a.task, a.attempt, a.status, a.clean, a.error_type, "
	"a.category, a.message, a.speedup, a.device, t.level, t.problem, a.rid, "
	"a.static_msg, a.disabled_msg, a.profile_msg, a.static_ok, a.disabled_ok, a.profile_ok "
	"FROM a JOIN tasks t ON t.task_key = a.task_key WHERE a.rn = 1 "
	"ORDER BY t.problem IS NULL, t.problem, a.task, length(a.attempt), a.attempt";

enum {
	C_KEY, C_MODEL, C_TASK, C_ATTEMPT, C_STATUS, C_CLEAN, C_ETYPE, C_CATEGORY, C_MESSAGE,
	C_SPEEDUP, C_DEVICE, C_LEVEL, C_PROBLEM, C_RID, C_STATIC_MSG, C_DISABLED_MSG,
	C_PROFILE_MSG, C_STATIC_OK, C_DISABLED_OK, C_PROFILE_OK
};

static const char *col_text(sqlite3_stmt *st, int c)
{
	return (const char *)sqlite3_column_text(st, c);
}

static int cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return (x > y) - (x < y);
}

/* A string of the row, or null. */
static json_t *str_or_null(sqlite3_stmt *st, int c)
{
	const char *s = col_text(st, c);

	return s ? json_string(s) : json_null();
}

/* The attempt label as KernelBench's sample_id: a whole number when it is
 * one ('3'), else the label as it is. */
static json_t *sample_id(const char *label)
{
	char *end;
	long long v;

	if (label[0] >= '0' && label[0] <= '9' && strlen(label) < 16) {
		v = strtoll(label, &end, 10);
		if (*end == '\0')
			return json_integer(v);
	}
	return json_string(label);
}

/* The candidate's figures of an attempt's timed cases: each case's median
 * and sample count (what the store keeps of them). */
static int timed_cases(sqlite3_stmt *tst, const char *key, json_t **stats, double *runtime,
		       struct kj_error *err)
{
	struct kj_latency *l = NULL;
	size_t n = 0;
	int rc;

	*stats = NULL;
	sqlite3_reset(tst);
	rc = sqlite3_bind_text(tst, 1, key, -1, SQLITE_TRANSIENT);
	while (rc == SQLITE_OK && (rc = sqlite3_step(tst)) == SQLITE_ROW) {
		rc = SQLITE_OK;
		if (KJ__RESIZE(l, n + 1) != KJ_OK) {
			free(l);
			return kj_error_set(err, KJ_ENOMEM, "out of memory");
		}
		memset(&l[n], 0, sizeof(*l));
		l[n].mean_ms = l[n].stdev_ms = l[n].min_ms = l[n].max_ms = (double)NAN;
		/* A case without a figure has none (NULL reads as 0): the
		 * attempt gets no runtime, never another case's. */
		l[n].median_ms = sqlite3_column_type(tst, 0) == SQLITE_FLOAT
					 ? sqlite3_column_double(tst, 0) : (double)NAN;
		l[n].n = sqlite3_column_type(tst, 1) == SQLITE_INTEGER &&
				 sqlite3_column_int64(tst, 1) > 0 &&
				 sqlite3_column_int64(tst, 1) < INT32_MAX
			 ? (int)sqlite3_column_int64(tst, 1) : 0;
		n++;
	}
	if (rc != SQLITE_OK && rc != SQLITE_DONE) {
		free(l);
		return kj__store_fail(sqlite3_db_handle(tst), rc, err, "the attempt's timings");
	}
	*stats = kj_kb_runtime_stats(l, n, runtime);
	free(l);
	return *stats ? KJ_OK : kj_error_set(err, KJ_ENOMEM, "out of memory");
}

/* The row's failure under KernelBench's names of its metadata, with the
 * judge's own under "kjudge". */
static json_t *metadata(sqlite3_stmt *st)
{
	const char *status = col_text(st, C_STATUS), *cat = col_text(st, C_CATEGORY);
	const char *etype = col_text(st, C_ETYPE), *msg = col_text(st, C_MESSAGE);
	const char *device = col_text(st, C_DEVICE);
	json_t *md = json_object(), *kj;
	const char *name_key = NULL, *msg_key = NULL;

	kj = json_pack("{s:s?, s:o, s:o, s:o, s:o, s:o, s:s?, s:s?, s:s?}", "status", status,
		       "clean", json_boolean(sqlite3_column_type(st, C_CLEAN) == SQLITE_INTEGER &&
					     sqlite3_column_int64(st, C_CLEAN) == 1),
		       "error_type", str_or_null(st, C_ETYPE), "category", str_or_null(st, C_CATEGORY),
		       "message", str_or_null(st, C_MESSAGE),
		       "speedup", sqlite3_column_type(st, C_SPEEDUP) == SQLITE_FLOAT
				  ? json_real(sqlite3_column_double(st, C_SPEEDUP)) : json_null(),
		       "attempt_key", col_text(st, C_KEY), "model", col_text(st, C_MODEL),
		       "task", col_text(st, C_TASK));
	if (!md || !kj || json_object_set_new(md, "kjudge", kj)) {
		json_decref(md);
		return NULL;
	}
	if (device && json_object_set_new(md, "device", json_string(device))) {
		json_decref(md);
		return NULL;
	}
	if (status && !strcmp(status, "fail") && cat) {
		if (!strcmp(cat, "build")) {
			name_key = "compilation_error_name";
			msg_key = "compilation_error";
		} else if (!strcmp(cat, "accuracy")) {
			name_key = "correctness_issue_name";
			msg_key = "correctness_issue";
		} else {
			name_key = "runtime_error_name";
			msg_key = "runtime_error";
		}
	} else if (status && !strcmp(status, "pass") && cat) {
		/* A pass that is not clean: the layer that failed and why. */
		name_key = "kjudge_not_clean";
		msg_key = !strcmp(cat, "static") ? "static_check" : "anticheat";
	}
	if (name_key && (json_object_set_new(md, name_key, json_string(etype ? etype : cat)) ||
			 json_object_set_new(md, msg_key, json_string(msg ? msg : "")))) {
		json_decref(md);
		return NULL;
	}
	return md;
}

/* One row as KernelBench's entry. */
static int entry(sqlite3_stmt *st, sqlite3_stmt *tst, json_t **out, struct kj_error *err)
{
	const char *status = col_text(st, C_STATUS), *cat = col_text(st, C_CATEGORY);
	int passed = status && !strcmp(status, "pass");
	int clean = passed && sqlite3_column_type(st, C_CLEAN) == SQLITE_INTEGER &&
		    sqlite3_column_int64(st, C_CLEAN) == 1;
	/* Built: everything but a build failure and what never reached the
	 * candidate (a task's or the judge's error says nothing of it). */
	int compiled = status && (passed || (!strcmp(status, "fail") && cat &&
					     strcmp(cat, "build") != 0));
	json_t *stats = NULL, *md;
	double runtime = -1.0;
	int rc;

	*out = NULL;
	rc = timed_cases(tst, col_text(st, C_KEY), &stats, &runtime, err);
	if (rc != KJ_OK)
		return rc;
	md = metadata(st);
	if (!md || !stats) {
		json_decref(md);
		json_decref(stats);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	*out = json_pack("{s:o, s:b, s:b, s:o, s:f, s:o}", "sample_id",
			 sample_id(col_text(st, C_ATTEMPT)), "compiled", compiled, "correctness",
			 clean, "metadata", md, "runtime", runtime, "runtime_stats", stats);
	if (!*out)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	return KJ_OK;
}

/* Why the rows cannot make one file without a choice: 0 when they can. */
static int one_of_each(sqlite3 *db, const char *model, int level, struct kj_error *err)
{
	static const char models_sql[] =
		"SELECT DISTINCT model FROM attempts WHERE state = 'done' ORDER BY model";
	static const char levels_sql[] =
		"SELECT DISTINCT t.level FROM attempts a JOIN tasks t ON t.task_key = a.task_key "
		"WHERE a.state = 'done' AND a.model = ?1 ORDER BY t.level";
	sqlite3_stmt *st = NULL;
	char list[600] = "";
	size_t len = 0;
	int rc, n = 0, found = 0;

	rc = sqlite3_prepare_v2(db, model ? levels_sql : models_sql, -1, &st, NULL);
	if (rc == SQLITE_OK && model)
		rc = sqlite3_bind_text(st, 1, model, -1, SQLITE_TRANSIENT);
	while (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		char item[300];

		rc = SQLITE_OK;
		if (model && sqlite3_column_type(st, 0) == SQLITE_NULL)
			snprintf(item, sizeof(item), "none");
		else if (model)
			snprintf(item, sizeof(item), "%lld", sqlite3_column_int64(st, 0));
		else
			snprintf(item, sizeof(item), "'%s'", col_text(st, 0) ? col_text(st, 0) : "");
		if (model && sqlite3_column_type(st, 0) != SQLITE_NULL &&
		    sqlite3_column_int64(st, 0) == level)
			found = 1;
		if (len < sizeof(list) - 1)
			len += (size_t)snprintf(list + len, sizeof(list) - len, "%s%s", n ? ", " : "",
						item);
		n++;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_DONE)
		return kj__store_fail(db, rc, err, "the store's models and levels");
	if (!model && n == 0)
		return kj_error_set(err, KJ_EINVAL, "no finished attempt in the store");
	if (!model && n > 1)
		return kj_error_set(err, KJ_EINVAL, "the store holds %d models (%s); KernelBench's "
				    "file is of one: name it with --model", n, list);
	if (model && n == 0)
		return kj_error_set(err, KJ_EINVAL, "no finished attempt of model '%s' in the store",
				    model);
	if (model && level < 0 && n > 1)
		return kj_error_set(err, KJ_EINVAL, "model '%s' has attempts at levels %s; "
				    "KernelBench's file is of one: name it with --level", model, list);
	if (model && level >= 0 && !found)
		return kj_error_set(err, KJ_EINVAL, "model '%s' has no attempt at level %d (levels: "
				    "%s)", model, level, list);
	return KJ_OK;
}

/* The one model of the store (there is one: one_of_each said so). */
static int only_model(sqlite3 *db, char *buf, size_t size, struct kj_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "SELECT model FROM attempts WHERE state = 'done' LIMIT 1",
				    -1, &st, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW && col_text(st, 0))
		snprintf(buf, size, "%s", col_text(st, 0));
	sqlite3_finalize(st);
	return rc == SQLITE_ROW ? KJ_OK : kj__store_fail(db, rc, err, "the store's model");
}

int kj_store_kernelbench(struct kj_store *s, const char *model, int level, json_t **out,
			 long long *left_out, struct kj_error *err)
{
	sqlite3 *db = kj__store_db(s);
	sqlite3_stmt *st = NULL, *tst = NULL;
	long long *bad = NULL;
	size_t n_bad = 0;
	char only[512];
	json_t *res = NULL;
	int rc;

	*out = NULL;
	*left_out = 0;
	if ((rc = one_of_each(db, model, level, err)) != KJ_OK)
		return rc;
	if (!model) {
		if ((rc = only_model(db, only, sizeof(only), err)) != KJ_OK)
			return rc;
		model = only;
		if ((rc = one_of_each(db, model, level, err)) != KJ_OK)
			return rc;
	}
	rc = kj__store_bad_rowids(db, "main", SIZE_MAX, &bad, &n_bad, err);
	if (rc != KJ_OK)
		return rc;
	res = json_object();
	if (!res) {
		free(bad);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	rc = sqlite3_prepare_v2(db, attempts_sql, -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT impl_ms, impl_samples FROM timings WHERE attempt_key = ? "
					"ORDER BY case_idx", -1, &tst, NULL);
	if (rc != SQLITE_OK) {
		rc = kj__store_fail(db, rc, err, "the attempts");
		goto out;
	}
	while ((rc = sqlite3_step(st)) == SQLITE_ROW) {
		long long rid = sqlite3_column_int64(st, C_RID);
		const char *m = col_text(st, C_MODEL), *task = col_text(st, C_TASK);
		char key[300];
		json_t *e, *list;

		rc = KJ_OK;
		if (!m || strcmp(m, model) != 0)
			continue;
		if (level >= 0 && (sqlite3_column_type(st, C_LEVEL) == SQLITE_NULL ||
				   sqlite3_column_int64(st, C_LEVEL) != level))
			continue;
		if (n_bad && bsearch(&rid, bad, n_bad, sizeof(*bad), cmp_ll)) {
			++*left_out;
			continue;
		}
		/* KernelBench's key: the problem id; a task of a verify
		 * directory has none, and is keyed by its name. */
		if (sqlite3_column_type(st, C_PROBLEM) != SQLITE_NULL)
			snprintf(key, sizeof(key), "%lld", sqlite3_column_int64(st, C_PROBLEM));
		else
			snprintf(key, sizeof(key), "%s", task ? task : "");
		if ((rc = entry(st, tst, &e, err)) != KJ_OK)
			goto out;
		list = json_object_get(res, key);
		if (!list && (!(list = json_array()) || json_object_set_new(res, key, list))) {
			json_decref(e);
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
		if (json_array_append_new(list, e)) {
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
			goto out;
		}
	}
	rc = rc == SQLITE_DONE ? KJ_OK : kj__store_fail(db, rc, err, "the attempts");
out:
	sqlite3_finalize(st);
	sqlite3_finalize(tst);
	free(bad);
	if (rc != KJ_OK) {
		json_decref(res);
		return rc;
	}
	*out = res;
	return KJ_OK;
}
