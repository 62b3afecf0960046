"""Hostile corpus (GPU): a CUDA-graph replay of a stale result.  On the
first call for a shape it copies the inputs into static buffers, captures
the matmul into a CUDA graph (kept at module level, so that a fresh ModelNew
per case does not lose it), and from then on only replays the graph: the
inputs of later calls are never copied in, so every call returns the first
inputs' product, fast.  A judge that checks a single input set per case,
or times calls whose outputs it never looks at, is fooled.

Expected verdict: verify fails (AccuracyError: a case's second input set
gets the first one's result); benchmark fails every case.
"""
import torch
import torch.nn as nn

GRAPHS = {}


class ModelNew(nn.Module):
    def forward(self, x, y):
        if not x.is_cuda:
            return x @ y
        key = (tuple(x.shape), tuple(y.shape), x.dtype, x.device)
        if key not in GRAPHS:
            sx, sy = x.clone(), y.clone()
            side = torch.cuda.Stream()
            side.wait_stream(torch.cuda.current_stream())
            with torch.cuda.stream(side):
                sx @ sy
            torch.cuda.current_stream().wait_stream(side)
            g = torch.cuda.CUDAGraph()
            with torch.cuda.graph(g):
                out = sx @ sy
            GRAPHS[key] = (g, out, sx, sy)
        g, out, _, _ = GRAPHS[key]
        g.replay()
        return out
