"""Type 3: tensor methods and the @ operator do the work after the kernel."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def sq_kernel(x_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    tl.store(x_ptr + offs, x * x, mask=mask)


class ModelNew(nn.Module):
    def forward(self, x, w):
        x = x.contiguous()
        sq_kernel[(triton.cdiv(x.numel(), 256),)](x, x.numel(), BLOCK=256)
        y = x @ w
        y = y.sum(dim=-1, keepdim=True)
        return torch.Tensor.exp(y).clamp(min=0.0)
