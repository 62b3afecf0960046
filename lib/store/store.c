/*
 * store.c - the results store: opening, checking and creating the SQLite
 * file (kjudge/store.h; the schema is lib/store/schema.sql, compiled in).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sqlite3.h>

#include "kjudge/store.h"
#include "store/store_internal.h"
#include "base/internal.h"

extern const char kj__store_schema[];
extern const size_t kj__store_schema_len;

struct kj_store {
	sqlite3 *db;
	int readonly;
	long long version;      /* the schema version it was opened at */
	char path[4096];
};

const char *kj_store_schema_sql(void)
{
	return kj__store_schema;
}

sqlite3 *kj__store_db(struct kj_store *s)
{
	return s->db;
}

const char *kj__store_path(struct kj_store *s)
{
	return s->path;
}

long long kj__store_version(struct kj_store *s)
{
	return s->version;
}

/* The store's error from SQLite's: KJ_EBUSY for a lock, KJ_ENOMEM,
 * KJ_ENOSPC for a full file system, else KJ_ESTORE or KJ_EIO, with what was
 * being done and SQLite's words. */
int kj__store_fail(sqlite3 *db, int rc, struct kj_error *err, const char *what)
{
	const char *msg = db ? sqlite3_errmsg(db) : sqlite3_errstr(rc);
	int prim = rc & 0xff, sys = db ? sqlite3_system_errno(db) : 0;

	/* A full file system: SQLITE_FULL where SQLite saw it as such, else an
	 * I/O error whose system error says so (the -shm file that cannot
	 * grow is SQLITE_IOERR_SHMSIZE, "disk I/O error"). */
	if (prim == SQLITE_FULL || (prim == SQLITE_IOERR && (sys == ENOSPC || sys == EDQUOT))) {
		const char *file = db ? sqlite3_db_filename(db, "main") : NULL;
		char where[4800];

		kj__nospace_text(sys == EDQUOT ? EDQUOT : ENOSPC, file && *file ? file : what,
				 where, sizeof(where));
		return kj_error_set(err, KJ_ENOSPC, "%s: %s", what, where);
	}

	if (prim == SQLITE_BUSY || prim == SQLITE_LOCKED)
		return kj_error_set(err, KJ_EBUSY, "%s: the store is locked by another "
				    "process (%s)", what, msg);
	if (prim == SQLITE_NOMEM)
		return kj_error_set(err, KJ_ENOMEM, "%s: out of memory", what);
	if (prim == SQLITE_NOTADB || prim == SQLITE_CORRUPT)
		return kj_error_set(err, KJ_ESTORE, "%s: not a readable SQLite database, or a "
				    "corrupt one (%s)", what, msg);
	if (prim == SQLITE_FULL || prim == SQLITE_IOERR)
		return kj_error_set(err, KJ_EIO, "%s: %s", what, msg);
	return kj_error_set(err, KJ_ESTORE, "%s: %s", what, msg);
}

/* The store's one pair of transaction helpers: every write of its modules
 * (write.c) and kj_store_exec begin and end through them. */
int kj__store_begin(struct kj_store *s, struct kj_error *err)
{
	sqlite3 *db = s->db;
	int rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, NULL);

	return rc == SQLITE_OK ? KJ_OK : kj__store_fail(db, rc, err, "the results store");
}

