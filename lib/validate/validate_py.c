/*
 * validate_py.c - the Python analysis of a candidate.
 *
 * Theory of operation.  One file, one pass to collect and then several
 * over what was collected; nothing is executed and nothing is imported.
 *
 * 1. Collect.  A walk of the flat tree records every function (defs,
 *    methods, lambdas, plus one pseudo-function for the module and one per
 *    class body), every class with its bases, imports (as aliases), every
 *    assignment and parameter default, every call and attribute.
 *
 * 2. Names.  An expression resolves to up to four references (`struct
 *    ref`): a module path ("torch.nn.functional.relu": imports, attribute
 *    chains of any depth, getattr/__import__/importlib with constant names),
 *    a function or class of the file, an instance of a class of the file
 *    (`self` in its methods), an extension module built by load_inline, a
 *    function of one, or an opaque value.  Assignments (`F2 = F`, `self.op
 *    = torch.relu`, `def f(x, act=torch.relu)`) become aliases; they are
 *    resolved to a fixed point, so chains of aliases in any order work.
 *    Names are flat (one namespace for the file): a name bound to two things
 *    resolves to both, which errs on the side of finding more.
 *
 * 3. Kernels.  A def whose decorator resolves to a rule's triton_decorators
 *    entry (triton.jit however it was imported), or that is passed to one,
 *    is a kernel.  Its body's uses of triton.language are counted (type 1)
 *    and its stores examined (type 4).
 *
 * 4. Forward.  Every function's live code (dead code: after return, raise,
 *    break or continue; under `if False`, `while 0` and the like) is walked
 *    once.  Calls become edges to functions of the file, launches
 *    (`K[grid](...)` of a kernel), calls into extension modules, and
 *    pending findings.  A breadth-first search from ModelNew.forward marks
 *    what forward reaches; only reached functions report their pending
 *    findings, and only their launches count (type 2).
 *
 * 5. The whole file.  The module-wide bans, dynamic code (exec, eval,
 *    __import__, getattr on torch, ...) and global-setting assignments are
 *    checked on every call, attribute and assignment, dead or alive.
 *
 * Comments and strings are never code here: the parser says which is
 * which.  Strings become code only when passed to an extension loader,
 * where they are parsed as CUDA C++ (validate_cuda.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/fs.h"
#include "validate/validate_internal.h"

/* --- references ---------------------------------------------------------- */

enum rkind {
	R_NAME,  /* a name bound to nothing the file shows: a builtin, a local */
	R_MOD,   /* a path into an imported module: s */
	R_VALUE, /* an opaque value; s is the attribute it was reached by */
	R_FUNC,  /* function idx */
	R_CLASS, /* class idx */
	R_OBJ,   /* instance of class idx */
	R_EXT,   /* extension module idx */
	R_EXTFN, /* function s of extension module idx */
	R_SUPER, /* super() inside class idx */
};

#define MAXREF 4

struct ref {
	uint8_t kind;
	uint8_t selfattr; /* R_VALUE: an attribute of an instance that nothing set */
	int idx;
	const char *s;
};

struct refs {
	int n;
	struct ref r[MAXREF];
};

/* --- what is collected ------------------------------------------------------ */

enum fkind { FN_MODULE, FN_CLASSBODY, FN_DEF, FN_LAMBDA };

struct pending {
	enum kj_vcheck check;
	uint32_t node;     /* the code to quote */
	const char *resolved;
	const char *reason;
	int sync;          /* a host-sync finding: severity decided after the walk */
	const char *sync_name; /* the name its value is assigned to, or NULL */
	int in_launch;
};

struct extcall {
	int ext;
	const char *fn;
};

struct func {
	const char *name;
	uint32_t node, body;
	enum fkind kind;
	int cls;    /* class whose body holds it, or -1 */
	int parent; /* enclosing function, -1 for the module */
	const char *self_name; /* first parameter of a method */
	int self_is_class;     /* @classmethod */
	int next_same_name;    /* functions chained by name */
	unsigned is_kernel : 1, reached : 1, walked : 1, computes : 1,
		placeholder : 1, launched : 1, tl_use : 1;
	KJ__VEC(int) edges;
	KJ__VEC(int) launches;
	KJ__VEC(struct extcall) extcalls;
	KJ__VEC(struct pending) pending;
	KJ__VEC(const char *) launch_names; /* identifiers in its launches */
	struct kbinds *binds; /* a kernel's assignments (examine_kernel) */
};

struct klass {
	const char *name;
	uint32_t node;
	int line;
	int body_fn;
	int next_same_name;
	KJ__VEC(uint32_t) bases;
	struct refs base_refs[8];
	int n_bases;
};

struct assign {
	uint32_t lhs, rhs;
	int fn;
	int is_setattr; /* lhs is the call setattr(obj, "name", value) */
	const char *attr_key; /* obj.attr = ...: its key once aliases are known */
};

struct site {
	uint32_t node;
	int fn;
};

struct ext {
	uint32_t call;
	int fn;
	struct kj__vcuda *m;
};

struct alias {
	struct refs refs;
};

struct py {
	struct kj__vctx *cx;
	const struct kj_vrules *R;
	const struct kj__vtree *t;
	KJ__VEC(struct func) fns;
	KJ__VEC(struct klass) classes;
	KJ__VEC(struct assign) assigns;
	KJ__VEC(struct site) calls;
	KJ__VEC(struct site) attrs;
	KJ__VEC(struct site) stars;
	KJ__VEC(struct site) execs;
	KJ__VEC(struct ext) exts;
	struct kj__vmap aliases;   /* key -> struct alias */
	struct kj__vmap fn_names;  /* name -> first func index + 1 */
	struct kj__vmap cls_names; /* name -> first class index + 1 */
	struct kj__vmap methods;   /* "<class>.<name>" -> func index + 1 */
	struct kj__vmap strvars;   /* name -> rhs node + 1 (last assignment) */
	struct kj__vmap tensor_attrs; /* "obj:<class>.<attr>" set to a tensor */
	int32_t *node_fn;          /* per node: func index of a def or lambda */
	int32_t *node_cls;         /* per node: class index of a class_definition */
	int entry;                 /* ModelNew.forward, or -1 */
	int entry_cls;
};

#define T (P->t)
#define N(i) (P->t->n[i])

static int row_line(const struct py *P, uint32_t node)
{
	return (int)N(node).row + 1;
}

static const char *text_dup(struct py *P, uint32_t node)
{
	size_t n;
	const char *s = kj__vtext(T, node, &n);

	return kj__arena_strndup(&P->cx->work, s, n);
}

/* The next named, non-comment child after c (c itself if it qualifies). */
static uint32_t named_from(const struct py *P, uint32_t c)
{
	while (c != KJ__VNONE &&
	       (N(c).kind == KJ__K_ANON || N(c).kind == KJ__K_COMMENT))
		c = N(c).next;
	return c;
}

static uint32_t first_named(const struct py *P, uint32_t i)
{
	return named_from(P, N(i).child);
}

static uint32_t next_named(const struct py *P, uint32_t c)
{
	return named_from(P, N(c).next);
}

/* The i-th positional argument of a call, or KJ__VNONE. */
static uint32_t pos_arg(const struct py *P, uint32_t call, int want)
{
	uint32_t args = kj__vfield_child(T, call, KJ__F_ARGUMENTS), c;
	int i = 0;

	if (args == KJ__VNONE || N(args).kind != KJ__K_ARGS)
		return KJ__VNONE;
	for (c = first_named(P, args); c != KJ__VNONE; c = next_named(P, c)) {
		if (N(c).kind == KJ__K_KWARG)
			continue;
		if (N(c).kind == KJ__K_OTHER) /* *args, **kwargs */
			return KJ__VNONE;
		if (i++ == want)
			return c;
	}
	return KJ__VNONE;
}

/* The value of keyword argument `name`, or KJ__VNONE. */
static uint32_t kw_arg(const struct py *P, uint32_t call, const char *name)
{
	uint32_t args = kj__vfield_child(T, call, KJ__F_ARGUMENTS), c;

	if (args == KJ__VNONE || N(args).kind != KJ__K_ARGS)
		return KJ__VNONE;
	for (c = first_named(P, args); c != KJ__VNONE; c = next_named(P, c)) {
		uint32_t k;

		if (N(c).kind != KJ__K_KWARG)
			continue;
		k = kj__vfield_child(T, c, KJ__F_NAME);
		if (k != KJ__VNONE && kj__vtext_is(T, k, name))
			return kj__vfield_child(T, c, KJ__F_VALUE);
	}
	return KJ__VNONE;
}

static uint32_t arg_or_kw(const struct py *P, uint32_t call, int pos,
			  const char *kw)
{
	uint32_t a = kw_arg(P, call, kw);

	return a != KJ__VNONE ? a : pos_arg(P, call, pos);
}

/* Strip parentheses. */
static uint32_t unparen(const struct py *P, uint32_t i)
{
	while (i != KJ__VNONE && N(i).kind == KJ__K_PAREN)
		i = first_named(P, i);
	return i;
}

/*
 * The value of a plain string literal (no interpolation, no escapes that
 * matter for a name), or NULL.  Used for getattr/import names and
 * load_inline's functions=[...].
 */
static const char *const_string(struct py *P, uint32_t node)
{
	uint32_t c, content = KJ__VNONE;
	int parts = 0;

	node = unparen(P, node);
	if (node == KJ__VNONE || N(node).kind != KJ__K_STRING)
		return NULL;
	KJ__EACH_CHILD(T, node, c) {
		if (N(c).kind == KJ__K_PY_INTERPOLATION)
			return NULL;
		if (N(c).kind == KJ__K_STRING_CONTENT) {
			content = c;
			parts++;
		}
	}
	if (parts == 0)
		return "";
	if (parts > 1 || N(content).child != KJ__VNONE) /* escapes inside */
		return NULL;
	return text_dup(P, content);
}

/* --- references: helpers --------------------------------------------------- */

static void add_ref(struct refs *out, struct ref r)
{
	int i;

	for (i = 0; i < out->n; i++) {
		const struct ref *o = &out->r[i];

		if (o->kind == r.kind && o->idx == r.idx && o->selfattr == r.selfattr &&
		    (o->s == r.s || (o->s && r.s && !strcmp(o->s, r.s))))
			return;
	}
	if (out->n < MAXREF)
		out->r[out->n++] = r;
}

static struct ref mkref(int kind, int idx, const char *s)
{
	struct ref r;

	r.kind = (uint8_t)kind;
	r.selfattr = 0;
	r.idx = idx;
	r.s = s;
	return r;
}

static struct alias *alias_get(struct py *P, const char *key)
{
	void **slot = kj__vmap_get(&P->aliases, key, strlen(key));

	return slot ? *slot : NULL;
}

/* Merge refs into the alias `key`; 1 if it changed.  Opaque values carry
 * nothing worth remembering and are dropped. */
static int alias_add(struct py *P, const char *key, const struct refs *in)
{
	void **slot;
	struct alias *a;
	int i, before;

	for (i = 0; i < in->n; i++)
		if (in->r[i].kind != R_VALUE)
			break;
	if (i == in->n)
		return 0;
	slot = kj__vmap_put(&P->cx->work, &P->aliases, key, strlen(key));
	a = *slot;
	if (!a) {
		a = kj__arena_alloc(&P->cx->work, sizeof(*a));
		*slot = a;
	}
	before = a->refs.n;
	for (i = 0; i < in->n; i++)
		if (in->r[i].kind != R_VALUE)
			add_ref(&a->refs, in->r[i]);
	return a->refs.n != before;
}

static void alias_mod(struct py *P, const char *key, const char *path)
{
	struct refs r = { 0 };

	add_ref(&r, mkref(R_MOD, 0, path));
	alias_add(P, key, &r);
}

/*
 * Base classes are searched depth first with a budget of classes visited,
 * not a depth limit alone: a hierarchy of classes with eight bases each
 * would otherwise cost 32^8 visits.  The budget is far beyond real
 * candidates' hierarchies.
 */
#define CLASS_VISITS 64

static int find_method(struct py *P, int c, const char *name, int *budget)
{
	char key[320];
	void **slot;
	int b, i;

	if (c < 0 || --*budget < 0)
		return -1;
	snprintf(key, sizeof(key), "%d.%s", c, name);
	slot = kj__vmap_get(&P->methods, key, strlen(key));
	if (slot)
		return (int)(intptr_t)*slot - 1;
	for (b = 0; b < P->classes.v[c].n_bases; b++)
		for (i = 0; i < P->classes.v[c].base_refs[b].n; i++) {
			const struct ref *r = &P->classes.v[c].base_refs[b].r[i];
			int m;

			if (r->kind != R_CLASS)
				continue;
			m = find_method(P, r->idx, name, budget);
			if (m >= 0)
				return m;
		}
	return -1;
}

/* A method `name` of class c or of its bases in the file (-1 if none). */
static int method_lookup(struct py *P, int c, const char *name)
{
	int budget = CLASS_VISITS;

	return find_method(P, c, name, &budget);
}

