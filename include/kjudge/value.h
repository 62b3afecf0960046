/*
 * kjudge/value.h - the outputs of one call, as a tree, and their
 * comparison.
 *
 * A model's forward may return a tensor, a Python number, a string, None,
 * or lists, tuples and dicts of them.  A worker describes what it returned
 * as JSON (the wire form below); tensors travel as .npy data, the
 * reference's in files of its own directory, the candidate's in sealed
 * memory files (memfds it can no longer write, grow or shrink) passed with
 * the reply over the protocol socket; everything else by value.  The judge parses that into a
 * struct kj_value tree and compares the reference's tree with the
 * candidate's, every leaf of it:
 *
 *   tensors     by the comparator (compare.h), with the run's rules;
 *   numbers     a float on either side: both as doubles by the dtype
 *               threshold rule of float64 data (the fallback t = 2^-13:
 *               |a - g| / max(|g|, t) < t; NaN only matches NaN, an Inf
 *               only the same Inf); two ints exactly (as decimal text, so
 *               integers of any size compare exactly);
 *   bool, str, None                           exactly;
 *   lists and tuples                          element by element (a list
 *               and a tuple are both sequences: the same length is
 *               required, not the same Python type);
 *   dicts       the same keys, each value compared;
 *   a tensor against anything else, or any two different kinds: a failure
 *               whose message says what each side returned.
 * numpy arrays and every other object are kind "other" with their type's
 * name: a reference that returns one (or a complex tensor or number) is the
 * task's UnsupportedOutput; a candidate that returns one where the
 * reference returned a tensor fails with OutputTypeMismatch.
 *
 * Wire form (one JSON object per value):
 *   {"kind": "tensor", "file": NAME, "dtype": "float32", "shape": [..]}
 *   {"kind": "tensor", "fd": I, "dtype": "float32", "shape": [..]}
 *                     the I-th (0-based) descriptor sent with the reply
 *   {"kind": "tensor", "fd": I, "device": "cuda" | "host", ...}
 *                     a top-level output left where it was made: the
 *                     descriptor is a CUDA virtual-memory allocation
 *                     exported as a file descriptor ("cuda"), or a memory
 *                     file of its raw bytes ("host", for tests on the CPU);
 *                     neither is sealed: only a copy taken by the reference's
 *                     worker is compared (pipeline.c, "outputs compared on
 *                     the device")
 *   {"kind": "tensor", "kept": N, ...}
 *                     a reference's top-level output its worker keeps
 *                     (number N) to compare candidates' copies against
 *   {"kind": "int", "value": "123"}         decimal text, any size
 *   {"kind": "float", "value": "0x1.8p+1"}  float.hex(): exact; "inf", "-inf", "nan"
 *   {"kind": "bool", "value": true}
 *   {"kind": "str", "value": "..."}
 *   {"kind": "none"}
 *   {"kind": "list" | "tuple", "items": [value, ...]}
 *   {"kind": "dict", "items": [[key, value], ...]}   keys are values too
 *   {"kind": "other", "type": "numpy.ndarray"}
 * NAME is a file name (no '/') in the directory the judge gave the side.
 * The .npy header inside the data gives the storage dtype and the shape; a
 * reply that says otherwise is the candidate's ProtocolError.
 *
 * Ownership: kj_value_parse() returns a tree the caller frees with
 * kj_value_free(); strings in it are owned by the tree.
 */
#ifndef KJUDGE_VALUE_H
#define KJUDGE_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "kjudge/compare.h"
#include "kjudge/dtype.h"
#include "kjudge/error.h"
#include "kjudge/verdict.h"

enum kj_value_kind {
	KJ_VAL_TENSOR,
	KJ_VAL_INT,
	KJ_VAL_FLOAT,
	KJ_VAL_BOOL,
	KJ_VAL_STR,
	KJ_VAL_NONE,
	KJ_VAL_LIST,
	KJ_VAL_TUPLE,
	KJ_VAL_DICT,
	KJ_VAL_OTHER,
};

enum kj_value_dev { KJ_DEV_NONE = 0, KJ_DEV_CUDA, KJ_DEV_HOST };

