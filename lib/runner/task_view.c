/*
 * task_view.c - the task file as the candidate may see it.
 *
 * The candidate's worker needs the task's input generators (get_inputs,
 * get_input_groups, get_init_inputs and the module-level names they use) to
 * make its inputs, but must never have the reference itself: with the
 * reference class in its process, a candidate could simply call it.  The
 * candidate's sandbox therefore holds a copy of the task file in which the
 * top-level definition of the reference class (with its decorators) is
 * blanked out, found with the same Python parser as `kjudge validate`; line
 * numbers stay as they were.  A task that computes its reference outside
 * that class (say, in a module-level function) shows that code to the
 * candidate: the reference belongs in the class.
 */
#include <stdlib.h>
#include <string.h>

#include <tree_sitter/api.h>

#include "runner/runner_internal.h"

const TSLanguage *tree_sitter_python(void);

static int is_class_named(TSNode n, const char *src, const char *cls)
{
	TSNode name;
	uint32_t a, b;

	if (strcmp(ts_node_type(n), "class_definition") != 0)
		return 0;
	name = ts_node_child_by_field_name(n, "name", 4);
	if (ts_node_is_null(name))
		return 0;
	a = ts_node_start_byte(name);
	b = ts_node_end_byte(name);
	return b - a == strlen(cls) && !memcmp(src + a, cls, b - a);
}

int kj__task_view(const char *src, size_t len, const char *cls, char **out,
		  int *removed)
{
	TSParser *p = ts_parser_new();
	TSTree *tree = NULL;
	TSNode root;
	uint32_t i, n;
	char *view = malloc(len + 1);

	*out = NULL;
	*removed = 0;
	if (!p || !view || !ts_parser_set_language(p, tree_sitter_python()) ||
	    !(tree = ts_parser_parse_string(p, NULL, src, (uint32_t)len))) {
		free(view);
		if (p)
			ts_parser_delete(p);
		return -1;
	}
	memcpy(view, src, len);
	view[len] = '\0';
	root = ts_tree_root_node(tree);
	n = ts_node_named_child_count(root);
	for (i = 0; i < n; i++) {
		TSNode c = ts_node_named_child(root, i), def = c;
		uint32_t a, b, k;

		if (!strcmp(ts_node_type(c), "decorated_definition"))
			def = ts_node_child_by_field_name(c, "definition", 10);
		if (ts_node_is_null(def) || !is_class_named(def, src, cls))
			continue;
		a = ts_node_start_byte(c);
		b = ts_node_end_byte(c);
		for (k = a; k < b && k < len; k++)
			if (view[k] != '\n')
				view[k] = ' ';
		(*removed)++;
	}
	ts_tree_delete(tree);
	ts_parser_delete(p);
	*out = view;
	return 0;
}
