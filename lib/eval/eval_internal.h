/*
 * eval_internal.h - what the files of lib/eval/ share (kj__ internals):
 * discover.c's candidate list for spec_suite.c, the translation
 * directions of a spec suite for the kinds table (kinds.c), and the
 * services every kind of attempt uses alike (services.c).
 */
#ifndef KJ_EVAL_INTERNAL_H
#define KJ_EVAL_INTERNAL_H

#include "kjudge/eval.h"

/* discover.c: add a candidate (takes source, malloc'd, len bytes, and
 * extra's files, whatever happens; a duplicate is a problem), name what
 * was skipped.  KJ_OK or KJ_ENOMEM. */
int kj__eval_add_cand(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		      char *source, size_t len, const char *origin, struct kj_eval_cand *extra);
int kj__eval_problem(struct kj_eval_set *set, const char *where, const char *why);
/* What one task or one candidate owns, freed (the struct itself is the
 * set's). */
void kj__eval_task_release(struct kj_eval_task *t);
void kj__eval_cand_release(struct kj_eval_cand *c);
/* n files, their names and bytes, freed (NULL: nothing). */
void kj__eval_files_free(struct kj_eval_file *files, size_t n);

/* The two kinds of kinds.c, and what they are made of: discover.c's and
 * judge.c's for torch, spec_suite.c's and spec_attempt.c's for spec (each
 * with kj_eval_kind's contract for its field). */
extern const struct kj_eval_kind kj__eval_kind_torch, kj__eval_kind_spec;
int kj__eval_torch_suite(const char *dir, struct kj_eval_set *set, struct kj_error *err);
int kj__eval_torch_dir(const char *path, struct kj_eval_set *set, struct kj_error *err);
const char *kj__eval_torch_line_lacks(json_t *line);
int kj__eval_torch_line(struct kj_eval_set *set, int task, const char *model, const char *attempt,
			json_t *line, const char *dir, const char *where,
			struct kj_eval_cand *extra);
int kj__eval_torch_attempt(const struct kj_config *cfg, const struct kj_eval_settings *s,
			   const struct kj_eval_slot *slot, const struct kj_eval_set *set,
			   size_t cand, const char *attempt_key, struct kj_eval_outcome *out,
			   struct kj_error *err);
const char *kj__eval_spec_line_lacks(json_t *line);
int kj__eval_spec_line(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		       json_t *line, const char *dir, const char *where,
		       struct kj_eval_cand *extra);

/* spec_suite.c: whether dir is a spec suite (manifest.jsonl and specs/);
 * its translation directions as tasks. */
int kj__eval_is_spec_suite(const char *dir);
int kj__eval_discover_specs(const char *dir, struct kj_eval_set *set, struct kj_error *err);

/* spec_suite.c: a translation from a JSONL line (files, an object of
 * NAME: TEXT, or dir, a directory of them), or the MODEL/TASK/ATTEMPT/
 * directories under path.  What cannot be used is a problem. */
int kj__eval_spec_cand(struct kj_eval_set *set, int task, const char *model, const char *attempt,
		       json_t *files, const char *dir, const char *where,
		       struct kj_eval_cand *extra);
int kj__eval_spec_dir(const char *path, struct kj_eval_set *set, struct kj_error *err);

/* services.c: what every kind of attempt uses alike.  An attempt's row as
 * 'running', its earlier rows gone (one transaction); an exclusive flock
 * on WORK/NAME.lock (kj__eval_lock_file: op LOCK_EX or LOCK_SH; the
 * device's, WORK/device-DEVICE.lock, exclusive), its descriptor held until
 * closed, or -1 with err filled. */
struct kj_store;
int kj__eval_record_start(struct kj_store *store, const char *key, const struct kj_eval_task *t,
			  const struct kj_eval_cand *c, const struct kj_eval_slot *slot,
			  struct kj_error *err);
int kj__eval_lock(const struct kj_eval_slot *slot, const char *name, struct kj_error *err);
int kj__eval_lock_file(const struct kj_eval_slot *slot, const char *name, int op,
		       struct kj_error *err);
int kj__eval_lock_device(const struct kj_eval_slot *slot, struct kj_error *err);

/* services.c: an attempt's environment as attempts.env keeps it: a shallow
 * copy of base (the reference worker's hello less ok/nonce/id; NULL or not
 * an object: none, as when the workers never started) with the judge's
 * own "node" (its host name; null when it has none) and, when the judge
 * runs under Slurm, "slurm": those of SLURM_JOB_ID, SLURM_ARRAY_JOB_ID,
 * SLURM_ARRAY_TASK_ID, SLURM_RESTART_COUNT, SLURMD_NODENAME and
 * SLURM_CLUSTER_NAME that cfg->environ sets and are not empty, as strings
 * under those names.  Both are the judge's, set over whatever base says.
 * base is left as it was; a new reference the caller owns, NULL only when
 * out of memory. */
json_t *kj__eval_env(const struct kj_config *cfg, const json_t *base);

/* services.c: an attempt's own scratch directory, made (mode 0700) as
 * WORK/PREFIX-KEY16-XXXXXX into dir; KJ_OK, else dir is "" and err says
 * why. */
int kj__eval_scratch(const struct kj_eval_slot *slot, const char *prefix, const char *key,
		     char *dir, size_t size, struct kj_error *err);

/* spec_attempt.c: kj_eval_attempt for a translation direction. */
int kj__eval_spec_attempt(const struct kj_config *cfg, const struct kj_eval_settings *s,
			  const struct kj_eval_slot *slot, const struct kj_eval_set *set,
			  size_t cand, const char *attempt_key, struct kj_eval_outcome *out,
			  struct kj_error *err);

#endif /* KJ_EVAL_INTERNAL_H */
