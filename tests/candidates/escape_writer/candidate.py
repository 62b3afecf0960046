"""Hostile corpus: writes outside its scratch directory.

It tries to leave a file in /tmp, /dev/shm, /root, /var/tmp and next to
itself, and to change the task file.  The sandbox shows those places
read-only, not at all, or as its own private tmpfs (/tmp, /dev/shm), so a
write may succeed there without reaching the host: the test harness checks
that no such file appeared on the host, and that the task is unchanged.

Expected verdict: all three cases pass, exit 0, nothing written.
"""
import os

import torch.nn as nn

TARGETS = ["/tmp/kjudge-escaped", "/dev/shm/kjudge-escaped", "/root/kjudge-escaped",
           "/var/tmp/kjudge-escaped"]


def try_write():
    here = os.path.dirname(os.path.abspath(__file__))
    for p in TARGETS + [os.path.join(here, "kjudge-escaped"), os.path.join(here, "addmul_torch.py")]:
        try:
            with open(p, "a") as f:
                f.write("escaped")
        except OSError:
            pass


class ModelNew(nn.Module):
    def forward(self, x, y):
        try_write()
        return x * y + x
