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
 *   Who writes.  `kjudge eval`'s parent writes the run (runs, tasks,
 *   suite_tasks, meta's batch key) and its end; each judging child (one
 *   process per attempt) opens a connection of its own and writes its
 *   attempt: candidates, attempts (the row begun and its verdict),
 *   case_results and timings, keyed by the attempt's key, which no other
 *   process writes at the same time.  `kjudge merge` writes a whole store
 *   into another.  Concurrent writers are made safe by SQLite's one write
 *   lock: every write is one transaction begun with BEGIN IMMEDIATE (the
 *   lock taken first, so no transaction has to be retried midway), a
 *   writer that finds the lock held waits up to its busy timeout (eval's
 *   children wait 30 s), and WAL lets readers (`kjudge report`, eval's
 *   parent counting verdicts) go on while one writes.  Every transaction
 *   is committed (synchronous=FULL) before the caller reports what it
 *   wrote.  The SQL of every table is the store's (lib/store/): its users
 *   call the typed writes below.
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
 * content; 4 added the tasks' audits (task_audits, audit_canaries).  A
 * store of an older version opened for writing is brought to this one in
 * one transaction (its tasks and attempts re-keyed), and read as it is
 * otherwise. */
#define KJ_STORE_SCHEMA_VERSION 5
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

/* The schema's SQL (static storage): what docs/store.md documents. */
const char *kj_store_schema_sql(void);

/*
 * Run `sql` (one or more statements, no results) as one transaction:
 * BEGIN IMMEDIATE ... COMMIT, rolled back on any error.  For the store's
 * modules and tests.
 */
int kj_store_exec(struct kj_store *s, const char *sql, struct kj_error *err);

/*
 * What eval writes (lib/store/write.c).  Each call is one transaction
 * (BEGIN IMMEDIATE ... COMMIT, rolled back on any error) and returns KJ_OK
 * once it is committed, else a code with err filled and the store as it
 * was: KJ_EBUSY for a lock held past the busy timeout, KJ_ENOSPC for a
 * full file system or a quota, KJ_ENOMEM, KJ_EIO for another I/O error,
 * KJ_ESTORE otherwise (a store opened read-only among them).  Strings are
 * borrowed for the call; a NULL string is written as SQL NULL.  The times
 * a row records (started_at, finished_at) are the store's clock, UTC.
 */

/* A run of eval (a row of runs). */
struct kj_store_run {
	const char *judge_version;
	const char *command;     /* the command line, a JSON array */
	const char *suite;
	const char *candidates;
	const char *settings;    /* the settings that change a verdict, JSON */
	const char *env;         /* the machine's, JSON, or NULL */
};

/* A task of the run's suite (a row of tasks).  level and problem: -1 for
 * NULL; cases_sha256 "" or NULL for none. */
struct kj_store_task {
	const char *key, *name, *path;
	int level, problem;
	const char *sha256, *cases_sha256;
	const char *source;      /* the task's file, source_len bytes */
	size_t source_len;
	const char *cases;       /* its cases file, cases_len bytes, or NULL */
	size_t cases_len;
};

/* The run's row, its tasks (those the store lacks) and which tasks its
 * suite holds, in one transaction; *run_id gets the run's id (0 on error). */
int kj_store_run_begin(struct kj_store *s, const struct kj_store_run *run,
		       const struct kj_store_task *tasks, size_t n, long long *run_id,
		       struct kj_error *err);

/* The run's end (runs.finished_at). */
int kj_store_run_end(struct kj_store *s, long long run_id, struct kj_error *err);

/* The batch key (meta 'batch', 32 hex digits): the one the store holds
 * into batch; when it holds none (or a value that is not one), fresh
 * written and copied, or batch "" when fresh is NULL or not 32 hex digits. */
int kj_store_batch(struct kj_store *s, const char *fresh, char batch[33],
		   struct kj_error *err);

/* An attempt begun: its candidate's source kept, its earlier case results
 * and timings removed, its row written as 'running'.  round,
 * prompt_tokens, completion_tokens: -1 for NULL; generation_s < 0: NULL. */
struct kj_store_attempt {
	const char *key;
	long long run_id;
	const char *task_key, *task, *model, *attempt;
	long long round;
	const char *cand_sha256;
	const char *source;      /* the candidate's text, source_len bytes */
	size_t source_len;
	const char *origin;
	long long prompt_tokens, completion_tokens;
	double generation_s;
	const char *device;
};

int kj_store_attempt_begin(struct kj_store *s, const struct kj_store_attempt *a,
			   struct kj_error *err);

/* A case result of an attempt's phase ("verify", "benchmark", ...). */
struct kj_store_case {
	const char *phase;
	int case_idx;            /* from 1 */
	const char *params;      /* the case's parameters, JSON, or NULL */
	const char *status, *error_type, *category, *charged, *message;
	const char *record;      /* the case's record, JSON (the timing's too) */
};

/* A timed case (a row of timings, same case_idx and record). */
struct kj_store_timing {
	double impl_ms, ref_ms;
	double speedup;          /* NULL unless positive and finite */
	int impl_samples, ref_samples;
	double sol_ms;           /* the case's speed of light; NULL unless
				  * positive and finite (none established) */
};

/* A case and, when t is not NULL, its timing, in one transaction. */
int kj_store_case(struct kj_store *s, const char *attempt_key, const struct kj_store_case *c,
		  const struct kj_store_timing *t, struct kj_error *err);

/* An attempt's verdict: its row 'done'.  The layers' flags: -1 for NULL
 * (not run); speedup <= 0: NULL. */
