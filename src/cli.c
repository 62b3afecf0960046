/*
 * cli.c - option parsing and help generated from the option tables.
 */
#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/banned.h"

#define MAX_OPTS 64

static struct option long_opts[MAX_OPTS + 2];
static char short_opts[2 * MAX_OPTS + 4];

void kj_cli_parser_init(struct kj_cli_parser *p, const struct kj_cli_command *cmd,
			int argc, char **argv)
{
	const struct kj_cli_option *o;
	size_t n = 0, s = 0;

	p->cmd = cmd;
	p->argc = argc;
	p->argv = argv;
	p->arg = NULL;
	if (!cmd->permute)
		short_opts[s++] = '+'; /* stop at the first operand */
	short_opts[s++] = ':'; /* report a missing argument as ':' */
	for (o = cmd->options; o && o->name && n < MAX_OPTS; o++, n++) {
		long_opts[n].name = o->name;
		long_opts[n].has_arg = o->metavar ? required_argument : no_argument;
		long_opts[n].flag = NULL;
		long_opts[n].val = o->key;
		if (o->key < 256) {
			short_opts[s++] = (char)o->key;
			if (o->metavar)
				short_opts[s++] = ':';
		}
	}
	long_opts[n].name = "help";
	long_opts[n].has_arg = no_argument;
	long_opts[n].flag = NULL;
	long_opts[n].val = 'h';
	memset(&long_opts[n + 1], 0, sizeof(long_opts[0]));
	short_opts[s++] = 'h';
	short_opts[s] = '\0';
	optind = 1;
	opterr = 0;
}

int kj_cli_optind(void)
{
	return optind;
}

int kj_cli_next(struct kj_cli_parser *p)
{
	int c = getopt_long(p->argc, p->argv, short_opts, long_opts, NULL);

	p->arg = optarg;
	switch (c) {
	case -1:
		return KJ_CLI_END;
	case 'h':
		return KJ_CLI_HELP;
	case '?':
		if (optopt)
			kj_cli_error(p->cmd, "unknown option '-%c'", optopt);
		else
			kj_cli_error(p->cmd, "unknown option '%s'",
				     p->argv[optind - 1]);
		return KJ_CLI_ERROR;
	case ':':
		kj_cli_error(p->cmd, "option '%s' needs an argument",
			     p->argv[optind - 1]);
		return KJ_CLI_ERROR;
	default:
		return c;
	}
}

void kj_cli_print_help(FILE *out, const struct kj_cli_command *cmd)
{
	const struct kj_cli_option *o;

	fprintf(out, "usage: kjudge %s %s\n\n%s\n", cmd->name, cmd->usage,
		cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s", cmd->description);
	fprintf(out, "\noptions:\n");
	for (o = cmd->options; o && o->name; o++) {
		char left[64];

		if (o->key < 256)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->key,
				 o->name, o->metavar ? " " : "",
				 o->metavar ? o->metavar : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->metavar ? " " : "",
				 o->metavar ? o->metavar : "");
		fprintf(out, "  %-28s %s\n", left, o->help);
	}
	fprintf(out, "  %-28s %s\n", "-h, --help", "show this help and exit");
	if (cmd->exit_codes)
		fprintf(out, "\nexit status:\n%s", cmd->exit_codes);
}

int kj_cli_error(const struct kj_cli_command *cmd, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "kjudge%s%s: ", cmd ? " " : "", cmd ? cmd->name : "");
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	return KJ_EXIT_USAGE;
}

int kj_cli_parse_uint(const struct kj_cli_command *cmd, const char *opt,
		      const char *s, int max)
{
	char *end;
	long v;

	errno = 0;
	v = strtol(s, &end, 10);
	if (errno || end == s || *end || v < 0 || v > max) {
		kj_cli_error(cmd, "option '--%s' wants a whole number from 0 "
			     "to %d, not '%s'", opt, max, s);
		return -1;
	}
	return (int)v;
}
