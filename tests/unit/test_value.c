/*
 * test_value.c - the wire form of outputs held on a device (value.h):
 * "device" leaves (a side's exported descriptor) and "kept" leaves (the
 * reference's worker's own), what is refused, and that no comparison on the
 * host ever passes one; a complex actual against a real golden.
 */
#include <stdint.h>
#include <string.h>

#include <jansson.h>

#include "kjudge/tensor.h"
#include "kjudge/value.h"
#include "kjudge/verdict.h"
#include "unit.h"

static struct kj_value *parse(const char *text, int *rc, struct kj_error *err)
{
	json_error_t je;
	json_t *j = json_loads(text, 0, &je);
	struct kj_value *v = NULL;

	KJ_CHECK(j != NULL);
	*rc = kj_value_parse(j, &v, err);
	json_decref(j);
	return v;
}

KJ_TEST(value_device_and_kept_leaves)
{
	struct kj_error err;
	struct kj_value_held h;
	struct kj_value *v;
	json_t *back;
	int rc;

	v = parse("{\"kind\": \"list\", \"items\": ["
		  "{\"kind\": \"tensor\", \"fd\": 1, \"device\": \"cuda\", \"dtype\": \"float32\", "
		  "\"shape\": [2, 3]},"
		  "{\"kind\": \"tensor\", \"fd\": 0, \"device\": \"host\", \"dtype\": \"bfloat16\", "
		  "\"shape\": [4]},"
		  "{\"kind\": \"tensor\", \"kept\": 7, \"dtype\": \"float16\", \"shape\": [5]},"
		  "{\"kind\": \"tensor\", \"fd\": 2, \"dtype\": \"float32\", \"shape\": []}]}",
		  &rc, &err);
	KJ_CHECK_OK(rc, &err);
	KJ_CHECK_INT(v->items[0]->dev, KJ_DEV_CUDA);
	KJ_CHECK_INT(v->items[0]->fd, 1);
	KJ_CHECK_INT(v->items[0]->kept, -1);
	KJ_CHECK_INT(v->items[1]->dev, KJ_DEV_HOST);
	KJ_CHECK_INT(v->items[2]->kept, 7);
	KJ_CHECK_INT(v->items[2]->fd, -1);
	KJ_CHECK_INT(v->items[2]->dev, KJ_DEV_NONE);
	KJ_CHECK_INT(v->items[3]->dev, KJ_DEV_NONE); /* a sealed file */
	kj_value_held(v, &h);
	KJ_CHECK_INT(h.tensors, 4);
	KJ_CHECK_INT(h.dev, 2);
	KJ_CHECK_INT(h.kept, 1);
	KJ_CHECK_INT(h.nested, 0);
	/* The wire form round-trips. */
	back = kj_value_json(v->items[2]);
	KJ_CHECK_INT(json_integer_value(json_object_get(back, "kept")), 7);
	json_decref(back);
	back = kj_value_json(v->items[0]);
	KJ_CHECK_STR(json_string_value(json_object_get(back, "device")), "cuda");
	json_decref(back);
	kj_value_free(v);

	/* Below the top level: counted as nested. */
	v = parse("{\"kind\": \"list\", \"items\": [{\"kind\": \"tuple\", \"items\": ["
		  "{\"kind\": \"tensor\", \"kept\": 0, \"dtype\": \"float32\", \"shape\": [1]}]}]}",
		  &rc, &err);
	KJ_CHECK_OK(rc, &err);
	kj_value_held(v, &h);
	KJ_CHECK_INT(h.kept, 1);
	KJ_CHECK_INT(h.nested, 1);
	kj_value_free(v);
}

KJ_TEST(value_device_leaves_malformed)
{
	static const char *const bad[] = {
		/* device memory without a descriptor, or of no known kind */
		"{\"kind\": \"tensor\", \"device\": \"cuda\", \"file\": \"a.npy\", "
		"\"dtype\": \"float32\", \"shape\": [1]}",
		"{\"kind\": \"tensor\", \"fd\": 0, \"device\": \"tpu\", \"dtype\": \"float32\", "
		"\"shape\": [1]}",
		"{\"kind\": \"tensor\", \"fd\": 0, \"device\": 1, \"dtype\": \"float32\", "
		"\"shape\": [1]}",
		/* kept with a file or a descriptor too, or a bad number */
		"{\"kind\": \"tensor\", \"kept\": 1, \"fd\": 0, \"dtype\": \"float32\", "
		"\"shape\": [1]}",
		"{\"kind\": \"tensor\", \"kept\": 1, \"file\": \"a.npy\", \"dtype\": \"float32\", "
		"\"shape\": [1]}",
		"{\"kind\": \"tensor\", \"kept\": -1, \"dtype\": \"float32\", \"shape\": [1]}",
		"{\"kind\": \"tensor\", \"kept\": \"3\", \"dtype\": \"float32\", \"shape\": [1]}",
		"{\"kind\": \"tensor\", \"kept\": 4294967296, \"dtype\": \"float32\", \"shape\": [1]}",
	};
	struct kj_error err;
	struct kj_value *v;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		v = parse(bad[i], &rc, &err);
		if (rc != KJ_EPROTOCOL)
			kj_test_fail(__FILE__, __LINE__, "accepted: %s", bad[i]);
		KJ_CHECK(v == NULL);
	}
}

