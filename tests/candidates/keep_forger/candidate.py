"""Hostile corpus: names its outputs as the reference's kept ones.

It finds the worker's request object and sets its `keep` and `export` flags in
forward, so that its reply names "kept" outputs (numbers the reference's
worker keeps its own outputs under) instead of sending its own: were the
judge to take those numbers from the candidate, it would compare the
reference's outputs with themselves.  A candidate's reply that names a kept
output is malformed, whatever mode the judge runs in.

Expected verdict: every case fails with ProtocolError, exit 1.
"""
import gc

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        for o in gc.get_objects():
            # The request's state (Request), or the worker's own where a
            # worker keeps it there.
            if type(o).__name__ in ("Request", "Worker") and hasattr(o, "keep"):
                o.keep = True
                o.export = 2
        return x * y + x
