"""Honest corpus: the matmul task's own computation, so that its timing,
inputs never seen before included, is the reference's.

Expected verdict: verify passes every case; benchmark passes with a
speedup near 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x @ y
