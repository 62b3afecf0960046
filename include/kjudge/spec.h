/*
 * kjudge/spec.h - ParBench-style suites: one JSON spec per kernel variant,
 * its paths resolved inside the project, its prompt, and its verification
 * (a build and a run in the sandbox, then the spec's strategies).
 *
 * Paths (lib/spec/spec.c).  The project root is the caller's (--root or
 * the current directory).  config/paths.json's "downloads_root" moves the
 * tree the specs name (a relative value is taken against the root; without
 * the file or the key the tree is the root itself), as ParBench does:
 *
 *   repo_root   = tree / provenance.repo_root
 *   source_dir  = repo_root / provenance.source_path
 *   working_dir = repo_root / build.working_directory (else source_dir)
 *   files.*     relative to source_dir
 *   build.outputs.executable, run.executable, input_files, strategy paths
 *               relative to working_dir
 *
 * Every path a spec names must stay inside the tree: a path is resolved
 * one component at a time from a descriptor of the tree (openat with
 * O_PATH | O_NOFOLLOW), ".." may not climb above the tree, and a symbolic
 * link is followed only when its target, resolved the same way, stays
 * inside (at most 40 links).  A refusal names the spec's field:
 * "files.prompt_payload[0]: '../../etc/passwd' leaves the project tree".
 * The judge then works on a copy (kj_spec_verify) made through descriptors
 * with O_NOFOLLOW, so a link swapped in after the check is never followed
 * (see lib/spec/verify.c, "TOCTOU").
 *
 * Ownership: struct kj_spec owns everything it points to (kj_spec_release
 * frees it all, whatever state a failed kj_spec_load left it in).
 */
#ifndef KJUDGE_SPEC_H
#define KJUDGE_SPEC_H

#include <limits.h>
#include <stddef.h>

#include <jansson.h>

#include "kjudge/config.h"
#include "kjudge/error.h"

/* A path the spec names: as written, and resolved (absolute, inside the
 * tree; "" when it does not exist yet, as an output does). */
struct kj_spec_path {
	char *rel;
	char *abs;
};

struct kj_spec_list {
	struct kj_spec_path *v;
	size_t n;
};

/* One of run.input_configurations. */
struct kj_spec_config {
	char *name;
	char **args;                  /* run arguments, as written */
	size_t n_args;
	struct kj_spec_list input_files;  /* relative to working_dir */
	char *expected_pattern;       /* expected_results.stdout_pattern, or NULL */
	struct kj_spec_path reference_output; /* expected_results.reference_output_file */
};

enum kj_spec_strategy_type {
	KJ_STRAT_UNKNOWN = 0,         /* malformed: error says why */
	KJ_STRAT_EXIT_CODE,
	KJ_STRAT_STDOUT_PATTERN,
	KJ_STRAT_STDOUT_EXCLUDE,
	KJ_STRAT_NUMERIC,
	KJ_STRAT_FILE_HASH,
	KJ_STRAT_FILE_DIFF,
};

/*
 * A strategy as read.  A malformed one (not an object, an unknown or
 * missing type, a missing or mistyped field, a bad regex, a non-finite
 * expected, a negative tolerance, a bool where a number is needed) keeps
 * its message in `error` and evaluates to ERROR: never a skip.
 */
struct kj_spec_strategy {
	enum kj_spec_strategy_type type;
	char type_name[64];           /* the "type" as written ("?" when none) */
	char *error;                  /* NULL when well formed */
	long long expected_code;      /* exit_code */
	double expected;              /* numeric_comparison */
	double tolerance;
	int relative;                 /* tolerance_type "relative" */
	int multiline;
	char *pattern;                /* stdout patterns; numeric's extract_regex */
	void *re;                     /* the compiled pattern (pcre2_code) */
	struct kj_spec_path path;     /* file_*: the output, under working_dir
				       * (rel only: it exists after the run) */
	char sha256[65];              /* file_hash, lowercase */
	struct kj_spec_path reference; /* file_diff: the reference, read by the
					* judge from the source tree */
};

struct kj_spec_var {
	char *name, *value;
};

