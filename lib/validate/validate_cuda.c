/*
 * validate_cuda.c - the CUDA C++ analysis: kernels, launches and host code.
 *
 * A CUDA candidate is C++ with CUDA extensions, either a .cu file or the
 * strings a Python file passes to torch.utils.cpp_extension.load_inline
 * (or files it names to load()).  Each such module is parsed with the
 * CUDA grammar and examined:
 *
 *   kernels   every __global__ function (type 1 when there is none);
 *   entries   what Python can call: names bound with m.def("name", ...) in
 *             PYBIND11_MODULE (or m.impl), and load_inline's functions=[...];
 *   launches  `k<<<grid, block>>>(...)` and the launch APIs of the rules
 *             (cudaLaunchKernel((void *)k, ...), cuLaunchKernel, ...), in
 *             live host code: code after a return, under `if (0)` or in
 *             `#if 0` does not count;
 *   reach     from the entries forward's path calls, through host functions
 *             (called, or passed as pointers, or inside lambdas such as
 *             AT_DISPATCH's) to the kernels they launch (type 2);
 *   host bans in host code anywhere: library identifiers (cublas*, cudnn*,
 *             dlsym, ...), ATen and torch:: calls outside the allowed
 *             allocation functions, compute methods on tensors (x.sum()),
 *             arithmetic on variables declared as tensors, and macros that
 *             paste tokens or hide any of these (type 3);
 *   placeholders  a launched kernel whose every store writes a load, a
 *             constant or a name bound only to those (type 4).
 *
 * Line numbers are the candidate file's: a source built from Python strings
 * carries the file row of each of its lines.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate_internal.h"

struct cfn {
	const char *name;
	int src;
	uint32_t node, body;
	int line;
	unsigned is_global : 1, is_device : 1, reached : 1, placeholder : 1,
		launched : 1, walked : 1;
	int next_same_name;
	KJ__VEC(int) edges;
	KJ__VEC(int) launches;
};

struct csrc {
	struct kj__vtree t;
	const uint32_t *rows;
	size_t n_rows;
	int32_t *fn_of_node; /* per node: the function a definition defines */
};

/* Functions that share a name (overloads, templates) are followed up to
 * this many: a file that defines one name ten thousand times must not cost
 * ten thousand steps per use of it. */
#define SAME_NAME_MAX 16

struct cexport {
	const char *name;
	const char *target; /* a function's name, or NULL */
	int fn;             /* a lambda's function, or -1 */
};

struct kj__vcuda {
	int line; /* of the loader call, or 1 */
	KJ__VEC(struct csrc) srcs;
	KJ__VEC(struct cfn) fns;
	struct kj__vmap names;   /* function name -> first index + 1 */
	struct kj__vmap tensors; /* names declared with a tensor type */
	KJ__VEC(struct cexport) exports;
	KJ__VEC(const char *) listed;
	KJ__VEC(const char *) missing;
	int launch_sites;
};

/* One source being looked at. */
struct cw {
	struct kj__vctx *cx;
	struct kj__vcuda *m;
	int si;
	const struct kj__vtree *t;
	int cur; /* the function passes 1 and 2 are in, or -1 */
};

/* Tensor variables are known per function: "<function>:<name>". */
static const char *tensor_key(const struct cw *w, int fn, const char *name, size_t len)
{
	return kj__arena_printf(&w->cx->work, "%d:%.*s", fn, (int)len, name);
}

#define NT(w, i) ((w)->t->n[i])

static int file_line(const struct cw *w, uint32_t node)
{
	const struct csrc *s = &w->m->srcs.v[w->si];
	uint32_t row = NT(w, node).row;

	if (!s->rows)
		return (int)row + 1;
	if (s->n_rows == 0)
		return w->m->line;
	return (int)(row < s->n_rows ? s->rows[row] : s->rows[s->n_rows - 1]) + 1;
}

static const char *cdup(const struct cw *w, uint32_t node)
{
	size_t n;
	const char *s = kj__vtext(w->t, node, &n);

	return kj__arena_strndup(&w->cx->work, s, n);
}

static uint32_t cunparen(const struct cw *w, uint32_t i)
{
	while (i != KJ__VNONE && NT(w, i).kind == KJ__K_PAREN) {
		uint32_t c = NT(w, i).child;

		while (c != KJ__VNONE && (NT(w, c).kind == KJ__K_ANON ||
					  NT(w, c).kind == KJ__K_COMMENT))
			c = NT(w, c).next;
		i = c;
	}
	return i;
}

/* The qualified name of a callee or type, template arguments dropped:
 * at::native::add, torch::Tensor, k (for k<float>). */
