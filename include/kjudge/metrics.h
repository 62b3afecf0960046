/*
 * kjudge/metrics.h - the figures of an evaluation, computed from the
 * results store (lib/store/metrics.c), and their renderings as Markdown and
 * as one self-contained HTML page (lib/store/report.c).  The definitions
 * are docs/metrics.md's.
 *
 * Theory of operation.
 *
 *   kj_metrics_compute reads the store in one read transaction (a snapshot:
 *   an eval writing at the same time is seen as of one commit) and builds
 *   one JSON object:
 *
 *     "suite":     the latest run's suite: run_id, operators (how many),
 *                  judge_version, settings (the run's JSON), suite,
 *                  started_at, finished_at, runs (how many runs the store
 *                  holds), audit (its tasks' audits: recorded, exclude_weak,
 *                  weak [{task, task_key, path, reasons, canaries,
 *                  attempts}], not_proven [{task, task_key, path, reasons,
 *                  canaries}], strong and unaudited counts); null when the
 *                  store holds no run
 *     "warnings":  [ sentences a reader must see before the figures:
 *                    speedups measured on more than one GPU model, runs
 *                    of different settings, attempts left out ]
 *     "k", "p":    the k of pass@k and the p of fast_p computed
 *     "runs":      [ the runs whose attempts are counted: run_id,
 *                    started_at, settings ]
 *     "models":    { MODEL: its figures, see docs/metrics.md }
 *     "attempts":  [ one record per attempt counted ]
 *     "operators": [ one record per operator of the suite, with each
 *                    model's attempts and their cases ]
 *
 *   Every figure is computed here, once; the renderers only print the
 *   JSON's numbers (three significant digits for every number that is not
 *   a count, kj_metrics_fmt), so that the Markdown, the HTML and the JSON
 *   never disagree.
 *
 * Failure handling.  Every query is checked: a query that fails (a store
 * that is locked, damaged, or lacks a column) is an error with err filled
 * (the store's codes: KJ_ESTORE, KJ_EBUSY, KJ_ENOMEM, KJ_EIO), never a
 * partial set of figures.  Text from the store (task names, messages) is
 * untrusted: it is made valid UTF-8 and bounded before it is put in the
 * JSON, and escaped by the renderers.
 */
#ifndef KJUDGE_METRICS_H
#define KJUDGE_METRICS_H

#include <stddef.h>

#include <jansson.h>

#include "kjudge/error.h"
#include "kjudge/store.h"

/* The most values of --k or --p. */
#define KJ_METRICS_LIST_MAX 32

/* What the figures are computed for: the k of pass@k and the p of fast_p,
 * ascending, each once (docs/metrics.md).  Caller-owned. */
struct kj_metrics_opts {
	size_t n_k, n_p;
	int k[KJ_METRICS_LIST_MAX];
	double p[KJ_METRICS_LIST_MAX];
	/* Every figure without the tasks whose latest audit says weak: they
	 * are not operators and their attempts count nowhere (report
	 * --exclude-weak); 0: they count, and are listed. */
	int exclude_weak;
};

/* The defaults: k = 1, 2, 5, 10; p = 0, 0.5, 0.8, 1, 1.5, 2. */
void kj_metrics_opts_default(struct kj_metrics_opts *o);

/* A comma-separated list ("1,2,5") into o's k (whole numbers 1 to 10^6)
 * or p (decimal numbers 0 to 10^9), sorted, duplicates dropped.  KJ_OK, or
 * KJ_EINVAL with err naming the value (o is then as it was for that list
 * only in part: the caller refuses the command). */
int kj_metrics_parse_k(const char *list, struct kj_metrics_opts *o, struct kj_error *err);
int kj_metrics_parse_p(const char *list, struct kj_metrics_opts *o, struct kj_error *err);

/* The key of fast_p for p in the JSON: its shortest decimal form that
 * reads back as p ("0", "0.5", "1.25").  Written into buf; returns buf. */
char *kj_metrics_p_key(double p, char *buf, size_t size);

/*
 * The metrics of the store s (opened by the caller, KJ_STORE_READONLY is
 * enough), for the k and p of o (kj_metrics_compute: the defaults).  On
 * success *out is a new JSON object, the caller's (json_decref); on error
 * *out is NULL and err says why.
 */
int kj_metrics_compute_with(struct kj_store *s, const struct kj_metrics_opts *o, json_t **out,
			    struct kj_error *err);
int kj_metrics_compute(struct kj_store *s, json_t **out, struct kj_error *err);

/*
 * The renderings of m, an object of kj_metrics_compute: a new
 * NUL-terminated text the caller frees, or NULL with err filled (KJ_ENOMEM;
 * KJ_EINVAL when m is not such an object).  The HTML page references
 * nothing outside itself (inline CSS, plots as inline SVG, no script).
 */
char *kj_metrics_markdown(const json_t *m, struct kj_error *err);
char *kj_metrics_html(const json_t *m, struct kj_error *err);

/*
 * How the renderers print a number of the JSON: a whole number (a count)
 * as an integer; any other with three significant digits and no exponent
 * (0.000235, 0.750, 2.00, 12.3; digits left of the point are all kept:
 * 1235; 0 as "0"; below 1e-9 as 2.35e-10); null (or a missing value) as
 * "-".  Writes a NUL-terminated string into buf (cut to size); returns buf.
 */
char *kj_metrics_fmt(const json_t *v, char *buf, size_t size);

/*
 * The SOL-ExecBench score of a kernel time t_k against the baseline's t_b
 * and the speed of light t_sol (docs/metrics.md): 1 / (1 + (t_k - t_sol) /
 * (t_b - t_sol)), 0.5 at the baseline, 1 at the bound; where t_b is not
 * above t_sol, 1 when t_k <= t_sol, else 0.  NAN when a time is not finite
 * and positive.
 */
double kj_sol_score(double t_k, double t_b, double t_sol);

#endif /* KJUDGE_METRICS_H */
