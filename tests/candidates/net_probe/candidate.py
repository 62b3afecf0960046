"""Hostile corpus: talks to the network.

It tries to listen on and connect to loopback, and to reach an outside
address.  The sandbox has a network namespace of its own with no interface
up.  If any connection works it returns a wrong answer.

Expected verdict: all three cases pass, exit 0.
"""
import socket

import torch.nn as nn


def reachable():
    try:
        srv = socket.socket()
        srv.bind(("127.0.0.1", 0))
        srv.listen(1)
        c = socket.create_connection(srv.getsockname(), timeout=1)
        c.close()
        return True
    except OSError:
        pass
    try:
        socket.create_connection(("192.0.2.1", 80), timeout=1).close()
        return True
    except OSError:
        return False


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * 0 if reachable() else x * y + x
