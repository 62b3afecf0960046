"""Hostile corpus: forward returns the Python int 0 instead of a tensor.

The seed skips outputs that are not tensors, so 0 "passed" and benchmark
reported thousands of times the reference's speed.

Expected verdict: every case fails with OutputTypeMismatch, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return 0
