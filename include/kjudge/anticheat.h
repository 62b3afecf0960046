/*
 * kjudge/anticheat.h - the anti-cheat layers of a candidate that passed.
 *
 * Passing every case says the outputs are right, not that the candidate's
 * kernels computed them.  Three layers ask that, and `eval` needs all of
 * them for a clean pass (`verify --strict` and `benchmark --strict` too):
 *
 *   static            the static check (kjudge/validate.h): a kernel of its
 *                     own, launched from forward, no PyTorch computation
 *                     beside it;
 *   kernels disabled  the candidate run again with its Triton launches made
 *                     no-ops (kj_torch_spec.kernels_disabled) must fail a
 *                     case: its outputs depend on its kernels;
 *   profiler          on CUDA, one of the GPU kernels its forward ran is one
 *                     of its own (kj_torch_spec.profile_kernels).
 *
 * These functions decide each layer from what the caller ran; none of them
 * starts a worker.  Ownership: a struct kj_static_layer is the caller's;
 * kj_static_layer() fills it and kj_static_layer_release() frees what it
 * put there.
 */
#ifndef KJUDGE_ANTICHEAT_H
#define KJUDGE_ANTICHEAT_H

#include <jansson.h>
#include <stddef.h>

#include "kjudge/error.h"
#include "kjudge/verdict.h"

/* The error types of a pass that is not clean, by the first layer that
 * failed (the store's error_type, verify's and benchmark's --strict), are
 * rows of verdict.h's table: KJ_ET_STATIC_CHECK, KJ_ET_KERNELS_NOT_USED and
 * KJ_ET_NO_OWN_KERNEL. */

/* Longest message of a layer, with its NUL. */
#define KJ_LAYER_MSG_MAX 600

/* One layer's outcome: ok 1 passed, 0 failed (msg says why), -1 not run
 * or not applicable (msg may say why). */
struct kj_layer {
	int ok;
	char msg[KJ_LAYER_MSG_MAX];
};

struct kj_static_layer {
	struct kj_layer layer;
	char **kernels;   /* the candidate's own kernels' names (@triton.jit or
			   * __global__ functions of its source) */
	size_t n_kernels;
	json_t *record;   /* the record's "static" member (docs/cli.md) */
};

/*
 * Run the static check with the default rules on the file at `path`.  A
 * file it finds degraded, or cannot judge (it does not parse, cannot be
 * read), fails the layer: the record says why.  Returns KJ_OK with *out
 * filled, or KJ_ENOMEM (then *out holds nothing to release).
 */
int kj_static_layer(const char *path, struct kj_static_layer *out, struct kj_error *err);
void kj_static_layer_release(struct kj_static_layer *s);

/* The profiler layer from the names of the GPU kernels the candidate's
 * forward ran (kj_side.kernel_names; NULL: the record is missing, which
 * fails it) and the candidate's own kernels' names. */
void kj_profile_layer(const json_t *names, char *const *kernels, size_t n_kernels,
		      struct kj_layer *out);

/*
 * The kernels-disabled layer from its run: `ran` 0 when it could not run
 * (err_msg says why), else its counts, the worst status of its cases and
 * the first failing case's type and message.  It passes only when a case
 * failed charged to the candidate.
 */
void kj_disabled_layer(int ran, const char *err_msg, int n, int passed, enum kj_status worst,
		       enum kj_etype first_type, const char *first_msg, struct kj_layer *out);

/* The same from the kj_result of its run (ran: kj_verify returned KJ_OK). */
struct kj_result;
void kj_disabled_layer_result(int ran, const char *err_msg, const struct kj_result *r,
			      struct kj_layer *out);

/* A layer as a JSON object {"status": "pass"|"fail"|"not_run", "message"};
 * new reference, NULL on OOM. */
json_t *kj_layer_json(const struct kj_layer *l);

#endif /* KJUDGE_ANTICHEAT_H */
