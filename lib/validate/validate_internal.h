/*
 * validate_internal.h - what the validator's files share (kj__ prefix):
 * arenas, growable arrays, string maps, the flat syntax tree, compiled rule
 * lists, and the context of one analysis.
 *
 *   validate.c        public API, files, verdicts, JSON records
 *   validate_tree.c   tree-sitter glue: grammars, parsing into a flat tree
 *   validate_rules.c  rule files: loading, merging, matching
 *   validate_py.c     Python: names, aliases, reachability, the rules
 *   validate_cuda.c   CUDA C++: kernels, launches, host-code bans
 *
 * Memory: everything one analysis allocates comes from two arenas, `work`
 * (freed when the analysis ends) and `out` (handed to the result).  When an
 * arena cannot grow it longjmps to the analysis' entry point, which frees
 * both and returns KJ_ENOMEM; so the analysis code holds no other resources
 * and does not check each allocation.  Include after every system header:
 * it ends by including banned.h.
 */
#ifndef KJ_VALIDATE_INTERNAL_H
#define KJ_VALIDATE_INTERNAL_H

#include <setjmp.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>
#include <tree_sitter/api.h>

#include "kjudge/validate.h"

/* --- arenas ------------------------------------------------------------- */

struct kj__arena_chunk;

struct kj__arena {
	struct kj__arena_chunk *head;
	size_t total; /* bytes held in chunks */
	size_t limit; /* most bytes the arena may hold */
	jmp_buf *fail; /* where exhaustion jumps; NULL: allocations return NULL */
};

void kj__arena_init(struct kj__arena *a, size_t limit, jmp_buf *fail);
void kj__arena_release(struct kj__arena *a);
/* n zeroed bytes, aligned for any object. */
void *kj__arena_alloc(struct kj__arena *a, size_t n);
/* A NUL-terminated copy of n bytes at s. */
char *kj__arena_strndup(struct kj__arena *a, const char *s, size_t n);
char *kj__arena_printf(struct kj__arena *a, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));
/* Room for n + 1 elements of `elem` bytes: `old` (holding n) or a copy of
 * it twice as large.  Updates *cap. */
void *kj__arena_grow(struct kj__arena *a, void *old, size_t n, size_t *cap,
		     size_t elem);

/* A growable array in an arena; KJ__PUSH returns the new element (zeroed). */
#define KJ__VEC(T) struct { T *v; size_t n, cap; }
#define KJ__PUSH(a, vec)                                                      \
	((vec).n == (vec).cap                                                 \
		 ? (void)((vec).v = kj__arena_grow((a), (vec).v, (vec).n,     \
						   &(vec).cap, sizeof(*(vec).v))) \
		 : (void)0,                                                   \
	 &(vec).v[(vec).n++])

/* --- string maps -------------------------------------------------------- */

struct kj__vmap_slot {
	const char *key; /* NUL-terminated copy, in the map's arena */
	uint32_t len;
	uint32_t hash;
	void *val;
};

struct kj__vmap {
	struct kj__vmap_slot *slots;
	size_t cap; /* a power of two, or 0 */
	size_t n;
};

/* The value slot of key (s, len), or NULL if absent. */
void **kj__vmap_get(const struct kj__vmap *m, const char *s, size_t len);
/* The value slot of key (s, len), added (value NULL) if absent.  NULL only
 * when the arena cannot grow and has no jump target. */
void **kj__vmap_put(struct kj__arena *a, struct kj__vmap *m, const char *s,
		    size_t len);

/* --- the flat syntax tree ----------------------------------------------- */

/*
 * Node kinds the analyses look at, one enum for both grammars.  Grammar
 * symbols map to these by name when a validator starts; everything else is
 * KJ__K_OTHER (named) or KJ__K_ANON (anonymous tokens).
 */
