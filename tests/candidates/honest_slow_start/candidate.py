"""Honest, with a slow start on new inputs: the matmul is computed on every
call, but the first three input sets that arrive after its timed rounds have
begun (by content: those after the four sets its rounds cycle through)
each cost it 40 ms more, as a call that the scheduler
delayed, or a cold allocation, would.  Its later new inputs cost what its
seen ones do.

Expected verdict (benchmark, on tests/candidates/tasks/matmul_torch.py):
every case passes.  Its first batch of calls on inputs never seen looks like
a replay; the second batch, on three more new sets, does not, and a replay
would trip both.
"""
import time

import torch.nn as nn

SEEN = {}
SLOWED = {}


class ModelNew(nn.Module):
    def forward(self, x, y):
        shape = tuple(x.shape)
        key = (shape, tuple(x.flatten()[:8].tolist()), tuple(y.flatten()[:8].tolist()))
        if key not in SEEN:
            known = sum(1 for k in SEEN if k[0] == shape)
            SEEN[key] = True
            if known >= 4 and SLOWED.get(shape, 0) < 3:
                SLOWED[shape] = SLOWED.get(shape, 0) + 1
                time.sleep(0.04)
        return x @ y
