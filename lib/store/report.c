/*
 * report.c - the metrics of kj_metrics_compute as Markdown and as one
 * self-contained HTML page (kjudge/metrics.h).
 *
 * Only the JSON's numbers are printed, through kj_metrics_fmt (counts as
 * integers, every other figure with three significant digits), so that the
 * three renderings agree.  Every string of the store (task and model names,
 * messages, error types, parameters) is escaped: in HTML as text (& < > "
 * '), in Markdown as a table cell (| and < > & as entities, since Markdown
 * passes HTML through, a newline as \n); in both, every other control byte
 * is shown as its escape (\x1b, \u009b: kj__buf_add_shown), since both are
 * read by people, the Markdown on a terminal too.  The JSON keeps the
 * store's text exactly.  The page has no script and nothing
 * it loads: inline CSS and plots as inline SVG drawn here.
 */
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/metrics.h"
#include "base/json.h"
#include "base/text.h"
#include "base/banned.h"

/* The largest rendering (a store of many thousand attempts stays far below). */
#define OUT_MAX ((size_t)1 << 30)

static const char *const groups[] = { "static", "build", "runtime", "accuracy", "timeout",
				      "timing", "judge", "other" };
#define N_GROUP 8
static const char *const palette[] = { "#1f77b4", "#d62728", "#2ca02c", "#9467bd",
				       "#ff7f0e", "#8c564b", "#e377c2", "#17becf" };
#define N_PALETTE 8

struct out {
	struct kj__buf b;
	int oom;
};

