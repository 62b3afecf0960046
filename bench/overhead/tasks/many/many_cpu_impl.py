"""Candidate for bench/overhead's many-case task: the same arithmetic in
other calls (the same rounding, so every case passes)."""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.add(torch.mul(x, 2.0), 1.0)
