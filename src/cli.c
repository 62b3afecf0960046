/*
 * cli.c - the option parser over a command's typed option table, and the
 * --help text generated from the same rows (the rules are in cli.h).
 *
 * One pass over argv, left to right: "--" switches to operands only, a word
 * that does not start with '-' (or is "-") is an operand, "--name[=value]"
 * is looked up exactly, "-abc" is a cluster of short options of which the
 * last may take the rest of the word or the next word as its value.  Each
 * value is converted by its row's type at once, so the first bad word is the
 * one the message names.  The checks that need the whole line (required
 * options, operand counts) come after the pass.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "base/text.h"
#include "base/banned.h"

/* A choice "word:N" takes word:0 .. word:KJ_CLI_INDEX_MAX. */
#define KJ_CLI_INDEX_MAX 1023

void kj_cli_args_init(struct kj_cli_args *a)
{
	a->opt = NULL;
	a->operands = NULL;
	a->n_operands = 0;
	a->error[0] = '\0';
}

void kj_cli_args_release(struct kj_cli_args *a)
{
	free(a->opt);
	free(a->operands);
	kj_cli_args_init(a);
}

__attribute__((format(printf, 2, 3)))
static int fail(struct kj_cli_args *a, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(a->error, sizeof(a->error), fmt, ap);
	va_end(ap);
	return KJ_CLI_ERROR;
}

/* The most bytes of a word typed by the user that a message repeats. */
#define SHOW_MAX 64

/*
 * s[0..len) as a message repeats it: whole when short, else its first
 * SHOW_MAX bytes cut on a UTF-8 character boundary and followed by "...", so
 * that a pasted page in a value neither crowds out the rest of the message
 * nor leaves half a character in it.  Returns buf (SHOW_MAX + 4 bytes).
 */
static const char *show(const char *s, size_t len, char *buf)
{
	size_t n = len;

	if (n > SHOW_MAX) {
		n = SHOW_MAX;
		while (n > 0 && ((unsigned char)s[n] & 0xc0) == 0x80)
			n--;
	}
	snprintf(buf, SHOW_MAX + 4, "%.*s%s", (int)n, s, n < len ? "..." : "");
	return buf;
}

/* A range bound as people write it: whole numbers without an exponent
 * (2147483, not 2.14748e+06), others in %g. */
static void fmt_bound(double v, char *buf, size_t size)
{
	if (v == floor(v) && fabs(v) < 1e16)
		snprintf(buf, size, "%.0f", v);
	else
		snprintf(buf, size, "%g", v);
}

/* "a, b or c" of a NULL-terminated list, into buf (cut to size). */
static void fmt_words(const char *const *w, char *buf, size_t size)
{
	size_t n = 0, i, len = 0;

	while (w[n])
		n++;
	buf[0] = '\0';
	for (i = 0; i < n && len < size; i++) {
		int k = snprintf(buf + len, size - len, "%s%s",
				 i == 0 ? "" : i + 1 == n ? " or " : ", ", w[i]);

		if (k < 0)
			break;
		len += (size_t)k;
	}
}

void kj_cli_wants(const struct kj_cli_option *o, char *buf, size_t size)
{
	char lo[32], hi[32], words[256];

	switch (o->type) {
	case KJ_CLI_INT:
	case KJ_CLI_NUMBER:
		fmt_bound(o->min, lo, sizeof(lo));
		fmt_bound(o->max, hi, sizeof(hi));
		snprintf(buf, size, "a %s%s%s from %s to %s",
			 o->type == KJ_CLI_INT ? "whole number" : "number",
			 o->unit ? " of " : "", o->unit ? o->unit : "", lo, hi);
		break;
	case KJ_CLI_CHOICE:
		fmt_words(o->choices, buf, size);
		break;
	case KJ_CLI_CHOICES:
		fmt_words(o->choices, words, sizeof(words));
		snprintf(buf, size, "%s, or a comma list of them", words);
		break;
	default:
		snprintf(buf, size, "%s", o->metavar ? o->metavar : "a value");
		break;
	}
}

