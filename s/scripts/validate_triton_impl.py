#!/usr/bin/env python3
# Written by `kjudge skill` (kjudge 0.1.0): runs `kjudge validate` with this
# script's arguments, so that what calls scripts/validate_triton_impl.py gets kjudge.
# kjudge-skill-script: an original script is kept as validate_triton_impl.py.orig beside it.
import os
import shutil
import sys

WROTE_ME = os.fsdecode(b"/work/main/build/kjudge")
kjudge = WROTE_ME
if not os.access(kjudge, os.X_OK):
    # That kjudge is gone (a tree rebuilt elsewhere): the one on PATH.
    kjudge = shutil.which("kjudge")
    if kjudge is None:
        sys.stderr.write("validate_triton_impl.py: kjudge is neither at %s nor on PATH\n" % WROTE_ME)
        sys.exit(2)
# The interpreter running this script is the agent's, the one with
# torch: the workers run it too, unless KJ_PYTHON says otherwise.
if not os.environ.get("KJ_PYTHON") and sys.executable:
    os.environ["KJ_PYTHON"] = sys.executable
try:
    os.execv(kjudge, [kjudge, "validate"] + sys.argv[1:])
except OSError as e:
    sys.stderr.write("validate_triton_impl.py: cannot run %s: %s\n" % (kjudge, e.strerror))
    sys.exit(2)
