/*
 * store_internal.h - what the store's modules share (lib/store/).
 */
#ifndef KJ_STORE_INTERNAL_H
#define KJ_STORE_INTERNAL_H

#include <sqlite3.h>

#include "kjudge/error.h"
#include "kjudge/store.h"

/* err from a SQLite result code rc of db (may be NULL) while doing `what`:
 * KJ_EBUSY for a lock, KJ_ENOMEM, KJ_ENOSPC for a full file system or a
 * quota (SQLITE_FULL, or an I/O error of errno ENOSPC or EDQUOT: "no space
 * left on MOUNT"), KJ_EIO for another I/O error, else KJ_ESTORE.  Returns
 * the code. */
int kj__store_fail(sqlite3 *db, int rc, struct kj_error *err, const char *what);

/* The store's path as opened (borrowed). */
const char *kj__store_path(struct kj_store *s);

/* The schema version the store was found at when it was opened (before
 * an upgrade; a new store's: this judge's). */
long long kj__store_version(struct kj_store *s);

/* file:PATH?QUERY, PATH percent-encoded, into out: 0, or -1 when it does
 * not fit. */
int kj__store_uri(const char *path, const char *query, char *out, size_t size);

/*
 * The store's keys (keys.c, docs/store.md): a task's, from its name, its
 * path in the suite and its content key; an attempt's, from its task's key,
 * its candidate's SHA-256, model, attempt label, device kind ("cpu",
 * "cuda"), the judge's version and the settings' text.  64 hex digits into
 * key: 0, or -1 when out of memory.
 */
int kj__store_task_key(const char *name, const char *path, const char *content,
		       char key[65]);
int kj__store_attempt_key(const char *task_key, const char *cand_sha256, const char *model,
			  const char *attempt, const char *device_kind, const char *version,
			  const char *settings, char key[65]);

/*
 * Re-key a store of schema version 2 or older (tasks keyed by content
 * alone) inside the caller's transaction: every task by its name, path and
 * old key; every attempt whose old key this judge makes again from its row
 * and its run (version, settings) under its task's new key, with its case
 * results and timings.  KJ_OK, or a code with err filled (the caller rolls
 * back).
 */
int kj__store_rekey(sqlite3 *db, struct kj_error *err);

#endif /* KJ_STORE_INTERNAL_H */