static void add(struct out *o, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void add(struct out *o, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	if (kj__buf_vaddf(&o->b, fmt, ap) != 0)
		o->oom = 1;
	va_end(ap);
}

static void adds(struct out *o, const char *s)
{
	if (kj__buf_add(&o->b, s, strlen(s)) != 0)
		o->oom = 1;
}

/* The text between two escaped characters, its controls shown as escapes
 * (kj__buf_add_shown; lines: newlines and tabs kept). */
static void add_run(struct out *o, const char *run, size_t n, unsigned lines)
{
	if (n && kj__buf_add_shown(&o->b, run, n, lines) != 0)
		o->oom = 1;
}

/* s[0..n) as HTML text (also safe inside a quoted attribute); a control
 * byte of the store is shown as its escape (\x1b), as on a terminal: HTML
 * has no use for one, and a page saved as text keeps none. */
static void esc_n(struct out *o, const char *s, size_t n)
{
	const char *run = s, *end = s ? s + n : NULL;

	for (; s && s < end; s++) {
		const char *rep = NULL;

		switch (*s) {
		case '&': rep = "&amp;"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '"': rep = "&quot;"; break;
		case '\'': rep = "&#39;"; break;
		default: break;
		}
		if (!rep)
			continue;
		add_run(o, run, (size_t)(s - run), KJ__SHOWN_LINES);
		adds(o, rep);
		run = s + 1;
	}
	if (s)
		add_run(o, run, (size_t)(s - run), KJ__SHOWN_LINES);
}

static void esc(struct out *o, const char *s)
{
	esc_n(o, s, s ? strlen(s) : 0);
}

/* s[0..n) as one Markdown table cell: its markup escaped, every control
 * byte as its escape (\n, \r, \x1b: a cell is one line), since the
 * Markdown is for people, on a terminal (stdout) or in a file alike. */
static void md_esc_n(struct out *o, const char *s, size_t n)
{
	const char *run = s, *end = s ? s + n : NULL;

	for (; s && s < end; s++) {
		const char *rep;

		switch (*s) {
		case '|': rep = "\\|"; break;
		case '\\': rep = "\\\\"; break;
		case '<': rep = "&lt;"; break;
		case '>': rep = "&gt;"; break;
		case '&': rep = "&amp;"; break;
		case '`': rep = "\\`"; break;
		case '*': rep = "\\*"; break;
		case '_': rep = "\\_"; break;
		case '[': rep = "\\["; break;
		case ']': rep = "\\]"; break;
		default: continue;
		}
		add_run(o, run, (size_t)(s - run), 0);
		adds(o, rep);
		run = s + 1;
	}
	if (s)
		add_run(o, run, (size_t)(s - run), 0);
}

static void md_esc(struct out *o, const char *s)
{
	md_esc_n(o, s, s ? strlen(s) : 0);
}

char *kj_metrics_fmt(const json_t *v, char *buf, size_t size)
{
	double x, ax;
	char e[32];
	int e10, decimals;

	if (json_is_integer(v)) {
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
		return buf;
	}
	if (!json_is_real(v) || !isfinite(json_real_value(v))) {
		snprintf(buf, size, "-");
		return buf;
	}
	x = json_real_value(v);
	ax = fabs(x);
	if (ax == 0) {
		snprintf(buf, size, "0");
		return buf;
	}
	/* The exponent of x once rounded to three significant digits (0.9996
	 * rounds to 1.00, exponent 0), so that the digits shown are three. */
	snprintf(e, sizeof(e), "%.2e", ax);
	e10 = (int)strtol(strchr(e, 'e') + 1, NULL, 10);
	if (e10 < -9) {
		snprintf(buf, size, "%.2e", x);
		return buf;
	}
	decimals = e10 >= 2 ? 0 : 2 - e10;
	snprintf(buf, size, "%.*f", decimals, x);
	return buf;
}

/* The formatted value of o[key]. */
static const char *f(const json_t *o, const char *key, char *buf, size_t size)
{
	return kj_metrics_fmt(json_object_get(o, key), buf, size);
}

/* "[lo, hi]" of a Wilson interval, or "". */
static const char *ci(const json_t *o, const char *key, char *buf, size_t size)
{
	const json_t *a = json_object_get(o, key);
	char lo[32], hi[32];

	if (!json_is_array(a) || json_array_size(a) != 2) {
		snprintf(buf, size, "%s", "");
		return buf;
	}
	snprintf(buf, size, "[%s, %s]", kj_metrics_fmt(json_array_get(a, 0), lo, sizeof(lo)),
		 kj_metrics_fmt(json_array_get(a, 1), hi, sizeof(hi)));
	return buf;
}

static const char *str(const json_t *o, const char *key)
{
	const char *s = json_string_value(json_object_get(o, key));

	return s ? s : "";
}

/* An attempt's label, a string or an integer (docs/metrics.md). */
static const char *label(const json_t *a, char *b, size_t n)
{
	const json_t *v = json_object_get(a, "attempt");

	if (json_is_integer(v)) {
		snprintf(b, n, "%lld", (long long)json_integer_value(v));
		return b;
	}
	return str(a, "attempt");
}

/* The k of pass@k and the p of fast_p the figures were computed for (the
 * JSON's "k" and "p"), and the keys of each in the models' objects. */
struct kp {
	size_t n_k, n_p;
	char k[KJ_METRICS_LIST_MAX][16], p[KJ_METRICS_LIST_MAX][32];
	double pv[KJ_METRICS_LIST_MAX];
};

static void kp_of(const json_t *m, struct kp *kp)
{
	const json_t *k = json_object_get(m, "k"), *p = json_object_get(m, "p");
	size_t i;

	memset(kp, 0, sizeof(*kp));
	for (i = 0; i < json_array_size(k) && i < KJ_METRICS_LIST_MAX; i++)
		snprintf(kp->k[kp->n_k++], sizeof(kp->k[0]), "%lld",
			 (long long)json_integer_value(json_array_get(k, i)));
	for (i = 0; i < json_array_size(p) && i < KJ_METRICS_LIST_MAX; i++) {
		kp->pv[kp->n_p] = json_number_value(json_array_get(p, i));
		kj_metrics_p_key(kp->pv[kp->n_p], kp->p[kp->n_p], sizeof(kp->p[0]));
		kp->n_p++;
	}
}

/* The runs a model's figures come from ("2", "1, 2"; "-" for none). */
static const char *runs_text(const json_t *mo, char *buf, size_t size)
{
	const json_t *r = json_object_get(mo, "runs");
	size_t i, len = 0;

	snprintf(buf, size, "-");
	for (i = 0; i < json_array_size(r) && len + 24 < size; i++)
		len += (size_t)snprintf(buf + len, size - len, "%s%lld", i ? ", " : "",
					(long long)json_integer_value(json_array_get(r, i)));
	if (i < json_array_size(r))
		snprintf(buf + len, size - len, ", ...");
	return buf;
}

/* An attempt's verdict as a reader needs it: "pass", "pass (not clean:
 * static check)", "fail", "judge_error", "task_error". */
static const char *verdict_label(const json_t *a, char *buf, size_t size)
{
	static const char *const layers[][2] = { { "static", "static check" },
						 { "disabled", "kernels disabled" },
						 { "profile", "profiler" } };
	const char *layer = json_string_value(json_object_get(a, "not_clean_layer"));
	const char *v = json_string_value(json_object_get(a, "verdict"));
	size_t i;

	if (!layer) {
		snprintf(buf, size, "%s", v ? v : "-");
		return buf;
	}
	for (i = 0; i < sizeof(layers) / sizeof(layers[0]); i++)
		if (!strcmp(layer, layers[i][0]))
			layer = layers[i][1];
	snprintf(buf, size, "pass (not clean: %s)", layer);
	return buf;
}

/* The first line of an attempt's message, at most MSG_LINE bytes (cut on
 * a character), *more set when there is more of it. */
#define MSG_LINE 160

static size_t msg_line(const json_t *a, const char **s, int *more)
{
	size_t n;

	*s = json_string_value(json_object_get(a, "message"));
	if (!*s)
		*s = "";
	n = kj__first_line(*s, MSG_LINE);
	*more = (*s)[n] != '\0';
	return n;
}

static int check_shape(const json_t *m, struct kj_error *err)
{
	if (!json_is_object(m) || !json_is_object(json_object_get(m, "models")) ||
	    !json_is_array(json_object_get(m, "operators")) ||
	    !json_is_array(json_object_get(m, "attempts")))
		return kj_error_set(err, KJ_EINVAL, "report: not an object of kj_metrics_compute");
	return KJ_OK;
}

static char *finish(struct out *o, struct kj_error *err)
{
	if (o->oom || o->b.dropped) {
		kj__buf_release(&o->b);
		kj_error_set(err, o->oom ? KJ_ENOMEM : KJ_ELIMIT, "report: %s",
			     o->oom ? "out of memory" : "the report is larger than 1 GiB");
		return NULL;
	}
	{
		char *t = kj__buf_take(&o->b);

		if (!t)
			kj_error_set(err, KJ_ENOMEM, "report: out of memory");
		return t;
	}
}

/* The line about the suite (Markdown's text is escaped by md). */
static void suite_line(struct out *o, const json_t *suite, int md)
{
	char b1[32], b2[32], b3[32];

	if (!json_is_object(suite)) {
		adds(o, "The store holds no run.");
		return;
	}
	adds(o, "Suite ");
	if (md)
		md_esc(o, str(suite, "suite"));
	else
		esc(o, str(suite, "suite"));
	add(o, " (run %s of %s, %s operators), judge ", f(suite, "run_id", b1, sizeof(b1)),
	    f(suite, "runs", b2, sizeof(b2)), f(suite, "operators", b3, sizeof(b3)));
	if (md)
		md_esc(o, str(suite, "judge_version"));
	else
		esc(o, str(suite, "judge_version"));
	adds(o, ".");
}

/* What every rate is a share of (the JSON's "denominators"), and the
 * directions of a suite of specs that were not run here, with why: a
 * paragraph of its own, so that no rate is read without its N. */
static void denominators_block(struct out *o, const json_t *m, int md)
{
	const json_t *d = json_object_get(m, "denominators");
	const json_t *nr = json_object_get(json_object_get(m, "suite"), "not_run"), *v;
	char b[32];
	size_t i;

	if (!json_is_object(d))
		return;
	adds(o, md ? "Denominators: N = " : "<p id=\"denominators\">Denominators: N = ");
	add(o, "%s operators, ", f(d, "operators", b, sizeof(b)));
	(md ? md_esc : esc)(o, str(d, "operators_are"));
	adds(o, ". Accuracy: ");
	(md ? md_esc : esc)(o, str(d, "accuracy"));
	adds(o, "; clean pass rate: ");
	(md ? md_esc : esc)(o, str(d, "clean_pass_rate"));
	adds(o, "; pass@k: ");
	(md ? md_esc : esc)(o, str(d, "pass_at_k"));
	adds(o, "; fast_p: ");
	(md ? md_esc : esc)(o, str(d, "fast_p"));
	adds(o, "; attempt pass rate: ");
	(md ? md_esc : esc)(o, str(d, "attempt_pass_rate"));
	adds(o, ".");
	if (json_array_size(nr)) {
		add(o, " Not run here, in no figure (%zu): ", json_array_size(nr));
		json_array_foreach(nr, i, v) {
			adds(o, i ? "; " : "");
			(md ? md_esc : esc)(o, str(v, "task"));
			adds(o, " (");
			(md ? md_esc : esc)(o, str(v, "why"));
			adds(o, ")");
		}
		adds(o, ".");
	}
	adds(o, md ? "\n\n" : "</p>\n");
}

/* The report's warnings (its JSON's "warnings"), each a line that no
 * reader can miss: in Markdown a quoted bold line, in HTML a notice. */
static void warnings_block(struct out *o, const json_t *m, int md)
{
	const json_t *w = json_object_get(m, "warnings");
	size_t i;

	if (!json_array_size(w))
		return;
	if (!md)
		adds(o, "<div id=\"warnings\" class=\"warn\" role=\"alert\">");
	for (i = 0; i < json_array_size(w); i++) {
		const char *s = json_string_value(json_array_get(w, i));

		if (md) {
			adds(o, "> **Warning:** ");
			md_esc(o, s ? s : "");
			adds(o, "\n\n");
		} else {
			adds(o, "<p class=\"warning\"><b>Warning:</b> ");
			esc(o, s ? s : "");
			adds(o, "</p>");
		}
	}
	if (!md)
		adds(o, "</div>\n");
}

/* The suite's weak and not proven tasks (the JSON's suite.audit), each
 * with the canaries that passed (or could not be judged) and the first
 * reason, and whether the figures count the weak ones' attempts.  Nothing
 * when the store holds no audit of the suite. */
static void weak_block(struct out *o, const json_t *m, int md)
{
	const json_t *a = json_object_get(json_object_get(m, "suite"), "audit");
	const json_t *lists[2] = { json_object_get(a, "weak"), json_object_get(a, "not_proven") };
	int excluded = json_is_true(json_object_get(a, "exclude_weak"));
	char b[64];
	size_t k, i;

	if (!json_is_true(json_object_get(a, "recorded")))
		return;
	adds(o, md ? "## Weak tasks\n\n" : "<h2 id=\"weak\">Weak tasks</h2><p>");
	add(o, "The audit (docs/AUDIT.md) found %zu weak, %zu not proven and ",
	    json_array_size(lists[0]), json_array_size(lists[1]));
	add(o, "%s strong of the suite's tasks, ", f(a, "strong", b, sizeof(b)));
	add(o, "%s not audited. ", f(a, "unaudited", b, sizeof(b)));
	adds(o, excluded ? "The figures leave the weak tasks out (--exclude-weak): they are "
			   "not operators and their attempts count nowhere."
			 : md ? "The figures count the weak tasks' attempts; `report "
				"--exclude-weak` computes every figure without them."
			      : "The figures count the weak tasks' attempts; report "
				"--exclude-weak computes every figure without them.");
	adds(o, md ? "\n\n" : "</p><ul class=\"weak\">");
	for (k = 0; k < 2; k++)
		for (i = 0; i < json_array_size(lists[k]); i++) {
			const json_t *t = json_array_get(lists[k], i);
			const char *want = k ? "error" : "pass", *name, *v;
			const char *why = json_string_value(json_array_get(
				json_object_get(t, "reasons"), 0));
			json_t *val;
			int first = 1;

			adds(o, md ? "- **" : "<li><b>");
			if (md)
				md_esc(o, str(t, "task"));
			else
				esc(o, str(t, "task"));
			adds(o, md ? "**: " : "</b>: ");
			adds(o, k ? "not proven" : "weak");
			if (!k)
				add(o, " (%s attempts)", f(t, "attempts", b, sizeof(b)));
			json_object_foreach((json_t *)(uintptr_t)json_object_get(t, "canaries"),
					    name, val) {
				v = json_string_value(val);
				if (!v || strcmp(v, want) != 0)
					continue;
				adds(o, first ? (k ? "; not judged: " : "; passed: ") : ", ");
				if (md)
					md_esc(o, name);
				else
					esc(o, name);
				first = 0;
			}
			if (why) {
				adds(o, ". ");
				if (md)
					md_esc(o, why);
				else
					esc(o, why);
			}
			adds(o, md ? "\n" : "</li>");
		}
	adds(o, md ? "\n" : "</ul>\n");
}

/* An attempt's node and GPU ("-" for none: a store of before, the CPU). */
static const char *env_or_dash(const json_t *a, const char *key)
{
	const char *s = json_string_value(json_object_get(a, key));

	return s && *s ? s : "-";
}

/* ---- Markdown -------------------------------------------------------------- */

/* The models' table of the Markdown, with the runs their figures come
 * from and every k and p asked for (a k no operator reaches: "-"). */
static void md_models(struct out *o, const json_t *models, const struct kp *kp)
{
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t j;

	adds(o, "| model | runs | operators | accuracy | clean pass rate |");
	for (j = 0; j < kp->n_k; j++)
		add(o, " pass@%s (operators) |", kp->k[j]);
	for (j = 0; j < kp->n_p; j++)
		add(o, " fast_%s |", kp->p[j]);
	adds(o, " speedup (operators) | tokens | tokens/success | runtime s | attempt pass rate |\n|");
	for (j = 0; j < 5 + kp->n_k + kp->n_p + 5; j++)
		adds(o, " --- |");
	adds(o, "\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(o, "| ");
		md_esc(o, name);
		add(o, " | %s", runs_text(mo, b, sizeof(b)));
		add(o, " | %s", f(mo, "operators", b, sizeof(b)));
		add(o, " | %s %s", f(mo, "accuracy", b, sizeof(b)),
		    ci(mo, "accuracy_ci", c, sizeof(c)));
		add(o, " | %s %s", f(mo, "clean_pass_rate", b, sizeof(b)),
		    ci(mo, "clean_pass_rate_ci", c, sizeof(c)));
		for (j = 0; j < kp->n_k; j++) {
			const json_t *v = json_object_get(json_object_get(mo, "pass_at_k"), kp->k[j]);

			if (json_is_number(v))
				add(o, " | %s (%s)", kj_metrics_fmt(v, b, sizeof(b)),
				    f(json_object_get(mo, "pass_at_k_operators"), kp->k[j], c,
				      sizeof(c)));
			else
				adds(o, " | -");
		}
		for (j = 0; j < kp->n_p; j++)
			add(o, " | %s", f(json_object_get(mo, "fast_p"), kp->p[j], b, sizeof(b)));
		add(o, " | %s (%s)", f(mo, "speedup", b, sizeof(b)),
		    f(mo, "speedup_operators", c, sizeof(c)));
		add(o, " | %s", f(mo, "tokens_total", b, sizeof(b)));
		add(o, " | %s", f(mo, "tokens_per_success", b, sizeof(b)));
		add(o, " | %s", f(mo, "runtime_s", b, sizeof(b)));
		add(o, " | %s %s |\n", f(mo, "attempt_pass_rate", b, sizeof(b)),
		    ci(mo, "attempt_pass_rate_ci", c, sizeof(c)));
	}
	adds(o, "\nfast_p intervals:\n\n| model |");
	for (j = 0; j < kp->n_p; j++)
		add(o, " fast_%s |", kp->p[j]);
	adds(o, "\n| --- |");
	for (j = 0; j < kp->n_p; j++)
		adds(o, " --- |");
	adds(o, "\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(o, "| ");
		md_esc(o, name);
		for (j = 0; j < kp->n_p; j++)
			add(o, " | %s", ci(json_object_get(mo, "fast_p_ci"), kp->p[j], b, sizeof(b)));
		adds(o, " |\n");
	}
}

/* The speed of light (docs/metrics.md, "SOL score"): per model the mean
 * of its clean attempts' SOL-ExecBench scores and how many had one, and
 * each attempt's score that has one.  md: Markdown, else HTML. */
static void sol_block(struct out *o, const json_t *m, int md)
{
	const json_t *models = json_object_get(m, "models"), *list = json_object_get(m, "attempts");
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t i;

	adds(o, md ? "\n## Speed of light\n\nThe SOL-ExecBench score (docs/metrics.md): per "
		 "attempt the mean over its timed cases of 1 / (1 + (T_k - T_SOL) / (T_b - "
		 "T_SOL)), defined when every timed case has a speed of light; per model the "
		 "mean over its clean attempts that have one (their count beside it).\n\n"
		 "| model | SOL score (attempts) |\n| --- | --- |\n"
		 : "<h2>Speed of light</h2><p>The SOL-ExecBench score: per attempt the mean over "
		 "its timed cases of 1 / (1 + (T_k - T_SOL) / (T_b - T_SOL)), defined when every "
		 "timed case has a speed of light; per model the mean over its clean attempts "
		 "that have one (their count beside it).</p><div class=\"wrap\"><table "
		 "id=\"sol\"><tr><th class=\"l\">model</th><th>SOL score</th></tr>\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(o, md ? "| " : "<tr><td class=\"l\">");
		if (md)
			md_esc(o, name);
		else
			esc(o, name);
		add(o, md ? " | %s (%s) |\n" : "</td><td data-k=\"sol_score\">%s<span "
		    "class=\"ci\">%s attempts</span></td></tr>\n", f(mo, "sol_score", b, sizeof(b)),
		    f(mo, "sol_score_attempts", c, sizeof(c)));
	}
	adds(o, md ? "\n| model | operator | attempt | SOL score | cases |\n| --- | --- | --- "
		 "| --- | --- |\n" : "</table><table id=\"sol_attempts\"><tr><th class=\"l\">"
		 "model</th><th class=\"l\">operator</th><th class=\"l\">attempt</th>"
		 "<th>SOL score</th><th>cases</th></tr>\n");
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *a = json_array_get(list, i);
		const char *cells[3];
		size_t k;

		if (!json_is_number(json_object_get(a, "sol_score")))
			continue;
		cells[0] = str(a, "model");
		cells[1] = str(a, "task");
		cells[2] = label(a, b, sizeof(b));
		if (!md)
			adds(o, "<tr>");
		for (k = 0; k < 3; k++) {
			adds(o, md ? "| " : "<td class=\"l\">");
			if (md)
				md_esc(o, cells[k]);
			else
				esc(o, cells[k]);
			adds(o, md ? " " : "</td>");
		}
		add(o, md ? "| %s | %s |\n" : "<td>%s</td><td>%s</td></tr>\n",
		    f(a, "sol_score", b, sizeof(b)), f(a, "sol_cases", c, sizeof(c)));
	}
	if (!md)
		adds(o, "</table></div>\n");
}