static struct alias *find_member(struct py *P, int c, const char *attr, int *budget)
{
	char key[320];
	struct alias *a;
	int b, i;

	if (c < 0 || --*budget < 0)
		return NULL;
	snprintf(key, sizeof(key), "obj:%d.%s", c, attr);
	a = alias_get(P, key);
	if (a)
		return a;
	for (b = 0; b < P->classes.v[c].n_bases; b++)
		for (i = 0; i < P->classes.v[c].base_refs[b].n; i++) {
			const struct ref *r = &P->classes.v[c].base_refs[b].r[i];

			if (r->kind == R_CLASS) {
				a = find_member(P, r->idx, attr, budget);
				if (a)
					return a;
			}
		}
	return NULL;
}

/* An alias "obj:<c>.<attr>" of class c or of its bases (NULL if none). */
static struct alias *member_alias(struct py *P, int c, const char *attr)
{
	int budget = CLASS_VISITS;

	return find_member(P, c, attr, &budget);
}

/* The class whose method (or nested function of one) fn is, or -1. */
static int enclosing_class(struct py *P, int fn)
{
	for (; fn >= 0; fn = P->fns.v[fn].parent)
		if (P->fns.v[fn].cls >= 0)
			return P->fns.v[fn].cls;
	return -1;
}

static void resolve(struct py *P, uint32_t node, int fn, struct refs *out);

static void lookup_name(struct py *P, const char *name, size_t len, int fn,
			struct refs *out)
{
	struct alias *a;
	void **slot;
	int g, i;
	char *s;

	for (g = fn; g >= 0; g = P->fns.v[g].parent) {
		const char *self = P->fns.v[g].self_name;

		if (self && strlen(self) == len && !memcmp(self, name, len)) {
			int c = enclosing_class(P, g);

			add_ref(out, mkref(P->fns.v[g].self_is_class ? R_CLASS : R_OBJ, c, NULL));
			return;
		}
	}
	s = kj__arena_strndup(&P->cx->work, name, len);
	if (!strcmp(s, "__builtins__")) {
		add_ref(out, mkref(R_MOD, 0, "builtins"));
		return;
	}
	a = alias_get(P, s);
	if (a)
		for (i = 0; i < a->refs.n; i++)
			add_ref(out, a->refs.r[i]);
	/* chains stop when the references are full: a file that defines one
	 * name a thousand times must not cost a thousand steps per use */
	slot = kj__vmap_get(&P->fn_names, name, len);
	for (g = slot ? (int)(intptr_t)*slot - 1 : -1; g >= 0 && out->n < MAXREF;
	     g = P->fns.v[g].next_same_name)
		add_ref(out, mkref(R_FUNC, g, NULL));
	slot = kj__vmap_get(&P->cls_names, name, len);
	for (g = slot ? (int)(intptr_t)*slot - 1 : -1; g >= 0 && out->n < MAXREF;
	     g = P->classes.v[g].next_same_name)
		add_ref(out, mkref(R_CLASS, g, NULL));
	if (out->n == 0)
		add_ref(out, mkref(R_NAME, 0, s));
}

static const char *join_path(struct py *P, const char *a, const char *b)
{
	return kj__arena_printf(&P->cx->work, "%s.%s", a, b);
}

static void attr_of(struct py *P, const struct ref *base, const char *attr,
		    struct refs *out)
{
	struct alias *a;
	struct ref v = mkref(R_VALUE, 0, attr);
	int m, b, i;

	switch (base->kind) {
	case R_MOD: {
		const char *path = join_path(P, base->s, attr);

		add_ref(out, mkref(R_MOD, 0, path));
		a = alias_get(P, path); /* torch.foo = something */
		if (a)
			for (i = 0; i < a->refs.n; i++)
				add_ref(out, a->refs.r[i]);
		return;
	}
	case R_CLASS:
	case R_OBJ:
		m = method_lookup(P, base->idx, attr);
		if (m < 0 && base->kind == R_CLASS && !strcmp(attr, "apply"))
			m = method_lookup(P, base->idx, "forward"); /* autograd.Function */
		if (m >= 0) {
			add_ref(out, mkref(R_FUNC, m, NULL));
			return;
		}
		a = member_alias(P, base->idx, attr);
		if (a) {
			int named_only = 1;

			for (i = 0; i < a->refs.n; i++) {
				add_ref(out, a->refs.r[i]);
				named_only &= a->refs.r[i].kind == R_NAME;
			}
			/* self.act = act (a parameter): still nothing of this file */
			if (!named_only || base->kind != R_OBJ)
				return;
		}
		v.selfattr = base->kind == R_OBJ;
		add_ref(out, v);
		return;
	case R_SUPER:
		if (base->idx < 0)
			break;
		for (b = 0; b < P->classes.v[base->idx].n_bases; b++)
			for (i = 0; i < P->classes.v[base->idx].base_refs[b].n; i++) {
				const struct ref *r = &P->classes.v[base->idx].base_refs[b].r[i];

				if (r->kind == R_CLASS) {
					m = method_lookup(P, r->idx, attr);
					if (m >= 0)
						add_ref(out, mkref(R_FUNC, m, NULL));
				} else if (r->kind == R_MOD || r->kind == R_NAME) {
					add_ref(out, mkref(R_MOD, 0, join_path(P, r->s, attr)));
				}
			}
		if (out->n)
			return;
		break;
	case R_EXT:
		add_ref(out, mkref(R_EXTFN, base->idx, attr));
		return;
	default:
		break;
	}
	add_ref(out, v);
}

static int ext_for_call(struct py *P, uint32_t call, int fn)
{
	size_t i;
	struct ext *e;

	for (i = 0; i < P->exts.n; i++)
		if (P->exts.v[i].call == call)
			return (int)i;
	e = KJ__PUSH(&P->cx->work, P->exts);
	e->call = call;
	e->fn = fn;
	e->m = NULL;
	return (int)(P->exts.n - 1);
}

static void call_result(struct py *P, const struct ref *callee, uint32_t call,
			int fn, struct refs *out)
{
	const char *s = callee->s;
	uint32_t a0;

	switch (callee->kind) {
	case R_CLASS:
		add_ref(out, mkref(R_OBJ, callee->idx, NULL));
		return;
	case R_NAME:
	case R_MOD:
		if (!strcmp(s, "super")) {
			add_ref(out, mkref(R_SUPER, enclosing_class(P, fn), NULL));
			return;
		}
		if (!strcmp(s, "getattr") || !strcmp(s, "builtins.getattr")) {
			const char *name = const_string(P, pos_arg(P, call, 1));
			struct refs base = { 0 };
			int i;

			if (name && pos_arg(P, call, 0) != KJ__VNONE) {
				resolve(P, pos_arg(P, call, 0), fn, &base);
				for (i = 0; i < base.n; i++)
					attr_of(P, &base.r[i], name, out);
				return;
			}
			break;
		}
		if (!strcmp(s, "__import__") || !strcmp(s, "builtins.__import__") ||
		    !strcmp(s, "importlib.import_module")) {
			const char *name = const_string(P, pos_arg(P, call, 0));

			if (name && *name) {
				/* __import__("a.b") binds a; import_module("a.b") is a.b */
				if (s[0] == '_' || s[0] == 'b') {
					const char *dot = strchr(name, '.');

					if (dot)
						name = kj__arena_strndup(&P->cx->work, name,
									 (size_t)(dot - name));
				}
				add_ref(out, mkref(R_MOD, 0, name));
				return;
			}
			break;
		}
		if (callee->kind == R_MOD && kj__vlist_has(&P->R->extension_loaders, s)) {
			add_ref(out, mkref(R_EXT, ext_for_call(P, call, fn), s));
			return;
		}
		if (!strcmp(s, "torch.nn.ModuleList") || !strcmp(s, "torch.nn.Sequential") ||
		    !strcmp(s, "list") || !strcmp(s, "tuple")) {
			/* nn.ModuleList([Block(), ...]) holds Blocks */
			int i;

			for (i = 0; i < 8 && out->n < MAXREF; i++) {
				a0 = pos_arg(P, call, i);
				if (a0 == KJ__VNONE)
					break;
				resolve(P, a0, fn, out);
			}
			if (out->n)
				return;
			break;
		}
		if (!strcmp(s, "functools.partial") || kj__vlist_has(&P->R->triton_decorators, s)) {
			struct refs inner = { 0 };
			int i;

			a0 = pos_arg(P, call, 0);
			if (a0 == KJ__VNONE)
				break;
			resolve(P, a0, fn, &inner);
			for (i = 0; i < inner.n; i++) {
				if (inner.r[i].kind == R_FUNC && kj__vlist_has(&P->R->triton_decorators, s))
					P->fns.v[inner.r[i].idx].is_kernel = 1;
				if (inner.r[i].kind == R_FUNC)
					add_ref(out, inner.r[i]);
			}
			if (out->n)
				return;
			break;
		}
		break;
	default:
		break;
	}
	add_ref(out, mkref(R_VALUE, 0, NULL));
}

static void resolve(struct py *P, uint32_t node, int fn, struct refs *out)
{
	struct refs base = { 0 };
	uint32_t c;
	int i;

	node = unparen(P, node);
	if (node == KJ__VNONE) {
		add_ref(out, mkref(R_VALUE, 0, NULL));
		return;
	}
	switch (N(node).kind) {
	case KJ__K_IDENT: {
		size_t len;
		const char *s = kj__vtext(T, node, &len);

		lookup_name(P, s, len, fn, out);
		return;
	}
	case KJ__K_PY_ATTRIBUTE: {
		uint32_t obj = kj__vfield_child(T, node, KJ__F_OBJECT);
		uint32_t at = kj__vfield_child(T, node, KJ__F_ATTRIBUTE);
		const char *name;

		if (obj == KJ__VNONE || at == KJ__VNONE)
			break;
		name = text_dup(P, at);
		resolve(P, obj, fn, &base);
		for (i = 0; i < base.n; i++)
			attr_of(P, &base.r[i], name, out);
		return;
	}
	case KJ__K_CALL:
		c = kj__vfield_child(T, node, KJ__F_FUNCTION);
		if (c == KJ__VNONE)
			break;
		resolve(P, c, fn, &base);
		for (i = 0; i < base.n; i++)
			call_result(P, &base.r[i], node, fn, out);
		return;
	case KJ__K_PY_CONDEXPR:
		/* a if cond else b: either */
		c = first_named(P, node);
		if (c != KJ__VNONE)
			resolve(P, c, fn, out);
		c = c != KJ__VNONE ? next_named(P, c) : KJ__VNONE;
		c = c != KJ__VNONE ? next_named(P, c) : KJ__VNONE;
		if (c != KJ__VNONE)
			resolve(P, c, fn, out);
		return;
	case KJ__K_PY_BOOLOP:
		resolve(P, kj__vfield_child(T, node, KJ__F_LEFT), fn, out);
		resolve(P, kj__vfield_child(T, node, KJ__F_RIGHT), fn, out);
		return;
	case KJ__K_LAMBDA:
		if (P->node_fn[node] >= 0) {
			add_ref(out, mkref(R_FUNC, P->node_fn[node], NULL));
			return;
		}
		break;
	case KJ__K_PY_LIST:
	case KJ__K_PY_TUPLE:
	case KJ__K_PY_EXPR_LIST:
		/* a container stands for what it holds: ops = [torch.relu];
		 * ops[0](x) calls torch.relu */
		for (c = first_named(P, node), i = 0; c != KJ__VNONE && i < 16 && out->n < MAXREF;
		     c = next_named(P, c), i++)
			resolve(P, c, fn, out);
		if (out->n)
			return;
		break;
	case KJ__K_PY_GENERATOR: /* [Block() for _ in range(n)]: a Block */
		c = kj__vfield_child(T, node, KJ__F_BODY);
		if (c != KJ__VNONE) {
			resolve(P, c, fn, out);
			return;
		}
		break;
	case KJ__K_SUBSCRIPT: /* an element of a container of the file's things */
		resolve(P, kj__vfield_child(T, node, KJ__F_VALUE), fn, &base);
		for (i = 0; i < base.n; i++)
			if (base.r[i].kind != R_NAME && base.r[i].kind != R_VALUE)
				add_ref(out, base.r[i]);
		if (out->n)
			return;
		break;
	default:
		break;
	}
	add_ref(out, mkref(R_VALUE, 0, NULL));
}

