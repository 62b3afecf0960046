/*
 * test_cli.c - the CLI's option parser (src/cli.c) over a table of command
 * lines, each with what it must parse to or the exact error it must give;
 * the help text and the man page writer (src/man.c) generated from the same
 * rows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "unit.h"
#include "../../src/cli.h"

enum {
	T_JSON,
	T_OUTPUT,
	T_JOBS,
	T_TIMEOUT,
	T_DEVICE,
	T_GROUP,
	T_VERBOSE,
	T_OP_NAME,
	T_SEED,
	T_LATENCY,
	T_COUNT_
};

static const char *const devices[] = { "cpu", "cuda", "cuda:N", NULL };
static const char *const groups[] = { "sandbox", "timing", "runtimes", NULL };

static const struct kj_cli_option opts[] = {
	[T_JSON] = { .name = "json", .type = KJ_CLI_FLAG, .help = "print JSON" },
	[T_OUTPUT] = { .name = "output", .short_name = 'o', .type = KJ_CLI_STRING,
		       .metavar = "FILE", .help = "where to write" },
	[T_JOBS] = { .name = "jobs", .short_name = 'j', .type = KJ_CLI_INT,
		     .metavar = "N", .min = 1, .max = 64, .def = "8", .help = "workers" },
	[T_TIMEOUT] = { .name = "timeout", .type = KJ_CLI_NUMBER, .metavar = "S",
			.unit = "seconds", .min = 0.001, .max = KJ_CLI_TIMEOUT_MAX,
			.def = "900", .help = "seconds each case may take" },
	[T_DEVICE] = { .name = "device", .type = KJ_CLI_CHOICE, .metavar = "DEV",
		       .choices = devices, .help = "where to run" },
	[T_GROUP] = { .name = "group", .type = KJ_CLI_CHOICES, .metavar = "NAME",
		      .choices = groups, .help = "only these groups" },
	[T_VERBOSE] = { .name = "verbose", .short_name = 'v', .type = KJ_CLI_FLAG,
			.help = "say more" },
	[T_OP_NAME] = { .name = "op_name", .type = KJ_CLI_STRING, .metavar = "NAME",
			.help = "operator" },
	[T_SEED] = { .name = "seed", .type = KJ_CLI_INT, .metavar = "N", .min = 0,
		     .max = KJ_CLI_SEED_MAX, .help = "seed" },
	[T_LATENCY] = { .name = "latency_ms", .type = KJ_CLI_NUMBER, .metavar = "MS",
			.unit = "milliseconds", .min = 0, .max = 86400000,
			.help = "latency" },
	[T_COUNT_] = { .name = NULL },
};

static const struct kj_cli_command cmd = {
	.name = "t",
	.summary = "A test command.",
	.usage = "[options] [FILE [FILE]]",
	.options = opts,
	.max_operands = 2,
	.operands = "at most two FILEs",
};

/* A one-line account of a parse: each option given, by name, with its
 * typed value, then " |" and the operands. */
static void summarize(const struct kj_cli_args *a, char *buf, size_t size)
{
	size_t len = 0;
	int i;

	buf[0] = '\0';
	for (i = 0; i < T_COUNT_; i++) {
		const struct kj_cli_value *v = &a->opt[i];

		if (!v->count)
			continue;
		len += (size_t)snprintf(buf + len, size - len, "%s%s=", len ? " " : "",
					opts[i].name);
		switch (opts[i].type) {
		case KJ_CLI_FLAG:
			len += (size_t)snprintf(buf + len, size - len, "%d", v->count);
			break;
		case KJ_CLI_INT:
			len += (size_t)snprintf(buf + len, size - len, "%lld", v->integer);
			break;
		case KJ_CLI_NUMBER:
			len += (size_t)snprintf(buf + len, size - len, "%.17g", v->number);
			break;
		case KJ_CLI_CHOICE:
			len += (size_t)snprintf(buf + len, size - len, "%s(%s)",
						opts[i].choices[v->choice], v->text);
			break;
		case KJ_CLI_CHOICES:
			len += (size_t)snprintf(buf + len, size - len, "0x%x", v->mask);
			break;
		default:
			len += (size_t)snprintf(buf + len, size - len, "%s", v->text);
		}
	}
	len += (size_t)snprintf(buf + len, size - len, "%s|", len ? " " : "");
	for (i = 0; i < a->n_operands; i++)
		len += (size_t)snprintf(buf + len, size - len, " %s", a->operands[i]);
}

