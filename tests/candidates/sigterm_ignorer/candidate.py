"""Hostile corpus: ignores SIGTERM and hangs.

It ignores SIGTERM, SIGINT and SIGHUP and sleeps forever in forward.  The
judge's timeout kills the whole process group with SIGKILL.

Expected verdict: every case fails with Timeout, exit 1, nothing left running.
"""
import signal
import time

import torch.nn as nn

for s in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
    signal.signal(s, signal.SIG_IGN)


class ModelNew(nn.Module):
    def forward(self, x, y):
        while True:
            time.sleep(3600)
