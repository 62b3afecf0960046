/*
 * validate_rules.c - rule files: the schema, merging a task's file over the
 * compiled-in defaults, and compiling name lists for fast matching.
 *
 * A rule file is JSON (docs/validate.md): sections of lists of names and a
 * few settings.  A task's file extends the defaults: each list it gives is
 * appended to the default list, each setting replaces the default one; with
 * "extends": "none" the default lists start empty (settings keep their
 * defaults unless given).  Names are matched exactly, or by prefix when they
 * end in '*'.  Where a check has both an allow and a deny list, allow wins,
 * so a task opens one call with one line ("forward": {"allow":
 * ["torch.matmul"]}) without restating the deny list.
 *
 * Unknown sections and keys are errors, not ignored: a misspelt key in a
 * task's rules would otherwise silently leave the defaults in force.  Keys
 * that start with '_' are comments and are skipped.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "validate/validate_internal.h"
#include "base/json.h"

#define RULES_FORMAT "kjudge-validate-rules/1"

enum rtype { R_LIST, R_BOOL, R_STRING, R_LOOPS, R_FAIL_ON };

struct rkey {
	const char *section;
	const char *key;
	enum rtype type;
	size_t off;
};

#define L(sec, key, field) { sec, key, R_LIST, offsetof(struct kj_vrules, field) }
#define S(sec, key, type, field) { sec, key, type, offsetof(struct kj_vrules, field) }

static const struct rkey schema[] = {
	S("entry", "class", R_STRING, entry_class),
	S("entry", "method", R_STRING, entry_method),
	L("kernels", "triton_decorators", triton_decorators),
	L("kernels", "triton_language", triton_language),
	L("kernels", "extension_loaders", extension_loaders),
	L("forward", "allow", fwd_allow),
	L("forward", "deny", fwd_deny),
	L("forward", "tensor_methods_allow", method_allow),
	L("forward", "tensor_methods_deny", method_deny),
	L("forward", "operators_deny", operators_deny),
	S("forward", "tensor_arithmetic", R_BOOL, tensor_arith),
	L("forward", "tensor_factories", tensor_factories),
	L("forward", "tensor_view_methods", tensor_views),
	S("forward", "loops", R_LOOPS, loops),
	L("forward", "entry_bases_allow", entry_bases_allow),
	L("forward", "reference_classes", reference_classes),
	L("module_wide", "allow", mw_allow),
	L("module_wide", "deny", mw_deny),
	L("module_wide", "assign_deny", mw_assign_deny),
	L("module_wide", "star_import_deny", mw_star_deny),
	S("module_wide", "weight_holders", R_BOOL, weight_holders),
	L("dynamic", "calls", dyn_calls),
	L("dynamic", "attributes", dyn_attrs),
	L("dynamic", "getattr_roots", getattr_roots),
	L("dynamic", "getattr_allow", getattr_allow),
	L("host_math", "allow", hm_allow),
	L("host_math", "deny", hm_deny),
	L("host_sync", "methods", sync_methods),
	L("host_sync", "calls", sync_calls),
	S("host_sync", "fail_on", R_FAIL_ON, sync_fail_medium),
	S("placeholder", "enabled", R_BOOL, ph_enabled),
	L("placeholder", "stores", ph_stores),
	L("placeholder", "moves", ph_moves),
	L("placeholder", "non_compute", ph_non_compute),
	L("placeholder", "cuda_loads", ph_cuda_loads),
	L("cuda", "launch_apis", cu_launch_apis),
	L("cuda", "host_allow_calls", cu_allow_calls),
	L("cuda", "host_deny_calls", cu_deny_calls),
	L("cuda", "host_deny_identifiers", cu_deny_ids),
	L("cuda", "tensor_types", cu_tensor_types),
	S("cuda", "forbid_token_paste", R_BOOL, cu_token_paste),
};

#undef L
#undef S

#define N_SCHEMA (sizeof(schema) / sizeof(schema[0]))

static const struct rkey *find_key(const char *section, const char *key)
{
	size_t i;

	for (i = 0; i < N_SCHEMA; i++)
		if (!strcmp(schema[i].section, section) && !strcmp(schema[i].key, key))
			return &schema[i];
	return NULL;
}

static int known_section(const char *section)
{
	size_t i;

	for (i = 0; i < N_SCHEMA; i++)
		if (!strcmp(schema[i].section, section))
			return 1;
	return 0;
}

/* Check one value against its schema entry; `where` names the file. */
static int check_value(const struct rkey *k, json_t *v, const char *where,
		       struct kj_error *err)
{
	size_t i;
	json_t *item;
	const char *s;