char *kj_metrics_markdown(const json_t *m, struct kj_error *err)
{
	const json_t *models, *ops;
	struct out o;
	struct kp kp;
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t i, j;

	if (check_shape(m, err) != KJ_OK)
		return NULL;
	memset(&o, 0, sizeof(o));
	kj__buf_init(&o.b, OUT_MAX);
	models = json_object_get(m, "models");
	ops = json_object_get(m, "operators");
	kp_of(m, &kp);

	adds(&o, "# kjudge report\n\n");
	suite_line(&o, json_object_get(m, "suite"), 1);
	adds(&o, "\n\n");
	warnings_block(&o, m, 1);
	denominators_block(&o, m, 1);
	weak_block(&o, m, 1);
	adds(&o, "Rates are shares of the suite's operators (attempts for the attempt "
		 "pass rate) with their Wilson 95 % interval; every figure that is not a "
		 "count has three significant digits, `-` where there is none "
		 "(docs/metrics.md). `runs`: the runs of the store whose attempts the "
		 "model's figures count.\n\n## Models\n\n");
	md_models(&o, models, &kp);

	adds(&o, "\n## Failures\n\nAttempts that are not clean passes, by group (docs/metrics.md)."
		 "\n\n| model | attempts | not clean |");
	for (j = 0; j < N_GROUP; j++)
		add(&o, " %s |", groups[j]);
	adds(&o, " tokens missing |\n| --- | --- | --- |");
	for (j = 0; j < N_GROUP + 1; j++)
		adds(&o, " --- |");
	adds(&o, "\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		const json_t *fl = json_object_get(mo, "failures");

		adds(&o, "| ");
		md_esc(&o, name);
		add(&o, " | %s | %s", f(mo, "attempts", b, sizeof(b)), f(fl, "total", c, sizeof(c)));
		for (j = 0; j < N_GROUP; j++)
			add(&o, " | %s", f(fl, groups[j], b, sizeof(b)));
		add(&o, " | %s |\n", f(mo, "tokens_missing", b, sizeof(b)));
	}

	adds(&o, "\n## Operators\n\nEach model's best clean speedup, and its clean passes of its "
		 "attempts.\n\n| operator | level | problem |");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(&o, " ");
		md_esc(&o, name);
		adds(&o, " |");
	}
	adds(&o, "\n| --- | --- | --- |");
	for (j = 0; j < json_object_size(models); j++)
		adds(&o, " --- |");
	adds(&o, "\n");
	for (i = 0; i < json_array_size(ops); i++) {
		const json_t *op = json_array_get(ops, i);
		const json_t *oms = json_object_get(op, "models");

		adds(&o, "| ");
		md_esc(&o, str(op, "task"));
		add(&o, " | %s", f(op, "level", b, sizeof(b)));
		add(&o, " | %s", f(op, "problem", b, sizeof(b)));
		json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
			const json_t *om = json_object_get(oms, name);
			char n[32];

			if (!om || !json_integer_value(json_object_get(om, "attempts"))) {
				adds(&o, " | no attempt");
				continue;
			}
			add(&o, " | %s (%s/%s clean)", f(om, "best_speedup", b, sizeof(b)),
			    f(om, "clean_passes", c, sizeof(c)), f(om, "attempts", n, sizeof(n)));
		}
		adds(&o, " |\n");
	}

	adds(&o, "\n## Attempts\n\nEvery attempt counted: its verdict (a pass that is not clean "
		 "names the anti-cheat layer it failed), the error type and the first line of the "
		 "message, the run that judged it, and where its figures were measured (the "
		 "judge's node, the GPU; `-`: none recorded, or the CPU).\n\n"
		 "| model | operator | attempt | verdict | error | message | speedup | run | node "
		 "| GPU |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < json_array_size(json_object_get(m, "attempts")); i++) {
		const json_t *a = json_array_get(json_object_get(m, "attempts"), i);
		const char *msg;
		int more;
		size_t n = msg_line(a, &msg, &more);
		char v[96];

		adds(&o, "| ");
		md_esc(&o, str(a, "model"));
		adds(&o, " | ");
		md_esc(&o, str(a, "task"));
		adds(&o, " | ");
		md_esc(&o, label(a, b, sizeof(b)));
		adds(&o, " | ");
		md_esc(&o, verdict_label(a, v, sizeof(v)));
		adds(&o, " | ");
		md_esc(&o, *str(a, "error_type") ? str(a, "error_type") : "-");
		adds(&o, " | ");
		md_esc_n(&o, msg, n);
		adds(&o, more ? " ..." : n ? "" : "-");
		add(&o, " | %s | %s | ", f(a, "speedup", b, sizeof(b)), f(a, "run_id", c, sizeof(c)));
		md_esc(&o, env_or_dash(a, "node"));
		adds(&o, " | ");
		md_esc(&o, env_or_dash(a, "gpu"));
		adds(&o, " |\n");
	}
	sol_block(&o, m, 1);
	return finish(&o, err);
}

