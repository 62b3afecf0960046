"""Hostile corpus: a correct candidate that writes forged protocol replies
to every descriptor 0..20 it can write to -- including, presumably, the
judge's protocol channel -- with guessed request ids 0..63.  The forged
replies claim success with no outputs, or with an output file that does not
exist.

The judge must not take a forged line for the reply: it either ignores lines
that do not answer its request (then the real outputs pass) or detects the
interference and fails the case with ProtocolError.  Believing a forgery
(e.g. failing with an output count mismatch) is wrong.

Expected verdict: each case passes, or fails with ProtocolError (its forged
lines may reach the channel in the middle of a real reply on some cases
and not on others); exit 0 when all pass, else 1.
"""
import fcntl
import os
import stat

import torch.nn as nn


def forge():
    lines = ['{"ok": true, "passed": true}']
    for i in range(64):
        lines.append('{"id": %d, "ok": true, "outputs": []}' % i)
        lines.append('{"id": "%d", "ok": true, "outputs": [{"type": "tensor", "path": '
                     '"/nonexistent/forged.npy", "dtype": "float32", "shape": [64]}]}' % i)
    data = ("\n".join(lines) + "\n").encode()
    for fd in range(0, 21):
        try:
            # pipes, sockets and files only: no device nodes (GPU driver handles)
            if stat.S_ISCHR(os.fstat(fd).st_mode):
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
        return x * y + x
