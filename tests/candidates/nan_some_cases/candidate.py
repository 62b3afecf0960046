"""Hostile corpus: NaN where the reference has none, in some cases only.

Case 1 (64,): NaN in the first element; case 2 (33, 17): NaN in the last
element; case 3 (8, 128): correct.  A comparison that skips non-finite
elements (or takes a NaN-ignoring max) would pass cases 1 and 2.

Expected verdict: cases 1 and 2 fail with AccuracyError (NaN mismatch),
case 3 passes, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = (x * y + x).reshape(-1)
        if tuple(x.shape) == (64,):
            out[0] = float("nan")
        elif tuple(x.shape) == (33, 17):
            out[-1] = float("nan")
        return out.view(x.shape)
