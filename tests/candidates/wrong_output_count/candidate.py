"""Hostile corpus: returns two tensors where the reference returns one.

Expected verdict: every case fails with AssertionError (output count
mismatch, as verify.py reports it), exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = x * y + x
        return out, out.clone()
