"""A compute-bound task of one case: 24 chained 256x256 float32 matmuls
(each through tanh, which keeps the values bounded).  Its call (7-10 ms on
one CPU thread) works on data that stays in the caches, while the judge's
own work around a round is small (256 KiB sets, the round trip: 2-3 ms),
so that the judge's clock alone tells a call on new inputs from a replayed
one, and by far (tests/candidates/memo_forger)."""
import torch
import torch.nn as nn

# One thread, as matmul_torch.py: the timings follow the code under test.
torch.set_num_threads(1)


class Model(nn.Module):
    def forward(self, x, y):
        for _ in range(24):
            x = torch.tanh(x @ y)
        return x


def get_input_groups():
    return [[torch.randn(256, 256), torch.randn(256, 256) / 16]]


def get_init_inputs():
    return []
