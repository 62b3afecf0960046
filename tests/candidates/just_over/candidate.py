"""Hostile corpus: an error just over the float32 limit on the MEAN relative
error.  Every output is off by a factor (1 + 1.5e-4): MERE ~1.5e-4 against
the limit 2^-13 ~1.22e-4, while MARE (1.5e-4) stays far below its limit
(10 * 2^-13 ~1.22e-3), so only a judge that checks the mean catches it.

Expected verdict: every case fails with AccuracyError, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return (x * y + x) * (1 + 1.5e-4)
