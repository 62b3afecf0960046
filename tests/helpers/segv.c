/*
 * segv.c - a program that dies of a real memory fault: the kernel's
 * SIGSEGV, which even PID 1 of a PID namespace cannot ignore (a signal it
 * sent itself, kill -SEGV $$, it would).  tests/unit/test_proc.c runs it as
 * a worker that crashes.
 */
#include <stdint.h>
#include <stdio.h>

int main(int argc, char **argv)
{
	/* Address 0 when run without arguments; volatile, so the load is
	 * made and not reasoned away. */
	volatile int *p = (volatile int *)(uintptr_t)(argc - 1);

	(void)argv;
	printf("%d\n", *p);
	return 0;
}
