/*
 * cmd_serve.c - `kjudge serve`: the judge as an HTTP service (docs/serve.md).
 * The command reads its options, the token and the suite, and hands them
 * to the engine (kjudge/serve.h); SIGTERM or SIGINT drain it.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "kjudge/eval.h"
#include "kjudge/serve.h"
#include "cli.h"
#include "interrupt.h"
#include "base/fs.h"
#include "base/banned.h"

enum {
	OPT_LISTEN,
	OPT_SOCKET,
	OPT_DB,
	OPT_SUITE,
	OPT_DEVICE,
	OPT_GPUS,
	OPT_JOBS,
	OPT_TOKEN_FILE,
	OPT_QUEUE_MAX,
	OPT_MAX_BODY,
	OPT_SEED_EPOCH,
	OPT_NO_WARM,
	KJ_STUDY_OPTION_ENUMS,
	OPT_PYTHON,
	OPT_COUNT_
};

const struct kj_cli_option kj_serve_options[] = {
	[OPT_LISTEN] = { .name = "listen", .type = KJ_CLI_STRING, .metavar = "HOST:PORT",
			 .def = "127.0.0.1:0",
			 .help = "the address to answer on (port 0: a free one); an address "
				 "other than the loopback needs --token-file" },
	[OPT_SOCKET] = { .name = "socket", .type = KJ_CLI_STRING, .metavar = "PATH",
			 .help = "answer on a unix socket (mode 0600) instead" },
	[OPT_DB] = { .name = "db", .type = KJ_CLI_STRING, .metavar = "FILE",
		     .flags = KJ_CLI_REQUIRED,
		     .help = "the results store (SQLite, created when missing; eval's)" },
	[OPT_SUITE] = { .name = "suite", .type = KJ_CLI_STRING, .metavar = "DIR",
			.help = "a suite whose tasks requests may name ({\"task\": {\"name\"}})" },
	[OPT_DEVICE] = { .name = "device", .type = KJ_CLI_CHOICE, .metavar = "DEV",
			 .choices = kj_cli_devices, .def = "cuda when there is one, else cpu",
			 .help = "where both sides run" },
	[OPT_GPUS] = { .name = "gpus", .type = KJ_CLI_STRING, .metavar = "LIST",
		       .help = "GPUs to use, e.g. 0,1,3 (one timed phase per GPU at a time)" },
	[OPT_JOBS] = { .name = "jobs", .short_name = 'j', .type = KJ_CLI_INT, .metavar = "N",
		       .min = 1, .max = 256, .def = "2",
		       .help = "evaluations judged at once (one timed phase per device at a "
			       "time)" },
	[OPT_TOKEN_FILE] = { .name = "token-file", .type = KJ_CLI_STRING, .metavar = "FILE",
			     .help = "a file holding the bearer token every request but "
				     "/v1/health must carry" },
	[OPT_QUEUE_MAX] = { .name = "queue-max", .type = KJ_CLI_INT, .metavar = "N", .min = 1,
			    .max = 10000000, .def = "10000",
			    .help = "evaluations queued at most (past them: 429)" },
	[OPT_MAX_BODY] = { .name = "max-body-mb", .type = KJ_CLI_INT, .metavar = "N", .min = 1,
			   .max = 1024, .def = "16",
			   .help = "the largest request body, in MiB (past it: 413)" },
	[OPT_SEED_EPOCH] = { .name = "seed-epoch", .type = KJ_CLI_INT, .metavar = "N", .min = 0,
			     .max = 1000000000, .def = "1000",
			     .help = "evaluations per seed epoch: the secret seeds (and the "
				     "golden outputs made from them) change every N accepted "
				     "evaluations; 0: never" },
	[OPT_NO_WARM] = { .name = "no-warm", .type = KJ_CLI_FLAG,
			  .help = "start each evaluation's workers when it comes (by default "
				  "every free job keeps two workers with torch imported "
				  "waiting, each given one candidate)" },
	KJ_STUDY_OPTION_ROWS,
	[OPT_PYTHON] = { .name = "python", .type = KJ_CLI_STRING, .metavar = "PATH",
			 .def = "$KJ_PYTHON, then the .venv of kjudge's checkout, else python3",
			 .help = "Python interpreter with torch" },
	[OPT_COUNT_] = { .name = NULL },
};

static volatile sig_atomic_t drain;
static const struct kj_cli_command *serving;

static void on_signal(int sig)
{
	(void)sig;
	drain = 1;
}

static int child_setup(void)
{
	return kj_cli_guard(serving);
}

/* HOST:PORT ([V6]:PORT) into host (size bytes) and *port. */
static int split_listen(const char *text, char *host, size_t size, int *port)
{
	const char *colon = strrchr(text, ':');
	char *end;
	long p;

	if (!colon || colon == text)
		return -1;
	p = strtol(colon + 1, &end, 10);
	if (end == colon + 1 || *end || p < 0 || p > 65535)
		return -1;
	if (text[0] == '[' && colon[-1] == ']')
		snprintf(host, size, "%.*s", (int)(colon - text - 2), text + 1);
	else
		snprintf(host, size, "%.*s", (int)(colon - text), text);
	*port = (int)p;
	return *host ? 0 : -1;
}

