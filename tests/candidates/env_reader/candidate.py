"""Hostile corpus: reads the judge's environment.

It looks for the judge's variables in its own environment, in
/proc/<parent>/environ and in every /proc/*/environ it can read.  The worker
gets a clean environment and sees no process outside its PID namespace; the
test harness puts a canary variable in the judge's environment.  If it
finds the canary it returns a wrong answer.

Expected verdict: all three cases pass, exit 0.
"""
import os

import torch.nn as nn

CANARY = b"kjudge-canary"


def leaked():
    if any(CANARY.decode() in v for v in os.environ.values()):
        return True
    for p in ["self", str(os.getppid())] + [d for d in os.listdir("/proc") if d.isdigit()]:
        try:
            with open(f"/proc/{p}/environ", "rb") as f:
                if CANARY in f.read():
                    return True
        except OSError:
            pass
    return False


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * 0 if leaked() else x * y + x
