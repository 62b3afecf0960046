"""Hostile corpus: correct, but forward starts a process that escapes into a
session of its own (setsid, as a daemon does) and sleeps for 5 minutes.
Killing the worker's process group does not reach it; a judge that is a
child subreaper (prctl PR_SET_CHILD_SUBREAPER) inherits it when the worker
dies and can kill it, as can one that runs workers in a cgroup or PID
namespace.  tests/helpers/check_verify.py looks for leftover processes.

Expected verdict: all three cases pass, exit 0, no process left behind.
"""
import subprocess
import sys

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        subprocess.Popen([sys.executable, "-c", "import time; time.sleep(300)"],
                         stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                         stderr=subprocess.DEVNULL, start_new_session=True)
        return x * y + x
