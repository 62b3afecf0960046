/*
 * store_query.c - one query of a test's store, shared by the store's unit
 * tests (unit.h).
 */
#include <sqlite3.h>

#include "kjudge/store.h"
#include "store/store_internal.h"
#include "unit.h"

long long kj_test_store_int(struct kj_store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	KJ_CHECK(sqlite3_prepare_v2(kj__store_db(s), sql, -1, &st, NULL) == SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}
