"""Hostile corpus: returns a view of its input instead of computing.

Expected verdict: every case fails with AccuracyError (x is not x * y + x),
and the judge names the aliasing (output 1 shares memory with input 1) in the
message; exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x.view(x.shape)
