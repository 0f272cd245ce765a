"""BLAS: a tiled GEMM from one Mako template (kernels/gemm.cl.mako) on every OpenCL device,
and what builds on it: gemm, gemm_batched, matmul and `@`, dot, tensordot, inner, outer,
vdot, plus gemv and ger (pygpu's names). The dot of two float vectors is a bandwidth-bound
reduction, not a GEMM.

Transposes and views are strides: the kernel reads any layout, loading along whichever index
has unit stride. The tile shape comes from the device's tuned entry (gpuarr.tuning, written by
`python -m gpuarr tune gemm`, which samples GEMM_SPACE), else from a table per device class
(GEMM_TILES).
"""

import functools
import math

import numpy as np

from . import clblast, config, dtypes, elemwise, tuning
from .base import ArrayBase, broadcast_to, check_same_context, empty, to_device
from .errors import ArgumentError, ArgumentTypeError, ShapeError, UnsupportedError
from .kernels import get_kernel
from .launch import enqueue
from .reduction import ReductionKernel, device_class
from .reduction import sum as reduce_sum
from .ufuncs import UFUNCS

__all__ = [
    "FUNCTIONS", "GEMM_SPACE", "GEMM_TILES", "GEMV_SHAPES", "MMA_TILES", "ProductMethods",
    "builtin_tile", "check_tile", "dot", "gemm", "gemm_batched", "gemm_class", "gemm_into",
    "gemv", "ger", "inner", "matmul", "outer", "shape_classes", "tensordot", "vdot",
]

# Work-group tile (mwg x nwg, k step kwg), work-group shape (mdimc x ndimc) and local memory
# padding, options of kernels/gemm.cl.mako (vw, prefetch, db, unroll), by device class;
# "small" serves matrices with M or N under the big tile, "column" products with one column
# whose A is not row-major. CPUs take kernels/gemm_direct.cl.mako for float32/64 ("direct":
# outputs per work-item). Tuned entries (gpuarr/tuned/, the user's store) come first.
# The GPU big tile: the fastest SGEMM 4096 and 8192 on an H100 of those the tuner ranked
# highest (benchmarks/bench_blas.py --tile ...): 42.1 and 44.2 TFLOP/s.
GEMM_TILES = {
    "gpu": {"big": dict(mwg=128, nwg=128, kwg=8, mdimc=16, ndimc=16, pad=4, vw=4,
                        prefetch=1, db=1, unroll=1),
            "small": dict(mwg=32, nwg=32, kwg=16, mdimc=8, ndimc=8, pad=0, vw=1,
                          prefetch=0),
            "column": dict(mwg=128, nwg=1, kwg=32, mdimc=128, ndimc=1, pad=0, vw=1,
                           prefetch=1)},
    "cpu": {"direct": {"float32": dict(mwi=8, nwi=16), "float64": dict(mwi=8, nwi=8)},
            "big": dict(mwg=64, nwg=64, kwg=16, mdimc=8, ndimc=8, pad=0, vw=1,
                        prefetch=0),
            "small": dict(mwg=16, nwg=16, kwg=16, mdimc=4, ndimc=4, pad=0, vw=1,
                          prefetch=0)},
}
# No measurements of AMD or Intel GPUs yet; NVIDIA's is the "gpu" entry (H100/H200).
GEMM_TILES["nvidia"] = GEMM_TILES["amd"] = GEMM_TILES["intel"] = GEMM_TILES["gpu"]

# What `python -m gpuarr tune gemm` samples: values per template parameter, by device class
# and shape class (a parameter missing here keeps the built-in entry's value). check_tile
# holds the templates' constraints on them.
GEMM_SPACE = {
    "gpu": {"big": dict(mwg=(64, 128), nwg=(64, 128), kwg=(8,), mdimc=(8, 16, 32),
                        ndimc=(8, 16, 32), pad=(2, 4), vw=(2, 4), prefetch=(1,), db=(0, 1),
                        unroll=(0, 1)),
            "small": dict(mwg=(16, 32, 64), nwg=(16, 32, 64), kwg=(8, 16, 32),
                          mdimc=(4, 8, 16), ndimc=(4, 8, 16), pad=(0,), vw=(1, 2),
                          prefetch=(0, 1), db=(0, 1)),
            "column": dict(mwg=(64, 128, 256), nwg=(1,), kwg=(16, 32, 64),
                           mdimc=(64, 128, 256), ndimc=(1,), pad=(0,), vw=(1,),
                           prefetch=(0, 1), db=(0, 1))},
    "cpu": {"direct": dict(mwi=(2, 4, 6, 8, 12, 16), nwi=(4, 8, 16)),
            "big": dict(mwg=(16, 32, 64, 128), nwg=(16, 32, 64, 128), kwg=(8, 16, 32),
                        mdimc=(2, 4, 8, 16), ndimc=(2, 4, 8, 16), pad=(0,), vw=(1, 2, 4, 8),
                        prefetch=(0, 1), db=(0, 1)),
            "small": dict(mwg=(8, 16, 32), nwg=(8, 16, 32), kwg=(8, 16, 32),
                          mdimc=(2, 4, 8), ndimc=(2, 4, 8), pad=(0,), vw=(1, 2, 4),
                          prefetch=(0, 1), db=(0, 1))},
}
GEMM_SPACE["nvidia"] = GEMM_SPACE["amd"] = GEMM_SPACE["intel"] = GEMM_SPACE["gpu"]
# NVIDIA tensor cores (kernels/gemm_mma.cl.mako) by precision ("f64": float64 on FP64
# tensor cores; "3xtf32", "tf32": float32, see the gemm_precision flag), then by the least
# compute capability (major) an entry needs: mma shape, work-group tile bm x bn, k step bk,
# warps wm x wn, global -> local copy ("regs" or "async" with `stages` buffers), tile order
# (group_m), local layout (swizzle) and fragment pipelining (see the template). Used for
# products with m >= bm and n >= bn where the entry's probe passed on the device. Picked by
# sweeps of these parameters on an H100 (square row-major products, 4096/8192, TFLOP/s, one
# run each; `python -m gpuarr tune` does not search them yet): f64 52.4/51.0 (the unpipelined
# 64 x 128 tile before it: 46.6/44.3 in the same run; async copies 47-52; bk=16 tiles spill
# registers), tf32 146/158 (128 x 128 x 16: 134/140; async 104-149), 3xtf32 56.8/58.7
# (pipelined: 52-53, it spills registers). NVIDIA's OpenCL runs __local arrays past the 48 KiB
# it reports (144 KiB tried), but deeper slices lost: registers bind first.
MMA_TILES = {
    "f64": {9: dict(shape="m16n8k8", bm=128, bn=128, bk=8, wm=2, wn=4, copy="regs", stages=2,
                    group_m=16, swizzle=True, pipeline=True),
            8: dict(shape="m8n8k4", bm=128, bn=128, bk=8, wm=2, wn=4, copy="regs", stages=2,
                    group_m=0, swizzle=False, pipeline=False)},
    "3xtf32": {8: dict(shape="m16n8k8", bm=128, bn=128, bk=8, wm=2, wn=2, copy="regs",
                       stages=2, group_m=8, swizzle=False, pipeline=False)},
    "tf32": {8: dict(shape="m16n8k8", bm=128, bn=256, bk=16, wm=2, wn=4, copy="regs",
                     stages=2, group_m=8, swizzle=True, pipeline=True)},
}
# What gemm_precision=auto means for float32 where the probe passes: 3xTF32, whose error
# stays within the SIMT float32 kernel's (tests/test_gemm_mma.py::test_error_envelope).
AUTO_FLOAT32_PRECISION = "3xtf32"
# Largest relative error (max |error| / max |C|) a probe product may show per precision:
# float64 products for "f64", float32 ones for "3xtf32", 10-bit mantissas for "tf32".
MMA_PROBE_ERROR = {"f64": 1e-13, "3xtf32": 1e-5, "tf32": 5e-3}
# Size bounds: beyond them a work-item's unrolled code compiles for minutes.
MAX_OUTPUTS = 256  # accumulators per work-item
MAX_LOADS = 256  # elements of A and B a work-item stages per k step

