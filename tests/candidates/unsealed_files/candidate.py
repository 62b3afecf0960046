"""Hostile corpus: turns the worker's sealed outputs off and names files.

It finds the worker's request object (it runs in the same process) and
clears its `sealed` flag in forward, without replacing any function the harness
guards, so that the worker writes its outputs as files of its own directory
and names them in the reply, where it could change them, truncate them or
swap in a symlink after replying.  The judge never opens a path the
candidate names: a candidate's tensor that is not a sealed memory file is
refused.

Expected verdict: every case fails with ProtocolError, exit 1.
"""
import gc

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        for o in gc.get_objects():
            # The request's state (Request), or the worker's own where
            # a worker keeps it there.
            if type(o).__name__ in ("Request", "Worker") and hasattr(o, "sealed"):
                o.sealed = False
        return x * y + x