struct kj_spec {
	char *file;                   /* the spec file as given */
	json_t *doc;
	const char *unique_id, *kernel_name, *parallel_api, *source_suite;
	/* Absolute, resolved: the project root, the tree, and the three
	 * directories of the header comment. */
	char root[PATH_MAX], tree[PATH_MAX];
	char repo_root[PATH_MAX], source_dir[PATH_MAX], working_dir[PATH_MAX];
	struct kj_spec_list prompt, support, verification_only, targets;
	int targets_given;            /* files.translation_targets present */
	const char *clean, *configure, *build;   /* NULL when none */
	struct kj_spec_var *vars;     /* build.variables' defaults */
	size_t n_vars;
	char *build_output;           /* build.outputs.executable, as written */
	char *executable;             /* run.executable, as written */
	double run_timeout_s;         /* run.timeout_seconds (300) */
	char **env;                   /* run.environment_variables, NAME=VALUE */
	size_t n_env;
	struct kj_spec_config *configs;
	size_t n_configs;
	struct kj_spec_strategy *strategies;
	size_t n_strategies;
};

void kj_spec_init(struct kj_spec *s);
void kj_spec_release(struct kj_spec *s);

/*
 * Load and check the spec `file` against the project root `root` (NULL:
 * the current directory).  Returns KJ_OK; KJ_ENOENT (a file or directory
 * that is not there), KJ_EINVAL (a malformed spec, a path that leaves the
 * tree), KJ_ENOMEM, with err naming the file and the field.  Malformed
 * strategies are not load errors (see struct kj_spec_strategy).
 */
int kj_spec_load(struct kj_spec *s, const char *file, const char *root, struct kj_error *err);

/* The input configuration called name, or NULL. */
const struct kj_spec_config *kj_spec_config_find(const struct kj_spec *s, const char *name);

/*
 * Resolve `path` (relative to the directory start, or absolute inside
 * base) so that it stays inside the directory base, as the header says,
 * into out (absolute, free of links).  base and start are absolute and free
 * of links, start inside base (NULL: base).  A path whose last component
 * does not exist resolves when its parent does and must_exist is 0.
 * Returns KJ_OK, KJ_ENOENT, or KJ_EINVAL when it leaves base, with `field`
 * at the head of the message:
 *   FIELD: 'P' leaves the project tree
 *   FIELD: 'P' leaves the project tree through the symbolic link 'L'
 *   FIELD: 'P' is an absolute path outside the project tree
 *   FIELD: 'P' does not exist
 */
int kj_spec_resolve(const char *base, const char *start, const char *path, int must_exist,
		    const char *field, char out[PATH_MAX], struct kj_error *err);

/*
 * Open the absolute, link-free path abs for reading (flags: O_RDONLY,
 * O_DIRECTORY, O_PATH, ...) one component at a time with O_NOFOLLOW, so
 * that a link put anywhere on it after it was resolved makes the open
 * fail (ELOOP) instead of leading elsewhere.  A descriptor, or -1 with
 * errno.
 */
int kj_spec_open_nofollow(const char *abs, int flags);

/*
 * The prompt: the files of files.prompt_payload, each as a header line
 * "==> NAME (N bytes) <==" followed by its N bytes and a newline, written
 * through fn (the library prints nothing).  fn returns 0 to go on.
 * Returns KJ_OK, or a code with err filled (a file that cannot be read).
 */
int kj_spec_prompt(const struct kj_spec *s,
		   int (*fn)(void *ctx, const char *bytes, size_t n), void *ctx,
		   struct kj_error *err);

/* --- verification (lib/spec/verify.c) ------------------------------------------- */

/* Statuses of a verification, and of each strategy (PASS, FAIL, ERROR,
 * SKIP).  KJ_SPEC_STATUS_MAP(X): X(NAME, meaning). */
#define KJ_SPEC_STATUS_MAP(X)                                                        \
	X(PASS, "built, ran, and every strategy passed")                             \
	X(BUILD_FAIL, "a build command failed, or the executable is missing after")  \
	X(RUN_FAIL, "the program exited non-zero, was killed, or passed a limit")    \
	X(VERIFY_FAIL, "it ran, and some strategy failed")                           \
	X(TIMEOUT, "a build command or the run passed its time limit")               \
	X(ERROR, "a strategy is unknown or malformed: the spec cannot pass")         \
	X(SKIP, "the spec lists no strategy")

enum kj_spec_status {
#define KJ__SPEC_ST(n, m) KJ_SPEC_##n,
	KJ_SPEC_STATUS_MAP(KJ__SPEC_ST)
#undef KJ__SPEC_ST
	KJ_SPEC_STATUS_COUNT_
};