	switch (k->type) {
	case R_LIST:
		if (!json_is_array(v))
			return kj_error_set(err, KJ_ERULES, "%s: '%s.%s' must be a list of names",
					    where, k->section, k->key);
		json_array_foreach(v, i, item) {
			s = json_string_value(item);
			if (!s || !*s || (s[0] == '*' && s[1] == '\0'))
				return kj_error_set(err, KJ_ERULES,
						    "%s: '%s.%s' item %zu must be a non-empty name "
						    "(a lone '*' would match everything)",
						    where, k->section, k->key, i);
			if (strchr(s, '*') != s + strlen(s) - 1 && strchr(s, '*'))
				return kj_error_set(err, KJ_ERULES,
						    "%s: '%s.%s' item '%s': '*' may only end a name",
						    where, k->section, k->key, s);
		}
		return KJ_OK;
	case R_BOOL:
		if (!json_is_boolean(v))
			return kj_error_set(err, KJ_ERULES, "%s: '%s.%s' must be true or false",
					    where, k->section, k->key);
		return KJ_OK;
	case R_STRING:
		if (!json_string_value(v) || !*json_string_value(v))
			return kj_error_set(err, KJ_ERULES, "%s: '%s.%s' must be a non-empty string",
					    where, k->section, k->key);
		return KJ_OK;
	case R_LOOPS:
		s = json_string_value(v);
		if (!s || (strcmp(s, "allow") && strcmp(s, "element_compute") && strcmp(s, "deny")))
			return kj_error_set(err, KJ_ERULES,
					    "%s: '%s.%s' must be \"allow\", \"element_compute\" or \"deny\"",
					    where, k->section, k->key);
		return KJ_OK;
	case R_FAIL_ON:
		s = json_string_value(v);
		if (!s || (strcmp(s, "high") && strcmp(s, "medium")))
			return kj_error_set(err, KJ_ERULES, "%s: '%s.%s' must be \"high\" or \"medium\"",
					    where, k->section, k->key);
		return KJ_OK;
	}
	return KJ_OK;
}

/* Check a whole document's shape: known sections and keys, right types. */
static int check_doc(json_t *doc, const char *where, struct kj_error *err)
{
	const char *sec, *key;
	json_t *sv, *v;
	int rc;

	if (!json_is_object(doc))
		return kj_error_set(err, KJ_ERULES, "%s: a rule file is a JSON object", where);
	json_object_foreach(doc, sec, sv) {
		if (sec[0] == '_' || !strcmp(sec, "description"))
			continue;
		if (!strcmp(sec, "format")) {
			if (!json_string_value(sv) || strcmp(json_string_value(sv), RULES_FORMAT))
				return kj_error_set(err, KJ_ERULES, "%s: 'format' must be \"%s\"",
						    where, RULES_FORMAT);
			continue;
		}
		if (!strcmp(sec, "extends")) {
			const char *e = json_string_value(sv);

			if (!e || (strcmp(e, "default") && strcmp(e, "none")))
				return kj_error_set(err, KJ_ERULES,
						    "%s: 'extends' must be \"default\" or \"none\"", where);
			continue;
		}
		if (!known_section(sec))
			return kj_error_set(err, KJ_ERULES, "%s: unknown section '%s'", where, sec);
		if (!json_is_object(sv))
			return kj_error_set(err, KJ_ERULES, "%s: section '%s' must be an object",
					    where, sec);
		json_object_foreach(sv, key, v) {
			const struct rkey *k;

			if (key[0] == '_')
				continue;
			k = find_key(sec, key);
			if (!k)
				return kj_error_set(err, KJ_ERULES, "%s: unknown key '%s.%s'",
						    where, sec, key);
			rc = check_value(k, v, where, err);
			if (rc)
				return rc;
		}
	}
	return KJ_OK;
}

/* Merge `over` into `base` (both checked): lists appended, settings
 * replaced.  `clear_lists`: empty base's lists first. */
static int merge(json_t *base, json_t *over, int clear_lists)
{
	size_t i;

	for (i = 0; i < N_SCHEMA; i++) {
		const struct rkey *k = &schema[i];
		json_t *bs = json_object_get(base, k->section);
		json_t *os = json_object_get(over, k->section);
		json_t *ov = os ? json_object_get(os, k->key) : NULL;

		if (!bs) {
			bs = json_object();
			if (!bs || json_object_set_new(base, k->section, bs))
				return -1;
		}
		if (k->type == R_LIST) {
			json_t *bl = json_object_get(bs, k->key);

			if (!bl || clear_lists) {
				bl = json_array();
				if (!bl || json_object_set_new(bs, k->key, bl))
					return -1;
			}
			if (ov && json_array_extend(bl, ov))
				return -1;
		} else if (ov) {
			if (json_object_set(bs, k->key, ov))
				return -1;
		}
	}
	if (json_object_get(over, "description") &&
	    json_object_set(base, "description", json_object_get(over, "description")))
		return -1;
	return 0;
}

