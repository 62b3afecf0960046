"""The sample-array forgery, as an attacker would write it (shared by the
sample_forger candidates): find the native timing harness mapped into this
process (/proc/self/maps), read the addresses of its sample array and its
count from the library's own ELF symbol table, and after every honest call
divide each sample recorded since the last call by DIVISOR with ctypes."""
import ctypes
import struct


def _symbols(path, names):
    """The values of the named symbols of an ELF64 file's .symtab."""
    with open(path, "rb") as f:
        elf = f.read()
    shoff, = struct.unpack_from("<Q", elf, 0x28)
    shentsize, shnum = struct.unpack_from("<HH", elf, 0x3A)
    sections = [struct.unpack_from("<IIQQQQIIQQ", elf, shoff + i * shentsize) for i in range(shnum)]
    found = {}
    for sh in sections:
        if sh[1] != 2:  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], 24):
            st_name, _, _, _, st_value, _ = struct.unpack_from("<IBBHQQ", elf, off)
            end = elf.index(b"\0", strtab[4] + st_name)
            name = elf[strtab[4] + st_name:end].decode()
            if name in names:
                found[name] = st_value
    return found


def harness_symbols(names):
    """The addresses, in this process, of the named symbols of the native
    timing harness (its statics included), or None when it is not mapped
    or lacks one of them."""
    base = path = None
    with open("/proc/self/maps") as f:
        for line in f:
            parts = line.split()
            if len(parts) >= 6 and parts[-1].endswith("kjudge_timer.so") and int(parts[2], 16) == 0:
                base, path = int(parts[0].split("-")[0], 16), parts[-1]
                break
    if path is None:
        return None
    sym = _symbols(path, set(names))
    if any(n not in sym for n in names):
        return None
    return {n: base + v for n, v in sym.items()}


def _harness():
    """The addresses of the harness's `samples` array and its count `n`."""
    at = harness_symbols(["samples", "n"])
    return None if at is None else (at["samples"], at["n"])


class Forger:
    def __init__(self, divisor):
        self.divisor = divisor
        self.at = _harness()
        self.done = 0

    def forge(self):
        if self.at is None:
            return
        n = ctypes.c_int.from_address(self.at[1]).value
        if n < self.done:  # a new round: the harness was reset
            self.done = 0
        samples = (ctypes.c_double * max(n, 1)).from_address(self.at[0])
        for i in range(self.done, n):
            samples[i] = self.rewrite(samples[i])
        self.done = n

    def rewrite(self, ms):
        """What a recorded sample of ms becomes (a subclass may say)."""
        return ms / self.divisor
