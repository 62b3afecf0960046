"""Hostile corpus: allocates memory without end.

It keeps 64 MiB blocks (touched, so they are real) until it is stopped.  The
sandbox's memory limit (KJ_LIMIT_MEM_MB, here 512) stops it through the
cgroup; where the machine has no writable cgroup the allocation goes on
until the timeout.

Expected verdict: every case fails with MemoryLimitExceeded (Timeout where
there are no cgroups), exit 1.
"""
import torch.nn as nn

HOARD = []


class ModelNew(nn.Module):
    def forward(self, x, y):
        while True:
            HOARD.append(bytearray(64 << 20))
            HOARD[-1][::4096] = b"\x01" * len(HOARD[-1][::4096])
