/*
 * cmd_spec.h - what cmd_spec.c shares with cmd_spec_check.c (the parsed
 * command line, and where in the spec command's option table each option
 * the check subcommands read is) and with cmd_spec_all.c.
 */
#ifndef KJ_CMD_SPEC_H
#define KJ_CMD_SPEC_H

#include "kjudge/spec.h"
#include "cli.h"

/* Indices into kj_spec_options (and so into a->opt). */
struct kj_cmd_spec_opts {
	int root, json, spec, all, manifest, contracts;
};

/* `spec validate`, `spec pairs`, `spec argc` (a->operands[0]): the exit
 * status. */
int kj_cmd_spec_check(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		      const struct kj_cmd_spec_opts *k);

/*
 * `kjudge spec verify --all`: the pristine reference of every spec that
 * root/manifest.jsonl names (apis: a comma list of parallel APIs to keep,
 * or NULL), verified with o (its candidate NULL), a table on stdout or,
 * with json, one JSON document.  Returns the exit code: 0 when every
 * reference passed, 1 when one did not or a spec did not load, 2 when the
 * manifest cannot be read or the judge failed.
 */
int kj__cmd_spec_verify_all(const struct kj_cli_command *cmd, const char *root, const char *apis,
			    const struct kj_spec_verify_opts *o, int json);

/*
 * Bad input for spec verify, or the judge's failure: msg on stderr and,
 * with json, the document {"spec" (spec, when given), "status": "ERROR",
 * "message": msg} on stdout.  Returns the exit code, 2.
 */
int kj__cmd_spec_refuse(const struct kj_cli_command *cmd, const char *spec, int json,
			const char *msg);

#endif /* KJ_CMD_SPEC_H */
