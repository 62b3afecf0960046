"""Clean: allowed calls in unusual forms.

A weight holder (nn.Linear only holds weights, never called), allocations
with keywords, tensor methods that only view or move, torch.cuda queries,
a context manager, math on Python numbers, and a class attribute alias to
the wrapper.
"""
import math

import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def linear_kernel(x_ptr, w_ptr, out_ptr, K, N, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    col = tl.program_id(1)
    k = tl.arange(0, BLOCK)
    x = tl.load(x_ptr + row * K + k, mask=k < K, other=0.0)
    w = tl.load(w_ptr + col * K + k, mask=k < K, other=0.0)
    tl.store(out_ptr + row * N + col, tl.sum(x * w, axis=0))


def linear(x, w):
    M, K = x.shape
    N = w.shape[0]
    out = torch.empty((M, N), device=x.device, dtype=x.dtype)
    block = max(16, triton.next_power_of_2(K))
    linear_kernel[(M, N)](x, w, out, K, N, BLOCK=block)
    return out


class ModelNew(nn.Module):
    impl = linear

    def __init__(self, k, n):
        super().__init__()
        self.fc = nn.Linear(k, n, bias=False)
        self.scale = 1.0 / math.sqrt(k)

    def forward(self, x):
        dev = torch.cuda.current_device() if torch.cuda.is_available() else None
        with torch.no_grad():
            x2 = x.contiguous().view(-1, x.shape[-1]).to(self.fc.weight.dtype)
            w = self.fc.weight.detach().contiguous()
            y = self.impl(x2, w)
        _ = dev, x.new_empty(0), torch.zeros_like(x2[:1])
        return y.reshape(*x.shape[:-1], -1)
