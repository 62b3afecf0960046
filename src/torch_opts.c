/*
 * torch_opts.c - the options `kjudge verify` and `kjudge benchmark` share,
 * parsed in one place so that both accept the same values.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/banned.h"

int kj_cli_torch_option(const struct kj_cli_command *cmd, int key,
			const char *arg, struct kj_torch_opts *o)
{
	char *end;

	switch (key) {
	case KJ_OPT_OP_NAME:
		o->op_name = arg;
		return 1;
	case KJ_OPT_VERIFY_DIR:
		o->verify_dir = arg;
		return 1;
	case KJ_OPT_IMPL:
		o->impl_name = arg;
		return 1;
	case KJ_OPT_DEVICE:
		if (strcmp(arg, "cpu") && strcmp(arg, "cuda") && strncmp(arg, "cuda:", 5)) {
			kj_cli_error(cmd, "--device wants cpu or cuda, not '%s'", arg);
			return -1;
		}
		o->device = arg;
		return 1;
	case KJ_OPT_TIMEOUT:
		o->timeout_s = strtod(arg, &end);
		if (end == arg || *end || !(o->timeout_s > 0) || o->timeout_s > 1e9) {
			kj_cli_error(cmd, "option '--timeout' wants a positive number "
				     "of seconds, not '%s'", arg);
			return -1;
		}
		return 1;
	case KJ_OPT_SEED:
		errno = 0;
		o->seed = strtoull(arg, &end, 10);
		if (errno || end == arg || *end || arg[0] == '-') {
			kj_cli_error(cmd, "option '--seed' wants a whole number, "
				     "not '%s'", arg);
			return -1;
		}
		o->seed_fixed = 1;
		return 1;
	case KJ_OPT_PYTHON:
		o->python = arg;
		return 1;
	default:
		return 0;
	}
}

int kj_cli_write_json(const struct kj_cli_command *cmd, const char *path,
		      const json_t *j)
{
	char *text = json_dumps(j, JSON_INDENT(2) | JSON_REAL_PRECISION(12));
	struct kj_error err;
	size_t len;
	char *t2;
	int rc;

	if (!text) {
		kj_cli_error(cmd, "out of memory");
		return -1;
	}
	len = strlen(text);
	t2 = realloc(text, len + 2);
	if (!t2) {
		free(text);
		kj_cli_error(cmd, "out of memory");
		return -1;
	}
	text = t2;
	text[len] = '\n';
	text[len + 1] = '\0';
	rc = kj_write_file_atomic(path, text, len + 1, &err);
	free(text);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		return -1;
	}
	return 0;
}

int kj_cli_torch_check(const struct kj_cli_command *cmd, int argc, char **argv,
		       const struct kj_torch_opts *o)
{
	if (kj_cli_optind() != argc)
		return kj_cli_error(cmd, "unexpected argument '%s'", argv[kj_cli_optind()]);
	if (!o->op_name)
		return kj_cli_error(cmd, "--op_name is required");
	return 0;
}
