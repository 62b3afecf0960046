/*
 * test_spec_check.c - the parts of `kjudge spec validate` that the CLI
 * tests see only through messages: the compiled-in schemas (each compiled
 * once, all three valid draft-07), and the validator's paths turned into
 * ParBench's dotted form.
 */
#include <string.h>

#include "kjudge/jschema.h"
#include "kjudge/spec_check.h"
#include "spec/check_internal.h"
#include "unit.h"

KJ_TEST(spec_check_schemas_compile_once)
{
	struct kj_error err;
	const struct kj_jschema *a = kj_spec_schema(KJ_SCHEMA_SPEC, &err);

	KJ_CHECK(a != NULL);
	KJ_CHECK(kj_spec_schema(KJ_SCHEMA_SPEC, &err) == a);
	KJ_CHECK(kj_spec_schema(KJ_SCHEMA_MANIFEST, &err) != NULL);
	KJ_CHECK(kj_spec_schema(KJ_SCHEMA_PAIR_CONTRACT, &err) != NULL);
	KJ_CHECK(kj_spec_schema(KJ_SCHEMA_MANIFEST, &err) != a);
}

KJ_TEST(spec_check_dotted_paths)
{
	static const char *const cases[][2] = {
		{ "(root)", "(root)" },
		{ "identity.parallel_api", "identity.parallel_api" },
		{ "verification.strategies[0].tolerance", "verification.strategies.0.tolerance" },
		{ "[3]", "3" },
		{ "a['x y'].b", "a.x y.b" },
		{ "a['it\\'s']", "a.it's" },
		{ "m[12][7]", "m.12.7" },
	};
	char out[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		kj__chk_dotted(cases[i][0], out, sizeof(out));
		KJ_CHECK_STR(out, cases[i][1]);
	}
	/* A buffer too small is cut, never overrun. */
	kj__chk_dotted("verification.strategies[0]", out, 8);
	KJ_CHECK_STR(out, "verific");
}
