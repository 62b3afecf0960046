/*
 * test_store.c - opening the results store (lib/store/store.c): a fresh
 * file gets the schema, a second open finds it, and a file that is not a
 * store (text, another program's SQLite, a newer schema, a trimmed store, a
 * corrupt one, one locked by another writer) is refused with its reason and
 * left as it was; the keys, and a store of schema 2 re-keyed when opened for
 * writing or merged; and no output of a command replaces a store
 * (kj_output_check, kj_write_file_atomic).
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
#include "unit.h"
#include "base/fs.h"

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
	return kj_test_store_int(s, sql);
}

KJ_TEST(store_create_then_reopen)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	const char *p = kj_test_path("r.db");

	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_READONLY, 0, &s, &err), KJ_ENOENT);
	KJ_CHECK(s == NULL);
	KJ_CHECK_INT(kj_store_open(p, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM sqlite_schema WHERE type = 'table'"), 10);
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

/* --- keys, and a store of schema 2 re-keyed -------------------------------------------------- */

static void text_of(struct kj_store *s, const char *sql, char *out, size_t size)
{
	sqlite3_stmt *st = NULL;

	*out = '\0';
	KJ_CHECK(sqlite3_prepare_v2(kj__store_db(s), sql, -1, &st, NULL) == SQLITE_OK);
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		snprintf(out, size, "%s", (const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
}

KJ_TEST(store_keys_name_the_task)
{
	static const char zero[] = "0000000000000000000000000000000000000000000000000000000000000000";
	static const char one[] = "1111111111111111111111111111111111111111111111111111111111111111";
	char k1[65], k2[65], a[65];

	/* Known answers: a change of either formula makes every stored key
	 * another, and a resume judges a whole study again. */
	KJ_CHECK_INT(kj__store_task_key("relu", "ops/relu_torch.py", zero, k1), 0);
	KJ_CHECK_STR(k1, "58c6326775801f74f3e44d4aaddafa2799a29e138bf18aeb8c7fb60b0ed486f0");
	KJ_CHECK_INT(kj__store_attempt_key(k1, one, "m", "0", "cpu", "0.1.0", "{}", a), 0);
	KJ_CHECK_STR(a, "143ccd69f0ab6ae28fd87c7599c409f591c1509fbbb860e4905ebb9bd58b2917");
	/* The same bytes under another name, or at another path: another
	 * task. */
	KJ_CHECK_INT(kj__store_task_key("relu2", "ops/relu_torch.py", zero, k2), 0);
	KJ_CHECK(strcmp(k1, k2) != 0);
	KJ_CHECK_INT(kj__store_task_key("relu", "ops2/relu_torch.py", zero, k2), 0);
	KJ_CHECK(strcmp(k1, k2) != 0);
	/* Lengths first: a name cannot borrow the path's bytes. */
	KJ_CHECK_INT(kj__store_task_key("relu\n4:ops", "x", zero, k1), 0);
	KJ_CHECK_INT(kj__store_task_key("relu", "ops\n1:x", zero, k2), 0);
	KJ_CHECK(strcmp(k1, k2) != 0);
}

/*
 * A store as schema 2 wrote it: tasks keyed by content, two attempts whose
 * keys the judge makes again (one with a case and a timing), one whose key
 * it does not, one whose task row bears another name (two tasks of the same
 * bytes shared it).
 */
static void old_store(const char *path, char old_task[65], char old_a1[65])
{
	static const char content[] = "cccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccccc";
	static const char cand[] = "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd";
	static const char settings[] = "{\"device\":\"cpu\",\"timeout_s\":30}";
	struct kj_store *s = NULL;
	struct kj_error err;
	char sql[4096], a3[65];

	memcpy(old_task, content, 65);
	KJ_CHECK_INT(kj__store_attempt_key(content, cand, "m", "0", "cpu", "0.1.0", settings,
					   old_a1), 0);
	KJ_CHECK_INT(kj__store_attempt_key(content, cand, "m", "1", "cpu", "0.1.0", settings,
					   a3), 0);
	KJ_CHECK_OK(kj_store_open(path, KJ_STORE_CREATE, 0, &s, &err), &err);
#define ATT "INSERT INTO attempts (attempt_key, run_id, task_key, task, model, attempt, " \
	"cand_sha256, origin, device, state, status, started_at) VALUES "
	snprintf(sql, sizeof(sql),
		 "INSERT INTO runs (started_at, judge_version, command, suite, candidates, "
		 "settings) VALUES ('t', '0.1.0', '[]', 's', 'c', '%s');"
		 "INSERT INTO tasks (task_key, name, path, task_sha256, source) VALUES "
		 "('%s', 'relu', 'ops/relu_torch.py', 'x', 'src'),"
		 "('eeee', 'other', 'ops/other_torch.py', 'y', 'src');"
		 "INSERT INTO suite_tasks VALUES (1, '%s'), (1, 'eeee');"
		 "INSERT INTO candidates VALUES ('%s', 'x = 1');"
		 ATT "('%s', 1, '%s', 'relu', 'm', '0', '%s', 'o', 'cpu', 'done', 'pass', 't'),"
		 "('ffff', 1, 'eeee', 'other', 'm', '0', '%s', 'o', 'cpu', 'done', 'fail', 't'),"
		 "('%s', 1, '%s', 'relu2', 'm', '1', '%s', 'o', 'cpu', 'done', 'pass', 't');"
		 "INSERT INTO case_results (attempt_key, phase, case_idx, status) VALUES "
		 "('%s', 'verify', 1, 'pass');"
		 "INSERT INTO timings (attempt_key, case_idx, impl_ms) VALUES ('%s', 1, 2.0);"
		 "UPDATE meta SET value = '2' WHERE key = 'schema_version';"
		 "PRAGMA user_version = 2;",
		 settings, content, content, cand, old_a1, content, cand, cand, a3, content, cand,
		 old_a1, old_a1);
#undef ATT
	KJ_CHECK_OK(kj_store_exec(s, sql, &err), &err);
	kj_store_close(s);
}

/* What a re-keyed store of old_store holds. */
static void check_rekeyed(struct kj_store *s, const char *old_task, const char *old_a1)
{
	static const char cand[] = "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd";
	char task[65], a1[65], got[128], sql[512];

	KJ_CHECK_INT(kj__store_task_key("relu", "ops/relu_torch.py", old_task, task), 0);
	KJ_CHECK_INT(kj__store_attempt_key(task, cand, "m", "0", "cpu", "0.1.0",
					   "{\"device\":\"cpu\",\"timeout_s\":30}", a1), 0);
	text_of(s, "SELECT task_key FROM tasks WHERE name = 'relu'", got, sizeof(got));
	KJ_CHECK_STR(got, task);
	text_of(s, "SELECT attempt_key FROM attempts WHERE task = 'relu'", got, sizeof(got));
	KJ_CHECK_STR(got, a1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM case_results c JOIN timings t USING "
		 "(attempt_key) WHERE attempt_key = '%s'", a1);
	KJ_CHECK_INT(count(s, sql), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM attempts WHERE attempt_key = '%s'",
		 old_a1);
	KJ_CHECK_INT(count(s, sql), 0);
	/* Keys it cannot make again are kept; their task follows its row. */
	text_of(s, "SELECT task_key FROM attempts WHERE attempt_key = 'ffff'", got, sizeof(got));
	KJ_CHECK(strlen(got) == 64 && strcmp(got, "eeee") != 0);
	/* The attempt of a task whose row bears another name keeps its key
	 * (a resume judges it afresh). */
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM attempts WHERE task = 'relu2' AND "
			   "attempt = '1' AND task_key = (SELECT task_key FROM tasks WHERE name = "
			   "'relu')"), 1);
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM suite_tasks WHERE task_key = '%s'", task);
	KJ_CHECK_INT(count(s, sql), 1);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM pragma_foreign_key_check"), 0);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM attempts"), 3);
}

