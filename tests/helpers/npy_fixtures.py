#!/usr/bin/env python3
"""npy_fixtures.py - the numpy half of the .npy round trips (tests/cli/t0100).

    npy_fixtures.py gen DIR
        Write .npy files with numpy: every dtype kjudge reads, format
        versions 1.0, 2.0 and 3.0, both byte orders, C and Fortran order,
        0-d, empty and larger shapes, and bfloat16/float8 data the way numpy
        holds it (uint16/uint8 bit patterns).  DIR/MANIFEST gets one line per
        file, the arguments of `npy_check check`:
            NAME DTYPE ORDER ENDIAN VERSION [DIM...]
        DIR/UNSUPPORTED lists files of dtypes kjudge refuses (complex,
        strings, objects, structured, datetime), one NAME per line.

    npy_fixtures.py verify DIR MANIFEST
        For each MANIFEST line (same format) naming a file that kjudge wrote
        (`npy_check write`), check with numpy that the header says that
        dtype, order, byte order, version and shape; that every element is
        value(DTYPE, i) in C order; and that the file is byte for byte what
        numpy writes for the same array.

    npy_fixtures.py seeds DIR
        Write the seed headers of the libFuzzer target (tests/fuzz/seeds).

value() below must match tests/helpers/npy_check.c.  Every value is exact
in its dtype, so all comparisons are exact.  Exit status: 0 when everything
matched, 1 otherwise, with one line per problem on stderr.
"""
import io
import os
import sys

import numpy as np
from numpy.lib import format as npformat

# Logical dtypes numpy lacks, and the unsigned type that holds their bits.
STORAGE = {"bfloat16": "uint16", "float8_e4m3fn": "uint8", "float8_e5m2": "uint8"}

DTYPES = ["bool", "int8", "int16", "int32", "int64",
          "uint8", "uint16", "uint32", "uint64",
          "float16", "float32", "float64",
          "bfloat16", "float8_e4m3fn", "float8_e5m2"]

SHAPES = [(), (0,), (3, 0), (7,), (2, 3), (3, 4, 5), (2, 1, 3, 2), (64, 33)]

VERSIONS = {"1.0": (1, 0), "2.0": (2, 0), "3.0": (3, 0)}


def float8_bits(v, mbits, bias):
    """Bits of the exactly representable, normal or zero values v."""
    sign = (v < 0).astype(np.uint8) << 7
    a = np.abs(v)
    m, e = np.frexp(a)                 # a = m * 2**e, 0.5 <= m < 1
    mant = (2 * m - 1) * (1 << mbits)  # a = (1 + mant / 2**mbits) * 2**(e-1)
    exp = e - 1 + bias
    nz = a != 0
    assert np.all(mant[nz] == np.round(mant[nz])) and np.all(exp[nz] >= 1)
    bits = (exp.astype(np.int64) << mbits) | mant.astype(np.int64)
    return np.where(nz, bits, 0).astype(np.uint8) | sign


def values(dtype, n):
    """Elements 0..n-1 of the test tensor, as the storage dtype."""
    i = np.arange(n, dtype=np.int64)
    s = i % 101 - 50
    u = (i % 251).astype(np.uint64)
    f = (i % 97) * 0.25 - 7.0
    if dtype == "bool":
        return i % 3 == 0
    if dtype == "int8":
        return s.astype(np.int8)
    if dtype == "int16":
        return (s * 601).astype(np.int16)
    if dtype == "int32":
        return (s * 40000001).astype(np.int32)
    if dtype == "int64":
        return s * 35184372088833           # 2**45 + 1
    if dtype == "uint8":
        return u.astype(np.uint8)
    if dtype == "uint16":
        return (u * np.uint64(257)).astype(np.uint16)
    if dtype == "uint32":
        return (u * np.uint64(16777259)).astype(np.uint32)
    if dtype == "uint64":
        return u * np.uint64(17592186044419)  # 2**44 + 3
    if dtype in ("float16", "float32", "float64"):
        out = f.astype(dtype)
        assert np.array_equal(out.astype(np.float64), f)
        return out
    if dtype == "bfloat16":
        bits = f.astype(np.float32).view(np.uint32)
        assert not np.any(bits & 0xFFFF), "value not exact in bfloat16"
        return (bits >> 16).astype(np.uint16)
    if dtype == "float8_e4m3fn":
        return float8_bits(((i % 15) - 7) * 0.5, 3, 7)
    if dtype == "float8_e5m2":
        return float8_bits(((i % 15) - 7) * 0.5, 2, 15)
    raise ValueError("unknown dtype " + dtype)


