"""Hostile corpus: keeps its output memory files writable.

It replaces fcntl.fcntl (not a function the harness guards) with one that
ignores F_ADD_SEALS, so the memory files the worker sends its outputs in
stay writable and resizable: after replying it could rewrite them or cut
them short while the judge has them mapped (a SIGBUS in the judge).  The
judge maps only memory files sealed against writes, growth and shrinking.

Expected verdict: every case fails with ProtocolError, exit 1.
"""
import fcntl

import torch.nn as nn

_real = fcntl.fcntl


def _no_seals(fd, cmd, arg=0):
    if cmd == getattr(fcntl, "F_ADD_SEALS", -1):
        return 0
    return _real(fd, cmd, arg)


fcntl.fcntl = _no_seals


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
