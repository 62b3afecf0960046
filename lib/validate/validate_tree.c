/*
 * validate_tree.c - the validator's plumbing: arenas, string maps, and
 * tree-sitter turned into a flat tree.
 *
 * Why a flat tree: tree-sitter's node API finds the i-th child by walking
 * from the first, and a sibling by going through the parent, so analyses
 * that look around a node pay for it again and again.  One pass of a tree
 * cursor copies every node (anonymous tokens included) into an array with
 * parent, first-child and next-sibling indices and the grammar symbol turned
 * into a small enum, and the tree-sitter tree is freed at once.  The copy
 * also bounds the nesting depth, so the recursive analyses that follow
 * cannot exhaust the stack on hostile input.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate_internal.h"

/* --- arenas ------------------------------------------------------------- */

struct kj__arena_chunk {
	struct kj__arena_chunk *next;
	size_t size, used;
	max_align_t data[];
};

#define CHUNK_MIN ((size_t)64 << 10)

void kj__arena_init(struct kj__arena *a, size_t limit, jmp_buf *fail)
{
	a->head = NULL;
	a->total = 0;
	a->limit = limit;
	a->fail = fail;
}

void kj__arena_release(struct kj__arena *a)
{
	struct kj__arena_chunk *c = a->head, *next;

	for (; c; c = next) {
		next = c->next;
		free(c);
	}
	a->head = NULL;
	a->total = 0;
}

static void *arena_fail(struct kj__arena *a)
{
	if (a->fail)
		longjmp(*a->fail, 1);
	return NULL;
}

void *kj__arena_alloc(struct kj__arena *a, size_t n)
{
	const size_t align = sizeof(max_align_t);
	struct kj__arena_chunk *c = a->head;
	size_t need = (n + align - 1) / align * align, size;
	void *p;

	if (need < n)
		return arena_fail(a);
	if (!c || c->size - c->used < need) {
		size = need > CHUNK_MIN ? need : CHUNK_MIN;
		if (size > a->limit || a->total > a->limit - size)
			return arena_fail(a);
		c = malloc(sizeof(*c) + size);
		if (!c)
			return arena_fail(a);
		c->size = size;
		c->used = 0;
		/* A big block gets a chunk of its own behind the current one,
		 * so that the current chunk's free room is not wasted. */
		if (a->head && need > CHUNK_MIN) {
			c->next = a->head->next;
			a->head->next = c;
		} else {
			c->next = a->head;
			a->head = c;
		}
		a->total += size;
	}
	p = (char *)c->data + c->used;
	c->used += need;
	memset(p, 0, n);
	return p;
}

char *kj__arena_strndup(struct kj__arena *a, const char *s, size_t n)
{
	char *p = kj__arena_alloc(a, n + 1);

	if (p && n)
		memcpy(p, s, n);
	return p;
}

char *kj__arena_printf(struct kj__arena *a, const char *fmt, ...)
{
	va_list ap;
	char small[256], *p;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(small, sizeof(small), fmt, ap);
	va_end(ap);
	if (n < 0)
		n = 0;
	p = kj__arena_alloc(a, (size_t)n + 1);
	if (!p)
		return NULL;
	if ((size_t)n < sizeof(small)) {
		memcpy(p, small, (size_t)n + 1);
	} else {
		va_start(ap, fmt);
		vsnprintf(p, (size_t)n + 1, fmt, ap);
		va_end(ap);
	}
	return p;
}

void *kj__arena_grow(struct kj__arena *a, void *old, size_t n, size_t *cap,
		     size_t elem)
{
	size_t ncap = *cap ? *cap * 2 : 8;
	void *p;

	if (n < *cap)
		return old;
	if (ncap > SIZE_MAX / elem)
		return arena_fail(a);
	p = kj__arena_alloc(a, ncap * elem);
	if (!p)
		return NULL;
	if (n)
		memcpy(p, old, n * elem);
	*cap = ncap;
	return p;
}

/* --- string maps -------------------------------------------------------- */

static uint32_t hash_bytes(const char *s, size_t n)
{
	uint32_t h = 2166136261u; /* FNV-1a */
	size_t i;

	for (i = 0; i < n; i++) {
		h ^= (unsigned char)s[i];
		h *= 16777619u;
	}
	return h;
}