enum kj__vkind {
	KJ__K_OTHER = 0,
	KJ__K_ANON,
	KJ__K_ERROR,
	KJ__K_COMMENT,
	KJ__K_IDENT,
	KJ__K_STRING,
	KJ__K_STRING_CONTENT,
	KJ__K_ESCAPE,
	KJ__K_TRUE,
	KJ__K_FALSE,
	KJ__K_NONE,
	KJ__K_INTEGER,
	KJ__K_FLOAT,
	KJ__K_PAREN,
	KJ__K_BINOP,
	KJ__K_CALL,
	KJ__K_ARGS,
	KJ__K_KWARG,
	KJ__K_SUBSCRIPT,
	KJ__K_IF,
	KJ__K_ELSE,
	KJ__K_FOR,
	KJ__K_WHILE,
	KJ__K_RETURN,
	KJ__K_BREAK,
	KJ__K_CONTINUE,
	KJ__K_LAMBDA,
	/* Python */
	KJ__K_PY_MODULE,
	KJ__K_PY_FUNCDEF,
	KJ__K_PY_DECORATED,
	KJ__K_PY_DECORATOR,
	KJ__K_PY_CLASSDEF,
	KJ__K_PY_BLOCK,
	KJ__K_PY_EXPR_STMT,
	KJ__K_PY_ASSIGN,
	KJ__K_PY_AUGASSIGN,
	KJ__K_PY_ATTRIBUTE,
	KJ__K_PY_CONCAT_STRING,
	KJ__K_PY_STRING_START,
	KJ__K_PY_INTERPOLATION,
	KJ__K_PY_ESCAPE_INTERP,
	KJ__K_PY_IMPORT,
	KJ__K_PY_IMPORT_FROM,
	KJ__K_PY_FUTURE_IMPORT,
	KJ__K_PY_ALIASED_IMPORT,
	KJ__K_PY_DOTTED_NAME,
	KJ__K_PY_WILDCARD,
	KJ__K_PY_RELATIVE_IMPORT,
	KJ__K_PY_ELIF,
	KJ__K_PY_TRY,
	KJ__K_PY_EXCEPT,
	KJ__K_PY_RAISE,
	KJ__K_PY_LIST, /* list and set displays */
	KJ__K_PY_TUPLE,
	KJ__K_PY_EXPR_LIST,
	KJ__K_PY_PATTERN_LIST,
	KJ__K_PY_UNARY,
	KJ__K_PY_NOT,
	KJ__K_PY_BOOLOP,
	KJ__K_PY_CONDEXPR,
	KJ__K_PY_PARAMETERS,
	KJ__K_PY_LAMBDA_PARAMS,
	KJ__K_PY_TYPED_PARAM,
	KJ__K_PY_DEFAULT_PARAM,
	KJ__K_PY_TYPED_DEFAULT_PARAM,
	KJ__K_PY_LIST_SPLAT_PATTERN,
	KJ__K_PY_DICT_SPLAT_PATTERN,
	KJ__K_PY_EXEC_STMT,
	KJ__K_PY_GENERATOR, /* generator, list and set comprehensions */
	/* C, C++ and CUDA */
	KJ__K_C_UNIT,
	KJ__K_C_FUNCDEF,
	KJ__K_C_FUNC_DECLARATOR,
	KJ__K_C_KERNEL_CALL,      /* kernel_call_syntax: <<<...>>> */
	KJ__K_C_QUALIFIED_ID,
	KJ__K_C_TEMPLATE_FUNC,
	KJ__K_C_TEMPLATE_METHOD,
	KJ__K_C_FIELD_EXPR,
	KJ__K_C_FIELD_ID,
	KJ__K_C_NAMESPACE_ID,
	KJ__K_C_TYPE_ID,
	KJ__K_C_RAW_STRING,
	KJ__K_C_POINTER_EXPR,
	KJ__K_C_CAST,
	KJ__K_C_ASSIGN,
	KJ__K_C_DECLARATION,
	KJ__K_C_INIT_DECLARATOR,
	KJ__K_C_PARAM_DECL,
	KJ__K_C_COMPOUND,
	KJ__K_C_UNARY,
	KJ__K_C_UPDATE,
	KJ__K_C_PREPROC_DEF,
	KJ__K_C_PREPROC_FUNC_DEF,
	KJ__K_C_PREPROC_ARG,
	KJ__K_C_PREPROC_IF,
	KJ__K_C_PREPROC_IFDEF,
	KJ__K_C_PREPROC_ELSE,
	KJ__K_C_PREPROC_ELIF,
	KJ__K_C_NUMBER,
	KJ__K_C_GLOBAL_KW,  /* __global__ */
	KJ__K_C_DEVICE_KW,  /* __device__ */
	KJ__K_C_HOST_KW,    /* __host__ */
	KJ__K_C_DECLARATOR_MISC, /* pointer/reference/array declarators */
	KJ__K_C_PRIMITIVE_TYPE,
	KJ__K_C_COMMA_EXPR,
	KJ__K_C_CONDEXPR,
	KJ__K_C_TEMPLATE_TYPE,
	KJ__K_COUNT_
};