def storage_dtype(dtype, endian):
    dt = np.dtype(STORAGE.get(dtype, dtype))
    if dt.itemsize == 1:
        return dt
    return dt.newbyteorder(endian)


def make_array(dtype, endian, order, shape):
    """The test tensor in the given layout, as numpy would hold it."""
    n = int(np.prod(shape, dtype=np.int64))
    a = values(dtype, n).reshape(shape)
    if order == "F" and a.ndim > 0:  # asfortranarray makes 0-d arrays 1-d
        a = np.asfortranarray(a)
    return a.astype(storage_dtype(dtype, endian), order="K")


def written_order(a):
    """The 'fortran_order' numpy writes for a (False when C-contiguous)."""
    return "F" if a.flags.f_contiguous and not a.flags.c_contiguous else "C"


def gen(outdir):
    os.makedirs(outdir, exist_ok=True)
    manifest = []
    for vname, version in VERSIONS.items():
        for dtype in DTYPES:
            one_byte = np.dtype(STORAGE.get(dtype, dtype)).itemsize == 1
            for endian in (["|"] if one_byte else ["<", ">"]):
                for order in "CF":
                    for shape in SHAPES:
                        a = make_array(dtype, endian, order, shape)
                        dims = "x".join(map(str, shape)) or "scalar"
                        ename = {"<": "le", ">": "be", "|": "na"}[endian]
                        name = f"v{vname[0]}_{dtype}_{ename}_{order}_{dims}.npy"
                        with open(os.path.join(outdir, name), "wb") as fp:
                            npformat.write_array(fp, a, version=version)
                        manifest.append(" ".join(
                            [name, dtype, written_order(a), endian, vname] +
                            [str(d) for d in shape]))
    # The most dimensions numpy 1.x has (32), in Fortran order.
    shape = (1,) * 29 + (2, 3, 2)
    a = make_array("float32", ">", "F", shape)
    np.save(os.path.join(outdir, "many_dims.npy"), a)
    manifest.append(" ".join(["many_dims.npy", "float32", written_order(a),
                              ">", "1.0"] + [str(d) for d in shape]))
    with open(os.path.join(outdir, "MANIFEST"), "w") as fp:
        fp.write("\n".join(manifest) + "\n")

    unsupported = {
        "complex64.npy": np.arange(3, dtype="<c8"),
        "complex128_be.npy": np.arange(3, dtype=">c16"),
        "unicode.npy": np.array(["a", "bc", "def"]),
        "bytes.npy": np.array([b"abcde"]),
        "object.npy": np.array([1, "x", None], dtype=object),
        "structured.npy": np.zeros(2, dtype=[("a", "<f4"), ("b", "<i4")]),
        "datetime.npy": np.array(["2024-01-01"], dtype="datetime64[ns]"),
        "timedelta.npy": np.array([1], dtype="timedelta64[s]"),
        "void.npy": np.zeros(2, dtype="V4"),
    }
    for name, a in unsupported.items():
        with open(os.path.join(outdir, name), "wb") as fp:
            npformat.write_array(fp, a, allow_pickle=True)
    with open(os.path.join(outdir, "UNSUPPORTED"), "w") as fp:
        fp.write("\n".join(unsupported) + "\n")
    return 0


def expected_file(a, order):
    """The bytes numpy writes for array a with the given 'fortran_order'."""
    out = io.BytesIO()
    npformat.write_array_header_1_0(out, {
        "descr": npformat.dtype_to_descr(a.dtype),
        "fortran_order": order == "F",
        "shape": a.shape,
    })
    out.write(a.tobytes(order=order))
    return out.getvalue()


def verify_one(path, dtype, order, endian, vname, shape):
    """Problems with one file kjudge wrote, as a list of strings."""
    problems = []
    want = make_array(dtype, endian, order, shape)
    with open(path, "rb") as fp:
        version = npformat.read_magic(fp)
        if version == (1, 0):
            hshape, hfortran, hdtype = npformat.read_array_header_1_0(fp)
        else:
            hshape, hfortran, hdtype = npformat.read_array_header_2_0(fp)
    if version != VERSIONS[vname]:
        problems.append(f"version {version}, want {vname}")
    if hshape != shape:
        problems.append(f"shape {hshape}, want {shape}")
    if hfortran != (order == "F"):
        problems.append(f"fortran_order {hfortran}, want {order == 'F'}")
    if hdtype != want.dtype:
        problems.append(f"dtype {hdtype.str}, want {want.dtype.str}")
    if problems:
        return problems

    got = np.load(path)
    if not np.array_equal(got, want):
        bad = np.argwhere(got.reshape(-1) != want.reshape(-1))[:5].ravel()
        problems.append(f"elements differ at C-order indices {list(bad)}: "
                        f"got {got.reshape(-1)[bad]}, want {want.reshape(-1)[bad]}")
    with open(path, "rb") as fp:
        data = fp.read()
    exp = expected_file(want, order)
    if data != exp:
        at = next((k for k in range(min(len(data), len(exp)))
                   if data[k] != exp[k]), min(len(data), len(exp)))
        problems.append(f"bytes differ from numpy's at offset {at} "
                        f"(sizes {len(data)} and {len(exp)}): "
                        f"{data[:at + 8][-40:]!r} vs {exp[:at + 8][-40:]!r}")
    return problems