static const char *qual_name(const struct cw *w, uint32_t node, int depth)
{
	uint32_t scope, name;

	if (node == KJ__VNONE || depth > 16)
		return "";
	switch (NT(w, node).kind) {
	case KJ__K_C_QUALIFIED_ID:
		scope = kj__vfield_child(w->t, node, KJ__F_SCOPE);
		name = kj__vfield_child(w->t, node, KJ__F_NAME);
		return kj__arena_printf(&w->cx->work, "%s::%s",
					scope != KJ__VNONE ? qual_name(w, scope, depth + 1) : "",
					qual_name(w, name, depth + 1));
	case KJ__K_C_TEMPLATE_FUNC:
	case KJ__K_C_TEMPLATE_TYPE:
	case KJ__K_C_TEMPLATE_METHOD:
		return qual_name(w, kj__vfield_child(w->t, node, KJ__F_NAME), depth + 1);
	default:
		return cdup(w, node);
	}
}

/* The last component of a qualified name. */
static const char *last_name(const char *q)
{
	const char *p = strrchr(q, ':');

	return p ? p + 1 : q;
}

static const char *decl_name(const struct cw *w, uint32_t node)
{
	int depth;

	for (depth = 0; node != KJ__VNONE && depth < 32; depth++) {
		switch (NT(w, node).kind) {
		case KJ__K_C_QUALIFIED_ID:
		case KJ__K_C_TEMPLATE_FUNC:
			return last_name(qual_name(w, node, 0));
		case KJ__K_IDENT:
		case KJ__K_C_FIELD_ID:
		case KJ__K_C_TYPE_ID:
			return cdup(w, node);
		default:
			node = kj__vfield_child(w->t, node, KJ__F_DECLARATOR);
		}
	}
	return NULL;
}

static int find_fn(const struct kj__vcuda *m, const char *name)
{
	void **slot = kj__vmap_get(&m->names, name, strlen(name));

	return slot ? (int)(intptr_t)*slot - 1 : -1;
}

static int new_fn(struct cw *w, const char *name, uint32_t node, uint32_t body)
{
	struct cfn *f = KJ__PUSH(&w->cx->work, w->m->fns);
	int idx = (int)(w->m->fns.n - 1);
	void **slot;

	f->name = name;
	f->src = w->si;
	f->node = node;
	f->body = body;
	f->line = file_line(w, node);
	f->next_same_name = -1;
	if (name) {
		slot = kj__vmap_put(&w->cx->work, &w->m->names, name, strlen(name));
		f->next_same_name = *slot ? (int)(intptr_t)*slot - 1 : -1;
		*slot = (void *)(intptr_t)(idx + 1);
	}
	return idx;
}

static int is_if0(const struct cw *w, uint32_t node)
{
	uint32_t c = kj__vfield_child(w->t, node, KJ__F_CONDITION);

	c = cunparen(w, c);
	return c != KJ__VNONE && (NT(w, c).kind == KJ__K_C_NUMBER || NT(w, c).kind == KJ__K_FALSE) &&
	       (kj__vtext_is(w->t, c, "0") || kj__vtext_is(w->t, c, "false"));
}

/* --- pass 1: functions, exports, tensor names ---------------------------- */

static void add_export(struct cw *w, uint32_t call)
{
	uint32_t args = kj__vfield_child(w->t, call, KJ__F_ARGUMENTS), c, name = KJ__VNONE,
		 target = KJ__VNONE;
	struct cexport *e;
	uint32_t i;

	if (args == KJ__VNONE)
		return;
	KJ__EACH_CHILD(w->t, args, c) {
		if (NT(w, c).kind == KJ__K_ANON || NT(w, c).kind == KJ__K_COMMENT)
			continue;
		if (name == KJ__VNONE)
			name = c;
		else if (target == KJ__VNONE)
			target = c;
	}
	if (name == KJ__VNONE || NT(w, name).kind != KJ__K_STRING)
		return;
	e = KJ__PUSH(&w->cx->work, w->m->exports);
	e->fn = -1;
	name = kj__vkind_child(w->t, name, KJ__K_STRING_CONTENT);
	e->name = name != KJ__VNONE ? cdup(w, name) : "";
	if (target == KJ__VNONE)
		return;
	target = cunparen(w, target);
	if (NT(w, target).kind == KJ__K_LAMBDA) {
		e->fn = new_fn(w, NULL, target, kj__vfield_child(w->t, target, KJ__F_BODY));
		return;
	}
	/* &f, f, ns::f, py::overload_cast<...>(&f): the first name in it */
	for (i = target; i < w->t->count && NT(w, i).start < NT(w, target).end; i++)
		if (NT(w, i).start >= NT(w, target).start &&
		    (NT(w, i).kind == KJ__K_IDENT || NT(w, i).kind == KJ__K_C_QUALIFIED_ID)) {
			e->target = last_name(qual_name(w, i, 0));
			return;
		}
}

