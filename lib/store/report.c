/*
 * report.c - the metrics of kj_metrics_compute as Markdown and as one
 * self-contained HTML page (kjudge/metrics.h).
 *
 * Only the JSON's numbers are printed, through kj_metrics_fmt (counts as
 * integers, every other figure with three decimals), so that the three
 * renderings agree.  Every string of the store (task and model names,
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

static const char *const fast_keys[] = { "0", "0.5", "0.8", "1", "1.5", "2" };
static const double fast_ps[] = { 0.0, 0.5, 0.8, 1.0, 1.5, 2.0 };
#define N_FAST 6
static const char *const k_keys[] = { "1", "5", "10" };
#define N_K 3
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

/* s as HTML text (also safe inside a quoted attribute); a control byte of
 * the store is shown as its escape (\x1b), as on a terminal: HTML has no
 * use for one, and a page saved as text keeps none. */
static void esc(struct out *o, const char *s)
{
	const char *run = s;

	for (; s && *s; s++) {
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

/* s as one Markdown table cell: its markup escaped, every control byte as
 * its escape (\n, \r, \x1b: a cell is one line), since the Markdown is for
 * people, on a terminal (stdout) or in a file alike. */
static void md_esc(struct out *o, const char *s)
{
	const char *run = s;

	for (; s && *s; s++) {
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

char *kj_metrics_fmt(const json_t *v, char *buf, size_t size)
{
	if (json_is_integer(v))
		snprintf(buf, size, "%lld", (long long)json_integer_value(v));
	else if (json_is_real(v))
		snprintf(buf, size, "%.3f", json_real_value(v));
	else
		snprintf(buf, size, "-");
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

/* The pass@k keys some model has. */
static int have_k(const json_t *models, const char *k)
{
	const char *name;
	json_t *m;

	json_object_foreach((json_t *)(uintptr_t)models, name, m)
		if (json_object_get(json_object_get(m, "pass_at_k"), k))
			return 1;
	return 0;
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

/* An attempt's node and GPU ("-" for none: a store of before, the CPU). */
static const char *env_or_dash(const json_t *a, const char *key)
{
	const char *s = json_string_value(json_object_get(a, key));

	return s && *s ? s : "-";
}

/* ---- Markdown -------------------------------------------------------------- */

char *kj_metrics_markdown(const json_t *m, struct kj_error *err)
{
	const json_t *models, *ops;
	struct out o;
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t i, j;
	int hk[N_K];

	if (check_shape(m, err) != KJ_OK)
		return NULL;
	memset(&o, 0, sizeof(o));
	kj__buf_init(&o.b, OUT_MAX);
	models = json_object_get(m, "models");
	ops = json_object_get(m, "operators");
	for (j = 0; j < N_K; j++)
		hk[j] = have_k(models, k_keys[j]);

	adds(&o, "# kjudge report\n\n");
	suite_line(&o, json_object_get(m, "suite"), 1);
	adds(&o, "\n\n");
	warnings_block(&o, m, 1);
	denominators_block(&o, m, 1);
	adds(&o, "Rates are shares of the suite's operators (attempts for the attempt "
		 "pass rate) with their Wilson 95 % interval; every figure that is not a "
		 "count has three decimals (docs/metrics.md).\n\n## Models\n\n");
	adds(&o, "| model | operators | accuracy | clean pass rate |");
	for (j = 0; j < N_K; j++)
		if (hk[j])
			add(&o, " pass@%s (operators) |", k_keys[j]);
	for (j = 0; j < N_FAST; j++)
		add(&o, " fast_%s |", fast_keys[j]);
	adds(&o, " speedup (operators) | tokens | tokens/success | runtime s | attempt pass rate |\n|");
	for (j = 0; j < 4 + (size_t)(hk[0] + hk[1] + hk[2]) + N_FAST + 5; j++)
		adds(&o, " --- |");
	adds(&o, "\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(&o, "| ");
		md_esc(&o, name);
		add(&o, " | %s", f(mo, "operators", b, sizeof(b)));
		add(&o, " | %s %s", f(mo, "accuracy", b, sizeof(b)),
		    ci(mo, "accuracy_ci", c, sizeof(c)));
		add(&o, " | %s %s", f(mo, "clean_pass_rate", b, sizeof(b)),
		    ci(mo, "clean_pass_rate_ci", c, sizeof(c)));
		for (j = 0; j < N_K; j++) {
			const json_t *v = json_object_get(json_object_get(mo, "pass_at_k"), k_keys[j]);

			if (!hk[j])
				continue;
			if (v)
				add(&o, " | %s (%s)", kj_metrics_fmt(v, b, sizeof(b)),
				    f(json_object_get(mo, "pass_at_k_operators"), k_keys[j], c,
				      sizeof(c)));
			else
				adds(&o, " | -");
		}
		for (j = 0; j < N_FAST; j++)
			add(&o, " | %s", f(json_object_get(mo, "fast_p"), fast_keys[j], b, sizeof(b)));
		add(&o, " | %s (%s)", f(mo, "speedup", b, sizeof(b)),
		    f(mo, "speedup_operators", c, sizeof(c)));
		add(&o, " | %s", f(mo, "tokens_total", b, sizeof(b)));
		add(&o, " | %s", f(mo, "tokens_per_success", b, sizeof(b)));
		add(&o, " | %s", f(mo, "runtime_s", b, sizeof(b)));
		add(&o, " | %s %s |\n", f(mo, "attempt_pass_rate", b, sizeof(b)),
		    ci(mo, "attempt_pass_rate_ci", c, sizeof(c)));
	}
	adds(&o, "\nfast_p intervals:\n\n| model |");
	for (j = 0; j < N_FAST; j++)
		add(&o, " fast_%s |", fast_keys[j]);
	adds(&o, "\n| --- |");
	for (j = 0; j < N_FAST; j++)
		adds(&o, " --- |");
	adds(&o, "\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(&o, "| ");
		md_esc(&o, name);
		for (j = 0; j < N_FAST; j++)
			add(&o, " | %s", ci(json_object_get(mo, "fast_p_ci"), fast_keys[j], b,
					    sizeof(b)));
		adds(&o, " |\n");
	}

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

			if (!om || !json_integer_value(json_object_get(om, "attempts"))) {
				adds(&o, " | no attempt");
				continue;
			}
			{
				char n[32];

				add(&o, " | %s (%s/%s clean)", f(om, "best_speedup", b, sizeof(b)),
				    f(om, "clean_passes", c, sizeof(c)), f(om, "attempts", n, sizeof(n)));
			}
		}
		adds(&o, " |\n");
	}

	adds(&o, "\n## Attempts\n\nEvery attempt counted, with where its figures were "
		 "measured (the judge's node, the GPU; `-`: none recorded, or the CPU).\n\n"
		 "| model | operator | attempt | verdict | clean | speedup | node | GPU |\n"
		 "| --- | --- | --- | --- | --- | --- | --- | --- |\n");
	for (i = 0; i < json_array_size(json_object_get(m, "attempts")); i++) {
		const json_t *a = json_array_get(json_object_get(m, "attempts"), i);

		adds(&o, "| ");
		md_esc(&o, str(a, "model"));
		adds(&o, " | ");
		md_esc(&o, str(a, "task"));
		adds(&o, " | ");
		md_esc(&o, label(a, b, sizeof(b)));
		adds(&o, " | ");
		md_esc(&o, str(a, "verdict"));
		add(&o, " | %s | %s | ", json_is_true(json_object_get(a, "clean")) ? "yes" : "no",
		    f(a, "speedup", b, sizeof(b)));
		md_esc(&o, env_or_dash(a, "node"));
		adds(&o, " | ");
		md_esc(&o, env_or_dash(a, "gpu"));
		adds(&o, " |\n");
	}
	return finish(&o, err);
}

/* ---- HTML ------------------------------------------------------------------ */

static const char css[] =
	"body{font:13px/1.4 system-ui,sans-serif;margin:16px auto;max-width:1240px;"
	"padding:0 12px;color:#222;box-sizing:border-box}"
	"h1{font-size:20px}h2{font-size:16px;margin-top:24px}"
	".wrap{overflow-x:auto;max-width:100%}"
	"table{border-collapse:collapse;width:100%;margin:6px 0}"
	"th,td{border:1px solid #ccc;padding:3px 4px;text-align:right;vertical-align:top}"
	"td.l{overflow-wrap:anywhere}"
	"th{background:#f3f3f3}td.l,th.l{text-align:left}"
	".ci{color:#666;font-size:11px;display:block}"
	".plots{display:flex;flex-wrap:wrap;gap:12px}"
	".plot{flex:1 1 520px;min-width:0;max-width:760px}"
	".plot svg{width:100%;height:auto;display:block}"
	"details{margin:2px 0}summary{cursor:pointer;text-align:left}"
	".att{margin:6px 0 6px 8px;text-align:left}"
	".msg{white-space:pre-wrap;overflow-wrap:anywhere;font-family:monospace;font-size:12px}"
	".pass{color:#176d1a}.fail{color:#a11}"
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

/* fast_p over a fine grid of p, each model's curve, the six points marked. */
static void plot_fast_p(struct out *o, const json_t *models, const json_t *ops)
{
	const double x0 = 50, y0 = 20, w = 560, h = 250;
	double pmax = 2.0, step;
	const char *name;
	json_t *mo;
	size_t i, k = 0;
	int g, ng = 240, n_ops = (int)json_array_size(ops);

	for (i = 0; i < json_array_size(ops); i++) {
		const char *mn;
		json_t *om;

		json_object_foreach(json_object_get(json_array_get(ops, i), "models"), mn, om) {
			double s = json_number_value(json_object_get(om, "best_speedup"));

			if (s > pmax)
				pmax = s;
		}
	}
	pmax *= 1.05;
	step = pmax / ng;
	adds(o, "<div class=\"plot\"><svg id=\"plot-fast-p\" viewBox=\"0 0 640 320\" role=\"img\">"
		"<title>fast_p against p</title>");
	/* Axes, ticks. */
	add(o, "<path d=\"M%.1f %.1fV%.1fH%.1f\" stroke=\"#333\" fill=\"none\"/>", x0, y0, y0 + h,
	    x0 + w);
	for (g = 0; g <= 4; g++) {
		double y = y0 + h - h * g / 4.0;

		add(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#ddd\"/><text x=\"%.1f\" y=\"%.1f\" "
		       "text-anchor=\"end\">%.2f</text>", x0, y, x0 + w, x0 - 4, y + 4, g / 4.0);
	}
	for (g = 0; g <= 10; g++) {
		double p = pmax * g / 10.0, x = x0 + w * p / pmax;

		add(o, "<path d=\"M%.1f %.1fv5\" stroke=\"#333\"/><text x=\"%.1f\" y=\"%.1f\" "
		       "text-anchor=\"middle\">%.2f</text>", x, y0 + h, x, y0 + h + 17, p);
	}
	add(o, "<text x=\"%.1f\" y=\"314\" text-anchor=\"middle\">p (speedup threshold)</text>",
	    x0 + w / 2);
	add(o, "<text x=\"12\" y=\"%.1f\" transform=\"rotate(-90 12 %.1f)\" "
	       "text-anchor=\"middle\">fast_p</text>", y0 + h / 2, y0 + h / 2);
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		add(o, "<path class=\"curve\" fill=\"none\" stroke-width=\"2\" stroke=\"%s\" d=\"",
		    colour(k));
		for (g = 0; g <= ng; g++) {
			double p = step * g;
			int cnt = 0;

			for (i = 0; i < json_array_size(ops); i++) {
				const json_t *om = json_object_get(
					json_object_get(json_array_get(ops, i), "models"), name);
				const json_t *s = json_object_get(om, "best_speedup");

				cnt += json_is_number(s) && json_number_value(s) > p;
			}
			add(o, "%s%.1f %.1f", g ? "L" : "M", x0 + w * p / pmax,
			    y0 + h - h * (n_ops ? (double)cnt / n_ops : 0.0));
		}
		adds(o, "\"><title>");
		esc(o, name);
		adds(o, "</title></path>");
		for (g = 0; g < N_FAST; g++) {
			const json_t *v = json_object_get(json_object_get(mo, "fast_p"), fast_keys[g]);
			char b[32];

			if (!json_is_number(v))
				continue;
			add(o, "<circle class=\"mark\" r=\"4\" cx=\"%.1f\" cy=\"%.1f\" fill=\"%s\">"
			       "<title>", x0 + w * fast_ps[g] / pmax,
			    y0 + h - h * json_number_value(v), colour(k));
			esc(o, name);
			add(o, " fast_%s = %s</title></circle>", fast_keys[g],
			    kj_metrics_fmt(v, b, sizeof(b)));
		}
		add(o, "<rect x=\"%.1f\" y=\"%.1f\" width=\"10\" height=\"10\" fill=\"%s\"/>"
		       "<text x=\"%.1f\" y=\"%.1f\">", x0 + w - 120, y0 + 4 + 14.0 * (double)k,
		    colour(k), x0 + w - 106, y0 + 13 + 14.0 * (double)k);
		esc(o, name);
		adds(o, "</text>");
		k++;
	}
	adds(o, "</svg></div>");
}

/* Each model's best clean speedups on a log scale, one row per model. */
static void plot_speedups(struct out *o, const json_t *models, const json_t *ops)
{
	const double x0 = 90, w = 520, top = 20;
	double lo = 1.0, hi = 1.0, llo, lhi;
	size_t nm = json_object_size(models), i, k = 0;
	double row = 36, h = row * (double)(nm ? nm : 1);
	const char *name;
	json_t *mo;
	int e;

	for (i = 0; i < json_array_size(ops); i++) {
		const char *mn;
		json_t *om;

		json_object_foreach(json_object_get(json_array_get(ops, i), "models"), mn, om) {
			const json_t *s = json_object_get(om, "best_speedup");

			if (!json_is_number(s) || json_number_value(s) <= 0)
				continue;
			if (json_number_value(s) < lo)
				lo = json_number_value(s);
			if (json_number_value(s) > hi)
				hi = json_number_value(s);
		}
	}
	llo = floor(log10(lo / 1.2) * 2) / 2;
	lhi = ceil(log10(hi * 1.2) * 2) / 2;
	if (lhi - llo < 1) {
		llo -= 0.5;
		lhi += 0.5;
	}
	add(o, "<div class=\"plot\"><svg id=\"plot-speedup\" viewBox=\"0 0 640 %.0f\" role=\"img\">"
	       "<title>best clean speedup per operator "
	       "(log scale)</title>", top + h + 45);
	add(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"#333\"/>", x0, top + h, x0 + w);
	for (e = (int)floor(llo); e <= (int)ceil(lhi); e++) {
		static const double mult[] = { 1, 2, 5 };
		size_t q;

		for (q = 0; q < 3; q++) {
			double v = mult[q] * pow(10.0, e), lv = log10(v), x;

			if (lv < llo - 1e-9 || lv > lhi + 1e-9)
				continue;
			x = x0 + w * (lv - llo) / (lhi - llo);
			add(o, "<path d=\"M%.1f %.1fV%.1f\" stroke=\"%s\"%s/><text x=\"%.1f\" "
			       "y=\"%.1f\" text-anchor=\"middle\">%g&#215;</text>", x, top, top + h,
			    v == 1.0 ? "#888" : "#e4e4e4",
			    v == 1.0 ? " stroke-dasharray=\"4 3\"" : "", x, top + h + 15, v);
		}
	}
	add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">best clean speedup "
	       "(log scale)</text>", x0 + w / 2, top + h + 36);
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		double yc = top + row * ((double)k + 0.5);
		size_t n = 0;

		add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">", x0 - 6, yc + 4);
		esc(o, name);
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
		if (!n) {
			add(o, "<text x=\"%.1f\" y=\"%.1f\">no clean benchmarked attempt</text>",
			    x0 + 8, yc + 4);
		}
		k++;
	}
	adds(o, "</svg></div>");
}

