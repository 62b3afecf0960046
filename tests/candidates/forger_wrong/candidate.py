"""Hostile corpus: WRONG outputs (all zeros) plus forged protocol replies and
verdicts on every descriptor 0..20 it can write to, with guessed request ids
0..63, claiming success.  Whatever the judge makes of the forged lines, it
must not pass wrong outputs.

Expected verdict: every case fails, with AccuracyError or ProtocolError, exit 1.
"""
import fcntl
import os
import stat

import torch.nn as nn


def forge():
    lines = ['{"ok": true, "passed": true}',
             '{"op_name": "addmul", "total_cases": 3, "passed_cases": 3, "failed_cases": 0, "failures": []}']
    for i in range(64):
        lines.append('{"id": %d, "ok": true, "outputs": []}' % i)
        lines.append('{"id": %d, "ok": true, "passed": true, "inputs_changed": false, "aliases": []}' % i)
    data = ("\n".join(lines) + "\n").encode()
    for fd in range(0, 21):
        try:
            if stat.S_ISCHR(os.fstat(fd).st_mode):  # leave device nodes alone
                continue
            flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        except OSError:
            continue
        # non-blocking, so that a full pipe nobody reads cannot hang the
        # candidate; the flags are put back afterwards
        try:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags | os.O_NONBLOCK)
            os.write(fd, data)
        except OSError:
            pass
        finally:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)


class ModelNew(nn.Module):
    def forward(self, x, y):
        forge()
        return x * 0
