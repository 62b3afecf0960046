/*
 * store_internal.h - what the store's modules share (lib/store/).
 */
#ifndef KJ_STORE_INTERNAL_H
#define KJ_STORE_INTERNAL_H

#include <sqlite3.h>

#include "kjudge/error.h"

/* err from a SQLite result code rc of db (may be NULL) while doing `what`:
 * KJ_EBUSY for a lock, KJ_ENOMEM, KJ_EIO for a full disk or an I/O error,
 * else KJ_ESTORE.  Returns the code. */
int kj__store_fail(sqlite3 *db, int rc, struct kj_error *err, const char *what);

#endif /* KJ_STORE_INTERNAL_H */
