"""Task for bench/overhead: twenty cases of tiny float32 tensors (64 to 1280
elements), so that what the judge pays per case shows (a request to each
worker, the replies, a comparison, a cache entry, a record) while the
workers' compute stays negligible."""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * 2.0 + 1.0


def get_input_groups():
    return [[torch.randn(64 * (k + 1))] for k in range(20)]


def get_init_inputs():
    return []