KJ_TEST(store_of_schema_2_is_rekeyed)
{
	struct kj_store *s = NULL, *t = NULL;
	struct kj_store_merge_stats st;
	struct kj_error err;
	char p[4096], copy[4096], old_task[65], old_a1[65], cmd[8300];

	snprintf(p, sizeof(p), "%s", kj_test_path("v2.db"));
	snprintf(copy, sizeof(copy), "%s", kj_test_path("v2-copy.db"));
	old_store(p, old_task, old_a1);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", p, copy);
	KJ_CHECK(system(cmd) == 0);

	/* Read as it is: its keys are its own. */
	KJ_CHECK_OK(kj_store_open(p, KJ_STORE_READONLY, 0, &s, &err), &err);
	KJ_CHECK_INT(count(s, "PRAGMA user_version"), 2);
	kj_store_close(s);

	/* Opened for writing: brought to this judge's version (3 re-keyed
	 * it, 4 added timings.sol_ms), every key made again. */
	KJ_CHECK_OK(kj_store_open(p, 0, 0, &s, &err), &err);
	KJ_CHECK_INT(count(s, "PRAGMA user_version"), KJ_STORE_SCHEMA_VERSION);
	KJ_CHECK_INT(count(s, "SELECT value FROM meta WHERE key = 'schema_version'"),
		     KJ_STORE_SCHEMA_VERSION);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM pragma_table_info('timings') WHERE name = "
			   "'sol_ms'"), 1);
	check_rekeyed(s, old_task, old_a1);
	kj_store_close(s);

	/* Merged as a source: re-keyed in a copy, the source left as it was,
	 * no copy left behind; merged twice, nothing new. */
	KJ_CHECK_OK(kj_store_open(kj_test_path("v3.db"), KJ_STORE_CREATE, 0, &t, &err), &err);
	KJ_CHECK_OK(kj_store_merge(t, copy, &st, &err), &err);
	KJ_CHECK_INT((int)st.attempts_new, 3);
	check_rekeyed(t, old_task, old_a1);
	KJ_CHECK_OK(kj_store_merge(t, copy, &st, &err), &err);
	KJ_CHECK_INT((int)st.attempts_new, 0);
	KJ_CHECK_INT(count(t, "SELECT count(*) FROM runs"), 1);
	kj_store_close(t);
	KJ_CHECK_OK(kj_store_open(copy, KJ_STORE_READONLY, 0, &s, &err), &err);
	KJ_CHECK_INT(count(s, "PRAGMA user_version"), 2);
	kj_store_close(s);
	snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q upgrade", kj_test_tmpdir());
	KJ_CHECK(system(cmd) != 0);
}