/* The alias key an assignment target binds, or NULL. */
static const char *target_key(struct py *P, uint32_t lhs, int fn)
{
	struct refs base = { 0 };
	uint32_t obj, at;
	const struct func *f = &P->fns.v[fn];

	lhs = unparen(P, lhs);
	if (lhs == KJ__VNONE)
		return NULL;
	if (N(lhs).kind == KJ__K_IDENT) {
		if (f->kind == FN_CLASSBODY)
			return kj__arena_printf(&P->cx->work, "obj:%d.%.*s", f->cls,
						(int)(N(lhs).end - N(lhs).start),
						T->src + N(lhs).start);
		return text_dup(P, lhs);
	}
	if (N(lhs).kind != KJ__K_PY_ATTRIBUTE)
		return NULL;
	obj = kj__vfield_child(T, lhs, KJ__F_OBJECT);
	at = kj__vfield_child(T, lhs, KJ__F_ATTRIBUTE);
	if (obj == KJ__VNONE || at == KJ__VNONE)
		return NULL;
	resolve(P, obj, fn, &base);
	if (base.n == 0)
		return NULL;
	switch (base.r[0].kind) {
	case R_OBJ:
	case R_CLASS:
		return kj__arena_printf(&P->cx->work, "obj:%d.%.*s", base.r[0].idx,
					(int)(N(at).end - N(at).start), T->src + N(at).start);
	case R_MOD:
		return kj__arena_printf(&P->cx->work, "%s.%.*s", base.r[0].s,
					(int)(N(at).end - N(at).start), T->src + N(at).start);
	default:
		return NULL;
	}
}

/* --- collect -------------------------------------------------------------- */

static int new_func(struct py *P, enum fkind kind, uint32_t node, uint32_t body,
		    int parent, int cls, const char *name)
{
	struct func *f = KJ__PUSH(&P->cx->work, P->fns);
	int idx = (int)(P->fns.n - 1);

	f->kind = kind;
	f->node = node;
	f->body = body;
	f->parent = parent;
	f->cls = cls;
	f->name = name;
	f->next_same_name = -1;
	return idx;
}

/* `import a.b.c` binds a; `import a.b as x` binds x to a.b. */
static const char *dotted(struct py *P, uint32_t node)
{
	char *buf;
	size_t n = 0, cap = N(node).end - N(node).start + 1;
	uint32_t c;

	if (N(node).kind == KJ__K_IDENT)
		return text_dup(P, node);
	buf = kj__arena_alloc(&P->cx->work, cap + 1);
	KJ__EACH_CHILD(T, node, c) {
		size_t len;
		const char *s;

		if (N(c).kind != KJ__K_IDENT)
			continue;
		s = kj__vtext(T, c, &len);
		if (n && n < cap)
			buf[n++] = '.';
		if (n + len > cap)
			break;
		memcpy(buf + n, s, len);
		n += len;
	}
	buf[n] = '\0';
	return buf;
}

static void collect_import(struct py *P, uint32_t node)
{
	uint32_t c;

	KJ__EACH_CHILD(T, node, c) {
		if (N(c).field != KJ__F_NAME)
			continue;
		if (N(c).kind == KJ__K_PY_DOTTED_NAME) {
			const char *path = dotted(P, c);
			const char *dot = strchr(path, '.');
			const char *top = dot ? kj__arena_strndup(&P->cx->work, path,
								  (size_t)(dot - path))
					      : path;

			alias_mod(P, top, top);
		} else if (N(c).kind == KJ__K_PY_ALIASED_IMPORT) {
			uint32_t name = kj__vfield_child(T, c, KJ__F_NAME);
			uint32_t as = kj__vfield_child(T, c, KJ__F_ALIAS);

			if (name != KJ__VNONE && as != KJ__VNONE)
				alias_mod(P, text_dup(P, as), dotted(P, name));
		}
	}
}

static void collect_import_from(struct py *P, uint32_t node, int fn)
{
	uint32_t mod = kj__vfield_child(T, node, KJ__F_MODULE_NAME), c;
	const char *base;

	if (mod == KJ__VNONE)
		return;
	base = N(mod).kind == KJ__K_PY_DOTTED_NAME ? dotted(P, mod) : text_dup(P, mod);
	KJ__EACH_CHILD(T, node, c) {
		if (N(c).kind == KJ__K_PY_WILDCARD) {
			struct site *s = KJ__PUSH(&P->cx->work, P->stars);

			s->node = node;
			s->fn = fn;
			continue;
		}
		if (N(c).field != KJ__F_NAME)
			continue;
		if (N(c).kind == KJ__K_PY_DOTTED_NAME) {
			const char *name = dotted(P, c);

			alias_mod(P, name, join_path(P, base, name));
		} else if (N(c).kind == KJ__K_PY_ALIASED_IMPORT) {
			uint32_t name = kj__vfield_child(T, c, KJ__F_NAME);
			uint32_t as = kj__vfield_child(T, c, KJ__F_ALIAS);

			if (name != KJ__VNONE && as != KJ__VNONE)
				alias_mod(P, text_dup(P, as), join_path(P, base, dotted(P, name)));
		}
	}
}

static void add_assign(struct py *P, uint32_t lhs, uint32_t rhs, int fn)
{
	struct assign *a;

	lhs = unparen(P, lhs);
	rhs = unparen(P, rhs);
	if (lhs == KJ__VNONE || rhs == KJ__VNONE)
		return;
	/* a, b = x, y: pairwise */
	if ((N(lhs).kind == KJ__K_PY_PATTERN_LIST || N(lhs).kind == KJ__K_PY_TUPLE ||
	     N(lhs).kind == KJ__K_PY_LIST) &&
	    (N(rhs).kind == KJ__K_PY_EXPR_LIST || N(rhs).kind == KJ__K_PY_TUPLE ||
	     N(rhs).kind == KJ__K_PY_LIST)) {
		uint32_t l = first_named(P, lhs), r = first_named(P, rhs);

		for (; l != KJ__VNONE && r != KJ__VNONE;
		     l = next_named(P, l), r = next_named(P, r))
			add_assign(P, l, r, fn);
		return;
	}
	if (N(rhs).kind == KJ__K_PY_ASSIGN) { /* a = b = value */
		uint32_t v = kj__vfield_child(T, rhs, KJ__F_RIGHT);

		while (v != KJ__VNONE && N(v).kind == KJ__K_PY_ASSIGN)
			v = kj__vfield_child(T, v, KJ__F_RIGHT);
		rhs = v;
		if (rhs == KJ__VNONE)
			return;
	}
	a = KJ__PUSH(&P->cx->work, P->assigns);
	a->lhs = lhs;
	a->rhs = rhs;
	a->fn = fn;
	if (N(lhs).kind == KJ__K_IDENT) {
		size_t len;
		const char *s = kj__vtext(T, lhs, &len);
		void **slot = kj__vmap_put(&P->cx->work, &P->strvars, s, len);

		*slot = (void *)(uintptr_t)(rhs + 1);
	}
}

/* Decorators of a def: @staticmethod and @classmethod matter here. */
static int has_decorator(struct py *P, uint32_t def, const char *name)
{
	uint32_t parent = N(def).parent, c;

	if (parent == KJ__VNONE || N(parent).kind != KJ__K_PY_DECORATED)
		return 0;
	KJ__EACH_CHILD(T, parent, c) {
		uint32_t e;

		if (N(c).kind != KJ__K_PY_DECORATOR)
			continue;
		e = first_named(P, c);
		if (e != KJ__VNONE && N(e).kind == KJ__K_IDENT && kj__vtext_is(T, e, name))
			return 1;
	}
	return 0;
}

static void collect(struct py *P, uint32_t node, int fn);

static void collect_params(struct py *P, uint32_t params, int fn, int method)
{
	uint32_t c;
	int first = 1;

	if (params == KJ__VNONE)
		return;
	for (c = first_named(P, params); c != KJ__VNONE; c = next_named(P, c)) {
		uint32_t name = KJ__VNONE, value;

		switch (N(c).kind) {
		case KJ__K_IDENT:
			name = c;
			break;
		case KJ__K_PY_TYPED_PARAM:
			name = first_named(P, c);
			break;
		case KJ__K_PY_DEFAULT_PARAM:
		case KJ__K_PY_TYPED_DEFAULT_PARAM:
			name = kj__vfield_child(T, c, KJ__F_NAME);
			value = kj__vfield_child(T, c, KJ__F_VALUE);
			/* def f(x, act=torch.relu): act is an alias of its default */
			if (name != KJ__VNONE && value != KJ__VNONE) {
				add_assign(P, name, value, fn);
				collect(P, value, P->fns.v[fn].parent >= 0 ? P->fns.v[fn].parent : 0);
			}
			break;
		default:
			break;
		}
		if (first && method && name != KJ__VNONE && N(name).kind == KJ__K_IDENT)
			P->fns.v[fn].self_name = text_dup(P, name);
		first = 0;
	}
}

static void chain_name(struct py *P, struct kj__vmap *m, const char *name,
		       int idx, int *next)
{
	void **slot = kj__vmap_put(&P->cx->work, m, name, strlen(name));

	*next = *slot ? (int)(intptr_t)*slot - 1 : -1;
	*slot = (void *)(intptr_t)(idx + 1);
}

static void collect_def(struct py *P, uint32_t node, int fn)
{
	uint32_t name = kj__vfield_child(T, node, KJ__F_NAME);
	uint32_t body = kj__vfield_child(T, node, KJ__F_BODY);
	const struct func *pf = &P->fns.v[fn];
	int cls = pf->kind == FN_CLASSBODY ? pf->cls : -1, f;
	const char *nm = name != KJ__VNONE ? text_dup(P, name) : "?";

	f = new_func(P, FN_DEF, node, body, fn, cls, nm);
	P->node_fn[node] = f;
	if (cls >= 0) {
		char key[320];
		void **slot;

		snprintf(key, sizeof(key), "%d.%s", cls, nm);
		slot = kj__vmap_put(&P->cx->work, &P->methods, key, strlen(key));
		*slot = (void *)(intptr_t)(f + 1); /* a later def wins, as in Python */
		if (has_decorator(P, node, "classmethod"))
			P->fns.v[f].self_is_class = 1;
	} else {
		chain_name(P, &P->fn_names, nm, f, &P->fns.v[f].next_same_name);
	}
	collect_params(P, kj__vfield_child(T, node, KJ__F_PARAMETERS), f,
		       cls >= 0 && !has_decorator(P, node, "staticmethod"));
	if (body != KJ__VNONE)
		collect(P, body, f);
}

static void collect_class(struct py *P, uint32_t node, int fn)
{
	uint32_t name = kj__vfield_child(T, node, KJ__F_NAME);
	uint32_t sup = kj__vfield_child(T, node, KJ__F_SUPERCLASSES);
	uint32_t body = kj__vfield_child(T, node, KJ__F_BODY), c;
	struct klass *k = KJ__PUSH(&P->cx->work, P->classes);
	int ci = (int)(P->classes.n - 1), bf;

	k->name = name != KJ__VNONE ? text_dup(P, name) : "?";
	k->node = node;
	k->line = row_line(P, node);
	P->node_cls[node] = ci;
	chain_name(P, &P->cls_names, k->name, ci, &k->next_same_name);
	if (sup != KJ__VNONE)
		for (c = first_named(P, sup); c != KJ__VNONE; c = next_named(P, c)) {
			if (N(c).kind == KJ__K_KWARG) /* metaclass=... */
				continue;
			*KJ__PUSH(&P->cx->work, P->classes.v[ci].bases) = c;
			collect(P, c, fn);
		}
	bf = new_func(P, FN_CLASSBODY, node, body, fn, ci, P->classes.v[ci].name);
	P->classes.v[ci].body_fn = bf;
	if (body != KJ__VNONE)
		collect(P, body, bf);
}

static void collect(struct py *P, uint32_t node, int fn)
{
	struct site *s;
	uint32_t c;
	int f;

	switch (N(node).kind) {
	case KJ__K_PY_FUNCDEF:
		collect_def(P, node, fn);
		return;
	case KJ__K_PY_CLASSDEF:
		collect_class(P, node, fn);
		return;
	case KJ__K_LAMBDA:
		f = new_func(P, FN_LAMBDA, node, kj__vfield_child(T, node, KJ__F_BODY),
			     fn, -1, "<lambda>");
		P->node_fn[node] = f;
		collect_params(P, kj__vfield_child(T, node, KJ__F_PARAMETERS), f, 0);
		if (P->fns.v[f].body != KJ__VNONE)
			collect(P, P->fns.v[f].body, f);
		return;
	case KJ__K_PY_IMPORT:
		collect_import(P, node);
		return;
	case KJ__K_PY_IMPORT_FROM:
		collect_import_from(P, node, fn);
		return;
	case KJ__K_PY_ASSIGN:
		if (kj__vfield_child(T, node, KJ__F_RIGHT) != KJ__VNONE)
			add_assign(P, kj__vfield_child(T, node, KJ__F_LEFT),
				   kj__vfield_child(T, node, KJ__F_RIGHT), fn);
		break;
	case KJ__K_CALL:
		s = KJ__PUSH(&P->cx->work, P->calls);
		s->node = node;
		s->fn = fn;
		break;
	case KJ__K_PY_ATTRIBUTE:
		s = KJ__PUSH(&P->cx->work, P->attrs);
		s->node = node;
		s->fn = fn;
		break;
	case KJ__K_FOR: /* for b in self.blocks: b is what the container holds */
		if (kj__vfield_child(T, node, KJ__F_LEFT) != KJ__VNONE &&
		    kj__vfield_child(T, node, KJ__F_RIGHT) != KJ__VNONE)
			add_assign(P, kj__vfield_child(T, node, KJ__F_LEFT),
				   kj__vfield_child(T, node, KJ__F_RIGHT), fn);
		break;
	case KJ__K_PY_EXEC_STMT:
		s = KJ__PUSH(&P->cx->work, P->execs);
		s->node = node;
		s->fn = fn;
		break;
	default:
		break;
	}
	KJ__EACH_CHILD(T, node, c)
		collect(P, c, fn);
}

