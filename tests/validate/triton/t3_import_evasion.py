"""Type 3: torch reached through __import__ and importlib."""
import importlib

import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def neg_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(x_ptr + offs, -tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        neg_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
        fn = importlib.import_module("torch.nn.functional")
        t = __import__("torch")
        return t.tanh(fn.gelu(x))
