"""Type 3: exec and eval of strings that call torch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

CODE = "y = torch.relu(x)"


@triton.jit
def dbl_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * 2.0, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x):
        out = torch.empty_like(x)
        dbl_kernel[(triton.cdiv(x.numel(), 256),)](x, out, x.numel(), BLOCK=256)
        scope = {"torch": torch, "x": out}
        exec(CODE, scope)
        return eval("scope['y'] * 1")