static void add_tensor_names(struct cw *w, uint32_t decl)
{
	uint32_t type = kj__vfield_child(w->t, decl, KJ__F_TYPE), c;
	const char *tn;

	if (type == KJ__VNONE)
		return;
	tn = qual_name(w, type, 0);
	if (!kj__vlist_has(&w->cx->rules->cu_tensor_types, tn))
		return;
	KJ__EACH_CHILD(w->t, decl, c) {
		const char *n;

		if (NT(w, c).field != KJ__F_DECLARATOR)
			continue;
		n = decl_name(w, c);
		if (n) {
			const char *key = tensor_key(w, w->cur, n, strlen(n));

			*kj__vmap_put(&w->cx->work, &w->m->tensors, key, strlen(key)) = (void *)1;
		}
	}
}

static void pass1(struct cw *w, uint32_t node)
{
	uint32_t c;
	int outer = w->cur;

	switch (NT(w, node).kind) {
	case KJ__K_C_FUNCDEF: {
		uint32_t d = kj__vfield_child(w->t, node, KJ__F_DECLARATOR);
		const char *name = decl_name(w, d);
		int f = new_fn(w, name ? name : "?", node,
			       kj__vfield_child(w->t, node, KJ__F_BODY));
		int host = 0;

		w->m->srcs.v[w->si].fn_of_node[node] = f;
		KJ__EACH_CHILD(w->t, node, c) {
			if (NT(w, c).kind == KJ__K_C_GLOBAL_KW)
				w->m->fns.v[f].is_global = 1;
			else if (NT(w, c).kind == KJ__K_C_DEVICE_KW)
				w->m->fns.v[f].is_device = 1;
			else if (NT(w, c).kind == KJ__K_C_HOST_KW)
				host = 1;
		}
		if (host) /* __host__ __device__ runs on both sides */
			w->m->fns.v[f].is_device = 0;
		w->cur = f;
		break;
	}
	case KJ__K_C_PREPROC_IF:
		if (is_if0(w, node)) { /* #if 0: only the #else branch exists */
			c = kj__vfield_child(w->t, node, KJ__F_ALTERNATIVE);
			if (c != KJ__VNONE)
				pass1(w, c);
			return;
		}
		break;
	case KJ__K_CALL: {
		uint32_t f = kj__vfield_child(w->t, node, KJ__F_FUNCTION), fld;

		if (f != KJ__VNONE && NT(w, f).kind == KJ__K_C_FIELD_EXPR) {
			fld = kj__vfield_child(w->t, f, KJ__F_FIELD);
			if (fld != KJ__VNONE && (kj__vtext_is(w->t, fld, "def") ||
						 kj__vtext_is(w->t, fld, "impl")))
				add_export(w, node);
		}
		break;
	}
	case KJ__K_C_PARAM_DECL:
	case KJ__K_C_DECLARATION:
		add_tensor_names(w, node);
		break;
	default:
		break;
	}
	KJ__EACH_CHILD(w->t, node, c)
		pass1(w, c);
	w->cur = outer;
}

/* --- pass 2: host bans ------------------------------------------------- */

static void ban(struct cw *w, uint32_t node, const char *resolved, const char *reason)
{
	size_t len;
	const char *s = kj__vtext(w->t, node, &len);

	kj__vfind(w->cx, KJ_VCHECK_HOST_LIBRARY, file_line(w, node), 0, NULL, s, len,
		  resolved, "%s", reason);
}

static int is_name_token(enum kj__vkind k)
{
	return k == KJ__K_IDENT || k == KJ__K_C_TYPE_ID || k == KJ__K_C_FIELD_ID ||
	       k == KJ__K_C_NAMESPACE_ID;
}

static void check_ident(struct cw *w, uint32_t node)
{
	size_t len;
	const char *s = kj__vtext(w->t, node, &len);

	if (kj__vlist_match(&w->cx->rules->cu_deny_ids, s, len))
		ban(w, node, cdup(w, node),
		    kj__arena_printf(&w->cx->work, "%.*s is a library the kernel must not "
						   "call", (int)len, s));
}

static void check_host_call(struct cw *w, uint32_t call)
{
	const struct kj_vrules *R = w->cx->rules;
	uint32_t f = kj__vfield_child(w->t, call, KJ__F_FUNCTION);
	const char *q;

	f = cunparen(w, f);
	if (f == KJ__VNONE)
		return;
	if (NT(w, f).kind == KJ__K_C_FIELD_EXPR) {
		uint32_t fld = kj__vfield_child(w->t, f, KJ__F_FIELD);
		const char *m;

		if (fld == KJ__VNONE)
			return;
		m = NT(w, fld).kind == KJ__K_C_TEMPLATE_METHOD ? qual_name(w, fld, 0) : cdup(w, fld);
		if (kj__vlist_has(&R->method_deny, m) && !kj__vlist_has(&R->method_allow, m))
			ban(w, f, NULL,
			    kj__arena_printf(&w->cx->work, "the tensor method .%s() runs ATen "
							   "in host code", m));
		return;
	}
	if (NT(w, f).kind != KJ__K_C_QUALIFIED_ID && NT(w, f).kind != KJ__K_C_TEMPLATE_FUNC &&
	    NT(w, f).kind != KJ__K_IDENT)
		return;
	q = qual_name(w, f, 0);
	if (q[0] == ':' && q[1] == ':')
		q += 2;
	if (kj__vlist_has(&R->cu_deny_calls, q) && !kj__vlist_has(&R->cu_allow_calls, q))
		ban(w, f, q,
		    kj__arena_printf(&w->cx->work, "%s computes with a library in host code "
						   "instead of the kernel", q));
}

