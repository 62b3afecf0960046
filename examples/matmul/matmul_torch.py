"""Task: C = A @ B for float32 matrices, 256 x 256 times 256 x 256.

The entries are uniform in [0, 1): every product is positive, so no output
is a near-zero result of cancellation.  (With zero-mean inputs some outputs
land near zero, where two correct float32 matmuls summing in different
orders differ by more than the MERE/MARE rule's absolute floor of
10 * 2^-13 * 2^-13 ~ 1.5e-7; the rule would fail correct kernels.)
"""
import torch
import torch.nn as nn

M = N = K = 256


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return torch.matmul(a, b)


def get_inputs():
    return [torch.rand(M, K), torch.rand(K, N)]


def get_init_inputs():
    return []
