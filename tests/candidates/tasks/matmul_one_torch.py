"""A compute-bound task of one case: a 640x640 float32 matmul, whose call
(5-6 ms on one CPU thread) is long next to the judge's own work around a
round (making a set of inputs, checking it, the round trip: 5-8 ms), so
that the judge's clock alone tells a call on new inputs from a replayed one
(tests/candidates/memo_forger)."""
import torch
import torch.nn as nn

# One thread, as matmul_torch.py: the timings follow the code under test.
torch.set_num_threads(1)


class Model(nn.Module):
    def forward(self, x, y):
        return x @ y


def get_input_groups():
    return [[torch.randn(640, 640), torch.randn(640, 640)]]


def get_init_inputs():
    return []