struct kj_store_verdict {
	const char *status;
	int clean;
	const char *error_type, *category, *charged, *message;
	int cases_total, cases_passed;
	int static_ok, disabled_ok, profile_ok;
	const char *static_msg, *disabled_msg, *profile_msg;
	double speedup;
	double judge_s;
	const char *env;         /* the attempt's environment, JSON, or NULL */
};

/* KJ_ESTORE when the attempt's row is gone. */
int kj_store_attempt_done(struct kj_store *s, const char *attempt_key,
			  const struct kj_store_verdict *v, struct kj_error *err);

/* How the store holds an attempt (no transaction: one read). */
struct kj_store_state {
	int found;               /* 0: no row */
	char state[16];          /* "running", "done" */
	char status[16];         /* the verdict's, "" while running */
	int clean;
};

int kj_store_attempt_state(struct kj_store *s, const char *attempt_key,
			   struct kj_store_state *out, struct kj_error *err);

/*
 * A task's baseline on a device under settings, from the attempts other
 * than attempt_key (the earliest finished, else one still running, whose
 * benchmark rows are committed case by case): per case the reference's figure on the
 * judge's clock, the harness's cost per call, the samples' median and
 * whether its rounds were queued (1) or synced (0), of the first attempt
 * that measured them, into ref[k], ref[n + k], ref[2n + k] and ref[3n + k]
 * (ref holds 4n doubles, the caller's, left as they are for a case no
 * attempt measured).  One read.
 */
int kj_store_baseline(struct kj_store *s, const char *task_key, const char *device,
		      const char *settings, const char *attempt_key, int n, double *ref,
		      struct kj_error *err);

/*
 * A task's audit (lib/store/audit.c; docs/AUDIT.md): what eval records of
 * the audit it ran before the task's candidates, keyed by the task's key
 * and the audit's own key (kj_audit_key).  verdict: "weak", "strong" or
 * "not_proven"; reasons a JSON array's text (NULL: []); device NULL when no
 * canary ran; canary[i] and outcome[i] ("fail", "pass", "n/a", "error",
 * "skipped") for each of the n_canaries.  Strings borrowed.
 */
struct kj_store_audit {
	const char *task_key, *audit_key;
	long long run_id;        /* the run recording it; <= 0: NULL */
	const char *verdict, *device, *reasons;
	size_t n_canaries;
	const char *const *canary, *const *outcome;
};

/* The audit written, replacing the store's of the same keys, with its
 * canaries, in one transaction. */
int kj_store_audit_put(struct kj_store *s, const struct kj_store_audit *a, struct kj_error *err);

/* The verdict the store holds for the audit (task_key, audit_key): 1 with
 * verdict filled, 0 when it holds none (verdict ""), or a code with err
 * filled. */
int kj_store_audit_get(struct kj_store *s, const char *task_key, const char *audit_key,
		       char verdict[16], struct kj_error *err);

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

/*
 * What serve writes (lib/store/serve.c, docs/serve.md): a table of its own,
 * serve_requests, made when a server first opens the store, one row a
 * request from its acceptance ('queued') through 'running' to 'done' or
 * 'cancelled'.  The verdict itself is the attempt's row, which the judging
 * child writes as eval's do.
 */
struct kj_store_serve_req {
	const char *id;          /* the evaluation's id (the client's, or made) */
	const char *model, *attempt, *mode;
	const char *options;     /* the request's options, JSON text, or NULL */
	const char *task_key, *task_name;
	int by_name;             /* 1: a task of the server's suite */
	const char *source;      /* the candidate's text, source_len bytes */
	size_t source_len;
	const char *attempt_key;
	double deadline_s;       /* <= 0: none */
};

/* The table made where missing, the requests a killed server left running
 * queued again, and every request's task added to run_id's suite: one
 * transaction after the table. */
int kj_store_serve_open(struct kj_store *s, long long run_id, struct kj_error *err);

/* A request accepted, with its task's row when task is not NULL (a task
 * given by its source) and the task in run_id's suite, in one transaction.
 * A request of an id the store holds, or of an attempt key a request that
 * is not cancelled holds, is not written: id (size bytes) gets that
 * request's id; else id is "" and the request is committed. */
int kj_store_serve_submit(struct kj_store *s, long long run_id, const struct kj_store_task *task,
			  const struct kj_store_serve_req *r, char *id, size_t size,
			  struct kj_error *err);

/* The request of id (or, id NULL, of seq) as an object of its columns
 * (seq, id, model, attempt, mode, options, task_key, task_name, by_name,
 * source, attempt_key, deadline_s, state, outcome, submitted_at,
 * finished_at) and its task's task_source and task_cases; *out NULL when
 * there is none.  New reference. */
int kj_store_serve_get(struct kj_store *s, const char *id, long long seq, json_t **out,
		       struct kj_error *err);

/* The queued requests, [[seq, model], ...] in the order they came. */
int kj_store_serve_queued(struct kj_store *s, json_t **out, struct kj_error *err);

/* A request's state set (only when it is `from`, unless from is NULL), and
 * its outcome when outcome is not NULL (the JSON of a verdict the judge
 * could not commit); *changed (may be NULL) says whether the row changed. */
int kj_store_serve_set_state(struct kj_store *s, long long seq, const char *from,
			     const char *state, const char *outcome, int *changed,
			     struct kj_error *err);

/* The attempt's result as serve answers it: its state, verdict, counts,
 * speedup, layers and each timed case's latencies (no input, no seed);
 * *out NULL when the store has no such attempt.  New reference. */
int kj_store_serve_result(struct kj_store *s, const char *attempt_key, json_t **out,
			  struct kj_error *err);

#endif /* KJUDGE_STORE_H */
