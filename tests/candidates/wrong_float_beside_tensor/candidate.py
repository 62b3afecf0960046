"""Hostile corpus: the right tensor, and a wrong Python float beside it (the
task returns the tensor and the sum of its squares).  The seed compared only tensors.

Expected verdict: every case fails with AccuracyError on output 2, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = x * y + x
        return out, float(out.double().pow(2).sum()) + 1.0
