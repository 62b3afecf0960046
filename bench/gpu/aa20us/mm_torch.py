"""A 20-microsecond kernel on an H200: one 512 x 512 float32 matmul (the
task of the A/A timing runs)."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, a, b):
        return torch.matmul(a, b)


def get_input_groups():
    return [[torch.randn(512, 512), torch.randn(512, 512)]]


def get_init_inputs():
    return []