static int is_tensor_name(const struct cw *w, uint32_t node)
{
	const char *s, *key;
	size_t len;

	node = cunparen(w, node);
	if (node == KJ__VNONE || NT(w, node).kind != KJ__K_IDENT)
		return 0;
	s = kj__vtext(w->t, node, &len);
	key = tensor_key(w, w->cur, s, len);
	if (kj__vmap_get(&w->m->tensors, key, strlen(key)))
		return 1;
	key = tensor_key(w, -1, s, len); /* a global */
	return kj__vmap_get(&w->m->tensors, key, strlen(key)) != NULL;
}

static int arith_op(const struct cw *w, uint32_t op, int compound)
{
	static const char *const ops[] = { "+", "-", "*", "/", "%" };
	size_t len, i;
	const char *s;

	if (op == KJ__VNONE)
		return 0;
	s = kj__vtext(w->t, op, &len);
	if (compound) {
		if (len != 2 || s[1] != '=')
			return 0;
		len = 1;
	}
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (len == 1 && s[0] == ops[i][0])
			return 1;
	return 0;
}

static void check_macro(struct cw *w, uint32_t node)
{
	uint32_t arg = kj__vkind_child(w->t, node, KJ__K_C_PREPROC_ARG), i;
	struct kj__vtree sub;
	struct cw sw = *w;
	size_t len;
	const char *s;

	if (arg == KJ__VNONE)
		return;
	s = kj__vtext(w->t, arg, &len);
	if (w->cx->rules->cu_token_paste && len >= 2 && memmem(s, len, "##", 2))
		ban(w, arg, NULL,
		    "token pasting (##) in a macro can build a library call's name");
	/* The macro's body is text to the grammar; parse it on its own to see
	 * the names in it. */
	if (kj__vparse(w->cx, w->cx->v->parser, &w->cx->v->cuda, s, len, &sub) != KJ_OK)
		return;
	sw.t = &sub;
	for (i = 0; i < sub.count; i++) {
		if (is_name_token(sub.n[i].kind)) {
			size_t n;
			const char *name = kj__vtext(&sub, i, &n);

			if (kj__vlist_match(&w->cx->rules->cu_deny_ids, name, n))
				ban(w, arg, kj__arena_strndup(&w->cx->work, name, n),
				    kj__arena_printf(&w->cx->work, "the macro hides %.*s, a library "
								   "the kernel must not call", (int)n,
						     name));
		} else if (sub.n[i].kind == KJ__K_CALL) {
			uint32_t f = cunparen(&sw, kj__vfield_child(&sub, i, KJ__F_FUNCTION));
			const char *q;

			if (f == KJ__VNONE || sub.n[f].kind != KJ__K_C_QUALIFIED_ID)
				continue;
			q = qual_name(&sw, f, 0);
			if (kj__vlist_has(&w->cx->rules->cu_deny_calls, q) &&
			    !kj__vlist_has(&w->cx->rules->cu_allow_calls, q))
				ban(w, arg, q,
				    kj__arena_printf(&w->cx->work, "the macro hides %s, library "
								   "compute in host code", q));
		}
	}
}

static void pass2(struct cw *w, uint32_t node, int device)
{
	uint32_t c;
	int f, outer = w->cur;

	switch (NT(w, node).kind) {
	case KJ__K_C_FUNCDEF:
		f = w->m->srcs.v[w->si].fn_of_node[node];
		if (f >= 0) {
			device = w->m->fns.v[f].is_global || w->m->fns.v[f].is_device;
			w->cur = f;
		}
		break;
	case KJ__K_C_PREPROC_IF:
		if (is_if0(w, node)) {
			c = kj__vfield_child(w->t, node, KJ__F_ALTERNATIVE);
			if (c != KJ__VNONE)
				pass2(w, c, device);
			return;
		}
		break;
	case KJ__K_C_PREPROC_DEF:
	case KJ__K_C_PREPROC_FUNC_DEF:
		check_macro(w, node);
		break;
	case KJ__K_CALL:
		if (!device)
			check_host_call(w, node);
		break;
	case KJ__K_BINOP:
		if (!device && arith_op(w, kj__vfield_child(w->t, node, KJ__F_OPERATOR), 0) &&
		    (is_tensor_name(w, kj__vfield_child(w->t, node, KJ__F_LEFT)) ||
		     is_tensor_name(w, kj__vfield_child(w->t, node, KJ__F_RIGHT))))
			ban(w, node, NULL, "arithmetic on tensors in host code runs ATen");
		break;
	case KJ__K_C_ASSIGN:
		if (!device && arith_op(w, kj__vfield_child(w->t, node, KJ__F_OPERATOR), 1) &&
		    is_tensor_name(w, kj__vfield_child(w->t, node, KJ__F_LEFT)))
			ban(w, node, NULL, "arithmetic on tensors in host code runs ATen");
		break;
	default:
		if (is_name_token(NT(w, node).kind))
			check_ident(w, node);
		break;
	}
	KJ__EACH_CHILD(w->t, node, c)
		pass2(w, c, device);
	w->cur = outer;
}

