"""vmm_probe.py - can a judge-owned process read a candidate's GPU outputs
without a trip through host memory?  And what does that trip cost today?

Measures on the GPU machine (one call, about a minute):
  1. host path: a 6.4 GB float32 tensor (KernelBench 19_ReLU's output) from
     the GPU into a new memory file the way the worker writes one today
     (pinned staging buffers, pwrite), then into a memory file whose pages
     were allocated first (posix_fallocate), and the cost of that allocation;
  2. device path: the tensor copied into a CUDA virtual-memory allocation
     made exportable as a POSIX file descriptor (cuMemCreate,
     cuMemExportToShareableHandle), the descriptor sent over a Unix socket
     (SCM_RIGHTS) to another process, which imports it, maps it, copies it
     into memory of its own and checks it bit for bit against the same
     tensor made from the same seed.  The importer runs once as a plain child
     and once in a PID namespace of its own (unshare), as a sandboxed
     worker's peer would.

Run: python3 bench/gpu/vmm_probe.py  (child mode: --child FD)
"""
import ctypes
import os
import socket
import subprocess
import sys
import time

N = 4096 * 393216  # float32 elements: 6.4 GB
SEED = 1234

cuda = ctypes.CDLL("libcuda.so.1")


def ck(rc, what):
    if rc != 0:
        s = ctypes.c_char_p()
        cuda.cuGetErrorString(rc, ctypes.byref(s))
        raise RuntimeError(f"{what}: CUDA error {rc} ({s.value and s.value.decode()})")


