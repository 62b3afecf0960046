/*
 * eval_progress.c - what `kjudge eval` says (eval_progress.h): a study
 * with nothing to judge, a spec suite's scope, each attempt's line, the
 * progress line below them, the batch's end.
 */
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "eval_progress.h"
#include "interrupt.h"
#include "base/internal.h"

/* The terminal's width, asked at every redraw, so that a resized window
 * is followed within a second; 80 when stderr cannot say. */
static int term_cols(void)
{
	struct winsize ws;

	if (ioctl(2, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 0)
		return ws.ws_col;
	return 80;
}

/* Seconds as a clock shows them: "0:07", "12:30", "2:05:00". */
static void fmt_clock(double sec, char *buf, size_t size)
{
	long t = sec > 0 && sec < 1e9 ? (long)(sec + 0.5) : 0;

	if (t >= 3600)
		snprintf(buf, size, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, size, "%ld:%02ld", t / 60, t % 60);
}

/*
 * Take the progress line off the screen, the cursor left where it began.
 * A window made narrower since it was drawn has rewrapped it over several
 * rows (as tmux, VTE, kitty, iTerm2 and Windows' terminal do), the cursor
 * on the last of them: those rows go, not only the last one, which would
 * leave the others as a broken line.  A terminal that cuts lines on a
 * resize instead (xterm) loses as many rows above the line from its
 * screen; they are attempts' lines, whose verdicts the store keeps.
 */
static void bar_erase(struct progress *p, int cols)
{
	size_t up = p->drawn_len > 0 && cols > 0 ? (p->drawn_len - 1) / (size_t)cols : 0;

	if (!p->drawn)
		return;
	if (up > 0)
		fprintf(stderr, "\033[%zuA", up);
	fputs("\r\033[J", stderr);
	p->drawn = 0;
}

/* The bar's narrowest and widest: below the narrowest it is left out. */
#define BAR_MIN 10
#define BAR_MAX 30

/*
 * The progress line on a terminal, redrawn in place: counts, the time
 * spent and an estimate of the time left, in the terminal's width less one
 * column (a character in the last column makes some terminals wrap, and
 * the next "\r" would then leave a broken line).  The words shrink with
 * the width: the whole phrase, then a short one, then the count done and
 * the times, and the bar only where at least BAR_MIN columns are left
 * for it.  The
 * time left counts down between completions: the mean time an attempt
 * took so far, for each one left, less the time since the last one
 * ended.
 */
void kj__progress_bar(struct progress *p)
{
	double now = kj__now_s(), el = now - p->t0, left_s = -1;
	size_t left = p->total - p->done, fill, bw = 0;
	int width = term_cols(), cols = width - 1, k;
	char spent[32], eta[48] = "", text[3][256], bar[BAR_MAX + 1];

	if (!p->tty || p->quiet)
		return;
	if (p->done_here > 0)
		left_s = (p->last_done - p->t0) / (double)p->done_here * (double)left -
			 (now - p->last_done);
	fmt_clock(el, spent, sizeof(spent));
	if (left_s >= 0 || (p->done_here > 0 && left > 0)) {
		char c[32];

		fmt_clock(left_s > 0 ? left_s : 0, c, sizeof(c));
		snprintf(eta, sizeof(eta), ", %s left", c);
	}
	snprintf(text[0], sizeof(text[0]), "%zu/%zu done, %zu passed (%zu clean), %zu failed, "
		 "%zu errors, %s spent%s", p->done, p->total, p->passed, p->clean, p->failed,
		 p->errors, spent, eta);
	snprintf(text[1], sizeof(text[1]), "%zu/%zu, %zu pass (%zu clean), %zu fail, %zu err, "
		 "%s spent%s", p->done, p->total, p->passed, p->clean, p->failed, p->errors, spent,
		 eta);
	snprintf(text[2], sizeof(text[2]), "%zu/%zu, %s spent%s", p->done, p->total, spent, eta);
	for (k = 0; k < 2; k++)
		if ((int)strlen(text[k]) + 3 + BAR_MIN <= cols)
			break;
	if ((int)strlen(text[k]) + 3 + BAR_MIN <= cols) {
		bw = (size_t)cols - strlen(text[k]) - 3;
		bw = bw > BAR_MAX ? BAR_MAX : bw;
		fill = p->total ? bw * p->done / p->total : bw;
		memset(bar, '#', fill);
		memset(bar + fill, '.', bw - fill);
		bar[bw] = '\0';
		bar_erase(p, width);
		fprintf(stderr, "[%s] %s", bar, text[k]);
		p->drawn_len = bw + 3 + strlen(text[k]);
	} else {
		bar_erase(p, width);
		k = cols > 0 ? (int)strnlen(text[2], (size_t)cols) : 0;
		fprintf(stderr, "%.*s", k, text[2]);
		p->drawn_len = (size_t)k;
	}
	p->drawn = 1;
	fflush(stderr);
}

/* One line about the batch (an attempt's verdict), on stderr: on a
 * terminal above the bar, which the next redraw puts back below it. */
void kj__progress_say(struct progress *p, const char *fmt, ...)
{
	va_list ap;

	bar_erase(p, term_cols());
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fflush(stderr);
}

/* --- candidates ---------------------------------------------------------------------- */

/*
 * Nothing to judge: a mistyped or empty candidates folder, a layout kjudge
 * does not read, a generations file of skipped lines.  Said with what was
 * looked for, so that the fix is plain; exit 2, as any input that cannot be
 * judged, before a store is made.
 */
int kj__eval_no_candidates(const struct kj_cli_command *cmd, const char *suite,
			    const char *cands, const struct kj_eval_set *set)
{
	struct stat st;
	size_t skipped = json_array_size(set->problems);
	char also[96] = "", example[320];
	const char *what;

	if (skipped)
		snprintf(also, sizeof(also), "; %zu %s skipped (named above)", skipped,
			 skipped == 1 ? "entry was" : "entries were");
	snprintf(example, sizeof(example), "%s%s", set->n_tasks ?
		 kj_cli_shown(set->tasks[0].name) : "", set->n_tasks > 1 ? ", ..." : "");
	if (stat(cands, &st) == 0 && !S_ISDIR(st.st_mode))
		what = "lines of JSON objects, each with \"task\", \"model\" and "
		       "\"source\" or \"path\"";
	else
		what = set->kind->cand_layout;
	return kj_cli_error(cmd, "'%s': no candidate found: looked for %s ('%s': %zu task%s: "
			    "%s)%s", kj_cli_shown(cands), what, kj_cli_shown(suite),
			    set->n_tasks, set->n_tasks == 1 ? "" : "s", example, also);
}

/* --- a suite of specs: the study's scope ---------------------------------------------- */

/*
 * The directions of a suite of specs that the study holds (--api, those a
 * translation attempts, those that can run here), the others said on
 * stderr: a direction that cannot run here is not run, never a failure.
 * 0, or -1 with *exit_code set after printing why.
 */
int kj__eval_scope_specs(const struct kj_cli_command *cmd, struct kj_eval_set *set,
			  const char *apis, int timed, const struct kj_config *here, int quiet,
			  int *exit_code)
{
	struct kj_error err;
	json_t *not_run = NULL, *v;
	size_t counts[4], i;
	int rc;

	rc = kj_eval_spec_scope(set, apis, timed, here, &not_run, counts, &err);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		*exit_code = kj_cli_exit_for(cmd, rc);
		return -1;
	}
	json_array_foreach(not_run, i, v)
		fprintf(stderr, "kjudge eval: not run here: %s: %s\n",
			kj_cli_shown(json_string_value(json_object_get(v, "task"))),
			kj_cli_shown(json_string_value(json_object_get(v, "why"))));
	if (!quiet && (counts[0] || counts[1] || counts[2]))
		fprintf(stderr, "kjudge eval: the study: %zu direction%s (%zu outside --api, %zu "
			"that no translation attempts, %zu not run here, left out with their %zu "
			"translation%s)\n", set->n_tasks, set->n_tasks == 1 ? "" : "s", counts[0],
			counts[1], counts[2], counts[3], counts[3] == 1 ? "" : "s");
	rc = 0;
	/* The directions not run are the run's too (runs.env, "not_run"),
	 * for the report to name. */
	if (json_array_size(not_run) && !set->problems && !(set->problems = json_array()))
		rc = -1;
	json_array_foreach(not_run, i, v) {
		json_t *p = rc ? NULL : json_pack("{s:O, s:O, s:b}", "where",
						  json_object_get(v, "task"), "why",
						  json_object_get(v, "why"), "not_run", 1);

		if (!p || json_array_append_new(set->problems, p) != 0)
			rc = -1;
	}
	json_decref(not_run);
	if (rc) {
		kj_cli_error(cmd, "out of memory");
		*exit_code = KJ_EXIT_FAIL;
		return -1;
	}
	if (set->n_tasks == 0) {
		kj_cli_error(cmd, "no direction left to judge: %zu outside --api, %zu that no "
			     "translation attempts, %zu not run here", counts[0], counts[1],
			     counts[2]);
		*exit_code = KJ_EXIT_USAGE;
		return -1;
	}
	return 0;
}

