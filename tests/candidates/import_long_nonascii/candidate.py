"""Hostile corpus: the module raises at import, with a long message of
characters outside ASCII, and prints more of them on stderr first.

Expected verdict: every case fails with LoadError (exception ValueError),
exit 1.
"""
import sys

sys.stderr.write("😀" * 2000 + "\n")
raise ValueError("ü" * 3001)
