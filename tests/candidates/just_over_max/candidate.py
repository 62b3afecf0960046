"""Hostile corpus: an error just over the float32 limit on the MAXIMUM
relative error.  One output element (the largest in magnitude) is off by a
factor (1 + 1.5e-3): MARE ~1.5e-3 against the limit 10 * 2^-13 ~1.22e-3,
while the mean stays far below 2^-13.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = (x * y + x).reshape(-1)
        i = out.abs().argmax()
        out[i] = out[i] * (1 + 1.5e-3)
        return out.view(x.shape)
