"""A task with large outputs: two float32 tensors of 32 MiB and 8 MiB a
call, for the honest candidate that must pass with outputs that size."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x * 2 + 1, x[:, :1024].sum(dim=0, keepdim=True).repeat(2048, 1)


def get_input_groups():
    return [[torch.randn(2048, 4096)]]


def get_init_inputs():
    return []
