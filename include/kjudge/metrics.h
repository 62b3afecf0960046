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
 *                  holds); null when the store holds no run
 *     "warnings":  [ sentences a reader must see before the figures: today
 *                    speedups measured on more than one GPU model ]
 *     "models":    { MODEL: its figures, see docs/metrics.md }
 *     "attempts":  [ one record per attempt counted ]
 *     "operators": [ one record per operator of the suite, with each
 *                    model's attempts and their cases ]
 *
 *   Every figure is computed here, once; the renderers only print the
 *   JSON's numbers (three decimals for every number that is not a count,
 *   kj_metrics_fmt), so that the Markdown, the HTML and the JSON never
 *   disagree.
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

/*
 * The metrics of the store s (opened by the caller, KJ_STORE_READONLY is
 * enough).  On success *out is a new JSON object, the caller's
 * (json_decref); on error *out is NULL and err says why.
 */
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
 * as an integer, any other as "%.3f", null (or a missing value) as "-".
 * Writes a NUL-terminated string into buf (cut to size); returns buf.
 */
char *kj_metrics_fmt(const json_t *v, char *buf, size_t size);

#endif /* KJUDGE_METRICS_H */
