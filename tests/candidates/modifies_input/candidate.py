"""Hostile corpus: the right answer, but it scribbles on its input
afterwards (x *= 2), as a kernel that reuses an input buffer for scratch
would.  The output is correct; the side effect is not allowed.

Expected verdict: every case fails with error_type InputModified, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = x * y + x
        x.mul_(2)
        return out
