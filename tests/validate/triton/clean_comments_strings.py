"""Clean: text that mentions PyTorch ops is not code.

The reference computes torch.nn.functional.gelu(x) and torch.matmul(a, b);
this kernel does it instead.  exec("x") in a docstring is text too.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl

NOTE = "F.relu(x) and torch.softmax(x, -1) would be cheating; exec('...') too"


@triton.jit
def gelu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    # torch.nn.functional.gelu in the reference; here tanh form by hand
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    inner = 0.7978845608 * (x + 0.044715 * x * x * x)
    t = 2.0 * tl.sigmoid(2.0 * inner) - 1.0
    tl.store(out_ptr + offs, 0.5 * x * (1.0 + t), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        # out = torch.nn.functional.gelu(x)   <- what we must not do
        out = torch.empty_like(x)
        n = x.numel()
        gelu_kernel[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024)
        print("launched gelu_kernel[grid](x, out) instead of F.gelu")
        return out