void **kj__vmap_get(const struct kj__vmap *m, const char *s, size_t len)
{
	uint32_t h;
	size_t i;

	if (!m->cap)
		return NULL;
	h = hash_bytes(s, len);
	for (i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
		struct kj__vmap_slot *e = &m->slots[i];

		if (!e->key)
			return NULL;
		if (e->hash == h && e->len == len && !memcmp(e->key, s, len))
			return &e->val;
	}
}

void **kj__vmap_put(struct kj__arena *a, struct kj__vmap *m, const char *s,
		    size_t len)
{
	void **slot = kj__vmap_get(m, s, len);
	uint32_t h = hash_bytes(s, len);
	size_t i;

	if (slot)
		return slot;
	if (len > UINT32_MAX)
		return arena_fail(a);
	if ((m->n + 1) * 2 > m->cap) { /* keep the load at most one half */
		size_t ncap = m->cap ? m->cap * 2 : 16, j;
		struct kj__vmap_slot *ns = kj__arena_alloc(a, ncap * sizeof(*ns));

		if (!ns)
			return NULL;
		for (j = 0; j < m->cap; j++) {
			struct kj__vmap_slot *e = &m->slots[j];

			if (!e->key)
				continue;
			for (i = e->hash & (ncap - 1); ns[i].key; i = (i + 1) & (ncap - 1))
				;
			ns[i] = *e;
		}
		m->slots = ns;
		m->cap = ncap;
	}
	for (i = h & (m->cap - 1); m->slots[i].key; i = (i + 1) & (m->cap - 1))
		;
	m->slots[i].key = kj__arena_strndup(a, s, len);
	if (!m->slots[i].key)
		return NULL;
	m->slots[i].len = (uint32_t)len;
	m->slots[i].hash = h;
	m->slots[i].val = NULL;
	m->n++;
	return &m->slots[i].val;
}

/* --- tree helpers ------------------------------------------------------- */

uint32_t kj__vfield_child(const struct kj__vtree *t, uint32_t i,
			  enum kj__vfield f)
{
	uint32_t c;

	if (i == KJ__VNONE)
		return KJ__VNONE;
	KJ__EACH_CHILD(t, i, c)
		if (t->n[c].field == f)
			return c;
	return KJ__VNONE;
}

uint32_t kj__vkind_child(const struct kj__vtree *t, uint32_t i,
			 enum kj__vkind k)
{
	uint32_t c;

	if (i == KJ__VNONE)
		return KJ__VNONE;
	KJ__EACH_CHILD(t, i, c)
		if (t->n[c].kind == k)
			return c;
	return KJ__VNONE;
}

int kj__vtext_is(const struct kj__vtree *t, uint32_t i, const char *s)
{
	size_t n, m = strlen(s);
	const char *p = kj__vtext(t, i, &n);

	return n == m && !memcmp(p, s, n);
}

int kj__vinside(const struct kj__vtree *t, uint32_t a, uint32_t b)
{
	return t->n[a].start >= t->n[b].start && t->n[a].end <= t->n[b].end;
}

/* --- grammars ----------------------------------------------------------- */

struct kind_name {
	const char *name;
	int named;
	enum kj__vkind kind;
};

/* Names shared by both grammars. */
static const struct kind_name common_kinds[] = {
	{ "comment", 1, KJ__K_COMMENT },
	{ "identifier", 1, KJ__K_IDENT },
	{ "string_content", 1, KJ__K_STRING_CONTENT },
	{ "escape_sequence", 1, KJ__K_ESCAPE },
	{ "true", 1, KJ__K_TRUE },
	{ "false", 1, KJ__K_FALSE },
	{ "parenthesized_expression", 1, KJ__K_PAREN },
	{ "argument_list", 1, KJ__K_ARGS },
	{ "if_statement", 1, KJ__K_IF },
	{ "else_clause", 1, KJ__K_ELSE },
	{ "for_statement", 1, KJ__K_FOR },
	{ "while_statement", 1, KJ__K_WHILE },
	{ "return_statement", 1, KJ__K_RETURN },
	{ "break_statement", 1, KJ__K_BREAK },
	{ "continue_statement", 1, KJ__K_CONTINUE },
	{ "concatenated_string", 1, KJ__K_PY_CONCAT_STRING },
};