def verify(outdir, manifest):
    failed = checked = 0
    with open(manifest) as fp:
        for line in fp:
            if not line.strip():
                continue
            name, dtype, order, endian, vname, *dims = line.split()
            path = os.path.join(outdir, name)
            shape = tuple(int(d) for d in dims)
            checked += 1
            for p in verify_one(path, dtype, order, endian, vname, shape):
                print(f"{path}: {p}", file=sys.stderr)
                failed += 1
    if checked == 0:
        print(f"{manifest}: no files to verify", file=sys.stderr)
        return 1
    print(f"{checked} files verified, {failed} problems")
    return 1 if failed else 0


def seeds(outdir):
    """Small headers, valid and not, for the fuzzer to start from."""
    os.makedirs(outdir, exist_ok=True)

    def header(a, version):
        out = io.BytesIO()
        npformat.write_array(out, a, version=version, allow_pickle=True)
        data = out.getvalue()
        hlen = 10 if version == (1, 0) else 12
        if version == (1, 0):
            hlen += int.from_bytes(data[8:10], "little")
        else:
            hlen += int.from_bytes(data[8:12], "little")
        return data[:hlen]

    def raw(dict_text, major=1):
        prefix = 10 if major == 1 else 12
        total = (prefix + len(dict_text) + 1 + 63) // 64 * 64
        body = dict_text + " " * (total - prefix - len(dict_text) - 1) + "\n"
        size = len(body).to_bytes(2 if major == 1 else 4, "little")
        return b"\x93NUMPY" + bytes([major, 0]) + size + body.encode()

    out = {
        "f4_2x3_v1": header(np.zeros((2, 3), "<f4"), (1, 0)),
        "f8_be_fortran_v2": header(np.asfortranarray(np.zeros((2, 3), ">f8")), (2, 0)),
        "b1_scalar_v3": header(np.zeros((), "?"), (3, 0)),
        "i8_empty_v1": header(np.zeros((0,), "<i8"), (1, 0)),
        "u2_3x0_v1": header(np.zeros((3, 0), ">u2"), (1, 0)),
        "f2_many_dims_v1": header(np.zeros((1,) * 31 + (2,), "<f2"), (1, 0)),
        "u1_5_v1": header(np.zeros(5, "u1"), (1, 0)),
        "c8_v1": header(np.zeros(2, "<c8"), (1, 0)),
        "structured_v1": header(np.zeros(2, [("a", "<f4"), ("b", "<i4")]), (1, 0)),
        "double_quotes_v1": raw('{"shape": (4, 5), "fortran_order": True, '
                                '"descr": "<i4"}'),
        "py2_longs_v1": raw("{'descr': '<u8', 'fortran_order': False, "
                            "'shape': (3L, 4L), }"),
        "spaces_v2": raw(" {\t'descr' : '=f4' ,\r\n 'fortran_order':False,"
                         "'shape':(7,1,) } ", 2),
        # kjudge's limit of 64 dimensions, and one more (numpy 1.x stops
        # at 32, so these are written by hand).
        "dims64_v1": raw("{'descr': '|u1', 'fortran_order': False, "
                         "'shape': (" + "1, " * 64 + "), }"),
        "dims65_v1": raw("{'descr': '|u1', 'fortran_order': False, "
                         "'shape': (" + "1, " * 65 + "), }"),
    }
    for name, data in out.items():
        with open(os.path.join(outdir, name + ".npy"), "wb") as fp:
            fp.write(data)
    return 0


def main(argv):
    if len(argv) == 3 and argv[1] == "gen":
        return gen(argv[2])
    if len(argv) == 4 and argv[1] == "verify":
        return verify(argv[2], argv[3])
    if len(argv) == 3 and argv[1] == "seeds":
        return seeds(argv[2])
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
