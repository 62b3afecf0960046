"""Hostile corpus (benchmark): forks busy loops at import.

Two children spin for as long as the worker lives, so that they run while
the reference is timed and make it look slow (a larger speedup for the
candidate).  The side that is not being timed is frozen, its whole process
group and PID namespace (SIGSTOP): the spinners stop while the reference
is timed and only slow the candidate itself.

Expected: verify passes; benchmark passes with a speedup no larger than an
honest twin's (under 1.5), or a case fails with TimingMismatch (the
spinners preempt its own harness, which its samples do not account for).
"""
import os

import torch.nn as nn

for _ in range(2):
    if os.fork() == 0:
        try:
            while True:
                pass
        finally:
            os._exit(0)


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
