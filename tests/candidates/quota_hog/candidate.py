"""Hostile corpus: fills its own directories with files, each under the
file size limit.

It writes 32 MiB files into its output directory and its home until writing
fails.  The candidate's files live on a tmpfs of their own whose size is the
task's quota (the larger of 256 MiB and twice its outputs: 256 MiB here), so
the writes fail with ENOSPC after about 256 MiB, whatever the machine has.

Expected verdict: every case fails with ForwardError (exception OSError,
"No space left on device"), exit 1.
"""
import os

import torch.nn as nn


def fill():
    block = b"\0" * (1 << 20)
    dirs = [os.getcwd(), os.environ.get("HOME", os.getcwd())]
    n = 0
    while True:
        d = dirs[n % 2]
        with open(os.path.join(d, f"hog{n}.bin"), "wb") as f:
            for _ in range(32):
                f.write(block)
        n += 1
        if n > 64:  # 2 GiB: the quota was not there
            return


class ModelNew(nn.Module):
    def forward(self, x, y):
        fill()
        return x * y + x