/* ---- HTML ------------------------------------------------------------------ */

/* No cell breaks a word: a name, a verdict or an error type (td.l) stays
 * on one line, since a browser would break "node-1" after its hyphen; a
 * heading or a figure's interval wraps only at spaces; a column is as
 * wide as its longest word, and a table wider than the page scrolls in
 * its .wrap.  Only a message (td.m, .msg) may cut a
 * word, one longer than its cell, so that a candidate's 4 kB token cannot
 * widen a table.  The layer that must fail (its kernels disabled) is
 * grey when it did: the expected result, no alarm. */
static const char css[] =
	"body{font:13px/1.4 system-ui,sans-serif;margin:16px auto;max-width:1240px;"
	"padding:0 12px;color:#222;box-sizing:border-box}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:24px}"
	"h3{font-size:13px;margin:4px 0 2px}"
	".wrap{overflow-x:auto;max-width:100%}"
	"table{border-collapse:collapse;margin:6px 0}"
	"th,td{border:1px solid #ccc;padding:3px 6px;text-align:right;vertical-align:top;"
	"overflow-wrap:normal;word-break:normal;hyphens:none}"
	"th{background:#f3f3f3}td.l,th.l{text-align:left}td.l{white-space:nowrap}"
	"td.m{min-width:14em;max-width:36em;text-align:left}"
	".m,.msg{overflow-wrap:anywhere}"
	"td.detail{text-align:left}"
	".ci{color:#666;font-size:11px;display:block}"
	".plots{display:flex;flex-wrap:wrap;gap:12px}"
	".plot{flex:1 1 520px;min-width:0;max-width:760px}"
	".plot svg{width:100%;height:auto;display:block}"
	"details{margin:2px 0}summary{cursor:pointer;text-align:left}"
	".att{margin:6px 0 6px 8px;text-align:left}"
	".msg{white-space:pre-wrap;font-family:monospace;font-size:12px}"
	".pass{color:#176d1a}.fail{color:#a11}.nc{color:#8a5a00}.expected{color:#666}"
	".warn{border:2px solid #c77700;border-left-width:8px;background:#fff4e0;"
	"color:#5a3500;padding:8px 12px;margin:12px 0;border-radius:4px}"
	".warn p{margin:2px 0;font-size:14px;overflow-wrap:anywhere}"
	".env{color:#555}"
	"svg text{font:11px system-ui,sans-serif;fill:#333}";

static const char *colour(size_t i)
{
	return palette[i % N_PALETTE];
}

/* A cell with a figure and its interval, data-k naming the figure. */
static void cell_ci(struct out *o, const json_t *obj, const char *key, const char *cikey,
		    const char *dk)
{
	char b[64], c[64];

	add(o, "<td data-k=\"%s\">%s", dk, f(obj, key, b, sizeof(b)));
	ci(obj, cikey, c, sizeof(c));
	if (*c)
		add(o, "<span class=\"ci\">%s</span>", c);
	adds(o, "</td>");
}

/* The class of an attempt's verdict: a clean pass, a pass that is not
 * clean, anything else. */
static const char *verdict_class(const json_t *a)
{
	if (strcmp(str(a, "status"), "pass"))
		return "fail";
	return json_is_true(json_object_get(a, "clean")) ? "pass" : "nc";
}

/* A plot's opening: its title as a heading a reader sees (and the SVG's
 * own title for a screen reader), the SVG of width 640 and height h. */
static void plot_open(struct out *o, const char *id, const char *title, double h)
{
	add(o, "<div class=\"plot\"><h3>%s</h3><svg id=\"%s\" viewBox=\"0 0 640 %.0f\" "
	       "role=\"img\"><title>%s</title>", title, id, h, title);
}

/* A name in a plot, cut to about max bytes (the whole name in a hover's
 * title): a long model name never runs over the plot or its neighbour. */
