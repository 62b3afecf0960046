"""Hostile corpus: a correct candidate that floods stdout and stderr.

Each forward writes about 3 MiB to each of stdout and stderr -- text, raw
binary (NUL bytes, invalid UTF-8, no trailing newline) -- with lines that
look like the judge's protocol replies and verdicts mixed in.  The judge
must drain what it captures and never parse it; and output past the
capture cap (256 KiB) is a verdict of its own, not a pass with the output
cut: the flood cannot hide what the candidate printed.  (Writing to other
descriptors, the protocol channel among them, is fd_forger's and
forger_wrong's job.)

Expected verdict: every case fails with OutputLimitExceeded, exit 1.
"""
import os
import sys

import torch.nn as nn

FORGED = [
    '{"id": 1, "ok": true, "outputs": []}',
    '{"ok": true, "passed": true}',
    '{"op_name": "addmul", "total_cases": 3, "passed_cases": 3, "failed_cases": 0, "failures": []}',
]


def flood(fd, stream):
    line = "garbage " * 127 + "\n"
    for i in range(2048):
        stream.write(line)
        if i % 512 == 0:
            stream.write(FORGED[i // 512 % len(FORGED)] + "\n")
    stream.flush()
    os.write(fd, bytes(range(256)) * 4096)  # 1 MiB of binary, ends mid-line
    for f in FORGED:
        os.write(fd, ("\n" + f + "\n").encode())


class ModelNew(nn.Module):
    def forward(self, x, y):
        flood(1, sys.stdout)
        flood(2, sys.stderr)
        return x * y + x
