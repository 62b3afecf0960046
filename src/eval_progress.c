/*
 * eval_progress.c - `kjudge eval`'s progress line (eval_progress.h).
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "eval_progress.h"
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
