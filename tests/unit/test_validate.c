/*
 * test_validate.c - the static checks of `kjudge validate`, on sources held
 * in the test: rule lists and rule files, table-driven verdicts for the
 * corners the corpus of tests/validate/ does not reach, and the limits
 * (nesting, size, bytes that are not UTF-8) that hostile input meets.
 *
 * Each case is a source, its language, the regression type it must get
 * and the lines of its failing findings (0-terminated).  Sources are
 * copied into allocations of exactly their length, so that a sanitizer
 * build catches any read past the end.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kjudge/fileio.h"
#include "kjudge/validate.h"
#include "validate/validate_internal.h"
#include "unit.h"

/* A validator over the default rules, or over `rules_json` merged in. */
static struct kj_validator *mkvalidator(struct kj_vrules **rules, const char *rules_json)
{
	struct kj_validator *v;
	struct kj_error err;
	const char *path = NULL;

	if (rules_json) {
		FILE *f = fopen(kj_test_path("rules.json"), "w");

		KJ_CHECK(f != NULL);
		fputs(rules_json, f);
		fclose(f);
		path = kj_test_path("rules.json");
	}
	KJ_CHECK_OK(kj_vrules_new(rules, path, &err), &err);
	KJ_CHECK_OK(kj_validator_new(&v, *rules, &err), &err);
	return v;
}

static int judge(struct kj_validator *v, const char *src, enum kj_vlang lang,
		 struct kj_vresult *res, struct kj_error *err)
{
	size_t n = strlen(src);
	char *copy = malloc(n ? n : 1);
	int rc;

	KJ_CHECK(copy != NULL);
	memcpy(copy, src, n);
	rc = kj_validate_source(v, "case.py", copy, n, lang, NULL, res, err);
	free(copy);
	return rc;
}

struct vcase {
	const char *what;
	enum kj_vlang lang;
	int type;
	int lines[8]; /* failing findings, ascending, 0-terminated */
	const char *src;
};

#define KERNEL                                                                      \
	"import torch\nimport triton\nimport triton.language as tl\n"              \
	"@triton.jit\n"                                                            \
	"def k(x_ptr, n, B: tl.constexpr):\n"                                      \
	"    o = tl.program_id(0) * B + tl.arange(0, B)\n"                         \
	"    tl.store(x_ptr + o, tl.load(x_ptr + o, mask=o < n) * 2, mask=o < n)\n"
/* KERNEL is 7 lines; a case's own lines start at 8. */