/* setattr(obj, "name", value) binds like obj.name = value. */
static void collect_setattrs(struct py *P)
{
	size_t i;

	for (i = 0; i < P->calls.n; i++) {
		uint32_t call = P->calls.v[i].node;
		uint32_t f = kj__vfield_child(T, call, KJ__F_FUNCTION);
		struct assign *a;

		if (f == KJ__VNONE || N(f).kind != KJ__K_IDENT || !kj__vtext_is(T, f, "setattr"))
			continue;
		if (!const_string(P, pos_arg(P, call, 1)) || pos_arg(P, call, 2) == KJ__VNONE)
			continue;
		a = KJ__PUSH(&P->cx->work, P->assigns);
		a->lhs = call;
		a->rhs = pos_arg(P, call, 2);
		a->fn = P->calls.v[i].fn;
		a->is_setattr = 1;
	}
}

static const char *assign_key(struct py *P, const struct assign *a)
{
	if (a->is_setattr) {
		struct refs base = { 0 };
		const char *name = const_string(P, pos_arg(P, a->lhs, 1));

		resolve(P, pos_arg(P, a->lhs, 0), a->fn, &base);
		if (!name || base.n == 0)
			return NULL;
		if (base.r[0].kind == R_OBJ || base.r[0].kind == R_CLASS)
			return kj__arena_printf(&P->cx->work, "obj:%d.%s", base.r[0].idx, name);
		if (base.r[0].kind == R_MOD)
			return join_path(P, base.r[0].s, name);
		return NULL;
	}
	return target_key(P, a->lhs, a->fn);
}

/* Aliases to a fixed point; class bases in between, since methods and
 * members are looked up through them. */
static void resolve_aliases(struct py *P)
{
	int round, changed = 1;
	size_t i;

	for (round = 0; round < 6 && changed; round++) {
		changed = 0;
		for (i = 0; i < P->classes.n; i++) {
			struct klass *k = &P->classes.v[i];
			size_t b;

			k->n_bases = 0;
			for (b = 0; b < k->bases.n && b < 8; b++) {
				memset(&k->base_refs[b], 0, sizeof(k->base_refs[b]));
				resolve(P, k->bases.v[b], 0, &k->base_refs[b]);
				k->n_bases++;
			}
		}
		for (i = 0; i < P->assigns.n; i++) {
			struct refs r = { 0 };
			const char *key = assign_key(P, &P->assigns.v[i]);

			if (!key)
				continue;
			resolve(P, P->assigns.v[i].rhs, P->assigns.v[i].fn, &r);
			changed |= alias_add(P, key, &r);
		}
	}
	for (i = 0; i < P->assigns.n; i++) {
		struct assign *a = &P->assigns.v[i];

		if (!a->is_setattr && N(a->lhs).kind == KJ__K_PY_ATTRIBUTE)
			a->attr_key = target_key(P, a->lhs, a->fn);
	}
}

/* --- kernels ----------------------------------------------------------- */

static int is_tl(struct py *P, const struct ref *r)
{
	return r->kind == R_MOD && kj__vlist_has(&P->R->triton_language, r->s);
}

static void mark_kernels(struct py *P)
{
	size_t f;

	for (f = 0; f < P->fns.n; f++) {
		uint32_t node = P->fns.v[f].node, parent, c;

		if (P->fns.v[f].kind != FN_DEF)
			continue;
		parent = N(node).parent;
		if (parent == KJ__VNONE || N(parent).kind != KJ__K_PY_DECORATED)
			continue;
		KJ__EACH_CHILD(T, parent, c) {
			struct refs r = { 0 };
			uint32_t e;
			int i;

			if (N(c).kind != KJ__K_PY_DECORATOR)
				continue;
			e = first_named(P, c);
			if (e != KJ__VNONE && N(e).kind == KJ__K_CALL) /* @triton.jit(...) */
				e = kj__vfield_child(T, e, KJ__F_FUNCTION);
			if (e == KJ__VNONE)
				continue;
			resolve(P, e, P->fns.v[f].parent, &r);
			for (i = 0; i < r.n; i++)
				if ((r.r[i].kind == R_MOD || r.r[i].kind == R_NAME) &&
				    kj__vlist_has(&P->R->triton_decorators, r.r[i].s))
					P->fns.v[f].is_kernel = 1;
		}
	}
}

/* What one kernel binds: name -> the values assigned to it, and what is
 * known of each name so far (memoised, so each name is looked at once). */
struct kbinds {
	int k;
	struct kj__vmap values; /* name -> struct bindlist */
	struct kj__vmap memo;   /* name -> 1 looking, 2 moved, 3 computed */
};

struct bindlist {
	KJ__VEC(uint32_t) rhs;
};

/* Every kernel's bindings, in one pass over the assignments. */
static void kernel_binds(struct py *P)
{
	size_t i;

	for (i = 0; i < P->assigns.n; i++) {
		const struct assign *a = &P->assigns.v[i];
		struct bindlist **bl;
		struct kbinds *B;
		size_t len;
		const char *s;
		int k;

		if (a->is_setattr || N(a->lhs).kind != KJ__K_IDENT)
			continue;
		for (k = a->fn; k >= 0 && !P->fns.v[k].is_kernel; k = P->fns.v[k].parent)
			;
		if (k < 0)
			continue;
		B = P->fns.v[k].binds;
		if (!B) {
			B = P->fns.v[k].binds = kj__arena_alloc(&P->cx->work, sizeof(*B));
			B->k = k;
		}
		s = kj__vtext(T, a->lhs, &len);
		bl = (struct bindlist **)kj__vmap_put(&P->cx->work, &B->values, s, len);
		if (!*bl)
			*bl = kj__arena_alloc(&P->cx->work, sizeof(**bl));
		*KJ__PUSH(&P->cx->work, (*bl)->rhs) = a->rhs;
	}
}

/* Is the value stored by a kernel only moved data (a load, a fill, a
 * constant, or a name bound only to such)? */
static int moved_value(struct py *P, struct kbinds *B, uint32_t v)
{
	struct refs r = { 0 };
	struct bindlist **bl;
	void **memo;
	uint32_t f;
	size_t i, len;
	const char *s;
	int moved = 1;

	v = unparen(P, v);
	if (v == KJ__VNONE)
		return 0;
	switch (N(v).kind) {
	case KJ__K_INTEGER:
	case KJ__K_FLOAT:
	case KJ__K_TRUE:
	case KJ__K_FALSE:
	case KJ__K_NONE:
		return 1;
	case KJ__K_PY_UNARY: { /* -1.0 is a constant; -x computes */
		uint32_t a = unparen(P, kj__vfield_child(T, v, KJ__F_ARGUMENT));

		return a != KJ__VNONE &&
		       (N(a).kind == KJ__K_INTEGER || N(a).kind == KJ__K_FLOAT);
	}
	case KJ__K_CALL:
		f = kj__vfield_child(T, v, KJ__F_FUNCTION);
		resolve(P, f, B->k, &r);
		return r.n == 1 && r.r[0].kind == R_MOD &&
		       kj__vlist_has(&P->R->ph_moves, r.r[0].s);
	case KJ__K_IDENT:
		s = kj__vtext(T, v, &len);
		memo = kj__vmap_put(&P->cx->work, &B->memo, s, len);
		if (*memo) /* known, or being looked at: a cycle adds nothing */
			return (intptr_t)*memo != 3;
		*memo = (void *)1;
		bl = (struct bindlist **)kj__vmap_get(&B->values, s, len);
		for (i = 0; bl && moved && i < (*bl)->rhs.n; i++)
			moved = moved_value(P, B, (*bl)->rhs.v[i]);
		memo = kj__vmap_get(&B->memo, s, len);
		*memo = (void *)(intptr_t)(moved ? 2 : 3);
		return moved; /* a parameter, or bound only to moved values */
	default:
		return 0;
	}
}

/* Type 1 and type 4 facts of one kernel: does it use triton.language, does
 * it compute anything, or does it only load, store and fill? */
static void examine_kernel(struct py *P, int k)
{
	struct func *f = &P->fns.v[k];
	struct kbinds none = { k, { 0 }, { 0 } }, *B = f->binds ? f->binds : &none;
	uint32_t i, end;
	int computes = 0, stores_moved = 1;

	if (f->body == KJ__VNONE)
		return;
	end = f->body;
	/* Nodes of the body are contiguous in the flat tree (preorder), from
	 * the body to the last node before the body's next sibling. */
	for (i = f->body; i < T->count && N(i).start < N(end).end; i++) {
		struct refs r = { 0 };
		uint32_t parent = N(i).parent;
		int j;

		if (N(i).start < N(end).start)
			continue;
		if (N(i).kind != KJ__K_IDENT && N(i).kind != KJ__K_PY_ATTRIBUTE)
			continue;
		/* only whole chains: tl.load, not tl inside it */
		if (parent != KJ__VNONE && N(parent).kind == KJ__K_PY_ATTRIBUTE &&
		    N(i).field == KJ__F_OBJECT)
			continue;
		if (parent != KJ__VNONE && N(parent).kind == KJ__K_PY_ATTRIBUTE &&
		    N(i).field == KJ__F_ATTRIBUTE)
			continue;
		resolve(P, i, k, &r);
		for (j = 0; j < r.n; j++) {
			if (is_tl(P, &r.r[j])) {
				f->tl_use = 1;
				if (!kj__vlist_has(&P->R->ph_non_compute, r.r[j].s))
					computes = 1;
				if (kj__vlist_has(&P->R->ph_stores, r.r[j].s) &&
				    parent != KJ__VNONE && N(parent).kind == KJ__K_CALL &&
				    N(i).field == KJ__F_FUNCTION) {
					uint32_t val = arg_or_kw(P, parent, 1, "value");

					if (stores_moved && !moved_value(P, B, val))
						stores_moved = 0;
				}
			} else if (r.r[j].kind == R_FUNC && r.r[j].idx != k &&
				   P->fns.v[r.r[j].idx].is_kernel) {
				computes = 1; /* a helper @jit function may compute */
			}
		}
	}
	f->computes = computes || !stores_moved;
	f->placeholder = !f->computes;
}

/* --- walking live code ---------------------------------------------------- */

struct walk {
	int fn;
	int loops;
	int in_except;
	int in_launch;
	struct kj__vmap tensors; /* local names known to hold tensors */
};

/* 1 true, 0 false, -1 unknown. */
static int truth(const struct py *P, uint32_t c)
{
	size_t len;
	const char *s;
	int t;

	c = unparen(P, c);
	if (c == KJ__VNONE)
		return -1;
	switch (N(c).kind) {
	case KJ__K_TRUE:
		return 1;
	case KJ__K_FALSE:
	case KJ__K_NONE:
		return 0;
	case KJ__K_INTEGER:
	case KJ__K_FLOAT:
		s = kj__vtext(T, c, &len);
		for (; len; s++, len--)
			if (*s != '0' && *s != '.' && *s != '_' && *s != 'x' && *s != 'X' &&
			    *s != 'e' && *s != 'E' && *s != '+' && *s != '-' && *s != 'o' &&
			    *s != 'b' && *s != 'j' && *s != 'J')
				return 1;
		return 0;
	case KJ__K_STRING:
		/* "" is false; any content or interpolation makes it true */
		return kj__vkind_child(T, c, KJ__K_STRING_CONTENT) != KJ__VNONE ||
		       kj__vkind_child(T, c, KJ__K_PY_INTERPOLATION) != KJ__VNONE;
	case KJ__K_PY_NOT:
		t = truth(P, kj__vfield_child(T, c, KJ__F_ARGUMENT));
		return t < 0 ? -1 : !t;
	default:
		return -1;
	}
}

static void pend(struct py *P, int fn, enum kj_vcheck check, uint32_t node,
		 const char *resolved, const char *reason)
{
	struct pending *p = KJ__PUSH(&P->cx->work, P->fns.v[fn].pending);

	p->check = check;
	p->node = node;
	p->resolved = resolved;
	p->reason = reason;
}

static const char *fallback_note(const struct walk *W)
{
	return W->in_except ? " (in an except handler: a fallback to PyTorch when the kernel fails)"
			    : "";
}

static void edge(struct py *P, int from, int to)
{
	*KJ__PUSH(&P->cx->work, P->fns.v[from].edges) = to;
}