# kernels/gemv.cl.mako (products with one column and a row-major A), by device class:
# bytes per vector load and vector accumulators per row; GPUs: work-group size and work-items
# per row, enough for one pass of `unroll` vectors over k within [least, most] (a warp at
# least, so that a warp never straddles two rows; short rows share a work-group); CPUs:
# rows per work-item (sharing x's loads), work-items per work-group. CPU measured on PoCL
# (2 cores) with benchmarks/bench_blas.py: 2048^2 float32 1.6-1.9x the copy's read rate
# (0.12x through the GEMM before), about the same over rows 1-4, unroll 2-8, 32-64 bytes.
# GPU (H100, 16384^2 float32, --gemv sweeps): 0.87x the copy's read+write rate with rows of
# 128 work-items (256: 0.75x; unroll 2-8 and 8-byte loads within 0.05x).
GEMV_SHAPES = {
    "gpu": dict(local=256, vector_bytes=16, unroll=4, least_row_items=32, most_row_items=128),
    "cpu": dict(local=8, vector_bytes=64, unroll=4, rows=4),
}

_REAL = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def _acc_dtype(dt):
    if dt == np.float16:
        return np.dtype(np.float32)
    if dt.kind == "f":
        return dt
    if dt.kind in "biu":
        return np.dtype(np.int64 if dt.itemsize == 8 else np.int32)
    raise UnsupportedError(f"matrix products of {dt} arrays are not supported yet")


@functools.lru_cache(maxsize=64)
def _vendor_class(vendor):
    vendor = vendor.lower()
    for word, cls in (("nvidia", "nvidia"), ("advanced micro devices", "amd"),
                      ("intel", "intel")):
        if word in vendor:
            return cls
    return "gpu"


def gemm_class(ctx):
    """The GEMM_TILES class of ctx's device: 'cpu', 'nvidia', 'amd', 'intel' or 'gpu' (any
    other GPU, e.g. through PoCL), from device_class and the platform's vendor."""
    cls = device_class(ctx)
    return _vendor_class(ctx.device.vendor) if cls == "gpu" else cls


def shape_classes(cls, dtype):
    """The shape classes gemm_into takes products of dtype to on devices of class cls."""
    tiles = GEMM_TILES[cls]
    if "direct" in tiles and np.dtype(dtype) in _REAL[1:]:
        return ["direct"]
    return [s for s in ("big", "small", "column") if s in tiles]


def builtin_tile(cls, dtype, shape_class):
    """GEMM_TILES' entry for a shape class (direct: per dtype)."""
    entry = GEMM_TILES[cls][shape_class]
    return entry[np.dtype(dtype).name] if shape_class == "direct" else entry


def _tile(ctx, dtype, m, n):
    """The parameters of the shape class an m x n product of dtype takes on ctx's device: the
    device's tuned entry (gpuarr.tuning), else GEMM_TILES'."""
    cls = gemm_class(ctx)
    tuned = tuning.entries(ctx, "gemm", dtype, cls)
    tiles = GEMM_TILES[cls]
    if "direct" in tiles and dtype in _REAL[1:]:
        return tuned.get("direct") or tiles["direct"][dtype.type.__name__]  # .name is slow
    if n == 1 and "column" in tiles:
        return tuned.get("column") or tiles["column"]
    big = tuned.get("big") or tiles["big"]
    if m >= big["mwg"] and n >= big["nwg"]:
        return big
    return tuned.get("small") or tiles["small"]


def _show(params):
    return ", ".join(f"{k}={v}" for k, v in params.items())