class Prop(ctypes.Structure):
    _fields_ = [("type", ctypes.c_int), ("handle_types", ctypes.c_int),
                ("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int),
                ("win32", ctypes.c_void_p), ("flags", ctypes.c_ubyte * 8)]


class Access(ctypes.Structure):
    _fields_ = [("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int), ("flags", ctypes.c_int)]


def prop(dev=0):
    p = Prop()
    p.type, p.handle_types, p.loc_type, p.loc_id = 1, 1, 1, dev  # pinned, POSIX fd, device
    return p


def granule(p):
    g = ctypes.c_size_t()
    ck(cuda.cuMemGetAllocationGranularity(ctypes.byref(g), ctypes.byref(p), 0), "granularity")
    return g.value


def map_handle(h, size, dev=0):
    ptr = ctypes.c_uint64()
    ck(cuda.cuMemAddressReserve(ctypes.byref(ptr), ctypes.c_size_t(size), ctypes.c_size_t(0),
                                ctypes.c_uint64(0), ctypes.c_uint64(0)), "reserve")
    ck(cuda.cuMemMap(ptr, ctypes.c_size_t(size), ctypes.c_size_t(0), h, ctypes.c_uint64(0)), "map")
    a = Access(1, dev, 3)
    ck(cuda.cuMemSetAccess(ptr, ctypes.c_size_t(size), ctypes.byref(a), ctypes.c_size_t(1)), "access")
    return ptr.value


class CAI:
    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


def made(torch):
    g = torch.Generator(device="cuda").manual_seed(SEED)
    return torch.rand(N, device="cuda", generator=g)


def t():
    return time.perf_counter()


def child(fd):
    import torch
    torch.cuda.init()
    torch.empty(1, device="cuda")
    sock = socket.socket(fileno=fd)
    msg, fds, _, _ = socket.recv_fds(sock, 256, 1)
    size = int(msg.decode())
    t0 = t()
    h = ctypes.c_uint64()
    ck(cuda.cuMemImportFromShareableHandle(ctypes.byref(h), ctypes.c_void_p(fds[0]), 1), "import")
    ptr = map_handle(h, size)
    view = torch.as_tensor(CAI(ptr, size), device="cuda")
    mine = view[:N * 4].clone()
    torch.cuda.synchronize()
    t1 = t()
    ck(cuda.cuMemUnmap(ctypes.c_uint64(ptr), ctypes.c_size_t(size)), "unmap")
    ck(cuda.cuMemAddressFree(ctypes.c_uint64(ptr), ctypes.c_size_t(size)), "free")
    ck(cuda.cuMemRelease(h), "release")
    os.close(fds[0])
    ref = made(torch).view(torch.uint8)
    t2 = t()
    same = torch.equal(mine, ref)
    torch.cuda.synchronize()
    t3 = t()
    sock.sendall(f"import+map+copy {t1 - t0:.4f} s, compare {t3 - t2:.4f} s, equal {same}, "
                 f"pid in its namespace {os.getpid()}".encode())


def main():
    import torch
    print("torch", torch.__version__, torch.cuda.get_device_name(0), flush=True)
    x = made(torch)
    torch.cuda.synchronize()
    nbytes = x.numel() * 4
    flat = x.view(torch.uint8)

    print("== 1. host path (6.4 GB)", flush=True)
    stage = [torch.empty(64 << 20, dtype=torch.uint8, pin_memory=True) for _ in range(2)]
    for label, prealloc in (("new memory file, pwrite", False), ("fallocate first, then pwrite", True)):
        fd = os.memfd_create("probe", os.MFD_CLOEXEC)
        t0 = t()
        if prealloc:
            os.posix_fallocate(fd, 0, nbytes)
        t1 = t()
        off = 0
        while off < nbytes:
            n = min(64 << 20, nbytes - off)
            stage[0][:n].copy_(flat[off:off + n])
            mv = memoryview(stage[0].numpy())[:n]
            while len(mv):
                w = os.pwrite(fd, mv, off)
                mv, off = mv[w:], off + w
        t2 = t()
        print(f"   {label}: allocation {t1 - t0:.2f} s, write {t2 - t1:.2f} s, "
              f"{nbytes / (t2 - t0) / 1e9:.2f} GB/s overall", flush=True)
        os.close(fd)

    print("== 2. device path: CUDA VMM exported as a file descriptor", flush=True)
    p = prop()
    g = granule(p)
    size = (nbytes + g - 1) // g * g
    for label, pre in (("plain child", []), ("child in its own PID namespace", ["unshare", "--pid", "--fork", "--mount-proc"])):
        try:
            t0 = t()
            h = ctypes.c_uint64()
            ck(cuda.cuMemCreate(ctypes.byref(h), ctypes.c_size_t(size), ctypes.byref(p), ctypes.c_uint64(0)), "create")
            ptr = map_handle(h, size)
            view = torch.as_tensor(CAI(ptr, size), device="cuda")
            view[:nbytes].copy_(flat)
            torch.cuda.synchronize()
            fdv = ctypes.c_int(-1)
            ck(cuda.cuMemExportToShareableHandle(ctypes.byref(fdv), h, 1, ctypes.c_uint64(0)), "export")
            t1 = t()
            a, b = socket.socketpair()
            proc = subprocess.Popen(pre + [sys.executable, os.path.abspath(__file__), "--child", str(b.fileno())],
                                    pass_fds=[b.fileno()])
            b.close()
            socket.send_fds(a, [str(size).encode()], [fdv.value])
            os.close(fdv.value)
            reply = a.recv(4096).decode()
            proc.wait(timeout=120)
            ck(cuda.cuMemUnmap(ctypes.c_uint64(ptr), ctypes.c_size_t(size)), "unmap")
            ck(cuda.cuMemAddressFree(ctypes.c_uint64(ptr), ctypes.c_size_t(size)), "free")
            ck(cuda.cuMemRelease(h), "release")
            print(f"   {label}: create+map+copy+export {t1 - t0:.4f} s; child (exit {proc.returncode}): "
                  f"{reply or 'no reply'}", flush=True)
        except Exception as e:  # a finding, not a crash
            print(f"   {label}: FAILED: {e}", flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        child(int(sys.argv[2]))
    else:
        main()
