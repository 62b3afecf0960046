"""Weak by construction: a ReLU whose inputs are never negative, so the
identity (the `input` canary) is its exact answer."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return torch.relu(x)


def get_inputs():
    return [torch.rand(64, 128)]


def get_init_inputs():
    return []
