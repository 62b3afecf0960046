"""Hostile corpus: writes a file without end.

It writes 1 MiB blocks into its output directory until writing fails.  The
sandbox's file size limit (KJ_LIMIT_FILE_MB, here 32) makes the write fail
with EFBIG ("File too large").

Expected verdict: every case fails with ForwardError (exception OSError), exit 1.
"""
import os
import tempfile

import torch.nn as nn


class ModelNew(nn.Module):
    def forward(self, x, y):
        path = os.path.join(os.environ.get("TMPDIR", tempfile.gettempdir()), "huge.bin")
        block = b"\0" * (1 << 20)
        with open(path, "wb") as f:
            while True:
                f.write(block)
                f.flush()