/* Accuracy and clean pass rate per model, bars with their Wilson
 * intervals. */
static void plot_rates(struct out *o, const json_t *models)
{
	static const char *const keys[] = { "accuracy", "clean_pass_rate", "attempt_pass_rate" };
	static const char *const labels[] = { "accuracy", "clean pass rate", "attempt pass rate" };
	const double x0 = 50, y0 = 30, h = 230, w = 570;
	size_t nm = json_object_size(models), k = 0, q;
	double gw = w / (double)(nm ? nm : 1), bw = gw / 4.5;
	const char *name;
	json_t *mo;
	int g;

	adds(o, "<div class=\"plot\"><svg id=\"plot-rates\" viewBox=\"0 0 640 320\" role=\"img\">"
		"<title>pass rates with Wilson 95 % "
		"intervals</title>");
	for (g = 0; g <= 4; g++) {
		double y = y0 + h - h * g / 4.0;

		add(o, "<path d=\"M%.1f %.1fH%.1f\" stroke=\"%s\"/><text x=\"%.1f\" y=\"%.1f\" "
		       "text-anchor=\"end\">%.2f</text>", x0, y, x0 + w, g ? "#ddd" : "#333", x0 - 4,
		    y + 4, g / 4.0);
	}
	for (q = 0; q < 3; q++)
		add(o, "<rect x=\"%.1f\" y=\"8\" width=\"10\" height=\"10\" fill=\"#555\" "
		       "fill-opacity=\"%.2f\"/><text x=\"%.1f\" y=\"17\">%s</text>",
		    x0 + 150.0 * (double)q, 1.0 - 0.3 * (double)q, x0 + 14 + 150.0 * (double)q,
		    labels[q]);
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		double gx = x0 + gw * (double)k;

		for (q = 0; q < 3; q++) {
			const json_t *v = json_object_get(mo, keys[q]);
			const json_t *c = json_object_get(mo, q == 0 ? "accuracy_ci"
							  : q == 1 ? "clean_pass_rate_ci"
								   : "attempt_pass_rate_ci");
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

				add(o, " %s</title></rect>", ci(mo, q == 0 ? "accuracy_ci"
								      : q == 1 ? "clean_pass_rate_ci"
									       : "attempt_pass_rate_ci",
								  cb, sizeof(cb)));
				add(o, "<path class=\"err\" stroke=\"#000\" fill=\"none\" d=\"M%.1f %.1fV%.1f"
				       "M%.1f %.1fH%.1fM%.1f %.1fH%.1f\"/>", xm, y0 + h - h * lo,
				    y0 + h - h * hi, xm - 4, y0 + h - h * lo, xm + 4, xm - 4,
				    y0 + h - h * hi, xm + 4);
			} else {
				adds(o, "</title></rect>");
			}
		}
		add(o, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">", gx + gw / 2,
		    y0 + h + 18);
		esc(o, name);
		adds(o, "</text>");
		k++;
	}
	adds(o, "</svg></div>");
}

