/*
 * interrupt.h - the commands that start workers and signals (interrupt.c).
 */
#ifndef KJ_INTERRUPT_H
#define KJ_INTERRUPT_H

#include "cli.h"

/* Install the library's signal guard (kjudge/proc.h) before a run.
 * Returns 0, or KJ_EXIT_USAGE after printing why it could not be. */
int kj_cli_guard(const struct kj_cli_command *cmd);

/* After a run the guard interrupted: say so on stderr (once, however often
 * it is called) and return the exit status, 128 + the signal. */
int kj_cli_interrupted(const struct kj_cli_command *cmd);

#endif /* KJ_INTERRUPT_H */