static const struct kind_name python_kinds[] = {
	{ "string", 1, KJ__K_STRING },
	{ "none", 1, KJ__K_NONE },
	{ "integer", 1, KJ__K_INTEGER },
	{ "float", 1, KJ__K_FLOAT },
	{ "binary_operator", 1, KJ__K_BINOP },
	{ "call", 1, KJ__K_CALL },
	{ "keyword_argument", 1, KJ__K_KWARG },
	{ "subscript", 1, KJ__K_SUBSCRIPT },
	{ "lambda", 1, KJ__K_LAMBDA },
	{ "module", 1, KJ__K_PY_MODULE },
	{ "function_definition", 1, KJ__K_PY_FUNCDEF },
	{ "decorated_definition", 1, KJ__K_PY_DECORATED },
	{ "decorator", 1, KJ__K_PY_DECORATOR },
	{ "class_definition", 1, KJ__K_PY_CLASSDEF },
	{ "block", 1, KJ__K_PY_BLOCK },
	{ "expression_statement", 1, KJ__K_PY_EXPR_STMT },
	{ "assignment", 1, KJ__K_PY_ASSIGN },
	{ "augmented_assignment", 1, KJ__K_PY_AUGASSIGN },
	{ "attribute", 1, KJ__K_PY_ATTRIBUTE },
	{ "string_start", 1, KJ__K_PY_STRING_START },
	{ "interpolation", 1, KJ__K_PY_INTERPOLATION },
	{ "escape_interpolation", 1, KJ__K_PY_ESCAPE_INTERP },
	{ "import_statement", 1, KJ__K_PY_IMPORT },
	{ "import_from_statement", 1, KJ__K_PY_IMPORT_FROM },
	{ "future_import_statement", 1, KJ__K_PY_FUTURE_IMPORT },
	{ "aliased_import", 1, KJ__K_PY_ALIASED_IMPORT },
	{ "dotted_name", 1, KJ__K_PY_DOTTED_NAME },
	{ "wildcard_import", 1, KJ__K_PY_WILDCARD },
	{ "relative_import", 1, KJ__K_PY_RELATIVE_IMPORT },
	{ "elif_clause", 1, KJ__K_PY_ELIF },
	{ "try_statement", 1, KJ__K_PY_TRY },
	{ "except_clause", 1, KJ__K_PY_EXCEPT },
	{ "except_group_clause", 1, KJ__K_PY_EXCEPT },
	{ "raise_statement", 1, KJ__K_PY_RAISE },
	{ "list", 1, KJ__K_PY_LIST },
	{ "tuple", 1, KJ__K_PY_TUPLE },
	{ "expression_list", 1, KJ__K_PY_EXPR_LIST },
	{ "pattern_list", 1, KJ__K_PY_PATTERN_LIST },
	{ "unary_operator", 1, KJ__K_PY_UNARY },
	{ "not_operator", 1, KJ__K_PY_NOT },
	{ "boolean_operator", 1, KJ__K_PY_BOOLOP },
	{ "conditional_expression", 1, KJ__K_PY_CONDEXPR },
	{ "parameters", 1, KJ__K_PY_PARAMETERS },
	{ "lambda_parameters", 1, KJ__K_PY_LAMBDA_PARAMS },
	{ "typed_parameter", 1, KJ__K_PY_TYPED_PARAM },
	{ "default_parameter", 1, KJ__K_PY_DEFAULT_PARAM },
	{ "typed_default_parameter", 1, KJ__K_PY_TYPED_DEFAULT_PARAM },
	{ "list_splat_pattern", 1, KJ__K_PY_LIST_SPLAT_PATTERN },
	{ "dictionary_splat_pattern", 1, KJ__K_PY_DICT_SPLAT_PATTERN },
	{ "exec_statement", 1, KJ__K_PY_EXEC_STMT },
	{ "generator_expression", 1, KJ__K_PY_GENERATOR },
	{ "list_comprehension", 1, KJ__K_PY_GENERATOR },
	{ "set_comprehension", 1, KJ__K_PY_GENERATOR },
	{ "set", 1, KJ__K_PY_LIST },
};

