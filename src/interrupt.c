/*
 * interrupt.c - what a command that starts workers does about signals.
 *
 * Before a run it installs the library's guard (kj_proc_guard_signals):
 * SIGINT, SIGTERM, SIGHUP or SIGQUIT then kill every worker's process
 * group at once and make the run unwind (its scratch removed, its workers
 * reaped).  A run that was interrupted writes no verdict: the command
 * returns at once with 128 + the signal, as a shell reports a process
 * killed by it, and says why on stderr.
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "kjudge/proc.h"
#include "interrupt.h"
#include "base/banned.h"

/* The grace period of the watchdog, past a request's own timeout. */
#define WATCHDOG_GRACE_S 60

static const char *guarded_name = "";

/* From the watchdog's thread: the judge is stuck where killing its
 * workers did not help.  Nothing can be trusted to unwind. */
static void on_stuck(double waited_s)
{
	char msg[256];
	int n = snprintf(msg, sizeof(msg), "kjudge %s: the judge made no progress for %.0f s, "
			 "even after its watchdog stopped the workers; stopped without a "
			 "verdict\n", guarded_name, waited_s);

	if (n > 0 && write(2, msg, strlen(msg)) < 0) {
		/* nothing more to say it with */
	}
	_exit(KJ_EXIT_FAIL);
}

int kj_cli_guard(const struct kj_cli_command *cmd)
{
	struct kj_error err;

	if (kj_proc_guard_signals(&err) != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	guarded_name = cmd ? cmd->name : "";
	if (kj_proc_watchdog_start(WATCHDOG_GRACE_S, on_stuck, &err) != KJ_OK)
		return kj_cli_error(cmd, "%s", err.msg);
	return 0;
}

static const char *signal_name(int sig)
{
	switch (sig) {
	case SIGINT:
		return "SIGINT";
	case SIGTERM:
		return "SIGTERM";
	case SIGHUP:
		return "SIGHUP";
	case SIGQUIT:
		return "SIGQUIT";
	default:
		return "a signal";
	}
}

int kj_cli_interrupted(const struct kj_cli_command *cmd)
{
	static int said;
	int sig = kj_proc_interrupted();

	if (!said) {
		said = 1;
		fprintf(stderr, "kjudge %s: interrupted by %s: the workers were "
			"killed and no verdict was written\n",
			cmd ? cmd->name : "", signal_name(sig));
	}
	return 128 + sig;
}
