"""Strong: a softmax of wide-ranging logits; every canary must fail."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.softmax(x, dim=-1)


def get_inputs():
    return [torch.randn(64, 100) * 8]


def get_init_inputs():
    return []
