#!/usr/bin/env python3
"""kjudge torch worker: runs one side (reference or candidate) of an attempt.

The C core starts one worker per side and talks to it over a dedicated file
descriptor (--fd), never over stdout: whatever the code under test prints goes
to stdout/stderr, which the core captures up to a cap and shows in error
messages, and it cannot be mistaken for a reply.  docs/protocol.md is the
contract (framing, every request and reply, limits, errors); in short:

Protocol: one JSON object per line in each direction.  Every request has an
"op" and a "nonce"; every reply repeats the "nonce" and has "ok".  The core
fails a request at any line on the channel that is not its reply (or a
build message of the request, _judge_build), so code under test that finds
the descriptor and writes to it cannot answer in the worker's place.
Descriptors travel with the lines (SCM_RIGHTS): the outputs of a request
asked for "sealed" or "export", and the candidate's exported outputs that
the judge passes with "take".

  hello       pycache write_bytecode [device prime_profiler]
                          -> python torch triton cuda_available cuda_count
                             [device_name cuda driver *_clock_mhz]
  load_task   dir task_module device [case_params]
                          -> cases (number of input groups)
  load        module cls init_seed [params kernels_disabled profile_kernels
              compile ext_builds]
                          -> (the module under test is imported, its model built)
  run         case seed out_dir tag [params sealed export keep]
                          -> outputs input_desc inputs_changed aliases phases
                             [kernel_names launches_suppressed]
  time_round  case seeds schedule warmup flush_bytes out_dir tag check
              [known probe empty params sealed export]
                          -> samples_ms escaped_ms peak_memory_mb timer
                             idle_sync_ms phases [launches_suppressed], and
                             with check: distinct_outputs calls inputs_changed
  device                  -> copy_gbs launch_ms (the reference's worker)
  take        items (fd nbytes device), with descriptors
                          -> taken (the reference's worker)
  figures     items (kept taken t numel dtype)
                          -> figures (the reference's worker)
  drop                    -> (kept outputs and copies forgotten)
  build       dir timeout -> rc output build_s (the judge's builder)
  exit                    (no reply: the worker ends)

A task with a cases file (docs/cli.md) has its cases' parameters: the judge
expands the file and sends them, every case's in load_task (checked against
the signatures of get_inputs and get_init_inputs, which must take them as
keyword arguments: else the task fails to load), one case's with load (the
model is built with get_init_inputs(**params)) and with every run and
time_round (get_inputs(**params); the model is built again when the
parameters differ from those it was built with).  Without params a task is
what it always was: get_inputs() or get_input_groups(), one model.

kernels_disabled and profile_kernels (load, the candidate's worker only)
are the anti-cheat layers of eval; see _disable_kernels and
_profile_forward.

The task module is imported by a request of its own (load_task) before the
module under test (load), so that the judge knows which of the two failed
without taking the worker's word for it.

outputs is a value in the judge's wire form (kjudge/value.h): a list of the
outputs, each a tensor ({"kind": "tensor", "file" or "fd", "dtype",
"shape"}: .npy data in out_dir, or, with sealed, in a sealed memory file
sent with the reply; numpy has no bfloat16 or float8: such tensors are
written as the unsigned integer of the same width, and "dtype" names the
logical one), a Python number, bool, str or None by value, a list, tuple or
dict of values, or {"kind": "other", "type"} for anything else (numpy
arrays, complex numbers and tensors...).  With export, top-level tensors
stay on the device ("fd" and "device" leaves), or with keep in this worker
("kept" leaves), for take and figures.

A failed request replies {"ok": false, "phase", "exception", "error_type",
"error_msg", "sticky", "exits"}: the phase it failed in (import, init,
inputs, forward, outputs), the exception's qualified class and its name,
the message (its first line the exception itself, then the traceback
without this worker's frames), whether the error is a sticky CUDA one, and
whether the worker exits after the reply (a sticky error, SystemExit,
KeyboardInterrupt: the core then starts a fresh one).  Otherwise the worker
stays usable; an unknown op is such a failure.
"""
import argparse
import gc
import importlib
import io
import json
import os
import random
import socket
import sys
import time
import traceback

ERROR_MSG_LIMIT = 2000


def truncate(msg, limit=ERROR_MSG_LIMIT):
    if msg is None:
        return ""
    if len(msg) <= limit:
        return msg
    half = limit // 2
    return f"{msg[:half]}\n... [truncated {len(msg) - limit} chars] ...\n{msg[-half:]}"


class Channel:
    """Newline-delimited JSON over one file descriptor (a socketpair end)."""

    def __init__(self, fd):
        self.fd = fd
        self.buf = b""
        self.sock = None
        # Descriptors that came with the request being read (the judge
        # passes the candidate's exported outputs to the reference's worker
        # with a take request): the request's, closed by its handler.
        self.fds = []

    def _socket(self):
        """The channel as a socket object (its own duplicate of the
        descriptor), for the messages that carry descriptors."""
        if self.sock is None:
            self.sock = socket.socket(fileno=os.dup(self.fd))
        return self.sock

    def recv(self):
        while b"\n" not in self.buf:
            chunk, fds, _, _ = socket.recv_fds(self._socket(), 65536, self.FDS_PER_MSG)
            self.fds.extend(fds)
            if not chunk:
                return None
            self.buf += chunk
            if len(self.buf) > (16 << 20):
                raise RuntimeError("request longer than 16 MiB")
        line, self.buf = self.buf.split(b"\n", 1)
        return json.loads(line)

    def take_fds(self):
        fds, self.fds = self.fds, []
        return fds

    # SCM_RIGHTS carries at most 253 descriptors a message (SCM_MAX_FD).
    FDS_PER_MSG = 253

    def send(self, obj, fds=()):
        """One reply line; fds (sealed output files) go with its first bytes,
        253 a message, and are closed here once sent."""
        # Strings the code under test made may hold lone surrogates, which
        # neither UTF-8 nor the judge's JSON parser accept: replaced.
        data = (json.dumps(obj, allow_nan=False, default=str, ensure_ascii=False)
                + "\n").encode("utf-8", "replace")
        view = memoryview(data)
        fds = list(fds)
        try:
            while fds:
                batch, fds = fds[:self.FDS_PER_MSG], fds[self.FDS_PER_MSG:]
                # One byte with each batch but the last, so that every
                # batch has bytes of the line to come with.
                part = view[:1] if fds else view
                n = socket.send_fds(self._socket(), [part], batch)
                for fd in batch:
                    os.close(fd)
                view = view[n:]
            while view:
                n = os.write(self.fd, view)
                view = view[n:]
        finally:
            for fd in fds:
                os.close(fd)


class Request:
    """What one request asks and carries, apart from the worker's state that
    lives across requests: its id and nonce, whether its outputs go sealed
    (value.h), whether they stay on the device (kjudge/runner.h's export
    and keep), the descriptors that came with it and those its reply will
    carry."""

    def __init__(self, req=None, fds=None):
        req = req or {}
        self.id = req.get("id")
        self.nonce = req.get("nonce")
        self.sealed = bool(req.get("sealed"))
        self.export = int(req.get("export") or 0)
        self.keep = int(req.get("keep") or 0)
        self.fds = list(fds or [])
        self.reply_fds = []

    def close_fds(self):
        """Closes every descriptor no handler took or the reply did not carry."""
        for fd in self.fds + self.reply_fds:
            os.close(fd)
        self.fds, self.reply_fds = [], []


