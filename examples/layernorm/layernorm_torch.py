"""Task: LayerNorm over the last dimension (768, as in BERT-base), float32,
with learnable weight and bias.

The affine parameters are drawn at random in __init__ (weight around 1, bias
around 0), so a candidate that ignores them, or builds its own with other
values, fails; the judge seeds torch identically before building Model and
ModelNew, so a ModelNew that draws them the same way gets the same values.
"""
import torch
import torch.nn as nn

HIDDEN = 768
EPS = 1e-5


def init_affine(norm):
    """The random affine parameters; ModelNew repeats these exact calls."""
    with torch.no_grad():
        norm.weight.normal_(1.0, 0.1)
        norm.bias.normal_(0.0, 0.1)


class Model(nn.Module):
    def __init__(self, hidden, eps):
        super().__init__()
        self.norm = nn.LayerNorm(hidden, eps=eps)
        init_affine(self.norm)

    def forward(self, x):
        return self.norm(x)


def get_inputs():
    return [torch.randn(128, HIDDEN)]


def get_init_inputs():
    return [HIDDEN, EPS]
