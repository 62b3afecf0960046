"""Hostile corpus: forward returns the right values as a complex tensor.

Expected verdict: every case fails with OutputTypeMismatch, exit 1.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return torch.complex(x * y + x, torch.zeros_like(x))