class Worker:
    def __init__(self):
        self.torch = None
        self.module = None
        self.module_task = None
        self.cls = None
        self.device = None
        self.numpy = None
        # What the worker is doing, for the reply of a request that fails.
        self.phase = ""
        # The request being answered (Request).
        self.rq = Request()
        # Outputs left on the device: the reference's kept outputs and the
        # copies it took of a candidate's, by number.
        self.kept = {}
        self.taken = {}
        # Numbers from a random start: a restarted worker's never name an
        # earlier one's outputs.
        self.kept_next = int.from_bytes(os.urandom(3), "little") << 6
        self._kept_inputs = ()
        self.model_params = None
        self.init_seed = 0
        self._profiled = set()

    # --- helpers -------------------------------------------------------------

    def _torch(self):
        if self.torch is None:
            import numpy
            import torch
            self.torch = torch
            self.numpy = numpy
        return self.torch

    def _sync(self):
        torch = self.torch
        if self.device is not None and self.device.type == "cuda":
            torch.cuda.synchronize()

    def _seed(self, seed):
        torch = self.torch
        random.seed(seed)
        self.numpy.random.seed(seed % (2 ** 32))
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)

    def _groups(self):
        mod = self.module
        if hasattr(mod, "get_input_groups"):
            return list(mod.get_input_groups())
        if hasattr(mod, "get_inputs"):
            return [mod.get_inputs()]
        raise AttributeError("the task module has neither get_input_groups() nor get_inputs()")

    def _inputs(self, case, seed, params=None):
        """The inputs of one case, made on the device directly.

        Seeding once and generating every group, as verify.py does, keeps
        `--seed 0` identical to the original; with the default device set to
        the attempt's device, torch.randn and friends allocate there and
        nothing large is made on the CPU first.  A case of a cases file is
        get_inputs(**params), one group.
        """
        self._seed(seed)
        if params is not None:
            return [self._to_device(x) for x in self._on_device(
                self.device, lambda: list(self.module.get_inputs(**params)))]
        groups = self._groups_on(self.device)
        if case >= len(groups):
            raise IndexError(f"case {case + 1} of {len(groups)}")
        return [self._to_device(x) for x in groups[case]]

    def _groups_on(self, device):
        """The task's input groups, made with `device` as torch's default."""
        return self._on_device(device, self._groups)

    def _on_device(self, device, fn):
        """fn(), with `device` as torch's default.  The device's context
        is left on return, as it was before: torch.set_default_device(prev)
        would leave a device mode in force for the rest of the process,
        through which every later torch call goes (on the H200 it made a
        3.5 us Triton call take 30 us: bench/gpu/fresh_inputs_gpu.py)."""
        with self.torch.device(device):
            return fn()

    def _check_case_params(self, task, cases):
        """A task with a cases file: its generators must take every case's
        parameters as keyword arguments (checked on their signatures, before
        anything runs: a task that does not is the task's error)."""
        import inspect
        if not isinstance(cases, list) or not cases or not all(isinstance(c, dict) for c in cases):
            raise ValueError("the judge sent no case parameters")
        if not hasattr(task, "get_inputs"):
            raise AttributeError("the task has a cases file but no get_inputs(): each case is "
                                 "get_inputs(**params)")
        if hasattr(task, "get_input_groups"):
            raise TypeError("the task has a cases file and get_input_groups(): with a cases "
                            "file each case is get_inputs(**params); remove one of the two")
        names = sorted({k for c in cases for k in c})
        for fname in ("get_inputs", "get_init_inputs"):
            fn = getattr(task, fname, None)
            if fn is None:
                continue
            try:
                sig = inspect.signature(fn)
            except (TypeError, ValueError):
                continue  # a builtin or such: its call will say
            for c in cases:
                try:
                    sig.bind(**c)
                except TypeError as e:
                    raise TypeError(
                        f"{fname}{sig} does not take the cases file's parameters "
                        f"({', '.join(names)}) as keyword arguments: {e}; write it as "
                        f"{fname}({', '.join(names)}) or {fname}(**params)") from None

    def _count_cases(self):
        """How many cases the task has, without making its inputs: a
        KernelBench-sized get_inputs() takes 16 s on the CPU.  Counted on
        the meta device, where tensors have a shape and no data; a generator
        that cannot run there is counted on the attempt's device."""
        try:
            return len(self._groups_on("meta"))
        except Exception:
            return len(self._groups_on(self.device))

    def _to_device(self, x):
        torch = self.torch
        if isinstance(x, torch.Tensor):
            return x.to(self.device)
        if isinstance(x, (list, tuple)):
            return type(x)(self._to_device(e) for e in x)
        return x

    def _model(self, init_seed, params=None):
        torch = self.torch
        self.phase = "inputs"
        kw = params or {}
        init = self.module_task.get_init_inputs(**kw) if hasattr(self.module_task, "get_init_inputs") else []
        torch.manual_seed(init_seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(init_seed)
        self.phase = "init"
        model = self.cls(*init)
        if hasattr(model, "to"):
            model = model.to(self.device)
        if hasattr(model, "eval"):
            model.eval()
        if self.compile:
            # The compiled baseline (--baseline compile): compiled at its
            # first call, so a compiler that fails fails that call.
            model = torch.compile(model)
        return model

    def describe(self, inputs):
        torch = self.torch
        out = []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                out.append({"type": "tensor", "shape": list(x.shape), "dtype": str(x.dtype)})
            elif isinstance(x, (int, float, bool, str)) or x is None:
                out.append({"type": "scalar", "value": x})
            else:
                out.append({"type": type(x).__name__})
        return out

    # Inputs of more bytes than this are remembered by a keyed fingerprint
    # rather than a copy (_snapshot).
    SNAP_COPY_MAX = 256 << 20
    SNAP_CHUNK = 1 << 23

    def _snapshot(self, inputs):
        """What _changed() needs to tell later whether the code under test
        wrote into the input tensors: a copy of each (compared bit for bit,
        NaN-safe; as cheap as reading the input once), or for one of more
        than SNAP_COPY_MAX bytes a fingerprint of its bits under a fresh
        random key (_Print): a copy of the largest tasks' inputs is a set's
        worth of the device's memory on each side (6.4 GB of 80 for
        KernelBench's level-1 elementwise problems), which left them no
        room on an 80 GB card.  A change that keeps the fingerprint must
        know the key, which a process that can read this one's memory could
        as well rewrite the copy with: the check guards against code that
        writes into its inputs, not against an adversary of this process."""
        torch = self.torch
        snap = []
        for x in inputs:
            if isinstance(x, torch.Tensor):
                if x.numel() * x.element_size() > self.SNAP_COPY_MAX:
                    snap.append(_Print(self, x))
                else:
                    snap.append(x.detach().clone())
            else:
                snap.append(repr(x))
        return snap

    def _fingerprint(self, x, weights):
        """The sum, modulo 2**64, of each 32-bit word (or byte) of x's bits
        times a weight of the key's (weights, cycled), each chunk's sum
        times an odd number of its own, so that moving words does not keep
        it either."""
        torch = self.torch
        flat = x.detach().contiguous().reshape(-1).view(torch.uint8)
        if flat.numel() % 4 == 0:
            flat = flat.view(torch.int32)
        total, n, ch = 0, flat.numel(), weights.numel()
        for i, off in enumerate(range(0, n, ch)):
            part = flat[off:off + ch].to(torch.int64)
            s = int((part * weights[:part.numel()]).sum())
            total = (total + (s % (1 << 64)) * (2 * i + 1)) % (1 << 64)
            del part
        return total

    def _changed(self, inputs, snap):
        torch = self.torch
        ints = {1: torch.uint8, 2: torch.int16, 4: torch.int32, 8: torch.int64}
        for x, s in zip(inputs, snap):
            if isinstance(s, _Print):
                if s.changed(self, x):
                    return True
            elif isinstance(x, torch.Tensor):
                if x.shape != s.shape or x.dtype != s.dtype:
                    return True
                if x.numel() == 0:
                    continue
                a, b = x.detach().contiguous(), s.contiguous()
                if a.element_size() in ints and not a.is_complex():
                    a, b = a.view(ints[a.element_size()]), b.view(ints[b.element_size()])
                if not torch.equal(a, b):
                    return True
            elif repr(x) != s:
                return True
        return False

    @staticmethod
    def _outputs(out):
        """forward's result as the list of its outputs (verify.py's rule: a
        tuple or list is several outputs, anything else one)."""
        return list(out) if isinstance(out, (list, tuple)) else [out]

    MAX_DEPTH = 32
    MAX_NODES = 100000

    # The most sealed output files one reply may carry (the judge takes up
    # to 4096 descriptors at once, the sandbox lets the worker hold 4096).
    MAX_REPLY_FDS = 2048

    def _save(self, outs, out_dir, tag):
        """The outputs in the judge's wire form: tensors as .npy data, in
        files of out_dir (named from tag), or, for a request that asks for
        them sealed (the candidate's), in memory files sealed against any
        change and sent with the reply (self.rq.reply_fds); everything else by
        value."""
        state = {"files": 0, "nodes": 0}
        return {"kind": "list",
                "items": [self._value(o, out_dir, tag, state, 1) for o in outs]}

    @staticmethod
    def _type_name(o):
        t = type(o)
        return t.__qualname__ if t.__module__ == "builtins" else f"{t.__module__}.{t.__qualname__}"

    def _value(self, o, out_dir, tag, state, depth):
        torch = self.torch
        state["nodes"] += 1
        if depth > self.MAX_DEPTH or state["nodes"] > self.MAX_NODES:
            raise ValueError(f"outputs nested deeper than {self.MAX_DEPTH} or with more than "
                             f"{self.MAX_NODES} values")
        if isinstance(o, torch.Tensor):
            self._plain(o)
            if o.is_complex():
                return {"kind": "other",
                        "type": str(o.dtype).replace("torch.", "") + " tensor"}
            if depth == 1 and self._stays(o):
                got = self._keep(o) if self.rq.keep else self._export(o)
                if got is not None:
                    return got
            name = f"{tag}_o{state['files']}.npy"
            state["files"] += 1
            if self.rq.sealed:
                return self._save_sealed(o, name)
            return self._save_tensor(o, os.path.join(out_dir, name), name)
        if isinstance(o, bool):
            return {"kind": "bool", "value": o}
        if isinstance(o, int):
            return {"kind": "int", "value": str(int(o))}
        if isinstance(o, float):
            return {"kind": "float", "value": float(o).hex()}
        if isinstance(o, str):
            return {"kind": "str", "value": o}
        if o is None:
            return {"kind": "none"}
        if isinstance(o, (list, tuple)):
            return {"kind": "tuple" if isinstance(o, tuple) else "list",
                    "items": [self._value(x, out_dir, tag, state, depth + 1) for x in o]}
        if isinstance(o, dict):
            return {"kind": "dict",
                    "items": [[self._value(k, out_dir, tag, state, depth + 1),
                               self._value(v, out_dir, tag, state, depth + 1)]
                              for k, v in o.items()]}
        return {"kind": "other", "type": self._type_name(o)}

    SEALS = ("F_SEAL_SEAL", "F_SEAL_SHRINK", "F_SEAL_GROW", "F_SEAL_WRITE")

    def _save_sealed(self, o, name):
        """One tensor as .npy in a new memory file, sealed so that nobody
        (this process included) can write, grow or shrink it any more; the
        descriptor goes with the reply."""
        import fcntl
        if len(self.rq.reply_fds) >= self.MAX_REPLY_FDS:
            raise RuntimeError(f"more than {self.MAX_REPLY_FDS} output tensors in one reply")
        fd = os.memfd_create(name, os.MFD_CLOEXEC | os.MFD_ALLOW_SEALING)
        try:
            desc = self._save_tensor(o, fd, name)
            seals = 0
            for s in self.SEALS:
                seals |= getattr(fcntl, s)
            fcntl.fcntl(fd, fcntl.F_ADD_SEALS, seals)
        except BaseException:
            os.close(fd)
            raise
        del desc["file"]
        desc["fd"] = len(self.rq.reply_fds)
        self.rq.reply_fds.append(fd)
        return desc

    # --- outputs left on the device (pipeline.c, "outputs compared on the
    # device"): exported by a side, kept and compared by the reference's -----

    EXPORT_MIN = 32 << 20      # KJ_DEVOUT_MIN
    FIGURE_CHUNK = 1 << 26     # elements per step of the figures

    def _stays(self, o):
        """Whether a top-level tensor output stays on the device: export 1
        (auto) those of CUDA of at least EXPORT_MIN bytes, 2 (all) every one
        of a float dtype the device rule covers."""
        torch = self.torch
        if not self.rq.export or o.numel() == 0:
            return False
        if o.dtype not in (torch.float32, torch.float16, torch.bfloat16):
            return False
        if self.rq.export == 2:
            return True
        return o.device.type == "cuda" and o.numel() * o.element_size() >= self.EXPORT_MIN

    def _keep(self, o):
        """The reference's output kept in this worker: with keep 1 the
        tensor itself where it is large and its memory is its own (nothing
        runs here before it is compared; one that shares memory with an
        input or another kept output is copied, and small ones always are);
        with keep 2 (a timed set's, kept through this side's own timed
        rounds, whose calls may hand out the same buffer again) a copy."""
        n = self.kept_next
        self.kept_next += 1
        x = o.detach()
        big = (self.rq.keep == 1 and x.is_contiguous()
               and x.numel() * x.element_size() >= self.EXPORT_MIN)
        if big:
            lo = x.data_ptr()
            hi = lo + x.untyped_storage().nbytes()
            for other in list(self.kept.values()) + list(self._kept_inputs):
                if not isinstance(other, self.torch.Tensor) or other.device != x.device:
                    continue
                olo = other.untyped_storage().data_ptr()
                ohi = olo + other.untyped_storage().nbytes()
                if lo < ohi and olo < hi:
                    big = False
                    break
        self.kept[n] = x.reshape(-1) if big else x.contiguous().clone().reshape(-1)
        return {"kind": "tensor", "kept": n, "dtype": str(o.dtype).replace("torch.", ""),
                "shape": list(o.shape)}

    def _export(self, o):
        """One output exported as a descriptor that goes with the reply: on
        CUDA a virtual-memory allocation of this process's (cuMemCreate,
        exportable as a POSIX descriptor) the output is copied into; on the
        CPU a memory file of its raw bytes.  Nothing here is sealed: only
        the copy the reference's worker takes counts."""
        torch = self.torch
        if len(self.rq.reply_fds) >= self.MAX_REPLY_FDS:
            raise RuntimeError(f"more than {self.MAX_REPLY_FDS} output tensors in one reply")
        flat = o.detach().contiguous().reshape(-1).view(torch.uint8)
        nbytes = flat.numel()
        if o.device.type == "cuda":
            vmm = _Vmm.get()
            dev = o.device.index if o.device.index is not None else torch.cuda.current_device()
            try:
                h, ptr, size = vmm.create(nbytes, dev)
            except RuntimeError:
                # The device's memory, held by torch's cache: given back,
                # then once more; else the output goes the host way (the
                # judge then judges the set through host memory).
                torch.cuda.empty_cache()
                try:
                    h, ptr, size = vmm.create(nbytes, dev)
                except RuntimeError:
                    return None
            try:
                view = torch.as_tensor(_CudaArray(ptr, size), device=o.device)
                view[:nbytes].copy_(flat)
                torch.cuda.current_stream(o.device).synchronize()
                del view
                fd = vmm.export(h)
            finally:
                vmm.free(h, ptr, size)
            mem = "cuda"
        else:
            fd = os.memfd_create("kjudge-out", os.MFD_CLOEXEC)
            try:
                os.ftruncate(fd, nbytes)
                self._pwrite_all(fd, memoryview(flat.numpy()), 0)
            except BaseException:
                os.close(fd)
                raise
            mem = "host"
        self.rq.reply_fds.append(fd)
        return {"kind": "tensor", "fd": len(self.rq.reply_fds) - 1, "device": mem,
                "dtype": str(o.dtype).replace("torch.", ""), "shape": list(o.shape)}

    def op_take(self, req):
        """Copy the outputs the judge passed (descriptors with this request)
        into memory of this worker's: from then on nothing the candidate does
        can change them.  One number per item, or None where the item could
        not be taken (the judge then judges through host memory)."""
        torch = self.torch
        fds = self.rq.fds
        self.rq.fds = []
        taken = []
        try:
            for it in req.get("items", []):
                try:
                    fd = fds[int(it["fd"])]
                    nbytes = int(it["nbytes"])
                    if it.get("device") == "cuda":
                        if self.device.type != "cuda":
                            raise RuntimeError("a CUDA output for a worker on the CPU")
                        mine = _Vmm.get().copy_in(torch, fd, nbytes, self.device)
                    else:
                        mine = self._copy_host(fd, nbytes)
                    n = self.kept_next
                    self.kept_next += 1
                    self.taken[n] = mine
                    taken.append(n)
                except Exception:  # the judge falls back; never a verdict here
                    taken.append(None)
        finally:
            for fd in fds:
                os.close(fd)
        return {"taken": taken}

    def _copy_host(self, fd, nbytes):
        """Read, never map: a file its writer cuts short meanwhile reads
        short (refused), where a mapping would take SIGBUS."""
        torch = self.torch
        if nbytes <= 0:
            raise ValueError("nothing to take")
        mine = torch.empty(nbytes, dtype=torch.uint8)
        view = memoryview(mine.numpy())
        off = 0
        while off < nbytes:
            n = os.preadv(fd, [view[off:off + (1 << 30)]], off)
            if n <= 0:
                raise ValueError("the memory file is shorter than the output")
            off += n
        return mine.to(self.device) if self.device.type != "cpu" else mine

    def op_figures(self, req):
        """Per item, the comparator's figures of a taken copy against a kept
        output (compare.h's rule: rel = |a - g| / max(|g|, t) in float32):
        the elements that are not finite on either side, the sum of rel (in
        float64) and its largest value.  The judge decides from them; the
        copies compared are dropped."""
        torch = self.torch
        out = []
        for it in req.get("items", []):
            try:
                a = self.taken.pop(int(it["taken"]))
                g = self.kept[int(it["kept"])]
                dt = getattr(torch, str(it["dtype"]))
                if g.dtype != dt or dt not in (torch.float32, torch.float16, torch.bfloat16):
                    raise ValueError("dtype")
                a = a.view(dt)
                n = int(it["numel"])
                if a.numel() != n or g.numel() != n:
                    raise ValueError("size")
                tf = torch.tensor(float(it["t"]), dtype=torch.float32).item()
                nonfinite, total, worst = 0, 0.0, 0.0
                for off in range(0, n, self.FIGURE_CHUNK):
                    gg = g[off:off + self.FIGURE_CHUNK].float()
                    aa = a[off:off + self.FIGURE_CHUNK].float()
                    nonfinite += int((~torch.isfinite(gg)).sum()) + int((~torch.isfinite(aa)).sum())
                    rel = (aa - gg).abs_().div_(gg.abs().clamp_min_(tf))
                    total += float(rel.sum(dtype=torch.float64))
                    worst = max(worst, float(rel.max()))
                    del gg, aa, rel
                ok = all(x == x and abs(x) != float("inf") for x in (total, worst))
                out.append({"n": n, "nonfinite": nonfinite,
                            "sum_rel": total if ok else None, "max_rel": worst if ok else None})
            except Exception as e:  # never a verdict here: the judge falls back
                out.append({"error": truncate(f"{type(e).__name__}: {e}", 300)})
        return {"figures": out}

    def op_drop(self, req):
        self.kept.clear()
        self.taken.clear()
        self._kept_inputs = ()
        if self.device is not None and self.device.type == "cuda":
            # What they held goes back to the device, for the other side.
            self.torch.cuda.empty_cache()
        return {}

    def _plain(self, o):
        """A tensor output must be a plain tensor (or a parameter): a
        subclass could do its work when it is first read, outside the timed
        region (a lazy tensor), or answer reads differently from its data."""
        if type(o) not in (self.torch.Tensor, self.torch.nn.Parameter):
            raise LazyOutput(f"forward returned a {type(o).__module__}.{type(o).__qualname__}, "
                             "a subclass of torch.Tensor: outputs must be plain tensors")

    def _save_tensor(self, o, path, name):
        """Write one tensor as .npy (at path, or into the descriptor path);
        its description.

        numpy has no bfloat16 or float8: those go out as the unsigned integer
        of the same width.  The bytes go straight from the tensor into the
        file by pwrite (_write_npy), never through numpy.save.
        """
        torch, np = self.torch, self.numpy
        storage = {torch.bfloat16: (np.uint16, torch.int16),
                   torch.bool: (np.bool_, torch.bool)}
        for dname in ("float8_e4m3fn", "float8_e5m2"):
            if hasattr(torch, dname):
                storage[getattr(torch, dname)] = (np.uint8, torch.uint8)
        src = o.detach()
        logical = str(src.dtype).replace("torch.", "")
        if src.dtype in storage:
            file_dt, view_t = storage[src.dtype]
            src = src.view(view_t)
        else:
            file_dt = torch.empty(0, dtype=src.dtype, device="cpu").numpy().dtype
        self._write_npy(path, src, np.dtype(file_dt))
        return {"kind": "tensor", "file": name, "dtype": logical, "shape": list(src.shape)}

    STAGE_BYTES = 64 << 20

    def _write_npy(self, path, src, dtype):
        """Write one tensor as a C-order .npy at path.

        The file is opened without truncation and cut to its final size, so
        an output written where one of the same size was before (the next
        input set of a case) reuses the pages tmpfs already has: allocating
        and zeroing fresh pages is what makes writing a large file slow
        (about 2.5 GB/s on the H200 machine, for 4 KiB pages).  From a GPU the
        bytes go through two pinned staging buffers: the copy of one chunk
        runs on a side stream while the previous one is written, at the speed
        of the file system rather than that of pageable copies (1.3 GB/s).
        """
        torch, np = self.torch, self.numpy
        head = io.BytesIO()
        meta = {"descr": np.lib.format.dtype_to_descr(dtype), "fortran_order": False,
                "shape": tuple(src.shape)}
        try:
            np.lib.format.write_array_header_1_0(head, meta)
        except ValueError:  # a header past 64 KiB: format 2.0
            np.lib.format.write_array_header_2_0(head, meta)
        head = head.getvalue()
        flat = src.contiguous().reshape(-1).view(torch.uint8) if src.numel() else None
        nbytes = src.numel() * src.element_size()
        own = not isinstance(path, int)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_CLOEXEC, 0o600) if own else path
        try:
            os.ftruncate(fd, len(head) + nbytes)
            if not own and nbytes >= self.STAGE_BYTES:
                # A memory file's pages allocated in one go before they are
                # written: on 4 KiB shmem pages a 6.4 GB output is written
                # at 3.1 GB/s instead of 2.3 (bench/gpu/vmm_probe.py on the
                # H200).  (Not for a path: where a file system cannot
                # allocate, glibc would write zeros first.)
                os.posix_fallocate(fd, 0, len(head) + nbytes)
            self._pwrite_all(fd, head, 0)
            if flat is None:
                return
            if flat.device.type != "cuda" or nbytes <= self.STAGE_BYTES // 8:
                self._pwrite_all(fd, memoryview(flat.cpu().numpy()), len(head))
                return
            if getattr(self, "_stage", None) is None:
                self._stage = [torch.empty(self.STAGE_BYTES, dtype=torch.uint8, device="cpu",
                                           pin_memory=True)
                               for _ in range(2)]
                self._stage_stream = torch.cuda.Stream(device=flat.device)
            stream, bufs = self._stage_stream, self._stage
            done = [torch.cuda.Event(), torch.cuda.Event()]
            stream.wait_stream(torch.cuda.current_stream(flat.device))
            chunks = [(off, min(self.STAGE_BYTES, nbytes - off))
                      for off in range(0, nbytes, self.STAGE_BYTES)]

            def fetch(i):
                off, n = chunks[i]
                with torch.cuda.stream(stream):
                    bufs[i % 2][:n].copy_(flat[off:off + n], non_blocking=True)
                    done[i % 2].record(stream)
            fetch(0)
            for i, (off, n) in enumerate(chunks):
                if i + 1 < len(chunks):
                    fetch(i + 1)
                done[i % 2].synchronize()
                self._pwrite_all(fd, memoryview(bufs[i % 2].numpy())[:n], len(head) + off)
        finally:
            if own:
                os.close(fd)

    @staticmethod
    def _pwrite_all(fd, data, off):
        view = memoryview(data).cast("B")
        while len(view):
            n = os.pwrite(fd, view[:1 << 30], off)
            view, off = view[n:], off + n

    def _aliases(self, outs, inputs):
        torch = self.torch
        found = []
        for k, o in enumerate(outs):
            if not isinstance(o, torch.Tensor) or o.numel() == 0:
                continue
            ostart = o.data_ptr()
            oend = ostart + o.numel() * o.element_size()
            for m, x in enumerate(inputs):
                if isinstance(x, torch.Tensor) and x.numel() and x.device == o.device:
                    xs = x.data_ptr()
                    xe = xs + x.numel() * x.element_size()
                    if ostart < xe and xs < oend:
                        found.append({"output": k, "input": m})
        return found

    # --- requests ---------------------------------------------------------------

    @staticmethod
    def _bytecode(prefix, write):
        """Where compiled bytecode is read from and whether it is written.

        Some installs ship no bytecode for torch (uv does not compile it, and
        the process runs with PYTHONDONTWRITEBYTECODE): every start then
        compiles torch's Python anew, 3 of the 5 s an import takes on the H200
        machine.  There the judge's cache holds a bytecode tree
        (sys.pycache_prefix) that only the reference worker writes, and only
        while it imports torch and Triton; the code under test never writes
        bytecode.  An install that has its own bytecode is left as it is.
        """
        import importlib.util
        spec = importlib.util.find_spec("torch") if prefix else None
        if spec is not None and spec.origin:
            own = os.path.join(os.path.dirname(spec.origin), "__pycache__")
            if not os.path.isdir(own):
                sys.pycache_prefix = prefix
        sys.dont_write_bytecode = not (write and sys.pycache_prefix)

    def op_hello(self, req):
        self._bytecode(req.get("pycache"), bool(req.get("write_bytecode")))
        torch = self._torch()
        info = {"python": sys.version.split()[0], "torch": torch.__version__,
                "cuda_available": torch.cuda.is_available(),
                "cuda_count": (torch.cuda.device_count()
                               if torch.cuda.is_available() else 0)}
        # The version without importing Triton: whether its kernels are
        # interpreted is fixed when it is imported, after the device is known.
        try:
            from importlib import metadata
            info["triton"] = metadata.version("triton")
        except Exception:
            info["triton"] = None
        if torch.cuda.is_available():
            p = torch.cuda.get_device_properties(0)
            info["device_name"] = p.name
            info["cuda"] = torch.version.cuda
            info.update(self._gpu_clocks())
        self._arm()
        ahead = req.get("device")
        if isinstance(ahead, str) and ahead.startswith("cuda") and torch.cuda.is_available():
            # Started ahead of its attempt (serve's warm pairs): the CUDA
            # context, and for the candidate CUPTI's first start, made
            # while the pair waits.  Best effort: what fails here is done
            # again, or fails, where it is needed.
            try:
                self.device = torch.device(ahead)
                torch.empty(1, device=self.device).fill_(0)
                torch.cuda.synchronize(self.device)
                if req.get("prime_profiler"):
                    self._prime_profiler()
            except Exception:
                pass
            self.device = None
        return info

    @staticmethod
    def _gpu_clocks():
        """Driver and clocks, recorded with every figure (best effort:
        nvidia-smi may be missing)."""
        import subprocess
        try:
            out = subprocess.run(
                ["nvidia-smi", "--id=0", "--format=csv,noheader,nounits",
                 "--query-gpu=driver_version,clocks.sm,clocks.max.sm,clocks.mem"],
                capture_output=True, text=True, timeout=10).stdout.strip()
            drv, sm, sm_max, mem = [v.strip() for v in out.split(",")]
            return {"driver": drv, "sm_clock_mhz": int(sm), "max_sm_clock_mhz": int(sm_max),
                    "mem_clock_mhz": int(mem)}
        except Exception:
            return {}

    @staticmethod
    def _bytecode_written(name):
        """Whether the bytecode of package name's __init__ is in the tree
        already (an earlier start wrote it, and the rest its import
        needs): then the reference need not import it only to write it
        (Triton: half a second of every start)."""
        try:
            import importlib.util
            spec = importlib.util.find_spec(name)
            origin = spec.origin if spec else None
            return bool(origin) and os.path.exists(importlib.util.cache_from_source(origin))
        except Exception:
            return False

    def op_load_task(self, req):
        """Import the task module (for a candidate: the judge's view of it,
        without the reference class) and count its cases."""
        torch = self._torch()
        self.device = torch.device(req.get("device", "cpu"))
        # Without a GPU, Triton kernels can only run in Triton's interpreter;
        # it is chosen when a kernel is decorated, i.e. at import, below.
        if self.device.type == "cpu":
            os.environ.setdefault("TRITON_INTERPRET", "1")
        if not sys.dont_write_bytecode:
            if not self._bytecode_written("triton"):
                try:  # its bytecode too, for the next start
                    import triton  # noqa: F401
                except Exception:
                    pass
            sys.dont_write_bytecode = True
        d = req["dir"]
        if d not in sys.path:
            sys.path.insert(0, d)
        self.phase = "import"
        self.task_dir = d
        task = self._import(req["task_module"])
        self.module_task = task
        self.module = task
        self.phase = "inputs"
        self._seed(req.get("seed", 0))
        if req.get("case_params") is not None:
            self._check_case_params(task, req["case_params"])
            return {"cases": len(req["case_params"])}
        # Only the reference's count is the judge's: counting on the meta
        # device imports sympy (torch's references), half a second of CPU.
        if req.get("count") is False:
            return {}
        return {"cases": self._count_cases()}

    task_dir = None
    compile = False

    def _import(self, name):
        """A module of the task's directory by its file's stem.  An op name
        may hold a dot ('v1.2_torch', a file stem the judge accepts), which
        import_module would take for a package: such a module is loaded
        from its file, under its own name."""
        if "." not in name:
            return importlib.import_module(name)
        if name in sys.modules:
            return sys.modules[name]
        from importlib import util
        spec = util.spec_from_file_location(
            name, os.path.join(self.task_dir, name + ".py"))
        if spec is None or spec.loader is None:
            raise ImportError(f"no module named '{name}'")
        mod = util.module_from_spec(spec)
        sys.modules[name] = mod
        try:
            spec.loader.exec_module(mod)
        except BaseException:
            del sys.modules[name]
            raise
        return mod

    def op_load(self, req):
        """Import the module under test, find its class and build the one
        model instance every call of the attempt uses (so state kept across
        calls, a count of calls or work done at construction is exercised by
        verify's input sets and benchmark's timed ones alike).  The model is
        built before any of its inputs exist."""
        self.phase = "import"
        if req.get("ext_builds"):
            # Before the first line of the candidate runs.
            self._judge_builds(req["ext_builds"])
        if req.get("kernels_disabled"):
            # Before the first line of the candidate runs.
            self._disable_kernels()
        self.profile = bool(req.get("profile_kernels")) and self.device.type == "cuda"
        self.compile = bool(req.get("compile"))
        if self.profile:
            self._prime_profiler()
        if req["module"] == self.module_task.__name__:
            mod = self.module_task
        else:
            mod = self._import(req["module"])
        cls = getattr(mod, req["cls"], None)
        if cls is None:
            raise AttributeError(f"module '{req['module']}' has no class '{req['cls']}'")
        self.cls = cls
        self.init_seed = int(req.get("init_seed", 0))
        params = req.get("params")
        self.model = self._model(self.init_seed, params)
        self.model_params = self._params_key(params)
        return {}

    @staticmethod
    def _params_key(params):
        return None if params is None else json.dumps(params, sort_keys=True)

    def _ensure_model(self, params):
        """The model of a case's parameters: the one built for them, or a
        new one (get_init_inputs(**params), the same init seed) when the
        previous case had others.  Only tasks with a cases file have any."""
        key = self._params_key(params)
        if key == self.model_params:
            return
        self.model = None
        self.model_params = "(being built)"
        self.model = self._model(self.init_seed, params)
        self.model_params = key

    # --- extensions built by the judge ----------------------------------------------

    chan = None
    _ext_root = None

    def _judge_builds(self, root):
        """Have the judge build the torch extensions (load_inline, load)
        whose build directory is in root (the candidate's TORCH_EXTENSIONS_DIR,
        the same path in every sandbox): torch.utils.cpp_extension's
        _run_ninja_build, which torch calls after writing the sources and
        build.ninja there, asks the judge first (a "build" line with the
        request's nonce, lib/runner/extcache.c); when the judge answers that
        the directory holds the built extension (from its cache, checked,
        or built in a sandbox of its own), torch loads it without running
        ninja.  Otherwise ninja runs here, as it would without the judge.

        The module is patched when it is imported (it is not, with torch, and
        importing it costs half a second), through a finder at the head of
        sys.meta_path.  The candidate can undo all this: then it builds by
        itself, as slowly as without the judge; the cache is the judge's
        alone, and what a candidate asks for is built from its own inputs.
        """
        self._ext_root = os.path.abspath(root)
        mod = sys.modules.get("torch.utils.cpp_extension")
        if mod is not None:
            self._wrap_ninja(mod)
            return
        worker = self

        class _Finder:
            @staticmethod
            def find_spec(name, path=None, target=None):
                if name != "torch.utils.cpp_extension":
                    return None
                import importlib.machinery
                spec = importlib.machinery.PathFinder.find_spec(name, path)
                if spec is None or spec.loader is None:
                    return spec
                run = spec.loader.exec_module

                def exec_module(module):
                    run(module)
                    worker._wrap_ninja(module)
                spec.loader.exec_module = exec_module
                return spec

            @staticmethod
            def invalidate_caches():
                pass
        sys.meta_path.insert(0, _Finder)

    def _wrap_ninja(self, mod):
        run_ninja = getattr(mod, "_run_ninja_build", None)
        if run_ninja is None or getattr(run_ninja, "_kjudge", False):
            return
        worker = self

        def _run_ninja_build(build_directory, verbose, error_prefix):
            ans = worker._judge_build(build_directory)
            if ans.get("built"):
                return None
            if ans.get("failed"):
                # As torch's own ninja would have failed, with its output.
                raise RuntimeError(f"{error_prefix}: {ans.get('why', '')}")
            return run_ninja(build_directory, verbose, error_prefix)
        _run_ninja_build._kjudge = True
        mod._run_ninja_build = _run_ninja_build

    def _judge_build(self, build_directory):
        """Ask the judge to build build_directory: its answer, {"built":
        True} when the directory holds the build, {"failed": True, "why":
        output} when the build failed where the judge ran it, else ninja is
        to run here ({} when the judge is not asked: a directory elsewhere,
        or sources outside it, as load() may name, which the judge's
        builder does not see)."""
        d = os.path.abspath(build_directory)
        if self.chan is None or self._ext_root is None or os.path.dirname(d) != self._ext_root:
            return {}
        try:
            with open(os.path.join(d, "build.ninja")) as f:
                for line in f:
                    if not line.startswith("build ") or ":" not in line:
                        continue
                    words = line.split(":", 1)[1].split()
                    if words and words[0].endswith("compile") and any(
                            not w.startswith(d + "/") for w in words[1:] if w != "|"):
                        return {}
        except OSError:
            return {}
        self.chan.send({"nonce": self.rq.nonce, "build": os.path.basename(d)})
        return self.chan.recv() or {}

    def op_build(self, req):
        """The builder (a worker the judge starts in a sandbox of its own,
        whose one writable directory is the build's stage): ninja in dir."""
        import subprocess
        t0 = time.perf_counter()
        try:
            p = subprocess.run(["ninja", "-v"], cwd=req["dir"], stdout=subprocess.PIPE,
                               stderr=subprocess.STDOUT, timeout=float(req.get("timeout", 900)))
            rc, out = p.returncode, p.stdout
        except subprocess.TimeoutExpired as e:
            rc, out = -1, (e.output or b"") + b"\n(the build timed out)"
        return {"rc": rc, "output": out.decode("utf-8", "replace")[-3000:],
                "build_s": time.perf_counter() - t0}

    # --- the anti-cheat layers (eval) -------------------------------------------

    launches_suppressed = 0
    kernels_disabled = False
    profile = False

    def _disable_kernels(self):
        """Make every Triton kernel launch of this process a no-op, before
        the candidate is imported; count them (launches_suppressed).

        Every `kernel[grid](...)` of Triton 3.x goes through
        KernelInterface.__getitem__ -> <kind>.run(grid=..., warmup=False):
        - compiled (GPU; Triton 3.6 and the installed 3.x alike):
          JITFunction.run compiles (or finds) a CompiledKernel and calls
          kernel.run(...), which is the launcher that CompiledKernel
          ._init_handles made, an instance of the active driver's
          launcher_cls (triton.backends.nvidia.driver.CudaLauncher,
          .amd.driver.HIPLauncher); CompiledKernel[grid](...) (a kernel
          from warmup() or triton.compile) calls the same launcher, and the
          launcher calls its own `launch` (the C launch function).  Each
          launcher class's __call__ is replaced by a no-op that counts, and
          its __init__ replaces the instance's `launch` by the same no-op,
          so a candidate that calls the launcher or its launch function
          directly launches nothing either.  Compilation still happens
          (a kernel that does not compile still fails to).
        - interpreted (TRITON_INTERPRET=1, how Triton runs on the CPU
          here): InterpretedFunction.run builds a
          triton.runtime.interpreter.GridExecutor and calls it; its
          __call__ (which copies the arguments to the host, runs the
          program for every grid point and copies them back) is replaced
          by the counting no-op.
        Autotuned and heuristic kernels (Autotuner.run, Heuristics.run)
        end in the same calls.  The replaced methods join the harness's
        guard: a candidate that puts the originals back is HarnessTampered.
        Where the path the process uses cannot be patched, the load fails:
        no run pretends its kernels were disabled.
        """
        import importlib as il
        import pkgutil
        try:
            import triton  # noqa: F401
            from triton import knobs
            interpret = bool(knobs.runtime.interpret)
        except Exception as e:
            raise RuntimeError(f"kjudge: cannot disable Triton launches (Triton does not "
                               f"import: {e})") from None
        w = self
        self.kernels_disabled = True
        self.launches_suppressed = 0

        def noop_launch(*args, **kwargs):
            w.launches_suppressed += 1

        def noop_call(self_, *args, **kwargs):
            w.launches_suppressed += 1

        guard = []
        try:
            from triton.runtime import interpreter
            interpreter.GridExecutor.__call__ = noop_call
            guard.append((interpreter.GridExecutor, "__call__", noop_call))
        except Exception:
            if interpret:
                raise RuntimeError("kjudge: cannot disable Triton launches: the interpreter's "
                                   "GridExecutor is not there") from None
        import triton.backends as backends
        launchers = 0
        for m in pkgutil.iter_modules(backends.__path__):
            try:
                drv = il.import_module(f"triton.backends.{m.name}.driver")
            except Exception:
                continue
            for name, cls in list(vars(drv).items()):
                if not (isinstance(cls, type) and name.endswith("Launcher")
                        and "__call__" in vars(cls)):
                    continue
                orig_init = cls.__init__

                def init(self_, *args, _orig=orig_init, **kwargs):
                    _orig(self_, *args, **kwargs)
                    self_.launch = noop_launch
                cls.__init__ = init
                cls.__call__ = noop_call
                guard += [(cls, "__init__", init), (cls, "__call__", noop_call)]
                launchers += 1
        if not interpret and not launchers:
            raise RuntimeError("kjudge: cannot disable Triton launches: no launcher class "
                               "found in triton.backends.*.driver")
        self._guard = list(getattr(self, "_guard", [])) + guard

    def _prime_profiler(self):
        """Start the profiler once at load, before the candidate is
        imported: CUPTI's first start takes seconds (3.5 s on the H200),
        and here it overlaps other attempts' timed phases instead of
        holding the device in the profiled forward.  Best effort: a
        profiler that cannot start here fails in _profile_forward, where
        the layer records it.  Once a worker: a warm worker's hello may have
        started it already."""
        if getattr(self, "_profiler_primed", False):
            return
        self._profiler_primed = True
        torch = self.torch
        try:
            from torch.profiler import ProfilerActivity, profile
            if ProfilerActivity.CUDA not in torch.profiler.supported_activities():
                return
            x = torch.empty(1, device=self.device)
            with profile(activities=[ProfilerActivity.CUDA]):
                x.fill_(0)
                torch.cuda.synchronize()
        except Exception:
            pass

    def _profile_forward(self, inputs):
        """The names of the GPU kernels one more forward on `inputs` runs,
        under torch.profiler with CUDA activity only (CUPTI): the device
        events of the trace (kernels, and the copies and sets torch
        records beside them), distinct, in order, at most 200 of at most
        200 characters.  Only on CUDA (the judge sends profile_kernels
        whatever the device; on the CPU the layer does not apply and
        nothing is profiled).  The names are this process's claim."""
        torch = self.torch
        from torch.profiler import ProfilerActivity, profile
        if ProfilerActivity.CUDA not in torch.profiler.supported_activities():
            return []
        self._sync()
        with torch.no_grad(), profile(activities=[ProfilerActivity.CUDA]) as prof:
            self.model(*inputs)
            torch.cuda.synchronize()
        self._check_harness()
        cuda = torch.autograd.DeviceType.CUDA
        names, seen = [], set()
        for ev in prof.events():
            if getattr(ev, "device_type", None) != cuda:
                continue
            n = str(ev.name)[:200]
            if n and n not in seen:
                seen.add(n)
                names.append(n)
                if len(names) >= 200:
                    break
        return names

    def _phases(self):
        """A stopwatch for the phases of one request: lap(name) adds the
        time since the previous lap (after the device is idle) to name.
        The judge adds them up into its timings record."""
        laps, last = {}, [time.perf_counter()]

        def lap(name):
            self._sync()
            now = time.perf_counter()
            laps[name] = laps.get(name, 0.0) + now - last[0]
            last[0] = now
        return laps, lap

    def op_run(self, req):
        torch = self.torch
        laps, lap = self._phases()
        self.launches_suppressed = 0
        self._ensure_model(req.get("params"))
        self.phase = "inputs"
        inputs = self._inputs(req["case"], req["seed"], req.get("params"))
        desc = self.describe(inputs)
        before = self._snapshot(inputs)
        lap("inputs_s")
        self.phase = "forward"
        with torch.no_grad():
            out = self.model(*inputs)
        lap("forward_s")
        self._check_harness()
        self.phase = "outputs"
        outs = self._outputs(out)
        aliases = self._aliases(outs, inputs)
        changed = self._changed(inputs, before)
        del before
        lap("checks_s")
        self._kept_inputs = inputs if self.rq.keep else ()
        try:
            saved = self._save(outs, req["out_dir"], req["tag"])
        finally:
            self._kept_inputs = ()
        lap("write_s")
        res = {"outputs": saved, "input_desc": desc, "inputs_changed": changed,
               "aliases": aliases, "phases": laps}
        if self.profile and req["case"] not in self._profiled:
            # One more forward, after the checked one and its outputs are
            # sealed: what it returns is dropped.
            self.phase = "forward"
            del out, outs
            res["kernel_names"] = self._profile_forward(inputs)
            self._profiled.add(req["case"])
            lap("profile_s")
        if self.kernels_disabled:
            res["launches_suppressed"] = self.launches_suppressed
        return res

    # --- timing ---------------------------------------------------------------

    def op_device(self, req):
        """The device's limits, measured where the reference runs (only the
        task's code is in this process): the bandwidth of a large
        device-to-device copy (bytes read plus written, the best of three)
        and the time of the smallest kernel, launched and finished (on the
        CPU, of the smallest operator: the fastest of 200, timed by the
        native harness).  The judge takes a timed call faster than what these
        allow for its outputs as impossible."""
        torch = self.torch
        cuda = self.device.type == "cuda"
        n = (1 << 30) if cuda else (64 << 20)
        src = torch.empty(n // 4, dtype=torch.float32, device=self.device).fill_(1.0)
        dst = torch.empty_like(src)
        best = None
        for _ in range(4):
            if cuda:
                a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                a.record()
                dst.copy_(src)
                b.record()
                b.synchronize()
                s_ = a.elapsed_time(b) / 1e3
            else:
                t0 = time.perf_counter()
                dst.copy_(src)
                s_ = time.perf_counter() - t0
            best = s_ if best is None else min(best, s_)
        gbs = 2 * n / best / 1e9
        del src, dst
        # The smallest kernel (on the CPU, the smallest operator), timed by
        # the same native harness as every timed call: the fastest of 200,
        # after 200 more that bring the clocks up.
        x = torch.empty(1, device=self.device)
        self._timer_ready()
        if getattr(self, "_thr", None) is None:
            self._thr = self._idle_sync_ms()
        kjt = self._kjt
        stream = torch.cuda.current_stream(self.device).cuda_stream if cuda else None
        for _ in range(200):  # clocks up first: an idle GPU starts slow
            x.fill_(0)
        if cuda:
            torch.cuda.synchronize()
        kjt.kjt_reset()
        for _ in range(200):
            if kjt.kjt_begin(stream) != 0:
                raise RuntimeError("the native timer failed to start a sample")
            x.fill_(0)
            if kjt.kjt_end(stream, self._thr) != 0:
                raise RuntimeError("the native timer failed to end a sample")
        import ctypes
        ms, esc = ctypes.c_double(), ctypes.c_double()
        lat = []
        for i in range(kjt.kjt_count()):
            kjt.kjt_sample(i, ctypes.byref(ms), ctypes.byref(esc))
            lat.append(ms.value)
        # The fastest: a floor must hold for every honest call.
        launch = min(lat) if lat else 0.0
        return {"copy_gbs": gbs, "launch_ms": launch}

    # The native functions every timed call goes through.
    _KJT_GUARDED = ("kjt_begin", "kjt_end", "kjt_sample", "kjt_l2_reset", "kjt_l2_check",
                    "kjt_qbegin", "kjt_qend", "kjt_qfinish")

    def _arm(self):
        """Load the native timer and note what the timed loop relies on, at
        hello: before any task or candidate code is imported, so a change
        its import makes is seen at its first call (the judge's clock checks
        every figure anyway: this raises the bar, it does not decide)."""
        import ctypes
        torch = self.torch
        if getattr(self, "_kjt", None) is None:
            lib = ctypes.CDLL(os.path.join(os.path.dirname(OWN_FILE), "kjudge_timer.so"))
            for name, res, args in (("kjt_init", ctypes.c_int, [ctypes.c_int]),
                                    ("kjt_begin", ctypes.c_int, [ctypes.c_void_p]),
                                    ("kjt_end", ctypes.c_int, [ctypes.c_void_p, ctypes.c_double]),
                                    ("kjt_qbegin", ctypes.c_int, [ctypes.c_void_p]),
                                    ("kjt_qend", ctypes.c_int, [ctypes.c_void_p]),
                                    ("kjt_qfinish", ctypes.c_int, [ctypes.c_double]),
                                    ("kjt_count", ctypes.c_int, []),
                                    ("kjt_sample", ctypes.c_int,
                                     [ctypes.c_int, ctypes.POINTER(ctypes.c_double),
                                      ctypes.POINTER(ctypes.c_double)]),
                                    ("kjt_reset", None, []),
                                    ("kjt_l2_reset", ctypes.c_int, [ctypes.c_void_p]),
                                    ("kjt_l2_check", ctypes.c_int, [ctypes.c_void_p])):
                fn = getattr(lib, name)
                fn.restype, fn.argtypes = res, args
            self._kjt = lib
            self._kjt_fns = tuple(getattr(lib, n) for n in self._KJT_GUARDED)
            self._kjt_ready = False
        self._guard = [(Worker, name, Worker.__dict__[name]) for name in
                       ("op_time_round", "_timed_call", "_queued_call", "_l2_after",
                        "_check_harness", "_save", "_value",
                        "_save_tensor", "_save_sealed", "_plain", "_write_npy", "_outputs",
                        "_changed", "_snapshot", "_fingerprint", "_same_outputs", "_equal_flag",
                        "_queue_budget", "_copies",
                        "_pwrite_all", "_stays", "_export")]
        self._guard += [(_Print, n, _Print.__dict__[n]) for n in ("__init__", "changed")]
        # The write path of the outputs: what the judge compares is what
        # these functions put into the memory files.  (memfd_create and
        # fcntl's seals need no guard: the judge maps a file only after
        # F_GET_SEALS shows it sealed, tests/candidates/unsealed_memfd.)
        self._guard += [(os, n, getattr(os, n)) for n in ("pwrite", "open", "ftruncate",
                                                          "posix_fallocate")]
        self._guard += [(Channel, "send", Channel.__dict__["send"])]
        # The functions a timed round's matching calls, taken now, before
        # any task or candidate code runs: called through these, a
        # replacement of the module's or the class's attribute (by the
        # code under test, or a thread of its own between the last check
        # and the matching) is not what runs.
        self._fn_equal, self._fn_eq, self._fn_all = torch.equal, torch.eq, torch.Tensor.all
        self._fn_and, self._fn_stack = torch.logical_and, torch.stack
        self._fn_tolist, self._fn_clone = torch.Tensor.tolist, torch.Tensor.clone
        self._guard += [(torch.cuda, "synchronize", torch.cuda.synchronize),
                        (torch, "equal", torch.equal), (torch.Tensor, "clone", torch.Tensor.clone),
                        (torch, "eq", torch.eq), (torch.Tensor, "all", torch.Tensor.all),
                        (torch, "logical_and", torch.logical_and), (torch, "stack", torch.stack),
                        (torch.Tensor, "tolist", torch.Tensor.tolist),
                        (torch.Tensor, "sum", torch.Tensor.sum)]

    def _check_harness(self):
        """After every call of the code under test: the objects the harness
        relies on are still the ones it started with."""
        for owner, name, orig in self._guard:
            if getattr(owner, name, None) is not orig and owner.__dict__.get(name) is not orig:
                raise HarnessTampered(f"{getattr(owner, '__name__', owner)}.{name} was replaced")
        if tuple(getattr(self._kjt, n) for n in self._KJT_GUARDED) != self._kjt_fns:
            raise HarnessTampered("the native timer's functions were replaced")

    def _timer_ready(self):
        if not self._kjt_ready:
            rc = self._kjt.kjt_init(1 if self.device.type == "cuda" else 0)
            if rc != 0:
                raise RuntimeError(f"the native timer cannot start (step {rc})")
            self._kjt_ready = True

    def _idle_sync_ms(self):
        """The latency of a device-wide synchronize with nothing to wait for
        (the 99th percentile of 50): the threshold above which time found
        after a call's stop event is work it left behind."""
        torch = self.torch
        if self.device.type != "cuda":
            return 0.0
        torch.cuda.synchronize()
        lat = []
        for _ in range(50):
            t0 = time.perf_counter()
            torch.cuda.synchronize()
            lat.append((time.perf_counter() - t0) * 1e3)
        lat.sort()
        return max(3 * lat[int(0.99 * (len(lat) - 1))], 0.005)

    def _timed_call(self, inputs, flush, stream, thr, made=None):
        kjt = self._kjt
        # No persisting L2 left by an earlier call (kjudge_timer.c), before
        # the flush, so that the flush evicts what was kept; no-ops on the
        # CPU and where the device has none.
        kjt.kjt_l2_reset(stream)
        if flush is not None:
            flush.fill_(0)
        if kjt.kjt_begin(stream) != 0:
            raise RuntimeError("the native timer failed to start a sample")
        out = self.model(*inputs) if made is None else made
        if kjt.kjt_end(stream, thr) != 0:
            raise RuntimeError("the native timer failed to end a sample")
        self._l2_after(stream)
        return out

    def _queued_call(self, inputs, flush, stream, made=None):
        """A call of a queued round: the flush, the call and its events put
        on the stream with no wait (kjt_qbegin/kjt_qend); the round's one
        wait is kjt_qfinish's.  The persisting-L2 state was reset at the
        round's start and is checked after every call, as in _timed_call:
        a call that sets it fails, so the next one finds it clear."""
        kjt = self._kjt
        if flush is not None:
            flush.fill_(0)
        if kjt.kjt_qbegin(stream) != 0:
            raise RuntimeError("the native timer failed to start a queued sample")
        out = self.model(*inputs) if made is None else made
        if kjt.kjt_qend(stream) != 0:
            raise RuntimeError("the native timer failed to end a queued sample")
        self._l2_after(stream)
        return out

    def _l2_after(self, stream):
        l2 = self._kjt.kjt_l2_check(stream)
        if l2 > 0:
            raise L2PersistenceSet(
                "the call left " + ("the persisting-L2 limit (cudaLimitPersistingL2CacheSize) set"
                                    if l2 == 1 else "an access policy window on the timed stream")
                + ": data kept in L2 across the flush between timed calls")
        if l2 < 0:
            raise RuntimeError("CUDA: the driver could not be asked for the persisting-L2 limit "
                               "after the call")

    def _queue_budget(self):
        """The bytes of output copies a queued round may hold before it
        matches them (and waits): a quarter of the device's free memory, at
        most 1 GiB; 256 MiB on the CPU."""
        torch = self.torch
        if self.device.type != "cuda":
            return 256 << 20
        free, _total = torch.cuda.mem_get_info(self.device)
        return min(free // 4, 1 << 30)

    def _copies(self, outs):
        """A call's outputs, each tensor copied (on its stream)."""
        torch = self.torch
        return [self._fn_clone(o.detach()) if isinstance(o, torch.Tensor) else o for o in outs]

    def _equal_flag(self, prev, outs):
        """_same_outputs as a flag on the outputs' device, with no wait: a
        0-dim bool tensor, or None where the two are not tensors of one
        shape, dtype and device (_same_outputs decides those)."""
        torch = self.torch
        if not outs or len(prev) != len(outs):
            return None
        flag = None
        for a, b in zip(prev, outs):
            if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)) or \
                    a.shape != b.shape or a.dtype != b.dtype or a.device != b.device:
                return None
            e = self._fn_all(self._fn_eq(a, b))
            flag = e if flag is None else self._fn_and(flag, e)
        return flag

    def _same_outputs(self, prev, outs):
        """Two calls' outputs equal bit for bit (tensors of one shape and
        dtype, torch.equal; other values of one type and equal)."""
        torch = self.torch
        return len(prev) == len(outs) and all(
            (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)
             and a.shape == b.shape and a.dtype == b.dtype and self._fn_equal(a, b))
            or (not isinstance(a, torch.Tensor) and not isinstance(b, torch.Tensor)
                and type(a) is type(b) and a == b)
            for a, b in zip(prev, outs))

    def op_time_round(self, req):
        """A timed round (_time_round) with Python's cyclic garbage collector
        off, as timeit runs: a collection falls wherever allocations
        trigger it, inside a timed call as readily as between two, and
        takes milliseconds on a large heap; each side's worker has a heap
        of its own, so its pauses would differ between the sides of an
        A/A.  Objects are still freed when their last reference goes;
        cycles wait for the next untimed request."""
        was = gc.isenabled()
        gc.disable()
        try:
            return self._time_round(req)
        finally:
            if was:
                gc.enable()

    def _time_round(self, req):
        """One round of timed calls on one case, each on the input set the
        schedule names (sets[k] made from seeds[k]; the judge keeps the
        golden outputs of each).

        Warm-up calls run first, untimed, on set 0.  Each timed call is
        preceded by a cache flush (a buffer of flush_bytes written on the
        device) and bracketed by the native timer (kjudge_timer.c): events on
        the current stream, then a timed device-wide synchronize that adds
        work left on other streams.  After every call the harness's objects
        are checked, and the outputs must be plain tensors (a subclass could
        do its work when it is first read, outside the timed region).

        With check, every call's outputs are compared bit for bit with the
        distinct ones of its set kept so far; each new distinct set is
        written for the judge (`distinct_outputs`) and `calls` maps each call
        to its set and distinct output.  Distinct outputs are numbered per set
        across the case's rounds: `known` (per set) is how many of them the
        judge has checked, so numbers below it name an output of an earlier
        round, which the first of each set is kept for (a deterministic
        kernel's later rounds send nothing new); all zeros, or a new case,
        forgets them.  The inputs are compared with copies after the round.

        With probe ({"seed", "at", "set"}), call `at` runs on a set made
        from `seed` just before it and dropped after it: inputs the code
        under test has never seen (nor could have found in this worker
        before that call), whose outputs are those of set `set`.

        With empty (the reference's worker), each timed call returns the
        outputs the model made for its set before the round, untimed, and
        everything around the call is as in any round: what the round
        costs is the harness's cost, which the judge takes off both sides'
        rounds.

        With queued (never with probe), the calls are put on the device's
        stream one after another with no wait between them (_queued_call),
        and the round's one wait comes after the last: the device runs the
        calls back to back, so the host's work around each call (Python,
        the checks) is hidden behind the device's, and the judge's clock
        over the round measures the device's work.  Each call's outputs are
        copied on the stream after its stop event (a call may write the
        next call's outputs into the same memory) and matched after the
        wait, in call order; where the copies held would pass the round's
        budget (_queue_budget) they are matched at once, which waits, and
        a call's outputs larger than the budget are matched uncopied.  On
        the CPU nothing is queued: the same loop, the copies and the
        matching after.
        """
        torch = self.torch
        laps, lap = self._phases()
        self.launches_suppressed = 0
        params = req.get("params")
        self._ensure_model(params)
        self.phase = "inputs"
        seeds = [int(x) for x in req["seeds"]]
        schedule = [int(k) for k in req["schedule"]]
        warmup = int(req.get("warmup", 0))
        check = bool(req.get("check"))
        probe = req.get("probe")
        probe_at = int(probe["at"]) if probe else -1
        queued = bool(req.get("queued")) and not probe
        decoy = bool(probe.get("decoy")) if probe else False
        cuda = self.device.type == "cuda"
        # The sets (and their copies) are made once per case and kept for
        # its later rounds: a round's time is its calls, not input making.
        key = (req["case"], tuple(seeds), check)
        if getattr(self, "_round_key", None) != key:
            self._round_key = self._round_sets = self._round_before = None
            self._empty_key = self._empty_outs = None
            self._round_kept = {}
            self._round_sets = [self._inputs(req["case"], sd, params) for sd in seeds]
            self._round_before = [self._snapshot(x) for x in self._round_sets] if check else None
            self._round_key = key
        sets, before = self._round_sets, self._round_before
        flush = None
        stream = None
        if cuda:
            nbytes = max(int(req.get("flush_bytes", 256 << 20)) // 4, 1)
            if getattr(self, "_flush", None) is None or self._flush.numel() != nbytes:
                self._flush = torch.empty(nbytes, dtype=torch.int32, device=self.device)
            flush = self._flush
            stream = torch.cuda.current_stream(self.device).cuda_stream
        self._timer_ready()
        if getattr(self, "_thr", None) is None:
            self._thr = self._idle_sync_ms()
        thr = self._thr
        lap("inputs_s")
        self.phase = "forward"
        n_sets = max(len(seeds), int(probe["set"]) + 1) if probe else len(seeds)
        if decoy and not 0 <= int(probe["set"]) < len(seeds):
            raise ValueError("a decoy names a set the round does not cycle through")
        uniques = [[] for _ in range(n_sets)]
        known = [int(x) for x in req.get("known", [])][:n_sets]
        known += [0] * (n_sets - len(known))
        # The first distinct output of each cycled set, from an earlier
        # round, if the judge has it (its number is below known).
        kept = self._round_kept
        for k in list(kept):
            if k >= n_sets or kept[k][0] >= known[k]:
                del kept[k]
        probe_inputs = probe_before = None
        calls = []
        kjt = self._kjt
        empty = None
        with torch.no_grad():
            for _ in range(warmup):
                self.model(*sets[0])
                self._check_harness()
            if req.get("empty"):
                if getattr(self, "_empty_key", None) != self._round_key:
                    self._empty_key = self._empty_outs = None
                    self._empty_outs = [self.model(*x) for x in sets]
                    self._empty_key = self._round_key
                empty = self._empty_outs
            lap("warmup_s")
            if cuda:
                torch.cuda.synchronize()
                torch.cuda.reset_peak_memory_stats(self.device)
            kjt.kjt_reset()
            pending, pend_bytes = [], 0
            if queued:
                kjt.kjt_l2_reset(stream)
                budget = self._queue_budget()

            def match(i, k, outs, own):
                # The call's outputs against the distinct ones of its set
                # kept so far; own: outs are already the worker's (a copy,
                # or an empty call's), kept as they are when new.
                earlier = [kept[k]] if k in kept else []
                # A decoy's output is sent as new, as a probe's is.
                seen = [] if decoy and i == probe_at else earlier + [
                    (known[k] + j, x) for j, x in enumerate(uniques[k])]
                for u, prev in seen:
                    if self._same_outputs(prev, outs):
                        calls.append([k, u])
                        return
                calls.append([k, known[k] + len(uniques[k])])
                uniques[k].append(list(outs) if own else self._copies(outs))

            def resolve(pending):
                # A queued round's copies matched in call order, with one
                # wait: each against the first distinct output of its set
                # (kept from an earlier round, or this round's first), the
                # comparisons put on the device and their flags read
                # together; a call whose flag says no is matched against
                # every distinct one (match, which waits per comparison).
                plan, flags, first = [], [], {}
                for i, k, outs in pending:
                    if k in kept:
                        target = kept[k]
                    elif uniques[k]:
                        target = (known[k], uniques[k][0])
                    elif k in first:
                        target = first[k]
                    else:
                        first[k] = (known[k], outs)
                        plan.append((i, k, outs, None, -1))
                        continue
                    flag = self._equal_flag(target[1], outs)
                    plan.append((i, k, outs, target[0], len(flags) if flag is not None else -1))
                    if flag is not None:
                        flags.append(flag)
                said = self._fn_tolist(self._fn_stack(flags)) if flags else []
                for i, k, outs, u, f in plan:
                    if u is not None and f >= 0 and said[f]:
                        calls.append([k, u])
                    else:
                        match(i, k, outs, True)

            t_queue = time.perf_counter()
            for i, k in enumerate(schedule):
                if queued:
                    # As below, the generators seeded before each call,
                    # without the wait.
                    if cuda:
                        self._seed(seeds[k])
                    out = self._queued_call(sets[k], flush, stream,
                                            empty[k] if empty is not None else None)
                elif i == probe_at:
                    k = int(probe["set"])
                    self.phase = "inputs"
                    probe_inputs = self._inputs(req["case"], int(probe["seed"]), params)
                    probe_before = self._snapshot(probe_inputs) if check else None
                    self.phase = "forward"
                    if cuda:
                        torch.cuda.synchronize()
                    # A decoy does all of the above, then calls on a
                    # cycled set: the same round but for the inputs.
                    out = self._timed_call(sets[k] if decoy else probe_inputs, flush, stream,
                                           thr)
                else:
                    if cuda:
                        # A call on new inputs follows their making, which
                        # seeds torch's generators; the first Triton launch
                        # after a seeding is slower (17 us against 3.5 on
                        # the H200): every timed call follows one, so that
                        # the new inputs' calls and the cycled ones compare.
                        self._seed(seeds[k])
                        torch.cuda.synchronize()
                    out = self._timed_call(sets[k], flush, stream, thr,
                                           empty[k] if empty is not None else None)
                self._check_harness()
                outs = self._outputs(out)
                for o in outs:
                    if isinstance(o, torch.Tensor):
                        self._plain(o)
                if check and queued:
                    # Copied now, on the stream (a later call may write
                    # into the same memory), matched after the wait; a
                    # call whose copy would pass the budget is matched at
                    # once, as in a synced round (a copy of a GiB-sized
                    # output would hold the device's memory twice over).
                    nbytes = sum(o.numel() * o.element_size() for o in outs
                                 if isinstance(o, torch.Tensor))
                    if pending and pend_bytes + nbytes > budget:
                        resolve(pending)
                        pending, pend_bytes = [], 0
                    if nbytes > budget:
                        match(i, k, outs, empty is not None)
                    else:
                        # An empty call's outputs too: its round must cost
                        # what a round of the code under test does.
                        outs = self._copies(outs)
                        pending.append((i, k, outs))
                        pend_bytes += nbytes
                elif check:
                    # Matched as they are, copied only when new: a copy
                    # of every call's outputs would hold one more output's
                    # memory at each call.  An empty call's outputs are the
                    # worker's own, made before the round and never written
                    # by it: kept as they are.
                    match(i, k, outs, empty is not None and i != probe_at)
                del out, outs
            if queued:
                # Where a queued round's time goes, beside timed_loop_s:
                # the host's putting of the calls on the stream (and the
                # matching of copies past the budget), the wait after the
                # last, and the matching after it.
                t_wait = time.perf_counter()
                if kjt.kjt_qfinish(thr) != 0:
                    raise RuntimeError("the native timer failed to read a queued round's "
                                       "samples")
                t_match = time.perf_counter()
                if pending:
                    resolve(pending)
                laps["queue_s"] = t_wait - t_queue
                laps["wait_s"] = t_match - t_wait
                laps["match_s"] = time.perf_counter() - t_match
            del pending
            lap("timed_loop_s")
        samples, escaped = [], []
        import ctypes
        ms, esc = ctypes.c_double(), ctypes.c_double()
        for i in range(kjt.kjt_count()):
            kjt.kjt_sample(i, ctypes.byref(ms), ctypes.byref(esc))
            samples.append(ms.value)
            escaped.append(esc.value)
        peak = torch.cuda.max_memory_allocated(self.device) / (1024 * 1024) if cuda else 0.0
        self.phase = "outputs"
        distinct = [[self._save(u, req["out_dir"], f"{req['tag']}_s{k}u{known[k] + j}")
                     for j, u in enumerate(uniques[k])] for k in range(n_sets)]
        lap("write_s")
        if check:
            for k in range(len(seeds)):  # a probe's set is never seen again
                if k not in kept and uniques[k]:
                    kept[k] = (known[k], uniques[k][0])
        res = {"samples_ms": samples, "escaped_ms": escaped, "peak_memory_mb": peak,
               "timer": "cuda_event" if cuda else "monotonic", "idle_sync_ms": thr,
               "phases": laps, "queued": queued}
        if self.kernels_disabled:
            res["launches_suppressed"] = self.launches_suppressed
        if check:
            res["distinct_outputs"] = distinct
            res["calls"] = calls
            res["inputs_changed"] = any(self._changed(x, b) for x, b in zip(sets, before)) or (
                probe_inputs is not None and self._changed(probe_inputs, probe_before))
        return res


OWN_FILE = os.path.abspath(__file__)


class _Print:
    """A large input remembered by its shape, dtype and a fingerprint of its
    bits under a random key of this snapshot's (Worker._snapshot)."""

    def __init__(self, w, x):
        torch = w.torch
        gen = torch.Generator(device=x.device)
        gen.manual_seed(int.from_bytes(os.urandom(8), "little") & ((1 << 63) - 1))
        self.weights = torch.randint(1, 1 << 62, (w.SNAP_CHUNK,), dtype=torch.int64,
                                     device=x.device, generator=gen)
        self.shape, self.dtype = x.shape, x.dtype
        self.value = w._fingerprint(x, self.weights)

    def changed(self, w, x):
        if not isinstance(x, w.torch.Tensor) or x.shape != self.shape or x.dtype != self.dtype:
            return True
        return w._fingerprint(x, self.weights) != self.value


class _CudaArray:
    """A device pointer as torch.as_tensor takes it (bytes)."""

    def __init__(self, ptr, n):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": "|u1", "data": (ptr, False),
                                         "version": 3, "strides": None}