def check_tile(ctx, dtype, shape_class, params, cls=None):
    """Raise ArgumentError unless `params` are parameters that the template of `shape_class`
    (kernels/gemm.cl.mako, or gemm_direct.cl.mako for "direct") accepts for dtype on ctx's
    device: the keys of the built-in entry and of GEMM_SPACE, the templates' asserts, the
    device's work-group size and local memory, MAX_OUTPUTS and MAX_LOADS."""
    cls = cls or gemm_class(ctx)
    dt = np.dtype(dtype)
    what = f"GEMM {cls} {shape_class!r} {dt.name} parameters"
    if not isinstance(params, dict):
        raise ArgumentTypeError(f"{what} must be a dict, got {params!r}")
    try:
        builtin = builtin_tile(cls, dt, shape_class)
    except KeyError:
        raise ArgumentError(f"{what}: no such shape class for {dt.name} on {cls} devices "
                            f"(classes: {', '.join(shape_classes(cls, dt))})") from None
    # the built-in entry's keys, and those GEMM_SPACE adds (template parameters with defaults)
    needed = set(builtin) - {"backend"}
    allowed = needed | set(GEMM_SPACE.get(cls, {}).get(shape_class, {}))
    got = set(params) - {"backend"}
    if not needed <= got <= allowed:
        optional = f" and optionally {sorted(allowed - needed)}" if allowed - needed else ""
        raise ArgumentError(f"{what} {_show(params)}: expected the keys {sorted(needed)}"
                            f"{optional}, got {sorted(got)}")
    if params.get("backend", "gpuarr") not in ("gpuarr", "clblast"):
        raise ArgumentError(f"{what}: backend={params['backend']!r}; expected gpuarr or "
                            f"clblast")
    for key in got:
        value = params[key]
        if isinstance(builtin.get(key), int) and (type(value) is not int or value < 0):
            raise ArgumentError(f"{what}: {key}={value!r} must be a non-negative integer")
    p = params
    if shape_class == "direct":
        if p["nwi"] not in (2, 4, 8, 16) or p["mwi"] < 1:
            raise ArgumentError(f"{what}: mwi={p['mwi']} must be positive and nwi={p['nwi']} "
                                f"a vector width (2, 4, 8 or 16)")
        if p["mwi"] * p["nwi"] > MAX_OUTPUTS:
            raise ArgumentError(f"{what}: mwi * nwi = {p['mwi'] * p['nwi']} outputs per "
                                f"work-item, over MAX_OUTPUTS={MAX_OUTPUTS}")
        return
    mwg, nwg, kwg, mdimc, ndimc, pad, vw = (p[k] for k in ("mwg", "nwg", "kwg", "mdimc",
                                                          "ndimc", "pad", "vw"))
    if min(mwg, nwg, kwg, mdimc, ndimc) < 1 or vw not in (1, 2, 4, 8, 16):
        raise ArgumentError(f"{what} {_show(p)}: mwg, nwg, kwg, mdimc, ndimc must be positive "
                            f"and vw 1, 2, 4, 8 or 16")
    if mwg % mdimc or nwg % ndimc:
        raise ArgumentError(f"{what}: mwg={mwg} must be a multiple of mdimc={mdimc} and "
                            f"nwg={nwg} of ndimc={ndimc}")
    mwi, nwi = mwg // mdimc, nwg // ndimc
    if mwi % vw or nwi % vw or pad % vw:
        raise ArgumentError(f"{what}: vw={vw} must divide mwg/mdimc={mwi}, nwg/ndimc={nwi} "
                            f"and pad={pad}")
    if p.get("db") and not p.get("prefetch"):
        raise ArgumentError(f"{what}: db={p['db']} needs prefetch=1")
    threads = mdimc * ndimc
    if threads > ctx.max_work_group_size:
        raise ArgumentError(f"{what}: mdimc * ndimc = {threads} work-items, over the "
                            f"device's max_work_group_size {ctx.max_work_group_size}")
    local = (2 if p.get("db") else 1) * kwg * (mwg + nwg + 2 * pad) * _acc_dtype(dt).itemsize
    limit = ctx.device.cl_device.local_mem_size
    if local > limit:
        raise ArgumentError(f"{what} {_show(p)}: {local} bytes of local memory, over the "
                            f"device's {limit}")
    loads = -(-mwg * kwg // threads) + -(-kwg * nwg // threads)
    if mwi * nwi > MAX_OUTPUTS or loads > MAX_LOADS:
        raise ArgumentError(f"{what} {_show(p)}: {mwi * nwi} outputs and {loads} loads per "
                            f"work-item, over MAX_OUTPUTS={MAX_OUTPUTS} or "
                            f"MAX_LOADS={MAX_LOADS}")


tuning.register("gemm", lambda ctx, dt, shape_class, cls, params:
                check_tile(ctx, dt, shape_class, params, cls))


def _backend(ctx, tile, gemv):
    """'gpuarr' or 'clblast', from flag blas_backend; under auto, CLBlast only where the tile
    entry for this shape class says the tuner measured it faster and libclblast loads, and
    never for a product that kernels/gemv.cl.mako takes (`gemv`: bandwidth-bound already)."""
    flag = config.flags.blas_backend
    if flag == "auto":
        return ("clblast" if not gemv and tile.get("backend") == "clblast"
                and clblast.available() else "gpuarr")
    return flag


def _elements(a):
    return [s // a.itemsize for s in a.strides]


def gemm_into(alpha, a, b, beta, c):
    """c[p] = alpha * a[p] @ b[p] + beta * c[p] for 3-d GpuArrays of one dtype (batch p
    first; a batch stride may be 0). Enqueues and returns c."""
    if c.dtype.kind == "c":
        return _complex_gemm_into(alpha, a, b, beta, c)
    ctx = check_same_context(a, b, c)
    _, m, n = c.shape
    k = a.shape[2]
    if c.size == 0:
        return c
    c._check_writeable()
    dt = c.dtype
    _acc_dtype(dt)  # raises for dtypes without a GEMM
    dtypes.check_device(dt, ctx)
    if k == 0:  # an empty sum: beta * c
        return c.fill(0) if beta == 0 else c._assign(UFUNCS["multiply"](c, beta))
    parts = _split_k_parts(c, k)
    if parts:
        return _gemm_split_k(alpha, a, b, beta, c, parts)
    prec = _mma_precision(dt)
    if prec:
        mma = _mma_tile(ctx, prec)
        if mma and m >= mma["bm"] and n >= mma["bn"]:
            return _gemm_mma(ctx, alpha, a, b, beta, c, prec, mma)
    tile = _tile(ctx, dt, m, n)
    gemv = _gemv_operands(a, b, c)
    if (_backend(ctx, tile, gemv is not None) == "clblast"
            and clblast.gemm_into(alpha, a, b, beta, c) is not None):
        return c  # else a layout or dtype CLBlast cannot take: gpuarr's kernels below
    if gemv is not None:
        return _gemv_into(ctx, alpha, gemv[0], gemv[1], beta, gemv[2])
    if device_class(ctx) == "cpu" and dt in _REAL[1:]:
        if b.strides[2] != b.itemsize or abs(b.strides[1]) % 4096 == 0:
            b = _packed(b)  # O(K N)
        return _gemm_direct(ctx, alpha, a, b, beta, c, tile)
    if m == 1 and n > 1:  # a row times a matrix: the transposed problem has one column
        return gemm_into(alpha, b.swapaxes(1, 2), a.swapaxes(1, 2), beta, c.swapaxes(1, 2))
    return _gemm_tiled(ctx, alpha, a, b, beta, c, tile)


# A long sum of products is split along k into chunks whose partial products are summed by
# a reduction: one float32 accumulator over 2^20 terms kept 3 digits fewer than numpy
# (x.T @ x of a 2^20 x 8 array: 4.8e-4 relative error against numpy's 8e-7), and an output
# of a few tiles leaves most of a GPU idle while one work-group walks all of k.
_SPLIT_K_CHUNK = 4096        # k per chunk, at least
_SPLIT_K_BYTES = 256 << 20   # the partial products' buffer, at most


def _split_k_parts(c, k):
    """The number of k chunks for a single float32/float64 product into c, or 0 (no split):
    k at least four chunks long and many times the output's sides."""
    _, m, n = c.shape
    if c.shape[0] != 1 or c.dtype not in _REAL[1:] or k < 4 * _SPLIT_K_CHUNK or \
            k < 16 * max(m, n):
        return 0
    parts = min(k // _SPLIT_K_CHUNK, _SPLIT_K_BYTES // (m * n * c.itemsize))
    return parts if parts >= 2 else 0


def _gemm_split_k(alpha, a, b, beta, c, parts):
    """gemm_into over `parts` chunks of k (one batched product into partials, the rest of k
    as one more), then c = sum of the partials + beta * c."""
    _, m, n = c.shape
    k = a.shape[2]
    chunk = k // parts
    (_, sam, sak), (_, sbk, sbn) = a.strides, b.strides
    full = parts * chunk
    partial = ArrayBase._empty(c.context, (parts + (full < k), m, n), c.dtype)
    gemm_into(alpha, a._view((parts, m, chunk), (chunk * sak, sam, sak)),
              b._view((parts, chunk, n), (chunk * sbk, sbk, sbn)), 0, partial[:parts])
    if full < k:
        gemm_into(alpha, a[:, :, full:], b[:, full:, :], 0, partial[parts:])
    if beta == 0:
        reduce_sum(partial, axis=0, out=c[0])
    else:
        UFUNCS["add"](reduce_sum(partial, axis=0), UFUNCS["multiply"](c[0], beta), out=c[0])
    return c


def _nv_capability(ctx):
    """(major, minor) compute capability of an NVIDIA GPU, else None."""
    if not ctx.device.is_gpu or _vendor_class(ctx.device.vendor) != "nvidia":
        return None
    dev = ctx.device.cl_device
    try:
        return dev.compute_capability_major_nv, dev.compute_capability_minor_nv
    except Exception:  # no cl_nv_device_attribute_query: pyopencl and drivers differ in what
        return None    # they raise (AttributeError, cl.LogicError, cl.RuntimeError)


def _mma_precision(dt):
    """The tensor-core precision a GEMM of dtype dt asks for (None: the SIMT kernels)."""
    if config.flags.blas_backend == "clblast":
        return None
    if dt == _REAL[2]:
        return "f64"
    if dt == _REAL[1]:
        flag = config.flags.gemm_precision
        return {"auto": AUTO_FLOAT32_PRECISION, "fp32": None}.get(flag, flag)
    return None


def _mma_ok(ctx, prec="f64"):
    """Whether GEMMs of precision `prec` (a key of MMA_TILES) run on ctx's tensor cores."""
    return _mma_tile(ctx, prec) is not None


def _mma_tile(ctx, prec):
    """MMA_TILES[prec]'s entry for ctx's device: an NVIDIA GPU whose compute capability the
    entry needs, on which the kernel builds and a probe product is right; else None.
    Probed once per context and precision (ctx.state)."""
    key = ("gemm_mma", prec)
    if key not in ctx.state:
        cc = _nv_capability(ctx)
        tiles = MMA_TILES[prec]
        majors = [v for v in tiles if cc and v <= cc[0]]
        entry = tiles[max(majors)] if majors and (prec != "f64" or ctx.fp64) else None
        ctx.state[key] = entry if entry and _mma_probe(ctx, prec, entry) else None
    return ctx.state[key]


def _mma_probe(ctx, prec, tile):
    """Build the tensor-core kernel and check one ragged product against numpy (within
    MMA_PROBE_ERROR); any failure (a driver without inline PTX, a wrong result) is False,
    never an error for the user."""
    rng = np.random.default_rng(6)
    m, n, k = tile["bm"] + 3, tile["bn"] + 5, 3 * tile["bk"] + 1
    dt = _REAL[2] if prec == "f64" else _REAL[1]
    a, b, c = ((rng.random(s) - 0.5).astype(dt) for s in ((1, m, k), (1, k, n), (1, m, n)))
    try:
        out = to_device(c, ctx)
        _gemm_mma(ctx, 0.5, to_device(a, ctx), to_device(b, ctx), -1.0, out, prec, tile)
        got = out.get()
    except Exception:
        return False
    ref = 0.5 * (a.astype(np.float64) @ b) - c
    return bool(np.max(np.abs(got - ref)) <= MMA_PROBE_ERROR[prec] * np.max(np.abs(ref)))


def _vector_width(x, unit_axis, tile_len, most):
    """Elements per aligned vector load of x along unit_axis (of its 3 axes): the largest
    power of two <= most that divides tile_len, x's offset and its other strides, where x
    has unit stride there; else 1."""
    strides = _elements(x)
    if strides[unit_axis] != 1:
        return 1
    others = [s for i, s in enumerate(strides) if i != unit_axis and x.shape[i] > 1]
    v = most
    while v > 1 and any(s % v for s in (tile_len, x.offset // x.itemsize, *others)):
        v //= 2
    return v


def _gemm_mma(ctx, alpha, a, b, beta, c, prec, tile):
    """GEMM on tensor cores (kernels/gemm_mma.cl.mako) at precision `prec` with `tile`, an
    entry as MMA_TILES'. Local memory holds each operand along its unit-stride index."""
    batch, m, n = c.shape
    k = a.shape[2]
    _, a_sm, a_sk = _elements(a)
    _, b_sk, b_sn = _elements(b)
    a_mk = not (abs(a_sm) == 1 and abs(a_sk) != 1)
    b_nk = not (abs(b_sn) == 1 and abs(b_sk) != 1)
    most = 16 // c.itemsize
    vec = min(_vector_width(a, 2 if a_mk else 1, tile["bk"] if a_mk else tile["bm"], most),
              _vector_width(b, 1 if b_nk else 2, tile["bk"] if b_nk else tile["bn"], most))
    params = dict(tile, prec=prec, a_mk=a_mk, b_nk=b_nk, vec=vec,
                  edge_mn=bool(m % tile["bm"] or n % tile["bn"]),
                  edge_k=bool(k % tile["bk"]), use_beta=beta != 0)
    key = ("gemm_mma", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [c.dtype.type] * 2 + ([None] + [np.int64] * 4) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm_mma.cl.mako", arg_dtypes,
                                                name="gemm_mma", **params)
    threads = 32 * tile["wm"] * tile["wn"]
    size = (-(-m // tile["bm"]) * threads, -(-n // tile["bn"]), batch)
    return _launch(ctx, kernel, size, (threads, 1, 1), alpha, a, b, beta, c)


def _gemm_tiled(ctx, alpha, a, b, beta, c, tile):
    """The tiled kernel (kernels/gemm.cl.mako) with `tile`, an entry as GEMM_TILES' (the
    tuner passes its candidates here)."""
    batch, m, n = c.shape
    k = a.shape[2]
    dt = c.dtype
    acc = _acc_dtype(dt)
    _, a_sm, a_sk = _elements(a)
    _, b_sk, b_sn = _elements(b)
    _, c_sm, c_sn = _elements(c)
    params = dict(tile, dtype=dt.name, acc_dtype=acc.name,
                  edge_mn=bool(m % tile["mwg"] or n % tile["nwg"]), edge_k=bool(k % tile["kwg"]),
                  use_beta=beta != 0,
                  a_fast="m" if abs(a_sm) == 1 and abs(a_sk) != 1 else "k",
                  b_fast="n" if abs(b_sn) == 1 and abs(b_sk) != 1 else "k",
                  c_fast="m" if abs(c_sm) == 1 and abs(c_sn) != 1 else "n")
    params.pop("backend", None)
    key = ("gemm", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [acc.type] * 2 + ([None] + [np.int64] * 4) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm.cl.mako", arg_dtypes,
                                                name="gemm", **params)
    threads = tile["mdimc"] * tile["ndimc"]
    size = (-(-m // tile["mwg"]) * threads, -(-n // tile["nwg"]), batch)
    return _launch(ctx, kernel, size, (threads, 1, 1), alpha, a, b, beta, c)


def _complex_gemm_into(alpha, a, b, beta, c):
    """gemm_into for complex64/128: four real GEMMs on the real and imaginary parts, which are
    views of the same storage (element strides doubled, +1 for the imaginary part)."""
    if c.size == 0:
        return c
    c._check_writeable()
    alpha, beta = complex(alpha), complex(beta)
    if alpha.imag or beta.imag:  # the product into a temporary, then alpha * T + beta * C
        t = _complex_gemm_into(1, a, b, 0, empty(c.shape, c.dtype, context=c.context))
        t = UFUNCS["multiply"](t, alpha, out=t)
        if beta != 0:
            t = UFUNCS["add"](t, UFUNCS["multiply"](c, beta), out=t)
        return c._assign(t)
    real = np.finfo(c.dtype).dtype
    ar, ai, br, bi, cr, ci = (x._view(x.shape, x.strides, offset=x.offset + part * real.itemsize,
                                      dtype=real) for x in (a, b, c) for part in (0, 1))
    alpha, beta = alpha.real, beta.real
    gemm_into(alpha, ar, br, beta, cr)
    gemm_into(-alpha, ai, bi, 1, cr)
    gemm_into(alpha, ar, bi, beta, ci)
    gemm_into(alpha, ai, br, 1, ci)
    return c


def _launch(ctx, kernel, size, local, alpha, a, b, beta, c):
    """The GEMM kernels' launch: sizes, alpha and beta (in the accumulator's type: integer
    kernels take integer scalars), then each matrix as buffer, offset and three strides."""
    acc = _acc_dtype(c.dtype).type
    args = [c.shape[1], c.shape[2], a.shape[2], acc(alpha), acc(beta)]
    for x in (a, b, c):
        sb, s1, s2 = _elements(x)
        args += [x.storage, x.offset // x.itemsize, s1, s2, sb]
    return _enqueue(ctx, kernel, size, local, args, (a, b), c)


def _enqueue(ctx, kernel, size, local, args, inputs, out):
    """Enqueue `kernel` after the last writes of its arrays; `out` records the event."""
    enqueue(ctx, kernel, size, local, args, [x.storage for x in inputs], [out.storage])
    return out


def _gemm_direct(ctx, alpha, a, b, beta, c, shape=None):
    """The CPU kernel (kernels/gemm_direct.cl.mako): B has unit stride along n. `shape`
    (mwi, nwi) defaults to the device's entry (the tuner passes its candidates)."""
    batch, m, n = c.shape
    shape = shape or _tile(ctx, c.dtype, m, n)
    params = dict(shape, dtype=c.dtype.name, use_beta=beta != 0,
                  c_unit=c.strides[2] == c.itemsize)
    params.pop("backend", None)
    key = ("gemm_direct", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [c.dtype.type] * 2 + ([None] + [np.int64] * 4) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm_direct.cl.mako", arg_dtypes,
                                                name="gemm_direct", **params)
    size = (-(-m // shape["mwi"]), -(-n // shape["nwi"]), batch)
    return _launch(ctx, kernel, size, None, alpha, a, b, beta, c)


def _packed(b):
    """A copy of b for the CPU kernel, which walks B's rows as vectors: unit stride along n,
    and rows not a multiple of 4 KiB apart (such rows share cache sets: at 2048 float32
    columns the kernel ran at 0.4x its rate at 2000)."""
    batch, k, n = b.shape
    pad = 64 // b.itemsize if n * b.itemsize % 4096 == 0 else 0
    return empty((batch, k, n + pad), b.dtype, context=b.context)[:, :, :n]._assign(b)


def _gemv_operands(a, b, c):
    """(A, x, y) of gemm_into's operands for kernels/gemv.cl.mako, which takes one column
    and a row-major A (x @ A: the transpose, when A's transpose is row-major), else None."""
    m, n = c.shape[1:]
    if n == 1 and _row_major(a):
        return a, b, c
    if m == 1 and n > 1 and _row_major(b.swapaxes(1, 2)):
        return b.swapaxes(1, 2), a.swapaxes(1, 2), c.swapaxes(1, 2)
    return None


def _row_major(a):
    """a[p] has unit stride along k but not along m (or is one row): the layout of
    kernels/gemv.cl.mako."""
    _, sm, sk = _elements(a)
    return abs(sk) == 1 and (abs(sm) != 1 or a.shape[1] == 1)


def _gemv_into(ctx, alpha, a, b, beta, c):
    """gemm_into for one column (n == 1) and a row-major a: kernels/gemv.cl.mako, which reads
    A once, as vectors (bandwidth-bound)."""
    if a.strides[2] < 0:  # k reversed in both operands: unit stride again
        a, b = a[:, :, ::-1], b[:, ::-1]
    batch, m, _ = c.shape
    k = a.shape[2]
    cls = device_class(ctx)
    shape = GEMV_SHAPES[cls]
    acc = _acc_dtype(c.dtype)
    vec = min(16, max(2, shape["vector_bytes"] // c.itemsize))
    params = dict(dtype=c.dtype.name, acc_dtype=acc.name, vec=vec, unroll=shape["unroll"])
    if cls == "gpu":
        local = 1 << (min(shape["local"], ctx.max_work_group_size).bit_length() - 1)
        row_items = 1 << max(0, (-(-k // (vec * shape["unroll"])) - 1).bit_length())
        row_items = min(local, shape["most_row_items"],
                        max(row_items, shape["least_row_items"]))
        params.update(mode="group", local_size=local, rows=0)
        size = (-(-m // (local // row_items)) * local, 1, batch)
    else:
        items, row_items = -(-m // shape["rows"]), 1
        # groups for both cores wherever there are rows enough
        local = max(1, min(shape["local"], items // (2 * ctx.device.compute_units)))
        params.update(mode="item", local_size=0, rows=shape["rows"])
        size = (-(-items // local) * local, 1, batch)
    key = ("gemv", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [acc.type] * 2 + [None, np.int64, np.int64, np.int64] * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemv.cl.mako", arg_dtypes,
                                                name="gemv", **params)
    args = [m, k, row_items, acc.type(alpha), acc.type(beta)]  # gemv's default beta is 0.0
    for x in (a, b, c):
        sb, s1, _ = _elements(x)
        args += [x.storage, x.offset // x.itemsize, s1, sb]
    return _enqueue(ctx, kernel, size, (local, 1, 1), args, (a, b), c)


def _as_batch(x):
    """A 2-d array as a batch of one (a view)."""
    return x._view((1, *x.shape), (0, *x.strides))


def _check_matrices(name, *arrays):
    for x in arrays:
        if not isinstance(x, ArrayBase):
            raise ArgumentTypeError(f"{name} takes GpuArrays, got {type(x).__name__}")
    dt = arrays[0].dtype
    for x in arrays[1:]:
        if x.dtype != dt:
            raise ArgumentTypeError(f"{name}: dtypes differ ({dt} and {x.dtype}); cast one "
                                    f"with astype")
    return check_same_context(*arrays)


def gemm(alpha, A, B, beta=0.0, C=None, trans_a=False, trans_b=False, overwrite_c=False):
    """alpha * op(A) @ op(B) + beta * C (op: transpose where asked), pygpu's blas.gemm.
    C is written in place only with overwrite_c=True; otherwise a new array is returned."""
    arrays = (A, B) if C is None else (A, B, C)
    ctx = _check_matrices("gemm", *arrays)
    for x in arrays:
        if x.ndim != 2:
            raise ShapeError(f"gemm takes 2-d arrays, got shape {x.shape}")
    op_a, op_b = (A.T if trans_a else A), (B.T if trans_b else B)
    (m, k), (k2, n) = op_a.shape, op_b.shape
    if k != k2:
        raise ShapeError(f"gemm: op(A) is {op_a.shape}, op(B) is {op_b.shape}: inner "
                         f"dimensions differ")
    if C is None:
        C, beta = empty((m, n), A.dtype, context=ctx), 0.0
    else:
        if C.shape != (m, n):
            raise ShapeError(f"gemm: C has shape {C.shape}, op(A) @ op(B) has {(m, n)}")
        if not overwrite_c:
            C = C.copy()
        elif C._may_share(A) or C._may_share(B):  # the kernel would read what it wrote
            return C._assign(gemm(alpha, A, B, beta, C, trans_a, trans_b))
    gemm_into(alpha, _as_batch(op_a), _as_batch(op_b), beta, _as_batch(C))
    return C


def gemm_batched(alpha, A, B, beta=0.0, C=None, trans_a=False, trans_b=False,
                 overwrite_c=False):
    """gemm over the first dimension of 3-d arrays (strided batches; a batch of 1 in A or B
    broadcasts)."""
    arrays = (A, B) if C is None else (A, B, C)
    ctx = _check_matrices("gemm_batched", *arrays)
    for x in arrays:
        if x.ndim != 3:
            raise ShapeError(f"gemm_batched takes 3-d arrays, got shape {x.shape}")
    op_a, op_b = (A.swapaxes(1, 2) if trans_a else A), (B.swapaxes(1, 2) if trans_b else B)
    batch = max(op_a.shape[0], op_b.shape[0])
    if op_a.shape[2] != op_b.shape[1] or {op_a.shape[0], op_b.shape[0]} - {1, batch}:
        raise ShapeError(f"gemm_batched: op(A) is {op_a.shape}, op(B) is {op_b.shape}")
    shape = (batch, op_a.shape[1], op_b.shape[2])
    if C is None:
        C, beta = empty(shape, A.dtype, context=ctx), 0.0
    elif C.shape != shape:
        raise ShapeError(f"gemm_batched: C has shape {C.shape}, the product has {shape}")
    elif not overwrite_c:
        C = C.copy()
    elif C._may_share(A) or C._may_share(B):  # the kernel would read what it wrote
        return C._assign(gemm_batched(alpha, A, B, beta, C, trans_a, trans_b))
    gemm_into(alpha, broadcast_to(op_a, (batch, *op_a.shape[1:])),
              broadcast_to(op_b, (batch, *op_b.shape[1:])), beta, C)
    return C


# ---------------------------------------------------------------- numpy's products

def _as_arrays(*xs):
    """xs as GpuArrays; host data goes to the first GpuArray's context (else the default)."""
    ctx = next((x.context for x in xs if isinstance(x, ArrayBase)), None)
    return [x if isinstance(x, ArrayBase) else to_device(np.asarray(x), ctx) for x in xs]


@functools.lru_cache(maxsize=256)
def _matmul_dtype(a, b):
    return np.matmul(np.zeros((1, 1), a), np.zeros((1, 1), b)).dtype


def _check_out(name, out, shape, dt, casting):
    """numpy's out= rules for products: the product's shape, a dtype it casts to."""
    if not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"{name}: out must be a GpuArray, got {type(out).__name__}")
    if out.shape != shape:
        raise ShapeError(f"{name}: out has shape {out.shape}, the product has {shape}")
    if not np.can_cast(dt, out.dtype, casting):
        raise ArgumentTypeError(f"{name}: cannot cast the product's {dt} to out's {out.dtype} "
                                f"with casting={casting!r}")
    return out


def matmul(a, b, out=None):
    """numpy.matmul: 1-d operands promoted and the added axis removed, batch dimensions
    broadcast; one batched GEMM launch."""
    a, b = _as_arrays(a, b)
    ctx = check_same_context(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ArgumentError("matmul: input operand does not have enough dimensions "
                            "(0-d arrays: use multiply)")
    dt = _matmul_dtype(a.dtype, b.dtype)
    if a.ndim == 1 and b.ndim == 1 and a.shape == b.shape and dt in _REAL[1:]:
        result = _dot_kernel(dt)(a.astype(dt, copy=False), b.astype(dt, copy=False))
        return result if out is None else _check_out("matmul", out, (), dt,
                                                     "same_kind")._assign(result)
    a2 = a._view((1, a.shape[0]), (0, a.strides[0])) if a.ndim == 1 else a
    b2 = b._view((b.shape[0], 1), (b.strides[0], 0)) if b.ndim == 1 else b
    if a2.shape[-1] != b2.shape[-2]:
        raise ShapeError(f"matmul: input operand 1 has a mismatch in its core dimension 0 "
                         f"(size {b2.shape[-2]} is different from {a2.shape[-1]}): shapes "
                         f"{a.shape} and {b.shape}")
    batch_shape = elemwise.broadcast_shape([a2.shape[:-2], b2.shape[:-2]])
    m, k, n = a2.shape[-2], a2.shape[-1], b2.shape[-1]
    shape = (*batch_shape, m, n)
    if a.ndim == 1:
        shape = shape[:-2] + shape[-1:]
    if b.ndim == 1:
        shape = shape[:-1]
    result = ArrayBase._empty(ctx, shape, dtypes.check_device(dt, ctx))
    batch = math.prod(batch_shape)
    a2, b2 = a2.astype(dt, copy=False), b2.astype(dt, copy=False)
    if batch_shape:
        a3, b3 = _batched(a2, batch_shape, (m, k)), _batched(b2, batch_shape, (k, n))
    else:  # (the common product: 3-d views without broadcasting)
        a3, b3 = a2._view((1, m, k), (0, *a2.strides)), b2._view((1, k, n), (0, *b2.strides))
    size = result.itemsize
    gemm_into(1, a3, b3, 0, result._view((batch, m, n), (m * n * size, n * size, size)))
    if out is not None:
        return _check_out("matmul", out, shape, dt, "same_kind")._assign(result)
    return result


def _batched(x, batch_shape, core):
    """x broadcast to batch_shape + core, as a 3-d (batch, *core) view (a copy only where the
    batch dimensions do not collapse into one stride)."""
    x = broadcast_to(x, (*batch_shape, *core))
    batch = math.prod(batch_shape)
    dims, (strides,) = elemwise.collapse(list(batch_shape), [list(x.strides[:-2])])
    if len(dims) <= 1:
        return x._view((batch, *core), (strides[0] if dims else 0, *x.strides[-2:]))
    return x.copy().reshape(batch, *core)


def tensordot(a, b, axes=2):
    """numpy.tensordot as one GEMM over the contracted axes (moved last in a, first in b)."""
    a, b = _as_arrays(a, b)
    if isinstance(axes, int):
        axes_a, axes_b = list(range(a.ndim - axes, a.ndim)), list(range(axes))
    else:
        axes_a, axes_b = ([x] if isinstance(x, int) else list(x) for x in axes)
    axes_a = [x % a.ndim for x in axes_a] if a.ndim else axes_a
    axes_b = [x % b.ndim for x in axes_b] if b.ndim else axes_b
    if len(axes_a) != len(axes_b) or any(a.shape[i] != b.shape[j]
                                         for i, j in zip(axes_a, axes_b)):
        raise ShapeError(f"tensordot: shape-mismatch for sum: {a.shape} axes {axes_a}, "
                         f"{b.shape} axes {axes_b}")
    free_a = [i for i in range(a.ndim) if i not in axes_a]
    free_b = [i for i in range(b.ndim) if i not in axes_b]
    k = math.prod(a.shape[i] for i in axes_a)
    # explicit sizes: -1 is ambiguous when k is 0
    at = a.transpose(*free_a, *axes_a).reshape(math.prod(a.shape[i] for i in free_a), k)
    bt = b.transpose(*axes_b, *free_b).reshape(k, math.prod(b.shape[i] for i in free_b))
    return matmul(at, bt).reshape(*(a.shape[i] for i in free_a),
                                  *(b.shape[i] for i in free_b))


def dot(a, b, out=None):
    """numpy.dot: matmul for 1-d and 2-d operands, a sum over the last axis of a and the
    second-to-last of b otherwise, multiply for 0-d."""
    a, b = _as_arrays(a, b)
    if a.ndim == 0 or b.ndim == 0:
        result = UFUNCS["multiply"](a, b)
    elif a.ndim <= 2 and b.ndim <= 2:
        result = matmul(a, b)
    else:
        result = tensordot(a, b, ([-1], [-2 if b.ndim > 1 else -1]))
    if out is None:
        return result
    return _check_out("dot", out, result.shape, result.dtype, "no")._assign(result)


def inner(a, b):
    a, b = _as_arrays(a, b)
    if a.ndim == 0 or b.ndim == 0:
        return UFUNCS["multiply"](a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """numpy.outer: one elementwise product of a column and a row (no GEMM needed)."""
    a, b = (x.ravel() for x in _as_arrays(a, b))
    return UFUNCS["multiply"](a.reshape(a.size, 1), b.reshape(1, b.size))


def vdot(a, b):
    """numpy.vdot: the conjugate of a (flattened) dotted with b."""
    a, b = (x.ravel() for x in _as_arrays(a, b))
    if a.dtype.kind == "c":
        a = UFUNCS["conjugate"](a)
    return dot(a, b)


# ---------------------------------------------------------------- level 1 and 2

@functools.lru_cache(maxsize=64)
def _dot_kernel(dt):
    ctype = dtypes.cl_type(dt)
    return ReductionKernel(dt, "0", "a + b", "x[i] * y[i]",
                           f"const {ctype} *x, const {ctype} *y", name="dot")


def gemv(alpha, A, x, beta=0.0, y=None, trans_a=False, overwrite_y=False):
    """alpha * op(A) @ x + beta * y (pygpu's blas.gemv)."""
    arrays = (A, x) if y is None else (A, x, y)
    _check_matrices("gemv", *arrays)
    if A.ndim != 2 or x.ndim != 1 or (y is not None and y.ndim != 1):
        raise ShapeError(f"gemv takes a 2-d A and 1-d x, y; got {A.shape}, {x.shape}")
    op_a = A.T if trans_a else A
    if op_a.shape[1] != x.shape[0] or (y is not None and y.shape[0] != op_a.shape[0]):
        raise ShapeError(f"gemv: op(A) is {op_a.shape}, x is {x.shape}"
                         f"{'' if y is None else f', y is {y.shape}'}: expected x of "
                         f"({op_a.shape[1]},) and y of ({op_a.shape[0]},)")
    c = None if y is None else y.reshape(y.shape[0], 1)
    result = gemm(alpha, op_a, x.reshape(x.shape[0], 1), beta, c, overwrite_c=overwrite_y)
    return result.reshape(result.shape[0])


def ger(alpha, x, y, A=None, overwrite_a=False):
    """A + alpha * outer(x, y) (pygpu's blas.ger; A of zeros when None): elementwise."""
    _check_matrices("ger", *((x, y) if A is None else (x, y, A)))
    if x.ndim != 1 or y.ndim != 1:
        raise ShapeError(f"ger takes 1-d x and y, got {x.shape} and {y.shape}")
    update = UFUNCS["multiply"](outer(x, y), alpha) if alpha != 1 else outer(x, y)
    update = update.astype(x.dtype, copy=False)  # a numpy float64 alpha must not promote A
    if A is None:
        return update
    if A.shape != (x.shape[0], y.shape[0]):
        raise ShapeError(f"ger: A has shape {A.shape}, outer(x, y) has "
                         f"{(x.shape[0], y.shape[0])}")
    if overwrite_a:
        return UFUNCS["add"](A, update, out=A)
    return UFUNCS["add"](A, update)


class ProductMethods:
    """`a @ b` and `a.dot(b)`. A mixin of GpuArray (gpuarr/array.py)."""

    def __matmul__(self, other):
        return matmul(self, other)

    def __rmatmul__(self, other):
        return matmul(other, self)

    def dot(self, b, out=None):
        """numpy.dot (see gpuarr.dot)."""
        return dot(self, b, out)


FUNCTIONS = {f.__name__: f for f in (matmul, dot, tensordot, inner, outer, vdot)}
