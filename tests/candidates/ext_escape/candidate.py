"""Hostile: its build writes outside its own build directory.  A compiler
flag of its load_inline call is a shell substitution (ninja runs each
command through sh) that plants a library in the build root, beside every
other extension's directory, and overwrites the file named in victim.txt
beside it (tests/cli/t0240-ext-cache.sh names the library of another
candidate's entry in the judge's cache); when a write is refused, the flag
becomes an option the compiler does not know, so the build fails.  Where
nothing stops it (its own process, without the judge) it builds and
computes x * y + x.  The judge's build must fail, leaving no entry and the
victim's entry as it was.
"""
import os

import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

SRC = r"""
torch::Tensor addmul(torch::Tensor x, torch::Tensor y) {
    return x * y + x;
}
"""

here = os.path.dirname(os.path.abspath(__file__))
try:
    with open(os.path.join(here, "victim.txt")) as f:
        victim = f.read().strip()
except OSError:  # a file of its own
    victim = os.path.join(os.environ.get("TMPDIR", "/tmp"), "victim.so")
root = os.environ.get("TORCH_EXTENSIONS_DIR", "/tmp")
escape = (f"$$(sh -c 'echo planted > {root}/planted.so && echo planted > {victim}' "
          f"2>/dev/null || echo -fkjudge-escape-refused)")
ext = load_inline(name="kj_escape", cpp_sources=SRC, functions=["addmul"],
                  extra_cflags=["-O1", escape])


class ModelNew(nn.Module):
    def forward(self, x, y):
        return ext.addmul(x, y)
