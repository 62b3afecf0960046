"""Hostile corpus: the control.  A correct candidate in plain torch.

Expected verdict: all three cases pass, exit 0.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
