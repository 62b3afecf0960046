"""kjudge_audit.py - the canaries of `kjudge audit`, and its measurement step.

Two uses, one source, so that what is judged and what is measured are the
same answers:

* As a helper module beside each canary candidate (the judge copies it into
  the audit's private verify directory): a canary candidate's ModelNew
  wraps the task's reference Model and returns canary(NAME, ...), a cheap
  wrong answer that a strong task must reject.  The candidate runs in the
  sandbox and is judged by the pipeline like any other; nothing it says
  but its outputs counts.

* As a program the judge runs with the task's trust (the reference's: a
  plain process, never the candidate's code), `measure`: for every case,
  the golden and each canary's outputs, and by how much each is within the
  comparator's threshold (the MERE/MARE rule of lib/tensor/compare.c, whose
  thresholds the judge passes in), which canaries apply (`input` needs an
  input of the output's size, `lowp` a float32 task), the headroom of the
  float16 and bfloat16 references, and the reference's FLOPs (PyTorch's
  FlopCounterMode) and bytes (inputs read once, outputs written once).  It
  prints one JSON object on stdout.  The figures only explain a verdict;
  the verdicts are the pipeline's.
"""
import copy
import json
import sys

CANARIES = ("zeros", "ones", "empty", "constant", "input", "lowp_float16",
            "lowp_bfloat16", "noise", "stale", "partial")

# The comparator's thresholds by dtype name; the judge writes the table of
# lib/tensor/dtype.c into each canary candidate and the measurement's
# arguments (THRESHOLDS below is that copy).
THRESHOLDS = {}
DEFAULT_T = 2.0 ** -13


class NotApplicable(Exception):
    """The canary has no meaning for this task (no input of the output's
    size, a task that is not float32, a model float16 cannot run)."""


def _leaves(out):
    import torch
    if isinstance(out, torch.Tensor):
        return [out]
    if isinstance(out, (list, tuple)):
        return [t for e in out for t in _leaves(e)]
    return []


def _map(fn, out):
    import torch
    if isinstance(out, torch.Tensor):
        return fn(out)
    if isinstance(out, (list, tuple)):
        return type(out)(_map(fn, e) for e in out)
    return out


def _threshold(t):
    name = str(t.dtype).replace("torch.", "")
    return THRESHOLDS.get(name, DEFAULT_T)


def _input_like(args, g):
    import torch
    for a in args:
        if isinstance(a, torch.Tensor) and a.numel() == g.numel():
            return a.detach().reshape(g.shape).to(g.dtype).clone()
    raise NotApplicable("no input has the output's %d elements" % g.numel())


def _lowp(ref, args, dtype):
    import torch
    golden = ref(*args)
    leaves = _leaves(golden)
    if not leaves or any(t.dtype != torch.float32 for t in leaves):
        raise NotApplicable("not a float32 task")
    low = copy.deepcopy(ref).to(dtype)
    cast = [a.to(dtype) if isinstance(a, torch.Tensor) and a.is_floating_point() else a
            for a in args]
    out = low(*cast)
    return _map(lambda t: t.to(torch.float32), out)


def _same_layout(a, b):
    import torch
    if len(a) != len(b):
        return False
    for x, y in zip(a, b):
        if isinstance(x, torch.Tensor) != isinstance(y, torch.Tensor):
            return False
        if isinstance(x, torch.Tensor) and (x.shape != y.shape or x.dtype != y.dtype):
            return False
    return True


def _stale(ref, args, get_inputs):
    """The golden of another input set, as a replay of an earlier set's
    answer would be: the task's own get_inputs() under a seed of the
    audit's when it makes inputs of the same shapes and dtypes (a task
    whose cases take parameters does not), else each input's elements in
    another order (the same values, another set)."""
    import torch
    other = None
    if get_inputs is not None:
        try:
            with torch.random.fork_rng(devices=[]):
                torch.manual_seed(0x5EED)
                fresh = list(get_inputs())
            if _same_layout(args, fresh):
                other = [f.to(a.device) if isinstance(f, torch.Tensor) else f
                         for f, a in zip(fresh, args)]
        except TypeError:
            other = None
    if other is None:
        gen = torch.Generator(device="cpu").manual_seed(0x5EED)
        other = []
        for a in args:
            if isinstance(a, torch.Tensor) and a.numel() > 1:
                perm = torch.randperm(a.numel(), generator=gen).to(a.device)
                other.append(a.reshape(-1)[perm].reshape(a.shape))
            else:
                other.append(a)
    return ref(*other)


