/*
 * man.c - the man pages, in roff with the man macros, generated from the
 * command table and its option tables: the same rows --help prints, so the
 * two cannot disagree.  `kjudge help --man [CMD]` prints one; the Makefile
 * runs it for kjudge.1 and every kjudge-CMD.1 at build time.
 *
 * Text from the tables is escaped for roff: backslashes, hyphens (as \- so
 * that option names copied from the page are ASCII), a '.' or '\'' starting
 * a line, and every non-ASCII character as \[uXXXX], so that groff needs no
 * input encoding.  In the descriptions, indented lines are lists laid out
 * for a terminal: they are kept as they are (no-fill mode); other lines are
 * filled; a blank line starts a paragraph.
 */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "base/banned.h"

/* The length of the UTF-8 sequence starting with byte c, and its payload
 * bits; 0 for a byte that cannot start one. */
static int utf8_lead(unsigned char c, unsigned *cp)
{
	if (c < 0x80) {
		*cp = c;
		return 1;
	}
	if ((c & 0xe0) == 0xc0) {
		*cp = c & 0x1fu;
		return 2;
	}
	if ((c & 0xf0) == 0xe0) {
		*cp = c & 0x0fu;
		return 3;
	}
	if ((c & 0xf8) == 0xf0) {
		*cp = c & 0x07u;
		return 4;
	}
	return 0;
}

/* Write s[0..len) escaped for roff; `line_start` when it begins an input
 * line (where '.' and '\'' would be requests). */
static void roff_n(FILE *out, const char *s, size_t len, int line_start)
{
	size_t i = 0;

	if (line_start && len && (s[0] == '.' || s[0] == '\''))
		fputs("\\&", out);
	while (i < len) {
		unsigned char c = (unsigned char)s[i];
		unsigned cp = 0;
		int n = utf8_lead(c, &cp), k;

		if (c == '\\') {
			fputs("\\e", out);
		} else if (c == '-') {
			fputs("\\-", out);
		} else if (n == 1) {
			fputc(c, out);
		} else {
			for (k = 1; n > 1 && k < n && i + (size_t)k < len &&
				    ((unsigned char)s[i + (size_t)k] & 0xc0) == 0x80; k++)
				cp = (cp << 6) | ((unsigned char)s[i + (size_t)k] & 0x3fu);
			if (n < 2 || k < n) {
				/* Not UTF-8: the tables are ours, so this is a
				 * typo; it shows as a question mark, not as a
				 * byte groff would warn about. */
				fputc('?', out);
				i++;
				continue;
			}
			fprintf(out, "\\[u%04X]", cp);
			i += (size_t)n;
			continue;
		}
		i++;
	}
}

static void roff(FILE *out, const char *s, int line_start)
{
	roff_n(out, s, strlen(s), line_start);
}

/* A block of --help text: filled lines, indented runs kept as they are,
 * blank lines as paragraph breaks. */
static void roff_block(FILE *out, const char *text)
{
	const char *p = text;
	int nofill = 0;

	while (*p) {
		size_t len = strcspn(p, "\n");

		if (len == 0) {
			if (nofill)
				fputs(".fi\n", out);
			nofill = 0;
			fputs(".PP\n", out);
		} else {
			if (p[0] == ' ' && !nofill)
				fputs(".nf\n", out);
			else if (p[0] != ' ' && nofill)
				fputs(".fi\n", out);
			nofill = p[0] == ' ';
			roff_n(out, p, len, 1);
			fputc('\n', out);
		}
		p += len;
		if (*p == '\n')
			p++;
	}
	if (nofill)
		fputs(".fi\n", out);
}

/* "  N  meaning" lines (continuations indented further) as tagged
 * paragraphs. */
