/*
 * jschema_internal.h - the compiled form of a draft-07 schema, shared by
 * its compiler (jschema.c) and its checker (jschema_check.c).
 *
 * A schema document compiles into one struct kj__jsnode per schema object
 * (or boolean) in it.  A node keeps the keywords that assert something as
 * a list of operations in the order the schema writes them, so that the
 * errors of one instance path come out in the schema's order, as Python's
 * jsonschema reports them; keywords that only annotate (title, default,
 * format...) are checked at compile time and leave nothing behind.  $ref
 * links nodes into a graph that may have cycles; every node is on the
 * schema's own list and freed from there, never through the links.
 *
 * Include it after the system headers, as internal.h.
 */
#ifndef KJ_SPEC_JSCHEMA_INTERNAL_H
#define KJ_SPEC_JSCHEMA_INTERNAL_H

#include <math.h>

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>

#include <jansson.h>

/* Instance types, as the "type" keyword names them. */
enum {
	KJ__JT_NULL = 1 << 0,
	KJ__JT_BOOLEAN = 1 << 1,
	KJ__JT_OBJECT = 1 << 2,
	KJ__JT_ARRAY = 1 << 3,
	KJ__JT_NUMBER = 1 << 4,
	KJ__JT_STRING = 1 << 5,
	KJ__JT_INTEGER = 1 << 6,
};

/* The asserting keywords, one operation each. */
enum kj__jsop {
	KJ__OP_REF,
	KJ__OP_TYPE,
	KJ__OP_ENUM,
	KJ__OP_CONST,
	KJ__OP_REQUIRED,
	KJ__OP_PROPERTIES,
	KJ__OP_PATTERN_PROPERTIES,
	KJ__OP_ADDITIONAL_PROPERTIES,
	KJ__OP_PROPERTY_NAMES,
	KJ__OP_MIN_PROPERTIES,
	KJ__OP_MAX_PROPERTIES,
	KJ__OP_DEPENDENCIES,
	KJ__OP_ITEMS,
	KJ__OP_ADDITIONAL_ITEMS,
	KJ__OP_CONTAINS,
	KJ__OP_MIN_ITEMS,
	KJ__OP_MAX_ITEMS,
	KJ__OP_UNIQUE_ITEMS,
	KJ__OP_MIN_LENGTH,
	KJ__OP_MAX_LENGTH,
	KJ__OP_PATTERN,
	KJ__OP_MINIMUM,
	KJ__OP_MAXIMUM,
	KJ__OP_EXCLUSIVE_MINIMUM,
	KJ__OP_EXCLUSIVE_MAXIMUM,
	KJ__OP_MULTIPLE_OF,
	KJ__OP_ALL_OF,
	KJ__OP_ANY_OF,
	KJ__OP_ONE_OF,
	KJ__OP_NOT,
	KJ__OP_IF,
	KJ__OP_COUNT_
};

struct kj__jsnode;

/* A compiled regex and its source (borrowed from the document). */
struct kj__jsregex {
	pcre2_code *re;
	const char *src;
};

struct kj__jsprop {
	const char *name;  /* borrowed: the key in the document */
	size_t len;
	struct kj__jsnode *s;
};

struct kj__jspat {
	struct kj__jsregex rx;
	struct kj__jsnode *s;
};

/* One "dependencies" entry: a schema, or property names (req). */
struct kj__jsdep {
	const char *name;
	size_t len;
	struct kj__jsnode *s;
	const json_t *req;
};

/* A list of subschemas (allOf, anyOf, oneOf, items as an array). */
struct kj__jslist {
	struct kj__jsnode **v;
	size_t n;
};

struct kj__jsnode {
	int boolean;              /* -1: an object schema; 0: false; 1: true */
	const json_t *js;         /* the schema in the document (borrowed) */
	unsigned char ops[KJ__OP_COUNT_];
	size_t nops;

	struct kj__jsnode *ref;   /* $ref's target, once resolved */
	const char *ref_text;     /* the $ref as written (borrowed) */

	unsigned types;           /* KJ__JT_* of "type" */
	const json_t *type_js, *enum_js, *const_js, *required;
	struct kj__jsprop *props;
	size_t nprops;
	struct kj__jspat *pats;
	size_t npats;
	struct kj__jsnode *addl_props, *prop_names;
	struct kj__jsdep *deps;
	size_t ndeps;
	long long min_props, max_props, min_items, max_items, min_len, max_len;
	struct kj__jsnode *items;      /* "items" as one schema */
	struct kj__jslist items_list;  /* "items" as an array */
	struct kj__jsnode *addl_items, *contains;
	int unique;
	struct kj__jsregex pattern;
	const json_t *minimum, *maximum, *xminimum, *xmaximum, *multiple_of;
	struct kj__jslist all_of, any_of, one_of;
	struct kj__jsnode *not_, *if_, *then_, *else_;

	/* Compile time only: where the node is, for messages and $ref. */
	char *ptr;                /* JSON pointer from the document's root */
	char *base;               /* the base URI its $ref resolves against */
	struct kj__jsnode *next;  /* every node of the schema, for freeing */
};

struct kj_jschema {
	json_t *doc;              /* own reference */
	struct kj__jsnode *root;
	struct kj__jsnode *nodes; /* all of them, through ->next */
};

/* Whether x is an integer as draft-07 counts them: 1.0 is one. */
static inline int kj__json_integral(const json_t *x)
{
	if (json_is_integer(x))
		return 1;
	if (json_is_real(x)) {
		double d = json_real_value(x);
		return isfinite(d) && floor(d) == d;
	}
	return 0;
}

/* JSON equality: numbers by value (1 == 1.0), true and 1 different. */
int kj__json_equal(const json_t *a, const json_t *b);

#endif /* KJ_SPEC_JSCHEMA_INTERNAL_H */
