import torch
import torch.nn as nn


class ModelNew(nn.Module):
    """A @ B written out as a sum of outer products (no Triton: a CPU
    candidate for verify)."""

    def __init__(self):
        super().__init__()

    def forward(self, A, B):
        C = torch.zeros(A.shape[0], B.shape[1], dtype=A.dtype)
        for k in range(A.shape[1]):
            C += A[:, k:k + 1] * B[k:k + 1, :]
        return C