/* Fields the analyses look at. */
enum kj__vfield {
	KJ__F_NONE = 0,
	KJ__F_FUNCTION,
	KJ__F_ARGUMENTS,
	KJ__F_OBJECT,
	KJ__F_ATTRIBUTE,
	KJ__F_LEFT,
	KJ__F_RIGHT,
	KJ__F_NAME,
	KJ__F_BODY,
	KJ__F_VALUE,
	KJ__F_SUBSCRIPT,
	KJ__F_CONDITION,
	KJ__F_CONSEQUENCE,
	KJ__F_ALTERNATIVE,
	KJ__F_DEFINITION,
	KJ__F_SUPERCLASSES,
	KJ__F_MODULE_NAME,
	KJ__F_ALIAS,
	KJ__F_PARAMETERS,
	KJ__F_OPERATOR,
	KJ__F_CODE,
	KJ__F_DECLARATOR,
	KJ__F_TYPE,
	KJ__F_ARGUMENT,
	KJ__F_FIELD,
	KJ__F_SCOPE,
	KJ__F_INDICES,
	KJ__F_COUNT_
};

#define KJ__VNONE UINT32_MAX

struct kj__vnode {
	uint32_t start, end; /* byte offsets into the source */
	uint32_t row;        /* 0-based line of start */
	uint32_t parent, child, next; /* indices, KJ__VNONE for none */
	uint16_t kind;       /* enum kj__vkind */
	uint16_t field;      /* enum kj__vfield: this node's field in its parent */
};

struct kj__vtree {
	const char *src;
	size_t len;
	struct kj__vnode *n; /* n[0] is the root */
	uint32_t count;
	uint32_t first_error; /* first ERROR or MISSING node, or KJ__VNONE */
};

/* Children of node i, in order (anonymous ones included), in the
 * caller's uint32_t c. */
#define KJ__EACH_CHILD(t, i, c) \
	for ((c) = (t)->n[i].child; (c) != KJ__VNONE; (c) = (t)->n[c].next)

/* The first child of i in field f, or KJ__VNONE. */
uint32_t kj__vfield_child(const struct kj__vtree *t, uint32_t i,
			  enum kj__vfield f);
/* The first child of i of kind k, or KJ__VNONE. */
uint32_t kj__vkind_child(const struct kj__vtree *t, uint32_t i,
			 enum kj__vkind k);
/* The node's text (not NUL-terminated) and its length. */
static inline const char *kj__vtext(const struct kj__vtree *t, uint32_t i,
				    size_t *len)
{
	*len = t->n[i].end - t->n[i].start;
	return t->src + t->n[i].start;
}
/* 1 if node i's text is exactly s. */
int kj__vtext_is(const struct kj__vtree *t, uint32_t i, const char *s);
/* 1 if a is b or lies inside b. */
int kj__vinside(const struct kj__vtree *t, uint32_t a, uint32_t b);

/* A grammar with its symbol and field tables. */
struct kj__vgrammar {
	const TSLanguage *ts;
	uint16_t *kind_of; /* per grammar symbol */
	uint32_t n_symbols;
	uint16_t *field_of; /* per grammar field id */
	uint32_t n_fields;
};

int kj__vgrammar_init(struct kj__vgrammar *g, const TSLanguage *ts,
		      int python, struct kj_error *err);
void kj__vgrammar_release(struct kj__vgrammar *g);

/* Deepest nesting the analyses follow; deeper input is refused (KJ_ELIMIT)
 * rather than risk the stack. */
#define KJ__VMAX_DEPTH 400

struct kj__vctx;

/* Parse src with p into a flat tree in cx->work.  Returns KJ_OK, or
 * KJ_ELIMIT (too deep, or the parser gave up) with err filled. */
int kj__vparse(struct kj__vctx *cx, TSParser *p, const struct kj__vgrammar *g,
	       const char *src, size_t len, struct kj__vtree *out);

/* --- rules ------------------------------------------------------------ */

/* A compiled list of names: exact ones in a map, "prefix*" ones apart. */
struct kj__vlist {
	struct kj__vmap exact;
	const char **prefix; /* without the '*' */
	size_t n_prefix;
	size_t n; /* entries in all */
};

/* 1 if name (len bytes) matches an entry of l. */
int kj__vlist_match(const struct kj__vlist *l, const char *name, size_t len);
static inline int kj__vlist_has(const struct kj__vlist *l, const char *name)
{
	size_t n = 0;

	while (name[n])
		n++;
	return kj__vlist_match(l, name, n);
}

enum kj__vloops { KJ__LOOPS_ALLOW, KJ__LOOPS_ELEMENT, KJ__LOOPS_DENY };