/* --- pass 3: calls and launches in live host code ------------------------ */

static void add_launch(struct cw *w, int from, const char *name)
{
	int k, n = 0;

	for (k = find_fn(w->m, name); k >= 0 && n++ < SAME_NAME_MAX;
	     k = w->m->fns.v[k].next_same_name)
		if (w->m->fns.v[k].is_global)
			*KJ__PUSH(&w->cx->work, w->m->fns.v[from].launches) = k;
}

/* Kernel names passed to a launch API: cudaLaunchKernel((void *)k, ...). */
static void api_launch(struct cw *w, int from, uint32_t args)
{
	uint32_t i;

	for (i = args; i < w->t->count && NT(w, i).start < NT(w, args).end; i++)
		if (NT(w, i).start >= NT(w, args).start && NT(w, i).kind == KJ__K_IDENT)
			add_launch(w, from, cdup(w, i));
}

static void walk_c(struct cw *w, int fn, uint32_t node);

static void walk_c_children(struct cw *w, int fn, uint32_t node)
{
	uint32_t c;

	KJ__EACH_CHILD(w->t, node, c)
		walk_c(w, fn, c);
}

static void walk_c(struct cw *w, int fn, uint32_t node)
{
	uint32_t c, f;
	const char *name;
	int t;

	if (node == KJ__VNONE)
		return;
	switch (NT(w, node).kind) {
	case KJ__K_C_COMPOUND:
		KJ__EACH_CHILD(w->t, node, c) {
			enum kj__vkind k = NT(w, c).kind;

			walk_c(w, fn, c);
			if (k == KJ__K_RETURN || k == KJ__K_BREAK || k == KJ__K_CONTINUE)
				return; /* the rest is dead */
		}
		return;
	case KJ__K_IF:
		c = kj__vfield_child(w->t, node, KJ__F_CONDITION);
		walk_c(w, fn, c);
		t = -1;
		if (c != KJ__VNONE) {
			uint32_t v = kj__vfield_child(w->t, c, KJ__F_VALUE);

			v = cunparen(w, v);
			if (v != KJ__VNONE && (NT(w, v).kind == KJ__K_C_NUMBER ||
					       NT(w, v).kind == KJ__K_FALSE ||
					       NT(w, v).kind == KJ__K_TRUE))
				t = !(kj__vtext_is(w->t, v, "0") || kj__vtext_is(w->t, v, "false"));
		}
		if (t != 0)
			walk_c(w, fn, kj__vfield_child(w->t, node, KJ__F_CONSEQUENCE));
		if (t != 1)
			walk_c(w, fn, kj__vfield_child(w->t, node, KJ__F_ALTERNATIVE));
		return;
	case KJ__K_C_PREPROC_IF:
		if (is_if0(w, node)) {
			walk_c(w, fn, kj__vfield_child(w->t, node, KJ__F_ALTERNATIVE));
			return;
		}
		break;
	case KJ__K_CALL:
		f = cunparen(w, kj__vfield_child(w->t, node, KJ__F_FUNCTION));
		if (f == KJ__VNONE)
			break;
		name = qual_name(w, f, 0);
		if (kj__vkind_child(w->t, node, KJ__K_C_KERNEL_CALL) != KJ__VNONE) {
			w->m->launch_sites++;
			add_launch(w, fn, last_name(name));
		} else if (kj__vlist_has(&w->cx->rules->cu_launch_apis, last_name(name))) {
			w->m->launch_sites++;
			api_launch(w, fn, kj__vfield_child(w->t, node, KJ__F_ARGUMENTS));
		}
		break;
	case KJ__K_IDENT: {
		int g, n = 0;

		/* a call, or a function pointer that will be called */
		for (g = find_fn(w->m, cdup(w, node)); g >= 0 && n++ < SAME_NAME_MAX;
		     g = w->m->fns.v[g].next_same_name)
			if (!w->m->fns.v[g].is_global && !w->m->fns.v[g].is_device && g != fn)
				*KJ__PUSH(&w->cx->work, w->m->fns.v[fn].edges) = g;
		return;
	}
	case KJ__K_COMMENT:
		return;
	default:
		break;
	}
	walk_c_children(w, fn, node);
}

