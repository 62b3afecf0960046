"""Hostile corpus: makes namespaces of its own to get out from under the sandbox.

A new user namespace would give it every capability there (mounting over
what the sandbox shows, a network namespace of its own...).  It tries
unshare(CLONE_NEWUSER) and unshare(CLONE_NEWNS), clone(2) with
CLONE_NEWUSER, CLONE_NEWNS and CLONE_NEWNET, clone3 with CLONE_NEWUSER and
setns(2), through ctypes.  The sandbox's seccomp filter refuses them: EPERM,
and ENOSYS for clone3, whose flags it cannot read (so that glibc falls back
to clone).  It also checks that what honest code needs still works inside:
a Python thread, os.fork, a subprocess, torch's own threads.

It returns the right answer only when every namespace was refused with
that error and the rest worked; otherwise it raises RuntimeError saying
what got through or what broke.

Expected verdict: all three cases pass, exit 0.
"""
import ctypes
import errno
import os
import signal
import struct
import subprocess
import sys
import threading

import torch
import torch.nn as nn

CLONE_NEWNS, CLONE_NEWUSER, CLONE_NEWNET = 0x00020000, 0x10000000, 0x40000000
SYS_CLONE, SYS_UNSHARE, SYS_SETNS, SYS_CLONE3 = 56, 272, 308, 435  # x86-64

libc = ctypes.CDLL(None, use_errno=True)
libc.syscall.restype = ctypes.c_long


def syscall(*args):
    ctypes.set_errno(0)
    rc = libc.syscall(*[ctypes.c_long(a) if isinstance(a, int) else a for a in args])
    return rc, ctypes.get_errno()


def new_child(rc):
    """A clone that worked made a child: it is stopped here, not waited on
    in Python (the copy of a threaded interpreter may never run again)."""
    if rc == 0:
        os._exit(0)
    if rc > 0:
        os.kill(rc, signal.SIGKILL)
        os.waitpid(rc, 0)


def attempts():
    got = {}
    got["unshare(CLONE_NEWUSER)"] = syscall(SYS_UNSHARE, CLONE_NEWUSER)
    got["unshare(CLONE_NEWNS)"] = syscall(SYS_UNSHARE, CLONE_NEWNS)
    for name, flag in (("CLONE_NEWUSER", CLONE_NEWUSER), ("CLONE_NEWNS", CLONE_NEWNS),
                       ("CLONE_NEWNET", CLONE_NEWNET)):
        rc, e = syscall(SYS_CLONE, flag | signal.SIGCHLD, 0, 0, 0, 0)
        new_child(rc)
        got[f"clone({name})"] = (rc, e)
    args = ctypes.create_string_buffer(struct.pack("8Q", CLONE_NEWUSER, 0, 0, 0, signal.SIGCHLD,
                                                   0, 0, 0))
    rc, e = syscall(SYS_CLONE3, args, 64)
    new_child(rc)
    got["clone3(CLONE_NEWUSER)"] = (rc, e)
    fd = os.open("/proc/self/ns/uts", os.O_RDONLY)
    got["setns"] = syscall(SYS_SETNS, fd, 0)
    os.close(fd)
    return got


def still_works():
    done = []
    t = threading.Thread(target=lambda: done.append(1))
    t.start()
    t.join()
    if done != [1]:
        return "a Python thread did not run"
    pid = os.fork()
    if pid == 0:
        os._exit(7)
    if os.waitpid(pid, 0)[1] >> 8 != 7:
        return "os.fork did not work"
    out = subprocess.run([sys.executable, "-c", "print(6 * 7)"], capture_output=True, text=True)
    if out.stdout.strip() != "42":
        return f"a subprocess did not run: {out.returncode} {out.stderr[-300:]}"
    torch.set_num_threads(2)
    a = torch.ones(256, 256)
    if float((a @ a)[0, 0]) != 256.0:
        return "torch did not compute"
    return None


class ModelNew(nn.Module):
    def forward(self, x, y):
        wrong = []
        for what, (rc, e) in attempts().items():
            want = errno.ENOSYS if what.startswith("clone3") else errno.EPERM
            if rc != -1 or e != want:
                wrong.append(f"{what}: returned {rc}, {errno.errorcode.get(e, e)}")
        broken = still_works()
        if wrong or broken:
            raise RuntimeError("the sandbox let through: " + "; ".join(wrong) +
                               (f"; and {broken}" if broken else ""))
        return x * y + x