def _noise(g):
    """The golden plus noise of twice its dtype's threshold, relative to
    each element as the comparator measures it (|g| or t, the larger)."""
    import torch
    if not g.is_floating_point():
        return g.clone()
    t = _threshold(g)
    gen = torch.Generator(device="cpu").manual_seed(0x401)
    sign = (torch.randint(0, 2, g.shape, generator=gen) * 2 - 1).to(g.device, torch.float32)
    g32 = g.to(torch.float32)
    return (g32 + sign * 2 * t * torch.clamp(g32.abs(), min=t)).to(g.dtype)


def _partial(g):
    flat = g.detach().reshape(-1).clone()
    flat[flat.numel() // 2:] = 0
    return flat.reshape(g.shape)


def canary(name, ref, args, get_inputs=None):
    """The canary NAME's answer for the inputs args, ref the task's Model,
    get_inputs the task's generator of inputs (for stale)."""
    import torch
    with torch.no_grad():
        if name == "lowp_float16":
            return _lowp(ref, args, torch.float16)
        if name == "lowp_bfloat16":
            return _lowp(ref, args, torch.bfloat16)
        if name == "stale":
            return _stale(ref, args, get_inputs)
        golden = ref(*args)
        if name == "zeros":
            return _map(torch.zeros_like, golden)
        if name == "ones":
            return _map(torch.ones_like, golden)
        if name == "empty":
            return _map(torch.empty_like, golden)
        if name == "constant":
            return _map(lambda g: torch.full_like(g, g.to(torch.float64).mean().item()
                                                  if g.numel() else 0), golden)
        if name == "input":
            return _map(lambda g: _input_like(args, g), golden)
        if name == "noise":
            # Integer and bool outputs have no noise below their threshold:
            # the canary would be the golden itself.
            if not any(t.is_floating_point() for t in _leaves(golden)):
                raise NotApplicable("no float output")
            return _map(_noise, golden)
        if name == "partial":
            return _map(_partial, golden)
    raise ValueError("unknown canary %r" % name)


# --- the measurement ---------------------------------------------------------

def _stats(golden, actual):
    """The comparator's figures over all outputs: the share of the
    golden's finite elements whose relative error is under t, MERE / t and
    MARE / (10 t) (a pass needs both under 1), the worst output's."""
    import torch
    gl, al = _leaves(golden), _leaves(actual)
    if len(gl) != len(al):
        return {"within": 0.0, "elements": 0, "mere_ratio": None, "mare_ratio": None}
    n = within = 0
    mere_r = mare_r = 0.0
    for g, a in zip(gl, al):
        if g.shape != a.shape or g.numel() == 0:
            continue
        t = _threshold(g)
        g64 = g.detach().to("cpu", torch.float64).reshape(-1)
        a64 = a.detach().to("cpu").to(g.dtype).to(torch.float64).reshape(-1)
        ok = torch.isfinite(g64) & torch.isfinite(a64)
        rel = (a64[ok] - g64[ok]).abs() / torch.clamp(g64[ok].abs(), min=t)
        n += g64.numel()
        within += int((rel < t).sum())
        if rel.numel():
            mere_r = max(mere_r, float(rel.mean()) / t)
            mare_r = max(mare_r, float(rel.max()) / (10 * t))
    return {"within": within / n if n else 1.0, "elements": n, "mere_ratio": mere_r,
            "mare_ratio": mare_r}


def _flops(model, args):
    try:
        from torch.utils.flop_counter import FlopCounterMode
    except ImportError:
        return None
    import torch
    mode = FlopCounterMode(display=False)
    with torch.no_grad(), mode:
        model(*args)
    return int(mode.get_total_flops())


def _bytes(model, args, out):
    """What a kernel must move at least: every input (the forward's
    tensors and the model's parameters and buffers) read once and every
    output written once."""
    import torch
    tensors = [a for a in args if isinstance(a, torch.Tensor)] + _leaves(out)
    if hasattr(model, "parameters"):
        tensors += list(model.parameters()) + list(model.buffers())
    return sum(t.numel() * t.element_size() for t in tensors)


def _peaks(dev):
    """The device's peak rates as this process measures them: a square
    matmul per float dtype (2 n^3 FLOPs over the fastest call), and on a
    GPU float32 with TF32 allowed ("tfloat32"), and a device-to-device copy
    (bytes read and written over the fastest); a dtype the device cannot
    multiply is left out."""
    import time
    import torch

    def sync():
        if dev.type == "cuda":
            torch.cuda.synchronize(dev)

    def best(fn):
        # The fastest of 5 calls and more, up to 25 within a second: on a
        # shared CPU a call the scheduler held back is slower, never faster,
        # and more calls give the fastest more chances.
        fn()
        sync()
        ts = []
        start = time.perf_counter()
        while len(ts) < 5 or (len(ts) < 25 and time.perf_counter() - start < 1.0):
            t0 = time.perf_counter()
            fn()
            sync()
            ts.append(time.perf_counter() - t0)
        return min(ts)

    n = 4096 if dev.type == "cuda" else 512
    rates = {}
    kinds = [(torch.float32, "float32", False), (torch.float16, "float16", False),
             (torch.bfloat16, "bfloat16", False)]
    if dev.type == "cuda":
        kinds.append((torch.float32, "tfloat32", True))
    was = torch.backends.cuda.matmul.allow_tf32
    for dt, name, tf32 in kinds:
        try:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            a = torch.randn(n, n, device=dev).to(dt)
            b = torch.randn(n, n, device=dev).to(dt)
            rates[name] = 2.0 * n ** 3 / best(lambda: a @ b)
        except RuntimeError:
            continue
        finally:
            torch.backends.cuda.matmul.allow_tf32 = was
    if dev.type == "cuda":
        # On a GPU: the best of a plain copy and an elementwise op (each
        # reads its input once and writes its output once), over buffers of
        # 1 GiB (256 MiB where that does not fit), four calls a timing, so
        # that a call's launch and the synchronize weigh little.  A rate
        # below what a simple elementwise kernel reaches makes a speed of
        # light that kernels beat: on an H100, single 256 MiB copies gave
        # 2.83 TB/s, and level 1's ReLU ran at 3.04 TB/s.
        bw = 0.0
        for numel in (1 << 28, 1 << 26):
            try:
                x = torch.zeros(numel, device=dev)
                y = torch.empty_like(x)
            except RuntimeError:
                continue
            k = 4
            moved = 2.0 * k * x.numel() * x.element_size()

            def copies():
                for _ in range(k):
                    y.copy_(x)

            def negs():
                for _ in range(k):
                    torch.neg(x, out=y)

            bw = max(moved / best(copies), moved / best(negs))
            del x, y
            break
    else:
        x = torch.empty(1 << 22, device=dev)
        y = torch.empty_like(x)
        bw = 2.0 * x.numel() * x.element_size() / best(lambda: y.copy_(x))
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    return {"device_name": name, "torch": torch.__version__, "matmul_flops_per_s": rates,
            "copy_bytes_per_s": bw}


def _sol(rec, peaks):
    """The case's speed of light and how it was made: the larger of its
    FLOPs over the device's fastest measured matmul rate, of any precision
    (a kernel may compute in whatever precision the task's thresholds
    accept: a float32 task's kernel in TF32 or bfloat16 must not be held to
    the float32 rate), and its bytes over the copy bandwidth.  None with
    the reason where no figure can be established: FLOPs the counter could
    not count, no measured matmul rate, no bandwidth.  Never a guess."""
    rates = {k: v for k, v in (peaks.get("matmul_flops_per_s") or {}).items() if v}
    dtype = max(rates, key=rates.get) if rates else None
    flops = rec.get("flops")
    bw = peaks.get("copy_bytes_per_s")
    info = {"sol_dtype": dtype, "peak_flops_per_s": rates.get(dtype)}
    if flops is None:
        return None, "the reference's FLOPs could not be counted (%s)" % (
            rec.get("flops_error") or "no flop counter in this torch"), info
    if not bw:
        return None, "no copy bandwidth was measured", info
    if flops > 0 and not rates:
        return None, "no matmul rate was measured on this device", info
    t = max(flops / rates[dtype] if flops > 0 else 0.0, rec["bytes"] / bw)
    if not t > 0:
        return None, "the case moves no bytes and counts no FLOPs", info
    return t * 1e3, None, info


def _load(path):
    import importlib.util
    spec = importlib.util.spec_from_file_location("kjudge_audit_task", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def _case_inputs(mod, case, params, torch, device):
    torch.manual_seed(1000 + case)
    with torch.device(device):
        if params is not None:
            args = list(mod.get_inputs(**params))
        elif hasattr(mod, "get_input_groups"):
            args = list(mod.get_input_groups())[case]
        else:
            args = list(mod.get_inputs())
    return [a.to(device) if isinstance(a, torch.Tensor) else a for a in args]


def _describe(out):
    return [{"dtype": str(t.dtype).replace("torch.", ""), "shape": list(t.shape)}
            for t in _leaves(out)]


def measure(task_path, device, params, canaries, known=None):
    import torch
    mod = _load(task_path)
    dev = torch.device(device or ("cuda" if torch.cuda.is_available() else "cpu"))
    if params is not None:
        n_cases = len(params)
    elif hasattr(mod, "get_input_groups"):
        with torch.device(dev):
            n_cases = len(list(mod.get_input_groups()))
    else:
        n_cases = 1
    cases = []
    for case in range(n_cases):
        p = params[case] if params is not None else None
        kw = p or {}
        init = mod.get_init_inputs(**kw) if hasattr(mod, "get_init_inputs") else []
        torch.manual_seed(42)
        model = mod.Model(*init)
        if hasattr(model, "to"):
            model = model.to(dev)
        if hasattr(model, "eval"):
            model.eval()
        args = _case_inputs(mod, case, p, torch, dev)
        with torch.no_grad():
            golden = model(*args)
        rec = {"outputs": _describe(golden), "canaries": {},
               "flops": None, "bytes": _bytes(model, args, golden)}
        try:
            rec["flops"] = _flops(model, args)
        except Exception as e:  # the counter cannot trace every model
            rec["flops_error"] = "%s: %s" % (type(e).__name__, str(e)[:200])
        for name in canaries:
            try:
                out = canary(name, model, args, getattr(mod, "get_inputs", None))
            except NotApplicable as e:
                rec["canaries"][name] = {"applies": False, "why": str(e)}
                continue
            except Exception as e:
                # A canary the reference's own process cannot compute
                # (float16 on a device without its kernels) does not apply.
                rec["canaries"][name] = {"applies": False,
                                         "why": "%s: %s" % (type(e).__name__, str(e)[:200])}
                continue
            s = _stats(golden, out)
            s["applies"] = True
            rec["canaries"][name] = s
        cases.append(rec)
    # The judge's kept rates when they are this device's under this torch;
    # else measured now (and kept by the judge).
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    if not (isinstance(known, dict) and known.get("device_name") == name and
            known.get("torch") == torch.__version__ and
            isinstance(known.get("matmul_flops_per_s"), dict) and
            known.get("copy_bytes_per_s")):
        known = _peaks(dev)
    peaks = known
    for rec in cases:
        rec["sol_ms"], why, info = _sol(rec, peaks)
        rec.update(info)
        if why:
            rec["sol_why"] = why
    return {"device": str(dev), "peaks": peaks, "cases": cases}


def main(argv):
    if len(argv) != 3 or argv[1] != "measure":
        sys.stderr.write("usage: kjudge_audit.py measure REQUEST_JSON\n")
        return 2
    req = json.loads(argv[2])
    THRESHOLDS.update(req["thresholds"])
    sys.path.insert(0, req["dir"])
    # The benchmark's speed-of-light step asks for no canaries: the
    # reference's FLOPs, bytes and the peaks only.
    res = measure(req["task"], req["device"], req.get("params"),
                  req.get("canaries", CANARIES), req.get("peaks"))
    sys.stdout.write(json.dumps(res, allow_nan=False) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
