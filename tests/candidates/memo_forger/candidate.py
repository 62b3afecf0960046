"""Hostile corpus (benchmark, on tests/candidates/tasks/matmul_one_torch.py):
content_memo's lookup by its inputs' values, and after every call that had
to compute (a miss: inputs it had never seen) the native harness's sample of
that call divided by 40 (kj_forge_samples.py: done at the next call, once
the harness has recorded it), so that its own samples say a
call on new inputs costs what a lookup costs and the samples' replay test
sees nothing.  Its hits' samples are left as they are: the cross-check of
the timed rounds finds nothing either.

Expected verdict: its case fails with ReplayDetected: the judge's clock
sees the rounds that held a call on new inputs take a matmul longer than
decoy rounds that did the same work but call on inputs it had seen,
whatever the samples say.  (Run without the speed of light, which would
fail it first: its replayed calls beat the matmul's bound.)
"""
import torch.nn as nn

from kj_forge_samples import Forger

MEMO = {}


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.forger = Forger(1.0)

    def forward(self, x, y):
        # The samples recorded since the last call: the last call's, divided
        # where it was a miss.
        self.forger.forge()
        key = (tuple(x.shape), tuple(x.flatten()[:8].tolist()), tuple(y.flatten()[:8].tolist()))
        hit = MEMO.get(key)
        self.forger.divisor = 40.0 if hit is None else 1.0
        if hit is None:
            hit = MEMO[key] = x @ y
        return hit.clone()