static const struct kind_name cuda_kinds[] = {
	{ "string_literal", 1, KJ__K_STRING },
	{ "null", 1, KJ__K_NONE },
	{ "nullptr", 1, KJ__K_NONE },
	{ "number_literal", 1, KJ__K_C_NUMBER },
	{ "binary_expression", 1, KJ__K_BINOP },
	{ "call_expression", 1, KJ__K_CALL },
	{ "subscript_expression", 1, KJ__K_SUBSCRIPT },
	{ "for_range_loop", 1, KJ__K_FOR },
	{ "do_statement", 1, KJ__K_WHILE },
	{ "lambda_expression", 1, KJ__K_LAMBDA },
	{ "translation_unit", 1, KJ__K_C_UNIT },
	{ "function_definition", 1, KJ__K_C_FUNCDEF },
	{ "function_declarator", 1, KJ__K_C_FUNC_DECLARATOR },
	{ "kernel_call_syntax", 1, KJ__K_C_KERNEL_CALL },
	{ "qualified_identifier", 1, KJ__K_C_QUALIFIED_ID },
	{ "template_function", 1, KJ__K_C_TEMPLATE_FUNC },
	{ "template_method", 1, KJ__K_C_TEMPLATE_METHOD },
	{ "field_expression", 1, KJ__K_C_FIELD_EXPR },
	{ "field_identifier", 1, KJ__K_C_FIELD_ID },
	{ "namespace_identifier", 1, KJ__K_C_NAMESPACE_ID },
	{ "type_identifier", 1, KJ__K_C_TYPE_ID },
	{ "raw_string_literal", 1, KJ__K_C_RAW_STRING },
	{ "pointer_expression", 1, KJ__K_C_POINTER_EXPR },
	{ "cast_expression", 1, KJ__K_C_CAST },
	{ "assignment_expression", 1, KJ__K_C_ASSIGN },
	{ "declaration", 1, KJ__K_C_DECLARATION },
	{ "init_declarator", 1, KJ__K_C_INIT_DECLARATOR },
	{ "parameter_declaration", 1, KJ__K_C_PARAM_DECL },
	{ "optional_parameter_declaration", 1, KJ__K_C_PARAM_DECL },
	{ "compound_statement", 1, KJ__K_C_COMPOUND },
	{ "unary_expression", 1, KJ__K_C_UNARY },
	{ "update_expression", 1, KJ__K_C_UPDATE },
	{ "preproc_def", 1, KJ__K_C_PREPROC_DEF },
	{ "preproc_function_def", 1, KJ__K_C_PREPROC_FUNC_DEF },
	{ "preproc_arg", 1, KJ__K_C_PREPROC_ARG },
	{ "preproc_if", 1, KJ__K_C_PREPROC_IF },
	{ "preproc_ifdef", 1, KJ__K_C_PREPROC_IFDEF },
	{ "preproc_else", 1, KJ__K_C_PREPROC_ELSE },
	{ "preproc_elif", 1, KJ__K_C_PREPROC_ELIF },
	{ "__global__", 0, KJ__K_C_GLOBAL_KW },
	{ "__device__", 0, KJ__K_C_DEVICE_KW },
	{ "__host__", 0, KJ__K_C_HOST_KW },
	{ "pointer_declarator", 1, KJ__K_C_DECLARATOR_MISC },
	{ "reference_declarator", 1, KJ__K_C_DECLARATOR_MISC },
	{ "array_declarator", 1, KJ__K_C_DECLARATOR_MISC },
	{ "primitive_type", 1, KJ__K_C_PRIMITIVE_TYPE },
	{ "comma_expression", 1, KJ__K_C_COMMA_EXPR },
	{ "conditional_expression", 1, KJ__K_C_CONDEXPR },
	{ "template_type", 1, KJ__K_C_TEMPLATE_TYPE },
};

