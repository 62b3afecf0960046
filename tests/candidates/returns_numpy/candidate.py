"""Hostile corpus: forward returns the right values as a numpy array.

A numpy array is not a tensor: the reference returns a tensor.

Expected verdict: every case fails with OutputTypeMismatch, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return (x * y + x).numpy()
