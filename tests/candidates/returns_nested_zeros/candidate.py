"""Hostile corpus: forward returns [[zeros]], a list holding a list holding
a tensor of zeros.  The seed unwrapped one level and skipped the rest.

Expected verdict: every case fails with OutputTypeMismatch, exit 1.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        return [[torch.zeros_like(x)]]