/* Whether s is wholly a decimal whole number: an optional '-', digits. */
static int whole_number_text(const char *s)
{
	if (*s == '-')
		s++;
	if (!*s)
		return 0;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return 0;
	return 1;
}

/* Whether s is wholly a decimal number (digits, one point, an exponent):
 * strtod alone would also take "inf", "nan", hex and leading blanks. */
static int decimal_text(const char *s)
{
	int digits = 0;

	if (*s == '-' || *s == '+')
		s++;
	for (; *s >= '0' && *s <= '9'; s++)
		digits++;
	if (*s == '.')
		for (s++; *s >= '0' && *s <= '9'; s++)
			digits++;
	if (!digits)
		return 0;
	if (*s == 'e' || *s == 'E') {
		s++;
		if (*s == '-' || *s == '+')
			s++;
		if (*s < '0' || *s > '9')
			return 0;
		while (*s >= '0' && *s <= '9')
			s++;
	}
	return *s == '\0';
}

/* The index of the choice `s` is, or -1.  "word:N" matches word:0 ..
 * word:KJ_CLI_INDEX_MAX, written without a sign or leading zeros. */
static int match_choice(const char *const *choices, const char *s, size_t len)
{
	int i;

	for (i = 0; choices[i]; i++) {
		const char *c = choices[i];
		size_t cl = strlen(c);
		int pattern = cl >= 2 && !strcmp(c + cl - 2, ":N");

		if (!pattern && cl == len && !memcmp(c, s, len))
			return i;
		if (pattern && len > cl - 1 && !memcmp(c, s, cl - 1)) {
			const char *d = s + cl - 1;
			size_t dl = len - (cl - 1), k;
			long v = 0;

			if (dl > 4 || (dl > 1 && d[0] == '0'))
				continue;
			for (k = 0; k < dl && d[k] >= '0' && d[k] <= '9'; k++)
				v = v * 10 + (d[k] - '0');
			if (k == dl && v <= KJ_CLI_INDEX_MAX)
				return i;
		}
	}
	return -1;
}

/* Convert `value` by o's type into v.  `as` is the option as typed. */
static int store(struct kj_cli_args *a, const struct kj_cli_option *o,
		 struct kj_cli_value *v, const char *as, const char *value)
{
	char wants[320], shown[SHOW_MAX + 4];
	char *end;

	kj_cli_wants(o, wants, sizeof(wants));
	if (!*value)
		return fail(a, "option '%s' wants %s, not an empty string", as, wants);
	switch (o->type) {
	case KJ_CLI_INT: {
		long long x;

		errno = 0;
		x = whole_number_text(value) ? strtoll(value, &end, 10) : 0;
		if (!whole_number_text(value) || errno || *end ||
		    (double)x < o->min || (double)x > o->max)
			return fail(a, "option '%s' wants %s, not '%s'", as, wants,
				    show(value, strlen(value), shown));
		v->integer = x;
		break;
	}
	case KJ_CLI_NUMBER: {
		double x = decimal_text(value) ? strtod(value, &end) : (double)NAN;

		/* isfinite refuses what overflowed (1e309 is inf with
		 * ERANGE); an underflow to 0 or a subnormal is a number,
		 * which the range then judges. */
		if (!isfinite(x) || x < o->min || x > o->max)
			return fail(a, "option '%s' wants %s, not '%s'", as, wants,
				    show(value, strlen(value), shown));
		v->number = x;
		break;
	}
	case KJ_CLI_CHOICE: {
		int c = match_choice(o->choices, value, strlen(value));

		if (c < 0)
			return fail(a, "option '%s' wants %s, not '%s'", as, wants,
				    show(value, strlen(value), shown));
		v->choice = c;
		break;
	}
	case KJ_CLI_CHOICES: {
		const char *p = value;
		unsigned mask = 0;

		for (;;) {
			size_t n = strcspn(p, ",");
			int c = match_choice(o->choices, p, n);

			if (c < 0 && n == 0)
				return fail(a, "option '%s' wants %s, not '%s' (an empty "
					    "item)", as, wants, show(value, strlen(value), shown));
			if (c < 0)
				return fail(a, "option '%s' wants %s, not '%s'", as, wants,
					    show(p, n, shown));
			mask |= 1u << c;
			if (!p[n])
				break;
			p += n + 1;
		}
		v->mask |= mask;
		break;
	}
	default:
		break;
	}
	v->text = value;
	return KJ_CLI_OK;
}

