"""Hostile corpus (benchmark, GPU only): the matmul task's computation,
launched on a stream from torch's pool, and the call returns without
making the current stream wait for it (KernelBench's non-default-stream
idea).  A timer that waits on the current stream alone misses the work;
the judge's clock, around rounds that end after every stream of the
context is idle, does not.

Expected verdict: a pass with its honest twin's speedup (pool_stream_joined,
within 20 %), or a timing failure.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        s = torch.cuda.Stream()
        s.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(s):
            out = x @ y
        return out