/* Launch sites in dead code, for the type 2 message. */
static void count_dead_launches(struct cw *w, uint32_t node)
{
	uint32_t i;

	for (i = node; i < w->t->count; i++)
		if (NT(w, i).kind == KJ__K_C_KERNEL_CALL)
			w->m->launch_sites++;
}

/* --- placeholders ------------------------------------------------------- */

/* What one kernel binds, name -> values (KJ__VNONE: a compound
 * assignment, computed), and what is known of each name so far. */
struct cbinds {
	struct kj__vmap values;
	struct kj__vmap memo; /* 1 looking, 2 moved, 3 computed */
};

struct cbindlist {
	KJ__VEC(uint32_t) rhs;
};

static void cbind(struct cw *w, struct cbinds *B, uint32_t name, uint32_t value)
{
	struct cbindlist **bl;
	size_t len;
	const char *s = kj__vtext(w->t, name, &len);

	bl = (struct cbindlist **)kj__vmap_put(&w->cx->work, &B->values, s, len);
	if (!*bl)
		*bl = kj__arena_alloc(&w->cx->work, sizeof(**bl));
	*KJ__PUSH(&w->cx->work, (*bl)->rhs) = value;
}

static void kernel_cbinds(struct cw *w, struct cbinds *B, uint32_t body)
{
	uint32_t i, d;

	memset(B, 0, sizeof(*B));
	for (i = body; i < w->t->count && NT(w, i).start < NT(w, body).end; i++) {
		if (NT(w, i).kind == KJ__K_C_INIT_DECLARATOR) {
			d = kj__vfield_child(w->t, i, KJ__F_DECLARATOR);
			if (d != KJ__VNONE && NT(w, d).kind == KJ__K_IDENT)
				cbind(w, B, d, kj__vfield_child(w->t, i, KJ__F_VALUE));
		} else if (NT(w, i).kind == KJ__K_C_ASSIGN) {
			d = cunparen(w, kj__vfield_child(w->t, i, KJ__F_LEFT));
			if (d == KJ__VNONE || NT(w, d).kind != KJ__K_IDENT)
				continue;
			cbind(w, B, d,
			      kj__vtext_is(w->t, kj__vfield_child(w->t, i, KJ__F_OPERATOR), "=")
				      ? kj__vfield_child(w->t, i, KJ__F_RIGHT)
				      : KJ__VNONE); /* acc += ...: computed */
		}
	}
}

static int cmoved(struct cw *w, struct cbinds *B, uint32_t v, int depth)
{
	struct cbindlist **bl;
	void **memo;
	uint32_t f;
	size_t len, i;
	const char *s;
	int moved = 1;

	v = cunparen(w, v);
	if (v == KJ__VNONE || depth > 64)
		return 0;
	switch (NT(w, v).kind) {
	case KJ__K_C_NUMBER:
	case KJ__K_TRUE:
	case KJ__K_FALSE:
	case KJ__K_NONE:
	case KJ__K_SUBSCRIPT: /* a load */
		return 1;
	case KJ__K_C_POINTER_EXPR: /* *p is a load, &x is not data */
		return kj__vtext_is(w->t, kj__vfield_child(w->t, v, KJ__F_OPERATOR), "*");
	case KJ__K_C_CAST:
		return cmoved(w, B, kj__vfield_child(w->t, v, KJ__F_VALUE), depth + 1);
	case KJ__K_C_FIELD_EXPR:
		return cmoved(w, B, kj__vfield_child(w->t, v, KJ__F_ARGUMENT), depth + 1);
	case KJ__K_C_UNARY:
		return kj__vtext_is(w->t, kj__vfield_child(w->t, v, KJ__F_OPERATOR), "-") &&
		       NT(w, cunparen(w, kj__vfield_child(w->t, v, KJ__F_ARGUMENT))).kind ==
			       KJ__K_C_NUMBER;
	case KJ__K_CALL:
		f = cunparen(w, kj__vfield_child(w->t, v, KJ__F_FUNCTION));
		return f != KJ__VNONE &&
		       kj__vlist_has(&w->cx->rules->ph_cuda_loads, last_name(qual_name(w, f, 0)));
	case KJ__K_IDENT:
		s = kj__vtext(w->t, v, &len);
		memo = kj__vmap_put(&w->cx->work, &B->memo, s, len);
		if (*memo) /* known, or being looked at: a cycle adds nothing */
			return (intptr_t)*memo != 3;
		*memo = (void *)1;
		bl = (struct cbindlist **)kj__vmap_get(&B->values, s, len);
		for (i = 0; bl && moved && i < (*bl)->rhs.n; i++)
			moved = (*bl)->rhs.v[i] != KJ__VNONE &&
				cmoved(w, B, (*bl)->rhs.v[i], depth + 1);
		memo = kj__vmap_get(&B->memo, s, len);
		*memo = (void *)(intptr_t)(moved ? 2 : 3);
		return moved; /* a parameter, or bound only to moved values */
	default:
		return 0;
	}
}