int kj__store_commit(struct kj_store *s, int rc, struct kj_error *err)
{
	sqlite3 *db = s->db;

	if (rc == KJ_OK) {
		int r = sqlite3_exec(db, "COMMIT", NULL, NULL, NULL);

		if (r == SQLITE_OK)
			return KJ_OK;
		rc = kj__store_fail(db, r, err, "the results store: commit");
	}
	sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

int kj_store_exec(struct kj_store *s, const char *sql, struct kj_error *err)
{
	int rc = kj__store_begin(s, err);

	if (rc != KJ_OK)
		return rc;
	rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		rc = kj__store_fail(s->db, rc, err, s->path);
	return kj__store_commit(s, rc, err);
}

/* One integer from a one-row query; -1 on error. */
static long long pragma_int(sqlite3 *db, const char *sql, int *rc_out)
{
	sqlite3_stmt *st = NULL;
	long long v = -1;
	int rc = sqlite3_prepare_v2(db, sql, -1, &st, NULL);

	if (rc == SQLITE_OK) {
		rc = sqlite3_step(st);
		if (rc == SQLITE_ROW) {
			v = sqlite3_column_int64(st, 0);
			rc = SQLITE_OK;
		}
	}
	sqlite3_finalize(st);
	*rc_out = rc;
	return v;
}

/* Every table of the schema is there (a store someone trimmed by hand, or a
 * file that only borrowed the application id, is refused). */
static int check_tables(struct kj_store *s, long long version, struct kj_error *err)
{
	static const char *const tables[] = { "meta", "runs", "tasks", "suite_tasks",
					      "candidates", "attempts", "case_results",
					      "timings", "task_audits", "audit_canaries" };
	/* The audits' tables are version 4's: an older store is read without. */
	size_t i, n = sizeof(tables) / sizeof(tables[0]) - (version < 4 ? 2 : 0);

	for (i = 0; i < n; i++) {
		sqlite3_stmt *st = NULL;
		int rc = sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_schema WHERE type = "
					    "'table' AND name = ?", -1, &st, NULL);

		if (rc == SQLITE_OK)
			rc = sqlite3_bind_text(st, 1, tables[i], -1, SQLITE_STATIC);
		if (rc == SQLITE_OK)
			rc = sqlite3_step(st);
		sqlite3_finalize(st);
		if (rc == SQLITE_DONE)
			return kj_error_set(err, KJ_ESTORE, "'%s': a kjudge store without its "
					    "'%s' table: damaged, not written by kjudge", s->path,
					    tables[i]);
		if (rc != SQLITE_ROW)
			return kj__store_fail(s->db, rc, err, s->path);
	}
	return KJ_OK;
}

static int create_schema(struct kj_store *s, struct kj_error *err)
{
	char *sql;
	int rc;
	size_t n = kj__store_schema_len + 512;

	sql = malloc(n);
	if (!sql)
		return kj_error_set(err, KJ_ENOMEM, "'%s': out of memory", s->path);
	snprintf(sql, n,
		 "%s\n"
		 "INSERT INTO meta VALUES ('schema', 'kjudge-results');\n"
		 "INSERT INTO meta VALUES ('schema_version', '%d');\n"
		 "INSERT INTO meta VALUES ('created_by', 'kjudge %s');\n"
		 "PRAGMA application_id = %d;\n"
		 "PRAGMA user_version = %d;\n",
		 kj__store_schema, KJ_STORE_SCHEMA_VERSION, KJ_VERSION,
		 KJ_STORE_APPLICATION_ID, KJ_STORE_SCHEMA_VERSION);
	rc = kj_store_exec(s, sql, err);
	free(sql);
	return rc;
}

/* What the file is: a fresh one (no tables: 1), a kjudge store this judge
 * can use (0), or an error. */
static int identify(struct kj_store *s, int *fresh, long long *version, struct kj_error *err)
{
	long long app, ver, tables;
	int rc;

	/* Reading the header is the first access: a file that is not SQLite
	 * fails here (SQLITE_NOTADB). */
	tables = pragma_int(s->db, "SELECT count(*) FROM sqlite_schema", &rc);
	if (rc != SQLITE_OK)
		return kj__store_fail(s->db, rc, err, s->path);
	app = pragma_int(s->db, "PRAGMA application_id", &rc);
	if (rc != SQLITE_OK)
		return kj__store_fail(s->db, rc, err, s->path);
	ver = pragma_int(s->db, "PRAGMA user_version", &rc);
	if (rc != SQLITE_OK)
		return kj__store_fail(s->db, rc, err, s->path);
	*fresh = tables == 0 && app == 0 && ver == 0;
	*version = ver;
	if (*fresh)
		return KJ_OK;
	if (app != KJ_STORE_APPLICATION_ID)
		return kj_error_set(err, KJ_ESTORE, "'%s': a SQLite database of another program "
				    "(application_id %lld), not a kjudge results store; kjudge "
				    "leaves it as it is", s->path, app);
	if (ver > KJ_STORE_SCHEMA_VERSION || ver < 1)
		return kj_error_set(err, KJ_ESTORE, "'%s': a kjudge store of schema version %lld; "
				    "this judge reads version %d", s->path, ver,
				    KJ_STORE_SCHEMA_VERSION);
	return check_tables(s, ver, err);
}

