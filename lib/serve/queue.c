/*
 * queue.c - the server's queue of accepted evaluations (kjudge/serve.h):
 * one lane per model, first come first served within a lane, round-robin
 * over the lanes, so a client that submits a thousand evaluations at once
 * delays another's next one by at most one evaluation per model.
 */
#include <stdlib.h>
#include <string.h>

#include "kjudge/serve.h"
#include "base/banned.h"

struct lane {
	char *model;
	long long *seq;          /* a ring would save the moves; lanes are short */
	size_t n, cap;
};

struct kj_serve_queue {
	struct lane *lanes;
	size_t n, cap;
	size_t next;             /* the lane served after the last one */
	size_t depth;
};

struct kj_serve_queue *kj_serve_queue_new(void)
{
	return calloc(1, sizeof(struct kj_serve_queue));
}

void kj_serve_queue_free(struct kj_serve_queue *q)
{
	size_t i;

	if (!q)
		return;
	for (i = 0; i < q->n; i++) {
		free(q->lanes[i].model);
		free(q->lanes[i].seq);
	}
	free(q->lanes);
	free(q);
}

int kj_serve_queue_push(struct kj_serve_queue *q, long long seq, const char *model)
{
	struct lane *l = NULL;
	size_t i;

	for (i = 0; i < q->n && !l; i++)
		if (strcmp(q->lanes[i].model, model) == 0)
			l = &q->lanes[i];
	if (!l) {
		if (q->n == q->cap) {
			size_t cap = q->cap ? q->cap * 2 : 8;
			struct lane *lanes = realloc(q->lanes, cap * sizeof(*lanes));

			if (!lanes)
				return KJ_ENOMEM;
			q->lanes = lanes;
			q->cap = cap;
		}
		l = &q->lanes[q->n];
		memset(l, 0, sizeof(*l));
		if (!(l->model = strdup(model)))
			return KJ_ENOMEM;
		q->n++;
	}
	if (l->n == l->cap) {
		size_t cap = l->cap ? l->cap * 2 : 16;
		long long *s = realloc(l->seq, cap * sizeof(*s));

		if (!s)
			return KJ_ENOMEM;
		l->seq = s;
		l->cap = cap;
	}
	l->seq[l->n++] = seq;
	q->depth++;
	return KJ_OK;
}

int kj_serve_queue_pop(struct kj_serve_queue *q, long long *seq)
{
	size_t k;

	for (k = 0; k < q->n; k++) {
		struct lane *l = &q->lanes[(q->next + k) % q->n];

		if (l->n == 0)
			continue;
		*seq = l->seq[0];
		memmove(l->seq, l->seq + 1, (l->n - 1) * sizeof(*l->seq));
		l->n--;
		q->depth--;
		q->next = (q->next + k + 1) % q->n;
		return 1;
	}
	return 0;
}

int kj_serve_queue_remove(struct kj_serve_queue *q, long long seq)
{
	size_t i, j;

	for (i = 0; i < q->n; i++) {
		struct lane *l = &q->lanes[i];

		for (j = 0; j < l->n; j++)
			if (l->seq[j] == seq) {
				memmove(l->seq + j, l->seq + j + 1, (l->n - j - 1) * sizeof(*l->seq));
				l->n--;
				q->depth--;
				return 1;
			}
	}
	return 0;
}

size_t kj_serve_queue_depth(const struct kj_serve_queue *q)
{
	return q->depth;
}
