/*
 * cmd_spec.h - what cmd_spec.c shares with cmd_spec_all.c.
 */
#ifndef KJ_CMD_SPEC_H
#define KJ_CMD_SPEC_H

#include "kjudge/spec.h"
#include "cli.h"

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

#endif /* KJ_CMD_SPEC_H */
