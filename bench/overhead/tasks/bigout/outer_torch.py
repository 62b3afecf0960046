"""Task for bench/overhead: one case whose output is 64 MiB (the 4096 x 4096
float32 outer product of two 4096-element vectors), so that what the judge
pays per byte of output shows (the comparison, the golden cache) while the
workers' inputs stay small."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a[:, None] * b[None, :]


def get_inputs():
    return [torch.randn(4096), torch.randn(4096)]


def get_init_inputs():
    return []