static const char *const field_names[KJ__F_COUNT_] = {
	[KJ__F_FUNCTION] = "function",
	[KJ__F_ARGUMENTS] = "arguments",
	[KJ__F_OBJECT] = "object",
	[KJ__F_ATTRIBUTE] = "attribute",
	[KJ__F_LEFT] = "left",
	[KJ__F_RIGHT] = "right",
	[KJ__F_NAME] = "name",
	[KJ__F_BODY] = "body",
	[KJ__F_VALUE] = "value",
	[KJ__F_SUBSCRIPT] = "subscript",
	[KJ__F_CONDITION] = "condition",
	[KJ__F_CONSEQUENCE] = "consequence",
	[KJ__F_ALTERNATIVE] = "alternative",
	[KJ__F_DEFINITION] = "definition",
	[KJ__F_SUPERCLASSES] = "superclasses",
	[KJ__F_MODULE_NAME] = "module_name",
	[KJ__F_ALIAS] = "alias",
	[KJ__F_PARAMETERS] = "parameters",
	[KJ__F_OPERATOR] = "operator",
	[KJ__F_CODE] = "code",
	[KJ__F_DECLARATOR] = "declarator",
	[KJ__F_TYPE] = "type",
	[KJ__F_ARGUMENT] = "argument",
	[KJ__F_FIELD] = "field",
	[KJ__F_SCOPE] = "scope",
	[KJ__F_INDICES] = "indices",
};

static enum kj__vkind lookup_kind(const struct kind_name *tab, size_t n,
				  const char *name, int named)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tab[i].named == named && !strcmp(tab[i].name, name))
			return tab[i].kind;
	return KJ__K_COUNT_;
}

int kj__vgrammar_init(struct kj__vgrammar *g, const TSLanguage *ts, int python,
		      struct kj_error *err)
{
	uint32_t s, f;

	memset(g, 0, sizeof(*g));
	g->ts = ts;
	g->n_symbols = ts_language_symbol_count(ts);
	g->n_fields = ts_language_field_count(ts) + 1;
	g->kind_of = calloc(g->n_symbols, sizeof(*g->kind_of));
	g->field_of = calloc(g->n_fields, sizeof(*g->field_of));
	if (!g->kind_of || !g->field_of) {
		kj__vgrammar_release(g);
		return kj_error_set(err, KJ_ENOMEM, "out of memory for grammar tables");
	}
	for (s = 0; s < g->n_symbols; s++) {
		const char *name = ts_language_symbol_name(ts, (TSSymbol)s);
		int named = ts_language_symbol_type(ts, (TSSymbol)s) ==
			    TSSymbolTypeRegular;
		enum kj__vkind k;

		if (!name)
			continue;
		k = lookup_kind(common_kinds, sizeof(common_kinds) / sizeof(common_kinds[0]),
				name, named);
		if (k == KJ__K_COUNT_)
			k = python ? lookup_kind(python_kinds,
						 sizeof(python_kinds) / sizeof(python_kinds[0]),
						 name, named)
				   : lookup_kind(cuda_kinds,
						 sizeof(cuda_kinds) / sizeof(cuda_kinds[0]),
						 name, named);
		if (k == KJ__K_COUNT_)
			k = named ? KJ__K_OTHER : KJ__K_ANON;
		g->kind_of[s] = (uint16_t)k;
	}
	for (f = 1; f < g->n_fields; f++) {
		const char *name = ts_language_field_name_for_id(ts, (TSFieldId)f);
		int i;

		for (i = 1; name && i < KJ__F_COUNT_; i++)
			if (!strcmp(field_names[i], name))
				g->field_of[f] = (uint16_t)i;
	}
	return KJ_OK;
}

void kj__vgrammar_release(struct kj__vgrammar *g)
{
	free(g->kind_of);
	free(g->field_of);
	g->kind_of = NULL;
	g->field_of = NULL;
}

/* --- parsing ------------------------------------------------------------ */

/* Longest a parse may take: a generous bound for the largest file accepted,
 * so that input built to make error recovery explode ends as an error. */
#define PARSE_TIMEOUT_US (10u * 1000 * 1000)

static void set_node(struct kj__vnode *d, TSNode n, const struct kj__vgrammar *g,
		     TSFieldId field, uint32_t parent)
{
	TSSymbol sym = ts_node_symbol(n);

	d->start = ts_node_start_byte(n);
	d->end = ts_node_end_byte(n);
	d->row = ts_node_start_point(n).row;
	d->parent = parent;
	d->child = d->next = KJ__VNONE;
	if (ts_node_is_error(n))
		d->kind = KJ__K_ERROR;
	else
		d->kind = sym < g->n_symbols ? g->kind_of[sym] : KJ__K_OTHER;
	d->field = field < g->n_fields ? g->field_of[field] : KJ__F_NONE;
}

