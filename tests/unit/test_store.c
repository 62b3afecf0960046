/*
 * test_store.c - opening the results store (lib/store/store.c): a fresh
 * file gets the schema, a second open finds it, and a file that is not a
 * store (text, another program's SQLite, a newer schema, a trimmed store, a
 * corrupt one, one locked by another writer) is refused with its reason and
 * left as it was.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "kjudge/store.h"
#include "unit.h"

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	KJ_CHECK(f != NULL);
	fputs(text, f);
	fclose(f);
}

static void raw_exec(const char *path, const char *sql)
{
	sqlite3 *db = NULL;

	KJ_CHECK(sqlite3_open(path, &db) == SQLITE_OK);
	KJ_CHECK(sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(db);
}

static long long count(struct kj_store *s, const char *sql)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;

	KJ_CHECK(sqlite3_prepare_v2(kj_store_db(s), sql, -1, &st, NULL) == SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

KJ_TEST(store_create_then_reopen)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	const char *p = kj_test_path("r.db");

	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_READONLY, 0, &s, &err), KJ_ENOENT);
	KJ_CHECK(s == NULL);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"), 8);
	KJ_CHECK_INT(count(s, "PRAGMA user_version"), KJ_STORE_SCHEMA_VERSION);
	KJ_CHECK_INT(kj_store_exec(s, "INSERT INTO candidates VALUES ('ab', 'x = 1')", &err),
		     KJ_OK);
	/* A failing statement rolls the whole transaction back. */
	KJ_CHECK(kj_store_exec(s, "INSERT INTO candidates VALUES ('cd', 'y');"
			       "INSERT INTO nowhere VALUES (1)", &err) != KJ_OK);
	kj_store_close(s);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_READONLY, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM candidates"), 1);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM meta WHERE key = 'schema' AND "
			   "value = 'kjudge-results'"), 1);
	kj_store_close(s);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(count(s, "PRAGMA journal_mode = WAL"), 0); /* text 'wal' reads as 0 */
	kj_store_close(s);
}

KJ_TEST(store_refuses_what_is_not_a_store)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	const char *text = kj_test_path("text.db");
	char other[4096], newer[4096], trimmed[4096], base[4096];
	struct stat st;

	off_t size;

	write_file(text, "results: none, this is a text file that is long enough to have a header\n");
	KJ_CHECK(stat(text, &st) == 0);
	size = st.st_size;
	KJ_CHECK_INT(kj_store_open(text, KJ_STORE_CREATE, 0, &s, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "text.db") != NULL);
	KJ_CHECK(stat(text, &st) == 0 && st.st_size == size);

	snprintf(other, sizeof(other), "%s", kj_test_path("other.db"));
	raw_exec(other, "CREATE TABLE t (x); PRAGMA application_id = 42;");
	KJ_CHECK_INT(kj_store_open(other, KJ_STORE_CREATE, 0, &s, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "another program") != NULL);

	snprintf(base, sizeof(base), "%s", kj_test_path("plain.db"));
	raw_exec(base, "CREATE TABLE t (x);");
	KJ_CHECK_INT(kj_store_open(base, KJ_STORE_CREATE, 0, &s, &err), KJ_ESTORE);

	snprintf(newer, sizeof(newer), "%s", kj_test_path("newer.db"));
	KJ_CHECK_INT(kj_store_open(newer, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	kj_store_close(s);
	raw_exec(newer, "PRAGMA user_version = 99;");
	KJ_CHECK_INT(kj_store_open(newer, KJ_STORE_CREATE, 0, &s, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "version 99") != NULL);

	snprintf(trimmed, sizeof(trimmed), "%s", kj_test_path("trimmed.db"));
	KJ_CHECK_INT(kj_store_open(trimmed, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	kj_store_close(s);
	raw_exec(trimmed, "DROP TABLE timings;");
	KJ_CHECK_INT(kj_store_open(trimmed, KJ_STORE_CREATE, 0, &s, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "timings") != NULL);
	KJ_CHECK(s == NULL);
}

KJ_TEST(store_refuses_a_corrupt_file)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	const char *p = kj_test_path("c.db");
	char junk[4096];
	int fd, i;

	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	for (i = 0; i < 200; i++) {
		char sql[128];

		snprintf(sql, sizeof(sql), "INSERT INTO candidates VALUES ('%d', "
			 "printf('%%.2000c', 'x'))", i);
		KJ_CHECK_INT(kj_store_exec(s, sql, &err), KJ_OK);
	}
	kj_store_close(s);
	/* Overwrite pages in the middle (not the header). */
	memset(junk, 0x5a, sizeof(junk));
	fd = open(p, O_WRONLY);
	KJ_CHECK(fd >= 0);
	KJ_CHECK(pwrite(fd, junk, sizeof(junk), 8192) == (ssize_t)sizeof(junk));
	KJ_CHECK(pwrite(fd, junk, sizeof(junk), 4096 * 7) == (ssize_t)sizeof(junk));
	close(fd);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), KJ_ESTORE);
	KJ_CHECK(strstr(err.msg, "corrupt") != NULL);
}

KJ_TEST(store_locked_by_another_writer)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	const char *p = kj_test_path("l.db");
	sqlite3 *db = NULL;

	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	kj_store_close(s);
	KJ_CHECK(sqlite3_open(p, &db) == SQLITE_OK);
	KJ_CHECK(sqlite3_exec(db, "BEGIN EXCLUSIVE", NULL, NULL, NULL) == SQLITE_OK);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 200, &s, &err), KJ_EBUSY);
	KJ_CHECK(strstr(err.msg, "locked") != NULL);
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	sqlite3_close(db);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 200, &s, &err), KJ_OK);
	kj_store_close(s);
}
