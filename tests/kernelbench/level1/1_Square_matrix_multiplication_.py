import torch
import torch.nn as nn


class Model(nn.Module):
    """C = A @ B, as KernelBench's level1/1_Square_matrix_multiplication_.py,
    on small square matrices."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        return torch.matmul(A, B)


N = 16


def get_inputs():
    return [torch.randn(N, N), torch.randn(N, N)]


def get_init_inputs():
    return []