/* kj_output_check's verdict on path (with keep), and the message's hint. */
static int output_refused(const char *path, const char *keep, const char *hint)
{
	struct kj_error err;
	int rc = kj_output_check(path, keep, &err);

	if (rc != KJ_OK && hint && !strstr(err.msg, hint))
		kj_test_fail(__FILE__, __LINE__, "'%s' refused without '%s': %s", path, hint,
			     err.msg);
	return rc != KJ_OK;
}

KJ_TEST(store_never_replaced_by_an_output)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	char db[4200], p[4300], q[4300];
	struct stat before, after;
	sqlite3 *other = NULL;

	snprintf(db, sizeof(db), "%s", kj_test_path("s.db"));
	KJ_CHECK_INT(kj_store_open(db, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(kj_store_exec(s, "INSERT INTO candidates VALUES ('ab', 'x = 1')", &err),
		     KJ_OK);
	/* The store itself, however it is spelled or linked (open, its header
	 * may not say yet whose it is: the application id is in the log). */
	KJ_CHECK(output_refused(db, NULL, "would replace"));
	snprintf(p, sizeof(p), "%s/./s.db", kj_test_tmpdir());
	KJ_CHECK(output_refused(p, NULL, "would replace"));
	snprintf(p, sizeof(p), "%s/link.db", kj_test_tmpdir());
	KJ_CHECK(symlink(db, p) == 0);
	KJ_CHECK(output_refused(p, NULL, "would replace"));
	snprintf(p, sizeof(p), "%s/hard.db", kj_test_tmpdir());
	KJ_CHECK(link(db, p) == 0);
	KJ_CHECK(output_refused(p, NULL, "would replace"));
	/* Its companions, there (the store is open: -wal and -shm exist) or
	 * not (-journal). */
	snprintf(p, sizeof(p), "%s-wal", db);
	KJ_CHECK(access(p, F_OK) == 0);
	KJ_CHECK(output_refused(p, NULL, "write-ahead log"));
	snprintf(p, sizeof(p), "%s-shm", db);
	KJ_CHECK(output_refused(p, NULL, "the 'shm' file of"));
	snprintf(p, sizeof(p), "%s-journal", db);
	KJ_CHECK(access(p, F_OK) != 0);
	KJ_CHECK(output_refused(p, NULL, "the 'journal' file of"));
	/* Another name of the log: its magic number; of the -shm (which has
	 * none): its device and inode, against the store the command reads. */
	snprintf(p, sizeof(p), "%s-wal", db);
	snprintf(q, sizeof(q), "%s/log-copy", kj_test_tmpdir());
	KJ_CHECK(link(p, q) == 0);
	KJ_CHECK(output_refused(q, NULL, "write-ahead log"));
	snprintf(p, sizeof(p), "%s-shm", db);
	snprintf(q, sizeof(q), "%s/index-copy", kj_test_tmpdir());
	KJ_CHECK(link(p, q) == 0);
	KJ_CHECK(!output_refused(q, NULL, NULL));
	KJ_CHECK(output_refused(q, db, "the store this command reads"));
	/* Any other program's SQLite file too. */
	snprintf(p, sizeof(p), "%s/other.sqlite", kj_test_tmpdir());
	KJ_CHECK(sqlite3_open(p, &other) == SQLITE_OK);
	KJ_CHECK(sqlite3_exec(other, "CREATE TABLE t (a)", NULL, NULL, NULL) == SQLITE_OK);
	sqlite3_close(other);
	KJ_CHECK(output_refused(p, NULL, "an SQLite database"));
	/* What is not a regular file; a FIFO is not opened (no reader: an
	 * open for reading without O_NONBLOCK would block). */
	KJ_CHECK(output_refused(kj_test_tmpdir(), NULL, "a directory"));
	snprintf(p, sizeof(p), "%s/fifo", kj_test_tmpdir());
	KJ_CHECK(mkfifo(p, 0600) == 0);
	KJ_CHECK(output_refused(p, NULL, "not a regular file"));
	/* What may be written: nothing there, a file of text. */
	snprintf(p, sizeof(p), "%s/report.md", kj_test_tmpdir());
	KJ_CHECK(!output_refused(p, db, NULL));
	write_file(p, "# old report\n");
	KJ_CHECK(!output_refused(p, db, NULL));
	KJ_CHECK_OK(kj_write_file_atomic(p, "new\n", 4, &err), &err);

	/* The atomic writer itself refuses: the store is left byte for byte,
	 * and no temporary file beside it. */
	KJ_CHECK(stat(db, &before) == 0);
	KJ_CHECK_INT(kj_write_file_atomic(db, "# report\n", 9, &err), KJ_EINVAL);
	KJ_CHECK(strstr(err.msg, "would replace") != NULL);
	snprintf(p, sizeof(p), "%s/link.db", kj_test_tmpdir());
	KJ_CHECK_INT(kj_write_file_atomic(p, "# report\n", 9, &err), KJ_EINVAL);
	KJ_CHECK(stat(db, &after) == 0);
	/* The writer of a name under a directory (skill's) too. */
	{
		int dfd = open(kj_test_tmpdir(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);

		KJ_CHECK(dfd >= 0);
		KJ_CHECK_INT(kj__write_file_at(dfd, "s.db", "x\n", 2, 0644, &err), KJ_EINVAL);
		KJ_CHECK(strstr(err.msg, "would replace") != NULL);
		KJ_CHECK_OK(kj__write_file_at(dfd, "script.py", "x\n", 2, 0644, &err), &err);
		close(dfd);
	}
	KJ_CHECK(before.st_ino == after.st_ino && before.st_size == after.st_size);
	KJ_CHECK(stat(db, &after) == 0 && before.st_ino == after.st_ino);
	KJ_CHECK_INT(count(s, "SELECT count(*) FROM candidates"), 1);
	kj_store_close(s);
	/* Closed (checkpointed), its header names it; its log is gone, and
	 * its name is still refused. */
	KJ_CHECK(output_refused(db, NULL, "would replace a kjudge results store"));
	snprintf(p, sizeof(p), "%s-wal", db);
	KJ_CHECK(access(p, F_OK) != 0);
	KJ_CHECK(output_refused(p, NULL, "the 'wal' file of"));
	{
		char cmd[4400];

		snprintf(cmd, sizeof(cmd), "ls '%s' | grep -q tmp", kj_test_tmpdir());
		KJ_CHECK(system(cmd) != 0);
	}
}

/* A full file system is named by its mount point, whoever met it: a
 * write of the library's (kj_error_write) or the store's SQLite. */
KJ_TEST(store_full_disk_is_named)
{
	struct kj_store *s = NULL;
	struct kj_error err;
	char path[4200], want[4300];

	KJ_CHECK_INT(kj_err_from_errno(ENOSPC), KJ_ENOSPC);
	KJ_CHECK_INT(kj_err_from_errno(EDQUOT), KJ_ENOSPC);
	/* A file that does not exist yet, in a folder that does not either:
	 * the nearest folder that does names the file system. */
	snprintf(path, sizeof(path), "%s/not/yet/out.json", kj_test_tmpdir());
	KJ_CHECK_INT(kj_error_write(&err, ENOSPC, path, "cannot write"), KJ_ENOSPC);
	snprintf(want, sizeof(want), "'%s': cannot write: no space left on /", path);
	KJ_CHECK(strncmp(err.msg, want, strlen(want)) == 0);
	KJ_CHECK(strchr(err.msg, '(') != NULL); /* (source, type) */
	KJ_CHECK_INT(kj_error_write(&err, EDQUOT, path, "cannot write"), KJ_ENOSPC);
	KJ_CHECK(strstr(err.msg, ": disk quota exceeded on /") != NULL);
	KJ_CHECK_INT(kj_error_write(&err, EACCES, path, "cannot write"), KJ_EACCES);
	KJ_CHECK(strstr(err.msg, "cannot write: Permission denied") != NULL);

	snprintf(path, sizeof(path), "%s/full.db", kj_test_tmpdir());
	KJ_CHECK_INT(kj_store_open(path, KJ_STORE_CREATE, 0, &s, &err), KJ_OK);
	KJ_CHECK_INT(kj__store_fail(kj__store_db(s), SQLITE_FULL, &err, "merge"), KJ_ENOSPC);
	KJ_CHECK(strncmp(err.msg, "merge: no space left on /", 25) == 0);
	KJ_CHECK_INT(kj__store_fail(kj__store_db(s), SQLITE_IOERR_WRITE, &err, "merge"), KJ_EIO);
	kj_store_close(s);
}