/* Version 5: each timed case's speed of light, timings.sol_ms; an older
 * store's timings read with it unknown (NULL).  The re-keying of version 3
 * makes the tables anew, with the column already. */
static int upgrade_sol(struct kj_store *s, struct kj_error *err)
{
	long long have;
	int rc;

	have = pragma_int(s->db, "SELECT count(*) FROM pragma_table_info('timings') WHERE name "
			  "= 'sol_ms'", &rc);
	if (rc == SQLITE_OK && have == 0)
		rc = sqlite3_exec(s->db, "ALTER TABLE timings ADD COLUMN sol_ms REAL;", NULL, NULL,
				  NULL);
	return rc == SQLITE_OK ? KJ_OK : kj__store_fail(s->db, rc, err, s->path);
}

/*
 * A store of an older version brought to this one, in one transaction: a
 * judge killed meanwhile leaves it as it was.  Version 2 added runs.origin;
 * version 3 keys tasks by name as well as content (keys.c), so every task
 * and attempt of an older store is re-keyed; version 4 added the tasks'
 * audits (audit.c); version 5 timings.sol_ms.
 */
static int upgrade(struct kj_store *s, long long version, struct kj_error *err)
{
	char sql[256];
	int rc;

	rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL);
	if (rc != SQLITE_OK)
		return kj__store_fail(s->db, rc, err, s->path);
	if (version < 2)
		rc = sqlite3_exec(s->db, "ALTER TABLE runs ADD COLUMN origin TEXT;\n"
				  "CREATE UNIQUE INDEX runs_by_origin ON runs (origin);", NULL,
				  NULL, NULL);
	rc = rc == SQLITE_OK ? KJ_OK : kj__store_fail(s->db, rc, err, s->path);
	if (rc == KJ_OK && version < 3)
		rc = kj__store_rekey(s->db, err);
	if (rc == KJ_OK && version < 4)
		rc = kj__store_audit_upgrade(s->db, err);
	if (rc == KJ_OK && version < 5)
		rc = upgrade_sol(s, err);
	if (rc == KJ_OK) {
		snprintf(sql, sizeof(sql), "UPDATE meta SET value = '%d' WHERE key = "
			 "'schema_version';\nPRAGMA user_version = %d;\nCOMMIT;",
			 KJ_STORE_SCHEMA_VERSION, KJ_STORE_SCHEMA_VERSION);
		rc = sqlite3_exec(s->db, sql, NULL, NULL, NULL);
		rc = rc == SQLITE_OK ? KJ_OK : kj__store_fail(s->db, rc, err, s->path);
	}
	if (rc != KJ_OK)
		sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
	return rc;
}

/* quick_check: a store whose pages are damaged is refused before anything
 * is read from it or written to it. */
static int integrity(struct kj_store *s, struct kj_error *err)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *first = NULL;
	char what[256] = "";
	int rc = sqlite3_prepare_v2(s->db, "PRAGMA quick_check(1)", -1, &st, NULL);

	if (rc == SQLITE_OK)
		rc = sqlite3_step(st);
	if (rc == SQLITE_ROW) {
		first = sqlite3_column_text(st, 0);
		snprintf(what, sizeof(what), "%s", first ? (const char *)first : "?");
		rc = SQLITE_OK;
	}
	sqlite3_finalize(st);
	if (rc != SQLITE_OK)
		return kj__store_fail(s->db, rc, err, s->path);
	if (strcmp(what, "ok") != 0)
		return kj_error_set(err, KJ_ESTORE, "'%s': the store is corrupt (%.200s)",
				    s->path, what);
	return KJ_OK;
}

int kj_store_open(const char *path, int flags, int busy_ms, struct kj_store **out,
		  struct kj_error *err)
{
	struct kj_store *s;
	struct stat st;
	int rc, fresh = 0, oflags, created = 0;
	long long version = 0;
	char uri[8192];

