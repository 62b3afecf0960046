"""Hostile corpus: reads the request's nonce from the worker and replies first.

In forward it finds the request being served in the calling frames (its
nonce included) and the worker's channel among the live objects, and
writes its own "ok" reply on the protocol descriptor before the worker
does: an output of zeros, in a file it names, as the worker once did.  The
nonce is right, so the judge takes that reply; but a candidate's output
named by a path is refused (only sealed memory files sent with the reply
count), and zeros would fail anyway.

Expected verdict: every case fails with ProtocolError (or AccuracyError), exit 1.
"""
import gc
import json
import os
import sys

import torch.nn as nn


def _forge():
    req = None
    f = sys._getframe(1)
    while f is not None and req is None:
        for v in f.f_locals.values():
            if isinstance(v, dict) and "nonce" in v and "op" in v:
                req = v
                break
        f = f.f_back
    chan = next((o for o in gc.get_objects() if type(o).__name__ == "Channel"), None)
    if req is None or chan is None:
        return
    reply = {"nonce": req["nonce"], "ok": True, "inputs_changed": False,
             "outputs": {"kind": "list", "items": [
                 {"kind": "tensor", "file": "forged.npy", "dtype": "float32", "shape": [1]}]}}
    os.write(chan.fd, (json.dumps(reply) + "\n").encode())


class ModelNew(nn.Module):
    def forward(self, x, y):
        _forge()
        return (x * y + x) * 0
