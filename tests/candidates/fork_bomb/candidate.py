"""Hostile corpus: a fork bomb.

Every process forks for as long as it can, and the children sleep.  The
sandbox caps processes (KJ_LIMIT_PROCS, here 64) and its PID namespace
takes every child down with the worker.  The candidate raises once a fork
fails; the machine stays usable and nothing is left running.

Expected verdict: every case fails with ForwardError (exception RuntimeError), exit 1.
"""
import os
import time

import torch.nn as nn


def bomb():
    made = 0
    while True:
        try:
            pid = os.fork()
        except OSError:
            break
        if pid == 0:
            while True:
                try:
                    os.fork()
                except OSError:
                    time.sleep(1)
        made += 1
    raise RuntimeError(f"fork failed after {made} children")


class ModelNew(nn.Module):
    def forward(self, x, y):
        bomb()