/* One byte of a long name as it is compared: '_' and '-' are the same, so
 * that --input-sets and --verify_only name --input_sets and --verify-only. */
static char name_byte(char c)
{
	return c == '_' ? '-' : c;
}

/* Whether `row` starts with name[0..len), '_' and '-' alike. */
static int starts_as(const char *row, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if (!row[i] || name_byte(row[i]) != name_byte(name[i]))
			return 0;
	return 1;
}

/* Whether name[0..len) is `row`, '_' and '-' alike. */
static int same_name(const char *row, const char *name, size_t len)
{
	return strlen(row) == len && starts_as(row, name, len);
}

int kj_cli_long_is(const char *word, const char *name, const char **value)
{
	const char *eq;
	size_t len;

	if (strncmp(word, "--", 2) != 0)
		return 0;
	word += 2;
	eq = strchr(word, '=');
	len = eq ? (size_t)(eq - word) : strlen(word);
	if (!same_name(name, word, len))
		return 0;
	*value = eq ? eq + 1 : NULL;
	return 1;
}

/* The row named name[0..len), '_' and '-' alike, or -1. */
static int find_long(const struct kj_cli_option *opts, const char *name, size_t len)
{
	int i;

	for (i = 0; opts && opts[i].name; i++)
		if (same_name(opts[i].name, name, len))
			return i;
	return -1;
}

static int find_short(const struct kj_cli_option *opts, char c)
{
	int i;

	for (i = 0; opts && opts[i].name; i++)
		if (opts[i].short_name && opts[i].short_name == c)
			return i;
	return -1;
}

/* Longest option name the suggestion compares; longer words are no slip. */
#define TYPO_MAX 64

/*
 * The edit distance of a[0..la) and b[0..lb) with '_' and '-' alike:
 * insertions, deletions, substitutions and the swap of two neighbours
 * (`--timeuot`) each cost one.  Both at most TYPO_MAX bytes.
 */
static size_t typo_distance(const char *a, size_t la, const char *b, size_t lb)
{
	size_t d[TYPO_MAX + 1][TYPO_MAX + 1], i, j;

	for (i = 0; i <= la; i++)
		d[i][0] = i;
	for (j = 0; j <= lb; j++)
		d[0][j] = j;
	for (i = 1; i <= la; i++)
		for (j = 1; j <= lb; j++) {
			size_t cost = name_byte(a[i - 1]) != name_byte(b[j - 1]);
			size_t v = d[i - 1][j - 1] + cost;

			if (d[i - 1][j] + 1 < v)
				v = d[i - 1][j] + 1;
			if (d[i][j - 1] + 1 < v)
				v = d[i][j - 1] + 1;
			if (i > 1 && j > 1 && name_byte(a[i - 1]) == name_byte(b[j - 2]) &&
			    name_byte(a[i - 2]) == name_byte(b[j - 1]) && d[i - 2][j - 2] + 1 < v)
				v = d[i - 2][j - 2] + 1;
			d[i][j] = v;
		}
	return d[la][lb];
}

/*
 * The option name[0..len) was most likely meant to be, or NULL: the nearest
 * of the command's long names and "help" by typo_distance, when it is near
 * enough to be a slip (one edit for names up to 4 bytes, two up to 8, three
 * beyond) and no other name is as near.
 */
static const char *nearest_long(const struct kj_cli_option *opts, const char *name,
				size_t len)
{
	const char *best = NULL;
	size_t best_d = (size_t)-1, limit = len <= 4 ? 1 : len <= 8 ? 2 : 3;
	int i, tie = 0;

	if (len == 0 || len > TYPO_MAX)
		return NULL;
	for (i = -1; i < 0 || (opts && opts[i].name); i++) {
		const char *row = i < 0 ? "help" : opts[i].name;
		size_t rl = strlen(row), dist;

		if (rl > TYPO_MAX)
			continue;
		dist = typo_distance(name, len, row, rl);
		if (dist < best_d) {
			best_d = dist;
			best = row;
			tie = 0;
		} else if (dist == best_d) {
			tie = 1;
		}
	}
	return best && best_d <= limit && !tie ? best : NULL;
}