/* A held leaf reaching the host comparison is the judge's error, never a
 * pass, whichever side holds it. */
KJ_TEST(value_held_leaf_never_passes_on_the_host)
{
	static const char *const pairs[][2] = {
		{ "{\"kind\": \"tensor\", \"kept\": 0, \"dtype\": \"float32\", \"shape\": [1]}",
		  "{\"kind\": \"tensor\", \"fd\": 0, \"device\": \"host\", \"dtype\": \"float32\", "
		  "\"shape\": [1]}" },
		{ "{\"kind\": \"tensor\", \"file\": \"g.npy\", \"dtype\": \"float32\", \"shape\": [1]}",
		  "{\"kind\": \"tensor\", \"kept\": 0, \"dtype\": \"float32\", \"shape\": [1]}" },
		{ "{\"kind\": \"tensor\", \"file\": \"g.npy\", \"dtype\": \"float32\", \"shape\": [1]}",
		  "{\"kind\": \"tensor\", \"fd\": 0, \"device\": \"cuda\", \"dtype\": \"float32\", "
		  "\"shape\": [1]}" },
	};
	size_t i;

	for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++) {
		struct kj_error err;
		struct kj_value *g, *a;
		struct kj_case c;
		int rc, same = 1, fds[1] = { -1 };

		g = parse(pairs[i][0], &rc, &err);
		KJ_CHECK_OK(rc, &err);
		a = parse(pairs[i][1], &rc, &err);
		KJ_CHECK_OK(rc, &err);
		memset(&c, 0, sizeof(c));
		rc = kj_value_compare(g, kj_test_tmpdir(), a, fds, 1, NULL, 1, &c, &same, &err);
		KJ_CHECK(rc != KJ_OK);
		KJ_CHECK_INT(same, 0);
		kj_value_free(g);
		kj_value_free(a);
	}
}

/* A complex actual against a real golden tensor fails with its own
 * message, however it comes: as the worker names it ("other", "complex64
 * tensor") or as a forged tensor leaf of a complex dtype. */
KJ_TEST(value_complex_into_real_fails)
{
	static const char *const actuals[] = {
		"{\"kind\": \"other\", \"type\": \"complex64 tensor\"}",
		"{\"kind\": \"tensor\", \"fd\": 0, \"dtype\": \"complex128\", \"shape\": [4]}",
	};
	float data[4] = { 1, 2, 3, 4 };
	int64_t shape[1] = { 4 };
	struct kj_tensor t;
	struct kj_error err;
	struct kj_value *g;
	size_t i;
	int rc;

	kj_tensor_init(&t);
	KJ_CHECK_OK(kj_tensor_borrow(&t, KJ_DTYPE_FLOAT32, 1, shape, data, &err), &err);
	KJ_CHECK_OK(kj_npy_save(kj_test_path("g.npy"), &t, &err), &err);
	kj_tensor_release(&t);
	g = parse("{\"kind\": \"tensor\", \"file\": \"g.npy\", \"dtype\": \"float32\", "
		  "\"shape\": [4]}", &rc, &err);
	KJ_CHECK_OK(rc, &err);
	for (i = 0; i < sizeof(actuals) / sizeof(actuals[0]); i++) {
		struct kj_value *a = parse(actuals[i], &rc, &err);
		struct kj_case c;
		int same = 1, fds[1] = { -1 };

		KJ_CHECK_OK(rc, &err);
		kj_case_init(&c, 0);
		KJ_CHECK_OK(kj_value_compare(g, kj_test_tmpdir(), a, fds, 1, NULL, 1, &c, &same,
					     &err), &err);
		KJ_CHECK_INT(same, 0);
		KJ_CHECK_INT(c.type, KJ_ET_OUTPUT_TYPE);
		KJ_CHECK(strstr(c.message, "tensor where the reference returned a float32 tensor "
				"of shape [4]: casting a complex to a real dtype drops the "
				"imaginary part") != NULL);
		KJ_CHECK(strstr(c.message, i ? "a complex128 tensor" : "a complex64 tensor") != NULL);
		kj_case_release(&c);
		kj_value_free(a);
	}
	kj_value_free(g);
}