int kj__vparse(struct kj__vctx *cx, TSParser *p, const struct kj__vgrammar *g,
	       const char *src, size_t len, struct kj__vtree *out)
{
	TSTree *tree;
	TSTreeCursor c;
	TSNode root;
	uint32_t count, cur, used, depth = 0;
	int too_deep = 0, has_error;

	memset(out, 0, sizeof(*out));
	if (len > UINT32_MAX / 2)
		return kj_error_set(cx->err, KJ_ELIMIT, "'%s': too large to parse",
				    cx->name);
	ts_parser_reset(p);
	if (!ts_parser_set_language(p, g->ts))
		return kj_error_set(cx->err, KJ_EINVAL,
				    "grammar version not supported by the runtime");
	ts_parser_set_timeout_micros(p, PARSE_TIMEOUT_US);
	tree = ts_parser_parse_string(p, NULL, src, (uint32_t)len);
	if (!tree) {
		ts_parser_reset(p);
		return kj_error_set(cx->err, KJ_ELIMIT,
				    "'%s': the parser gave up after %u s",
				    cx->name, PARSE_TIMEOUT_US / 1000000);
	}
	root = ts_tree_root_node(tree);
	count = ts_node_descendant_count(root);
	has_error = ts_node_has_error(root);
	/* The node array is the one allocation here: an arena that cannot
	 * grow jumps away, and the tree must not be left behind. */
	{
		jmp_buf *saved = cx->work.fail;

		cx->work.fail = NULL;
		out->n = count ? kj__arena_alloc(&cx->work, (size_t)count * sizeof(*out->n))
			       : NULL;
		cx->work.fail = saved;
	}
	if (!out->n) {
		ts_tree_delete(tree);
		kj__vabort(cx, KJ_ENOMEM);
	}
	out->src = src;
	out->len = len;
	out->first_error = KJ__VNONE;

	c = ts_tree_cursor_new(root);
	set_node(&out->n[0], root, g, 0, KJ__VNONE);
	used = 1;
	cur = 0;
	for (;;) {
		TSNode n;
		uint32_t next;

		if (ts_tree_cursor_goto_first_child(&c)) {
			if (++depth > KJ__VMAX_DEPTH || used >= count) {
				too_deep = 1;
				break;
			}
			next = used++;
			out->n[cur].child = next;
			n = ts_tree_cursor_current_node(&c);
			set_node(&out->n[next], n, g, ts_tree_cursor_current_field_id(&c), cur);
		} else {
			while (!ts_tree_cursor_goto_next_sibling(&c)) {
				if (!ts_tree_cursor_goto_parent(&c))
					goto done;
				cur = out->n[cur].parent;
				depth--;
			}
			if (used >= count) { /* count covers every node */
				too_deep = 1;
				break;
			}
			next = used++;
			out->n[cur].next = next;
			n = ts_tree_cursor_current_node(&c);
			set_node(&out->n[next], n, g, ts_tree_cursor_current_field_id(&c),
				 out->n[cur].parent);
		}
		/* The first error, narrowed to the innermost error inside it:
		 * recovery often wraps most of a file in one ERROR node, and
		 * its start says nothing about where the mistake is. */
		if ((out->n[next].kind == KJ__K_ERROR || ts_node_is_missing(n)) &&
		    (out->first_error == KJ__VNONE ||
		     (out->n[next].start >= out->n[out->first_error].start &&
		      out->n[next].end <= out->n[out->first_error].end)))
			out->first_error = next;
		cur = next;
	}
done:
	ts_tree_cursor_delete(&c);
	ts_tree_delete(tree);
	out->count = used;
	if (has_error && out->first_error == KJ__VNONE)
		out->first_error = 0;
	if (too_deep)
		return kj_error_set(cx->err, KJ_ELIMIT,
				    "'%s': nests deeper than %d levels",
				    cx->name, KJ__VMAX_DEPTH);
	return KJ_OK;
}