	*out = NULL;
	if (!path || !*path)
		return kj_error_set(err, KJ_EINVAL, "no results store named");
	if (stat(path, &st) == 0) {
		if (!S_ISREG(st.st_mode))
			return kj_error_set(err, KJ_ESTORE, "'%s': the store is not a regular "
					    "file", path);
	} else if (errno != ENOENT) {
		return kj_error_set(err, kj_err_from_errno(errno), "'%s': %s", path,
				    strerror(errno));
	} else if (!(flags & KJ_STORE_CREATE) || (flags & KJ_STORE_READONLY)) {
		return kj_error_set(err, KJ_ENOENT, "'%s': no such results store", path);
	} else {
		created = 1;
	}
	s = calloc(1, sizeof(*s));
	if (!s)
		return kj_error_set(err, KJ_ENOMEM, "'%s': out of memory", path);
	snprintf(s->path, sizeof(s->path), "%s", path);
	s->readonly = !!(flags & KJ_STORE_READONLY);
	oflags = s->readonly ? SQLITE_OPEN_READONLY
			     : SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE;
	/* As a URI (the path escaped: a name is never read as options), so
	 * that kjudge merge can attach a source read-only. */
	if (kj__store_uri(path, NULL, uri, sizeof(uri)) < 0) {
		free(s);
		return kj_error_set(err, KJ_EINVAL, "'%s': path too long", path);
	}
	rc = sqlite3_open_v2(uri, &s->db, oflags | SQLITE_OPEN_NOMUTEX | SQLITE_OPEN_URI, NULL);
	if (rc != SQLITE_OK) {
		rc = kj__store_fail(s->db, rc, err, path);
		goto fail;
	}
	sqlite3_extended_result_codes(s->db, 1);
	sqlite3_busy_timeout(s->db, busy_ms > 0 ? busy_ms : 5000);
	rc = identify(s, &fresh, &version, err);
	if (rc != KJ_OK)
		goto fail;
	s->version = fresh ? KJ_STORE_SCHEMA_VERSION : version;
	if (!s->readonly) {
		/* WAL: readers (kjudge report) never block the writer, and a
		 * commit is durable once synced (FULL: the WAL is synced at
		 * every commit, so a kill -9 or a power cut loses nothing
		 * committed). */
		rc = sqlite3_exec(s->db, "PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;"
				  " PRAGMA foreign_keys = ON;", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			rc = kj__store_fail(s->db, rc, err, path);
			goto fail;
		}
		/* A writer that holds the lock is found now, not at the first
		 * result: take the write lock once and let it go. */
		rc = sqlite3_exec(s->db, "BEGIN IMMEDIATE; COMMIT;", NULL, NULL, NULL);
		if (rc != SQLITE_OK) {
			rc = kj__store_fail(s->db, rc, err, path);
			sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
			goto fail;
		}
	}
	if (fresh) {
		if (s->readonly) {
			rc = kj_error_set(err, KJ_ESTORE, "'%s': an empty file, not a kjudge "
					  "results store", path);
			goto fail;
		}
		rc = create_schema(s, err);
		if (rc != KJ_OK)
			goto fail;
	} else {
		rc = integrity(s, err);
		if (rc == KJ_OK && !s->readonly && version < KJ_STORE_SCHEMA_VERSION)
			rc = upgrade(s, version, err);
		if (rc != KJ_OK)
			goto fail;
	}
	*out = s;
	return KJ_OK;
fail:
	sqlite3_close_v2(s->db);
	/* A store this call created and could not begin for a full disk is
	 * not left behind as an empty file: it goes with its companions.  Only
	 * then: a file another judge created meanwhile (a lock) is its own. */
	if (created && rc == KJ_ENOSPC && stat(s->path, &st) == 0 && st.st_size == 0) {
		static const char *const side[] = { "", "-wal", "-shm", "-journal" };
		char name[sizeof(s->path) + 16];
		size_t i;

		for (i = 0; i < sizeof(side) / sizeof(side[0]); i++) {
			snprintf(name, sizeof(name), "%s%s", s->path, side[i]);
			unlink(name);
		}
	}
	free(s);
	return rc;
}

void kj_store_close(struct kj_store *s)
{
	if (!s)
		return;
	if (!s->readonly)
		sqlite3_exec(s->db, "PRAGMA wal_checkpoint(TRUNCATE)", NULL, NULL, NULL);
	sqlite3_close_v2(s->db);
	free(s);
}
