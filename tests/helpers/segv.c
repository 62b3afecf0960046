/*
 * segv.c - a program that dies of a real memory fault: the kernel's
 * SIGSEGV, which even PID 1 of a PID namespace cannot ignore (a signal it
 * sent itself, kill -SEGV $$, it would).  tests/unit/test_proc.c runs it as
 * a worker that crashes.
 */
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	/* Address 16 when run without arguments: unmapped, and not NULL
	 * (which a sanitizer build would stop at before the load); volatile,
	 * so the load is made and not reasoned away. */
	volatile int *p = (volatile int *)(uintptr_t)(argc + 15);
	/* The kernel's struct sigaction: handler, flags, restorer, mask. */
	struct {
		void (*handler)(int);
		unsigned long flags;
		void (*restorer)(void);
		unsigned long mask;
	} dfl;

	(void)argv;
	/* A sanitizer build catches SIGSEGV to report it; the default
	 * action, set past its interceptors, makes the death a signal's. */
	memset(&dfl, 0, sizeof(dfl));
	dfl.handler = SIG_DFL;
	syscall(SYS_rt_sigaction, SIGSEGV, &dfl, NULL, sizeof(dfl.mask));
	printf("%d\n", *p);
	return 0;
}
