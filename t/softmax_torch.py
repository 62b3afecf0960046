"""Task: softmax over the last dimension of a float32 matrix.

The logits have a wide range (standard normal times 40), as attention scores
before scaling can: exp() of the largest ones overflows float32, so a kernel
must subtract the row maximum first.  1000 columns is not a power of two, so
the kernel's column mask matters as well.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(256, 1000) * 40]


def get_init_inputs():
    return []
