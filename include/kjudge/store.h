/*
 * kjudge/store.h - the results store of `kjudge eval`: one SQLite file in
 * WAL mode that every case result is committed to before it is reported.
 *
 * Theory of operation.
 *
 *   The store is a documented, versioned schema (docs/store.md; the SQL is
 *   kj_store_schema_sql()): the runs of eval, the suite's tasks, the
 *   candidates' sources, one row per attempt (a candidate judged on a task,
 *   with its model, attempt and round, its tokens and generation time, its
 *   verdict and its anti-cheat layers), one row per case result of every
 *   phase, one per timed case.  Rows are keyed by content: a task by its
 *   name, its path in the suite and the SHA-256 of its file and of its cases
 *   file, a candidate by the SHA-256 of its source, an attempt by the hash
 *   of those, the model and attempt
 *   label, the device, the judge's version and the settings that change a
 *   verdict.  The same command run again finds the attempts already done
 *   and does not run them twice; an attempt left "running" by a judge that
 *   was killed is run again whole, its partial rows replaced in the same
 *   transaction as its first new one.
 *
 *   Only the process that opened the store writes to it (eval's parent:
 *   its judging children report to it); WAL lets `kjudge report` read while
 *   an evaluation writes.  Every write is one transaction, committed
 *   (synchronous=FULL) before the caller reports what it wrote.
 *
 * Failure handling.  A file that is not SQLite, a SQLite file of another
 * program (its application_id) or of a newer schema, a corrupt one
 * (quick_check), one locked by another writer past the busy timeout: a code
 * with err filled, the file left as it was (KJ_ESTORE; KJ_EBUSY for the lock).
 */
#ifndef KJUDGE_STORE_H
#define KJUDGE_STORE_H

#include <jansson.h>

#include "kjudge/error.h"

/* The schema this judge writes (PRAGMA user_version).  2 added
 * runs.origin (kjudge merge); 3 keys tasks by name and path as well as by
 * content.  A store of an older version opened for writing is brought to 3
 * in one transaction (its tasks and attempts re-keyed), and read as it is
 * otherwise. */
#define KJ_STORE_SCHEMA_VERSION 3
/* PRAGMA application_id of a kjudge store: "kjdg". */
#define KJ_STORE_APPLICATION_ID 0x6b6a6467
/* The largest count (tokens, a round) a store holds: 2^53, exact in a
 * double and in every JSON reader (docs/store.md, "What a row may hold"). */
#define KJ_STORE_COUNT_MAX 9007199254740992LL

struct kj_store;

/* Flags of kj_store_open. */
enum {
	KJ_STORE_CREATE = 1,    /* create the file and the schema when missing */
	KJ_STORE_READONLY = 2,  /* report: never write (nor create) */
};

/*
 * Open the store at `path`.  With KJ_STORE_CREATE a missing (or empty) file
 * gets the schema; an existing file must be a kjudge store of this schema
 * version or an older one it can read.  busy_ms: how long to wait for
 * another writer's lock (0: a default of 5000).  On success *out is the
 * caller's, released with kj_store_close(); on error *out is NULL.
 */
int kj_store_open(const char *path, int flags, int busy_ms, struct kj_store **out,
		  struct kj_error *err);

/* Close (checkpointing the WAL when this was the writer).  NULL is allowed. */
void kj_store_close(struct kj_store *s);

/* The SQLite handle, for the store's own modules (metrics, the eval
 * driver): borrowed, valid until kj_store_close. */
struct sqlite3 *kj_store_db(struct kj_store *s);

/* The schema's SQL (static storage): what docs/store.md documents. */
const char *kj_store_schema_sql(void);

/*
 * err from the SQLite result code rc of db (a store's kj_store_db), for
 * statements the store's users run themselves: KJ_EBUSY for a lock,
 * KJ_ENOMEM, KJ_ENOSPC for a full file system or a quota ("WHAT: no space
 * left on MOUNT (SOURCE, TYPE)"), KJ_EIO for another I/O error, KJ_ESTORE
 * otherwise, with `what` and SQLite's words.  Returns the code.
 */
int kj_store_error(struct sqlite3 *db, int rc, const char *what, struct kj_error *err);

/*
 * Run `sql` (one or more statements, no results) as one transaction:
 * BEGIN IMMEDIATE ... COMMIT, rolled back on any error.  For the store's
 * modules and tests.
 */
int kj_store_exec(struct kj_store *s, const char *sql, struct kj_error *err);

/* What a merge did. */
struct kj_store_merge_stats {
	long long runs_new;          /* runs of the source the target lacked */
	long long attempts_new;      /* finished attempts the target lacked */
	long long attempts_replaced; /* the target's judge errors (or running
				      * rows) replaced by the source's verdicts */
	long long attempts_same;     /* finished in both: the target's kept */
	long long attempts_running;  /* running in the source: left out */
};

/*
 * Fold the store at `src` (any kjudge store, of this schema or an older
 * one; opened read-only and checked as kj_store_open checks) into s, in one
 * transaction: its runs (each one row, however often merged), tasks, suite,
 * candidates, and its finished attempts with their case results and
 * timings.  Idempotent: merging the same source again, or another store
 * holding verdicts of the same attempts, changes no verdict (the first
 * finished one is kept; a judge error is replaced by a verdict).  Attempts
 * the source holds as running are left out: nothing of a shard killed
 * mid-case is counted.  KJ_OK with *out filled, else a code with err
 * filled and s as it was.
 */
int kj_store_merge(struct kj_store *s, const char *src, struct kj_store_merge_stats *out,
		   struct kj_error *err);

/*
 * Publish s as `dest`: a consistent snapshot (taken while its writers go
 * on) in one file that needs no -wal or -shm beside it (journal mode
 * DELETE), written under a temporary name, synced and renamed over dest
 * (atomic on a network file system too; the directory synced).  A reader
 * sees the old file or the new one whole.  KJ_OK, or a code with err
 * filled and dest as it was.
 */
int kj_store_publish(struct kj_store *s, const char *dest, struct kj_error *err);

/*
 * The store's attempts as KernelBench's eval_results.json (lib/store/
 * kernelbench.c): {problem id: [{sample_id, compiled, correctness,
 * metadata, runtime, runtime_stats}, ...]} for one model (NULL: the
 * store's only one) and one level (-1: the only one the model has), the
 * latest finished row of each attempt, times in milliseconds as
 * KernelBench's.  correctness is a clean pass; metadata holds KernelBench's
 * failure keys and the judge's verdict under "kjudge".  *left_out counts
 * the rows holding a value no judge writes, which are not in it.  KJ_OK
 * with *out a new object; KJ_EINVAL naming the models or levels to choose
 * from when there is a choice; else a code with err filled.
 */
int kj_store_kernelbench(struct kj_store *s, const char *model, int level, json_t **out,
			 long long *left_out, struct kj_error *err);

#endif /* KJUDGE_STORE_H */
