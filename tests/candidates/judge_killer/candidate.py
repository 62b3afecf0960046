"""Hostile corpus: tries to kill the judge.

It signals its parent, every process it can see (kill -1), and every
process whose command line mentions kjudge, then computes the right answer.
In its PID namespace it sees only itself and its children, so the judge
lives on and judges it.

Expected verdict: all three cases pass, exit 0.
"""
import os
import signal

import torch.nn as nn


def attack():
    for pid in (os.getppid(), 1):
        try:
            os.kill(pid, signal.SIGKILL) if pid != os.getpid() else None
        except OSError:
            pass
    for p in os.listdir("/proc"):
        if p.isdigit() and int(p) != os.getpid():
            try:
                with open(f"/proc/{p}/cmdline", "rb") as f:
                    if b"kjudge" in f.read() and b"kjudge_worker" not in f.read():
                        os.kill(int(p), signal.SIGKILL)
            except OSError:
                pass


class ModelNew(nn.Module):
    def forward(self, x, y):
        attack()
        return x * y + x
