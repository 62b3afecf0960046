"""A compute-bound task: a square float32 matmul in three sizes, for the
timing cheats whose replayed answer costs far less than the work (a lookup
by input content against a matmul)."""
import torch
import torch.nn as nn

# One thread: on a small machine the timings of a threaded matmul follow
# whatever else runs more than the code under test.
torch.set_num_threads(1)


class Model(nn.Module):
    def forward(self, x, y):
        return x @ y


def get_input_groups():
    return [[torch.randn(n, n), torch.randn(n, n)] for n in (256, 320, 384)]


def get_init_inputs():
    return []
