"""Type 1: numba's jit is not a Triton kernel."""
import numpy as np
import torch
import torch.nn as nn
from numba import jit


@jit(nopython=True)
def double(a):
    return a * 2


class ModelNew(nn.Module):
    def forward(self, x):
        return torch.from_numpy(double(x.cpu().numpy()))
