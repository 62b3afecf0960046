"""Hostile corpus: forward returns None.

Expected verdict: every case fails with OutputTypeMismatch, exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return None
