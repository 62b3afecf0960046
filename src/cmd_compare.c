/*
 * cmd_compare.c - `kjudge compare GOLDEN.npy ACTUAL.npy`.
 *
 * Output: a short human summary on stdout, or with --json the whole record of
 * kj_cmp_result_json().  Errors: one line on stderr, exit 2.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "kjudge/fileio.h"
#include "kjudge/compare.h"
#include "kjudge/report.h"
#include "kjudge/tensor.h"
#include "cli.h"
#include "base/banned.h"

enum {
	OPT_DTYPE,
	OPT_GOLDEN_DTYPE,
	OPT_ACTUAL_DTYPE,
	OPT_THREADS,
	OPT_JSON,
	OPT_INT_RULE,
	OPT_FLOAT64_RULE,
	OPT_COUNT_
};

/* The rules' names, in the order of their enums (compare.h). */
static const char *const int_rules[] = { "spec", "exact", NULL };
static const char *const float64_rules[] = { "spec", "float64", NULL };

/* The dtypes are checked by apply_dtype(), against the library's table of
 * names and aliases, so that the CLI keeps no copy of it. */
const struct kj_cli_option kj_compare_options[] = {
	[OPT_DTYPE] = { .name = "dtype", .type = KJ_CLI_STRING, .metavar = "NAME",
			.help = "logical dtype of both tensors (bfloat16, float8_e4m3fn, "
				"hifloat32, ...)" },
	[OPT_GOLDEN_DTYPE] = { .name = "golden-dtype", .type = KJ_CLI_STRING,
			       .metavar = "NAME", .help = "logical dtype of GOLDEN only" },
	[OPT_ACTUAL_DTYPE] = { .name = "actual-dtype", .type = KJ_CLI_STRING,
			       .metavar = "NAME", .help = "logical dtype of ACTUAL only" },
	[OPT_THREADS] = { .name = "threads", .type = KJ_CLI_INT, .metavar = "N", .min = 0,
			  .max = 1024, .def = "0, one per CPU",
			  .help = "threads to use" },
	[OPT_JSON] = { .name = "json", .type = KJ_CLI_FLAG,
		       .help = "print the whole record as JSON" },
	[OPT_INT_RULE] = { .name = "int-rule", .type = KJ_CLI_CHOICE, .metavar = "RULE",
			   .choices = int_rules, .def = "spec",
			   .help = "integer goldens: the seed's relative rule, or exact" },
	[OPT_FLOAT64_RULE] = { .name = "float64-rule", .type = KJ_CLI_CHOICE,
			       .metavar = "RULE", .choices = float64_rules, .def = "spec",
			       .help = "float64 goldens: promoted to float32 as the seed does, "
				       "or compared in float64" },
	[OPT_COUNT_] = { .name = NULL },
};

/*
 * Give a loaded tensor its logical dtype `name`.  hifloat32 is float32 data
 * with its own threshold: the tensor stays float32 and *threshold_name is
 * set.  Returns 0, or prints the error and returns KJ_EXIT_USAGE.
 */
static int apply_dtype(const struct kj_cli_command *cmd, struct kj_tensor *t,
		       const char *path, const char *name,
		       const char **threshold_name)
{
	struct kj_error err;
	enum kj_dtype dt;

	if (!name)
		return 0;
	if (!strcmp(name, "hifloat32") || !strcmp(name, "hf32")) {
		if (t->dtype != KJ_DTYPE_FLOAT32)
			return kj_cli_error(cmd, "'%s': hifloat32 data must be "
					    "stored as float32, file holds %s",
					    path, kj_dtype_name(t->dtype));
		*threshold_name = "hifloat32";
		return 0;
	}
	dt = kj_dtype_from_name(name);
	if (dt == KJ_DTYPE_INVALID)
		return kj_cli_error(cmd, "unknown dtype '%s'", name);
	if (kj_tensor_reinterpret(t, dt, &err) != KJ_OK)
		return kj_cli_error(cmd, "'%s': %s", path, err.msg);
	return 0;
}