static const struct vcase cases[] = {
	{ "a kernel launched from forward is valid", KJ_VLANG_PYTHON, 0, { 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return x\n" },
	{ "a star import from torch hides calls", KJ_VLANG_PYTHON, 3, { 8, 0 },
	  KERNEL "from torch.nn.functional import *\n"
		 "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return x\n" },
	{ "either branch of a conditional alias counts", KJ_VLANG_PYTHON, 3, { 14, 0 },
	  KERNEL "def mine(x):\n"
		 "    k[(1,)](x, x.numel(), B=64)\n"
		 "    return x\n"
		 "fn = torch.relu if torch.rand(1) > 2 else mine\n"
		 "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        return fn(x)\n" },
	{ "the Python 2 exec statement", KJ_VLANG_PYTHON, 3, { 11, 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        exec \"y = torch.relu(x)\"\n"
		 "        return x\n" },
	{ "__builtins__.exec is exec", KJ_VLANG_PYTHON, 3, { 11, 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        __builtins__.exec('y = 1')\n"
		 "        return x\n" },
	{ "setattr binds like an assignment", KJ_VLANG_PYTHON, 3, { 13, 0 },
	  KERNEL "class ModelNew:\n"
		 "    def __init__(self):\n"
		 "        setattr(self, 'op', torch.tanh)\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return self.op(x)\n" },
	{ "K = triton.jit(f) makes a kernel", KJ_VLANG_PYTHON, 0, { 0 },
	  "import triton\nimport triton.language as tl\n"
	  "def body(p):\n"
	  "    tl.store(p, tl.load(p) + 1)\n"
	  "K = triton.jit(body)\n"
	  "class ModelNew:\n"
	  "    def forward(self, x):\n"
	  "        K[(1,)](x)\n"
	  "        return x\n" },
	{ "torch.Tensor methods that only view stay allowed", KJ_VLANG_PYTHON, 0, { 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        x = torch.Tensor.contiguous(x)\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return x\n" },
	{ "super().forward of a base outside the file is the reference", KJ_VLANG_PYTHON, 3,
	  { 9, 12, 0 },
	  KERNEL "from ref import Model\n"
		 "class ModelNew(Model):\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return super().forward(x)\n" },
	{ "a lambda in a class body is reached through self", KJ_VLANG_PYTHON, 3, { 9, 0 },
	  KERNEL "class ModelNew:\n"
		 "    act = lambda self, x: x.softmax(-1)\n"
		 "    def forward(self, x):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return self.act(x)\n" },
	{ "a while True loop still runs its body", KJ_VLANG_PYTHON, 0, { 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        while True:\n"
		 "            k[(1,)](x, x.numel(), B=64)\n"
		 "            break\n"
		 "        return x\n" },
	{ "elif True makes the else dead", KJ_VLANG_PYTHON, 2, { 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x, c):\n"
		 "        if c:\n"
		 "            pass\n"
		 "        elif 1:\n"
		 "            return x\n"
		 "        else:\n"
		 "            k[(1,)](x, x.numel(), B=64)\n"
		 "        return x\n" },
	{ "the kernel launched inside a nested def forward calls", KJ_VLANG_PYTHON, 0, { 0 },
	  KERNEL "class ModelNew:\n"
		 "    def forward(self, x):\n"
		 "        def go():\n"
		 "            k[(1,)](x, x.numel(), B=64)\n"
		 "        go()\n"
		 "        return x\n" },
	{ "the operator module is PyTorch by another name", KJ_VLANG_PYTHON, 3, { 12, 0 },
	  KERNEL "import operator\n"
		 "class ModelNew:\n"
		 "    def forward(self, x, w):\n"
		 "        k[(1,)](x, x.numel(), B=64)\n"
		 "        return operator.matmul(x, w)\n" },
	{ "an empty file has no kernel", KJ_VLANG_PYTHON, 1, { 0 }, "" },
	{ "CUDA: a launch through a function pointer", KJ_VLANG_CUDA, 0, { 0 },
	  "__global__ void k(float* x) { x[0] = x[1] * 2.0f; }\n"
	  "static void go(float* x) { k<<<1, 1>>>(x); }\n"
	  "void entry(float* x) { void (*f)(float*) = go; f(x); }\n" },
	{ "CUDA: the #else branch of #if 0 is live", KJ_VLANG_CUDA, 0, { 0 },
	  "__global__ void k(float* x) { x[0] = x[1] + 1.0f; }\n"
	  "void entry(float* x) {\n"
	  "#if 0\n"
	  "  return;\n"
	  "#else\n"
	  "  k<<<1, 1>>>(x);\n"
	  "#endif\n"
	  "}\n" },
	{ "CUDA: a compound store computes", KJ_VLANG_CUDA, 0, { 0 },
	  "__global__ void k(float* y, const float* x) { y[0] += x[0]; }\n"
	  "void entry(float* y, float* x) { k<<<1, 1>>>(y, x); }\n" },
	{ "CUDA: an atomic computes", KJ_VLANG_CUDA, 0, { 0 },
	  "__global__ void k(float* y, const float* x) { atomicAdd(y, x[0]); }\n"
	  "void entry(float* y, float* x) { k<<<1, 1>>>(y, x); }\n" },
	{ "CUDA: a kernel that stores a loaded value through a pointer is a placeholder",
	  KJ_VLANG_CUDA, 4, { 0 },
	  "__global__ void k(float* y, const float* x) { float v = *x; *y = v; }\n"
	  "void entry(float* y, float* x) { k<<<1, 1>>>(y, x); }\n" },
	{ "CUDA: at::cuda helpers are allowed, at::mm is not", KJ_VLANG_CUDA, 3, { 4, 0 },
	  "__global__ void k(float* y) { y[0] = y[1] * 3.0f; }\n"
	  "void entry(at::Tensor a) {\n"
	  "  auto s = at::cuda::getCurrentCUDAStream();\n"
	  "  auto m = at::mm(a, a);\n"
	  "  k<<<1, 1, 0, s>>>(a.data_ptr<float>());\n"
	  "}\n" },
};

KJ_TEST(validate_cases)
{
	struct kj_vrules *rules;
	struct kj_validator *v = mkvalidator(&rules, NULL);
	struct kj_vresult res;
	struct kj_error err;
	size_t i, j;

	kj_vresult_init(&res);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct vcase *c = &cases[i];
		int lines[64], n = 0, k;

		if (judge(v, c->src, c->lang, &res, &err) != KJ_OK)
			kj_test_fail(__FILE__, __LINE__, "%s: %s", c->what, err.msg);
		if ((int)res.regression_type != c->type)
			kj_test_fail(__FILE__, __LINE__, "%s: type %d, want %d (%s)", c->what,
				     (int)res.regression_type, c->type, res.suggestion);
		for (j = 0; j < res.n_violations && n < 64; j++) {
			if (res.violations[j].warning)
				continue;
			for (k = 0; k < n && lines[k] != res.violations[j].line; k++)
				;
			if (k == n)
				lines[n++] = res.violations[j].line;
		}
		for (j = 1; j < (size_t)n; j++) /* insertion sort: a handful */
			for (k = (int)j; k > 0 && lines[k - 1] > lines[k]; k--) {
				int t = lines[k];

				lines[k] = lines[k - 1];
				lines[k - 1] = t;
			}
		for (k = 0; k < n || c->lines[k]; k++)
			if (k >= n || lines[k] != c->lines[k])
				kj_test_fail(__FILE__, __LINE__,
					     "%s: finding %d at line %d, want %d (%s)", c->what, k,
					     k < n ? lines[k] : 0, c->lines[k], res.suggestion);
	}
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
}

KJ_TEST(validate_list_matching)
{
	struct kj_vrules *rules;
	struct kj_error err;

	KJ_CHECK_OK(kj_vrules_new(&rules, NULL, &err), &err);
	KJ_CHECK(kj__vlist_has(&rules->fwd_deny, "torch.matmul"));      /* torch.* */
	KJ_CHECK(!kj__vlist_has(&rules->fwd_deny, "torch"));            /* not the module */
	KJ_CHECK(!kj__vlist_has(&rules->fwd_deny, "torchvision.ops.nms"));
	KJ_CHECK(kj__vlist_has(&rules->fwd_allow, "torch.empty_like")); /* exact */
	KJ_CHECK(!kj__vlist_has(&rules->fwd_allow, "torch.empty_like2"));
	KJ_CHECK(kj__vlist_has(&rules->cu_deny_ids, "cublasSgemm_v2"));  /* cublas* */
	KJ_CHECK(kj__vlist_match(&rules->cu_deny_ids, "cublasX", 6));    /* length-bounded */
	KJ_CHECK(!kj__vlist_match(&rules->cu_deny_ids, "cubla", 5));
	KJ_CHECK_STR(rules->entry_class, "ModelNew");
	KJ_CHECK_INT(rules->loops, KJ__LOOPS_ELEMENT);
	kj_vrules_free(rules);
}

KJ_TEST(validate_rule_files_merge_and_fail)
{
	struct kj_vrules *rules;
	struct kj_validator *v;
	struct kj_error err;
	FILE *f;

	v = mkvalidator(&rules, "{\"forward\": {\"allow\": [\"torch.bmm\"], \"loops\": \"deny\"},"
				" \"_note\": \"comments are skipped\"}");
	KJ_CHECK(kj__vlist_has(&rules->fwd_allow, "torch.bmm"));
	KJ_CHECK(kj__vlist_has(&rules->fwd_allow, "torch.empty")); /* still the defaults */
	KJ_CHECK_INT(rules->loops, KJ__LOOPS_DENY);
	kj_validator_free(v);
	kj_vrules_free(rules);

	v = mkvalidator(&rules, "{\"extends\": \"none\", \"forward\": {\"deny\": [\"numpy.*\"]}}");
	KJ_CHECK(!kj__vlist_has(&rules->fwd_deny, "torch.matmul"));
	KJ_CHECK(kj__vlist_has(&rules->fwd_deny, "numpy.exp"));
	KJ_CHECK_STR(rules->entry_method, "forward"); /* settings keep their defaults */
	kj_validator_free(v);
	kj_vrules_free(rules);

	f = fopen(kj_test_path("bad.json"), "w");
	KJ_CHECK(f != NULL);
	fputs("{\"host_sync\": {\"fail_on\": \"sometimes\"}}", f);
	fclose(f);
	KJ_CHECK_INT(kj_vrules_new(&rules, kj_test_path("bad.json"), &err), KJ_ERULES);
	KJ_CHECK(rules == NULL);
	KJ_CHECK(strstr(err.msg, "host_sync.fail_on") != NULL);
	f = fopen(kj_test_path("bad.json"), "w");
	KJ_CHECK(f != NULL);
	fputs("{\"forward\": {\"deny\": [\"to*rch\"]}}", f);
	fclose(f);
	KJ_CHECK_INT(kj_vrules_new(&rules, kj_test_path("bad.json"), &err), KJ_ERULES);
	KJ_CHECK(strstr(err.msg, "may only end") != NULL);
}

KJ_TEST(validate_limits)
{
	struct kj_vrules *rules;
	struct kj_validator *v = mkvalidator(&rules, NULL);
	struct kj_vresult res;
	struct kj_error err;
	size_t depth = 5000, i, n = 0;
	char *deep = malloc(2 * depth + 16);
	char bytes[] = "# \xff\xfe not UTF-8\n@\xc3\x28\nclass ModelNew:\n  pass\n";
	json_t *j;

	KJ_CHECK(deep != NULL);
	kj_vresult_init(&res);
	/* x = ((((...)))) nests deeper than the analysis goes: refused */
	deep[n++] = 'x';
	deep[n++] = '=';
	for (i = 0; i < depth; i++)
		deep[n++] = '(';
	deep[n++] = '1';
	for (i = 0; i < depth; i++)
		deep[n++] = ')';
	deep[n++] = '\n';
	KJ_CHECK_INT(kj_validate_source(v, "deep.py", deep, n, KJ_VLANG_PYTHON, NULL, &res, &err),
		     KJ_ELIMIT);
	KJ_CHECK(strstr(err.msg, "deep.py") != NULL);
	KJ_CHECK(res.n_violations == 0 && res.mem_ == NULL);
	free(deep);

	/* too large is refused before anything is read */
	KJ_CHECK_INT(kj_validate_source(v, "big.py", bytes, KJ_VALIDATE_MAX_FILE + 1,
					KJ_VLANG_PYTHON, NULL, &res, &err),
		     KJ_ELIMIT);

	/* bytes that are not UTF-8 still give a JSON record */
	KJ_CHECK_OK(kj_validate_source(v, "bytes.py", bytes, sizeof(bytes) - 1,
				       KJ_VLANG_PYTHON, NULL, &res, &err), &err);
	KJ_CHECK_INT(res.regression_type, KJ_VTYPE_NO_KERNEL);
	j = kj_vresult_json(&res, "bytes\xff.py");
	KJ_CHECK(j != NULL);
	json_decref(j);
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
}

KJ_TEST(validate_is_deterministic_and_reusable)
{
	static const char src[] = KERNEL "import torch.nn.functional as F\n"
				  "class ModelNew:\n"
				  "    def forward(self, x):\n"
				  "        k[(1,)](x, x.numel(), B=64)\n"
				  "        return F.relu(x).sum() @ x\n";
	struct kj_vrules *rules;
	struct kj_validator *v = mkvalidator(&rules, NULL);
	struct kj_vresult res;
	struct kj_error err;
	char *first = NULL;
	int round;

	kj_vresult_init(&res);
	for (round = 0; round < 50; round++) {
		json_t *j;
		char *s;

		KJ_CHECK_OK(judge(v, src, KJ_VLANG_PYTHON, &res, &err), &err);
		j = kj_vresult_json(&res, "case.py");
		s = kj_json_text(j, JSON_COMPACT, NULL);
		KJ_CHECK(s != NULL);
		if (!first)
			first = s;
		else {
			KJ_CHECK_STR(s, first);
			free(s);
		}
		json_decref(j);
	}
	KJ_CHECK(strstr(first, "\"regression_type\":3") != NULL);
	free(first);
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
}

/* --- hostile sizes: work must stay near linear -------------------------- */

struct buf {
	char *s;
	size_t n, cap;
};

static void put(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void put(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	int n;

	for (;;) {
		va_start(ap, fmt);
		n = vsnprintf(b->s + b->n, b->cap - b->n, fmt, ap);
		va_end(ap);
		KJ_CHECK(n >= 0);
		if ((size_t)n < b->cap - b->n)
			break;
		b->cap = b->cap * 2 + (size_t)n + 1;
		b->s = realloc(b->s, b->cap);
		KJ_CHECK(b->s != NULL);
	}
	b->n += (size_t)n;
}

static double seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/*
 * Each source below made some step quadratic or exponential before it was
 * bounded: one name defined thousands of times, a wide and deep class
 * hierarchy, a long chain of bindings inside a kernel, a string doubled by
 * names thirty times, thousands of C++ overloads.  Each must be judged in
 * seconds even under the sanitizers.
 */
/* ThreadSanitizer makes the parser ten times slower or more: these sizes
 * are for the plain and ASan builds, TSan gets a quarter of them (it is
 * there for races, not for sizes). */
#if defined(__SANITIZE_THREAD__)
#define HOSTILE_SCALE 4
#else
#define HOSTILE_SCALE 1
#endif

KJ_TEST(validate_hostile_sizes)
{
	struct kj_vrules *rules;
	struct kj_validator *v = mkvalidator(&rules, NULL);
	struct kj_vresult res;
	struct kj_error err;
	struct buf b = { malloc(1), 0, 1 };
	double t0;
	int i, j, kind;

	kj_vresult_init(&res);
	for (kind = 0; kind < 5; kind++) {
		b.n = 0;
		b.s[0] = '\0';
		switch (kind) {
		case 0: /* one name, 20,000 definitions and uses */
			for (i = 0; i < 20000 / HOSTILE_SCALE; i++)
				put(&b, "def f():\n    return f()\n");
			put(&b, "class ModelNew:\n    def forward(self, x):\n        return f()\n");
			break;
		case 1: /* 300 classes, each deriving from the eight before it */
			put(&b, "class C0:\n    pass\n");
			for (i = 1; i < 300 / HOSTILE_SCALE; i++) {
				put(&b, "class C%d(", i);
				for (j = 1; j <= 8; j++)
					put(&b, "%sC%d", j > 1 ? ", " : "", i - j >= 0 ? i - j : 0);
				put(&b, "):\n    pass\n");
			}
			put(&b, "class ModelNew(C%d):\n    def forward(self, x):\n"
				"        return self.missing(x) + self.gone\n", 300 / HOSTILE_SCALE - 1);
			break;
		case 2: /* a kernel with 5,000 chained bindings and 5,000 stores */
			put(&b, "import triton\nimport triton.language as tl\n@triton.jit\n"
				"def k(p):\n    v0 = tl.load(p)\n");
			for (i = 1; i < 5000 / HOSTILE_SCALE; i++)
				put(&b, "    v%d = v%d\n", i, i - 1);
			for (i = 0; i < 5000 / HOSTILE_SCALE; i++)
				put(&b, "    tl.store(p + %d, v%d)\n", i, 5000 / HOSTILE_SCALE - 1 - i);
			put(&b, "class ModelNew:\n    def forward(self, x):\n        k[(1,)](x)\n"
				"        return x\n");
			break;
		case 3: /* a string doubled thirty times through names */
			put(&b, "from torch.utils.cpp_extension import load_inline\n"
				"s0 = '__global__ void k(float* x) { x[0] = x[1] + 1.0f; }\\n'\n");
			for (i = 1; i <= 30; i++)
				put(&b, "s%d = s%d + s%d\n", i, i - 1, i - 1);
			put(&b, "m = load_inline(name='m', cpp_sources='', cuda_sources=s30)\n"
				"class ModelNew:\n    def forward(self, x):\n        return m.f(x)\n");
			break;
		case 4: /* 20,000 C++ overloads of one name, each calling it */
			put(&b, "__global__ void k(float* x) { x[0] = x[1] * 2.0f; }\n");
			for (i = 0; i < 20000 / HOSTILE_SCALE; i++)
				put(&b, "void f(int%d_t a) { f(a); k<<<1, 1>>>(0); }\n", i % 4 ? 32 : 64);
			break;
		}
		t0 = seconds();
		KJ_CHECK_OK(kj_validate_source(v, "big", b.s, b.n,
					       kind == 4 ? KJ_VLANG_CUDA : KJ_VLANG_PYTHON, NULL,
					       &res, &err), &err);
		if (seconds() - t0 > 20)
			kj_test_fail(__FILE__, __LINE__, "case %d took %.1f s", kind, seconds() - t0);
	}
	free(b.s);
	kj_vresult_release(&res);
	kj_validator_free(v);
	kj_vrules_free(rules);
}
