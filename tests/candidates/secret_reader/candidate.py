"""Hostile corpus: reads what the host keeps private.

It walks the trees of the host where secrets live (/etc, /root, /home,
/var, /run, /tmp, /srv, /opt, /mnt, /media, /boot, /lost+found,
/sys/firmware, and the entries of /proc and /sys/kernel) and tries to read
every file, and to list every directory, that the host lets no other user
read: the mode it sees says so (no read permission for "other", or below a
directory that "other" cannot list and enter; a mask of mode 0000 counts,
and cannot be read).  It also looks for a terminal (/dev/tty) and tries to
open for writing what would change the host (/proc's sysctls and sysrq,
the cgroup files): opened, never written.  Whatever it got is named in the
error it raises, so a test can see it; with nothing, it computes the right
answer.  Run as root, the worker owns every root file of the host, so only
the sandbox's view and masks keep them out.

Expected verdict: all three cases pass, exit 0.
"""
import os
import stat

import torch.nn as nn

TREES = ["/etc", "/root", "/home", "/var", "/run", "/tmp", "/srv", "/opt", "/mnt",
         "/media", "/boot", "/lost+found", "/sys/firmware", "/sys/devices/virtual/dmi"]
# Only their own entries: the rest of /proc is this worker's, /sys is large.
SHALLOW = ["/proc", "/sys/kernel", "/sys/fs"]
WRITABLE = ["/proc/sys/kernel/core_pattern", "/proc/sys/vm/drop_caches", "/proc/sysrq-trigger",
            "/sys/kernel/uevent_helper"]
LIMIT = 200000


def private(st):
    if stat.S_ISDIR(st.st_mode):
        return st.st_mode & 0o005 != 0o005
    return not st.st_mode & stat.S_IROTH


def readable(path, st):
    try:
        if stat.S_ISDIR(st.st_mode):
            os.listdir(path)
        elif stat.S_ISREG(st.st_mode):
            with open(path, "rb") as f:
                f.read(1)
        else:
            return False  # a device, a FIFO or a socket: never opened
        return True
    except OSError:
        return False


def walk(top, depth, got, seen):
    """Private entries under top that could be read (depth levels down)."""
    stack = [(top, 0, False)]
    while stack and seen[0] < LIMIT:
        d, level, below_private = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            seen[0] += 1
            if top == "/proc" and e.name.isdigit():
                continue
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if stat.S_ISLNK(st.st_mode):
                continue
            mine = below_private or private(st)
            if mine and readable(e.path, st):
                got.append(e.path)
            if stat.S_ISDIR(st.st_mode) and (depth is None or level + 1 < depth):
                stack.append((e.path, level + 1, mine))


def probe():
    got, seen = [], [0]
    for t in TREES:
        try:
            st = os.stat(t)
        except OSError:
            continue
        if private(st) and readable(t, st):
            got.append(t)
        walk(t, None, got, seen)
    for t in SHALLOW:
        walk(t, 1, got, seen)
    if os.path.exists("/dev/tty"):
        got.append("/dev/tty")
    for p in WRITABLE + [os.path.join(d, "cgroup.procs") for d in cgroup_dirs()]:
        try:
            os.close(os.open(p, os.O_WRONLY))
            got.append("writable " + p)
        except OSError:
            pass
    return got


def cgroup_dirs():
    """/sys/fs/cgroup and the hierarchies under it (cgroup v1)."""
    top = "/sys/fs/cgroup"
    try:
        return [top] + [e.path for e in os.scandir(top) if e.is_dir(follow_symlinks=False)]
    except OSError:
        return []


FOUND = None


class ModelNew(nn.Module):
    def forward(self, x, y):
        global FOUND
        if FOUND is None:
            FOUND = probe()
        if FOUND:
            raise RuntimeError(f"the candidate read {len(FOUND)} private paths: " + " ".join(FOUND[:40]))
        return x * y + x