static void print_index(const struct kj_cmp_point *p, int ndim)
{
	int d;

	printf("[");
	for (d = 0; d < ndim; d++)
		printf("%s%lld", d ? ", " : "", (long long)p->index[d]);
	printf("]");
}

/* A point's value: exact integers for an integer golden, else %.9g. */
static void print_value(const struct kj_cmp_result *r, int64_t v, double d,
			int exact)
{
	if (!exact)
		printf("%.9g", d);
	else if (r->golden_dtype == KJ_DTYPE_UINT64)
		printf("%llu", (unsigned long long)(uint64_t)v);
	else
		printf("%lld", (long long)v);
}

static void print_human(const struct kj_cmp_result *r)
{
	char gs[128], as[128];
	struct kj_tensor g, a;
	int i;

	/* kj_shape_format wants tensors; build shells around the shapes. */
	kj_tensor_init(&g);
	kj_tensor_init(&a);
	g.ndim = r->golden_ndim;
	a.ndim = r->actual_ndim;
	memcpy(g.shape, r->golden_shape, sizeof(g.shape));
	memcpy(a.shape, r->actual_shape, sizeof(a.shape));
	printf("%s: %s\n", r->pass ? "PASS" : "FAIL", r->message);
	printf("  golden %s %s, actual %s %s\n", kj_dtype_name(r->golden_dtype),
	       kj_shape_format(&g, gs, sizeof(gs)),
	       kj_dtype_name(r->actual_dtype),
	       kj_shape_format(&a, as, sizeof(as)));
	if (r->reason == KJ_CMP_SHAPE)
		return;
	if (r->has_int_rule)
		printf("  int rule %s: %s\n", kj_cmp_int_rule_name(r->int_rule),
		       r->int_rule == KJ_CMP_INT_EXACT
			       ? "integers compared exactly"
			       : "the seed's relative rule (--int-rule exact "
				 "compares integers exactly)");
	if (r->has_float64_rule)
		printf("  float64 rule %s: %s\n",
		       kj_cmp_float64_rule_name(r->float64_rule),
		       r->float64_rule == KJ_CMP_FLOAT64_FLOAT64
			       ? "rel computed in float64"
			       : "both sides promoted to float32, as the seed "
				 "(--float64-rule float64 keeps float64)");
	if (r->has_int_rule && r->n_value_mismatch)
		printf("  %zu of %zu elements not exactly equal\n",
		       r->n_value_mismatch, r->n_elements);
	/* Under the exact integer rule there are no MERE/MARE figures. */
	if (!r->has_int_rule || r->int_rule != KJ_CMP_INT_EXACT) {
		printf("  threshold %.6g (%s): MERE limit %.6g, MARE limit "
		       "%.6g\n", r->threshold, r->threshold_dtype,
		       r->mere_limit, r->mare_limit);
		if (r->mere_defined)
			printf("  MERE %.6g, MARE %.6g over %zu finite of %zu "
			       "elements, %zu above threshold\n",
			       r->mere, r->mare, r->n_finite, r->n_elements,
			       r->n_over_threshold);
		else
			printf("  MERE/MARE not defined: %zu finite of %zu "
			       "elements\n", r->n_finite, r->n_elements);
	}
	if (r->n_nan_golden || r->n_nan_actual)
		printf("  NaN: golden %zu, actual %zu, differing positions %zu\n",
		       r->n_nan_golden, r->n_nan_actual, r->n_nan_mismatch);
	if (r->n_inf_golden || r->n_inf_actual)
		printf("  Inf: golden %zu, actual %zu, differing positions %zu\n",
		       r->n_inf_golden, r->n_inf_actual, r->n_inf_mismatch);
	if (r->n_worst)
		printf("  %s:\n", r->worst[0].kind == KJ_CMP_POINT_REL
					  ? "largest errors"
					  : "first differing positions");
	for (i = 0; i < r->n_worst; i++) {
		const struct kj_cmp_point *p = &r->worst[i];

		printf("    ");
		print_index(p, r->golden_ndim);
		printf("  golden ");
		print_value(r, p->golden_int, p->golden,
			    kj_dtype_is_integer(r->golden_dtype));
		printf("  actual ");
		/* A lossy cast's integer actual, in its own dtype. */
		if (p->kind == KJ_CMP_POINT_CAST && p->exact &&
		    kj_dtype_is_signed_integer(r->actual_dtype))
			printf("%lld", (long long)p->actual_int);
		else if (p->kind == KJ_CMP_POINT_CAST && p->exact)
			printf("%llu", (unsigned long long)(uint64_t)p->actual_int);
		else
			print_value(r, p->actual_int, p->actual,
				    kj_dtype_is_integer(r->golden_dtype) && p->exact &&
					    p->kind != KJ_CMP_POINT_CAST);
		if (p->kind == KJ_CMP_POINT_REL)
			printf("  rel %.3g", p->rel);
		if (p->kind == KJ_CMP_POINT_CAST)
			printf("  lossy cast: %s", kj_cmp_loss_name(p->loss));
		printf("\n");
	}
}

