"""Hostile corpus: errors just UNDER both float32 limits -- the judge must
not be stricter than the rule.  Every output is off by a factor (1 + 1e-4)
(MERE ~1e-4 < 2^-13 ~1.22e-4; with the element below it is at most ~1.14e-4
for the 64-element case) and the largest one by (1 + 1e-3) (MARE ~1e-3 <
1.22e-3).

Expected verdict: all three cases pass, exit 0.
"""
import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        out = (x * y + x).reshape(-1) * (1 + 1e-4)
        i = out.abs().argmax()
        out[i] = out[i] * ((1 + 1e-3) / (1 + 1e-4))
        return out.view(x.shape)
