"""Task: SiLU, x * sigmoid(x), elementwise, on four cases (get_input_groups):

  1. 4096 float32 values, a multiple of the usual block sizes
  2. a 1000 x 37 float32 matrix: 37000 elements, not a multiple of any block
  3. a 64 x 1024 float16 matrix (float16 tolerance: 2^-10)
  4. a float32 matrix given as a transposed view (128 x 96 storage, shape
     96 x 128): not contiguous, so a kernel must not read it as flat memory
"""
import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        return x * torch.sigmoid(x)


def get_input_groups():
    return [
        [torch.randn(4096)],
        [torch.randn(1000, 37)],
        [torch.randn(64, 1024, dtype=torch.float16)],
        [torch.randn(128, 96).t()],
    ]


def get_init_inputs():
    return []
