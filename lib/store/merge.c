/*
 * merge.c - folding one results store into another (kjudge merge, the
 * shards of a cluster run) and publishing a store as one self-contained
 * file (kjudge/store.h).
 *
 * A merge is one transaction on the target, the source attached read-only:
 * its runs (each known by its origin: the run's own origin when it was
 * itself merged in, else the SHA-256 of what the run is, so that the same
 * run merged twice is one row), tasks, suite and candidates (keyed by
 * content: INSERT OR IGNORE), then its finished attempts with their case
 * results and timings.  An attempt the target already holds as finished is
 * kept as it is (the first verdict wins: a requeued shard's second result of
 * the same attempt changes nothing), except a judge error, which a verdict
 * of the source replaces.  An attempt the source holds as running (a shard
 * killed mid-case) is left out whole.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "kjudge/fileio.h"
#include "kjudge/store.h"
#include "store/store_internal.h"
#include "base/hash.h"
#include "base/text.h"
#include "base/vec.h"
#include "base/internal.h"

/* file:PATH?QUERY with PATH percent-encoded (SQLite's URI filenames). */
int kj__store_uri(const char *path, const char *query, char *out, size_t size)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0, i;

	if (size < 8)
		return -1;
	memcpy(out, "file:", 5);
	n = 5;
	for (i = 0; path[i]; i++) {
		unsigned char c = (unsigned char)path[i];
		int plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == '/' || c == '.' || c == '_' || c == '-';

		if (n + 4 >= size)
			return -1;
		if (plain) {
			out[n++] = (char)c;
		} else {
			out[n++] = '%';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	if (query && *query) {
		size_t q = strlen(query);

		if (n + 1 + q + 1 > size)
			return -1;
		out[n++] = '?';
		memcpy(out + n, query, q);
		n += q;
	}
	out[n] = '\0';
	return 0;
}

static int step_done(sqlite3 *db, const char *sql, struct kj_error *err, const char *what)
{
	int rc = sqlite3_exec(db, sql, NULL, NULL, NULL);

	return rc == SQLITE_OK ? KJ_OK : kj__store_fail(db, rc, err, what);
}

/* One integer from a one-row query of db; *v unchanged when no row. */
static int one_int(sqlite3 *db, const char *sql, long long *v, struct kj_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		*v = sqlite3_column_int64(st, 0);
		rc = SQLITE_DONE;
	}
	sqlite3_finalize(st);
	return rc == SQLITE_DONE ? KJ_OK : kj__store_fail(db, rc, err, "merge");
}

/* Length-prefixed text into the hash input (NULL as its own mark). */
static int feed(char **buf, size_t *len, size_t *cap, const unsigned char *s)
{
	size_t n = s ? strlen((const char *)s) : 0;
	char head[32];
	int h = s ? snprintf(head, sizeof(head), "%zu:", n) : snprintf(head, sizeof(head), "-:");

	if (kj__grow(buf, cap, *len + (size_t)h + n + 1, 1) != KJ_OK)
		return -1;
	memcpy(*buf + *len, head, (size_t)h);
	*len += (size_t)h;
	if (n)
		memcpy(*buf + *len, s, n);
	*len += n;
	return 0;
}

/*
 * The source's runs into the target (INSERT OR IGNORE by origin) and the
 * map source run_id -> target run_id in temp.kj_runmap.  The source is of
 * this schema (an older one is merged from its upgraded copy).
 */