struct kj_value {
	enum kj_value_kind kind;
	char *text;        /* INT: decimal; STR: the string; OTHER: type name;
			    * TENSOR: the file name; FLOAT: as sent */
	double num;        /* FLOAT */
	int boolean;       /* BOOL */
	int fd;            /* TENSOR: the index of its descriptor among the
			    * reply's, or -1: a file named by text */
	enum kj_value_dev dev; /* TENSOR with fd: where the bytes are (KJ_DEV_NONE:
				* a sealed memory file of .npy data) */
	int kept;          /* TENSOR: the number the reference's worker keeps it
			    * under, or -1 */
	char dtype[32];    /* TENSOR: logical dtype name as sent */
	int ndim;          /* TENSOR */
	int64_t shape[KJ_MAX_DIMS];
	size_t n;          /* LIST, TUPLE: items; DICT: pairs */
	struct kj_value **items;  /* LIST, TUPLE: n; DICT: 2n (key, value, ...) */
};

/* The deepest nesting and the most leaves a tree may have. */
#define KJ_VALUE_MAX_DEPTH 32
#define KJ_VALUE_MAX_NODES 100000

/*
 * Parse the wire form of one value.  Returns KJ_OK with *out set, KJ_ENOMEM,
 * or KJ_EPROTOCOL (with err saying what is wrong) for anything that is not
 * the wire form: an unknown kind, a missing field, a file name with a '/',
 * nesting or size past the limits above.
 */
int kj_value_parse(const json_t *j, struct kj_value **out, struct kj_error *err);

/* The wire form of a tree (for the golden cache): a new reference, or NULL
 * when out of memory. */
json_t *kj_value_json(const struct kj_value *v);

void kj_value_free(struct kj_value *v);

/* "a float32 tensor of shape [4, 5]", "the int 3", "a list of 2 items",
 * "a numpy.ndarray": what a side returned, for messages. */
void kj_value_describe(const struct kj_value *v, char *buf, size_t size);

/*
 * Whether the tree holds anything the judge cannot compare: an "other"
 * leaf, or a tensor of a dtype it does not know (complex).  Fills why.
 */
int kj_value_unsupported(const struct kj_value *v, char *why, size_t size);

/*
 * Compare output `index` (1-based, for messages) of the reference, `ref`,
 * whose tensor files are in ref_dir, with the candidate's, `cand`, whose
 * tensors came as the descriptors cand_fds[0..n_fds) (the caller keeps
 * them).  A candidate's tensor named by a file, or by a descriptor that is
 * not a memfd sealed against writes, growth and shrinking, is refused: the
 * judge never opens a path the candidate names, nor reads memory the
 * candidate can still change or cut short.  Returns KJ_OK when a verdict was reached: *same is 1 when every
 * leaf compared equal, else 0 and c holds the failure (its type, message,
 * output and, for tensors, the comparator's record in c->metrics).  Returns
 * a code with err filled when the judge itself failed (out of memory, a
 * golden file it cannot read: KJ_EIO with "golden" in the message); c is
 * then unchanged.  Candidate data that is not sealed, is not .npy, or does
 * not match what its reply said is the candidate's failure (ProtocolError),
 * not an error.
 */
int kj_value_compare(const struct kj_value *ref, const char *ref_dir,
		     const struct kj_value *cand, const int *cand_fds, size_t n_fds,
		     const struct kj_cmp_options *copt, int index,
		     struct kj_case *c, int *same, struct kj_error *err);

/* The bytes of every tensor leaf of a tree, by dtype and shape (what the
 * data holds, headers aside). */
double kj_value_tensor_bytes(const struct kj_value *v);

/* The names of the files of the tensors in a tree, in order: calls fn for
 * each (fn returns 0 to go on).  Used to move goldens into the cache. */
int kj_value_each_file(const struct kj_value *v,
		       int (*fn)(void *ctx, const struct kj_value *leaf), void *ctx);

/* The tensor leaves of a tree, and those held on a device: kept by the
 * reference's worker, exported by a side, and those of either that are not
 * items of the top-level list (which no worker makes: a reply that has one
 * is malformed). */
struct kj_value_held {
	size_t tensors, kept, dev, nested;
};
void kj_value_held(const struct kj_value *v, struct kj_value_held *h);

#endif /* KJUDGE_VALUE_H */