static void plot_name(struct out *o, const char *name, size_t max)
{
	char b[128];

	kj__text_brief(name, max < sizeof(b) - 4 ? max : sizeof(b) - 4, b, sizeof(b));
	esc(o, b);
}

/* The width of a character of a tick label in the SVG's units (11 px
 * text, a digit about 6.2 units wide, counted generously so that labels
 * that fit here fit in any browser's font), and the least gap between
 * two labels. */
#define CHAR_W 7.0
#define TICK_GAP 10.0

/* The label of a log-axis tick v ("0.0001", "2", "1e+06"). */
static void tick_label(double v, char *buf, size_t size)
{
	snprintf(buf, size, "%g", v);
}

/*
 * The ticks of a log axis over [10^llo, 10^lhi] drawn w units wide: of the
 * sets 1-2-5 a decade, 1-3, 1, then one decade in 2, 3, 5, 10 ..., the
 * densest with at least two ticks whose labels (extra characters added to
 * each) leave TICK_GAP between neighbours, however many decades the data
 * spans.  Writes up to max values into t; returns how many.
 */
static size_t log_ticks(double llo, double lhi, double w, size_t extra, double *t, size_t max)
{
	static const double m125[] = { 1, 2, 5 }, m13[] = { 1, 3 }, m1[] = { 1 };
	static const struct {
		const double *m;
		size_t n;
		int every;
	} sets[] = {
		{ m125, 3, 1 }, { m13, 2, 1 }, { m1, 1, 1 },  { m1, 1, 2 },  { m1, 1, 3 },
		{ m1, 1, 5 },   { m1, 1, 10 }, { m1, 1, 20 }, { m1, 1, 50 }, { m1, 1, 100 },
	};
	size_t si, n = 0;

	for (si = 0; si < sizeof(sets) / sizeof(sets[0]); si++) {
		double prev_right = 0;
		int e, fits = 1;

		n = 0;
		for (e = (int)floor(llo); e <= (int)ceil(lhi) && fits; e++) {
			size_t q;

			if (e % sets[si].every)
				continue;
			for (q = 0; q < sets[si].n && fits; q++) {
				double v = sets[si].m[q] * pow(10.0, e), lv = log10(v), x, half;
				char lab[32];

				if (lv < llo - 1e-9 || lv > lhi + 1e-9)
					continue;
				tick_label(v, lab, sizeof(lab));
				x = w * (lv - llo) / (lhi - llo);
				half = CHAR_W * (double)(strlen(lab) + extra) / 2;
				if (n && x - half < prev_right + TICK_GAP)
					fits = 0;
				else if (n < max) {
					t[n++] = v;
					prev_right = x + half;
				}
			}
		}
		if (fits && n >= 2)
			return n;
	}
	return n;
}

/* The log range [llo, lhi] (decades) around [lo, hi], padded by pad and
 * rounded out to half decades, at least one decade wide. */
static void log_range(double lo, double hi, double pad, double *llo, double *lhi)
{
	*llo = floor(log10(lo / pad) * 2) / 2;
	*lhi = ceil(log10(hi * pad) * 2) / 2;
	if (*lhi - *llo < 1) {
		*llo -= 0.5;
		*lhi += 0.5;
	}
}

/* The best clean speedups of model name over the operators, ascending:
 * how many (at most the operators') into v. */
static size_t bests(const json_t *ops, const char *name, double *v)
{
	size_t i, j, n = 0;

	for (i = 0; i < json_array_size(ops); i++) {
		const json_t *s = json_object_get(
			json_object_get(json_object_get(json_array_get(ops, i), "models"), name),
			"best_speedup");

		if (!json_is_number(s) || !(json_number_value(s) > 0))
			continue;
		v[n] = json_number_value(s);
		for (j = n++; j > 0 && v[j - 1] > v[j]; j--) {
			double x = v[j];

			v[j] = v[j - 1];
			v[j - 1] = x;
		}
	}
	return n;
}

/* The smallest and largest best clean speedup of any model (*lo > *hi
 * when there is none). */
static void speedup_span(const json_t *ops, double *lo, double *hi)
{
	size_t i;

	*lo = INFINITY;
	*hi = 0;
	for (i = 0; i < json_array_size(ops); i++) {
		const char *mn;
		json_t *om;

		json_object_foreach(json_object_get(json_array_get(ops, i), "models"), mn, om) {
			const json_t *s = json_object_get(om, "best_speedup");

			if (!json_is_number(s) || !(json_number_value(s) > 0))
				continue;
			if (json_number_value(s) < *lo)
				*lo = json_number_value(s);
			if (json_number_value(s) > *hi)
				*hi = json_number_value(s);
		}
	}
}

#define MAX_TICKS 64

/*
 * fast_p against p, each model's curve drawn exactly (a step down at each
 * of its operators' best speedups), the p asked for marked.  The p axis
 * is logarithmic over a range holding every best speedup and every p
 * asked for, so that speedups far below 1 are as visible as those above;
 * p = 0 sits at the axis' left end, apart: every speedup is above it.
 */
static void plot_fast_p(struct out *o, const json_t *models, const json_t *ops,
			const struct kp *kp)
{
	const double x0 = 50, y0 = 14, w = 560, h = 250, gap = 40;
	const double xl = x0 + gap, wl = w - gap;
	double lo, hi, llo, lhi, ticks[MAX_TICKS];
	double *v = malloc((json_array_size(ops) + 1) * sizeof(double));
	const char *name;
	json_t *mo;
	size_t i, k = 0, nt;
	int g, n_ops = (int)json_array_size(ops);

	if (!v) {
		o->oom = 1;
		return;
	}
	speedup_span(ops, &lo, &hi);
	for (i = 0; i < kp->n_p; i++)
		if (kp->pv[i] > 0) {
			lo = kp->pv[i] < lo ? kp->pv[i] : lo;
			hi = kp->pv[i] > hi ? kp->pv[i] : hi;
		}
	if (!(lo <= hi)) {
		lo = 0.5;
		hi = 2;
	}
	log_range(lo, hi, 1.5, &llo, &lhi);
#define PX(p) ((p) > 0 ? xl + wl * (log10(p) - llo) / (lhi - llo) : x0)
#define PY(fr) (y0 + h - h * (fr))
	plot_open(o, "plot-fast-p", "fast_p: share of operators with a best clean speedup above p",
		  y0 + h + 52);
	add(o, "<path d=\"M%.1f %.1fV%.1fH%.1f\" stroke=\"#333\" fill=\"none\"/>", x0, y0, y0 + h,
	    x0 + w);
	for (g = 0; g <= 4; g++)
		add(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#ddd\"/><text class=\"tick\" x=\"%.1f\" "
		       "y=\"%.1f\" text-anchor=\"end\">%.2f</text>", x0, PY(g / 4.0), x0 + w, x0 - 5,
		    PY(g / 4.0) + 4, g / 4.0);
	/* p = 0, then the break in the axis before its log scale. */
	add(o, "<text class=\"tick\" x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">0</text>"
	       "<path d=\"M%.1f %.1fl4 -8M%.1f %.1fl4 -8\" stroke=\"#333\"/>", x0, y0 + h + 19,
	    x0 + gap / 2 - 4, y0 + h + 4, x0 + gap / 2, y0 + h + 4);
	nt = log_ticks(llo, lhi, wl, 0, ticks, MAX_TICKS);
	for (i = 0; i < nt; i++) {
		char lab[32];

		tick_label(ticks[i], lab, sizeof(lab));
		add(o, "<path d=\"M%.1f %.1fv5\" stroke=\"#333\"/><path d=\"M%.1f %.1fV%.1f\" "
		       "stroke=\"%s\"%s/><text class=\"tick\" x=\"%.1f\" y=\"%.1f\" "
		       "text-anchor=\"middle\">%s</text>", PX(ticks[i]), y0 + h, PX(ticks[i]), y0,
		    y0 + h, ticks[i] == 1.0 ? "#888" : "#eee",
		    ticks[i] == 1.0 ? " stroke-dasharray=\"4 3\"" : "", PX(ticks[i]), y0 + h + 19,
		    lab);
	}
	add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">p: speedup threshold "
	       "(log scale)</text>", x0 + w / 2, y0 + h + 42);
	add(o, "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" "
	       "text-anchor=\"middle\">fast_p</text>", y0 + h / 2, y0 + h / 2);
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		size_t nb = bests(ops, name, v), q;

		/* Above every p below the smallest best: all nb of them. */
		add(o, "<path class=\"curve\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" "
		       "d=\"M%.1f %.1f", colour(k), x0, PY(n_ops ? (double)nb / n_ops : 0.0));
		for (q = 0; q < nb; q++)
			add(o, "H%.1fV%.1f", PX(v[q]),
			    PY(n_ops ? (double)(nb - q - 1) / n_ops : 0.0));
		add(o, "H%.1f\"><title>", x0 + w);
		esc(o, name);
		adds(o, "</title></path>");
		for (q = 0; q < kp->n_p; q++) {
			const json_t *fv = json_object_get(json_object_get(mo, "fast_p"), kp->p[q]);
			char b[32];

			if (!json_is_number(fv))
				continue;
			add(o, "<circle class=\"mark\" r=\"4\" cx=\"%.1f\" cy=\"%.1f\" fill=\"%s\">"
			       "<title>", PX(kp->pv[q]), PY(json_number_value(fv)), colour(k));
			esc(o, name);
			add(o, " fast_%s = %s</title></circle>", kp->p[q],
			    kj_metrics_fmt(fv, b, sizeof(b)));
		}
		add(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
		       "<text x=\"%.1f\" y=\"%.1f\">", x0 + w - 150, y0 + 4 + 14.0 * (double)k,
		    colour(k), x0 + w - 136, y0 + 13 + 14.0 * (double)k);
		plot_name(o, name, 18);
		adds(o, "</text>");
		k++;
	}