/* One attempt and its cases, in an operator's details. */
static void html_attempt(struct out *o, const json_t *a)
{
	const json_t *cases = json_object_get(a, "cases");
	const char *status = str(a, "status");
	char b[64];
	size_t i;

	adds(o, "<div class=\"att\"><b>attempt ");
	esc(o, label(a, b, sizeof(b)));
	adds(o, "</b>");
	if (json_is_integer(json_object_get(a, "round")))
		add(o, " (round %s)", f(a, "round", b, sizeof(b)));
	add(o, ": <span class=\"%s\">%s</span>", !strcmp(status, "pass") ? "pass" : "fail",
	    !strcmp(status, "pass") ? "pass" : "fail");
	adds(o, " (");
	esc(o, str(a, "verdict"));
	add(o, "%s)", json_is_true(json_object_get(a, "clean")) ? ", clean" : "");
	if (json_is_string(json_object_get(a, "category"))) {
		adds(o, ", ");
		esc(o, str(a, "category"));
	}
	if (json_is_string(json_object_get(a, "error_type")) && *str(a, "error_type")) {
		adds(o, " ");
		esc(o, str(a, "error_type"));
	}
	add(o, ", speedup %s", f(a, "speedup", b, sizeof(b)));
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
		add(o, "</td><td class=\"l %s\">", !strcmp(str(cs, "status"), "pass") ? "pass" : "fail");
		esc(o, str(cs, "status"));
		adds(o, "</td><td class=\"l\">");
		esc(o, str(cs, "error_type"));
		adds(o, "</td><td class=\"l msg\">");
		esc(o, str(cs, "message"));
		adds(o, "</td></tr>");
	}
	if (!json_array_size(cases))
		adds(o, "<tr><td class=\"l\" colspan=\"6\">no case recorded</td></tr>");
	adds(o, "</table></div>");
}