static void roff_exit_codes(FILE *out, const char *text)
{
	const char *p = text;

	while (*p) {
		size_t len = strcspn(p, "\n"), lead = strspn(p, " ");

		if (lead < len) {
			const char *w = p + lead;
			size_t wl = len - lead, code = strspn(w, "0123456789");

			if (code && code < wl && w[code] == ' ') {
				size_t gap = strspn(w + code, " ");

				fputs(".TP\n.B ", out);
				roff_n(out, w, code, 0);
				fputc('\n', out);
				roff_n(out, w + code + gap, wl - code - gap, 1);
			} else {
				roff_n(out, w, wl, 1);
			}
			fputc('\n', out);
		}
		p += len;
		if (*p == '\n')
			p++;
	}
}

/* A one-line summary as the NAME section wants it: lowercase first word
 * (unless it is an acronym), no final period. */
static void roff_name_line(FILE *out, const char *page, const char *summary)
{
	size_t len = strlen(summary);

	roff(out, page, 1);
	fputs(" \\- ", out);
	if (len && summary[len - 1] == '.')
		len--;
	if (len > 1 && summary[0] >= 'A' && summary[0] <= 'Z' &&
	    !(summary[1] >= 'A' && summary[1] <= 'Z')) {
		fputc(summary[0] - 'A' + 'a', out);
		roff_n(out, summary + 1, len - 1, 0);
	} else {
		roff_n(out, summary, len, 0);
	}
	fputc('\n', out);
}

static void roff_env(FILE *out, const struct kj_cli_env *e)
{
	for (; e && e->name; e++) {
		fputs(".TP\n.B ", out);
		roff(out, e->name, 0);
		fputc('\n', out);
		roff(out, e->meaning, 1);
		fputc('\n', out);
	}
}

static void roff_see_also(FILE *out, const struct kj_cli_command *self,
			  const struct kj_cli_command *all, size_t n)
{
	size_t i;
	int first = 1;

	fputs(".SH SEE ALSO\n", out);
	if (self) {
		fputs(".BR kjudge (1)", out);
		first = 0;
	}
	for (i = 0; i < n; i++) {
		if (&all[i] == self)
			continue;
		fputs(first ? "" : ",\n", out);
		fputs(".BR kjudge\\-", out);
		roff(out, all[i].name, 0);
		fputs(" (1)", out);
		first = 0;
	}
	fputs("\n", out);
}

static void roff_title(FILE *out, const char *cmd)
{
	const char *c;

	fputs(".TH KJUDGE", out);
	if (cmd) {
		fputs("\\-", out);
		for (c = cmd; *c; c++)
			fputc(*c >= 'a' && *c <= 'z' ? *c - 'a' + 'A' : *c, out);
	}
	fputs(" 1 \"\" \"kjudge " KJ_VERSION "\" \"kjudge manual\"\n", out);
	/* Names, paths and options read best unbroken and unstretched. */
	fputs(".nh\n.ad l\n", out);
}

void kj_cli_print_man(FILE *out, const struct kj_cli_command *cmd,
		      const struct kj_cli_command *all, size_t n)
{
	const struct kj_cli_option *o;
	char page[64], text[1024];

	snprintf(page, sizeof(page), "kjudge-%s", cmd->name);
	roff_title(out, cmd->name);
	fputs(".SH NAME\n", out);
	roff_name_line(out, page, cmd->summary);
	fputs(".SH SYNOPSIS\n.B kjudge ", out);
	roff(out, cmd->name, 0);
	fputc('\n', out);
	roff(out, cmd->usage, 1);
	fputs("\n.SH DESCRIPTION\n", out);
	roff(out, cmd->summary, 1);
	fputs("\n.PP\n", out);
	if (cmd->description)
		roff_block(out, cmd->description);
	fputs(".SH OPTIONS\n"
	      "Options and operands may come in any order; see\n"
	      ".BR kjudge (1)\n"
	      "for the rules of a command line.\n", out);
	for (o = cmd->options; o && o->name; o++) {
		fputs(".TP\n", out);
		if (o->short_name)
			fprintf(out, "\\fB\\-%c\\fR, ", o->short_name);
		fputs("\\fB\\-\\-", out);
		roff(out, o->name, 0);
		fputs("\\fR", out);
		if (o->metavar) {
			fputs(" \\fI", out);
			roff(out, o->metavar, 0);
			fputs("\\fR", out);
		}
		fputc('\n', out);
		kj_cli_option_text(o, text, sizeof(text));
		roff(out, text, 1);
		fputc('\n', out);
	}
	fputs(".TP\n\\fB\\-h\\fR, \\fB\\-\\-help\\fR\nshow the help and exit\n", out);
	if (cmd->exit_codes) {
		fputs(".SH EXIT STATUS\n", out);
		roff_exit_codes(out, cmd->exit_codes);
	}
	if (cmd->environment) {
		fputs(".SH ENVIRONMENT\n", out);
		roff_env(out, cmd->environment);
	}
	roff_see_also(out, cmd, all, n);
}