static int loopback(const char *host)
{
	return strcmp(host, "localhost") == 0 || strcmp(host, "::1") == 0 ||
	       strncmp(host, "127.", 4) == 0;
}

/* The token: the file's first line, not empty, of a file only its owner
 * may read. */
static char *read_token(const struct kj_cli_command *cmd, const char *path)
{
	struct kj_error err;
	struct stat st;
	size_t len = 0;
	char *t = kj__read_file(path, 4096, &len, &err);

	if (!t) {
		kj_cli_error(cmd, "--token-file: %s", err.msg);
		return NULL;
	}
	t[strcspn(t, "\r\n")] = '\0';
	if (!*t || stat(path, &st) != 0 || (st.st_mode & 077)) {
		kj_cli_error(cmd, "--token-file: '%s' %s", kj_cli_shown(path), *t
			     ? "may be read by others than its owner (chmod 600 it)"
			     : "holds no token on its first line");
		free(t);
		return NULL;
	}
	return t;
}

static int kj_cmd_serve_run(const struct kj_cli_command *cmd, const struct kj_cli_args *a,
			    int argc, char **argv)
{
	const struct kj_cli_value *v = a->opt;
	struct kj_eval_settings s;
	struct kj_eval_set set;
	struct kj_serve_opts o;
	struct kj_config cfg;
	struct kj_serve *srv = NULL;
	struct kj_error err;
	struct sigaction sa;
	char host[256] = "127.0.0.1", devs[64][16], *token = NULL;
	int port = 0, rc, exit_code = KJ_EXIT_OK, n_devs = 1;

	kj_eval_set_init(&set);
	if (v[OPT_LISTEN].count && v[OPT_SOCKET].count)
		return kj_cli_error(cmd, "--listen and --socket: one or the other");
	if (v[OPT_LISTEN].count && split_listen(v[OPT_LISTEN].text, host, sizeof(host), &port))
		return kj_cli_error(cmd, "--listen: '%s' is not HOST:PORT",
				    kj_cli_shown(v[OPT_LISTEN].text));
	if (v[OPT_LISTEN].count && !loopback(host) && !v[OPT_TOKEN_FILE].count)
		return kj_cli_error(cmd, "--listen %s is not the loopback: it needs --token-file "
				    "(every request then carries the token)", kj_cli_shown(host));
	if (v[OPT_TOKEN_FILE].count && !(token = read_token(cmd, v[OPT_TOKEN_FILE].text)))
		return KJ_EXIT_USAGE;
	kj_judge_opts_init(&s.judge);
	kj_bench_opts_init(&s.bench);
	s.device = v[OPT_DEVICE].count ? v[OPT_DEVICE].text : NULL;
	s.no_benchmark = 0;
	s.ref_compiled = 0;
	kj_cli_study_settings(v + OPT_TIMEOUT, &s);
	rc = kj_cli_config(cmd, &cfg, v[OPT_PYTHON].count ? v[OPT_PYTHON].text : NULL);
	if (rc) {
		free(token);
		return rc;
	}
	s.python = cfg.python;
	s.sol_off = cfg.sol_off;
	s.bench.rounds = cfg.timed_rounds;
	if (!v[OPT_BUDGET].count && cfg.time_budget_s > 0)
		s.bench.budget_s = cfg.time_budget_s;
	if (s.bench.max_repeats < s.bench.repeats)
		s.bench.max_repeats = s.bench.repeats;
	if (v[OPT_GPUS].count) {
		if (s.device && strcmp(s.device, "cpu") == 0) {
			free(token);
			return kj_cli_error(cmd, "--gpus with --device cpu");
		}
		if (kj_eval_parse_gpus(v[OPT_GPUS].text, devs, 64, &n_devs, &err) != KJ_OK) {
			free(token);
			return kj_cli_error(cmd, "%s", err.msg);
		}
		s.device = "cuda";
	}
	if (!v[OPT_GPUS].count)
		snprintf(devs[0], sizeof(devs[0]), "%s", s.device ? s.device
			 : kj_eval_default_device());
	if (!s.device)
		s.device = strncmp(devs[0], "cuda", 4) == 0 ? "cuda" : "cpu";
	else if (strncmp(s.device, "cuda", 4) == 0)
		s.device = "cuda";
	if (v[OPT_SUITE].count && kj_eval_discover_suite(v[OPT_SUITE].text, &set, &err) != KJ_OK) {
		free(token);
		kj_eval_set_release(&set);
		return kj_cli_error(cmd, "%s", err.msg);
	}
	if (set.kind && strcmp(set.kind->name, "torch") != 0) {
		free(token);
		kj_eval_set_release(&set);
		return kj_cli_error(cmd, "--suite: serve judges torch tasks; '%s' is a suite of "
				    "%s", kj_cli_shown(v[OPT_SUITE].text), set.kind->name);
	}
	kj_cli_mem_budget(cmd, &cfg, kj_eval_workers_at_once((int)v[OPT_JOBS].integer ?
			  (int)v[OPT_JOBS].integer : 2, strcmp(s.device, "cpu") == 0, 0),
			  "serve's -j");
	memset(&o, 0, sizeof(o));
	o.host = host;
	o.port = port;
	o.socket_path = v[OPT_SOCKET].count ? v[OPT_SOCKET].text : NULL;
	o.token = token;
	o.db_path = v[OPT_DB].text;
	o.argc = argc;
	o.argv = argv;
	o.suite_dir = v[OPT_SUITE].count ? v[OPT_SUITE].text : NULL;
	o.cfg = &cfg;
	o.base = &s;
	o.suite = &set;
	o.jobs = v[OPT_JOBS].count ? (int)v[OPT_JOBS].integer : 2;
	o.devices = (const char (*)[16])devs;
	o.n_devices = n_devs;
	o.queue_max = v[OPT_QUEUE_MAX].count ? (int)v[OPT_QUEUE_MAX].integer : 10000;
	o.seed_epoch = v[OPT_SEED_EPOCH].count ? v[OPT_SEED_EPOCH].integer : 1000;
	o.max_body = (size_t)(v[OPT_MAX_BODY].count ? v[OPT_MAX_BODY].integer : 16) << 20;
	o.child_setup = child_setup;
	o.warm = !v[OPT_NO_WARM].count;
	serving = cmd;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	rc = kj_serve_open(&o, &srv, &err);
	if (rc != KJ_OK) {
		exit_code = kj_cli_error(cmd, "%s", err.msg);
		if (rc == KJ_ENOMEM || rc == KJ_ENOSPC)
			exit_code = KJ_EXIT_FAIL;
	} else {
		printf("listening on %s\n", kj_serve_address(srv));
		fflush(stdout);
		if (kj_serve_run(srv, &drain, &err) != KJ_OK) {
			kj_cli_error(cmd, "%s", err.msg);
			exit_code = KJ_EXIT_FAIL;
		}
		kj_serve_close(srv);
	}
	free(token);
	kj_eval_set_release(&set);
	return exit_code;
}

int kj_cmd_serve(const struct kj_cli_command *cmd, int argc, char **argv)
{
	struct kj_cli_args args;
	int rc;

	kj_cli_args_init(&args);
	if ((rc = kj_cli_start(cmd, argc, argv, &args)) >= 0)
		return rc;
	rc = kj_cmd_serve_run(cmd, &args, argc, argv);
	kj_cli_args_release(&args);
	return rc;
}