char *kj_metrics_html(const json_t *m, struct kj_error *err)
{
	const json_t *models, *ops;
	struct out o;
	const char *name;
	json_t *mo;
	char b[64], c[64];
	size_t i, j, nm;
	int hk[N_K];

	if (check_shape(m, err) != KJ_OK)
		return NULL;
	memset(&o, 0, sizeof(o));
	kj__buf_init(&o.b, OUT_MAX);
	models = json_object_get(m, "models");
	ops = json_object_get(m, "operators");
	nm = json_object_size(models);
	for (j = 0; j < N_K; j++)
		hk[j] = have_k(models, k_keys[j]);

	add(&o, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
		"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
		"<title>kjudge report</title><style>%s</style></head><body>\n"
		"<h1>kjudge report</h1><p id=\"suite\">", css);
	suite_line(&o, json_object_get(m, "suite"), 0);
	adds(&o, " Rates are shares of the suite's operators (attempts for the attempt pass "
		 "rate), under each its Wilson 95 % interval; every figure that is not a count "
		 "has three decimals.</p>\n");
	warnings_block(&o, m, 0);
	denominators_block(&o, m, 0);

	/* The models' table. */
	adds(&o, "<h2>Models</h2><div class=\"wrap\"><table id=\"models\"><tr>"
		 "<th class=\"l\">model</th><th>operators</th><th>accuracy</th>"
		 "<th>clean pass rate</th>");
	for (j = 0; j < N_K; j++)
		if (hk[j])
			add(&o, "<th>pass@%s</th>", k_keys[j]);
	for (j = 0; j < N_FAST; j++)
		add(&o, "<th>fast_%s</th>", fast_keys[j]);
	adds(&o, "<th>speedup</th><th>tokens</th><th>tokens / success</th><th>runtime s</th>"
		 "<th>attempt pass rate</th></tr>\n");
	json_object_foreach((json_t *)(uintptr_t)models, name, mo) {
		adds(&o, "<tr data-model=\"");
		esc(&o, name);
		adds(&o, "\"><td class=\"l\">");
		esc(&o, name);
		add(&o, "</td><td data-k=\"operators\">%s</td>", f(mo, "operators", b, sizeof(b)));
		cell_ci(&o, mo, "accuracy", "accuracy_ci", "accuracy");
		cell_ci(&o, mo, "clean_pass_rate", "clean_pass_rate_ci", "clean_pass_rate");
		for (j = 0; j < N_K; j++) {
			const json_t *v = json_object_get(json_object_get(mo, "pass_at_k"), k_keys[j]);

			if (!hk[j])
				continue;
			add(&o, "<td data-k=\"pass_at_k.%s\">%s", k_keys[j],
			    kj_metrics_fmt(v, b, sizeof(b)));
			if (v)
				add(&o, "<span class=\"ci\">%s operators</span>",
				    f(json_object_get(mo, "pass_at_k_operators"), k_keys[j], c,
				      sizeof(c)));
			adds(&o, "</td>");
		}
		for (j = 0; j < N_FAST; j++) {
			char dk[32];

			snprintf(dk, sizeof(dk), "fast_p.%s", fast_keys[j]);
			add(&o, "<td data-k=\"%s\">%s<span class=\"ci\">%s</span></td>", dk,
			    f(json_object_get(mo, "fast_p"), fast_keys[j], b, sizeof(b)),
			    ci(json_object_get(mo, "fast_p_ci"), fast_keys[j], c, sizeof(c)));
		}
		add(&o, "<td data-k=\"speedup\">%s<span class=\"ci\">%s operators</span></td>",
		    f(mo, "speedup", b, sizeof(b)), f(mo, "speedup_operators", c, sizeof(c)));
		add(&o, "<td data-k=\"tokens_total\">%s", f(mo, "tokens_total", b, sizeof(b)));
		add(&o, "<span class=\"ci\">%s without counts</span></td>",
		    f(mo, "tokens_missing", b, sizeof(b)));
		add(&o, "<td data-k=\"tokens_per_success\">%s</td>",
		    f(mo, "tokens_per_success", b, sizeof(b)));
		add(&o, "<td data-k=\"runtime_s\">%s</td>", f(mo, "runtime_s", b, sizeof(b)));
		cell_ci(&o, mo, "attempt_pass_rate", "attempt_pass_rate_ci", "attempt_pass_rate");
		adds(&o, "</tr>\n");
	}
	adds(&o, "</table></div>\n");
	if (!nm)
		adds(&o, "<p>No attempt is counted: no model to show.</p>\n");

	/* The plots. */
	if (nm) {
		adds(&o, "<h2>Plots</h2><div class=\"plots\">");
		plot_fast_p(&o, models, ops);
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
		add(&o, "</tr>\n<tr class=\"detail\"><td class=\"l\" colspan=\"%zu\">"
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
	adds(&o, "</table></div>\n</body></html>\n");
	return finish(&o, err);
}
