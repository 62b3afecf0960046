/*
 * cmd_merge.c - `kjudge merge SHARD.db... --db FILE`: shard stores folded
 * into one (lib/store/merge.c), idempotently.
 *
 * Every source is checked before anything is written (a file that is not
 * a kjudge store, a corrupt one, a newer schema: exit 2, the target as it
 * was); then each is merged in a transaction of its own, so a merge killed
 * midway leaves the target with some sources whole and the others not at
 * all, and the same command finishes it.
 *
 * Exit: 0 every source merged, 1 the judge failed (a full disk), 2 bad
 * input.
 */
#include <stdio.h>
#include <string.h>

#include "kjudge/store.h"
#include "cli.h"
#include "cmd_eval.h"
#include "base/banned.h"

enum {
	OPT_DB,
	OPT_QUIET,
	OPT_COUNT_
};

const struct kj_cli_option kj_merge_options[] = {
	[OPT_DB] = { .name = "db", .type = KJ_CLI_STRING, .metavar = "FILE",
		     .flags = KJ_CLI_REQUIRED,
		     .help = "the store to merge into (created when missing)" },
	[OPT_QUIET] = { .name = "quiet", .short_name = 'q', .type = KJ_CLI_FLAG,
			.help = "only errors" },
	[OPT_COUNT_] = { .name = NULL },
};

int kj__cmd_merge_one(const struct kj_cli_command *cmd, struct kj_store *s, const char *src,
		      const char *label, FILE *out, struct kj_error *err)
{
	struct kj_store_merge_stats st;

	if (kj_store_merge(s, src, &st, err) != KJ_OK) {
		kj_cli_error(cmd, "%s", err->msg);
		return -1;
	}
	if (out) {
		fprintf(out, "kjudge %s: %s: %lld attempts new, %lld replacing judge errors, %lld "
			"already there", cmd->name, kj_cli_shown(label), st.attempts_new,
			st.attempts_replaced, st.attempts_same);
		if (st.attempts_running)
			fprintf(out, ", %lld still running there (left out)", st.attempts_running);
		fprintf(out, "\n");
		fflush(out);
	}
	return 0;
}

int kj_cmd_merge(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	struct kj_store *store = NULL, *probe = NULL;
	struct kj_error err;
	int rc, i, quiet, exit_code = KJ_EXIT_OK;

	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	quiet = args.opt[OPT_QUIET].count > 0;
	/* Every source first: a bad one stops the merge before it starts. */
	for (i = 0; i < args.n_operands; i++) {
		rc = kj_store_open(args.operands[i], KJ_STORE_READONLY, 0, &probe, &err);
		kj_store_close(probe);
		probe = NULL;
		if (rc != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = kj_cli_exit_for(cmd, rc);
			goto out;
		}
	}
	rc = kj_store_open(args.opt[OPT_DB].text, KJ_STORE_CREATE, 5000, &store, &err);
	if (rc != KJ_OK) {
		kj_cli_error(cmd, "%s", err.msg);
		exit_code = kj_cli_exit_for(cmd, rc);
		goto out;
	}
	for (i = 0; i < args.n_operands; i++) {
		char label[4200];

		snprintf(label, sizeof(label), "merged %s", args.operands[i]);
		if (kj__cmd_merge_one(cmd, store, args.operands[i], label, quiet ? NULL : stdout, &err) < 0) {
			exit_code = err.code == KJ_EIO ? KJ_EXIT_FAIL : kj_cli_exit_for(cmd, err.code);
			break;
		}
	}
out:
	kj_store_close(store);
	kj_cli_args_release(&args);
	return exit_code;
}