/* --- the batch: what is said of it ------------------------------------------------------ */

static void batch_child(void *ctx)
{
	if (kj_cli_guard(((struct kj__eval_batch *)ctx)->cmd))
		_exit(3);
}

static void batch_start_failed(void *ctx, const char *why)
{
	struct kj__eval_batch *b = ctx;

	kj_cli_error(b->cmd, "%s", why);
	b->exit_code = KJ_EXIT_FAIL;
	*b->stop = SIGTERM;
}

static void batch_warn(void *ctx, const char *why)
{
	kj_cli_error(((struct kj__eval_batch *)ctx)->cmd, "%s", why);
}

static void batch_tick(void *ctx)
{
	kj__progress_bar(((struct kj__eval_batch *)ctx)->prog);
}

/* An attempt's line: its task, model and attempt (names from the suite
 * and the generations: shown, never raw), then what. */
static void say_attempt(struct kj__eval_batch *b, size_t cand, const char *pre, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void say_attempt(struct kj__eval_batch *b, size_t cand, const char *pre, const char *fmt, ...)
{
	const struct kj_eval_cand *c = &b->set->cands[cand];
	char what[KJ_ERROR_MSG_MAX + 256];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	kj__progress_say(b->prog, "%s%s %s/%s: %s\n", pre,
			 kj_cli_shown(b->set->tasks[c->task].name), kj_cli_shown(c->model),
			 kj_cli_shown(c->attempt), what);
}

static void batch_aside(void *ctx, size_t cand, const char *why)
{
	struct kj__eval_batch *b = ctx;

	if (!b->prog->quiet)
		say_attempt(b, cand, "", "%s", kj_cli_shown(why));
}

static void batch_again(void *ctx, size_t n)
{
	struct kj__eval_batch *b = ctx;

	if (!b->prog->quiet)
		kj__progress_say(b->prog, "kjudge eval: %zu attempts again, each alone on its "
				 "device\n", n);
}

/* An attempt's verdict in the counts and on its line. */
static void say_verdict(struct kj__eval_batch *b, size_t cand, const struct kj_eval_outcome *o)
{
	struct progress *prog = b->prog;
	const char *st = o->status, *type = *o->error_type ? o->error_type : "-";
	char speed[40] = "", why[sizeof(o->message)];
	size_t n;

	if (strcmp(st, "pass") == 0) {
		prog->passed++;
		prog->clean += o->clean != 0;
	} else if (strcmp(st, "fail") == 0) {
		prog->failed++;
	} else {
		prog->errors++;
	}
	if (strcmp(st, "judge_error") == 0)
		b->exit_code = b->exit_code ? b->exit_code : KJ_EXIT_FAIL;
	if (prog->quiet)
		return;
	/* The why stays on its line. */
	snprintf(why, sizeof(why), "%s", o->message);
	for (n = 0; why[n]; n++)
		if (why[n] == '\n' || why[n] == '\r')
			why[n] = ' ';
	if (o->speedup > 0)
		snprintf(speed, sizeof(speed), ", %.3gx", o->speedup);
	if (strcmp(st, "pass") == 0)
		say_attempt(b, cand, "", "pass, %s%s%s", o->clean ? "clean" : "not clean: ",
			    o->clean ? "" : kj_cli_shown(type), speed);
	else
		say_attempt(b, cand, "", "%s %s%s%s", kj_cli_shown(st), kj_cli_shown(type),
			    *why ? ": " : "", kj_cli_shown(why));
}

static void batch_done(void *ctx, size_t cand, const struct kj_eval_result *r, int status)
{
	struct kj__eval_batch *b = ctx;
	struct progress *prog = b->prog;

	prog->done++;
	prog->done_here++;
	prog->last_done = kj__now_s();
	if (r && r->code == KJ_OK) {
		say_verdict(b, cand, &r->outcome);
		return;
	}
	/* The attempt's verdict could not be committed: it stays running in
	 * the store, for the next run. */
	prog->errors++;
	b->exit_code = KJ_EXIT_FAIL;
	say_attempt(b, cand, "kjudge eval: ", "not judged: %s",
		    r && *r->error ? kj_cli_shown(r->error)
		    : WIFSIGNALED(status) ? "its judge was killed" : "its judge ended early");
}

/* The batch's end said: interrupted, stopped for a device that is not
 * there, or its summary (the run's row finished).  Returns the exit
 * status. */
int kj__eval_batch_end(struct kj__eval_batch *b, struct kj_eval_study *st,
		       const struct kj_eval_run *run, int rc, const struct kj_error *err)
{
	struct progress *prog = b->prog;
	struct kj_error e;
	int exit_code = b->exit_code;

	if (rc == KJ_ENOMEM) {
		kj_cli_error(b->cmd, "%s", err->msg);
		return KJ_EXIT_FAIL;
	}
	int stop = *b->stop;

	if (stop || *run->no_device) {
		if (prog->drawn)
			fputc('\n', stderr);
		if (stop) {
			fprintf(stderr, "kjudge eval: interrupted (signal %d): %zu of %zu attempts "
				"done; the same command goes on from here\n", stop,
				prog->done, prog->total);
			return 128 + stop;
		}
		fprintf(stderr, "kjudge eval: %s\nkjudge eval: stopped, nothing charged: %zu of %zu "
			"attempts done; the same command where the device is goes on from here\n",
			kj_cli_shown(run->no_device), prog->done, prog->total);
		return KJ_EXIT_USAGE;
	}
	if (kj_eval_study_end(st, &e) != KJ_OK)
		exit_code = KJ_EXIT_FAIL;
	if (prog->tty && !prog->quiet) {
		kj__progress_bar(prog);
		fputc('\n', stderr);
	}
	if (st->counts.judge_errors) {
		fprintf(stderr, "kjudge eval: %zu attempts ended as judge errors in earlier runs; "
			"--retry-failed runs them again\n", st->counts.judge_errors);
		if (!exit_code)
			exit_code = KJ_EXIT_FAIL;
	}
	fprintf(stderr, "kjudge eval: %zu attempts: %zu passed (%zu clean), %zu failed, %zu judge or "
		"task errors (%zu of them from earlier runs); results in %s (kjudge report %s)\n",
		prog->total, prog->passed, prog->clean, prog->failed, prog->errors, prog->skipped,
		kj_cli_shown(run->slot.store_path), kj_cli_shown(run->slot.store_path));
	return exit_code;
}

const struct kj_eval_run_hooks kj__eval_hooks = {
	batch_child, batch_done, batch_aside, batch_again, batch_start_failed, batch_warn,
	batch_tick
};
