"""Hostile corpus: burns CPU time without end.

It spins in forward.  The sandbox's CPU time limit (KJ_LIMIT_CPU_S, here
6 s, counted from the worker's start) ends it with SIGXCPU before the wall
clock timeout (60 s) would.

Expected verdict: every case fails with CPUTimeLimitExceeded, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        n = 0
        while True:
            n += 1
