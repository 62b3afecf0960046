/*
 * syscalls.c - tries the system calls the sandbox's seccomp filter refuses
 * and prints, for each name on the command line, "NAME ok" or "NAME
 * ERRNO-NAME" (EPERM, ENOSYS, ...), one per line.  A call the filter kills
 * for ends the process with SIGSYS before it prints.  tests/unit/
 * test_sandbox.c runs it inside the sandbox (and outside, to see what the
 * machine itself allows).
 *
 * Names: clone_plain (a child of plain clone, which must work),
 * clone_newuser, clone_newns, clone_newpid, clone_newnet, clone_newipc,
 * clone_newuts, clone_newcgroup (clone with that flag), clone3, thread
 * (pthread_create: glibc tries clone3 first and falls back to clone on
 * ENOSYS), unshare, setns, open_tree, move_mount, fsopen, fsconfig,
 * fsmount, fspick, mount_setattr, io_uring_setup, io_uring_enter,
 * io_uring_register, ptrace, process_vm_readv, process_vm_writev,
 * pidfd_getfd, x32 (getpid by the x32 ABI's number), i386 (getpid through
 * int $0x80, the i386 ABI).
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox/sysnr.h"

/* Under AddressSanitizer: LeakSanitizer's check at exit stops the process
 * with ptrace, which the sandbox's filter refuses, and would end it with
 * status 1.  (Nothing calls this in other builds.) */
const char *__asan_default_options(void);
const char *__asan_default_options(void)
{
	return "detect_leaks=0";
}

/* A child made by clone(flags): it exits at once; the result is the
 * parent's. */
static long try_clone(unsigned long flags)
{
	long pid = syscall(SYS_clone, flags | SIGCHLD, NULL, NULL, NULL, NULL);

	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}

static long try_clone3(void)
{
	/* struct clone_args of the kernel's first version: flags, pidfd,
	 * child_tid, parent_tid, exit_signal, stack, stack_size, tls. */
	uint64_t args[8];
	long pid;

	memset(args, 0, sizeof(args));
	args[4] = SIGCHLD;
	pid = syscall(SYS_clone3, args, sizeof(args));
	if (pid == 0)
		_exit(0);
	if (pid > 0)
		waitpid((pid_t)pid, NULL, 0);
	return pid < 0 ? -1 : 0;
}

static void *thread_main(void *arg)
{
	return arg;
}

static long try_thread(void)
{
	pthread_t t;
	int rc = pthread_create(&t, NULL, thread_main, NULL);

	if (rc != 0) {
		errno = rc;
		return -1;
	}
	return pthread_join(t, NULL) == 0 ? 0 : -1;
}

