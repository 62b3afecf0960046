#!/usr/bin/env python3
"""Write the example tensors of examples/compare (run from anywhere).

golden.npy      softmax over rows of a 64 x 128 float16 input, computed in float64
actual_ok.npy   the same computed in float16 arithmetic: off by rounding only
actual_bad.npy  actual_ok with a row that forgot to subtract the row max and
                overflowed to NaN, the kind of bug a generated kernel has
"""
import os

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
rng = np.random.default_rng(7)
x = (rng.standard_normal((64, 128)) * 4).astype(np.float16)

g = np.exp(x.astype(np.float64) - x.max(axis=1, keepdims=True))
g = (g / g.sum(axis=1, keepdims=True)).astype(np.float16)

e = np.exp(x - x.max(axis=1, keepdims=True))
ok = e / e.sum(axis=1, keepdims=True, dtype=np.float16)

bad = ok.copy()
bad[17] = np.float16(np.nan)

np.save(os.path.join(here, "golden.npy"), g)
np.save(os.path.join(here, "actual_ok.npy"), ok)
np.save(os.path.join(here, "actual_bad.npy"), bad)