/* The rule set of docs/validate.md, compiled.  Strings live in `doc`. */
struct kj_vrules {
	json_t *doc; /* the effective document */
	struct kj__arena mem;
	const char *entry_class, *entry_method;
	struct kj__vlist triton_decorators, triton_language, extension_loaders;
	struct kj__vlist fwd_allow, fwd_deny, method_allow, method_deny;
	struct kj__vlist operators_deny, entry_bases_allow, reference_classes;
	int loops;
	int tensor_arith; /* flag arithmetic on values known to be tensors */
	struct kj__vlist tensor_factories, tensor_views;
	struct kj__vlist mw_allow, mw_deny, mw_assign_deny, mw_star_deny;
	int weight_holders;
	struct kj__vlist dyn_calls, dyn_attrs, getattr_roots, getattr_allow;
	struct kj__vlist hm_allow, hm_deny;
	struct kj__vlist sync_methods, sync_calls;
	int sync_fail_medium;
	int ph_enabled;
	struct kj__vlist ph_non_compute, ph_stores, ph_moves, ph_cuda_loads;
	struct kj__vlist cu_launch_apis, cu_allow_calls, cu_deny_calls;
	struct kj__vlist cu_deny_ids, cu_tensor_types;
	int cu_token_paste;
};

/* --- one analysis -------------------------------------------------------- */

struct kj_validator {
	const struct kj_vrules *rules;
	TSParser *parser;
	struct kj__vgrammar python, cuda;
};

struct kj__vcuda; /* one extension module (validate_cuda.c) */

struct kj__vctx {
	struct kj__arena work, out;
	jmp_buf jmp;
	struct kj_validator *v;
	const struct kj_vrules *rules;
	const char *name; /* the file, for messages */
	const char *dir;  /* where load(sources=...) files are, or NULL */
	struct kj_error *err;
	int code; /* KJ_E* when jumping out for a reason other than memory */

	enum kj_vkind kind;
	int parse_error_line; /* 1-based, or 0 */
	KJ__VEC(struct kj_vviolation) found;
	KJ__VEC(struct kj_vkernel) kernels;
	KJ__VEC(const char *) called;
	struct kj__vmap called_set; /* the names in `called` */
	const char *check_error[KJ_VCHECK_COUNT_];
};

/* End the analysis with `code` (never returns); err is filled by the
 * caller beforehand. */
__attribute__((noreturn)) void kj__vabort(struct kj__vctx *cx, int code);

/*
 * Record a finding.  `call` is the code as written (len bytes; folded and
 * cut here), `resolved` may be NULL; `reason` is formatted.  Copies go to
 * cx->out.
 */
void kj__vfind(struct kj__vctx *cx, enum kj_vcheck check, int line, int warning,
	       const char *severity, const char *call, size_t len,
	       const char *resolved, const char *reason_fmt, ...)
	__attribute__((format(printf, 9, 10)));

/* Add a kernel to the result (strings copied to cx->out). */
void kj__vkernel(struct kj__vctx *cx, const char *name, size_t len, int line,
		 int cuda, int computes, int launched, int placeholder);
/* Add a name to "called" unless it is there already. */
void kj__vcalled(struct kj__vctx *cx, const char *name, size_t len);

/* The analyses. */
void kj__vpy_analyze(struct kj__vctx *cx, const struct kj__vtree *t);

/* A .cu file on its own: every host function is an entry point unless the
 * file binds some with PYBIND11_MODULE. */
void kj__vcuda_file(struct kj__vctx *cx, const char *src, size_t len);

/* Extension modules built from Python (validate_py.c drives these). */
struct kj__vcuda *kj__vcuda_new(struct kj__vctx *cx, int line);
/* Add C++/CUDA source text; rows[i] is the 0-based file line of the text's
 * line i (n_rows entries; lines past the end take the last one). */
void kj__vcuda_add(struct kj__vctx *cx, struct kj__vcuda *m, const char *text,
		   size_t len, const uint32_t *rows, size_t n_rows);
/* A name the module exports (load_inline's functions=[...]). */
void kj__vcuda_export(struct kj__vctx *cx, struct kj__vcuda *m,
		      const char *name, size_t len);
/* A source that could not be read (load(sources=[...])). */
void kj__vcuda_missing(struct kj__vctx *cx, struct kj__vcuda *m,
		       const char *what);
/* Parse and analyse the sources: kernels, calls, launches, host bans. */
void kj__vcuda_analyze(struct kj__vctx *cx, struct kj__vcuda *m);
/* Forward's path calls the module's function `name` (len bytes; NULL:
 * every entry point).  Returns 1 if the module exports it. */
int kj__vcuda_call(struct kj__vctx *cx, struct kj__vcuda *m, const char *name,
		   size_t len);
/* After reachability: the module's kernels into the result. */
void kj__vcuda_finish(struct kj__vctx *cx, struct kj__vcuda *m);

/* The compiled-in rules/validate-default.json (build/gen/). */
extern const char kj__vrules_default[];
extern const size_t kj__vrules_default_len;

#include "base/banned.h"

#endif /* KJ_VALIDATE_INTERNAL_H */