static int merge_runs(sqlite3 *db, struct kj_store_merge_stats *out, struct kj_error *err)
{
	sqlite3_stmt *sel = NULL, *ins = NULL, *get = NULL, *map = NULL, *fin = NULL;
	char *buf = NULL;
	size_t cap = 0;
	int rc, code = KJ_OK;

	rc = sqlite3_prepare_v2(db, "SELECT run_id, started_at, judge_version, command, suite, "
				"candidates, settings, env, finished_at, origin FROM kj_src.runs "
				"ORDER BY run_id", -1, &sel, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT OR IGNORE INTO main.runs (started_at, "
					"judge_version, command, suite, candidates, settings, env, "
					"finished_at, origin) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)", -1,
					&ins, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "SELECT run_id FROM main.runs WHERE origin = ?", -1,
					&get, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "INSERT INTO temp.kj_runmap VALUES (?, ?)", -1, &map,
					NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_prepare_v2(db, "UPDATE main.runs SET finished_at = ? WHERE run_id = ? "
					"AND finished_at IS NULL", -1, &fin, NULL);
	while (rc == SQLITE_OK && (rc = sqlite3_step(sel)) == SQLITE_ROW) {
		const unsigned char *origin = sqlite3_column_text(sel, 9);
		char hex[KJ_SHA256_HEX];
		size_t len = 0;
		long long dst = -1;
		int i;

		rc = SQLITE_OK;
		if (!origin) {
			/* What the run is: when and how it was started, on what. */
			for (i = 1; i <= 7; i++)
				if (feed(&buf, &len, &cap, sqlite3_column_text(sel, i)) < 0)
					break;
			if (i <= 7 || kj__sha256_hex(buf, len, hex) < 0) {
				code = kj_error_set(err, KJ_ENOMEM, "merge: out of memory");
				break;
			}
			origin = (const unsigned char *)hex;
		}
		for (i = 1; i <= 8 && rc == SQLITE_OK; i++)
			rc = sqlite3_bind_value(ins, i, sqlite3_column_value(sel, i));
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_text(ins, 9, (const char *)origin, -1, SQLITE_TRANSIENT);

		if (rc == SQLITE_OK && (rc = sqlite3_step(ins)) == SQLITE_DONE) {
			out->runs_new += sqlite3_changes(db);
			rc = SQLITE_OK;
		}
		sqlite3_reset(ins);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_text(get, 1, (const char *)origin, -1, SQLITE_TRANSIENT);
		if (rc == SQLITE_OK && (rc = sqlite3_step(get)) == SQLITE_ROW) {
			dst = sqlite3_column_int64(get, 0);
			rc = SQLITE_OK;
		} else if (rc == SQLITE_DONE) {
			rc = SQLITE_CORRUPT;
		}
		sqlite3_reset(get);
		/* A run published while it went on, merged again once it ended. */
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_value(fin, 1, sqlite3_column_value(sel, 8));
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(fin, 2, dst);
		if (rc == SQLITE_OK && (rc = sqlite3_step(fin)) == SQLITE_DONE)
			rc = SQLITE_OK;
		sqlite3_reset(fin);
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(map, 1, sqlite3_column_int64(sel, 0));
		if (rc == SQLITE_OK)
			rc = sqlite3_bind_int64(map, 2, dst);
		if (rc == SQLITE_OK && (rc = sqlite3_step(map)) == SQLITE_DONE)
			rc = SQLITE_OK;
		sqlite3_reset(map);
	}
	if (code == KJ_OK && rc != SQLITE_DONE)
		code = kj__store_fail(db, rc, err, "merge: the runs");
	sqlite3_finalize(sel);
	sqlite3_finalize(ins);
	sqlite3_finalize(get);
	sqlite3_finalize(map);
	sqlite3_finalize(fin);
	free(buf);
	return code;
}

#define ATTEMPT_COLS \
	"task_key, task, model, attempt, round, cand_sha256, origin, prompt_tokens, " \
	"completion_tokens, generation_s, device, state, status, clean, error_type, category, " \
	"charged, message, cases_total, cases_passed, static_ok, static_msg, disabled_ok, " \
	"disabled_msg, profile_ok, profile_msg, speedup, judge_s, started_at, finished_at, env"
#define TASK_COLS \
	"task_key, name, path, level, problem, task_sha256, cases_sha256, source, cases_json"
#define CASE_COLS \
	"attempt_key, phase, case_idx, params, status, error_type, category, charged, message, " \
	"record"
#define TIMING_COLS \
	"attempt_key, case_idx, impl_ms, ref_ms, speedup, impl_samples, ref_samples, record, " \
	"sol_ms"

/* Everything after the runs, in the merge's transaction. */
static int merge_rest(sqlite3 *db, struct kj_store_merge_stats *out, struct kj_error *err)
{
	long long take = 0, taken = 0, fresh = 0, running = 0, done = 0;
	int rc;

	rc = step_done(db,
		"INSERT OR IGNORE INTO main.tasks (" TASK_COLS ") SELECT " TASK_COLS
		" FROM kj_src.tasks;"
		"INSERT OR IGNORE INTO main.suite_tasks (run_id, task_key) SELECT m.dst, s.task_key "
		"FROM kj_src.suite_tasks s JOIN temp.kj_runmap m ON m.src = s.run_id;"
		"INSERT OR IGNORE INTO main.candidates (cand_sha256, source) SELECT cand_sha256, "
		"source FROM kj_src.candidates;"
		"DELETE FROM temp.kj_take;"
		/* The source's verdicts the target lacks, or holds only as a
		 * judge error (or as running, from a judge of its own). */
		"INSERT INTO temp.kj_take SELECT a.attempt_key, m.attempt_key IS NULL "
		"FROM kj_src.attempts a LEFT JOIN main.attempts m USING (attempt_key) "
		"WHERE a.state = 'done' AND a.status IS NOT NULL AND (m.attempt_key IS NULL OR "
		"m.state != 'done' OR (m.status = 'judge_error' AND a.status != 'judge_error'));"
		"DELETE FROM main.timings WHERE attempt_key IN (SELECT k FROM temp.kj_take);"
		"DELETE FROM main.case_results WHERE attempt_key IN (SELECT k FROM temp.kj_take);"
		"DELETE FROM main.attempts WHERE attempt_key IN (SELECT k FROM temp.kj_take);"
		"INSERT INTO main.attempts (attempt_key, run_id, " ATTEMPT_COLS ") "
		"SELECT a.attempt_key, m.dst, " ATTEMPT_COLS " FROM kj_src.attempts a "
		"JOIN temp.kj_take t ON t.k = a.attempt_key JOIN temp.kj_runmap m ON m.src = a.run_id;"
		"INSERT INTO main.case_results (" CASE_COLS ") SELECT " CASE_COLS
		" FROM kj_src.case_results WHERE attempt_key IN (SELECT k FROM temp.kj_take);"
		"INSERT INTO main.timings (" TIMING_COLS ") SELECT " TIMING_COLS
		" FROM kj_src.timings WHERE attempt_key IN (SELECT k FROM temp.kj_take);"
		"INSERT OR IGNORE INTO main.meta (key, value) SELECT key, value FROM kj_src.meta "
		"WHERE key = 'batch';", err, "merge");
	if (rc == KJ_OK)
		rc = one_int(db, "SELECT count(*) FROM temp.kj_take", &take, err);
	if (rc == KJ_OK)
		rc = one_int(db, "SELECT count(*) FROM temp.kj_take WHERE fresh", &fresh, err);
	if (rc == KJ_OK)
		rc = one_int(db, "SELECT count(*) FROM main.attempts WHERE attempt_key IN "
			     "(SELECT k FROM temp.kj_take)", &taken, err);
	if (rc == KJ_OK)
		rc = one_int(db, "SELECT count(*) FROM kj_src.attempts WHERE state != 'done' OR "
			     "status IS NULL", &running, err);
	if (rc == KJ_OK)
		rc = one_int(db, "SELECT count(*) FROM kj_src.attempts WHERE state = 'done' AND "
			     "status IS NOT NULL", &done, err);
	if (rc != KJ_OK)
		return rc;
	if (taken != take)
		return kj_error_set(err, KJ_ESTORE, "merge: %lld of the source's attempts name a "
				    "run it does not hold: a damaged store", take - taken);
	out->attempts_new += fresh;
	out->attempts_replaced += take - fresh;
	out->attempts_same += done - take;
	out->attempts_running += running;
	return KJ_OK;
}

/* A text column of st, valid UTF-8 and short, for a message (in the
 * caller's buf). */
static const char *short_text(sqlite3_stmt *st, int i, char *buf, size_t size)
{
	return kj__text_brief((const char *)sqlite3_column_text(st, i), 40, buf, size);
}

/*
 * The source holds only values a judge writes (check.c): its attempts,
 * their timings and their cases.  The first row that holds another is the
 * error: the source, the attempt, the column, the value and what it must
 * be (KJ_ESTORE); nothing of the source is merged (the check is the
 * first step of the merge's transaction, rolled back).
 */
static int check_source(sqlite3 *db, const char *src, struct kj_error *err)
{
	struct kj__store_checker ck;
	struct kj__store_bad bad;
	sqlite3_stmt *st = NULL;
	long long *rowid = NULL;
	char *key = NULL;
	size_t n = 0;
	int rc;

	rc = kj__store_bad_rowids(db, "kj_src", 1, &rowid, &n, err);
	if (rc != KJ_OK || n == 0) {
		free(rowid);
		return rc;
	}
	rc = sqlite3_prepare_v2(db, "SELECT attempt_key, model, task, attempt FROM kj_src.attempts "
				"WHERE rowid = ?", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_int64(st, 1, rowid[0]);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_ROW) {
		const unsigned char *k = sqlite3_column_text(st, 0);

		rc = k && !(key = strdup((const char *)k)) ? SQLITE_NOMEM : SQLITE_OK;
	}
	if (rc != SQLITE_OK) {
		rc = kj__store_fail(db, rc, err, src);
		goto out;
	}
	rc = kj__store_checker_open(&ck, db, "kj_src", err);
	if (rc == KJ_OK) {
		rc = kj__store_checker_run(&ck, rowid[0],
					   sqlite3_column_type(st, 0) == SQLITE_TEXT ? key : NULL,
					   &bad, err);
		kj__store_checker_close(&ck);
	}
	if (rc == 1) {
		char m[64], tk[64], a[64], kshow[80], where[48] = "";

		if (bad.case_idx >= 0)
			snprintf(where, sizeof(where), ", case %lld", bad.case_idx);
		rc = kj_error_set(err, KJ_ESTORE, "'%s': attempt %s (model '%s', task '%s', attempt "
				  "'%s')%s: %s is %s, not %s: a value no judge writes; nothing of "
				  "this store was merged", src,
				  kj__text_brief(key ? key : "(no key)", 64, kshow, sizeof(kshow)),
				  short_text(st, 1, m, sizeof(m)), short_text(st, 2, tk, sizeof(tk)),
				  short_text(st, 3, a, sizeof(a)), where, bad.column, bad.value,
				  bad.want);
	} else if (rc == 0) {
		/* The search and the checker disagree: cannot be, but a refusal
		 * is the side to err on. */
		rc = kj_error_set(err, KJ_ESTORE, "'%s': an attempt holds a value no judge writes; "
				  "nothing of this store was merged", src);
	}
out:
	sqlite3_finalize(st);
	free(rowid);
	free(key);
	return rc;
}

/* A consistent snapshot of db (one read transaction, while its writers go
 * on) into the new file tmp: KJ_OK, or a code with err filled (`label` the
 * store's name) and tmp perhaps half-written, for the caller to remove. */
static int vacuum_into(sqlite3 *db, const char *tmp, const char *label, struct kj_error *err)
{
	sqlite3_stmt *st = NULL;
	int rc = sqlite3_prepare_v2(db, "VACUUM INTO ?", -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, tmp, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE)
		rc = SQLITE_OK;
	sqlite3_finalize(st);
	return rc == SQLITE_OK ? KJ_OK : kj__store_fail(db, rc, err, label);
}

/* A copy made by upgraded_copy, gone with its journal files. */
static void remove_copy(const char *tmp)
{
	static const char *const ext[] = { "", "-wal", "-shm", "-journal" };
	char p[4300];
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++)
		if (snprintf(p, sizeof(p), "%s%s", tmp, ext[i]) < (int)sizeof(p))
			unlink(p);
}

/*
 * A source of an older schema (src, open read-only) copied beside the
 * target as tmp and brought to this schema there: its keys are not the
 * target's (schema 3 keys tasks by name), so merged as it is each of its
 * tasks and attempts would be a second row of one the target may hold.
 * KJ_OK, or a code with err filled and no copy left.
 */
static int upgraded_copy(struct kj_store *src, const char *label, const char *target,
			 char *tmp, size_t size, struct kj_error *err)
{
	struct kj_store *copy = NULL;
	int rc;

	if (snprintf(tmp, size, "%s.upgrade-%ld.tmp", target, (long)getpid()) >= (int)size)
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", target);
	remove_copy(tmp);
	rc = vacuum_into(kj__store_db(src), tmp, label, err);
	if (rc != KJ_OK) {
		remove_copy(tmp);
		/* What is full is the target's file system, where the copy is. */
		return rc == KJ_ENOSPC ? kj_error_write(err, ENOSPC, tmp, "a copy of the source "
							 "to bring it to this schema") : rc;
	}
	rc = kj_store_open(tmp, 0, 0, &copy, err);
	kj_store_close(copy);
	if (rc != KJ_OK)
		remove_copy(tmp);
	return rc;
}

/* The merge of the store at `path` (src, or its upgraded copy), named
 * `src` in messages. */
static int merge_file(struct kj_store *s, const char *path, const char *src,
		      struct kj_store_merge_stats *out, struct kj_error *err)
{
	sqlite3 *db = kj__store_db(s);
	sqlite3_stmt *st = NULL;
	char uri[8192];
	int rc;

	if (kj__store_uri(path, "mode=ro", uri, sizeof(uri)) < 0)
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", src);
	rc = sqlite3_prepare_v2(db, "ATTACH DATABASE ? AS kj_src", -1, &st, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_bind_text(st, 1, uri, -1, SQLITE_STATIC);
	if (rc == SQLITE_OK && (rc = sqlite3_step(st)) == SQLITE_DONE)
		rc = SQLITE_OK;
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return kj__store_fail(db, rc, err, src);
	rc = step_done(db, "CREATE TEMP TABLE IF NOT EXISTS kj_runmap (src INTEGER PRIMARY KEY, "
		       "dst INTEGER NOT NULL); CREATE TEMP TABLE IF NOT EXISTS kj_take (k TEXT "
		       "PRIMARY KEY, fresh INTEGER NOT NULL); DELETE FROM temp.kj_runmap;", err,
		       "merge");
	if (rc == KJ_OK)
		rc = step_done(db, "BEGIN IMMEDIATE", err, kj__store_path(s));
	if (rc == KJ_OK) {
		/* In the transaction: the source checked is the source read. */
		rc = check_source(db, src, err);
		if (rc == KJ_OK)
			rc = merge_runs(db, out, err);
		if (rc == KJ_OK)
			rc = merge_rest(db, out, err);
		if (rc == KJ_OK)
			rc = kj__store_audit_merge(db, src, err);
		if (rc == KJ_OK)
			rc = step_done(db, "COMMIT", err, kj__store_path(s));
		if (rc != KJ_OK)
			sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_exec(db, "DELETE FROM temp.kj_runmap; DELETE FROM temp.kj_take;", NULL, NULL,
		     NULL);
	sqlite3_exec(db, "DETACH DATABASE kj_src", NULL, NULL, NULL);
	if (rc != KJ_OK)
		memset(out, 0, sizeof(*out));
	return rc;
}

int kj_store_merge(struct kj_store *s, const char *src, struct kj_store_merge_stats *out,
		   struct kj_error *err)
{
	struct kj_store *probe = NULL;
	struct stat a, b;
	char tmp[4200];
	int rc;

	memset(out, 0, sizeof(*out));
	/* What the source is, checked as any store is (a foreign or corrupt
	 * file, a newer schema): nothing of it is read before. */
	rc = kj_store_open(src, KJ_STORE_READONLY, 0, &probe, err);
	if (rc != KJ_OK)
		return rc;
	if (stat(src, &a) == 0 && stat(kj__store_path(s), &b) == 0 && a.st_dev == b.st_dev &&
	    a.st_ino == b.st_ino) {
		kj_store_close(probe);
		return kj_error_set(err, KJ_EINVAL, "'%s': the store merged into itself", src);
	}
	if (kj__store_version(probe) >= KJ_STORE_SCHEMA_VERSION) {
		kj_store_close(probe);
		return merge_file(s, src, src, out, err);
	}
	rc = upgraded_copy(probe, src, kj__store_path(s), tmp, sizeof(tmp), err);
	kj_store_close(probe);
	if (rc != KJ_OK)
		return rc;
	rc = merge_file(s, tmp, src, out, err);
	remove_copy(tmp);
	return rc;
}

int kj_store_publish(struct kj_store *s, const char *dest, struct kj_error *err)
{
	sqlite3 *db = kj__store_db(s), *copy = NULL;
	char tmp[4200];
	const char *stage = NULL;
	int rc, fd;

	if (snprintf(tmp, sizeof(tmp), "%s.tmp-%ld", dest, (long)getpid()) >= (int)sizeof(tmp))
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", dest);
	unlink(tmp);
	rc = vacuum_into(db, tmp, dest, err);
	if (rc != KJ_OK) {
		unlink(tmp);
		/* What is full is dest's file system, not the store's. */
		return rc == KJ_ENOSPC ? kj_error_write(err, ENOSPC, dest, "cannot publish") : rc;
	}
	/* One file that needs nothing beside it (no -wal, no -shm): what a
	 * network file system can carry, and any reader can open. */
	rc = sqlite3_open_v2(tmp, &copy, SQLITE_OPEN_READWRITE, NULL);
	if (rc == SQLITE_OK)
		rc = sqlite3_exec(copy, "PRAGMA journal_mode = DELETE", NULL, NULL, NULL);
	if (rc != SQLITE_OK) {
		rc = kj__store_fail(copy, rc, err, dest);
		sqlite3_close_v2(copy);
		unlink(tmp);
		return rc;
	}
	sqlite3_close_v2(copy);
	fd = open(tmp, O_RDWR | O_CLOEXEC);
	if (fd < 0 || kj__tmp_commit(fd, tmp, dest, &stage) < 0) {
		int e = errno;

		if (fd < 0)
			unlink(tmp);
		return kj_error_write(err, e, dest, fd < 0 ? "cannot open" : stage);
	}
	return KJ_OK;
}
