/*
 * cli.h - what every kjudge command shares: the command table, typed option
 * tables (the one place that drives parsing, --help and the man pages),
 * exit codes and error printing.
 *
 * Exit codes of every command unless its own --help says otherwise:
 *   0  success / the judged thing passed
 *   1  the judged thing failed (a verdict, printed or written)
 *   2  usage or input error: nothing was judged
 *
 * The rules of a command line, the same for every command (docs/cli.md):
 *   - options and operands in any order (`validate FILE --json`);
 *   - `--opt=value` or `--opt value`; short options `-j 4`, `-j4`, and
 *     clusters of short flags (`-ab`) where a command has short options;
 *   - `--` ends the options: what follows is operands, even `--json`; a lone
 *     `-` is an operand;
 *   - long names are exact but for '_' and '-', which are the same
 *     (`--input-sets` is `--input_sets`; --help shows the table's
 *     spelling): a prefix (`--op`) is refused, with the options it could
 *     have meant, because a new option would make a prefix that worked
 *     yesterday mean something else tomorrow; a slip (`--timout`) is
 *     refused with the nearest name ("did you mean '--timeout'?");
 *   - `--opt value` does not take a value that starts with "--" (`--output
 *     --json` says --output needs a value); `--output=--json` does;
 *   - a value is converted and range-checked by the option's type; a value
 *     that is out of range, not finite or not wholly a number is refused
 *     with the range in the message;
 *   - an option given twice: the last one wins, except the options of type
 *     KJ_CLI_CHOICES, which add up (doctor's --group).
 */
#ifndef KJ_CLI_H
#define KJ_CLI_H

#include <stdio.h>

#include <jansson.h>

#define KJ_EXIT_OK 0
#define KJ_EXIT_FAIL 1
#define KJ_EXIT_USAGE 2

/* What an option's value is; the parser converts and checks it. */
enum kj_cli_type {
	KJ_CLI_FLAG,    /* no value: --json */
	KJ_CLI_STRING,  /* any non-empty text: --output FILE */
	KJ_CLI_INT,     /* a whole number from min to max: --repeats N */
	KJ_CLI_NUMBER,  /* a finite decimal number from min to max: --timeout S */
	KJ_CLI_CHOICE,  /* one word of choices[]; a choice "word:N" also takes
			 * word:0, word:1, ... up to word:1023 (--device cuda:N) */
	KJ_CLI_CHOICES, /* a comma list of words of choices[] (at most 32, bits of a
			 * mask); repeats add up */
};

/* Flags of an option row. */
#define KJ_CLI_REQUIRED 1u /* the command cannot run without it */

/*
 * One option of a command.  A command's table is an array of these indexed
 * by the command's own enum (designated initializers: [OPT_JSON] = {...}),
 * ended by a row whose name is NULL; the parser's values come back under
 * the same indices.
 */
struct kj_cli_option {
	const char *name;     /* long name without "--"; NULL ends the table */
	char short_name;      /* '\0': no short form */
	enum kj_cli_type type;
	const char *metavar;  /* the value in --help ("S", "FILE"); not for flags */
	const char *help;     /* a lowercase phrase, without the range and default */
	const char *unit;     /* INT, NUMBER: "seconds" gives "a number of seconds" */
	double min, max;      /* INT, NUMBER: the accepted range, both included */
	const char *const *choices; /* CHOICE, CHOICES: NULL-terminated */
	const char *def;      /* the default as help shows it; NULL: none shown */
	unsigned flags;       /* KJ_CLI_REQUIRED */
};

/* An environment variable a command reads, for --help and its man page. */
struct kj_cli_env {
	const char *name;    /* NULL ends a list */
	const char *meaning; /* a lowercase phrase */
};