static int compile_list(struct kj_vrules *r, struct kj__vlist *l, json_t *arr)
{
	size_t i, n = json_array_size(arr), np = 0;
	json_t *item;

	memset(l, 0, sizeof(*l));
	l->prefix = kj__arena_alloc(&r->mem, (n ? n : 1) * sizeof(*l->prefix));
	if (!l->prefix)
		return -1;
	json_array_foreach(arr, i, item) {
		const char *s = json_string_value(item);
		size_t len = strlen(s);

		if (s[len - 1] == '*') {
			char *p = kj__arena_strndup(&r->mem, s, len - 1);

			if (!p)
				return -1;
			l->prefix[np++] = p;
		} else {
			void **slot = kj__vmap_put(&r->mem, &l->exact, s, len);

			if (!slot)
				return -1;
			*slot = (void *)1;
		}
	}
	l->n_prefix = np;
	l->n = n;
	return 0;
}

int kj__vlist_match(const struct kj__vlist *l, const char *name, size_t len)
{
	size_t i;

	if (kj__vmap_get(&l->exact, name, len))
		return 1;
	for (i = 0; i < l->n_prefix; i++) {
		size_t pl = strlen(l->prefix[i]);

		if (len >= pl && !memcmp(name, l->prefix[i], pl))
			return 1;
	}
	return 0;
}

static int compile(struct kj_vrules *r, struct kj_error *err)
{
	size_t i;

	for (i = 0; i < N_SCHEMA; i++) {
		const struct rkey *k = &schema[i];
		json_t *v = json_object_get(json_object_get(r->doc, k->section), k->key);
		char *field = (char *)r + k->off;
		const char *s = json_string_value(v);

		switch (k->type) {
		case R_LIST:
			if (compile_list(r, (struct kj__vlist *)(void *)field, v))
				return kj_error_set(err, KJ_ENOMEM, "out of memory for rules");
			break;
		case R_BOOL:
			*(int *)(void *)field = json_is_true(v);
			break;
		case R_STRING:
			if (!s)
				return kj_error_set(err, KJ_ERULES, "rules: '%s.%s' is missing",
						    k->section, k->key);
			*(const char **)(void *)field = s;
			break;
		case R_LOOPS:
			*(int *)(void *)field = !s || !strcmp(s, "element_compute")
							? KJ__LOOPS_ELEMENT
							: !strcmp(s, "deny") ? KJ__LOOPS_DENY
									     : KJ__LOOPS_ALLOW;
			break;
		case R_FAIL_ON:
			*(int *)(void *)field = s && !strcmp(s, "medium");
			break;
		}
	}
	return KJ_OK;
}

int kj_vrules_new(struct kj_vrules **out, const char *path, struct kj_error *err)
{
	struct kj_vrules *r;
	json_t *def, *over = NULL;
	json_error_t jerr;
	int rc, oom;

	*out = NULL;
	def = kj__json_loadb(kj__vrules_default, kj__vrules_default_len,
			     JSON_REJECT_DUPLICATES, &jerr, &oom);
	if (!def)
		return oom ? kj_error_set(err, KJ_ENOMEM, "out of memory reading the built-in rules")
			   : kj_error_set(err, KJ_ERULES, "built-in rules: %s (line %d)",
					  jerr.text, jerr.line);
	rc = check_doc(def, "built-in rules", err);
	if (rc) {
		json_decref(def);
		return rc;
	}
	if (path) {
		const char *ext;

		over = kj__json_load_file(path, JSON_REJECT_DUPLICATES, &jerr, &oom);
		if (!over) {
			json_decref(def);
			if (oom)
				return kj_error_set(err, KJ_ENOMEM, "'%s': out of memory reading it",
						    path);
			/* A file that cannot be read (missing, a FIFO) says so
			 * itself; a parse error has its line. */
			if (json_error_code(&jerr) == json_error_cannot_open_file)
				return kj_error_set(err, KJ_ERULES, "%s", jerr.text);
			return kj_error_set(err, KJ_ERULES, "'%s': %s (line %d)", path, jerr.text,
					    jerr.line);
		}
		rc = check_doc(over, path, err);
		ext = json_string_value(json_object_get(over, "extends"));
		if (!rc && merge(def, over, ext && !strcmp(ext, "none")))
			rc = kj_error_set(err, KJ_ENOMEM, "out of memory merging rules");
		json_decref(over);
		if (rc) {
			json_decref(def);
			return rc;
		}
		json_object_del(def, "extends");
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		json_decref(def);
		return kj_error_set(err, KJ_ENOMEM, "out of memory for rules");
	}
	kj__arena_init(&r->mem, (size_t)64 << 20, NULL);
	r->doc = def;
	rc = compile(r, err);
	if (rc) {
		kj_vrules_free(r);
		return rc;
	}
	*out = r;
	return KJ_OK;
}

void kj_vrules_free(struct kj_vrules *r)
{
	if (!r)
		return;
	kj__arena_release(&r->mem);
	json_decref(r->doc);
	free(r);
}

json_t *kj_vrules_json(const struct kj_vrules *r)
{
	return json_deep_copy(r->doc);
}
