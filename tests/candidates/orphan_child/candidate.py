"""Hostile corpus: correct, but forward starts a helper process (it sleeps
for 5 minutes) and never waits for it.  The helper stays in the worker's
process group.  The judge must not leave it running once it is done:
tests/helpers/check_verify.py looks for leftover processes.

Expected verdict: all three cases pass, exit 0, no process left behind.
"""
import subprocess
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL)
        return x * y + x
