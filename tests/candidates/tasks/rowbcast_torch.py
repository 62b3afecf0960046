"""A task whose output is a broadcast view (stride 0 along its last
dimension): each row's sum repeated 48 times, for the honest candidate that
returns a stride-0 view as well."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def forward(self, x):
        return x.sum(dim=1, keepdim=True).expand(-1, 48)


def get_input_groups():
    return [[torch.randn(64, 33)], [torch.randn(7, 5)]]


def get_init_inputs():
    return []
