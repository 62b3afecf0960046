/*
 * cli.h - what every kjudge command shares: the command table, option
 * metadata (one place that drives both parsing and --help), exit codes and
 * error printing.
 *
 * Exit codes of every command unless its own --help says otherwise:
 *   0  success / the judged thing passed
 *   1  the judged thing failed (a verdict, printed or written)
 *   2  usage or input error: nothing was judged
 */
#ifndef KJ_CLI_H
#define KJ_CLI_H

#include <stdio.h>

#define KJ_EXIT_OK 0
#define KJ_EXIT_FAIL 1
#define KJ_EXIT_USAGE 2

/* One option of a command.  `key` is what kj_cli_next() returns for it. */
struct kj_cli_option {
	const char *name;    /* long name without "--" */
	int key;             /* >= 256 for long-only options, else the short letter */
	const char *metavar; /* NULL: a flag without argument */
	const char *help;    /* one line */
};

struct kj_cli_command {
	const char *name;
	int (*run)(const struct kj_cli_command *cmd, int argc, char **argv);
	const char *summary;     /* one line, for `kjudge --help` */
	const char *usage;       /* arguments after the command name */
	const char *description; /* paragraphs for `kjudge CMD --help` */
	const struct kj_cli_option *options; /* ends with a {NULL} entry */
	const char *exit_codes;  /* lines for --help */
	int permute;             /* options may follow operands (FILE --json) */
};

/* Option parser over a command's table; --help is added to every command. */
struct kj_cli_parser {
	const struct kj_cli_command *cmd;
	int argc;
	char **argv;
	const char *arg; /* argument of the option just returned */
};

#define KJ_CLI_HELP (-2)
#define KJ_CLI_END (-1)
#define KJ_CLI_ERROR (-3)

void kj_cli_parser_init(struct kj_cli_parser *p, const struct kj_cli_command *cmd,
			int argc, char **argv);
/* The next option's key, KJ_CLI_HELP for --help/-h, KJ_CLI_END when the
 * options are over (operands start at kj_cli_optind()), or KJ_CLI_ERROR
 * after printing what was wrong. */
int kj_cli_next(struct kj_cli_parser *p);
int kj_cli_optind(void);

void kj_cli_print_help(FILE *out, const struct kj_cli_command *cmd);

/* "kjudge CMD: MESSAGE" on stderr.  Returns KJ_EXIT_USAGE. */
int kj_cli_error(const struct kj_cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* Parse a non-negative int option; prints an error and returns -1 if bad. */
int kj_cli_parse_uint(const struct kj_cli_command *cmd, const char *opt,
		      const char *s, int max);

/* Options shared by the torch commands (verify, benchmark): their keys, the
 * rows of their option tables, and one parser.  A command's own keys start
 * at KJ_OPT_TORCH_END_. */
#include "kjudge/torch.h"

enum {
	KJ_OPT_OP_NAME = 256,
	KJ_OPT_VERIFY_DIR,
	KJ_OPT_IMPL,
	KJ_OPT_DEVICE,
	KJ_OPT_TIMEOUT,
	KJ_OPT_SEED,
	KJ_OPT_PYTHON,
	KJ_OPT_TORCH_END_
};

#define KJ_TORCH_OPTION_ROWS(TIMEOUT_HELP, SEED_HELP)                               \
	{ "op_name", KJ_OPT_OP_NAME, "NAME",                                        \
	  "operator name: files {NAME}_torch.py and {NAME}_{IMPL}.py (required)" }, \
	{ "verify_dir", KJ_OPT_VERIFY_DIR, "DIR",                                   \
	  "directory holding the two files (default .)" },                          \
	{ "triton_impl_name", KJ_OPT_IMPL, "IMPL",                                  \
	  "candidate module suffix (default triton_ascend_impl)" },                 \
	{ "device", KJ_OPT_DEVICE, "DEV", "cuda or cpu (default: cuda when there is one)" }, \
	{ "timeout", KJ_OPT_TIMEOUT, "S", TIMEOUT_HELP },                           \
	{ "seed", KJ_OPT_SEED, "N", SEED_HELP },                                    \
	{ "python", KJ_OPT_PYTHON, "PATH",                                          \
	  "Python interpreter with torch (default $KJ_PYTHON, then python3)" }

/* Handle `key` if it is a shared torch option: 1 handled, 0 not one of
 * them, -1 a bad value (the error is printed). */
int kj_cli_torch_option(const struct kj_cli_command *cmd, int key,
			const char *arg, struct kj_torch_opts *o);

/* After the options of a torch command: no operands, --op_name given.
 * Returns 0, or KJ_EXIT_USAGE after printing the error. */
int kj_cli_torch_check(const struct kj_cli_command *cmd, int argc, char **argv,
		       const struct kj_torch_opts *o);

/* Write `j` as indented JSON with a final newline to `path`, atomically.
 * Returns 0, or -1 after printing the error. */
int kj_cli_write_json(const struct kj_cli_command *cmd, const char *path,
		      const json_t *j);

/* The commands, one file each. */
int kj_cmd_compare(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_compare_options[];
int kj_cmd_verify(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_verify_options[];
int kj_cmd_benchmark(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_benchmark_options[];
int kj_cmd_validate(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_validate_options[];
int kj_cmd_doctor(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_doctor_options[];

#endif /* KJ_CLI_H */