/* "unknown option '--op'", with the options it is a prefix of, or the one
 * it is a slip of. */
static int unknown_long(struct kj_cli_args *a, const struct kj_cli_option *opts,
			const char *name, size_t len)
{
	char hint[192], shown[SHOW_MAX + 4];
	const char *near;
	size_t hl = 0;
	int i, n = 0;

	hint[0] = '\0';
	for (i = 0; opts && opts[i].name; i++) {
		int k;

		if (len == 0 || !starts_as(opts[i].name, name, len) || hl >= sizeof(hint))
			continue;
		k = snprintf(hint + hl, sizeof(hint) - hl, "%s'--%s'", n ? ", " : "",
			     opts[i].name);
		if (k > 0)
			hl += (size_t)k;
		n++;
	}
	if (n)
		return fail(a, "unknown option '--%s' (names are not abbreviated: "
			    "did you mean %s?)", show(name, len, shown), hint);
	if ((near = nearest_long(opts, name, len)) != NULL)
		return fail(a, "unknown option '--%s'; did you mean '--%s'?",
			    show(name, len, shown), near);
	return fail(a, "unknown option '--%s'", show(name, len, shown));
}

/* The value of an option that takes one and was not given it in the same
 * word: the next word, unless there is none or it starts with "--". */
static const char *next_value(int argc, char **argv, int *i)
{
	if (*i + 1 >= argc || !strncmp(argv[*i + 1], "--", 2))
		return NULL;
	return argv[++*i];
}

static size_t count_rows(const struct kj_cli_option *opts)
{
	size_t n = 0;

	while (opts && opts[n].name)
		n++;
	return n;
}

static int check_line(const struct kj_cli_command *cmd, struct kj_cli_args *a)
{
	const struct kj_cli_option *opts = cmd->options;
	int i, n = a->n_operands;
	char shown[SHOW_MAX + 4];

	for (i = 0; opts && opts[i].name; i++)
		if ((opts[i].flags & KJ_CLI_REQUIRED) && !a->opt[i].count)
			return fail(a, "option '--%s' is required", opts[i].name);
	if (cmd->max_operands == 0 && n > 0)
		return fail(a, "takes no operands, got '%s'",
			    show(a->operands[0], strlen(a->operands[0]), shown));
	if (n < cmd->min_operands || (cmd->max_operands >= 0 && n > cmd->max_operands))
		return fail(a, "expected %s, got %d operand%s",
			    cmd->operands ? cmd->operands : "other operands", n,
			    n == 1 ? "" : "s");
	return KJ_CLI_OK;
}

int kj_cli_parse(const struct kj_cli_command *cmd, int argc, char **argv,
		 struct kj_cli_args *a)
{
	const struct kj_cli_option *opts = cmd->options;
	size_t n_rows = count_rows(opts);
	int i, only_operands = 0, rc;
	char shown[SHOW_MAX + 4];