static long try_setns(void)
{
	int fd = open("/proc/self/ns/uts", O_RDONLY | O_CLOEXEC);
	long rc;

	if (fd < 0)
		return -1;
	rc = syscall(SYS_setns, fd, 0);
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* io_uring_setup with one entry: a descriptor where the kernel allows it. */
static long try_io_uring_setup(void)
{
	unsigned char params[120]; /* struct io_uring_params */
	long fd;

	memset(params, 0, sizeof(params));
	fd = syscall(SYS_io_uring_setup, 1, params);
	if (fd >= 0)
		close((int)fd);
	return fd < 0 ? -1 : 0;
}

static long try_process_vm(int write)
{
	char a[8] = "abcdefg", b[8];
	struct iovec local = { b, sizeof(b) }, remote = { a, sizeof(a) };

	if (write)
		return syscall(SYS_process_vm_writev, getpid(), &remote, 1, &local, 1, 0) < 0 ? -1 : 0;
	return syscall(SYS_process_vm_readv, getpid(), &local, 1, &remote, 1, 0) < 0 ? -1 : 0;
}

static long try_i386(void)
{
#if defined(__x86_64__)
	long ret;

	/* getpid is 20 in the i386 table. */
	__asm__ volatile("int $0x80" : "=a"(ret) : "a"(20L) : "memory", "r8", "r9", "r10", "r11");
	if (ret < 0) {
		errno = (int)-ret;
		return -1;
	}
	return 0;
#else
	errno = ENOSYS;
	return -1;
#endif
}

static long try_one(const char *name)
{
	if (!strcmp(name, "clone_plain"))
		return try_clone(0);
	if (!strcmp(name, "clone_newuser"))
		return try_clone(CLONE_NEWUSER);
	if (!strcmp(name, "clone_newns"))
		return try_clone(CLONE_NEWNS);
	if (!strcmp(name, "clone_newpid"))
		return try_clone(CLONE_NEWPID);
	if (!strcmp(name, "clone_newnet"))
		return try_clone(CLONE_NEWNET);
	if (!strcmp(name, "clone_newipc"))
		return try_clone(CLONE_NEWIPC);
	if (!strcmp(name, "clone_newuts"))
		return try_clone(CLONE_NEWUTS);
	if (!strcmp(name, "clone_newcgroup"))
		return try_clone(CLONE_NEWCGROUP);
	if (!strcmp(name, "clone3"))
		return try_clone3();
	if (!strcmp(name, "thread"))
		return try_thread();
	if (!strcmp(name, "unshare"))
		return syscall(SYS_unshare, CLONE_NEWUSER) < 0 ? -1 : 0;
	if (!strcmp(name, "setns"))
		return try_setns();
	if (!strcmp(name, "open_tree"))
		return syscall(SYS_open_tree, AT_FDCWD, "/", 0) < 0 ? -1 : 0;
	if (!strcmp(name, "move_mount"))
		return syscall(SYS_move_mount, -1, "", AT_FDCWD, "/tmp", 0) < 0 ? -1 : 0;
	if (!strcmp(name, "fsopen"))
		return syscall(SYS_fsopen, "tmpfs", 0) < 0 ? -1 : 0;
	if (!strcmp(name, "fsconfig"))
		return syscall(SYS_fsconfig, -1, 0, NULL, NULL, 0) < 0 ? -1 : 0;
	if (!strcmp(name, "fsmount"))
		return syscall(SYS_fsmount, -1, 0, 0) < 0 ? -1 : 0;
	if (!strcmp(name, "fspick"))
		return syscall(SYS_fspick, AT_FDCWD, "/", 0) < 0 ? -1 : 0;
	if (!strcmp(name, "mount_setattr"))
		return syscall(SYS_mount_setattr, -1, "", 0, NULL, 0) < 0 ? -1 : 0;
	if (!strcmp(name, "io_uring_setup"))
		return try_io_uring_setup();
	if (!strcmp(name, "io_uring_enter"))
		return syscall(SYS_io_uring_enter, -1, 0, 0, 0, NULL, 0) < 0 ? -1 : 0;
	if (!strcmp(name, "io_uring_register"))
		return syscall(SYS_io_uring_register, -1, 0, NULL, 0) < 0 ? -1 : 0;
	if (!strcmp(name, "ptrace"))
		return syscall(SYS_ptrace, PTRACE_PEEKDATA, getppid(), NULL, NULL) < 0 ? -1 : 0;
	if (!strcmp(name, "process_vm_readv"))
		return try_process_vm(0);
	if (!strcmp(name, "process_vm_writev"))
		return try_process_vm(1);
	if (!strcmp(name, "pidfd_getfd"))
		return syscall(SYS_pidfd_getfd, -1, 0, 0) < 0 ? -1 : 0;
	if (!strcmp(name, "x32"))
		return syscall(0x40000000L | SYS_getpid) < 0 ? -1 : 0;
	if (!strcmp(name, "i386"))
		return try_i386();
	errno = EINVAL;
	return -2;
}

int main(int argc, char **argv)
{
	int i;

	for (i = 1; i < argc; i++) {
		long rc;

		/* What the line says must be out before a call that kills. */
		fflush(stdout);
		errno = 0;
		rc = try_one(argv[i]);
		if (rc == -2)
			printf("%s unknown\n", argv[i]);
		else if (rc == 0)
			printf("%s ok\n", argv[i]);
		else
			printf("%s %s\n", argv[i], strerrorname_np(errno) ? strerrorname_np(errno) : "?");
	}
	fflush(stdout);
	return 0;
}
