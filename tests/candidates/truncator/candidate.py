"""Hostile corpus: cuts its output files short after replying.

Right answers, and a thread that keeps looking through /proc/self/fd for
the memory files the worker sends its outputs in, and tries to truncate
them, grow them and overwrite them with zeros, before and after the reply
(through the worker's descriptor, a duplicate, and a new open of the
/proc link).  On a file the judge has mapped, a truncation would kill the
judge with SIGBUS and an overwrite would change what it compares.  The
seals refuse all three.

Expected verdict: the judge is not crashed, and gives a verdict per case:
a pass (the seals refused the attack after the worker sealed the file), or
a ProtocolError or AccuracyError where the thread got at the file while
the worker was still writing it, before the seals: the candidate's own
output, spoiled by its own thread.
"""
import os
import threading
import time

import torch.nn as nn


def _attack():
    while True:
        try:
            names = os.listdir("/proc/self/fd")
        except OSError:
            names = []
        for n in names:
            try:
                if "memfd:" not in os.readlink(f"/proc/self/fd/{n}"):
                    continue
                fd = int(n)
                for f in (fd, os.dup(fd)):
                    for act in (lambda: os.ftruncate(f, 0), lambda: os.ftruncate(f, 1 << 20),
                                lambda: os.pwrite(f, b"\0" * 4096, 0)):
                        try:
                            act()
                        except OSError:
                            pass
                    if f != fd:
                        os.close(f)
                g = os.open(f"/proc/self/fd/{n}", os.O_RDWR)
                try:
                    os.ftruncate(g, 0)
                except OSError:
                    pass
                os.close(g)
            except (OSError, ValueError):
                pass
        time.sleep(0.0005)


threading.Thread(target=_attack, daemon=True).start()


class ModelNew(nn.Module):
    def forward(self, x, y):
        return x * y + x
