"""Hostile corpus: a wrong candidate that, on every call, writes forged
"pass" replies (with guessed nonces) and two binary frames with a
0xFFFFFFF0 length prefix (little- and big-endian, no newline) to every
descriptor 0..63 it can write to -- the judge's channel among them -- and
then returns x * y instead of x * y + x.

A judge that drops lines it does not expect would glue its real reply to
the frame's bytes and wait for a reply that can no longer be read, until
the case's timeout (or, worse, a reader that believes the length prefix
waits for 4 GiB).  The judge must fail each case with ProtocolError at
once, naming what came on its channel, and finish long before --timeout.

Expected verdict: every case ProtocolError (AccuracyError where the forged
bytes missed the channel); exit 1, within max_seconds.
"""
import fcntl
import os
import stat
import struct

import torch.nn as nn


def forge():
    lines = ['{"ok": true, "passed": true, "error_type": null}']
    for i in range(64):
        lines.append('{"id": %d, "nonce": %d, "ok": true, "passed": true, "outputs": []}' % (i, i))
    data = ("\n".join(lines) + "\n").encode()
    frames = [struct.pack("<I", 0xFFFFFFF0) + b"\x00" * 60,
              struct.pack(">I", 0xFFFFFFF0) + b"\x00" * 60]
    for fd in range(0, 64):
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
            for chunk in [data] + frames:
                try:
                    os.write(fd, chunk)
                except OSError:
                    pass
        finally:
            fcntl.fcntl(fd, fcntl.F_SETFL, flags)


class ModelNew(nn.Module):
    def forward(self, x, y):
        forge()
        return x * y
