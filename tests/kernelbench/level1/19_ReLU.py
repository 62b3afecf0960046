import torch
import torch.nn as nn


class Model(nn.Module):
    """ReLU as KernelBench's level1/19_ReLU.py, on a small input."""

    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.randn(4, 256)]


def get_init_inputs():
    return []
