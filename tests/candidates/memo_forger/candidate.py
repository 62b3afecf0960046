"""Hostile corpus (benchmark, on tests/candidates/tasks/matmul_chain_torch.py):
content_memo's lookup by its inputs' values, and after every call that had
to compute (a miss: inputs it had never seen) the native harness's sample of
that call set to its last hit's (kj_forge_samples.py's addresses: done at
the next call, once the harness has recorded it), so that its own samples
say a call on new inputs costs what a lookup costs and the samples' replay
test sees nothing.  Its hits' samples are left as they are: the cross-check of
the timed rounds finds nothing either.

Expected verdict: its case fails with ReplayDetected: the judge's clock
sees the rounds that held a call on new inputs take the matmuls longer than
decoy rounds that did the same work but call on inputs it had seen,
whatever the samples say.  (Run without the speed of light, which would
fail it first: its replayed calls beat the matmul's bound.)
"""
import torch
import torch.nn as nn

from kj_forge_samples import Forger

MEMO = {}


class HitForger(Forger):
    """After every call, the samples the harness recorded since the last:
    a miss's is set to the last hit's, a hit's is left and remembered."""

    def __init__(self):
        super().__init__(1.0)
        self.miss = False
        self.hit_ms = None

    def rewrite(self, ms):
        if not self.miss:
            self.hit_ms = ms
            return ms
        return ms if self.hit_ms is None else self.hit_ms


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.forger = HitForger()

    def forward(self, x, y):
        # The last call's sample, now that the harness has recorded it.
        self.forger.forge()
        key = (tuple(x.shape), tuple(x.flatten()[:8].tolist()), tuple(y.flatten()[:8].tolist()))
        hit = MEMO.get(key)
        self.forger.miss = hit is None
        if hit is None:
            for _ in range(24):
                x = torch.tanh(x @ y)
            hit = MEMO[key] = x
        return hit.clone()
