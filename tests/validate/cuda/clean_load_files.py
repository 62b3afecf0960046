"""Clean: torch.utils.cpp_extension.load() of a .cu file next to this one."""
import torch.nn as nn
from torch.utils.cpp_extension import load

ext = load(name="scale_ext", sources=["clean_pybind.cu"], verbose=False)


class ModelNew(nn.Module):
    def forward(self, x):
        return ext.scale(x, 2.0)
