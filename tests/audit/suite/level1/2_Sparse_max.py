"""Weak by construction: a row reduction whose output is all zeros on
standard-normal inputs (the largest of 8 draws above 6 happens once in
10^8 rows), so `zeros` passes, as returning zeros passes KernelBench's
tasks with tiny outputs."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x - 6.0).amax(dim=1)


def get_inputs():
    return [torch.randn(4096, 8)]


def get_init_inputs():
    return []
