/*
 * pdeathsig.c - prints this process's parent-death signal and what
 * clearing it does: "9 refused" (the sandbox's seccomp filter says EPERM),
 * "9 cleared", or "0 cleared" for a process the judge did not protect.
 * tests/unit/test_proc.c and test_sandbox.c run it as a worker's child.
 */
#include <errno.h>
#include <stdio.h>
#include <sys/prctl.h>

int main(void)
{
	int sig = -1, rc;

	if (prctl(PR_GET_PDEATHSIG, &sig, 0, 0, 0) < 0) {
		perror("prctl(PR_GET_PDEATHSIG)");
		return 1;
	}
	rc = prctl(PR_SET_PDEATHSIG, 0, 0, 0, 0);
	printf("%d %s\n", sig, rc == 0 ? "cleared" : errno == EPERM ? "refused" : "error");
	/* Out before exit: a sanitizer build's leak check cannot trace in
	 * the sandbox and ends the process without flushing stdio. */
	fflush(stdout);
	return 0;
}
