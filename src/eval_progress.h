/*
 * eval_progress.h - `kjudge eval`'s progress line (eval_progress.c): the
 * counts, the time spent and left, redrawn in place on a terminal, and
 * the attempts' lines above it.
 */
#ifndef KJ_EVAL_PROGRESS_H
#define KJ_EVAL_PROGRESS_H

#include <stddef.h>

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

#endif /* KJ_EVAL_PROGRESS_H */
