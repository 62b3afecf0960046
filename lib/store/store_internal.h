/*
 * store_internal.h - what the store's modules share (lib/store/).
 */
#ifndef KJ_STORE_INTERNAL_H
#define KJ_STORE_INTERNAL_H

#include <sqlite3.h>

#include "kjudge/error.h"
#include "kjudge/store.h"

/* err from a SQLite result code rc of db (may be NULL) while doing `what`:
 * KJ_EBUSY for a lock, KJ_ENOMEM, KJ_EIO for a full disk or an I/O error,
 * else KJ_ESTORE.  Returns the code. */
int kj__store_fail(sqlite3 *db, int rc, struct kj_error *err, const char *what);

/* The store's path as opened (borrowed). */
const char *kj__store_path(struct kj_store *s);

/* file:PATH?QUERY, PATH percent-encoded, into out: 0, or -1 when it does
 * not fit. */
int kj__store_uri(const char *path, const char *query, char *out, size_t size);

#endif /* KJ_STORE_INTERNAL_H */
