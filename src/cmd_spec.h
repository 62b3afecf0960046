/*
 * cmd_spec.h - what cmd_spec.c hands to cmd_spec_check.c: the parsed
 * command line, and where in the spec command's option table each option
 * the check subcommands read is.
 */
#ifndef KJ_CMD_SPEC_H
#define KJ_CMD_SPEC_H

#include "cli.h"

/* Indices into kj_spec_options (and so into a->opt). */
struct kj_cmd_spec_opts {
	int root, json, spec, all, manifest, contracts;
};

/* `spec validate`, `spec pairs`, `spec argc` (a->operands[0]): the exit
 * status. */
int kj_cmd_spec_check(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		      const struct kj_cmd_spec_opts *k);

#endif /* KJ_CMD_SPEC_H */