#undef PX
#undef PY
	adds(o, "</svg></div>");
	free(v);
}

/* Each model's best clean speedups on a log scale, one row per model. */
static void plot_speedups(struct out *o, const json_t *models, const json_t *ops)
{
	const double x0 = 100, w = 510, top = 10;
	double lo, hi, llo, lhi, ticks[MAX_TICKS];
	size_t nm = json_object_size(models), i, k = 0, nt;
	double row = 36, h = row * (double)(nm ? nm : 1);
	const char *name;
	json_t *mo;

	speedup_span(ops, &lo, &hi);
	if (!(lo <= hi))
		lo = hi = 1.0;
	lo = lo < 1.0 ? lo : 1.0;
	hi = hi > 1.0 ? hi : 1.0;
	log_range(lo, hi, 1.2, &llo, &lhi);
	plot_open(o, "plot-speedup", "Best clean speedup per operator (log scale)",
		  top + h + 45);
	add(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#333\"/>", x0, top + h, x0 + w);
	/* "×" is one character more on each label. */
	nt = log_ticks(llo, lhi, w, 1, ticks, MAX_TICKS);
	for (i = 0; i < nt; i++) {
		double x = x0 + w * (log10(ticks[i]) - llo) / (lhi - llo);
		char lab[32];

		tick_label(ticks[i], lab, sizeof(lab));
		add(o, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"%s\"%s/><text class=\"tick\" x=\"%.1f\" "
		       "y=\"%.1f\" text-anchor=\"middle\">%s&#215;</text>", x, top, top + h,
		    ticks[i] == 1.0 ? "#888" : "#e4e4e4",
		    ticks[i] == 1.0 ? " stroke-dasharray=\"4 3\"" : "", x, top + h + 15, lab);
	}
	add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">best clean speedup "
	       "(log scale)</text>", x0 + w / 2, top + h + 36);
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		double yc = top + row * ((double)k + 0.5);
		size_t n = 0;

		add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\"><title>", x0 - 6, yc + 4);
		esc(o, name);
		adds(o, "</title>");
		plot_name(o, name, 10);
		adds(o, "</text>");
		for (i = 0; i < json_array_size(ops); i++) {
			const json_t *op = json_array_get(ops, i);
			const json_t *s = json_object_get(
				json_object_get(json_object_get(op, "models"), name), "best_speedup");
			char b[32];
			double x;

			if (!json_is_number(s) || json_number_value(s) <= 0)
				continue;
			x = x0 + w * (log10(json_number_value(s)) - llo) / (lhi - llo);
			add(o, "<circle class=\"mark\" r=\"4.5\" cx=\"%.1f\" cy=\"%.1f\" fill=\"%s\" "
			       "fill-opacity=\"0.6\"><title>", x,
			    yc + (double)((int)(n % 5) - 2) * 3.0, colour(k));
			esc(o, str(op, "task"));
			add(o, ": %s</title></circle>", kj_metrics_fmt(s, b, sizeof(b)));
			n++;
		}
		if (!n)
			add(o, "<text x=\"%.1f\" y=\"%.1f\">no clean benchmarked attempt</text>",
			    x0 + 8, yc + 4);
		k++;
	}
	adds(o, "</svg></div>");
}

/* Accuracy and clean pass rate per model, bars with their Wilson
 * intervals. */
static void plot_rates(struct out *o, const json_t *models)
{
	static const char *const keys[] = { "accuracy", "clean_pass_rate", "attempt_pass_rate" };
	static const char *const cis[] = { "accuracy_ci", "clean_pass_rate_ci",
					   "attempt_pass_rate_ci" };
	static const char *const labels[] = { "accuracy", "clean pass rate", "attempt pass rate" };
	const double x0 = 50, y0 = 30, h = 230, w = 570;
	size_t nm = json_object_size(models), k = 0, q;
	double gw = w / (double)(nm ? nm : 1), bw = gw / 4.5;
	const char *name;
	json_t *mo;
	int g;

	plot_open(o, "plot-rates", "Pass rates with their Wilson 95 % intervals", 320);
	for (g = 0; g <= 4; g++) {
		double y = y0 + h - h * g / 4.0;

		add(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\"/><text class=\"tick\" x=\"%.1f\" "
		       "y=\"%.1f\" text-anchor=\"end\">%.2f</text>", x0, y, x0 + w, g ? "#ddd" : "#333",
		    x0 - 4, y + 4, g / 4.0);
	}
	for (q = 0; q < 3; q++)
		add(o, "<rect x=\"%.1f\" y=\"8\" width=\"10\" height=\"10\" fill=\"#555\" "
		       "fill-opacity=\"%.2f\"/><text x=\"%.1f\" y=\"17\">%s</text>",
		    x0 + 150.0 * (double)q, 1.0 - 0.3 * (double)q, x0 + 14 + 150.0 * (double)q,
		    labels[q]);
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		double gx = x0 + gw * (double)k;
		size_t fit = gw / CHAR_W > 6 ? (size_t)(gw / CHAR_W) - 4 : 2;

		for (q = 0; q < 3; q++) {
			const json_t *v = json_object_get(mo, keys[q]);
			const json_t *c = json_object_get(mo, cis[q]);
			double x = gx + bw * (0.4 + 1.2 * (double)q), val;
			char b[32];

			if (!json_is_number(v))
				continue;
			val = json_number_value(v);
			add(o, "<rect class=\"mark\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
			       "height=\"%.1f\" fill=\"%s\" fill-opacity=\"%.2f\"><title>", x,
			    y0 + h - h * val, bw, h * val > 0.5 ? h * val : 0.5, colour(k),
			    1.0 - 0.3 * (double)q);
			esc(o, name);
			add(o, " %s = %s", labels[q], kj_metrics_fmt(v, b, sizeof(b)));
			if (json_is_array(c)) {
				double lo = json_number_value(json_array_get(c, 0));
				double hi = json_number_value(json_array_get(c, 1));
				char cb[64];
				double xm = x + bw / 2;

				add(o, " %s</title></rect>", ci(mo, cis[q], cb, sizeof(cb)));
				add(o, "<path class=\"err\" stroke=\"#000\" fill=\"none\" d=\"M%.1f %.1fV%.1f"
				       "M%.1f %.1fH%.1fM%.1f %.1fH%.1f\"/>", xm, y0 + h - h * lo,
				    y0 + h - h * hi, xm - 4, y0 + h - h * lo, xm + 4, xm - 4,
				    y0 + h - h * hi, xm + 4);
			} else {
				adds(o, "</title></rect>");
			}
		}
		add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\"><title>", gx + gw / 2,
		    y0 + h + 18);
		esc(o, name);
		adds(o, "</title>");
		plot_name(o, name, fit);
		adds(o, "</text>");
		k++;
	}
	adds(o, "</svg></div>");
}

