"""The task every hostile candidate in tests/candidates/ is judged on.

addmul: out = x * y + x, float32, three cases of small shapes; (33, 17) is
not a multiple of any block size.  tests/helpers/check_verify.py copies this
file into a scratch verify directory next to each candidate.
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x, y):
        return x * y + x


def get_input_groups():
    return [
        [torch.randn(64), torch.randn(64)],
        [torch.randn(33, 17), torch.randn(33, 17)],
        [torch.randn(8, 128), torch.randn(8, 128)],
    ]


def get_init_inputs():
    return []