static int is_store_target(const struct cw *w, uint32_t l)
{
	l = cunparen(w, l);
	if (l == KJ__VNONE)
		return 0;
	if (NT(w, l).kind == KJ__K_SUBSCRIPT)
		return 1;
	if (NT(w, l).kind == KJ__K_C_POINTER_EXPR)
		return kj__vtext_is(w->t, kj__vfield_child(w->t, l, KJ__F_OPERATOR), "*");
	if (NT(w, l).kind == KJ__K_C_FIELD_EXPR)
		return is_store_target(w, kj__vfield_child(w->t, l, KJ__F_ARGUMENT));
	return 0;
}

/* A kernel that stores only loads, constants and names bound to them. */
static int is_placeholder(struct cw *w, int k)
{
	const struct cfn *f = &w->m->fns.v[k];
	uint32_t i, body = f->body;
	struct cbinds B;

	if (body == KJ__VNONE)
		return 1;
	kernel_cbinds(w, &B, body);
	for (i = body; i < w->t->count && NT(w, i).start < NT(w, body).end; i++) {
		if (NT(w, i).start < NT(w, body).start)
			continue;
		if (NT(w, i).kind == KJ__K_C_ASSIGN &&
		    is_store_target(w, kj__vfield_child(w->t, i, KJ__F_LEFT))) {
			if (!kj__vtext_is(w->t, kj__vfield_child(w->t, i, KJ__F_OPERATOR), "=") ||
			    !cmoved(w, &B, kj__vfield_child(w->t, i, KJ__F_RIGHT), 0))
				return 0;
		} else if (NT(w, i).kind == KJ__K_CALL) {
			uint32_t fn = cunparen(w, kj__vfield_child(w->t, i, KJ__F_FUNCTION));
			const char *name;
			int g;

			if (fn == KJ__VNONE)
				continue;
			name = last_name(qual_name(w, fn, 0));
			if (!strncmp(name, "atomic", 6))
				return 0;
			for (g = find_fn(w->m, name); g >= 0; g = w->m->fns.v[g].next_same_name)
				if (w->m->fns.v[g].is_device)
					return 0; /* a device function may compute and store */
		}
	}
	return 1;
}

/* --- the module --------------------------------------------------------- */

struct kj__vcuda *kj__vcuda_new(struct kj__vctx *cx, int line)
{
	struct kj__vcuda *m = kj__arena_alloc(&cx->work, sizeof(*m));

	m->line = line;
	return m;
}

void kj__vcuda_add(struct kj__vctx *cx, struct kj__vcuda *m, const char *text,
		   size_t len, const uint32_t *rows, size_t n_rows)
{
	struct csrc *s = KJ__PUSH(&cx->work, m->srcs);
	char *copy = kj__arena_strndup(&cx->work, text, len);
	uint32_t *r = NULL;
	int rc;

	if (rows) {
		r = kj__arena_alloc(&cx->work, (n_rows ? n_rows : 1) * sizeof(*r));
		memcpy(r, rows, n_rows * sizeof(*r));
	}
	s->rows = r;
	s->n_rows = n_rows;
	rc = kj__vparse(cx, cx->v->parser, &cx->v->cuda, copy, len, &s->t);
	if (rc != KJ_OK)
		kj__vabort(cx, rc);
}

void kj__vcuda_export(struct kj__vctx *cx, struct kj__vcuda *m, const char *name,
		      size_t len)
{
	*KJ__PUSH(&cx->work, m->listed) = kj__arena_strndup(&cx->work, name, len);
}

void kj__vcuda_missing(struct kj__vctx *cx, struct kj__vcuda *m, const char *what)
{
	*KJ__PUSH(&cx->work, m->missing) = what;
}

void kj__vcuda_analyze(struct kj__vctx *cx, struct kj__vcuda *m)
{
	struct cw w;
	size_t s, f;

	w.cx = cx;
	w.m = m;
	w.cur = -1;
	for (s = 0; s < m->srcs.n; s++) {
		uint32_t i;

		w.si = (int)s;
		w.t = &m->srcs.v[s].t;
		m->srcs.v[s].fn_of_node =
			kj__arena_alloc(&cx->work, (w.t->count ? w.t->count : 1) * sizeof(int32_t));
		for (i = 0; i < w.t->count; i++)
			m->srcs.v[s].fn_of_node[i] = -1;
		if (w.t->count)
			pass1(&w, 0);
	}
	for (s = 0; s < m->srcs.n; s++) {
		w.si = (int)s;
		w.t = &m->srcs.v[s].t;
		if (w.t->count)
			pass2(&w, 0, 0);
	}
	for (f = 0; f < m->fns.n; f++) {
		struct cfn *fn = &m->fns.v[f];

		w.si = fn->src;
		w.t = &m->srcs.v[fn->src].t;
		if (fn->is_global)
			fn->placeholder = (unsigned)is_placeholder(&w, (int)f);
	}
}