class _Vmm:
    """CUDA virtual memory through the driver API: allocations exportable as
    POSIX file descriptors, and their import in another process."""

    _one = None

    @classmethod
    def get(cls):
        if cls._one is None:
            cls._one = cls()
        return cls._one

    def __init__(self):
        import ctypes
        self.c = ctypes
        self.lib = ctypes.CDLL("libcuda.so.1")
        self.gran = {}

        class Prop(ctypes.Structure):
            _fields_ = [("type", ctypes.c_int), ("handle_types", ctypes.c_int),
                        ("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int),
                        ("win32", ctypes.c_void_p), ("flags", ctypes.c_ubyte * 8)]

        class Access(ctypes.Structure):
            _fields_ = [("loc_type", ctypes.c_int), ("loc_id", ctypes.c_int),
                        ("flags", ctypes.c_int)]
        self.Prop, self.Access = Prop, Access

    def ck(self, rc, what):
        if rc != 0:
            raise RuntimeError(f"{what}: CUDA driver error {rc}")

    def prop(self, dev):
        p = self.Prop()
        # pinned, exportable as a POSIX file descriptor, on device dev
        p.type, p.handle_types, p.loc_type, p.loc_id = 1, 1, 1, dev
        return p

    def size(self, nbytes, dev):
        c = self.c
        if dev not in self.gran:
            g = c.c_size_t()
            self.ck(self.lib.cuMemGetAllocationGranularity(c.byref(g), c.byref(self.prop(dev)), 0),
                    "granularity")
            self.gran[dev] = g.value
        g = self.gran[dev]
        return (nbytes + g - 1) // g * g

    def map(self, h, size, dev):
        c = self.c
        ptr = c.c_uint64()
        self.ck(self.lib.cuMemAddressReserve(c.byref(ptr), c.c_size_t(size), c.c_size_t(0),
                                             c.c_uint64(0), c.c_uint64(0)), "reserve")
        try:
            self.ck(self.lib.cuMemMap(ptr, c.c_size_t(size), c.c_size_t(0), h, c.c_uint64(0)), "map")
            try:
                a = self.Access(1, dev, 3)  # read and write from device dev
                self.ck(self.lib.cuMemSetAccess(ptr, c.c_size_t(size), c.byref(a), c.c_size_t(1)),
                        "access")
            except BaseException:
                self.lib.cuMemUnmap(ptr, c.c_size_t(size))
                raise
        except BaseException:
            self.lib.cuMemAddressFree(ptr, c.c_size_t(size))
            raise
        return ptr.value

    def create(self, nbytes, dev):
        c = self.c
        size = self.size(nbytes, dev)
        h = c.c_uint64()
        self.ck(self.lib.cuMemCreate(c.byref(h), c.c_size_t(size), c.byref(self.prop(dev)),
                                     c.c_uint64(0)), "create")
        try:
            ptr = self.map(h, size, dev)
        except BaseException:
            self.lib.cuMemRelease(h)
            raise
        return h, ptr, size

    def export(self, h):
        c = self.c
        fd = c.c_int(-1)
        self.ck(self.lib.cuMemExportToShareableHandle(c.byref(fd), h, 1, c.c_uint64(0)), "export")
        return fd.value

    def unmap(self, ptr, size):
        c = self.c
        self.lib.cuMemUnmap(c.c_uint64(ptr), c.c_size_t(size))
        self.lib.cuMemAddressFree(c.c_uint64(ptr), c.c_size_t(size))

    def free(self, h, ptr, size):
        """This process's mapping and handle; the allocation lives on while
        an exported descriptor of it does."""
        self.unmap(ptr, size)
        self.lib.cuMemRelease(h)

    def copy_in(self, torch, fd, nbytes, device):
        """Import an exported allocation, copy its first nbytes into a new
        tensor of this process's, and let go of the allocation."""
        c = self.c
        if nbytes <= 0:
            raise ValueError("nothing to take")
        dev = device.index if device.index is not None else torch.cuda.current_device()
        size = self.size(nbytes, dev)
        h = c.c_uint64()
        self.ck(self.lib.cuMemImportFromShareableHandle(c.byref(h), c.c_void_p(fd), 1), "import")
        try:
            ptr = self.map(h, size, dev)
            try:
                mine = torch.empty(nbytes, dtype=torch.uint8, device=device)
                view = torch.as_tensor(_CudaArray(ptr, size), device=device)
                mine.copy_(view[:nbytes])
                torch.cuda.current_stream(device).synchronize()
                del view
            finally:
                self.unmap(ptr, size)
        finally:
            self.lib.cuMemRelease(h)
        return mine


class HarnessTampered(Exception):
    """The code under test replaced something the timing harness relies on."""


class L2PersistenceSet(Exception):
    """A timed call left persisting-L2 state set (kjudge_timer.c)."""


class LazyOutput(Exception):
    """An output is a tensor subclass (its work could run when it is read)."""


def _frames(tb):
    """The frames of a traceback that are not this worker's or the import
    machinery's: the task's and the candidate's own."""
    return [f for f in traceback.extract_tb(tb)
            if os.path.abspath(f.filename) != OWN_FILE and not f.filename.startswith("<frozen")]


def describe_error(e):
    """The message of a failed request: first the exception line (with where
    it was raised in the code under test), then the traceback without this
    worker's frames, as the task's or candidate's author would want it."""
    head = "".join(traceback.format_exception_only(type(e), e)).rstrip("\n").split("\n")
    line = f"{type(e).__name__}: {str(e).splitlines()[0] if str(e).strip() else ''}".rstrip(": ")
    if isinstance(e, SyntaxError):
        line = f"{type(e).__name__}: {e.msg} ({e.filename}, line {e.lineno})"
    frames = _frames(e.__traceback__)
    if frames and not isinstance(e, SyntaxError):
        f = frames[-1]
        line += f" (at {os.path.basename(f.filename)}:{f.lineno} in {f.name})"
    parts = [line, "Traceback (most recent call last):\n" + "".join(traceback.format_list(frames))
             + "\n".join(head)]
    cause = e.__cause__ or (None if e.__suppress_context__ else e.__context__)
    if cause is not None:
        parts.append("caused by: " + "".join(traceback.format_exception_only(type(cause), cause)).rstrip())
    return "\n".join(parts)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--fd", type=int, required=True)
    args = ap.parse_args()
    chan = Channel(args.fd)
    os.set_inheritable(args.fd, False)
    w = Worker()
    w.chan = chan
    while True:
        req = chan.recv()
        if req is None or req.get("op") == "exit":
            # Nothing is left to do: the interpreter's teardown (torch's
            # modules, a collection of every object, the code under
            # test's atexit handlers) would cost the machine most of a
            # second of CPU a worker, and the judge waits for it.
            for f in (sys.stdout, sys.stderr):
                try:
                    f.flush()
                except Exception:
                    pass
            os._exit(0)
        rq = w.rq = Request(req, chan.take_fds())
        fn = getattr(w, "op_" + str(req.get("op")), None)
        w.phase = ""
        try:
            if fn is None:
                raise ValueError(f"unknown op {req.get('op')!r}")
            res = fn(req)
            for fd in rq.fds:  # what no handler took
                os.close(fd)
            rq.fds = []
            res.update({"id": rq.id, "nonce": rq.nonce, "ok": True})
            fds, rq.reply_fds = rq.reply_fds, []
            chan.send(res, fds)
        except BaseException as e:  # the code under test may raise anything
            rq.close_fds()
            msg = truncate(describe_error(e))
            sticky = "CUDA" in str(e) or "cuda" in type(e).__name__.lower()
            exits = sticky or isinstance(e, (KeyboardInterrupt, SystemExit))
            # The device's memory ran out (where other attempts share the
            # device, the judge's to handle): torch's own error for it, or
            # the driver's ("CUDA error: out of memory", an AcceleratorError,
            # as when a model's weights are moved there).
            oom = getattr(sys.modules.get("torch"), "OutOfMemoryError", None)
            t = type(e)
            chan.send({"id": rq.id, "nonce": rq.nonce, "ok": False, "phase": w.phase,
                       "device_memory": (isinstance(oom, type) and isinstance(e, oom))
                       or (sticky and "CUDA error: out of memory" in str(e)),
                       "exception": t.__qualname__ if t.__module__ == "builtins"
                       else f"{t.__module__}.{t.__qualname__}",
                       "error_type": t.__name__, "error_msg": msg, "sticky": sticky,
                       "exits": exits})
            if exits:
                return 1

def _template_recv(sock):
    """One fork request: (header dict, sandbox description bytes, fds), or
    None at end of file (the judge is done)."""
    buf, fds = b"", []
    while len(buf) < 8 or len(buf) < 4 + int.from_bytes(buf[:4], "little"):
        chunk, got, _, _ = socket.recv_fds(sock, 1 << 20, 8)
        fds.extend(got)
        if not chunk:
            for fd in fds:
                os.close(fd)
            return None
        buf += chunk
    n = int.from_bytes(buf[4:8], "little")
    return json.loads(buf[8:8 + n]), buf[8 + n:], fds


def _template_c1(lib, w):
    """C1 (kjudge_template.c): the sandbox's namespaces, then the worker's
    process, PID 1 of the new PID namespace.  True in that process only."""
    try:
        e = lib.kj_tmpl_unshare()
        if e:
            os.write(w, b"E%d" % e)
            return False
        pid = os.fork()
    except BaseException:
        return False
    if pid == 0:
        os.close(w)
        return True
    os.write(w, b"P%d" % pid)
    return False


def _template_cmdline(args):
    """The process's command line (/proc/self/cmdline, ps) made the
    worker's own: a child of the template still shows the template's
    (its --template, its library and the bytecode tree).  The new one is
    written over the old in place (it is shorter), padded with NULs."""
    import ctypes
    try:
        f = open("/proc/self/stat", "rb").read().rsplit(b")", 1)[1].split()
        start, end = int(f[45]), int(f[46])  # arg_start, arg_end (fields 48, 49)
    except (OSError, IndexError, ValueError):
        return
    new = b"\0".join(os.fsencode(a) for a in args) + b"\0"
    if start and len(new) <= end - start:
        ctypes.memmove(start, new + b"\0" * (end - start - len(new)), end - start)


def template(argv):
    """The worker template (lib/sandbox/spawn.h, "Templates"): imports
    torch once, then forks one worker a request of the judge's on its
    descriptor; returns only in such a worker, sandboxed, with the
    worker's environment and argv, to run main().  The template itself never
    runs a task's or a candidate's code and never sees a seed."""
    import ctypes
    import select
    fd, lib_path, pycache = int(argv[2]), argv[3], argv[4]
    lib = ctypes.CDLL(lib_path)
    lib.kj_tmpl_unshare.argtypes = []
    lib.kj_tmpl_child.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_char_p] + [ctypes.c_int] * 5
    if pycache != "-":
        # The bytecode tree a reference worker would write while it
        # imports torch (Worker._bytecode): the template's import is that
        # import now, trusted code only.
        Worker._bytecode(pycache, True)
    import numpy  # noqa: F401
    import torch  # noqa: F401
    sys.dont_write_bytecode = True
    sock = socket.socket(fileno=fd)
    sock.sendall(b'{"ready": true}\n')
    while True:
        got = _template_recv(sock)
        if got is None:
            os._exit(0)
        req, spec, fds = got
        for f in (sys.stdout, sys.stderr):
            try:
                f.flush()
            except Exception:
                pass
        r, w = os.pipe()
        pid1 = os.fork()
        if pid1 == 0:
            os.close(r)
            if not _template_c1(lib, w):
                os._exit(0)
            # The worker's process: nothing of the template's socket may
            # be closed later by its object (the setup closes every
            # descriptor above the worker's own).
            sock.detach()
            names = req.get("fds", "")
            ends = dict(zip(names, fds))
            ep, sync = fds[len(names)], fds[len(names) + 1]
            cwd = req.get("cwd")
            lib.kj_tmpl_child(spec, len(spec), cwd.encode() if cwd else None,
                              ends.get("o", -1), ends.get("e", -1), ends.get("p", -1), ep, sync)
            env = dict(e.split("=", 1) for e in req["env"] if "=" in e)
            os.environ.clear()
            os.environ.update(env)
            if "tempfile" in sys.modules:
                sys.modules["tempfile"].tempdir = None
            sys.argv = list(req["argv"][1:])
            _template_cmdline(req["argv"])
            return
        os.close(w)
        for f in fds:
            os.close(f)
        # C1's answer, then its end: 20 s at most (it unshares and forks),
        # then it is killed.
        out, end = b"", time.monotonic() + 20
        while time.monotonic() < end and select.select([r], [], [], max(0, end - time.monotonic()))[0]:
            chunk = os.read(r, 64)
            if not chunk:
                break
            out += chunk
        os.close(r)
        try:
            while os.waitpid(pid1, os.WNOHANG) == (0, 0):
                if time.monotonic() > end:
                    os.kill(pid1, 9)
                    os.waitpid(pid1, 0)
                    out = b""
                    break
                time.sleep(0.001)
        except ChildProcessError:
            pass
        if out.startswith(b"P"):
            ans = {"pid": int(out[1:])}
        else:
            ans = {"errno": int(out[1:]) if out[1:].isdigit() else 0, "step": "unshare"}
        sock.sendall(json.dumps(ans).encode() + b"\n")


if __name__ == "__main__":
    if len(sys.argv) > 1 and sys.argv[1] == "--template":
        template(sys.argv)
    sys.exit(main())