	kj_cli_args_release(a);
	a->opt = calloc(n_rows ? n_rows : 1, sizeof(*a->opt));
	a->operands = calloc(argc > 0 ? (size_t)argc : 1, sizeof(*a->operands));
	if (!a->opt || !a->operands) {
		fail(a, "out of memory");
		return KJ_CLI_NOMEM;
	}
	for (i = 1; i < argc; i++) {
		const char *s = argv[i];

		if (only_operands || s[0] != '-' || !s[1]) {
			a->operands[a->n_operands++] = argv[i];
			continue;
		}
		if (!strcmp(s, "--")) {
			only_operands = 1;
			continue;
		}
		if (s[1] == '-') {
			const char *name = s + 2, *eq = strchr(name, '=');
			size_t len = eq ? (size_t)(eq - name) : strlen(name);
			const char *value = eq ? eq + 1 : NULL;
			char as[80];
			int r = find_long(opts, name, len);

			snprintf(as, sizeof(as), "--%.*s", (int)len, name);
			if (r < 0 && len == 4 && !strncmp(name, "help", 4)) {
				if (eq)
					return fail(a, "option '--help' takes no value");
				return KJ_CLI_HELP;
			}
			if (r < 0)
				return unknown_long(a, opts, name, len);
			a->opt[r].count++;
			if (opts[r].type == KJ_CLI_FLAG) {
				if (eq)
					return fail(a, "option '%s' takes no value", as);
				continue;
			}
			if (!value && !(value = next_value(argc, argv, &i)))
				return fail(a, "option '%s' needs a value (%s)", as,
					    opts[r].metavar ? opts[r].metavar : "a value");
			if ((rc = store(a, &opts[r], &a->opt[r], as, value)) != KJ_CLI_OK)
				return rc;
			continue;
		}
		/* A cluster of short options: flags, then at most one that
		 * takes a value, which is the rest of the word or the next. */
		for (s++; *s; s++) {
			char as[3] = { '-', *s, '\0' };
			int r = find_short(opts, *s);
			const char *value;

			if (r < 0 && *s == 'h')
				return KJ_CLI_HELP;
			/* A byte of a multibyte character is no option
			 * letter, and alone it is not text: name the word. */
			if (r < 0 && ((unsigned char)*s >= 0x80 || (unsigned char)*s < 0x20))
				return fail(a, "unknown option '%s'",
					    show(argv[i], strlen(argv[i]), shown));
			if (r < 0)
				return fail(a, "unknown option '%s'", as);
			a->opt[r].count++;
			if (opts[r].type == KJ_CLI_FLAG)
				continue;
			value = s[1] ? s + 1 : next_value(argc, argv, &i);
			if (!value)
				return fail(a, "option '%s' needs a value (%s)", as,
					    opts[r].metavar ? opts[r].metavar : "a value");
			if ((rc = store(a, &opts[r], &a->opt[r], as, value)) != KJ_CLI_OK)
				return rc;
			break;
		}
	}
	return check_line(cmd, a);
}

int kj_cli_start(const struct kj_cli_command *cmd, int argc, char **argv,
		 struct kj_cli_args *a)
{
	int rc;

	switch (kj_cli_parse(cmd, argc, argv, a)) {
	case KJ_CLI_OK:
		return -1;
	case KJ_CLI_HELP:
		kj_cli_print_help(stdout, cmd);
		rc = fflush(stdout) ? kj_cli_error(cmd, "cannot write to standard output")
				    : KJ_EXIT_OK;
		break;
	case KJ_CLI_NOMEM:
		kj_cli_error(cmd, "%s", a->error);
		rc = kj_cli_judge_exit(cmd);
		break;
	default:
		rc = kj_cli_error(cmd, "%s", a->error);
		break;
	}
	kj_cli_args_release(a);
	return rc;
}

int kj_cli_judge_exit(const struct kj_cli_command *cmd)
{
	return cmd && cmd->judge_exit ? cmd->judge_exit : KJ_EXIT_USAGE;
}

int kj_cli_exit_for(const struct kj_cli_command *cmd, int code)
{
	return code == KJ_ENOMEM || code == KJ_ENOSPC ? kj_cli_judge_exit(cmd) : KJ_EXIT_USAGE;
}

/* Print `text` from column `col` on, wrapped at 79 columns, continuation
 * lines starting at column `indent`. */
static void print_wrapped(FILE *out, const char *text, int col, int indent)
{
	const char *p = text;

	while (*p) {
		size_t word = strcspn(p, " ");

		if (col > indent && col + 1 + (int)word > 79) {
			fprintf(out, "\n%*s", indent, "");
			col = indent;
		} else if (col > indent) {
			fputc(' ', out);
			col++;
		}
		fprintf(out, "%.*s", (int)word, p);
		col += (int)word;
		p += word;
		while (*p == ' ')
			p++;
	}
	fputc('\n', out);
}