/* 63 bytes of digits, for the cuts of long words in messages. */
#define D63 "012345678901234567890123456789012345678901234567890123456789012"

struct pcase {
	const char *argv[8]; /* after the command's name; NULL-terminated */
	int rc;
	const char *want;    /* the summary after KJ_CLI_OK, the error after KJ_CLI_ERROR */
};

static const struct pcase cases[] = {
	/* options before, after and between operands */
	{ { "a", "--json" }, KJ_CLI_OK, "json=1 | a" },
	{ { "--json", "a" }, KJ_CLI_OK, "json=1 | a" },
	{ { "a", "--json", "b" }, KJ_CLI_OK, "json=1 | a b" },
	/* the forms of a value */
	{ { "--output=x" }, KJ_CLI_OK, "output=x |" },
	{ { "--output", "x" }, KJ_CLI_OK, "output=x |" },
	{ { "-o", "x" }, KJ_CLI_OK, "output=x |" },
	{ { "-ox" }, KJ_CLI_OK, "output=x |" },
	{ { "--output=a=b" }, KJ_CLI_OK, "output=a=b |" },
	{ { "-j4" }, KJ_CLI_OK, "jobs=4 |" },
	{ { "-j", "4" }, KJ_CLI_OK, "jobs=4 |" },
	{ { "--jobs=4" }, KJ_CLI_OK, "jobs=4 |" },
	{ { "--jobs", "4" }, KJ_CLI_OK, "jobs=4 |" },
	{ { "-vj4" }, KJ_CLI_OK, "jobs=4 verbose=1 |" },
	{ { "-vo", "x" }, KJ_CLI_OK, "output=x verbose=1 |" },
	{ { "-vv" }, KJ_CLI_OK, "verbose=2 |" },
	{ { "-jv" }, KJ_CLI_ERROR, "option '-j' wants a whole number from 1 to 64, not 'v'" },
	/* -- and - */
	{ { "--", "--json", "-" }, KJ_CLI_OK, "| --json -" },
	{ { "-" }, KJ_CLI_OK, "| -" },
	{ { "--json", "--", "-x" }, KJ_CLI_OK, "json=1 | -x" },
	{ { "--", "--help" }, KJ_CLI_OK, "| --help" },
	/* flags and missing values */
	{ { "--json=1" }, KJ_CLI_ERROR, "option '--json' takes no value" },
	{ { "--json=" }, KJ_CLI_ERROR, "option '--json' takes no value" },
	{ { "--timeout" }, KJ_CLI_ERROR, "option '--timeout' needs a value (S)" },
	{ { "a", "-j" }, KJ_CLI_ERROR, "option '-j' needs a value (N)" },
	{ { "--output", "--json" }, KJ_CLI_ERROR, "option '--output' needs a value (FILE)" },
	{ { "--output", "--" }, KJ_CLI_ERROR, "option '--output' needs a value (FILE)" },
	{ { "--output=--json" }, KJ_CLI_OK, "output=--json |" },
	{ { "--output", "-" }, KJ_CLI_OK, "output=- |" },
	{ { "--output=" }, KJ_CLI_ERROR, "option '--output' wants FILE, not an empty string" },
	{ { "--output", "" }, KJ_CLI_ERROR, "option '--output' wants FILE, not an empty string" },
	/* unknown options, as typed; prefixes are refused */
	{ { "--bogus" }, KJ_CLI_ERROR, "unknown option '--bogus'" },
	{ { "--bogus=3" }, KJ_CLI_ERROR, "unknown option '--bogus'" },
	{ { "-x" }, KJ_CLI_ERROR, "unknown option '-x'" },
	{ { "-vx" }, KJ_CLI_ERROR, "unknown option '-x'" },
	{ { "--op", "x" }, KJ_CLI_ERROR, "unknown option '--op' (names are not "
	  "abbreviated: did you mean '--op_name'?)" },
	{ { "--o", "x" }, KJ_CLI_ERROR, "unknown option '--o' (names are not "
	  "abbreviated: did you mean '--output', '--op_name'?)" },
	{ { "--JSON" }, KJ_CLI_ERROR, "unknown option '--JSON'" },
	/* '_' and '-' are the same in a long name, both ways */
	{ { "--op-name", "x" }, KJ_CLI_OK, "op_name=x |" },
	{ { "--op-name=x" }, KJ_CLI_OK, "op_name=x |" },
	{ { "--latency-ms", "5" }, KJ_CLI_OK, "latency_ms=5 |" },
	{ { "--latency_ms", "5", "--latency-ms=6" }, KJ_CLI_OK, "latency_ms=6 |" },
	{ { "--op-name=x", "--json=1" }, KJ_CLI_ERROR, "option '--json' takes no value" },
	{ { "--op-name" }, KJ_CLI_ERROR, "option '--op-name' needs a value (NAME)" },
	{ { "--op-", "x" }, KJ_CLI_ERROR, "unknown option '--op-' (names are not "
	  "abbreviated: did you mean '--op_name'?)" },
	{ { "--op__name", "x" }, KJ_CLI_ERROR, "unknown option '--op__name'; did you mean "
	  "'--op_name'?" },
	/* a slip: the nearest name, when it is near and alone */
	{ { "--timout", "3" }, KJ_CLI_ERROR, "unknown option '--timout'; did you mean "
	  "'--timeout'?" },
	{ { "--timeuot=3" }, KJ_CLI_ERROR, "unknown option '--timeuot'; did you mean "
	  "'--timeout'?" },
	{ { "--latnecy-ms", "3" }, KJ_CLI_ERROR, "unknown option '--latnecy-ms'; did you "
	  "mean '--latency_ms'?" },
	{ { "--hepl" }, KJ_CLI_ERROR, "unknown option '--hepl'; did you mean '--help'?" },
	{ { "--jsns" }, KJ_CLI_ERROR, "unknown option '--jsns'" },
	{ { "--tim" }, KJ_CLI_ERROR, "unknown option '--tim' (names are not abbreviated: "
	  "did you mean '--timeout'?)" },
	{ { "--tmieout_x" }, KJ_CLI_ERROR, "unknown option '--tmieout_x'; did you mean "
	  "'--timeout'?" },
	{ { "--zzzzout" }, KJ_CLI_ERROR, "unknown option '--zzzzout'" },
	/* what a message repeats is cut, on a character boundary */
	{ { "-\xc3\xa9" }, KJ_CLI_ERROR, "unknown option '-\xc3\xa9'" },
	{ { "--" D63 "\xc3\xa9z" }, KJ_CLI_ERROR, "unknown option '--" D63 "...'" },
	{ { "--device", D63 "3456" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or "
	  "cuda:N, not '" D63 "3...'" },
	/* numbers: the whole text, finite, in range */
	{ { "--timeout", "2147483" }, KJ_CLI_OK, "timeout=2147483 |" },
	{ { "--timeout", "0.001" }, KJ_CLI_OK, "timeout=0.001 |" },
	{ { "--timeout", "1e3" }, KJ_CLI_OK, "timeout=1000 |" },
	{ { "--timeout", ".5" }, KJ_CLI_OK, "timeout=0.5 |" },
	{ { "--timeout", "5." }, KJ_CLI_OK, "timeout=5 |" },
	{ { "--timeout", "2147484" }, KJ_CLI_ERROR, "option '--timeout' wants a number of "
	  "seconds from 0.001 to 2147483, not '2147484'" },
	{ { "--timeout=0.0009" }, KJ_CLI_ERROR, "option '--timeout' wants a number of "
	  "seconds from 0.001 to 2147483, not '0.0009'" },
	{ { "--timeout", "0" }, KJ_CLI_ERROR, "option '--timeout' wants a number of "
	  "seconds from 0.001 to 2147483, not '0'" },
	{ { "--latency_ms", "nan" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not 'nan'" },
	{ { "--latency_ms", "inf" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not 'inf'" },
	{ { "--latency_ms", "-inf" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not '-inf'" },
	{ { "--latency_ms", "1e309" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number "
	  "of milliseconds from 0 to 86400000, not '1e309'" },
	{ { "--latency_ms", "-1" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not '-1'" },
	{ { "--latency_ms", "-0.5" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number "
	  "of milliseconds from 0 to 86400000, not '-0.5'" },
	{ { "--latency_ms", "0x10" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number "
	  "of milliseconds from 0 to 86400000, not '0x10'" },
	{ { "--latency_ms", " 5" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not ' 5'" },
	{ { "--latency_ms", "5 " }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not '5 '" },
	{ { "--latency_ms", "5e" }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not '5e'" },
	{ { "--latency_ms", "." }, KJ_CLI_ERROR, "option '--latency_ms' wants a number of "
	  "milliseconds from 0 to 86400000, not '.'" },
	{ { "--latency_ms", "0" }, KJ_CLI_OK, "latency_ms=0 |" },
	{ { "--latency_ms", "1e-400" }, KJ_CLI_OK, "latency_ms=0 |" },
	/* whole numbers */
	{ { "--jobs", "0" }, KJ_CLI_ERROR, "option '--jobs' wants a whole number from 1 to "
	  "64, not '0'" },
	{ { "--jobs", "65" }, KJ_CLI_ERROR, "option '--jobs' wants a whole number from 1 to "
	  "64, not '65'" },
	{ { "--jobs", "4.0" }, KJ_CLI_ERROR, "option '--jobs' wants a whole number from 1 to "
	  "64, not '4.0'" },
	{ { "--jobs", "+4" }, KJ_CLI_ERROR, "option '--jobs' wants a whole number from 1 to "
	  "64, not '+4'" },
	{ { "--jobs", "99999999999999999999" }, KJ_CLI_ERROR, "option '--jobs' wants a whole "
	  "number from 1 to 64, not '99999999999999999999'" },
	{ { "--seed", "9007199254740991" }, KJ_CLI_OK, "seed=9007199254740991 |" },
	{ { "--seed", "9007199254740992" }, KJ_CLI_ERROR, "option '--seed' wants a whole "
	  "number from 0 to 9007199254740991, not '9007199254740992'" },
	{ { "--seed", "-1" }, KJ_CLI_ERROR, "option '--seed' wants a whole number from 0 to "
	  "9007199254740991, not '-1'" },
	{ { "--seed", "0" }, KJ_CLI_OK, "seed=0 |" },
	/* choices */
	{ { "--device", "cpu" }, KJ_CLI_OK, "device=cpu(cpu) |" },
	{ { "--device=cuda" }, KJ_CLI_OK, "device=cuda(cuda) |" },
	{ { "--device", "cuda:0" }, KJ_CLI_OK, "device=cuda:N(cuda:0) |" },
	{ { "--device", "cuda:1023" }, KJ_CLI_OK, "device=cuda:N(cuda:1023) |" },
	{ { "--device", "cuda:1024" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or "
	  "cuda:N, not 'cuda:1024'" },
	{ { "--device", "cuda:01" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or "
	  "cuda:N, not 'cuda:01'" },
	{ { "--device", "cuda:" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or "
	  "cuda:N, not 'cuda:'" },
	{ { "--device", "cuda:-1" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or "
	  "cuda:N, not 'cuda:-1'" },
	{ { "--device", "cuda:N" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or "
	  "cuda:N, not 'cuda:N'" },
	{ { "--device", "tpu" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or cuda:N, "
	  "not 'tpu'" },
	{ { "--device", "CPU" }, KJ_CLI_ERROR, "option '--device' wants cpu, cuda or cuda:N, "
	  "not 'CPU'" },
	/* a comma list whose repeats add up */
	{ { "--group", "sandbox,runtimes" }, KJ_CLI_OK, "group=0x5 |" },
	{ { "--group", "timing", "--group=runtimes" }, KJ_CLI_OK, "group=0x6 |" },
	{ { "--group", "sandbox," }, KJ_CLI_ERROR, "option '--group' wants sandbox, timing "
	  "or runtimes, or a comma list of them, not 'sandbox,' (an empty item)" },
	{ { "--group", "sandbox,bogus" }, KJ_CLI_ERROR, "option '--group' wants sandbox, "
	  "timing or runtimes, or a comma list of them, not 'bogus'" },
	/* repeats: the last one wins */
	{ { "--output", "x", "--output=y" }, KJ_CLI_OK, "output=y |" },
	{ { "-j1", "--jobs", "3" }, KJ_CLI_OK, "jobs=3 |" },
	{ { "--device", "cpu", "--device", "cuda:3" }, KJ_CLI_OK, "device=cuda:N(cuda:3) |" },
	/* help comes first when it comes before an error */
	{ { "--help" }, KJ_CLI_HELP, NULL },
	{ { "-h" }, KJ_CLI_HELP, NULL },
	{ { "a", "b", "c", "--help" }, KJ_CLI_HELP, NULL },
	{ { "-vh" }, KJ_CLI_HELP, NULL },
	{ { "--help=1" }, KJ_CLI_ERROR, "option '--help' takes no value" },
	{ { "--hel" }, KJ_CLI_ERROR, "unknown option '--hel'; did you mean '--help'?" },
	{ { "--jobs", "0", "--help" }, KJ_CLI_ERROR, "option '--jobs' wants a whole number "
	  "from 1 to 64, not '0'" },
	/* operand counts */
	{ { "a", "b", "c" }, KJ_CLI_ERROR, "expected at most two FILEs, got 3 operands" },
	{ { NULL }, KJ_CLI_OK, "|" },
};

/* A writable argv of `name` and the NULL-terminated words (as main gets
 * one), in static storage that the next call reuses; its count in *argc. */
static char **mkargv(const char *name, const char *const *words, int *argc)
{
	static char store[16][128];
	static char *argv[17];
	int n = 0;

	snprintf(store[0], sizeof(store[0]), "%s", name);
	argv[n++] = store[0];
	for (; n < 16 && words[n - 1]; n++) {
		snprintf(store[n], sizeof(store[n]), "%s", words[n - 1]);
		argv[n] = store[n];
	}
	argv[n] = NULL;
	*argc = n;
	return argv;
}

KJ_TEST(cli_parse_table)
{
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct pcase *c = &cases[i];
		char got[512];
		struct kj_cli_args a;
		int argc, rc;
		char **argv = mkargv("t", c->argv, &argc);

		kj_cli_args_init(&a);
		rc = kj_cli_parse(&cmd, argc, argv, &a);
		if (rc == KJ_CLI_OK)
			summarize(&a, got, sizeof(got));
		else
			snprintf(got, sizeof(got), "%s", rc == KJ_CLI_ERROR ? a.error : "");
		if (rc != c->rc || (c->want && strcmp(got, c->want) != 0))
			kj_test_fail(__FILE__, __LINE__, "case %zu (%s %s ...): rc %d, "
				     "wanted %d; got \"%s\", wanted \"%s\"", i,
				     c->argv[0] ? c->argv[0] : "", c->argv[0] && c->argv[1]
				     ? c->argv[1] : "", rc, c->rc, got, c->want ? c->want : "");
		kj_cli_args_release(&a);
	}
}

/* The message of one parse of `c` that must fail, over the words. */
static const char *parse_error(const struct kj_cli_command *c, const char *const *words)
{
	static struct kj_cli_args a;
	int argc;
	char **argv = mkargv(c->name, words, &argc);

	kj_cli_args_init(&a);
	if (kj_cli_parse(c, argc, argv, &a) != KJ_CLI_ERROR)
		return "(no error)";
	return a.error;
}

/* A command that reads argv again (eval's repeated --sbatch-arg) matches
 * a word as the parser does. */
KJ_TEST(cli_long_is_matches_as_the_parser)
{
	const char *v = "unset";

	KJ_CHECK(kj_cli_long_is("--sbatch-arg", "sbatch-arg", &v) && v == NULL);
	KJ_CHECK(kj_cli_long_is("--sbatch_arg=--qos=x", "sbatch-arg", &v));
	KJ_CHECK_STR(v, "--qos=x");
	KJ_CHECK(kj_cli_long_is("--sbatch-arg=", "sbatch-arg", &v) && strcmp(v, "") == 0);
	KJ_CHECK(!kj_cli_long_is("--sbatch-args", "sbatch-arg", &v));
	KJ_CHECK(!kj_cli_long_is("--sbatch", "sbatch-arg", &v));
	KJ_CHECK(!kj_cli_long_is("-sbatch-arg", "sbatch-arg", &v));
	KJ_CHECK(!kj_cli_long_is("sbatch-arg", "sbatch-arg", &v));
}

KJ_TEST(cli_required_and_operand_counts)
{
	static const struct kj_cli_option req[] = {
		{ .name = "op_name", .type = KJ_CLI_STRING, .metavar = "NAME",
		  .flags = KJ_CLI_REQUIRED, .help = "operator" },
		{ .name = NULL },
	};
	struct kj_cli_command none = { .name = "n", .options = req };
	struct kj_cli_command two = { .name = "c", .options = req + 1, .min_operands = 2,
				      .max_operands = 2, .operands = "GOLDEN.npy and ACTUAL.npy" };
	struct kj_cli_args a;
	char **argv;
	int argc;

	KJ_CHECK_STR(parse_error(&none, (const char *const[]){ "x", NULL }),
		     "option '--op_name' is required");
	KJ_CHECK_STR(parse_error(&none, (const char *const[]){ "--op_name", "s", "x", NULL }),
		     "takes no operands, got 'x'");
	KJ_CHECK_STR(parse_error(&two, (const char *const[]){ "g.npy", NULL }),
		     "expected GOLDEN.npy and ACTUAL.npy, got 1 operand");
	KJ_CHECK_STR(parse_error(&two, (const char *const[]){ NULL }),
		     "expected GOLDEN.npy and ACTUAL.npy, got 0 operands");
	/* A command without that option: an unknown one, even when it is
	 * another command's. */
	KJ_CHECK_STR(parse_error(&two, (const char *const[]){ "g.npy", "a.npy",
							       "--op_name", NULL }),
		     "unknown option '--op_name'");
	kj_cli_args_init(&a);
	argv = mkargv("c", (const char *const[]){ "g.npy", "a.npy", NULL }, &argc);
	KJ_CHECK_INT(kj_cli_parse(&two, argc, argv, &a), KJ_CLI_OK);
	KJ_CHECK_STR(a.operands[0], "g.npy");
	KJ_CHECK_STR(a.operands[1], "a.npy");
	/* A second parse into the same args starts afresh. */
	argv = mkargv("n", (const char *const[]){ "--op_name", "s", NULL }, &argc);
	KJ_CHECK_INT(kj_cli_parse(&none, argc, argv, &a), KJ_CLI_OK);
	KJ_CHECK_STR(a.opt[0].text, "s");
	KJ_CHECK_INT(a.n_operands, 0);
	kj_cli_args_release(&a);
}

/* What `f` printed into a memory stream. */
static char *render(void (*f)(FILE *, const struct kj_cli_command *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	KJ_CHECK(out != NULL);
	f(out, &cmd);
	KJ_CHECK(fclose(out) == 0);
	return buf;
}

KJ_TEST(cli_help_shows_ranges_defaults_and_choices)
{
	char *h = render(kj_cli_print_help);

	KJ_CHECK(strstr(h, "usage: kjudge t [options] [FILE [FILE]]\n") != NULL);
	KJ_CHECK(strstr(h, "  -j, --jobs N                 workers (1 to 64; default 8)\n"));
	KJ_CHECK(strstr(h, "  -o, --output FILE            where to write\n"));
	KJ_CHECK(strstr(h, "      --timeout S              seconds each case may take "
			   "(0.001 to 2147483;\n                               default 900)\n"));
	KJ_CHECK(strstr(h, "--device DEV             where to run (cpu, cuda or cuda:N)\n"));
	KJ_CHECK(strstr(h, "      --json                   print JSON\n"));
	KJ_CHECK(strstr(h, "  -h, --help                   show this help and exit\n"));
	free(h);
}

static void man_of(FILE *out, const struct kj_cli_command *c)
{
	kj_cli_print_man(out, c, c, 1);
}

KJ_TEST(cli_man_page_escapes_roff)
{
	static const struct kj_cli_option o[] = {
		{ .name = "dry-run", .type = KJ_CLI_FLAG, .help = "a \\ backslash" },
		{ .name = NULL },
	};
	struct kj_cli_command c = {
		.name = "x",
		.summary = "Do a thing.",
		.usage = "[options] FILE",
		.description = "First line\n.starts with a dot\n'and a quote\n"
			       "  1  indented, kept\n\nnew paragraph\n",
		.options = o,
		.exit_codes = "  0  it worked\n  1  \xe9\xaa\x8c\xe8\xaf\x81\n",
	};
	char *buf = NULL;
	size_t len = 0;
	FILE *out = open_memstream(&buf, &len);

	KJ_CHECK(out != NULL);
	man_of(out, &c);
	KJ_CHECK(fclose(out) == 0);
	KJ_CHECK(strstr(buf, ".TH KJUDGE\\-X 1 ") == buf);
	KJ_CHECK(strstr(buf, "\n.SH NAME\nkjudge\\-x \\- do a thing\n"));
	KJ_CHECK(strstr(buf, "\n\\&.starts with a dot\n\\&'and a quote\n"));
	KJ_CHECK(strstr(buf, "\n.nf\n  1  indented, kept\n.fi\n.PP\nnew paragraph\n"));
	KJ_CHECK(strstr(buf, "\n\\fB\\-\\-dry\\-run\\fR\na \\e backslash\n"));
	KJ_CHECK(strstr(buf, "\n.TP\n.B 1\n\\[u9A8C]\\[u8BC1]\n"));
	/* Nothing but ASCII reaches groff. */
	for (len = 0; buf[len]; len++)
		KJ_CHECK((unsigned char)buf[len] < 0x80);
	free(buf);
}