static void visit(struct kj__vctx *cx, struct kj__vcuda *m, int start)
{
	KJ__VEC(int) queue = { 0 };
	size_t head = 0, i;
	struct cw w;

	w.cx = cx;
	w.m = m;
	w.cur = -1;
	if (m->fns.v[start].reached)
		return;
	m->fns.v[start].reached = 1;
	*KJ__PUSH(&cx->work, queue) = start;
	while (head < queue.n) {
		int fn = queue.v[head++];
		struct cfn *f = &m->fns.v[fn];

		if (!f->walked) {
			f->walked = 1;
			w.si = f->src;
			w.t = &m->srcs.v[f->src].t;
			walk_c(&w, fn, f->body);
		}
		f = &m->fns.v[fn];
		for (i = 0; i < f->launches.n; i++)
			m->fns.v[f->launches.v[i]].launched = 1;
		for (i = 0; i < f->edges.n; i++) {
			int to = f->edges.v[i];

			if (!m->fns.v[to].reached) {
				m->fns.v[to].reached = 1;
				*KJ__PUSH(&cx->work, queue) = to;
			}
		}
	}
}

static int visit_name(struct kj__vctx *cx, struct kj__vcuda *m, const char *name)
{
	int g, found = 0;

	for (g = find_fn(m, name); g >= 0; g = m->fns.v[g].next_same_name)
		if (!m->fns.v[g].is_global && !m->fns.v[g].is_device) {
			visit(cx, m, g);
			found = 1;
		}
	return found;
}

int kj__vcuda_call(struct kj__vctx *cx, struct kj__vcuda *m, const char *name,
		   size_t len)
{
	size_t i;
	int found = 0;

	for (i = 0; i < m->exports.n; i++) {
		const struct cexport *e = &m->exports.v[i];

		if (name && (strlen(e->name) != len || memcmp(e->name, name, len)))
			continue;
		if (e->fn >= 0) {
			visit(cx, m, e->fn);
			found = 1;
		} else if (e->target) {
			found |= visit_name(cx, m, e->target);
		}
	}
	for (i = 0; i < m->listed.n; i++) {
		if (name && (strlen(m->listed.v[i]) != len || memcmp(m->listed.v[i], name, len)))
			continue;
		found |= visit_name(cx, m, m->listed.v[i]);
	}
	if (!found && name && !m->exports.n && !m->listed.n) {
		/* bound some other way: a host function of that name */
		char *n = kj__arena_strndup(&cx->work, name, len);

		found = visit_name(cx, m, n);
	}
	if (!name && !m->exports.n && !m->listed.n)
		for (i = 0; i < m->fns.n; i++)
			if (!m->fns.v[i].is_global && !m->fns.v[i].is_device) {
				visit(cx, m, (int)i);
				found = 1;
			}
	return found;
}

void kj__vcuda_finish(struct kj__vctx *cx, struct kj__vcuda *m)
{
	size_t i;
	int any = 0, launched = 0;

	for (i = 0; i < m->fns.n; i++) {
		const struct cfn *f = &m->fns.v[i];

		if (!f->is_global)
			continue;
		any = 1;
		kj__vkernel(cx, f->name, strlen(f->name), f->line, 1, 1, f->launched,
			    f->launched && f->placeholder);
		if (f->launched) {
			kj__vcalled(cx, f->name, strlen(f->name));
			launched = 1;
		}
	}
	if (launched)
		return;
	if (m->missing.n && !cx->check_error[KJ_VCHECK_CALLED])
		cx->check_error[KJ_VCHECK_CALLED] = kj__arena_printf(
			&cx->out, "the extension built at line %d cannot be examined: %s",
			m->line, m->missing.v[0]);
	if (any && !cx->check_error[KJ_VCHECK_CALLED]) {
		struct cw w;
		size_t s;

		w.cx = cx;
		w.m = m;
		w.cur = -1;
		m->launch_sites = 0;
		for (s = 0; s < m->srcs.n; s++) {
			w.si = (int)s;
			w.t = &m->srcs.v[s].t;
			if (w.t->count)
				count_dead_launches(&w, 0);
		}
		cx->check_error[KJ_VCHECK_CALLED] = kj__arena_printf(
			&cx->out, "%s", m->launch_sites
				? "no __global__ kernel is launched on the path forward calls: "
				  "every launch is in dead code or in functions it never calls"
				: "the __global__ kernels are never launched (k<<<grid, block>>>(...))");
	}
}

void kj__vcuda_file(struct kj__vctx *cx, const char *src, size_t len)
{
	struct kj__vcuda *m = kj__vcuda_new(cx, 1);

	cx->kind = KJ_VKIND_CUDA;
	kj__vcuda_add(cx, m, src, len, NULL, 0);
	kj__vcuda_analyze(cx, m);
	kj__vcuda_call(cx, m, NULL, 0);
	kj__vcuda_finish(cx, m);
}