/* The rules of a command line (cli.h), for kjudge(1). */
static const char *const line_rules[] = {
	"Options and operands may come in any order: kjudge validate FILE --json.",
	"A value follows its option as --opt=value or --opt value; short options, "
	"where a command has them, as -j 4 or -j4.",
	"-- ends the options: every word after it is an operand, even one that "
	"starts with -.  A lone - is an operand.",
	"Long names are exact: a prefix such as --op is refused and the options it "
	"could mean are named.",
	"--opt value does not take a value that starts with --; write --opt=--x "
	"for that.",
	"Numbers are checked whole and against their range (the message says it); "
	"nan, inf and numbers too large for a double are refused.",
	"An option given twice: the last one wins, except those documented as "
	"adding up (doctor's --group).",
	"A bad command line is one line on standard error naming the option or "
	"operand as typed, and exit status 2.",
	NULL,
};

/* Whether a command before all[i] reads the variable `name`. */
static int named_before(const struct kj_cli_command *all, size_t i, const char *name)
{
	const struct kj_cli_env *f;
	size_t j;

	for (j = 0; j < i; j++)
		for (f = all[j].environment; f && f->name; f++)
			if (!strcmp(f->name, name))
				return 1;
	return 0;
}

void kj_cli_print_man_main(FILE *out, const char *intro,
			   const struct kj_cli_command *all, size_t n)
{
	size_t i;

	roff_title(out, NULL);
	fputs(".SH NAME\nkjudge \\- judge generated compute kernels\n"
	      ".SH SYNOPSIS\n.B kjudge\n[\\-\\-version] [\\-\\-help] COMMAND [ARGS]\n"
	      ".SH DESCRIPTION\n", out);
	roff_block(out, intro);
	fputs(".SH COMMANDS\n", out);
	for (i = 0; i < n; i++) {
		fputs(".TP\n.BR kjudge\\-", out);
		roff(out, all[i].name, 0);
		fputs(" (1)\n", out);
		roff(out, all[i].summary, 1);
		fputc('\n', out);
	}
	fputs(".SH COMMAND LINES\n", out);
	for (i = 0; line_rules[i]; i++) {
		fputs(".IP \\(bu 2\n", out);
		roff(out, line_rules[i], 1);
		fputc('\n', out);
	}
	fputs(".SH EXIT STATUS\n"
	      "Each command's page says what its codes mean; for all of them:\n"
	      ".TP\n.B 0\nsuccess, or the judged thing passed\n"
	      ".TP\n.B 1\nthe judged thing failed: a verdict, printed or written\n"
	      ".TP\n.B 2\na usage or input error: nothing was judged\n", out);
	fputs(".SH ENVIRONMENT\n", out);
	for (i = 0; i < n; i++) {
		const struct kj_cli_env *e;

		/* Once each, in the order the commands name them. */
		for (e = all[i].environment; e && e->name; e++)
			if (!named_before(all, i, e->name))
				roff_env(out, (const struct kj_cli_env[]){ *e, { NULL, NULL } });
	}
	fputs(".SH FILES\n.TP\n.I kjudge_worker.py\n"
	      "the torch runner's worker: beside the kjudge executable (a build\n"
	      "directory), else in\n.I ../libexec/kjudge/\n"
	      "from the executable's real path (an installed kjudge)\n", out);
	roff_see_also(out, NULL, all, n);
}
