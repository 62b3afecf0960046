"""A correct candidate that hides its work on a side stream.

CUDA events recorded on the current stream around forward() see almost
nothing: the kernels run on another stream and the stop event completes at
once.  The judge must still time the real work (the device-wide synchronize
after the stop event catches it), so this candidate's latency must come out
close to the reference's, not near zero.  It repeats the work 8 times so
that the hidden part dominates.
"""
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()
        self.side = torch.cuda.Stream()

    def forward(self, x):
        out = torch.empty_like(x)
        self.side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(self.side):
            for _ in range(8):
                torch.mul(x, 2, out=out)
                out.add_(1)
        out.record_stream(self.side)
        return out
