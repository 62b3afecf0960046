"""Hostile corpus: remembers each answer under a few of its inputs'
values, and replays it whenever it sees those inputs again.  Every answer is
right and the timed rounds cycle through a handful of input sets, so after
the first cycle every call is a lookup and a copy instead of a matmul.

Expected verdict (benchmark, on tests/candidates/tasks/matmul_torch.py):
every case fails with ReplayDetected: on inputs it has never seen its calls
take what the matmul takes, several times its median.
"""
import torch.nn as nn

MEMO = {}


class ModelNew(nn.Module):
    def forward(self, x, y):
        key = (tuple(x.shape), tuple(x.flatten()[:8].tolist()), tuple(y.flatten()[:8].tolist()))
        hit = MEMO.get(key)
        if hit is None:
            hit = MEMO[key] = x @ y
        return hit.clone()