void kj_cli_option_text(const struct kj_cli_option *o, char *buf, size_t size)
{
	char wants[320], extra[480];

	extra[0] = '\0';
	if (o->type == KJ_CLI_INT || o->type == KJ_CLI_NUMBER) {
		char lo[32], hi[32];

		/* The help phrase says what the number is; the range is
		 * enough here. */
		fmt_bound(o->min, lo, sizeof(lo));
		fmt_bound(o->max, hi, sizeof(hi));
		snprintf(extra, sizeof(extra), "%s to %s", lo, hi);
	} else if (o->type != KJ_CLI_FLAG && o->type != KJ_CLI_STRING) {
		kj_cli_wants(o, wants, sizeof(wants));
		snprintf(extra, sizeof(extra), "%s", wants);
	}
	if (o->def)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%sdefault %s",
			 extra[0] ? "; " : "", o->def);
	if (o->flags & KJ_CLI_REQUIRED)
		snprintf(extra + strlen(extra), sizeof(extra) - strlen(extra), "%srequired",
			 extra[0] ? "; " : "");
	if (extra[0])
		snprintf(buf, size, "%s (%s)", o->help, extra);
	else
		snprintf(buf, size, "%s", o->help);
}

/* One row of a --help table: `left` in a column of 28, `text` wrapped
 * beside it (below it when `left` is wider). */
static void print_row(FILE *out, const char *left, const char *text)
{
	int col = fprintf(out, "  %-28s", left);

	if (col > 30) {
		fprintf(out, "\n%31s", "");
		col = 31;
	} else {
		fputc(' ', out);
		col++;
	}
	print_wrapped(out, text, col, 31);
}

void kj_cli_print_help(FILE *out, const struct kj_cli_command *cmd)
{
	const struct kj_cli_option *o;
	const struct kj_cli_env *e;
	char text[1024];

	fprintf(out, "usage: kjudge %s %s\n\n%s\n", cmd->name, cmd->usage,
		cmd->summary);
	if (cmd->description)
		fprintf(out, "\n%s", cmd->description);
	fprintf(out, "\noptions:\n");
	for (o = cmd->options; o && o->name; o++) {
		char left[64];

		if (o->short_name)
			snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name,
				 o->name, o->metavar ? " " : "",
				 o->metavar ? o->metavar : "");
		else
			snprintf(left, sizeof(left), "    --%s%s%s", o->name,
				 o->metavar ? " " : "", o->metavar ? o->metavar : "");
		kj_cli_option_text(o, text, sizeof(text));
		print_row(out, left, text);
	}
	print_row(out, "-h, --help", "show this help and exit");
	if (cmd->environment) {
		fprintf(out, "\nenvironment:\n");
		for (e = cmd->environment; e->name; e++)
			print_row(out, e->name, e->meaning);
	}
	if (cmd->exit_codes)
		fprintf(out, "\nexit status:\n%s", cmd->exit_codes);
}

int kj_cli_error(const struct kj_cli_command *cmd, const char *fmt, ...)
{
	char msg[8192], shown[16384];
	va_list ap;

	/* A message quotes names and texts of studies, generations and
	 * candidates: every control reaches the terminal escaped, but the
	 * line breaks of a traceback a message carries (a task that does not
	 * load) and its tabs. */
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	fprintf(stderr, "kjudge%s%s: %s\n", cmd ? " " : "", cmd ? cmd->name : "",
		kj__text_shown(msg, KJ__SHOWN_LINES, shown, sizeof(shown)));
	return KJ_EXIT_USAGE;
}

/* kj_cli_shown's buffers: one printf may quote up to this many texts. */
#define SHOWN_SLOTS 8
#define SHOWN_MAX 2048

const char *kj_cli_shown(const char *s)
{
	static _Thread_local char slot[SHOWN_SLOTS][SHOWN_MAX];
	static _Thread_local unsigned next;
	char *buf = slot[next++ % SHOWN_SLOTS];

	return kj__text_shown(s, 0, buf, SHOWN_MAX);
}

int kj_cli_put_shown(FILE *f, const char *s)
{
	struct kj__buf b;
	int rc;

	kj__buf_init(&b, (size_t)-1 / 2);
	rc = kj__buf_add_shown(&b, s ? s : "", s ? strlen(s) : 0, KJ__SHOWN_LINES);
	if (rc == 0 && b.len && fwrite(b.data, 1, b.len, f) != b.len)
		rc = -1;
	kj__buf_release(&b);
	return rc;
}
