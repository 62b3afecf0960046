/*
 * eval_progress.h - what `kjudge eval` says (eval_progress.c): its
 * progress line (the counts, the time spent and left, redrawn in place on
 * a terminal) with the attempts' lines above it, through the study's run
 * hooks, and its other messages.
 */
#ifndef KJ_EVAL_PROGRESS_H
#define KJ_EVAL_PROGRESS_H

#include <signal.h>
#include <stddef.h>

#include "kjudge/eval.h"
#include "cli.h"

struct progress {
	int tty, quiet;
	int drawn;              /* the bar is on the terminal's last line */
	size_t drawn_len;       /* its width in columns when it was drawn */
	size_t total, done, passed, clean, failed, errors, skipped;
	double t0;              /* kj__now_s() when the batch began */
	double last_done;       /* when this run's latest attempt ended */
	size_t done_here;       /* judged by this run (the rate) */
};

/* Redraw the line (on a terminal, not quiet; else nothing). */
void kj__progress_bar(struct progress *p);

/* One line about the batch (an attempt's verdict), on stderr: on a
 * terminal above the bar, which the next redraw puts back below it. */
void kj__progress_say(struct progress *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* What the run's hooks (kj__eval_hooks) share: borrowed. */
struct kj__eval_batch {
	const struct kj_cli_command *cmd;
	const struct kj_eval_set *set;
	struct progress *prog;
	int exit_code;                    /* so far */
	volatile sig_atomic_t *stop;      /* the command's signal flag: a failed
					   * start sets it */
};

/* The study's run, said: each attempt's line, the bar, what went wrong. */
extern const struct kj_eval_run_hooks kj__eval_hooks;

/* The batch's end said: interrupted, stopped for a device that is not
 * there, or its summary (the run's row finished).  Returns the exit
 * status. */
int kj__eval_batch_end(struct kj__eval_batch *b, struct kj_eval_study *st,
		       const struct kj_eval_run *run, int rc, const struct kj_error *err);

/*
 * Nothing to judge: a mistyped or empty candidates folder, a layout kjudge
 * does not read, a generations file of skipped lines.  Said with what was
 * looked for, so that the fix is plain; returns 2, as for any input that
 * cannot be judged, before a store is made.
 */
int kj__eval_no_candidates(const struct kj_cli_command *cmd, const char *suite,
			   const char *cands, const struct kj_eval_set *set);

/*
 * The directions of a suite of specs that the study holds (--api, those a
 * translation attempts, those that can run here), the others said on
 * stderr: a direction that cannot run here is not run, never a failure.
 * 0, or -1 with *exit_code set after printing why.
 */
int kj__eval_scope_specs(const struct kj_cli_command *cmd, struct kj_eval_set *set,
			 const char *apis, int timed, const struct kj_config *here, int quiet,
			 int *exit_code);

#endif /* KJ_EVAL_PROGRESS_H */