/* The name a call's value is assigned to: n = x.sum().item() gives n. */
static const char *assigned_name(struct py *P, uint32_t node)
{
	uint32_t p = N(node).parent, prev = node;

	while (p != KJ__VNONE && (N(p).kind == KJ__K_CALL || N(p).kind == KJ__K_ARGS ||
				  N(p).kind == KJ__K_PAREN || N(p).kind == KJ__K_BINOP ||
				  N(p).kind == KJ__K_PY_ATTRIBUTE)) {
		prev = p;
		p = N(p).parent;
	}
	if (p != KJ__VNONE && N(p).kind == KJ__K_PY_ASSIGN &&
	    kj__vfield_child(T, p, KJ__F_RIGHT) == prev) {
		uint32_t l = kj__vfield_child(T, p, KJ__F_LEFT);

		if (l != KJ__VNONE && N(l).kind == KJ__K_IDENT)
			return text_dup(P, l);
	}
	return NULL;
}

static void pend_sync(struct py *P, const struct walk *W, uint32_t call,
		      const char *resolved, const char *what)
{
	struct pending *p;

	pend(P, W->fn, KJ_VCHECK_HOST_SYNC, call, resolved,
	     kj__arena_printf(&P->cx->work, "%s copies a device value to the host and "
				    "waits for the GPU", what));
	p = &P->fns.v[W->fn].pending.v[P->fns.v[W->fn].pending.n - 1];
	p->sync = 1;
	p->sync_name = assigned_name(P, call);
	p->in_launch = W->in_launch > 0;
}

static int is_reference_class(struct py *P, const char *s)
{
	const char *p = s, *dot;

	for (;;) {
		dot = strchr(p, '.');
		if (kj__vlist_match(&P->R->reference_classes, p, dot ? (size_t)(dot - p) : strlen(p)))
			return 1;
		if (!dot)
			return 0;
		p = dot + 1;
	}
}

static void check_module_call(struct py *P, const struct walk *W, uint32_t call,
			      const char *s)
{
	size_t n = strlen(s);

	if (kj__vlist_match(&P->R->sync_calls, s, n))
		pend_sync(P, W, call, s, s);
	if (!strncmp(s, "torch.Tensor.", 13)) {
		const char *m = s + 13;

		if (kj__vlist_has(&P->R->method_deny, m) && !kj__vlist_has(&P->R->method_allow, m))
			pend(P, W->fn, KJ_VCHECK_TORCH_OPS, call, s,
			     kj__arena_printf(&P->cx->work, "the tensor method %s computes with "
							 "PyTorch on forward's path%s", m,
					      fallback_note(W)));
		return;
	}
	if (kj__vlist_match(&P->R->fwd_allow, s, n))
		return;
	if (kj__vlist_match(&P->R->fwd_deny, s, n)) {
		pend(P, W->fn, KJ_VCHECK_TORCH_OPS, call, s,
		     kj__arena_printf(&P->cx->work, "%s computes with a library on forward's "
						 "path instead of the kernel%s", s, fallback_note(W)));
		return;
	}
	if (kj__vlist_match(&P->R->hm_deny, s, n) && !kj__vlist_match(&P->R->hm_allow, s, n)) {
		pend(P, W->fn, KJ_VCHECK_HOST_MATH, call, s,
		     kj__arena_printf(&P->cx->work, "%s computes on the host on forward's "
						 "path%s", s, fallback_note(W)));
		return;
	}
	if (is_reference_class(P, s))
		pend(P, W->fn, KJ_VCHECK_TORCH_OPS, call, s,
		     kj__arena_printf(&P->cx->work, "%s is the reference implementation, which "
						 "is not defined in this file%s", s,
				      fallback_note(W)));
}

static void launch(struct py *P, const struct walk *W, int k, uint32_t call)
{
	uint32_t i;

	*KJ__PUSH(&P->cx->work, P->fns.v[W->fn].launches) = k;
	/* identifiers in the grid and the arguments, for host-sync severity */
	for (i = call; i < T->count && N(i).start < N(call).end; i++)
		if (N(i).start >= N(call).start && N(i).kind == KJ__K_IDENT)
			*KJ__PUSH(&P->cx->work, P->fns.v[W->fn].launch_names) = text_dup(P, i);
}

/*
 * Tensor arithmetic.  Types are not known, but some values surely are
 * tensors: forward's parameters (but self and scalars with defaults or
 * annotations), what tensor factories return (torch.empty, nn.Parameter,
 * ...), views of tensors (x.view(...), x[i]), instance attributes set to
 * those, and names bound to any of them in the function so far.
 * Arithmetic on one of these runs in PyTorch.
 */
static int is_tensor(struct py *P, const struct walk *W, uint32_t e, int depth)
{
	struct refs r = { 0 };
	const char *key;
	uint32_t f;
	size_t len;
	const char *s;
	int i;

	e = unparen(P, e);
	if (e == KJ__VNONE || depth > 16)
		return 0;
	switch (N(e).kind) {
	case KJ__K_IDENT:
		s = kj__vtext(T, e, &len);
		return kj__vmap_get(&W->tensors, s, len) != NULL &&
		       *kj__vmap_get(&W->tensors, s, len) != NULL;
	case KJ__K_PY_ATTRIBUTE:
		key = target_key(P, e, W->fn);
		return key && !strncmp(key, "obj:", 4) &&
		       kj__vmap_get(&P->tensor_attrs, key, strlen(key));
	case KJ__K_SUBSCRIPT:
		return is_tensor(P, W, kj__vfield_child(T, e, KJ__F_VALUE), depth + 1);
	case KJ__K_BINOP:
		return is_tensor(P, W, kj__vfield_child(T, e, KJ__F_LEFT), depth + 1) ||
		       is_tensor(P, W, kj__vfield_child(T, e, KJ__F_RIGHT), depth + 1);
	case KJ__K_CALL:
		f = unparen(P, kj__vfield_child(T, e, KJ__F_FUNCTION));
		if (f == KJ__VNONE)
			return 0;
		if (N(f).kind == KJ__K_PY_ATTRIBUTE) {
			uint32_t at = kj__vfield_child(T, f, KJ__F_ATTRIBUTE);

			if (at != KJ__VNONE) {
				s = kj__vtext(T, at, &len);
				if (kj__vlist_match(&P->R->tensor_views, s, len) &&
				    is_tensor(P, W, kj__vfield_child(T, f, KJ__F_OBJECT), depth + 1))
					return 1;
			}
		}
		resolve(P, f, W->fn, &r);
		for (i = 0; i < r.n; i++)
			if (r.r[i].kind == R_MOD &&
			    kj__vlist_has(&P->R->tensor_factories, r.r[i].s))
				return 1;
		return 0;
	default:
		return 0;
	}
}

static int arith_operator(const struct py *P, uint32_t node)
{
	static const char *const ops[] = { "+", "-", "*", "/", "//", "%", "**",
					   "&", "|", "^", "<<", ">>" };
	uint32_t op = kj__vfield_child(T, node, KJ__F_OPERATOR);
	size_t len, i;
	const char *s;

	if (op == KJ__VNONE)
		return 0;
	s = kj__vtext(T, op, &len);
	if (N(node).kind == KJ__K_PY_AUGASSIGN && len > 1 && s[len - 1] == '=')
		len--; /* += is + */
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strlen(ops[i]) == len && !memcmp(ops[i], s, len))
			return 1;
	return 0;
}

static void check_tensor_arith(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t parent = N(node).parent;
	uint32_t op = kj__vfield_child(T, node, KJ__F_OPERATOR);
	size_t len;
	const char *s;

	if (!P->R->tensor_arith || op == KJ__VNONE || !arith_operator(P, node))
		return;
	/* a + b + c once, as the whole expression */
	if (N(node).kind == KJ__K_BINOP && parent != KJ__VNONE &&
	    N(parent).kind == KJ__K_BINOP && arith_operator(P, parent))
		return;
	if (!is_tensor(P, W, kj__vfield_child(T, node, KJ__F_LEFT), 0) &&
	    !is_tensor(P, W, kj__vfield_child(T, node, KJ__F_RIGHT), 0))
		return;
	s = kj__vtext(T, op, &len);
	pend(P, W->fn, KJ_VCHECK_TORCH_OPS, node, NULL,
	     kj__arena_printf(&P->cx->work, "arithmetic on tensors (%.*s) computes with "
					 "PyTorch on forward's path%s", (int)len, s,
			      fallback_note(W)));
}

/* After `name = value`: name holds a tensor, or no longer does. */
static void track_tensor(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t l = unparen(P, kj__vfield_child(T, node, KJ__F_LEFT));
	uint32_t r = kj__vfield_child(T, node, KJ__F_RIGHT);
	size_t len;
	const char *s;

	if (l == KJ__VNONE || r == KJ__VNONE || N(l).kind != KJ__K_IDENT)
		return;
	s = kj__vtext(T, l, &len);
	*kj__vmap_put(&P->cx->work, &W->tensors, s, len) =
		is_tensor(P, W, r, 0) ? (void *)1 : NULL;
}

/* forward's parameters are its tensors, but self and the scalars. */
static void forward_tensors(struct py *P, struct walk *W, uint32_t params)
{
	uint32_t c, name, ann, def;
	int first = 1;

	for (c = first_named(P, params); c != KJ__VNONE; c = next_named(P, c), first = 0) {
		name = ann = def = KJ__VNONE;
		switch (N(c).kind) {
		case KJ__K_IDENT:
			name = c;
			break;
		case KJ__K_PY_TYPED_PARAM:
			name = first_named(P, c);
			ann = kj__vfield_child(T, c, KJ__F_TYPE);
			break;
		case KJ__K_PY_DEFAULT_PARAM:
		case KJ__K_PY_TYPED_DEFAULT_PARAM:
			name = kj__vfield_child(T, c, KJ__F_NAME);
			ann = kj__vfield_child(T, c, KJ__F_TYPE);
			def = unparen(P, kj__vfield_child(T, c, KJ__F_VALUE));
			break;
		default:
			continue;
		}
		if (first || name == KJ__VNONE || N(name).kind != KJ__K_IDENT)
			continue;
		if (ann != KJ__VNONE && (kj__vtext_is(T, ann, "int") || kj__vtext_is(T, ann, "float") ||
					 kj__vtext_is(T, ann, "bool") || kj__vtext_is(T, ann, "str")))
			continue;
		if (def != KJ__VNONE && N(def).kind != KJ__K_NONE)
			continue;
		{
			size_t len;
			const char *s = kj__vtext(T, name, &len);

			*kj__vmap_put(&P->cx->work, &W->tensors, s, len) = (void *)1;
		}
	}
}

/* Instance attributes set to tensors: self.w = nn.Parameter(...),
 * self.register_buffer("b", torch.zeros(...)). */
static void mark_tensor_attrs(struct py *P)
{
	struct walk none;
	size_t i;

	memset(&none, 0, sizeof(none));
	for (i = 0; i < P->assigns.n; i++) {
		const struct assign *a = &P->assigns.v[i];
		const char *key = a->attr_key;

		none.fn = a->fn;
		if (key && !strncmp(key, "obj:", 4) && is_tensor(P, &none, a->rhs, 0))
			*kj__vmap_put(&P->cx->work, &P->tensor_attrs, key, strlen(key)) = (void *)1;
	}
	for (i = 0; i < P->calls.n; i++) {
		uint32_t call = P->calls.v[i].node;
		uint32_t f = unparen(P, kj__vfield_child(T, call, KJ__F_FUNCTION)), at;
		struct refs r = { 0 };
		const char *name;

		if (f == KJ__VNONE || N(f).kind != KJ__K_PY_ATTRIBUTE)
			continue;
		at = kj__vfield_child(T, f, KJ__F_ATTRIBUTE);
		if (at == KJ__VNONE || !kj__vtext_is(T, at, "register_buffer"))
			continue;
		name = const_string(P, pos_arg(P, call, 0));
		resolve(P, kj__vfield_child(T, f, KJ__F_OBJECT), P->calls.v[i].fn, &r);
		if (name && r.n && r.r[0].kind == R_OBJ) {
			const char *key = kj__arena_printf(&P->cx->work, "obj:%d.%s", r.r[0].idx, name);

			*kj__vmap_put(&P->cx->work, &P->tensor_attrs, key, strlen(key)) = (void *)1;
		}
	}
}

static void walk(struct py *P, uint32_t node, struct walk *W);

