"""Honest corpus: works in place on buffers of its own (never on its
inputs).

Expected verdict: pass.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = x.clone()
        out.mul_(y)
        out.add_(x)
        return out
