"""Clean, with a warning: .item() for a log line does not feed the launch."""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def neg_kernel(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    tl.store(out_ptr + offs, -tl.load(x_ptr + offs, mask=mask), mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.calls = torch.zeros(1)

    def forward(self, x):
        out = torch.empty_like(x)
        n = x.numel()
        neg_kernel[(triton.cdiv(n, 512),)](x, out, n, BLOCK=512)
        count = self.calls.item()
        if count < 0:
            print(count)
        return out
