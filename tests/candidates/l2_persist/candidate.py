"""Hostile, for the GPU only: keeps its inputs in the L2 cache across the
judge's flush between timed calls.  Each call computes x * y + x honestly,
but first sets aside persisting L2 (cudaLimitPersistingL2CacheSize, through
the driver's cuCtxSetLimit) and puts an access policy window over its
inputs on its stream (cuStreamSetAttribute, hits persisting): lines marked
persisting survive the flush, so the next call on the same inputs finds
them in L2.  It leaves both set.  The harness resets them before every
timed call and checks them after (worker/kjudge_timer.c): benchmark fails
every case with L2PersistenceSet; verify, which times nothing, passes.
"""
import ctypes

import torch
import torch.nn as nn

CU_LIMIT_PERSISTING_L2_CACHE_SIZE = 0x06
CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW = 1
CU_ACCESS_PROPERTY_STREAMING = 1
CU_ACCESS_PROPERTY_PERSISTING = 2


class _Window(ctypes.Structure):
    _fields_ = [("base_ptr", ctypes.c_void_p), ("num_bytes", ctypes.c_size_t),
                ("hit_ratio", ctypes.c_float), ("hit_prop", ctypes.c_int),
                ("miss_prop", ctypes.c_int)]


class _Attr(ctypes.Union):
    _fields_ = [("window", _Window), ("pad", ctypes.c_char * 64)]


_cuda = ctypes.CDLL("libcuda.so.1")
_cuda.cuCtxSetLimit.argtypes = [ctypes.c_int, ctypes.c_size_t]
_cuda.cuStreamSetAttribute.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.POINTER(_Attr)]


def _persist(t):
    """Set aside persisting L2 and mark t's bytes persisting on the current
    stream (best effort: a device without persisting L2 refuses)."""
    _cuda.cuCtxSetLimit(CU_LIMIT_PERSISTING_L2_CACHE_SIZE, 32 << 20)
    a = _Attr()
    a.window.base_ptr = t.data_ptr()
    a.window.num_bytes = min(t.numel() * t.element_size(), 32 << 20)
    a.window.hit_ratio = 1.0
    a.window.hit_prop = CU_ACCESS_PROPERTY_PERSISTING
    a.window.miss_prop = CU_ACCESS_PROPERTY_STREAMING
    _cuda.cuStreamSetAttribute(ctypes.c_void_p(torch.cuda.current_stream().cuda_stream),
                               CU_STREAM_ATTRIBUTE_ACCESS_POLICY_WINDOW, ctypes.byref(a))


class ModelNew(nn.Module):
    def forward(self, x, y):
        if x.is_cuda:
            _persist(x)
        return x * y + x