/* A case's status: the kernels-disabled run of a candidate must fail, so
 * its failure is the expected result, shown as such and not as an
 * alarm; its pass is the failure (the kernels are not what computes). */
static void case_status(struct out *o, const json_t *cs)
{
	const char *st = str(cs, "status");

	if (!strcmp(str(cs, "phase"), "disabled")) {
		if (!strcmp(st, "fail")) {
			adds(o, "<td class=\"l expected\">failed, as it must</td>");
			return;
		}
		if (!strcmp(st, "pass")) {
			adds(o, "<td class=\"l fail\">passed: it must fail</td>");
			return;
		}
	}
	add(o, "<td class=\"l %s\">", !strcmp(st, "pass") ? "pass" : "fail");
	esc(o, st);
	adds(o, "</td>");
}

/* One attempt and its cases, in an operator's details. */
static void html_attempt(struct out *o, const json_t *a)
{
	const json_t *cases = json_object_get(a, "cases");
	char b[96];
	size_t i;

	adds(o, "<div class=\"att\"><b>attempt ");
	esc(o, label(a, b, sizeof(b)));
	adds(o, "</b>");
	if (json_is_integer(json_object_get(a, "round")))
		add(o, " (round %s)", f(a, "round", b, sizeof(b)));
	add(o, ": <span class=\"%s\">", verdict_class(a));
	esc(o, verdict_label(a, b, sizeof(b)));
	adds(o, "</span>");
	if (json_is_string(json_object_get(a, "category"))) {
		adds(o, ", ");
		esc(o, str(a, "category"));
	}
	if (json_is_string(json_object_get(a, "error_type")) && *str(a, "error_type")) {
		adds(o, " ");
		esc(o, str(a, "error_type"));
	}
	add(o, ", speedup %s", f(a, "speedup", b, sizeof(b)));
	add(o, ", run %s", f(a, "run_id", b, sizeof(b)));
	adds(o, " <span class=\"env\">(node <span data-k=\"node\">");
	esc(o, env_or_dash(a, "node"));
	adds(o, "</span>, GPU <span data-k=\"gpu\">");
	esc(o, env_or_dash(a, "gpu"));
	adds(o, "</span>)</span>");
	if (json_is_string(json_object_get(a, "message"))) {
		adds(o, "<div class=\"msg\">");
		esc(o, str(a, "message"));
		adds(o, "</div>");
	}
	adds(o, "<table class=\"cases\"><tr><th class=\"l\">phase</th><th>case</th>"
		"<th class=\"l\">params</th><th class=\"l\">status</th><th class=\"l\">error</th>"
		"<th class=\"l\">message</th></tr>");
	for (i = 0; i < json_array_size(cases); i++) {
		const json_t *cs = json_array_get(cases, i);
		const json_t *params = json_object_get(cs, "params");

		adds(o, "<tr class=\"case\"><td class=\"l\">");
		esc(o, str(cs, "phase"));
		add(o, "</td><td>%s</td><td class=\"l\">", f(cs, "case_idx", b, sizeof(b)));
		if (json_is_string(params)) {
			esc(o, json_string_value(params));
		} else if (params && !json_is_null(params)) {
			int oom = 0;
			char *t = kj__json_dumps(params, JSON_COMPACT | JSON_SORT_KEYS, &oom);

			if (!t && oom)
				o->oom = 1;
			esc(o, t ? t : "");
			free(t);
		}
		adds(o, "</td>");
		case_status(o, cs);
		adds(o, "<td class=\"l\">");
		esc(o, str(cs, "error_type"));
		adds(o, "</td><td class=\"m msg\">");
		esc(o, str(cs, "message"));
		adds(o, "</td></tr>");
	}
	if (!json_array_size(cases))
		adds(o, "<tr><td class=\"l\" colspan=\"6\">no case recorded</td></tr>");
	adds(o, "</table></div>");
}

/* "1 operator", "3 operators": a count of operators under a figure. */
static const char *operators(const json_t *n, char *buf, size_t size)
{
	char num[32];

	snprintf(buf, size, "%s operator%s", kj_metrics_fmt(n, num, sizeof(num)),
		 json_integer_value(n) == 1 ? "" : "s");
	return buf;
}

/* The models' tables: the rates, speedup, tokens and the runs the figures
 * come from; then pass@k and fast_p for every k and p asked for (two
 * tables, so that each fits a narrow window). */
static void html_models(struct out *o, const json_t *models, const struct kp *kp)
{
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t j;

	adds(o, "<div class=\"wrap\"><table id=\"models\" class=\"models\"><tr>"
		"<th class=\"l\">model</th><th class=\"l\">runs</th><th>operators</th>"
		"<th>accuracy</th><th>clean pass rate</th><th>attempt pass rate</th>"
		"<th>speedup</th><th>tokens</th><th>tokens / success</th><th>runtime s</th>"
		"</tr>\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(o, "<tr data-model=\"");
		esc(o, name);
		adds(o, "\"><td class=\"l\">");
		esc(o, name);
		add(o, "</td><td class=\"l\" data-k=\"runs\">%s</td>", runs_text(mo, b, sizeof(b)));
		add(o, "<td data-k=\"operators\">%s</td>", f(mo, "operators", b, sizeof(b)));
		cell_ci(o, mo, "accuracy", "accuracy_ci", "accuracy");
		cell_ci(o, mo, "clean_pass_rate", "clean_pass_rate_ci", "clean_pass_rate");
		cell_ci(o, mo, "attempt_pass_rate", "attempt_pass_rate_ci", "attempt_pass_rate");
		add(o, "<td data-k=\"speedup\">%s<span class=\"ci\">%s</span></td>",
		    f(mo, "speedup", b, sizeof(b)),
		    operators(json_object_get(mo, "speedup_operators"), c, sizeof(c)));
		add(o, "<td data-k=\"tokens_total\">%s", f(mo, "tokens_total", b, sizeof(b)));
		add(o, "<span class=\"ci\">%s without counts</span></td>",
		    f(mo, "tokens_missing", b, sizeof(b)));
		add(o, "<td data-k=\"tokens_per_success\">%s</td>",
		    f(mo, "tokens_per_success", b, sizeof(b)));
		add(o, "<td data-k=\"runtime_s\">%s</td></tr>\n", f(mo, "runtime_s", b, sizeof(b)));
	}
	adds(o, "</table></div>\n<div class=\"wrap\"><table id=\"models-k\" class=\"models\"><tr>"
		"<th class=\"l\">model</th>");
	for (j = 0; j < kp->n_k; j++)
		add(o, "<th>pass@%s</th>", kp->k[j]);
	for (j = 0; j < kp->n_p; j++)
		add(o, "<th>fast_%s</th>", kp->p[j]);
	adds(o, "</tr>\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(o, "<tr data-model=\"");
		esc(o, name);
		adds(o, "\"><td class=\"l\">");
		esc(o, name);
		adds(o, "</td>");
		for (j = 0; j < kp->n_k; j++) {
			const json_t *v = json_object_get(json_object_get(mo, "pass_at_k"), kp->k[j]);

			add(o, "<td data-k=\"pass_at_k.%s\">%s", kp->k[j],
			    kj_metrics_fmt(v, b, sizeof(b)));
			if (json_is_number(v))
				add(o, "<span class=\"ci\">%s</span>",
				    operators(json_object_get(json_object_get(mo,
					    "pass_at_k_operators"), kp->k[j]), c, sizeof(c)));
			adds(o, "</td>");
		}
		for (j = 0; j < kp->n_p; j++)
			add(o, "<td data-k=\"fast_p.%s\">%s<span class=\"ci\">%s</span></td>", kp->p[j],
			    f(json_object_get(mo, "fast_p"), kp->p[j], b, sizeof(b)),
			    ci(json_object_get(mo, "fast_p_ci"), kp->p[j], c, sizeof(c)));
		adds(o, "</tr>\n");
	}
	adds(o, "</table></div>\n");
}

