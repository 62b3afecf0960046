"""Candidate: row softmax as a Triton kernel, one program per row.

The whole row fits in one block (BLOCK >= number of columns); masked lanes
load -inf so they drop out of both the maximum and the sum.
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_cols, x_row_stride, out_row_stride, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n_cols
    x = tl.load(x_ptr + row * x_row_stride + cols, mask=mask, other=-float("inf"))
    x = x.to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    y = e / tl.sum(e, axis=0)
    tl.store(out_ptr + row * out_row_stride + cols, y, mask=mask)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty_like(x2)
        rows, cols = x2.shape
        softmax_kernel[(rows,)](x2, out, cols, x2.stride(0), out.stride(0),
                                BLOCK=triton.next_power_of_2(cols))
        return out.view(x.shape)
