"""Hostile corpus: leaves its outputs on the device when the judge asked
for sealed memory files.

It finds the worker's request object (it runs in the same process) and
sets its `export` flag in forward, without replacing any function the harness
guards, so that its right outputs go out as unsealed exported descriptors
(on the CPU, memory files it could still write).  Where the judge asked for
sealed files, an exported output is never compared: the case fails.  (Under
KJ_DEVICE_COMPARE=all the judge asks for exports itself: its outputs are
then copied by the reference's worker and compared, and they pass.)

Expected verdict: every case fails with ProtocolError, exit 1 (under the
default KJ_DEVICE_COMPARE=auto on the CPU, which exports nothing).
"""
import gc

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        for o in gc.get_objects():
            # The request's state (Request), or the worker's own where a
            # worker keeps it there.
            if type(o).__name__ in ("Request", "Worker") and hasattr(o, "export"):
                o.export = 2
        return x * y + x