int kj_cmd_compare(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args a;
	struct kj_cmp_options opt = { .threshold_dtype = NULL };
	const char *dtype, *gdtype, *adtype, *gpath, *apath;
	const char *threshold_name = NULL;
	struct kj_tensor golden, actual;
	struct kj_cmp_result res;
	struct kj_error err;
	int json, rc;

	kj_cli_args_init(&a);
	if ((rc = kj_cli_start(cmd, argc, argv, &a)) >= 0)
		return rc;
	dtype = a.opt[OPT_DTYPE].text;
	gdtype = a.opt[OPT_GOLDEN_DTYPE].text;
	adtype = a.opt[OPT_ACTUAL_DTYPE].text;
	opt.threads = (int)a.opt[OPT_THREADS].integer;
	json = a.opt[OPT_JSON].count > 0;
	if (a.opt[OPT_INT_RULE].count)
		opt.int_rule = a.opt[OPT_INT_RULE].choice ? KJ_CMP_INT_EXACT : KJ_CMP_INT_SPEC;
	if (a.opt[OPT_FLOAT64_RULE].count)
		opt.float64_rule = a.opt[OPT_FLOAT64_RULE].choice ? KJ_CMP_FLOAT64_FLOAT64
								  : KJ_CMP_FLOAT64_SPEC;
	gpath = a.operands[0];
	apath = a.operands[1];
	/* The values point into argv, not into a. */
	kj_cli_args_release(&a);
	if (dtype && (gdtype || adtype))
		return kj_cli_error(cmd, "--dtype and --golden-dtype/--actual-dtype "
				    "exclude each other");
	if (dtype)
		gdtype = adtype = dtype;

	kj_tensor_init(&golden);
	kj_tensor_init(&actual);
	rc = KJ_EXIT_USAGE;
	if (kj_npy_load(&golden, gpath, &err) != KJ_OK ||
	    kj_npy_load(&actual, apath, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		goto out;
	}
	if (apply_dtype(cmd, &golden, gpath, gdtype, &threshold_name) ||
	    apply_dtype(cmd, &actual, apath, adtype, &threshold_name))
		goto out;
	opt.threshold_dtype = threshold_name;
	if (kj_compare(&golden, &actual, &opt, &res, &err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		goto out;
	}
	if (json) {
		json_t *o = kj_cmp_result_json(&res);

		if (!o || kj_json_print(stdout, o, JSON_INDENT(2) | JSON_REAL_PRECISION(12), NULL) !=
				  KJ_OK) {
			json_decref(o);
			kj_cli_error(cmd, "cannot write the JSON record");
			goto out;
		}
		json_decref(o);
		putchar('\n');
	} else {
		print_human(&res);
	}
	rc = res.pass ? KJ_EXIT_OK : KJ_EXIT_FAIL;
out:
	kj_tensor_release(&golden);
	kj_tensor_release(&actual);
	if (fflush(stdout) != 0)
		return kj_cli_error(cmd, "cannot write to standard output");
	return rc;
}
