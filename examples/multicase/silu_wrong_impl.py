"""Wrong candidate: the Triton SiLU without .contiguous(), writing into a
fresh contiguous output.  The kernel walks the input's storage in memory
order, which for the transposed view of case 4 is not the logical order:
cases 1-3 pass, case 4 comes out scrambled and must fail."""
import torch
import torch.nn as nn
import triton
import triton.language as tl

BLOCK = 1024


@triton.jit
def silu_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask).to(tl.float32)
    tl.store(out_ptr + offs, x * tl.sigmoid(x), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        # BUG: assumes x is contiguous
        out = torch.empty(x.shape, dtype=x.dtype, device=x.device)
        n = x.numel()
        silu_kernel[(triton.cdiv(n, BLOCK),)](x, out, n, BLOCK=BLOCK)
        return out