/* Every attempt counted, one row each: the Markdown's attempts table. */
static void html_attempts(struct out *o, const json_t *list)
{
	char b[96], c[32];
	size_t i;

	adds(o, "<h2>Attempts</h2><p>Every attempt counted: its verdict (a pass that is not "
		"clean names the anti-cheat layer it failed), the error type and the first line "
		"of the message (an operator's details hold the whole of it), the run that judged "
		"it, and where its figures were measured.</p><div class=\"wrap\">"
		"<table id=\"attempts\"><tr><th class=\"l\">model</th><th class=\"l\">operator</th>"
		"<th class=\"l\">attempt</th><th class=\"l\">verdict</th><th class=\"l\">error</th>"
		"<th class=\"l\">message</th><th>speedup</th><th>run</th><th class=\"l\">node</th>"
		"<th class=\"l\">GPU</th></tr>\n");
	for (i = 0; i < json_array_size(list); i++) {
		const json_t *a = json_array_get(list, i);
		const char *msg;
		int more;
		size_t n = msg_line(a, &msg, &more);

		adds(o, "<tr class=\"attempt\"><td class=\"l\">");
		esc(o, str(a, "model"));
		adds(o, "</td><td class=\"l\">");
		esc(o, str(a, "task"));
		adds(o, "</td><td class=\"l\">");
		esc(o, label(a, b, sizeof(b)));
		add(o, "</td><td class=\"l %s\" data-k=\"verdict\">", verdict_class(a));
		esc(o, verdict_label(a, b, sizeof(b)));
		adds(o, "</td><td class=\"l\" data-k=\"error\">");
		esc(o, *str(a, "error_type") ? str(a, "error_type") : "-");
		adds(o, "</td><td class=\"m\" data-k=\"message\">");
		esc_n(o, msg, n);
		adds(o, more ? " ..." : n ? "" : "-");
		add(o, "</td><td data-k=\"speedup\">%s</td><td data-k=\"run\">%s</td><td class=\"l\">",
		    f(a, "speedup", b, sizeof(b)), f(a, "run_id", c, sizeof(c)));
		esc(o, env_or_dash(a, "node"));
		adds(o, "</td><td class=\"l\">");
		esc(o, env_or_dash(a, "gpu"));
		adds(o, "</td></tr>\n");
	}
	adds(o, "</table></div>\n");
}

char *kj_metrics_html(const json_t *m, struct kj_error *err)
{
	const json_t *models, *ops;
	struct out o;
	struct kp kp;
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t i, j, nm;

	if (check_shape(m, err) != KJ_OK)
		return NULL;
	memset(&o, 0, sizeof(o));
	kj__buf_init(&o.b, OUT_MAX);
	models = json_object_get(m, "models");
	ops = json_object_get(m, "operators");
	nm = json_object_size(models);
	kp_of(m, &kp);

	add(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		"<title>kjudge report</title><style>%s</style></head><body>\n"
		"<h1>kjudge report</h1><p id=\"suite\">", css);
	suite_line(&o, json_object_get(m, "suite"), 0);
	adds(&o, " Rates are shares of the suite's operators (attempts for the attempt pass "
		 "rate), under each its Wilson 95 % interval; every figure that is not a count "
		 "has three significant digits, - where there is none. Runs: the runs of the "
		 "store whose attempts the model's figures count.</p>\n");
	warnings_block(&o, m, 0);
	denominators_block(&o, m, 0);
	weak_block(&o, m, 0);

	adds(&o, "<h2>Models</h2>");
	html_models(&o, models, &kp);
	if (!nm)
		adds(&o, "<p>No attempt is counted: no model to show.</p>\n");

	/* The plots. */
	if (nm) {
		adds(&o, "<h2>Plots</h2><div class=\"plots\">");
		plot_fast_p(&o, models, ops, &kp);
		plot_speedups(&o, models, ops);
		plot_rates(&o, models);
		adds(&o, "</div>\n");
	}

	/* Failures. */
	adds(&o, "<h2>Failures</h2><p>Attempts that are not clean passes, by group.</p>"
		 "<div class=\"wrap\"><table id=\"failures\"><tr><th class=\"l\">model</th>"
		 "<th>attempts</th><th>not clean</th>");
	for (j = 0; j < N_GROUP; j++)
		add(&o, "<th>%s</th>", groups[j]);
	adds(&o, "</tr>\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		const json_t *fl = json_object_get(mo, "failures");

		adds(&o, "<tr data-model=\"");
		esc(&o, name);
		adds(&o, "\"><td class=\"l\">");
		esc(&o, name);
		add(&o, "</td><td data-k=\"attempts\">%s</td><td data-k=\"failures.total\">%s</td>",
		    f(mo, "attempts", b, sizeof(b)), f(fl, "total", c, sizeof(c)));
		for (j = 0; j < N_GROUP; j++)
			add(&o, "<td data-k=\"failures.%s\">%s</td>", groups[j],
			    f(fl, groups[j], b, sizeof(b)));
		adds(&o, "</tr>\n");
	}
	adds(&o, "</table></div>\n");

	/* Operators, each opening onto its attempts and their cases. */
	add(&o, "<h2>Operators</h2><p>Each model's best clean speedup, and its clean passes of "
		"its attempts; open a row's details for every attempt and its cases.</p>"
		"<div class=\"wrap\"><table id=\"operators\"><tr><th class=\"l\">operator</th>"
		"<th>level</th><th>problem</th>");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(&o, "<th>");
		esc(&o, name);
		adds(&o, "</th>");
	}
	adds(&o, "</tr>\n");
	for (i = 0; i < json_array_size(ops); i++) {
		const json_t *op = json_array_get(ops, i);
		const json_t *oms = json_object_get(op, "models");

		add(&o, "<tr class=\"op\" data-op=\"%zu\"><td class=\"l\">", i);
		esc(&o, str(op, "task"));
		add(&o, "</td><td>%s</td><td>%s</td>", f(op, "level", b, sizeof(b)),
		    f(op, "problem", c, sizeof(c)));
		json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
			const json_t *om = json_object_get(oms, name);

			adds(&o, "<td data-model=\"");
			esc(&o, name);
			adds(&o, "\">");
			if (!om || !json_integer_value(json_object_get(om, "attempts"))) {
				adds(&o, "no attempt</td>");
				continue;
			}
			add(&o, "%s<span class=\"ci\">%s/", f(om, "best_speedup", b, sizeof(b)),
			    f(om, "clean_passes", c, sizeof(c)));
			add(&o, "%s clean</span></td>", f(om, "attempts", b, sizeof(b)));
		}
		add(&o, "</tr>\n<tr class=\"detail\"><td class=\"detail\" colspan=\"%zu\">"
			"<details data-op=\"%zu\"><summary>attempts and cases of ", 3 + nm, i);
		esc(&o, str(op, "task"));
		adds(&o, "</summary>");
		json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
			const json_t *recs = json_object_get(json_object_get(oms, name), "records");

			if (!json_array_size(recs))
				continue;
			adds(&o, "<div class=\"model\" data-model=\"");
			esc(&o, name);
			adds(&o, "\"><b>");
			esc(&o, name);
			adds(&o, "</b>");
			for (j = 0; j < json_array_size(recs); j++)
				html_attempt(&o, json_array_get(recs, j));
			adds(&o, "</div>");
		}
		adds(&o, "</details></td></tr>\n");
	}
	adds(&o, "</table></div>\n");
	html_attempts(&o, json_object_get(m, "attempts"));
	sol_block(&o, m, 0);
	adds(&o, "</body></html>\n");
	return finish(&o, err);
}
