"""A matmul of known size: 2 * 32 * 64 * 16 FLOPs, (32*64 + 64*16 + 32*16) * 4 bytes."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return a @ b


def get_inputs():
    return [torch.randn(32, 64), torch.randn(64, 16)]


def get_init_inputs():
    return []
