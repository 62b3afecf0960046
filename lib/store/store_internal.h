/*
 * store_internal.h - what the store's modules share (lib/store/).
 */
#ifndef KJ_STORE_INTERNAL_H
#define KJ_STORE_INTERNAL_H

#include <sqlite3.h>

#include "kjudge/error.h"
#include "kjudge/store.h"
#include "store/keys.h"

/* err from a SQLite result code rc of db (may be NULL) while doing `what`:
 * KJ_EBUSY for a lock, KJ_ENOMEM, KJ_ENOSPC for a full file system or a
 * quota (SQLITE_FULL, or an I/O error of errno ENOSPC or EDQUOT: "no space
 * left on MOUNT"), KJ_EIO for another I/O error, else KJ_ESTORE.  Returns
 * the code. */
int kj__store_fail(sqlite3 *db, int rc, struct kj_error *err, const char *what);

/*
 * What a row of the store may hold (check.c; docs/store.md, "What a row may
 * hold").  For each table ("attempts", "timings", "case_results") a list of
 * checks: the column, an SQL condition true when the row's value is one no
 * judge writes (the columns named bare: the condition is evaluated where
 * the table is the innermost source), and what the value must be in words.
 */
struct kj__store_check {
	const char *column;
	const char *bad;
	const char *want;
};

/* The checks of table (*n of them), or NULL for a table without. */
const struct kj__store_check *kj__store_checks(const char *table, size_t *n);

/* "CASE WHEN bad0 THEN 0 WHEN bad1 THEN 1 ... END": the index of the first
 * check a row of table fails, NULL when it fails none; with value set, the
 * failing column's value instead of its index.  A new string the caller
 * frees, NULL when out of memory or for a table without checks. */
char *kj__store_check_sql(const char *table, int value);

/* The rowids of the attempts of schema (of db) that hold a value no judge
 * writes, in their row, their timings or their cases: at most limit, in
 * rowid order, into *out (the caller frees it; NULL when none) and *n.
 * One scan of each table.  KJ_OK, or a code with err filled. */
int kj__store_bad_rowids(sqlite3 *db, const char *schema, size_t limit, long long **out,
			 size_t *n, struct kj_error *err);

/* The first value an attempt holds that no judge writes, found by the
 * checker. */
struct kj__store_bad {
	char column[48];     /* "judge_s", "timings.speedup", "case_results.status" */
	char value[64];      /* as a message shows it: "inf", "-1000000", "'win'" */
	const char *want;    /* what it must be, in words (static) */
	long long case_idx;  /* the timing's or case's row; -1 for the attempt's */
};

/* The checks of one schema of db ("main", or a store attached as a
 * name), as prepared statements.  Caller-owned; close releases them. */
struct kj__store_checker {
	sqlite3 *db;
	sqlite3_stmt *st[3];
};

int kj__store_checker_open(struct kj__store_checker *ck, sqlite3 *db, const char *schema,
			   struct kj_error *err);
void kj__store_checker_close(struct kj__store_checker *ck);

/* The attempt whose row is rowid (and key, NULL when its key is missing:
 * then its attempts row alone is checked): 0 when it holds nothing wrong,
 * 1 with *bad filled (its attempts row first, then its timings, then its
 * cases, each by case), or a code with err filled. */
int kj__store_checker_run(struct kj__store_checker *ck, long long rowid, const char *key,
			  struct kj__store_bad *bad, struct kj_error *err);

/* The SQLite handle, for the store's own modules: borrowed, valid until
 * kj_store_close. */
sqlite3 *kj__store_db(struct kj_store *s);

/* BEGIN IMMEDIATE on s: KJ_OK, or a code with err filled. */
int kj__store_begin(struct kj_store *s, struct kj_error *err);

/* End the transaction kj__store_begin began: COMMIT when rc is KJ_OK,
 * else (or when the commit fails) ROLLBACK.  Returns rc, or the commit's
 * code with err filled. */
int kj__store_commit(struct kj_store *s, int rc, struct kj_error *err);

/* The store's path as opened (borrowed). */
const char *kj__store_path(struct kj_store *s);

/* The schema version the store was found at when it was opened (before
 * an upgrade; a new store's: this judge's). */
long long kj__store_version(struct kj_store *s);

/* file:PATH?QUERY, PATH percent-encoded, into out: 0, or -1 when it does
 * not fit. */
int kj__store_uri(const char *path, const char *query, char *out, size_t size);

/*
 * Re-key a store of schema version 2 or older (tasks keyed by content
 * alone) inside the caller's transaction: every task by its name, path and
 * old key; every attempt whose old key this judge makes again from its row
 * and its run (version, settings) under its task's new key, with its case
 * results and timings.  KJ_OK, or a code with err filled (the caller rolls
 * back).
 */
int kj__store_rekey(sqlite3 *db, struct kj_error *err);

/*
 * The tasks' audits (audit.c).  kj__store_audit_upgrade: the tables of
 * schema version 4 made in an older store, inside the caller's
 * transaction.  kj__store_has_audits: whether schema ("main", "kj_src")
 * holds them (a store of before version 4 read as it is does not).
 * kj__store_audit_merge: the source's audits (attached as kj_src, its runs
 * mapped in temp.kj_runmap) into main, inside the merge's transaction: a
 * source holding a value no judge writes is refused (KJ_ESTORE, src its
 * name); an audit main lacks, or holds as not proven where the source's
 * is proven, taken with its canaries.  kj__store_audits_of_run: the latest
 * audit (valid rows only) of each task of run_id's suite, as {TASK_KEY:
 * {"verdict", "reasons": [...], "canaries": {NAME: OUTCOME}, "device"}},
 * a new reference into *out.  KJ_OK, or a code with err filled.
 */
int kj__store_audit_upgrade(sqlite3 *db, struct kj_error *err);
int kj__store_has_audits(sqlite3 *db, const char *schema);
int kj__store_audit_merge(sqlite3 *db, const char *src, struct kj_error *err);
int kj__store_audits_of_run(sqlite3 *db, long long run_id, json_t **out, struct kj_error *err);

#endif /* KJ_STORE_INTERNAL_H */