static void handle_call(struct py *P, uint32_t call, struct walk *W, int *is_launch)
{
	uint32_t f = kj__vfield_child(T, call, KJ__F_FUNCTION);
	struct refs r = { 0 };
	int i, reported = 0;

	*is_launch = 0;
	f = unparen(P, f);
	if (f == KJ__VNONE)
		return;
	if (N(f).kind == KJ__K_SUBSCRIPT) { /* K[grid](...) */
		resolve(P, kj__vfield_child(T, f, KJ__F_VALUE), W->fn, &r);
		for (i = 0; i < r.n; i++)
			if (r.r[i].kind == R_FUNC && P->fns.v[r.r[i].idx].is_kernel) {
				launch(P, W, r.r[i].idx, call);
				*is_launch = 1;
			}
		if (*is_launch)
			return;
		memset(&r, 0, sizeof(r)); /* ops[0](x): what the container holds */
	}
	resolve(P, f, W->fn, &r);
	for (i = 0; i < r.n; i++) {
		const struct ref *x = &r.r[i];
		int m;

		switch (x->kind) {
		case R_FUNC:
			if (x->idx >= 0 && !P->fns.v[x->idx].is_kernel)
				edge(P, W->fn, x->idx);
			break;
		case R_CLASS:
			m = method_lookup(P, x->idx, "__init__");
			if (m >= 0)
				edge(P, W->fn, m);
			break;
		case R_OBJ:
			m = method_lookup(P, x->idx, "__call__");
			if (m >= 0)
				edge(P, W->fn, m);
			m = method_lookup(P, x->idx, "forward");
			if (m >= 0)
				edge(P, W->fn, m);
			break;
		case R_EXTFN: {
			struct extcall *e = KJ__PUSH(&P->cx->work, P->fns.v[W->fn].extcalls);

			e->ext = x->idx;
			e->fn = x->s;
			break;
		}
		case R_MOD:
		case R_NAME:
			if (!reported) {
				size_t before = P->fns.v[W->fn].pending.n;

				check_module_call(P, W, call, x->s);
				reported = P->fns.v[W->fn].pending.n != before;
			}
			break;
		case R_VALUE:
			if (!x->s || reported)
				break;
			if (kj__vlist_has(&P->R->sync_methods, x->s)) {
				pend_sync(P, W, call, NULL,
					  kj__arena_printf(&P->cx->work, ".%s()", x->s));
				reported = 1;
			} else if (kj__vlist_has(&P->R->method_deny, x->s) &&
				   !kj__vlist_has(&P->R->method_allow, x->s)) {
				pend(P, W->fn, KJ_VCHECK_TORCH_OPS, call, NULL,
				     kj__arena_printf(&P->cx->work, "the tensor method .%s() "
								 "computes with PyTorch on forward's "
								 "path%s", x->s, fallback_note(W)));
				reported = 1;
			} else if (x->selfattr) {
				pend(P, W->fn, KJ_VCHECK_TORCH_OPS, call, NULL,
				     kj__arena_printf(&P->cx->work, "calls the attribute %s, which "
								 "is neither a method nor a kernel "
								 "of this file (a PyTorch layer or "
								 "module)%s", x->s, fallback_note(W)));
				reported = 1;
			}
			break;
		default:
			break;
		}
	}
}

/* out[i] = x[i] * 2 inside a loop: element-wise computing in Python. */
static int has_sub_operand(const struct py *P, uint32_t v, int depth)
{
	uint32_t c;

	if (v == KJ__VNONE || depth > 32)
		return 0;
	if (N(v).kind == KJ__K_BINOP) {
		uint32_t l = unparen(P, kj__vfield_child(T, v, KJ__F_LEFT));
		uint32_t r = unparen(P, kj__vfield_child(T, v, KJ__F_RIGHT));

		if ((l != KJ__VNONE && N(l).kind == KJ__K_SUBSCRIPT) ||
		    (r != KJ__VNONE && N(r).kind == KJ__K_SUBSCRIPT))
			return 1;
	}
	if (N(v).kind == KJ__K_SUBSCRIPT) /* not into the index: x[i*B:(i+1)*B] */
		return 0;
	KJ__EACH_CHILD(T, v, c)
		if (has_sub_operand(P, c, depth + 1))
			return 1;
	return 0;
}

static int contains_kind(const struct py *P, uint32_t v, enum kj__vkind k)
{
	uint32_t i;

	for (i = v; v != KJ__VNONE && i < T->count && N(i).start < N(v).end; i++)
		if (N(i).start >= N(v).start && N(i).kind == k && kj__vinside(T, i, v))
			return 1;
	return 0;
}

static void check_assign_in_loop(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t l = unparen(P, kj__vfield_child(T, node, KJ__F_LEFT));
	uint32_t r = kj__vfield_child(T, node, KJ__F_RIGHT);
	int hit;

	if (W->loops == 0 || P->R->loops != KJ__LOOPS_ELEMENT || l == KJ__VNONE ||
	    N(l).kind != KJ__K_SUBSCRIPT || r == KJ__VNONE)
		return;
	hit = N(node).kind == KJ__K_PY_AUGASSIGN ? contains_kind(P, r, KJ__K_SUBSCRIPT)
						 : has_sub_operand(P, r, 0);
	if (hit)
		pend(P, W->fn, KJ_VCHECK_TORCH_OPS, node, NULL,
		     "computes element by element in a Python loop on forward's path");
}

static void check_operator(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t op = kj__vfield_child(T, node, KJ__F_OPERATOR);
	size_t len;
	const char *s;

	if (op == KJ__VNONE)
		return;
	s = kj__vtext(T, op, &len);
	if (N(node).kind == KJ__K_PY_AUGASSIGN && len > 1 && s[len - 1] == '=')
		len--; /* @= is @ */
	if (kj__vlist_match(&P->R->operators_deny, s, len))
		pend(P, W->fn, KJ_VCHECK_TORCH_OPS, node, NULL,
		     kj__arena_printf(&P->cx->work, "the operator %.*s computes with PyTorch on "
						 "forward's path%s", (int)len, s, fallback_note(W)));
}

static void walk_children(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t c;

	KJ__EACH_CHILD(T, node, c)
		walk(P, c, W);
}

/* Statements of a block up to the first that ends it. */
static void walk_block(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t c;

	KJ__EACH_CHILD(T, node, c) {
		enum kj__vkind k = N(c).kind;

		walk(P, c, W);
		if (k == KJ__K_RETURN || k == KJ__K_PY_RAISE || k == KJ__K_BREAK ||
		    k == KJ__K_CONTINUE)
			return; /* the rest of the block is dead */
	}
}

static void walk_if(struct py *P, uint32_t node, struct walk *W)
{
	uint32_t c;
	int t = truth(P, kj__vfield_child(T, node, KJ__F_CONDITION)), done = 0;

	walk(P, kj__vfield_child(T, node, KJ__F_CONDITION), W);
	if (t != 0)
		walk(P, kj__vfield_child(T, node, KJ__F_CONSEQUENCE), W);
	if (t == 1)
		return;
	KJ__EACH_CHILD(T, node, c) {
		if (N(c).field != KJ__F_ALTERNATIVE || done)
			continue;
		if (N(c).kind == KJ__K_PY_ELIF) {
			int e = truth(P, kj__vfield_child(T, c, KJ__F_CONDITION));

			walk(P, kj__vfield_child(T, c, KJ__F_CONDITION), W);
			if (e != 0)
				walk(P, kj__vfield_child(T, c, KJ__F_CONSEQUENCE), W);
			if (e == 1)
				done = 1;
		} else {
			walk(P, kj__vfield_child(T, c, KJ__F_BODY), W);
		}
	}
}

static void walk(struct py *P, uint32_t node, struct walk *W)
{
	struct refs r = { 0 };
	uint32_t c, f;
	int is_launch, i;

	if (node == KJ__VNONE)
		return;
	switch (N(node).kind) {
	case KJ__K_PY_FUNCDEF:
	case KJ__K_PY_CLASSDEF:
		return; /* their own functions; reached only when referenced */
	case KJ__K_PY_DECORATED:
		KJ__EACH_CHILD(T, node, c)
			if (N(c).kind == KJ__K_PY_DECORATOR)
				walk_children(P, c, W);
		return;
	case KJ__K_LAMBDA:
		if (P->node_fn[node] >= 0)
			edge(P, W->fn, P->node_fn[node]);
		return;
	case KJ__K_PY_BLOCK:
	case KJ__K_PY_MODULE:
		walk_block(P, node, W);
		return;
	case KJ__K_IF:
		walk_if(P, node, W);
		return;
	case KJ__K_WHILE:
		walk(P, kj__vfield_child(T, node, KJ__F_CONDITION), W);
		if (P->R->loops == KJ__LOOPS_DENY)
			pend(P, W->fn, KJ_VCHECK_TORCH_OPS, node, NULL,
			     "a Python loop on forward's path");
		if (truth(P, kj__vfield_child(T, node, KJ__F_CONDITION)) != 0) {
			W->loops++;
			walk(P, kj__vfield_child(T, node, KJ__F_BODY), W);
			W->loops--;
		}
		walk(P, kj__vfield_child(T, node, KJ__F_ALTERNATIVE), W);
		return;
	case KJ__K_FOR:
		walk(P, kj__vfield_child(T, node, KJ__F_RIGHT), W);
		if (P->R->loops == KJ__LOOPS_DENY)
			pend(P, W->fn, KJ_VCHECK_TORCH_OPS, node, NULL,
			     "a Python loop on forward's path");
		W->loops++;
		walk(P, kj__vfield_child(T, node, KJ__F_BODY), W);
		W->loops--;
		walk(P, kj__vfield_child(T, node, KJ__F_ALTERNATIVE), W);
		return;
	case KJ__K_PY_TRY:
		KJ__EACH_CHILD(T, node, c) {
			if (N(c).kind == KJ__K_PY_EXCEPT) {
				W->in_except++;
				walk_children(P, c, W);
				W->in_except--;
			} else {
				walk(P, c, W);
			}
		}
		return;
	case KJ__K_CALL:
		handle_call(P, node, W, &is_launch);
		f = unparen(P, kj__vfield_child(T, node, KJ__F_FUNCTION));
		if (is_launch) /* the grid and the arguments feed the launch */
			W->in_launch++;
		/* the callee was resolved above: walk only inside it */
		if (f != KJ__VNONE && N(f).kind == KJ__K_PY_ATTRIBUTE)
			walk(P, kj__vfield_child(T, f, KJ__F_OBJECT), W);
		else if (f != KJ__VNONE && N(f).kind != KJ__K_IDENT)
			walk(P, f, W);
		walk(P, kj__vfield_child(T, node, KJ__F_ARGUMENTS), W);
		if (is_launch)
			W->in_launch--;
		return;
	case KJ__K_KWARG: /* the name is not a reference */
		walk(P, kj__vfield_child(T, node, KJ__F_VALUE), W);
		return;
	case KJ__K_IDENT:
	case KJ__K_PY_ATTRIBUTE:
		/* a function passed or stored as a value may be called later */
		resolve(P, node, W->fn, &r);
		for (i = 0; i < r.n; i++)
			if (r.r[i].kind == R_FUNC && !P->fns.v[r.r[i].idx].is_kernel)
				edge(P, W->fn, r.r[i].idx);
		if (N(node).kind == KJ__K_PY_ATTRIBUTE)
			walk(P, kj__vfield_child(T, node, KJ__F_OBJECT), W);
		return;
	case KJ__K_PY_ASSIGN:
	case KJ__K_PY_AUGASSIGN:
		check_assign_in_loop(P, node, W);
		if (N(node).kind == KJ__K_PY_AUGASSIGN) {
			check_operator(P, node, W);
			check_tensor_arith(P, node, W);
		}
		walk_children(P, node, W);
		if (N(node).kind == KJ__K_PY_ASSIGN)
			track_tensor(P, node, W);
		return;
	case KJ__K_BINOP:
		check_operator(P, node, W);
		check_tensor_arith(P, node, W);
		walk_children(P, node, W);
		return;
	case KJ__K_PY_INTERPOLATION:
	case KJ__K_COMMENT:
		return;
	default:
		walk_children(P, node, W);
		return;
	}
}

static void walk_fn(struct py *P, int fn)
{
	struct func *f = &P->fns.v[fn];
	struct walk W;
	size_t i, j;

	if (f->walked || f->body == KJ__VNONE || f->is_kernel)
		return;
	f->walked = 1;
	memset(&W, 0, sizeof(W));
	W.fn = fn;
	if (fn == P->entry)
		forward_tensors(P, &W, kj__vfield_child(T, f->node, KJ__F_PARAMETERS));
	if (f->kind == FN_LAMBDA)
		walk(P, f->body, &W);
	else
		walk_block(P, f->body, &W);
	/* host sync: a value that feeds a launch makes every launch wait */
	f = &P->fns.v[fn];
	for (i = 0; i < f->pending.n; i++) {
		struct pending *p = &f->pending.v[i];

		if (!p->sync || p->in_launch || !p->sync_name)
			continue;
		for (j = 0; j < f->launch_names.n; j++)
			if (!strcmp(f->launch_names.v[j], p->sync_name))
				p->in_launch = 1;
	}
}

/* --- the whole file ----------------------------------------------------------- */

static void find_node(struct py *P, enum kj_vcheck check, uint32_t node,
		      const char *resolved, const char *reason)
{
	size_t len;
	const char *s = kj__vtext(T, node, &len);

	kj__vfind(P->cx, check, row_line(P, node), 0, NULL, s, len, resolved, "%s", reason);
}

/* The callee text to quote for a call. */
static uint32_t quote_node(const struct py *P, uint32_t node)
{
	if (N(node).kind == KJ__K_CALL) {
		uint32_t f = kj__vfield_child(T, node, KJ__F_FUNCTION);

		if (f != KJ__VNONE)
			return f;
	}
	return node;
}

static int in_kernel(const struct py *P, int fn)
{
	for (; fn >= 0; fn = P->fns.v[fn].parent)
		if (P->fns.v[fn].is_kernel)
			return 1;
	return 0;
}