struct kj_cli_command {
	const char *name;
	int (*run)(const struct kj_cli_command *cmd, int argc, char **argv);
	const char *summary;     /* one line, for `kjudge --help` */
	const char *usage;       /* arguments after the command name */
	const char *description; /* paragraphs for `kjudge CMD --help` */
	const struct kj_cli_option *options; /* ends with a {NULL} row */
	const char *exit_codes;  /* lines "  N  meaning" for --help */
	const struct kj_cli_env *environment; /* NULL: it reads none */
	/* Operands: how many the parser accepts (max -1: any number), and
	 * what they are in words for the message ("GOLDEN.npy and
	 * ACTUAL.npy"). */
	int min_operands, max_operands;
	const char *operands;
	/* The exit status when the judge itself fails (out of memory) before
	 * or during its work; 0 means KJ_EXIT_USAGE.  benchmark's is 1, the
	 * seed's "the script crashed": its 2 says the gate refused. */
	int judge_exit;
};

/* The value of one option after parsing. */
struct kj_cli_value {
	int count;         /* times it was given; 0: not given */
	const char *text;  /* the last value as typed (argv's storage); NULL for a flag */
	long long integer; /* INT */
	double number;     /* NUMBER */
	int choice;        /* CHOICE: index into choices[] */
	unsigned mask;     /* CHOICES: bit i set when choices[i] was named */
};

#define KJ_CLI_ERROR_MAX 320

/*
 * A parsed command line.  opt[] has one value per row of the command's
 * table, by the row's index; operands[] the operands in order.  Both arrays
 * are owned by the struct (kj_cli_args_release frees them); the strings they
 * point to are argv's, which must outlive them.
 */
struct kj_cli_args {
	struct kj_cli_value *opt;
	char **operands;
	int n_operands;
	char error[KJ_CLI_ERROR_MAX]; /* after KJ_CLI_ERROR: what was wrong */
};

/* kj_cli_parse's results. */
#define KJ_CLI_OK 0
#define KJ_CLI_HELP 1
#define KJ_CLI_ERROR 2
#define KJ_CLI_NOMEM 3 /* out of memory: not the command line's fault */

void kj_cli_args_init(struct kj_cli_args *a);
void kj_cli_args_release(struct kj_cli_args *a);

/*
 * Parse argv[1..argc-1] (argv[0] is the command's name) against cmd's table
 * and operand counts.  Prints nothing.  Returns KJ_CLI_OK with a filled,
 * KJ_CLI_HELP when -h or --help came first, or KJ_CLI_ERROR with a->error
 * set to one lowercase line naming the option as typed ("option '--json'
 * takes no value").  a must have been initialised; it is reset first.
 */
int kj_cli_parse(const struct kj_cli_command *cmd, int argc, char **argv,
		 struct kj_cli_args *a);

/*
 * kj_cli_parse for a command's run function: prints the help on stdout
 * (returns KJ_EXIT_OK) or the error on stderr (returns KJ_EXIT_USAGE), with
 * a released; or returns -1 when the command should go on with a, which the
 * caller then releases.  a must have been initialised.
 */
int kj_cli_start(const struct kj_cli_command *cmd, int argc, char **argv,
		 struct kj_cli_args *a);

void kj_cli_print_help(FILE *out, const struct kj_cli_command *cmd);

/*
 * Whether the command-line word `word` is the long option `name` (without
 * "--"), '_' and '-' alike, as the parser matches it; then *value is what
 * follows its '=', or NULL.  For a command that reads argv again itself (a
 * repeatable option, of which the parser keeps the last).
 */
int kj_cli_long_is(const char *word, const char *name, const char **value);

/* One option's help phrase with its range, choices, default and whether it
 * is required, as both --help and the man page print it: "seconds each case
 * may take (a number of seconds from 0.001 to 2147483; default 900)". */
void kj_cli_option_text(const struct kj_cli_option *o, char *buf, size_t size);

/*
 * The words an option's value must be, as its messages and help say them:
 * "a number of seconds from 0.001 to 2147483", "cpu, cuda or cuda:N".
 * Writes a NUL-terminated string into buf (cut to size).
 */
