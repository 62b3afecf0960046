import torch
import torch.nn as nn


class Model(nn.Module):
    """x * scale, with the cases of 2_Scale.cases.json (n, scale)."""

    def __init__(self, scale=1.0, n=16):
        super().__init__()
        self.scale = scale

    def forward(self, x):
        return x * self.scale


def get_inputs(n=16, scale=1.0):
    return [torch.randn(n, 8)]


def get_init_inputs(n=16, scale=1.0):
    return [scale]
