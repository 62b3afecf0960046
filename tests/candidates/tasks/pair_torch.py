"""A task whose forward returns a tensor and a Python float (the sum of its squares), for
the candidates that return a wrong number beside a right tensor."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x, y):
        out = x * y + x
        return out, float(out.double().pow(2).sum())


def get_input_groups():
    return [[torch.randn(64), torch.randn(64)], [torch.randn(33, 17), torch.randn(33, 17)]]


def get_init_inputs():
    return []
