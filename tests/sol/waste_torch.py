"""Task: a ReLU whose reference also multiplies two 1024 x 1024 buffers
and throws the product away.  The flop counter charges the reference's
2 * 1024^3 FLOPs to the case, so its speed of light is that matmul's time:
a candidate that computes the ReLU alone is faster than it (the test of
TimingImpossible for beating the speed of light, tests/cli/t0880-sol.sh).
"""
import torch
import torch.nn as nn

N = 1024


class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.register_buffer("a", torch.rand(N, N))
        self.register_buffer("b", torch.rand(N, N))

    def forward(self, x):
        torch.mm(self.a, self.b)
        return torch.relu(x)


def get_inputs():
    return [torch.randn(64, 64)]


def get_init_inputs():
    return []
