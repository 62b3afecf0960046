/*
 * sysnr.h - the numbers of the system calls the sandbox's seccomp filter
 * names (view.c) that an older C library has no SYS_ name for, and the
 * namespace flag it may lack.  The calls from Linux 5.1 on have the same
 * number on every architecture but alpha.  tests/helpers/syscalls.c, which
 * makes the same calls inside the sandbox, includes it too.
 */
#ifndef KJ_SANDBOX_SYSNR_H
#define KJ_SANDBOX_SYSNR_H

#include <sched.h>
#include <sys/syscall.h>

#ifndef SYS_io_uring_setup
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#define SYS_io_uring_register 427
#endif
#ifndef SYS_open_tree
#define SYS_open_tree 428
#endif
#ifndef SYS_move_mount
#define SYS_move_mount 429
#endif
#ifndef SYS_fsopen
#define SYS_fsopen 430
#endif
#ifndef SYS_fsconfig
#define SYS_fsconfig 431
#endif
#ifndef SYS_fsmount
#define SYS_fsmount 432
#endif
#ifndef SYS_fspick
#define SYS_fspick 433
#endif
#ifndef SYS_clone3
#define SYS_clone3 435
#endif
#ifndef SYS_pidfd_getfd
#define SYS_pidfd_getfd 438
#endif
#ifndef SYS_mount_setattr
#define SYS_mount_setattr 442
#endif
#ifndef CLONE_NEWCGROUP
#define CLONE_NEWCGROUP 0x02000000
#endif

#endif /* KJ_SANDBOX_SYSNR_H */
