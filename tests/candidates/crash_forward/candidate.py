"""Hostile corpus: forward raises ZeroDivisionError.

Expected verdict: every case fails with ForwardError (exception ZeroDivisionError), exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        scale = 1 / 0
        return (x * y + x) * scale
