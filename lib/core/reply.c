/*
 * reply.c - what kjudge/runner.h declares that belongs to no runner: the
 * life of a struct kj_reply and the names of the sides.
 *
 * The pipeline (this layer) makes, reads and frees replies; every runner
 * fills them.  So they live here, below the runners, and a runner is
 * linked in only for what is its own.
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/runner.h"
#include "kjudge/value.h"
#include "base/internal.h"

void kj_reply_init(struct kj_reply *r)
{
	memset(r, 0, sizeof(*r));
	r->type = KJ_ET_NOT_JUDGED;
}

void kj_reply_release(struct kj_reply *r)
{
	size_t i;

	free(r->message);
	free(r->exception);
	kj_value_free(r->outputs);
	json_decref(r->input_desc);
	json_decref(r->aliases);
	json_decref(r->phases);
	json_decref(r->kernel_names);
	json_decref(r->held);
	free(r->samples_ms);
	free(r->escaped_ms);
	for (i = 0; i < r->n_distinct; i++)
		kj_value_free(r->distinct[i]);
	free(r->distinct);
	free(r->distinct_set);
	free(r->call_set);
	free(r->call_distinct);
	for (i = 0; i < r->n_fds; i++)
		close(r->fds[i]);
	free(r->fds);
	kj_reply_init(r);
}

const char *kj_side_name(enum kj_side_role r)
{
	return r == KJ_SIDE_REFERENCE ? "reference" : "candidate";
}