/*
 * nn.Linear(...) only used to hold weights (self.fc = nn.Linear(...);
 * self.fc.weight read, self.fc never called) is not computing: the
 * newest original exempts it too.
 */
static int weight_holder(struct py *P, uint32_t call, int fn,
			 const struct kj__vmap *called, const struct kj__vmap *weights)
{
	uint32_t p = N(call).parent;
	const char *key;

	if (!P->R->weight_holders || p == KJ__VNONE || N(p).kind != KJ__K_PY_ASSIGN ||
	    kj__vfield_child(T, p, KJ__F_RIGHT) != call)
		return 0;
	key = target_key(P, kj__vfield_child(T, p, KJ__F_LEFT), fn);
	return key && kj__vmap_get(weights, key, strlen(key)) &&
	       !kj__vmap_get(called, key, strlen(key));
}

static void check_getattr(struct py *P, uint32_t call, int fn)
{
	struct refs base = { 0 };
	uint32_t a0 = pos_arg(P, call, 0), a1 = pos_arg(P, call, 1);
	const char *name;
	int i;

	if (a0 == KJ__VNONE)
		return;
	resolve(P, a0, fn, &base);
	for (i = 0; i < base.n; i++)
		if ((base.r[i].kind == R_MOD || base.r[i].kind == R_NAME) &&
		    kj__vlist_has(&P->R->getattr_roots, base.r[i].s))
			break;
	if (i == base.n)
		return;
	name = a1 != KJ__VNONE ? const_string(P, a1) : NULL;
	if (name && kj__vlist_has(&P->R->getattr_allow, name))
		return;
	find_node(P, KJ_VCHECK_DYNAMIC, call, base.r[i].s,
		  name ? kj__arena_printf(&P->cx->work, "getattr on %s hides the call %s.%s "
							 "from the checks", base.r[i].s,
					  base.r[i].s, name)
		       : kj__arena_printf(&P->cx->work, "getattr on %s with a computed name can "
							 "reach any of its functions", base.r[i].s));
}

static void whole_file(struct py *P)
{
	struct kj__vmap called = { 0 }, weights = { 0 };
	size_t i;

	/* keys called (self.fc(x)) and keys whose weights are read */
	for (i = 0; i < P->calls.n; i++) {
		uint32_t f = kj__vfield_child(T, P->calls.v[i].node, KJ__F_FUNCTION);
		const char *key = f != KJ__VNONE ? target_key(P, f, P->calls.v[i].fn) : NULL;

		if (key)
			*kj__vmap_put(&P->cx->work, &called, key, strlen(key)) = (void *)1;
	}
	for (i = 0; i < P->attrs.n; i++) {
		uint32_t a = P->attrs.v[i].node;
		uint32_t at = kj__vfield_child(T, a, KJ__F_ATTRIBUTE);
		const char *key;

		if (at == KJ__VNONE || (!kj__vtext_is(T, at, "weight") && !kj__vtext_is(T, at, "bias")))
			continue;
		key = target_key(P, kj__vfield_child(T, a, KJ__F_OBJECT), P->attrs.v[i].fn);
		if (key)
			*kj__vmap_put(&P->cx->work, &weights, key, strlen(key)) = (void *)1;
	}

	for (i = 0; i < P->calls.n; i++) {
		uint32_t call = P->calls.v[i].node;
		uint32_t f = kj__vfield_child(T, call, KJ__F_FUNCTION);
		int fn = P->calls.v[i].fn, j;
		struct refs r = { 0 };

		f = unparen(P, f);
		if (f == KJ__VNONE || in_kernel(P, fn) || N(f).kind == KJ__K_SUBSCRIPT)
			continue;
		resolve(P, f, fn, &r);
		for (j = 0; j < r.n; j++) {
			const char *s = r.r[j].s;

			if (r.r[j].kind != R_MOD && r.r[j].kind != R_NAME)
				continue;
			if (kj__vlist_has(&P->R->dyn_calls, s)) {
				find_node(P, KJ_VCHECK_DYNAMIC, f, s,
					  kj__arena_printf(&P->cx->work, "%s runs code or reaches "
									 "names the checks cannot see", s));
				break;
			}
			if (!strcmp(s, "getattr") || !strcmp(s, "builtins.getattr")) {
				check_getattr(P, call, fn);
				break;
			}
			if (kj__vlist_has(&P->R->mw_deny, s) && !kj__vlist_has(&P->R->mw_allow, s)) {
				if (weight_holder(P, call, fn, &called, &weights))
					break;
				find_node(P, KJ_VCHECK_MODULE_WIDE, f, s,
					  kj__arena_printf(&P->cx->work, "%s is banned anywhere in "
									 "the file", s));
				break;
			}
		}
	}
	for (i = 0; i < P->execs.n; i++)
		find_node(P, KJ_VCHECK_DYNAMIC, P->execs.v[i].node, "exec",
			  "the exec statement runs code the checks cannot see");
	for (i = 0; i < P->attrs.n; i++) {
		uint32_t a = P->attrs.v[i].node;
		uint32_t at = kj__vfield_child(T, a, KJ__F_ATTRIBUTE);
		struct refs r = { 0 };
		char dotname[128];
		size_t len;
		const char *s;
		int j;

		if (at == KJ__VNONE)
			continue;
		s = kj__vtext(T, at, &len);
		snprintf(dotname, sizeof(dotname), ".%.*s", (int)(len < 120 ? len : 120), s);
		if (kj__vlist_has(&P->R->dyn_attrs, dotname)) {
			find_node(P, KJ_VCHECK_DYNAMIC, a, NULL,
				  kj__arena_printf(&P->cx->work, "%s reaches names the checks "
								 "cannot see", dotname));
			continue;
		}
		resolve(P, a, P->attrs.v[i].fn, &r);
		for (j = 0; j < r.n; j++)
			if (r.r[j].kind == R_MOD && kj__vlist_has(&P->R->dyn_attrs, r.r[j].s)) {
				find_node(P, KJ_VCHECK_DYNAMIC, a, r.r[j].s,
					  kj__arena_printf(&P->cx->work, "%s reaches modules the "
									 "checks cannot see", r.r[j].s));
				break;
			}
	}
	for (i = 0; i < P->assigns.n; i++) {
		const struct assign *a = &P->assigns.v[i];
		const char *key = a->attr_key;

		if (key && strncmp(key, "obj:", 4) && kj__vlist_has(&P->R->mw_assign_deny, key))
			find_node(P, KJ_VCHECK_MODULE_WIDE, a->lhs, key,
				  kj__arena_printf(&P->cx->work, "assigning %s changes a library "
								 "for everyone", key));
	}
	for (i = 0; i < P->stars.n; i++) {
		uint32_t mod = kj__vfield_child(T, P->stars.v[i].node, KJ__F_MODULE_NAME);
		const char *m = mod != KJ__VNONE ? dotted(P, mod) : "";

		if (kj__vlist_has(&P->R->mw_star_deny, m))
			find_node(P, KJ_VCHECK_MODULE_WIDE, P->stars.v[i].node, m,
				  kj__arena_printf(&P->cx->work, "from %s import * hides which of "
								 "its functions are called", m));
	}
}

/* --- extension modules ----------------------------------------------------- */

struct text {
	KJ__VEC(char) s;
	KJ__VEC(uint32_t) rows; /* file row of each line of s */
	int unknown; /* some part could not be read */
};