void kj_cli_wants(const struct kj_cli_option *o, char *buf, size_t size);

/* The man page (roff, man macros) of cmd, whose SEE ALSO names the other
 * commands of all[0..n-1]; or kjudge(1) itself, `intro` its description
 * (man.c). */
void kj_cli_print_man(FILE *out, const struct kj_cli_command *cmd,
		      const struct kj_cli_command *all, size_t n);
void kj_cli_print_man_main(FILE *out, const char *intro,
			   const struct kj_cli_command *all, size_t n);

/* "kjudge CMD: MESSAGE" on stderr: every control byte of the message
 * escaped as kj_cli_shown does, but newlines and tabs (a traceback a
 * message carries keeps its lines).  Returns KJ_EXIT_USAGE. */
int kj_cli_error(const struct kj_cli_command *cmd, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/*
 * What kjudge prints for a person never carries a study's bytes raw: a
 * name, label or message from a store, a generations file or a candidate
 * can hold ESC sequences, BEL, CR, C1 controls, bytes that are not UTF-8
 * (docs/cli.md, "What reaches the terminal").
 *
 * kj_cli_shown: s (NULL: "") with every such byte escaped ("\x1b",
 * "\r", "\n", "\u009b"; lib/base/text.c, kj__text_shown), one line, cut
 * with "..." past 2 KiB.  In one of 8 buffers of the calling thread used in
 * turn: a printf may quote up to 8, each valid until 8 more calls.
 *
 * kj_cli_put_shown: a block of lines (a Markdown report, a JSON text, a
 * tool's output) written to f whole, its newlines and tabs kept, every
 * other control escaped.  0, or -1 when out of memory or f refused it.
 */
const char *kj_cli_shown(const char *s);
int kj_cli_put_shown(FILE *f, const char *s);

/* The exit status of cmd when the judge itself failed (its judge_exit). */
int kj_cli_judge_exit(const struct kj_cli_command *cmd);

/* The exit status of cmd for a library error code: its judge_exit for the
 * judge's or the machine's failure (KJ_ENOMEM, KJ_ENOSPC: out of memory, a
 * full disk), KJ_EXIT_USAGE for everything else (bad input). */
int kj_cli_exit_for(const struct kj_cli_command *cmd, int code);

/* Options shared by the torch commands (verify, benchmark): their indices,
 * the rows of their option tables, and what they set.  A command's own
 * indices start at KJ_OPT_TORCH_END_. */
#include "kjudge/anticheat.h"
#include "kjudge/config.h"
#include "kjudge/pipeline.h"
#include "kjudge/torch.h"

enum {
	KJ_OPT_OP_NAME,
	KJ_OPT_VERIFY_DIR,
	KJ_OPT_IMPL,
	KJ_OPT_DEVICE,
	KJ_OPT_TIMEOUT,
	KJ_OPT_SEED,
	KJ_OPT_PYTHON,
	KJ_OPT_INT_RULE,
	KJ_OPT_FLOAT64_RULE,
	KJ_OPT_TORCH_END_
};

/* The comparison rules' names, in the order of their enums (compare.h). */
extern const char *const kj_cli_int_rules[];
extern const char *const kj_cli_float64_rules[];

extern const char *const kj_cli_devices[];

/* The worker's wait polls in int milliseconds (lib/sandbox/proc.c): the
 * longest --timeout it can represent, in seconds. */
#define KJ_CLI_TIMEOUT_MAX 2147483.0
/* The largest whole number a JSON reader that uses doubles keeps exact. */
#define KJ_CLI_SEED_MAX 9007199254740991.0

/*
 * The settings of every evaluation of a study, eval's and serve's options
 * alike: the command's enum lists KJ_STUDY_OPTION_ENUMS (six consecutive
 * indexes, OPT_TIMEOUT first), its table KJ_STUDY_OPTION_ROWS, and
 * kj_cli_study_settings(v + OPT_TIMEOUT, s) sets those given into s.
 */
#define KJ_STUDY_OPTION_ENUMS                                                        \
	OPT_TIMEOUT, OPT_INPUT_SETS, OPT_WARMUP, OPT_REPEATS, OPT_MAX_REPEATS, OPT_BUDGET
#define KJ_STUDY_OPTION_ROWS                                                         \
	[OPT_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_NUMBER, .metavar = "S",         \
			  .unit = "seconds", .min = 0.001, .max = KJ_CLI_TIMEOUT_MAX,       \
			  .def = "900", .help = "seconds each case may take on each side" }, \
	[OPT_INPUT_SETS] = { .name = "input_sets", .type = KJ_CLI_INT, .metavar = "N",      \
			     .min = 1, .max = 100, .def = "2",                              \
			     .help = "input sets per case with secret seeds (correctness trials)" }, \
	[OPT_WARMUP] = { .name = "warmup", .type = KJ_CLI_INT, .metavar = "N", .min = 0,    \
			 .max = 100000, .def = "5", .help = "untimed calls before timing" }, \
	[OPT_REPEATS] = { .name = "repeats", .type = KJ_CLI_INT, .metavar = "N", .min = 1,  \
			  .max = 1000000, .def = "50",                                      \
			  .help = "the fewest timed calls per side and case" },             \
	[OPT_MAX_REPEATS] = { .name = "max_repeats", .type = KJ_CLI_INT, .metavar = "N",    \
			      .min = 1, .max = 10000000, .def = "100000",                   \
			      .help = "the most timed calls per side and case" },           \
	[OPT_BUDGET] = { .name = "time_budget", .type = KJ_CLI_NUMBER, .metavar = "S",      \
			 .unit = "seconds", .min = 0.01, .max = 86400, .def = "$KJ_TIME_BUDGET, " \
			 "else 10", .help = "seconds of timing per case" }

struct kj_eval_settings;
void kj_cli_study_settings(const struct kj_cli_value *v, struct kj_eval_settings *s);

#define KJ_TORCH_OPTION_ROWS(TIMEOUT_HELP, SEED_HELP)                               \
	[KJ_OPT_OP_NAME] = { .name = "op_name", .type = KJ_CLI_STRING,              \
			     .metavar = "NAME", .flags = KJ_CLI_REQUIRED,           \
			     .help = "operator name: files {NAME}_torch.py and "    \
				     "{NAME}_{IMPL}.py" },                           \
	[KJ_OPT_VERIFY_DIR] = { .name = "verify_dir", .type = KJ_CLI_STRING,        \
				.metavar = "DIR", .def = ".",                       \
				.help = "directory holding the two files" },        \
	[KJ_OPT_IMPL] = { .name = "triton_impl_name", .type = KJ_CLI_STRING,        \
			  .metavar = "IMPL", .def = "triton_ascend_impl",           \
			  .help = "candidate module suffix" },                      \
	[KJ_OPT_DEVICE] = { .name = "device", .type = KJ_CLI_CHOICE,                \
			    .metavar = "DEV", .choices = kj_cli_devices,            \
			    .def = "cuda when there is one, else cpu",              \
			    .help = "where both sides run" },                       \
	[KJ_OPT_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_NUMBER,              \
			     .metavar = "S", .unit = "seconds", .min = 0.001,       \
			     .max = KJ_CLI_TIMEOUT_MAX, .def = "900",               \
			     .help = TIMEOUT_HELP },                                \
	[KJ_OPT_SEED] = { .name = "seed", .type = KJ_CLI_INT, .metavar = "N",       \
			  .min = 0, .max = KJ_CLI_SEED_MAX, .help = SEED_HELP },    \
	[KJ_OPT_INT_RULE] = { .name = "int-rule", .type = KJ_CLI_CHOICE,            \
			      .metavar = "RULE", .choices = kj_cli_int_rules,       \
			      .def = "exact",                                       \
			      .help = "integer outputs: exact, or the seed's relative " \
				      "rule (spec)" },                              \
	[KJ_OPT_FLOAT64_RULE] = { .name = "float64-rule", .type = KJ_CLI_CHOICE,    \
				  .metavar = "RULE", .choices = kj_cli_float64_rules, \
				  .def = "spec",                                    \
				  .help = "float64 outputs: promoted to float32 as the " \
					  "seed does (spec), or compared in float64" }, \
	[KJ_OPT_PYTHON] = { .name = "python", .type = KJ_CLI_STRING,                \
			    .metavar = "PATH", .def = "$KJ_PYTHON, then the .venv of kjudge's checkout, else python3",   \
			    .help = "Python interpreter with torch" }

/* The environment verify and benchmark read (for --help and man). */
extern const struct kj_cli_env kj_cli_torch_env[];

/* Fill the task's spec and the judging options from the shared torch
 * options of a (checked by the parser); *python gets --python or NULL. */
void kj_cli_torch_opts(const struct kj_cli_args *a, struct kj_torch_spec *s,
		       struct kj_judge_opts *o, const char **python);

/*
 * The run's context from the environment (src/config.c; the variables are
 * listed there and in docs/cli.md), with --python when given.  Returns 0, or
 * KJ_EXIT_USAGE after printing which variable is wrong.  The strings point
 * into the environment and static storage.
 */
int kj_cli_config(const struct kj_cli_command *cmd, struct kj_config *cfg, const char *python);

/*
 * Budget the workers' memory for `workers` of them at once (config.h's
 * struct kj_mem_budget; kj_cli_config budgets for the two of verify):
 * cfg->limits.mem_bytes becomes the machine's share of one, unless
 * $KJ_LIMIT_MEM_MB gave one, and the judge lowers its own OOM score
 * (kj_proc_protect_judge).  A limit that oversubscribes the machine, the
 * user's or the floor's, is said on stderr as a warning line naming `why`
 * (what makes the workers that many, e.g. "-j 8").  Call it before any
 * worker starts.
 */
void kj_cli_mem_budget(const struct kj_cli_command *cmd, struct kj_config *cfg, int workers,
		       const char *why);

/*
 * Everything a verify or benchmark run holds (src/torch_run.c), released by
 * kj_cli_torch_close whatever happened:
 *   kj_cli_torch_setup    options and environment into spec, judge, cfg
 *   kj_cli_torch_prepare  signal guard, attempt, seed key, the task opened
 *   kj_cli_torch_start    the workers started (the gate goes before it)
 *   kj_cli_torch_open     prepare and start
 * Each returns 0 or the exit code (after printing why).
 */
struct kj_cli_torch {
	struct kj_config cfg;
	struct kj_torch_spec spec;
	struct kj_judge_opts judge;
	struct kj_attempt attempt;
	struct kj_task task;
	struct kj_result result;
	struct kj_error err;
	int attempt_open, task_open;
};

int kj_cli_torch_setup(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
		       struct kj_cli_torch *run);
int kj_cli_torch_prepare(const struct kj_cli_command *cmd, struct kj_cli_torch *run);
int kj_cli_torch_start(const struct kj_cli_command *cmd, struct kj_cli_torch *run);
int kj_cli_torch_open(const struct kj_cli_command *cmd, struct kj_cli_torch *run);
/* The kernels-disabled layer of run's candidate (a second task with its
 * own workers; run's are killed first, run->task keeps what they said):
 * 0 with *out decided, or the exit code of an interrupt or of the judge's
 * failure, after printing why. */
int kj_cli_torch_disabled(const struct kj_cli_command *cmd, struct kj_cli_torch *run,
			  struct kj_layer *out);
/* Release run; returns exit_code. */
int kj_cli_torch_close(struct kj_cli_torch *run, int exit_code);
/* Whether a result file can be written at path (found before the run):
 * its directory is writable, and what is there may be replaced
 * (kj_output_check; keep: the store the command reads, or NULL).  0, or
 * KJ_EXIT_USAGE after printing why. */
int kj_cli_check_output(const struct kj_cli_command *cmd, const char *path, const char *keep);
/* "op: N/M cases passed (...); written to PATH" and one line per case that
 * did not pass. */
void kj_cli_print_cases(FILE *out, const struct kj_cli_torch *run, const char *written_to);

/*
 * The anti-cheat of verify and benchmark (src/strict.c; docs/cli.md,
 * Anti-cheat): the static check always, recorded and warned about; with
 * --strict (on) a layer that fails is the verdict.  kj_cli_strict_static
 * runs the static check on the run's candidate file, kj_cli_strict_layers
 * (verify, after every case passed) the kernels-disabled run and the
 * profiler's check, kj_cli_strict_finish puts it all in run->result (the
 * record's "kjudge", its warnings) and prints the warning or the failure.
 * Each returns 0 or the exit code (after printing why).
 */
struct kj_cli_strict {
	int on;
	int have_static;
	struct kj_static_layer st;
	struct kj_layer disabled, profile;
	const char *error_type; /* the first failing layer's (KJ_LAYER_*), or NULL */
	const char *reason;     /* its message */
	/* benchmark's: the members of "strict" that say which verify record
	 * holds the kernels-disabled and profiler layers (they are not run
	 * again), or NULL (verify's: the layers it ran are listed). */
	json_t *extra;
};

void kj_cli_strict_init(struct kj_cli_strict *s, int on);
int kj_cli_strict_static(const struct kj_cli_command *cmd, const struct kj_cli_torch *run,
			 struct kj_cli_strict *s);
int kj_cli_strict_layers(const struct kj_cli_command *cmd, struct kj_cli_torch *run,
			 struct kj_cli_strict *s);
int kj_cli_strict_finish(const struct kj_cli_command *cmd, struct kj_cli_torch *run,
			 struct kj_cli_strict *s);
/* The warning (without --strict) or the failure (with it) on stderr. */
void kj_cli_strict_say(const struct kj_cli_command *cmd, const struct kj_cli_strict *s);
/* Whether --strict was given and a layer failed (the verdict is then a
 * failure, exit 1, when every case passed). */
int kj_cli_strict_failed(const struct kj_cli_strict *s);
void kj_cli_strict_release(struct kj_cli_strict *s);

/* Write `j` as indented JSON with a final newline to `path`, atomically.
 * Returns 0, or -1 after printing the error. */
int kj_cli_write_json(const struct kj_cli_command *cmd, const char *path,
		      const json_t *j);

/* The commands, one file each. */
int kj_cmd_compare(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_compare_options[];
int kj_cmd_verify(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_verify_options[];
int kj_cmd_eval(const struct kj_cli_command *cmd, int argc, char **argv);
int kj_cmd_merge(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_eval_options[];
extern const struct kj_cli_option kj_merge_options[];
int kj_cmd_benchmark(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_benchmark_options[];
int kj_cmd_check(const struct kj_cli_command *cmd, int argc, char **argv);
int kj_cmd_audit(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_audit_options[];
extern const struct kj_cli_option kj_check_options[];
int kj_cmd_validate(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_validate_options[];
int kj_cmd_doctor(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_doctor_options[];
extern const struct kj_cli_env kj_doctor_env[];
int kj_cmd_skill(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_skill_options[];
int kj_cmd_report(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_report_options[];
int kj_cmd_spec(const struct kj_cli_command *cmd, int argc, char **argv);
int kj_cmd_serve(const struct kj_cli_command *cmd, int argc, char **argv);
extern const struct kj_cli_option kj_serve_options[];
extern const struct kj_cli_option kj_spec_options[];
extern const struct kj_cli_env kj_spec_env[];

#endif /* KJ_CLI_H */
