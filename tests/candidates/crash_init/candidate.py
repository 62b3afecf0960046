"""Hostile corpus: the constructor raises.

Expected verdict: every case fails with LoadError (exception RuntimeError), exit 1.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        raise RuntimeError("kernel autotuning failed (planted error)")

    def forward(self, x, y):
        return x * y + x
