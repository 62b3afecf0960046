/*
 * shard.c - an evaluation cut into shards (kjudge/eval.h): which attempts
 * each shard of a cluster run, or of `eval --shard I/K`, holds.
 *
 * Assignment.  A shard judges whole tasks where it can: the golden outputs
 * and the baseline of a task are computed once per shard that holds it, so
 * the fewer shards a task is cut over, the less is done twice.  With n
 * attempts over k shards, a task of more than ceil(n / k) attempts is cut
 * into pieces of at most that many (in the set's order); the pieces, largest
 * first (ties by task key, then piece), each go to the shard with the
 * fewest attempts so far (ties: the lowest number).  The result depends
 * only on the set and k, so every node computes the same one.
 *
 * Selection.  A shard started from a plan (plan.c) judges exactly the
 * attempts the plan gives it, found by their content keys among the
 * command's own; one started without a plan computes the assignment over
 * every candidate itself.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/eval.h"
#include "base/internal.h"

struct piece {
	size_t task;            /* index into set->tasks */
	size_t first, count;    /* the piece's attempts: task_todo[first..first+count) */
	size_t no;              /* the piece's number within its task */
};

static const struct kj_eval_set *sort_set; /* qsort has no context argument */

static int by_size(const void *x, const void *y)
{
	const struct piece *a = x, *b = y;
	int c;

	if (a->count != b->count)
		return a->count > b->count ? -1 : 1;
	c = strcmp(sort_set->tasks[a->task].key, sort_set->tasks[b->task].key);
	if (c)
		return c;
	if (a->task != b->task)
		return a->task < b->task ? -1 : 1;
	return a->no < b->no ? -1 : a->no > b->no;
}

int kj_eval_shard_assign(const struct kj_eval_set *set, const size_t *todo, size_t n, int k,
			 int *shard, struct kj_error *err)
{
	size_t *per_task = NULL, *start = NULL, *order = NULL, *fill = NULL, target, i, np = 0;
	struct piece *pieces = NULL;
	size_t *load = NULL;
	int rc = KJ_OK;

	if (k < 1)
		return kj_error_set(err, KJ_EINVAL, "shards: %d, at least 1", k);
	if (n == 0)
		return KJ_OK;
	target = (n + (size_t)k - 1) / (size_t)k;
	per_task = calloc(set->n_tasks + 1, sizeof(*per_task));
	start = calloc(set->n_tasks + 1, sizeof(*start));
	fill = calloc(set->n_tasks + 1, sizeof(*fill));
	order = calloc(n, sizeof(*order));
	pieces = calloc(n, sizeof(*pieces));
	load = calloc((size_t)k, sizeof(*load));
	if (!per_task || !start || !fill || !order || !pieces || !load) {
		rc = kj_error_set(err, KJ_ENOMEM, "out of memory");
		goto out;
	}
	for (i = 0; i < n; i++) {
		size_t t = (size_t)set->cands[todo[i]].task;

		if (t >= set->n_tasks) {
			rc = kj_error_set(err, KJ_EINVAL, "candidate %zu names no task", todo[i]);
			goto out;
		}
		per_task[t]++;
	}
	/* The attempts grouped by task, each group in the set's order. */
	for (i = 1; i <= set->n_tasks; i++)
		start[i] = start[i - 1] + per_task[i - 1];
	for (i = 0; i < n; i++) {
		size_t t = (size_t)set->cands[todo[i]].task;

		order[start[t] + fill[t]++] = i;
	}
	for (i = 0; i < set->n_tasks; i++) {
		size_t c = per_task[i], parts, p, at = start[i];

		if (!c)
			continue;
		parts = (c + target - 1) / target;
		for (p = 0; p < parts; p++) {
			/* Nearly equal pieces: the first c % parts one larger. */
			size_t len = c / parts + (p < c % parts);

			pieces[np].task = i;
			pieces[np].first = at;
			pieces[np].count = len;
			pieces[np].no = p;
			at += len;
			np++;
		}
	}
	sort_set = set;
	qsort(pieces, np, sizeof(*pieces), by_size);
	sort_set = NULL;
	for (i = 0; i < np; i++) {
		int s = 0, j;
		size_t m;

		for (j = 1; j < k; j++)
			if (load[j] < load[s])
				s = j;
		load[s] += pieces[i].count;
		for (m = 0; m < pieces[i].count; m++)
			shard[order[pieces[i].first + m]] = s;
	}
out:
	free(per_task);
	free(start);
	free(fill);
	free(order);
	free(pieces);
	free(load);
	return rc;
}

int kj_eval_shard_parse(const char *text, int *i, int *k, struct kj_error *err)
{
	const char *p = text;
	char *end;
	long a, b;

	errno = 0;
	a = strtol(p, &end, 10);
	if (end == p || *end != '/' || errno)
		goto bad;
	p = end + 1;
	b = strtol(p, &end, 10);
	if (end == p || *end || errno || b < 1 || b > KJ_EVAL_SHARDS_MAX || a < 0 || a >= b)
		goto bad;
	*i = (int)a;
	*k = (int)b;
	return KJ_OK;
bad:
	return kj_error_set(err, KJ_EINVAL, "'%s': I/K with 0 <= I < K, e.g. 0/4", text);
}

static int key_cmp(const void *a, const void *b)
{
	return strcmp(*(const char *const *)a, *(const char *const *)b);
}

/* Without a plan: the assignment over every candidate. */
static int select_all(const struct kj_eval_set *set, int i, int k, unsigned char *in,
		      struct kj_error *err)
{
	size_t *all = calloc(set->n_cands ? set->n_cands : 1, sizeof(*all));
	int *shard = calloc(set->n_cands ? set->n_cands : 1, sizeof(*shard));
	size_t c;
	int rc;

	if (!all || !shard) {
		free(all);
		free(shard);
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	}
	for (c = 0; c < set->n_cands; c++)
		all[c] = c;
	rc = kj_eval_shard_assign(set, all, set->n_cands, k, shard, err);
	for (c = 0; rc == KJ_OK && c < set->n_cands; c++)
		in[c] = shard[c] == i;
	free(all);
	free(shard);
	return rc;
}

int kj_eval_shard_select(const struct kj_eval_set *set, const char (*keys)[65],
			 const struct kj_eval_plan *plan, int i, int k, unsigned char *in,
			 struct kj_error *err)
{
	size_t c, n = 0, found = 0;
	const char **mine;
	int rc = KJ_OK;

	if (!plan)
		return select_all(set, i, k, in, err);
	mine = calloc(plan->n ? plan->n : 1, sizeof(*mine));
	if (!mine)
		return kj_error_set(err, KJ_ENOMEM, "out of memory");
	for (c = 0; c < plan->n; c++)
		if (plan->shard[c] == i)
			mine[n++] = plan->keys[c];
	qsort(mine, n, sizeof(*mine), key_cmp);
	for (c = 0; c < set->n_cands; c++) {
		const char *key = keys[c];

		in[c] = n && bsearch(&key, mine, n, sizeof(*mine), key_cmp) != NULL;
		found += in[c];
	}
	if (found != n)
		rc = kj_error_set(err, KJ_EINVAL, "the plan gives shard %d %zu attempts, and this "
				  "suite, these candidates and these settings hold %zu of them: "
				  "they changed since the plan was made", i, n, found);
	free(mine);
	return rc;
}