static void text_putc(struct py *P, struct text *x, char ch, uint32_t row)
{
	/* names can double a string at every step (b = a + a; c = b + b):
	 * what no loader could be given is not read */
	if (x->s.n >= KJ_VALIDATE_MAX_FILE) {
		x->unknown = 1;
		return;
	}
	if (x->rows.n == 0)
		*KJ__PUSH(&P->cx->work, x->rows) = row;
	*KJ__PUSH(&P->cx->work, x->s) = ch;
	if (ch == '\n')
		*KJ__PUSH(&P->cx->work, x->rows) = row;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The characters of one string_content node, escapes decoded unless raw. */
static void decode_content(struct py *P, struct text *x, uint32_t c, int raw, int fstr)
{
	size_t len, i;
	const char *s = kj__vtext(T, c, &len);
	uint32_t row = N(c).row;

	for (i = 0; i < len; i++) {
		char ch = s[i];

		if (fstr && (ch == '{' || ch == '}') && i + 1 < len && s[i + 1] == ch) {
			text_putc(P, x, ch, row);
			i++;
			continue;
		}
		if (ch == '\n') {
			row++;
			text_putc(P, x, ch, row);
			continue;
		}
		if (ch != '\\' || raw || i + 1 >= len) {
			text_putc(P, x, ch, row);
			continue;
		}
		ch = s[++i];
		switch (ch) {
		case '\n': /* a continued line */
			row++;
			break;
		case 'n':
			text_putc(P, x, '\n', row);
			break;
		case 't':
			text_putc(P, x, '\t', row);
			break;
		case 'r':
		case 'a':
		case 'b':
		case 'f':
		case 'v':
			text_putc(P, x, ' ', row);
			break;
		case 'x':
			if (i + 2 < len && hexval(s[i + 1]) >= 0 && hexval(s[i + 2]) >= 0) {
				text_putc(P, x, (char)(hexval(s[i + 1]) * 16 + hexval(s[i + 2])), row);
				i += 2;
			}
			break;
		default:
			if (ch >= '0' && ch <= '7') {
				int v = 0, k;

				for (k = 0; k < 3 && i < len && s[i] >= '0' && s[i] <= '7'; k++, i++)
					v = v * 8 + (s[i] - '0');
				i--;
				text_putc(P, x, (char)v, row);
			} else {
				text_putc(P, x, ch, row); /* \\ \' \" and the rest */
			}
			break;
		}
	}
}

static void add_text(struct py *P, struct text *x, uint32_t node, int fn, int depth);

static void add_string(struct py *P, struct text *x, uint32_t node)
{
	uint32_t c, start = kj__vkind_child(T, node, KJ__K_PY_STRING_START);
	int raw = 0, fstr = 0;

	if (start != KJ__VNONE) {
		size_t len, i;
		const char *s = kj__vtext(T, start, &len);

		for (i = 0; i < len; i++) {
			raw |= s[i] == 'r' || s[i] == 'R';
			fstr |= s[i] == 'f' || s[i] == 'F';
		}
	}
	KJ__EACH_CHILD(T, node, c)
		if (N(c).kind == KJ__K_STRING_CONTENT)
			decode_content(P, x, c, raw, fstr);
}

/* Append the text a Python expression builds, as far as it can be known:
 * literals, names bound to them, +, "sep".join([...]), lists, and
 * .format()/.replace()/textwrap.dedent() of them (kept as they are). */
static void add_text(struct py *P, struct text *x, uint32_t node, int fn, int depth)
{
	uint32_t c, f;

	node = unparen(P, node);
	if (node == KJ__VNONE || depth > 16 || x->s.n >= KJ_VALIDATE_MAX_FILE) {
		x->unknown = 1;
		return;
	}
	switch (N(node).kind) {
	case KJ__K_STRING:
		add_string(P, x, node);
		return;
	case KJ__K_PY_CONCAT_STRING:
		KJ__EACH_CHILD(T, node, c)
			if (N(c).kind == KJ__K_STRING)
				add_string(P, x, c);
		return;
	case KJ__K_BINOP: /* "a" + "b", "fmt" % args */
		add_text(P, x, kj__vfield_child(T, node, KJ__F_LEFT), fn, depth + 1);
		if (kj__vtext_is(T, kj__vfield_child(T, node, KJ__F_OPERATOR), "+"))
			add_text(P, x, kj__vfield_child(T, node, KJ__F_RIGHT), fn, depth + 1);
		return;
	case KJ__K_PY_LIST:
	case KJ__K_PY_TUPLE:
		for (c = first_named(P, node); c != KJ__VNONE; c = next_named(P, c)) {
			add_text(P, x, c, fn, depth + 1);
			text_putc(P, x, '\n', x->rows.n ? x->rows.v[x->rows.n - 1] : N(c).row);
		}
		return;
	case KJ__K_IDENT: {
		size_t len;
		const char *s = kj__vtext(T, node, &len);
		void **slot = kj__vmap_get(&P->strvars, s, len);

		if (slot)
			add_text(P, x, (uint32_t)((uintptr_t)*slot - 1), fn, depth + 1);
		else
			x->unknown = 1;
		return;
	}
	case KJ__K_CALL:
		f = unparen(P, kj__vfield_child(T, node, KJ__F_FUNCTION));
		if (f == KJ__VNONE)
			return;
		if (N(f).kind == KJ__K_PY_ATTRIBUTE) {
			uint32_t obj = kj__vfield_child(T, f, KJ__F_OBJECT);
			uint32_t at = kj__vfield_child(T, f, KJ__F_ATTRIBUTE);
			struct refs r = { 0 };

			if (at != KJ__VNONE && kj__vtext_is(T, at, "join")) {
				struct text sep = { 0 };
				uint32_t list = unparen(P, pos_arg(P, node, 0));

				add_text(P, &sep, obj, fn, depth + 1);
				if (list == KJ__VNONE)
					return;
				for (c = first_named(P, list); c != KJ__VNONE; c = next_named(P, c)) {
					size_t k;

					add_text(P, x, c, fn, depth + 1);
					for (k = 0; k < sep.s.n; k++)
						text_putc(P, x, sep.s.v[k], N(c).row);
				}
				return;
			}
			resolve(P, f, fn, &r);
			if (r.n && r.r[0].kind == R_MOD && !strcmp(r.r[0].s, "textwrap.dedent")) {
				add_text(P, x, pos_arg(P, node, 0), fn, depth + 1);
				return;
			}
			add_text(P, x, obj, fn, depth + 1); /* "...".format(...) */
			return;
		}
		x->unknown = 1;
		return;
	default:
		x->unknown = 1;
		return;
	}
}

static void add_source(struct py *P, struct kj__vcuda *m, uint32_t node, int fn,
		       const char *what)
{
	struct text x = { 0 };

	if (node == KJ__VNONE || N(unparen(P, node)).kind == KJ__K_NONE)
		return;
	add_text(P, &x, node, fn, 0);
	if (x.s.n == 0 && x.unknown) {
		kj__vcuda_missing(P->cx, m, kj__arena_printf(&P->cx->work,
							     "%s is not text this check can read",
							     what));
		return;
	}
	if (x.s.n)
		kj__vcuda_add(P->cx, m, x.s.v, x.s.n, x.rows.v, x.rows.n);
}

/* Sources named by load(sources=[...]), read from the candidate's
 * directory. */
static void add_source_files(struct py *P, struct kj__vcuda *m, uint32_t node)
{
	uint32_t c;

	node = unparen(P, node);
	if (node == KJ__VNONE)
		return;
	if (N(node).kind != KJ__K_PY_LIST && N(node).kind != KJ__K_PY_TUPLE) {
		kj__vcuda_missing(P->cx, m, "sources is not a list of file names");
		return;
	}
	for (c = first_named(P, node); c != KJ__VNONE; c = next_named(P, c)) {
		const char *name = const_string(P, c);
		char path[4096];
		struct kj_error e;
		char *buf, *text;
		size_t n = 0;
		uint32_t row = N(c).row;

		if (!name || !*name || !P->cx->dir) {
			kj__vcuda_missing(P->cx, m, "a source file this check cannot find");
			continue;
		}
		if (name[0] == '/')
			snprintf(path, sizeof(path), "%s", name);
		else
			snprintf(path, sizeof(path), "%s/%s", P->cx->dir, name);
		/* A file the candidate names: an open that cannot block (a FIFO,
		 * /dev/stdin), a regular file only, at most the analysis'
		 * limit. */
		text = kj__read_file(path, KJ_VALIDATE_MAX_FILE, &n, &e);
		if (!text) {
			kj__vcuda_missing(P->cx, m, kj__arena_printf(&P->cx->work,
								     e.code == KJ_ELIMIT
								     ? "the source '%s' is too large"
								     : "the source '%s' cannot be read",
								     name));
			continue;
		}
		buf = kj__arena_alloc(&P->cx->work, n + 1);
		memcpy(buf, text, n + 1);
		free(text);
		/* its lines are reported at the load() call's line */
		kj__vcuda_add(P->cx, m, buf, n, &row, 1);
	}
}

static void add_exports(struct py *P, struct kj__vcuda *m, uint32_t node)
{
	uint32_t c;
	const char *s;

	node = unparen(P, node);
	if (node == KJ__VNONE)
		return;
	s = const_string(P, node);
	if (s) {
		kj__vcuda_export(P->cx, m, s, strlen(s));
		return;
	}
	if (N(node).kind != KJ__K_PY_LIST && N(node).kind != KJ__K_PY_TUPLE)
		return;
	for (c = first_named(P, node); c != KJ__VNONE; c = next_named(P, c)) {
		s = const_string(P, c);
		if (s)
			kj__vcuda_export(P->cx, m, s, strlen(s));
	}
}

static void build_extensions(struct py *P)
{
	size_t i;

	/* every loader call is a module, even one first met in forward */
	for (i = 0; i < P->calls.n; i++) {
		struct refs r = { 0 };
		uint32_t f = kj__vfield_child(T, P->calls.v[i].node, KJ__F_FUNCTION);
		int j;

		if (f == KJ__VNONE)
			continue;
		resolve(P, f, P->calls.v[i].fn, &r);
		for (j = 0; j < r.n; j++)
			if (r.r[j].kind == R_MOD &&
			    kj__vlist_has(&P->R->extension_loaders, r.r[j].s))
				ext_for_call(P, P->calls.v[i].node, P->calls.v[i].fn);
	}
	for (i = 0; i < P->exts.n; i++) {
		struct ext *e = &P->exts.v[i];
		uint32_t f = kj__vfield_child(T, e->call, KJ__F_FUNCTION);
		struct refs r = { 0 };
		int inline_src = 1;

		e->m = kj__vcuda_new(P->cx, row_line(P, e->call));
		resolve(P, f, e->fn, &r);
		if (r.n && r.r[0].kind == R_MOD) {
			size_t n = strlen(r.r[0].s);

			inline_src = n >= 7 && !strcmp(r.r[0].s + n - 7, "_inline");
		}
		if (inline_src) {
			add_source(P, e->m, arg_or_kw(P, e->call, 1, "cpp_sources"), e->fn,
				   "cpp_sources");
			add_source(P, e->m, arg_or_kw(P, e->call, 2, "cuda_sources"), e->fn,
				   "cuda_sources");
			add_exports(P, e->m, arg_or_kw(P, e->call, 3, "functions"));
		} else {
			add_source_files(P, e->m, arg_or_kw(P, e->call, 1, "sources"));
		}
		kj__vcuda_analyze(P->cx, e->m);
	}
}

/* --- putting it together --------------------------------------------------- */

static void find_entry(struct py *P)
{
	void **slot = kj__vmap_get(&P->cls_names, P->R->entry_class, strlen(P->R->entry_class));
	int c = slot ? (int)(intptr_t)*slot - 1 : -1, b, i;

	P->entry = -1;
	P->entry_cls = c; /* the last class of that name, as Python binds it */
	if (c < 0) {
		P->cx->check_error[KJ_VCHECK_CALLED] =
			kj__arena_printf(&P->cx->out, "no class %s", P->R->entry_class);
		return;
	}
	P->entry = method_lookup(P, c, P->R->entry_method);
	/* bases outside the file and outside the allow list: the class may be
	 * the reference in disguise (class ModelNew(Model)) */
	for (b = 0; b < P->classes.v[c].n_bases; b++)
		for (i = 0; i < P->classes.v[c].base_refs[b].n; i++) {
			const struct ref *r = &P->classes.v[c].base_refs[b].r[i];
			uint32_t bn = P->classes.v[c].bases.v[b];

			if ((r->kind == R_MOD || r->kind == R_NAME) &&
			    !kj__vlist_has(&P->R->entry_bases_allow, r->s)) {
				if (is_reference_class(P, r->s))
					find_node(P, KJ_VCHECK_TORCH_OPS, bn, r->s,
						  kj__arena_printf(&P->cx->work,
								   "%s derives from %s, the reference "
								   "implementation, which is not "
								   "defined in this file",
								   P->R->entry_class, r->s));
				if (P->entry < 0)
					P->cx->check_error[KJ_VCHECK_CALLED] = kj__arena_printf(
						&P->cx->out, "%s has no %s of its own; it inherits "
							     "one from %s", P->R->entry_class,
						P->R->entry_method, r->s);
			}
		}
	if (P->entry < 0 && !P->cx->check_error[KJ_VCHECK_CALLED])
		P->cx->check_error[KJ_VCHECK_CALLED] = kj__arena_printf(
			&P->cx->out, "%s has no %s method", P->R->entry_class, P->R->entry_method);
}

static void report_pending(struct py *P, int fn)
{
	const struct func *f = &P->fns.v[fn];
	size_t i;

	for (i = 0; i < f->pending.n; i++) {
		const struct pending *p = &f->pending.v[i];
		uint32_t q = quote_node(P, p->node);
		size_t len;
		const char *s = kj__vtext(T, q, &len);
		int high = p->in_launch;

		if (p->sync)
			kj__vfind(P->cx, p->check, row_line(P, p->node),
				  !high && !P->R->sync_fail_medium, high ? "high" : "medium", s,
				  len, p->resolved, "%s%s", p->reason,
				  high ? "; the value feeds a kernel launch" : "");
		else
			kj__vfind(P->cx, p->check, row_line(P, p->node), 0, NULL, s, len,
				  p->resolved, "%s", p->reason);
	}
}

static void reach(struct py *P)
{
	KJ__VEC(int) queue = { 0 };
	size_t head = 0, i;

	if (P->entry < 0)
		return;
	P->fns.v[P->entry].reached = 1;
	*KJ__PUSH(&P->cx->work, queue) = P->entry;
	while (head < queue.n) {
		int fn = queue.v[head++];
		struct func *f;

		walk_fn(P, fn);
		f = &P->fns.v[fn];
		report_pending(P, fn);
		for (i = 0; i < f->launches.n; i++)
			P->fns.v[f->launches.v[i]].launched = 1;
		for (i = 0; i < f->extcalls.n; i++) {
			const struct extcall *e = &f->extcalls.v[i];

			if (P->exts.v[e->ext].m)
				kj__vcuda_call(P->cx, P->exts.v[e->ext].m, e->fn, strlen(e->fn));
		}
		for (i = 0; i < f->edges.n; i++) {
			int to = f->edges.v[i];

			if (!P->fns.v[to].reached) {
				P->fns.v[to].reached = 1;
				*KJ__PUSH(&P->cx->work, queue) = to;
			}
		}
	}
}

/* Launch sites anywhere (dead code included), for the type 2 message. */
static int launch_sites(struct py *P)
{
	size_t i;
	int n = 0;

	for (i = 0; i < P->calls.n; i++) {
		uint32_t f = unparen(P, kj__vfield_child(T, P->calls.v[i].node, KJ__F_FUNCTION));
		struct refs r = { 0 };
		int j;

		if (f == KJ__VNONE || N(f).kind != KJ__K_SUBSCRIPT)
			continue;
		resolve(P, kj__vfield_child(T, f, KJ__F_VALUE), P->calls.v[i].fn, &r);
		for (j = 0; j < r.n; j++)
			if (r.r[j].kind == R_FUNC && P->fns.v[r.r[j].idx].is_kernel)
				n++;
	}
	return n;
}

static void report_kernels(struct py *P)
{
	size_t i;
	int any = 0, launched = 0;

	kernel_binds(P);
	for (i = 0; i < P->fns.n; i++) {
		struct func *f = &P->fns.v[i];

		if (!f->is_kernel)
			continue;
		examine_kernel(P, (int)i);
		f = &P->fns.v[i];
		any = 1;
		kj__vkernel(P->cx, f->name, strlen(f->name), row_line(P, f->node), 0,
			    f->tl_use, f->launched, f->launched && f->placeholder);
		if (f->launched) {
			kj__vcalled(P->cx, f->name, strlen(f->name));
			launched = 1;
		}
	}
	if (!any && P->exts.n == 0)
		P->cx->check_error[KJ_VCHECK_KERNEL_EXISTS] = kj__arena_printf(
			&P->cx->out, "no function decorated with @triton.jit");
	if (!launched && P->entry >= 0 && any && !P->cx->check_error[KJ_VCHECK_CALLED])
		P->cx->check_error[KJ_VCHECK_CALLED] = launch_sites(P)
			? kj__arena_printf(&P->cx->out, "%s.%s launches no kernel: every launch is in "
							"dead code or in functions it never calls",
					   P->R->entry_class, P->R->entry_method)
			: kj__arena_printf(&P->cx->out, "%s.%s launches no kernel: the kernels are "
							"never launched (kernel[grid](...))",
					   P->R->entry_class, P->R->entry_method);
}

void kj__vpy_analyze(struct kj__vctx *cx, const struct kj__vtree *t)
{
	struct py PP, *P = &PP;
	uint32_t i;
	size_t e;

	memset(P, 0, sizeof(*P));
	P->cx = cx;
	P->R = cx->rules;
	P->t = t;
	P->node_fn = kj__arena_alloc(&cx->work, (size_t)t->count * sizeof(*P->node_fn));
	P->node_cls = kj__arena_alloc(&cx->work, (size_t)t->count * sizeof(*P->node_cls));
	for (i = 0; i < t->count; i++)
		P->node_fn[i] = P->node_cls[i] = -1;

	new_func(P, FN_MODULE, 0, 0, -1, -1, "<module>");
	collect(P, 0, 0);
	collect_setattrs(P);
	resolve_aliases(P);
	mark_kernels(P);
	build_extensions(P);
	cx->kind = P->exts.n ? KJ_VKIND_CUDA : KJ_VKIND_TRITON;
	find_entry(P);
	mark_tensor_attrs(P);
	whole_file(P);
	reach(P);
	report_kernels(P);
	for (e = 0; e < P->exts.n; e++)
		kj__vcuda_finish(cx, P->exts.v[e].m);
}
