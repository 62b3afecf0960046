"""Weak by construction: an identity-like copy (a contiguous clone of a
view), whose answer is its input."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.reshape(64, 128).clone()


def get_inputs():
    return [torch.randn(128, 64)]


def get_init_inputs():
    return []