const char *kj_spec_status_name(enum kj_spec_status st);
const char *kj_spec_status_meaning(enum kj_spec_status st);

struct kj_spec_verify_opts {
	const char *config;           /* input configuration; NULL: "correctness" */
	const char *candidate;        /* a translation's directory, or NULL */
	double build_timeout_s;       /* per build command; 0: 600 */
	long long output_bytes;       /* stdout (and stderr) kept and allowed per
				       * run; 0: 16 MiB */
	long long written_bytes;      /* what a build or run may write; 0: 256 MiB */
	long long copy_bytes;         /* the largest repo_root copied whole (else
				       * source_dir and working_dir); 0: 256 MiB */
	/* Whole-program timing (repeats 0: none): warm-up runs, then timed
	 * ones; with baseline, the pristine reference too, interleaved. */
	int warmup, repeats, baseline;
	const struct kj_config *cfg;  /* limits, cache, scratch, environment */
};

/*
 * Verify: copy, overlay, build (cached by content), run, evaluate every
 * strategy, and time when asked.  *out gets a new JSON record (the caller
 * json_decrefs it) and *status the verdict.  Returns KJ_OK when a verdict
 * was reached (whatever it is), else a code with err filled: KJ_EINVAL /
 * KJ_ENOENT for bad input (an unknown configuration, a candidate without
 * a target), KJ_ESANDBOX, KJ_EIO, KJ_ENOMEM, KJ_EINTR for the judge's own
 * failures.  The record's form is in docs/spec.md.
 */
int kj_spec_verify(const struct kj_spec *s, const struct kj_spec_verify_opts *o,
		   enum kj_spec_status *status, json_t **out, struct kj_error *err);

/* --- strategies (lib/spec/strategy.c), for the unit tests too ------------------- */

/* What a program left for the strategies to judge. */
struct kj_spec_outcome {
	int exited;                   /* it exited (else killed or not run) */
	int exit_code;
	const char *out;              /* its stdout, NUL-terminated */
	size_t out_len;
	const char *work_dir;         /* where its files are (absolute) */
};

/*
 * Parse one strategy (a JSON value of verification.strategies) into st,
 * compiling its regex; a malformed one sets st->error.  Returns KJ_OK or
 * KJ_ENOMEM; its paths are the spec's own and are checked as every other
 * (kj_spec_resolve inside tree, from source_work, the source tree's working
 * directory): a failure there is returned (KJ_EINVAL / KJ_ENOENT with
 * `field` in err), a bad spec rather than an ERROR.
 */
int kj_spec_strategy_parse(struct kj_spec_strategy *st, const json_t *j, const char *field,
			   const char *source_work, const char *tree, struct kj_error *err);
void kj_spec_strategy_release(struct kj_spec_strategy *st);

/* Evaluate st on o: "PASS", "FAIL", "ERROR" into *status, a sentence into
 * detail.  Returns KJ_OK, or KJ_ENOMEM when the judge could not evaluate
 * it (then no verdict: *status is not one to report). */
int kj_spec_strategy_eval(const struct kj_spec_strategy *st, const struct kj_spec_outcome *o,
			  const char **status, char *detail, size_t size);

/* --- suites (lib/spec/suite.c) ------------------------------------------------- */

/*
 * The spec files root/manifest.jsonl names (each line's spec_file, taken
 * relative to root; NULL: the current directory), in the manifest's order,
 * into *files (n of them: the caller frees them with kj_spec_suite_free).
 * Returns KJ_OK; a manifest that cannot be read, a bad line ("FILE:LINE:
 * ..."), a line without spec_file or a manifest naming no spec: a code
 * with err filled and nothing to free.
 */
int kj_spec_suite_list(const char *root, char ***files, size_t *n, struct kj_error *err);
void kj_spec_suite_free(char **files, size_t n);

/* Why a verification record (kj_spec_verify's) did not pass, in one line
 * into out (cut at size): the build's reason and its last lines; else the
 * run's reason where the run gave the status, or the strategy that gave it
 * (the first, in the declared order, that did not pass: "file_hash FAIL:
 * ..."), then the program's last lines (quoted, a control byte as '?')
 * and every other strategy that did not pass with its detail; "" for a
 * pass. */
void kj_spec_record_why(const json_t *rec, char *out, size_t size);

#endif /* KJUDGE_SPEC_H */
