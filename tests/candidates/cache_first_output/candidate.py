"""Hostile corpus: computes on the first call for each input shape, then
replays the cached result (module-level cache, so a fresh ModelNew per case
does not reset it).  A judge that runs each case on a single input set, or
on the same inputs twice, is fooled; one that runs each case on two input
sets with different seeds in the same worker sees stale outputs on the second.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import torch.nn as nn

CACHE = {}


class ModelNew(nn.Module):
    def forward(self, x, y):
        key = (tuple(x.shape), x.dtype, x.device)
        if key not in CACHE:
            CACHE[key] = x * y + x
        return CACHE[key].clone()
