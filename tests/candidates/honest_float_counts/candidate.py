"""Honest corpus: returns the right counts as float32 whole numbers; the cast
to the golden's int64 loses nothing.

Expected verdict: pass (on tasks/counts_torch.py).
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x):
        return (x > 0).float().sum(dim=1)
