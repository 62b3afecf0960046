"""Clean: arithmetic on sizes, strides and scalars is not tensor compute."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def axpb_kernel(x_ptr, out_ptr, n, a, b, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, tl.load(x_ptr + offs, mask=mask) * a + b, mask=mask)


class ModelNew(nn.Module):
    def __init__(self, a=2.0):
        super().__init__()
        self.a = a

    def forward(self, x, b: float = 0.5, block=256):
        out = torch.empty_like(x)
        n = x.numel()
        rows = x.shape[0] * 2 - x.shape[0]
        grid = ((n + block - 1) // block,)
        a = self.a * 1.0
        axpb_kernel[grid](x, out, n, a, b + 0.0, BLOCK=block)
        return out.view(rows, -1)
