"""BLAS: GEMM on every OpenCL device (kernels/gemm*.cl.mako, gemv.cl.mako) and what builds
on it: gemm, gemm_batched, matmul and `@`, dot, tensordot, inner, outer, vdot, plus gemv and
ger (pygpu's names). The dot of two float vectors is a bandwidth-bound reduction, not a GEMM.

Transposes and views are strides: the kernels read any layout, loading along whichever index
has unit stride (a product may run as its transpose, c.T = b.T @ a.T, to find one: no copy
of the large operand for a narrow output or a GEMV in either layout). One dispatch table
(FAMILIES) chooses how a product runs: each entry has an applicability test and a cost
estimate, fed by the tile tables (GEMM_TILES, MMA_TILES) and the device's tuned entries
(gpuarr.tuning, written by `python -m gpuarr tune gemm`, which samples GEMM_SPACE). The
choice is made once per context, dtype, layout and shape and kept as a GemmPlan in
ctx.plans: a repeated product costs one dictionary lookup and one launch.
"""

import functools
import math
from collections.abc import Callable
from typing import NamedTuple

import numpy as np

from . import clblast, config, dtypes, elemwise, tuning
from .base import ArrayBase, _nocopy_reshape, broadcast_to, check_same_context, empty, to_device
from .errors import ArgumentError, ArgumentTypeError, ShapeError, UnsupportedError
from .kernels import get_kernel, render
from .launch import enqueue
from .reduction import ReductionKernel, device_class, sum_first_axis
from .reduction import sum as reduce_sum
from .ufuncs import UFUNCS

__all__ = [
    "DIRECT_CLASSES", "DIRECT_GROUP", "FAMILIES", "FUNCTIONS", "GEMM_EFFICIENCY", "GEMM_SPACE",
    "GEMM_TILES", "GEMV_SHAPES", "MMA_CLASSES", "MMA_MID_TILES", "MMA_TILES",
    "NARROW_SHAPES", "TINY_K",
    "TINY_OUTPUTS", "Family", "GemmPlan", "Problem", "ProductMethods", "builtin_tile",
    "check_tile", "dot", "forget_plans", "gemm", "gemm_batched", "gemm_class", "gemm_into",
    "gemv", "ger", "inner", "matmul", "outer", "shape_classes", "tensordot", "vdot",
]

# Work-group tile (mwg x nwg, k step kwg), work-group shape (mdimc x ndimc) and local memory
# padding, options of kernels/gemm.cl.mako (vw, prefetch, db, unroll), by device class and
# shape class: "big", "medium" and "small" tiles (dispatch weighs them by GEMM_EFFICIENCY and
# how many of them keep the compute units busy), "column" for products with one column whose
# A is not row-major. kernels/gemm_direct.cl.mako (outputs per work-item, no local memory)
# takes float32/64 on CPUs ("direct") and tiny float32/64 products on GPUs ("tiny").
# Tuned entries (gpuarr/tuned/, the user's store) come first.
# The GPU big tile: the fastest SGEMM 4096 and 8192 on an H100 of those the tuner ranked
# highest (benchmarks/bench_blas.py --tile ...): 42.1 and 44.2 TFLOP/s. The medium and tiny
# GPU entries are unmeasured starting points for `python -m gpuarr tune`. The CPU float64
# entry: 8 x 16 (two AVX-512 vectors a row) against 8 x 8 on PoCL (2 Zen 5 cores, best of 3
# on a shared machine): 1024^2 20 ms / 48 ms, 2000 x 784 @ 784 x 500 13.4 / 24.7 ms.
GEMM_TILES = {
    "gpu": {"big": dict(mwg=128, nwg=128, kwg=8, mdimc=16, ndimc=16, pad=4, vw=4,
                        prefetch=1, db=1, unroll=1),
            "medium": dict(mwg=64, nwg=64, kwg=16, mdimc=16, ndimc=16, pad=4, vw=4,
                           prefetch=1, db=1, unroll=1),
            "small": dict(mwg=32, nwg=32, kwg=16, mdimc=8, ndimc=8, pad=0, vw=1,
                          prefetch=0),
            "column": dict(mwg=128, nwg=1, kwg=32, mdimc=128, ndimc=1, pad=0, vw=1,
                           prefetch=1),
            "tiny": {"float32": dict(mwi=2, nwi=4), "float64": dict(mwi=2, nwi=2)}},
    "cpu": {"direct": {"float32": dict(mwi=8, nwi=16), "float64": dict(mwi=8, nwi=16)},
            "big": dict(mwg=64, nwg=64, kwg=16, mdimc=8, ndimc=8, pad=0, vw=1,
                        prefetch=0),
            "small": dict(mwg=16, nwg=16, kwg=16, mdimc=4, ndimc=4, pad=0, vw=1,
                          prefetch=0)},
}
# CPUs whose vectors hold 8 float32 (AVX2: 16 registers of 256 bits, all of which the 8 x 16
# float32 tile's accumulators take): their "direct" entries. PoCL 3 on a 2-core AMD EPYC (Zen
# 3), SGEMM 512 / 1024 / 2048, best of 5, two sweeps: 6 x 16 2.1-2.4 / 13.4-16.1 / 177-197 ms,
# 8 x 16 3.0-4.9 / 25-27 / 178-203 ms, 4 x 16 2.2 / 16.1 / 240 ms (numpy 2.3 / 12.0 / 111
# ms); float64 showed no clear winner over 8 x 16.
CPU_DIRECT_BY_VECTOR = {8: {"float32": dict(mwi=6, nwi=16)}}
# CPU float32 products whose m, n and k all reach this take a copy of B in panels of the
# kernel's vector width (_panels): a work-item's loads walk one contiguous stretch, not a
# page a row. 2-core AMD EPYC (Zen 3, AVX2), best of 3, before -> panels (numpy): the
# distribution's PoCL 3 SGEMM 1024 / 2000 / 2048 20.4 / 355 / 285 -> 21.1 / 141 / 150 ms
# (16.1 / 90 / 93); Intel's runtime 22.0 / 278 / 321 -> 23.2 / 102 / 131 ms. float64 (8 x 16
# tile), a loaded machine: 1024 / 2048 88 / 774 -> 97 / 769 ms, not taken.
CPU_PANELS_LEAST = 1536
# Shape classes of kernels/gemm_direct.cl.mako (parameters per dtype: mwi, nwi), and its
# work-group on GPUs.
DIRECT_CLASSES = ("direct", "tiny")
DIRECT_GROUP = (8, 8)
# The tiled shape classes' throughput per compute unit relative to the big tile's, the
# work-groups of each a compute unit runs at once, and a work-group's fixed cost in steps of
# k (its first slices' loads and C's stores, exposed where few work-groups share a unit):
# dispatch's cost estimate (_tile_cost). A tuned entry changes the tile, not these. The SIMT
# classes' are estimates; the tensor-core tiles' fixed costs and the mid tile's throughput
# fit an H200's times (.device/lowk.py, float32 and float64): 4096 x 64 x 4096 big tile 177
# / 265 us, mid 122 / 213; 3840 x 256 x 3840 247 / 338, 216 / 293; 3000^3 1247 / 1318,
# 1312 / 1336 (the big tile's prologue, unhidden at one work-group a unit, is ~220 steps of k).
GEMM_EFFICIENCY = {
    "gpu": {"big": (1.0, 1, 0), "medium": (0.6, 2, 0), "small": (0.3, 4, 0),
            "column": (0.3, 1, 0), "tiny": (0.25, 4, 0), "mma": (1.0, 1, 220),
            "mma_mid": (0.8, 2, 100)},
    "cpu": {"big": (1.0, 1, 0), "small": (0.25, 1, 0)},
}
# Products with at most this many outputs and k take "tiny" (where B has unit stride along n).
TINY_OUTPUTS, TINY_K = 4096, 1024
# No measurements of AMD or Intel GPUs yet; NVIDIA's is the "gpu" entry (H100/H200).
for _cls in ("nvidia", "amd", "intel"):
    GEMM_TILES[_cls], GEMM_EFFICIENCY[_cls] = GEMM_TILES["gpu"], GEMM_EFFICIENCY["gpu"]

# What `python -m gpuarr tune gemm` samples: values per template parameter, by device class
# and shape class (a parameter missing here keeps the built-in entry's value). check_tile
# holds the templates' constraints on them.
GEMM_SPACE = {
    "gpu": {"big": dict(mwg=(64, 128), nwg=(64, 128), kwg=(8,), mdimc=(8, 16, 32),
                        ndimc=(8, 16, 32), pad=(2, 4), vw=(2, 4), prefetch=(1,), db=(0, 1),
                        unroll=(0, 1)),
            "medium": dict(mwg=(32, 64), nwg=(32, 64), kwg=(8, 16, 32), mdimc=(8, 16),
                           ndimc=(8, 16), pad=(0, 2, 4), vw=(1, 2, 4), prefetch=(0, 1),
                           db=(0, 1), unroll=(0, 1)),
            "small": dict(mwg=(16, 32, 64), nwg=(16, 32, 64), kwg=(8, 16, 32),
                          mdimc=(4, 8, 16), ndimc=(4, 8, 16), pad=(0,), vw=(1, 2),
                          prefetch=(0, 1), db=(0, 1)),
            "tiny": dict(mwi=(1, 2, 4, 8), nwi=(2, 4, 8)),
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
GEMM_SPACE["amd"] = GEMM_SPACE["intel"] = GEMM_SPACE["gpu"]
# NVIDIA tensor cores (kernels/gemm_mma.cl.mako) by precision ("f64": float64 on FP64
# tensor cores; "3xtf32", "tf32": float32, see the gemm_precision flag), then by the least
# compute capability (major) an entry needs: mma shape, work-group tile bm x bn, k step bk,
# warps wm x wn, global -> local copy ("regs" or "async" with `stages` buffers), tile order
# (group_m), local layout (swizzle), fragment pipelining and sync (see the template). Used for
# products with m >= bm and n >= bn where the entry's probe passed on the device. Picked by
# sweeps of these parameters on an H100 (square row-major products, 4096/8192, TFLOP/s, one
# run each, before `python -m gpuarr tune` searched them): f64 52.4/51.0 (the unpipelined
# 64 x 128 tile before it: 46.6/44.3 in the same run; async copies 47-52; bk=16 tiles spill
# registers), tf32 146/158 (128 x 128 x 16: 134/140; async 104-149), 3xtf32 56.8/58.7
# (pipelined: 52-53, it spills registers). NVIDIA's OpenCL runs __local arrays past the 48 KiB
# it reports (144 KiB tried), but deeper slices lost: registers bind first. f64 at bk=16
# since the template pipelines B's fragments (fewer registers than A's), with mbarriers
# (sync "mbar"): H200, profiling events, same run, 4096/8192 55.4/53.3 TFLOP/s against
# 53.4/52.8 with work-group barriers; bk=8 with barriers 51.1/51.3 (.device/dgemmabl.py);
# its slices published without branches (see the template): 57.0/53.3 against 55.2/52.0.
MMA_TILES = {
    "f64": {9: dict(shape="m16n8k8", bm=128, bn=128, bk=16, wm=2, wn=4, copy="regs", stages=2,
                    group_m=16, swizzle=True, pipeline=True, sync="mbar"),
            8: dict(shape="m8n8k4", bm=128, bn=128, bk=8, wm=2, wn=4, copy="regs", stages=2,
                    group_m=0, swizzle=False, pipeline=False)},
    "3xtf32": {8: dict(shape="m16n8k8", bm=128, bn=128, bk=8, wm=2, wn=2, copy="regs",
                       stages=2, group_m=8, swizzle=False, pipeline=False)},
    "tf32": {8: dict(shape="m16n8k8", bm=128, bn=256, bk=16, wm=2, wn=4, copy="regs",
                     stages=2, group_m=8, swizzle=True, pipeline=True)},
}
# Tensor-core tiles for mid-sized products, a quarter of MMA_TILES' (the same template and
# math): where the big tile leaves compute units idle (256-1024 on an H100), _mma_choice's
# estimate takes this one, once its own probe passed. H200, same run, with / without it
# (benchmarks/bench_blas.py --no-mma-mid): float32 256, 512, 1024 in 30, 41, 78 us / 44, 67,
# 111 us; float64 31, 44, 79 / 44, 63, 104 us; 2048 equal (the big tile). float64's
# fragments pipelined (H100, against CuPy, two runs each, .device/dgemm_var.py): 512
# 0.90-0.98x (0.67-0.78x without), 1024 0.91-0.93x (0.66-0.72x); float32's (3xTF32) were
# not faster (1024: 0.83-0.89x against 1.00-1.02x). k slices (H200, single calls beside
# CuPy's, two runs, `.device/gemmmid.py`): 3xTF32 16 against 8: SGEMM 256 / 512 / 1024
# 0.95-1.19 / 0.90-0.92 / 1.02-1.03x against 0.87-1.01 / 0.80-0.81 / 0.96-0.97x,
# tall-skinny 2^22 x 64 @ 64 x 64 1.05x against 1.02x, batched 16384 x 64^3 1.03-1.06x
# against 0.97x (32: 2-7% faster than 16 where k >= 256, 5-16% slower at k 64-128); TF32
# 32 unswizzled against 16 swizzled: 256 / 512 / 1024 1.07-1.11 / 1.12-1.13 / 1.62x against
# 1.00-1.04 / 1.00-1.01 / 1.46x, tall-skinny 1.42-1.49x against 1.18-1.21x, batched 1.35x
# against 1.12x. float64: 16 or 32 within noise of 8 (docs/benchmarks.md, GEMM shapes).
MMA_MID_TILES = {
    "f64": {9: dict(shape="m16n8k8", bm=64, bn=64, bk=8, wm=2, wn=2, copy="regs", stages=2,
                    group_m=0, swizzle=True, pipeline=True),
            8: dict(shape="m8n8k4", bm=64, bn=64, bk=8, wm=2, wn=2, copy="regs", stages=2,
                    group_m=0, swizzle=False, pipeline=False)},
    "3xtf32": {8: dict(shape="m16n8k8", bm=64, bn=64, bk=16, wm=2, wn=2, copy="regs",
                       stages=2, group_m=0, swizzle=False, pipeline=False)},
    "tf32": {8: dict(shape="m16n8k8", bm=64, bn=64, bk=32, wm=2, wn=2, copy="regs",
                     stages=2, group_m=0, swizzle=False, pipeline=False)},
}
# What gemm_precision=auto means for float32 where the probe passes: 3xTF32, whose error
# stays within the SIMT float32 kernel's (tests/test_gemm_mma.py::test_error_envelope).
AUTO_FLOAT32_PRECISION = "3xtf32"
# Largest relative error (max |error| / max |C|) a probe product may show per precision:
# float64 products for "f64", float32 ones for "3xtf32", 10-bit mantissas for "tf32".
MMA_PROBE_ERROR = {"f64": 1e-13, "3xtf32": 1e-5, "tf32": 5e-3}
# The tensor-core tiles as the tuner's shape classes, searched on NVIDIA devices whose probe
# passes: tuned entries gemm/float64/mma_f64, gemm/float32/mma_3xtf32 and .../mma_tf32 come
# before MMA_TILES' (where their probe passes too). The mma shape stays the built-in
# entry's; switches are 0 or 1.
MMA_CLASSES = {"mma_f64": "f64", "mma_3xtf32": "3xtf32", "mma_tf32": "tf32"}
_MMA_SPACE = dict(wm=(1, 2, 4), wn=(1, 2, 4), copy=("regs", "async"), stages=(2, 3, 4),
                  group_m=(0, 8, 16), swizzle=(0, 1), pipeline=(0, 1), sync=("bar", "mbar"))
GEMM_SPACE["nvidia"] = dict(
    GEMM_SPACE["gpu"], mma_f64=dict(_MMA_SPACE, bm=(64, 128), bn=(64, 128), bk=(8, 16)),
    mma_3xtf32=dict(_MMA_SPACE, bm=(64, 128), bn=(64, 128), bk=(8, 16)),
    mma_tf32=dict(_MMA_SPACE, bm=(64, 128), bn=(128, 256), bk=(8, 16, 32)))
# Narrow outputs on CPUs (fewer columns, or rows, than the CPU kernel's vector: nwi): with A
# of unit stride along k, kernels/gemv.cl.mako's item mode (rows per work-item, `cols`
# columns a pass over k, vectors along k; B copied with unit stride along k where it has
# none); else the CPU kernel with the narrow side on m, rows of a power of two and
# NARROW_VECTORS // rows vectors (a GEMV of a column-major A: one row of 16 vectors, each
# work-item reading 1 KiB of each column: 8.5x faster than one vector at 4096^2 float32),
# at most MAX_NARROW_ROWS rows where a few columns shrink its vectors. PoCL, 2 Zen 5 cores
# (`benchmarks/bench_blas.py --narrow`): h @ W (2000 x 500 @ 500 x 10) float32 0.26 ms
# against 4.4-16 ms before (numpy 0.16); dot(U.T, x), U 4096^2 float32 1.5 ms against 44 ms
# (numpy 0.9).
NARROW_SHAPES = {"cpu": dict(rows=4, cols=4, unroll=1), "gpu": {}}
NARROW_VECTORS, MAX_NARROW_ROWS = 16, 16
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
_epoch = [0]  # forget_plans() moves it on


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


def shape_classes(cls, dtype, mma=True):
    """The shape classes gemm_into takes products of dtype to on devices of class cls (with
    the tensor-core ones, MMA_CLASSES, where `mma`)."""
    dt = np.dtype(dtype)
    tiles = GEMM_TILES[cls]
    if "direct" in tiles and dt in _REAL[1:]:
        return ["direct"]
    found = [s for s in ("big", "medium", "small", "column", "tiny") if s in tiles
             and (s != "tiny" or dt in _REAL[1:])]
    return found + [s for s in MMA_CLASSES if mma and s in GEMM_SPACE.get(cls, {})
                    and (MMA_CLASSES[s] == "f64") == (dt == _REAL[2]) and dt in _REAL[1:]]


def builtin_tile(cls, dtype, shape_class, ctx=None):
    """GEMM_TILES' entry for a shape class (direct, tiny: per dtype; a CPU's direct entry as
    CPU_DIRECT_BY_VECTOR has it for ctx's vector width); for MMA_CLASSES the MMA_TILES entry
    of ctx's compute capability (without ctx: the newest), switches as 0/1. KeyError where
    the class has no entry for dtype on cls devices."""
    if shape_class in MMA_CLASSES:
        if shape_class not in shape_classes(cls, dtype):
            raise KeyError(shape_class)
        tiles = MMA_TILES[MMA_CLASSES[shape_class]]
        cc = _nv_capability(ctx) if ctx is not None else None
        major = max((v for v in tiles if cc is None or v <= cc[0]), default=min(tiles))
        return {k: int(v) if isinstance(v, bool) else v for k, v in tiles[major].items()}
    entry = GEMM_TILES[cls][shape_class]
    if shape_class not in DIRECT_CLASSES:
        return entry
    name = np.dtype(dtype).name
    if ctx is not None and cls == "cpu":
        return CPU_DIRECT_BY_VECTOR.get(ctx.device.float_vector, {}).get(name, entry[name])
    return entry[name]


def _tiles(ctx, dtype, cls):
    """{shape class: params} for dtype on ctx's device: tuned entries over GEMM_TILES' (kept
    in ctx.plans)."""
    key = ("gpuarr.blas.tiles", tuning.generation(), _epoch[0], dtype, cls)
    found = ctx.plans.get(key)
    if found is None:
        found = {s: builtin_tile(cls, dtype, s, ctx) for s in shape_classes(cls, dtype, False)}
        found.update((s, v) for s, v in tuning.entries(ctx, "gemm", dtype, cls).items()
                     if s not in MMA_CLASSES)
        ctx.plans[key] = found
    return found


def _tile_cost(units, cls, shape_class, tile, m, n, k, batch=1):
    """The estimated time of a batch of m x n x k products with a tile of `shape_class` on a
    device of `units` compute units: the waves of work-groups they run, GEMM_EFFICIENCY's
    `per_unit` at once on each, a wave taking their multiply-adds (k plus the class's fixed
    steps) over the class's relative throughput (fewer than per_unit work-groups do not run
    faster: they hide less latency)."""
    eff, per_unit, setup = GEMM_EFFICIENCY[cls][shape_class]
    if shape_class in DIRECT_CLASSES:
        mwg, nwg = tile["mwi"] * DIRECT_GROUP[0], tile["nwi"] * DIRECT_GROUP[1]
    elif "bm" in tile:  # the tensor-core tiles
        mwg, nwg = tile["bm"], tile["bn"]
    else:
        mwg, nwg = tile["mwg"], tile["nwg"]
    groups = -(-m // mwg) * -(-n // nwg) * batch
    waves = -(-groups // (units * per_unit))
    return waves * per_unit * mwg * nwg * (max(k, 1) + setup) / eff


def _tiled_classes(tiles, m, n):
    """The tiled shape classes that may take an m x n product: "column" for one column, the
    big and medium tiles where m and n fill one, "small" always."""
    if n == 1 and "column" in tiles:
        return ("column",)
    return [s for s in ("big", "medium", "small") if s in tiles and
            (s == "small" or (m >= tiles[s]["mwg"] and n >= tiles[s]["nwg"]))]


def _tile(ctx, dtype, m, n, k=256, batch=1):
    """The parameters of the tiled (or, on CPUs, direct) shape class an m x n product of
    dtype takes on ctx's device (the least _tile_cost): the device's tuned entry
    (gpuarr.tuning), else GEMM_TILES'."""
    cls = gemm_class(ctx)
    tiles = _tiles(ctx, dtype, cls)
    if "direct" in tiles:
        return tiles["direct"]
    return tiles[min(_tiled_classes(tiles, m, n),
                     key=lambda s: _tile_cost(ctx.device.compute_units, cls, s, tiles[s], m, n,
                                             k, batch))]


# keys a GEMM entry may leave out: the backend ("gpuarr"), gemm_mma's sync ("bar")
_DEFAULTED = {"backend", "sync"}


def _show(params):
    return ", ".join(f"{k}={v}" for k, v in params.items())


def check_tile(ctx, dtype, shape_class, params, cls=None):
    """Raise ArgumentError unless `params` are parameters that the template of `shape_class`
    (kernels/gemm.cl.mako, or gemm_direct.cl.mako for DIRECT_CLASSES) accepts for dtype on ctx's
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
    # the built-in entry's keys but those with defaults, and those GEMM_SPACE adds
    needed = set(builtin) - _DEFAULTED
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
    if shape_class in MMA_CLASSES:
        return _check_mma(ctx, shape_class, p, what)
    if shape_class in DIRECT_CLASSES:
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


def _check_mma(ctx, shape_class, p, what):
    """check_tile of the tensor-core classes: the template's own asserts, the work-group
    size and MAX_OUTPUTS accumulators per lane (local memory: NVIDIA's OpenCL runs past what
    it reports)."""
    threads = 32 * p["wm"] * p["wn"]
    if threads > ctx.max_work_group_size or p["bm"] * p["bn"] // threads > MAX_OUTPUTS:
        raise ArgumentError(f"{what} {_show(p)}: {threads} work-items of "
                            f"{p['bm'] * p['bn'] // max(threads, 1)} accumulators, over the "
                            f"device's max_work_group_size {ctx.max_work_group_size} or "
                            f"MAX_OUTPUTS={MAX_OUTPUTS}")
    try:
        render("gemm_mma.cl.mako", name="gemm_mma", **p, prec=MMA_CLASSES[shape_class],
               a_mk=True, b_nk=True, vec=1, edge_mn=True, edge_vec=True, edge_k=True,
               use_beta=True)
    except (AssertionError, ValueError, ZeroDivisionError) as e:
        raise ArgumentError(f"{what} {_show(p)}: the template refuses them ({e})") from None


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


# ---------------------------------------------------------------- plans and dispatch

class GemmPlan:
    """How products of one layout run, decided once and kept in ctx.plans. Either one
    kernel launch: `launcher` over `size` (work-group `local`) with the arguments `head`
    (sizes), alpha and beta (converted by `acc` where the kernel takes integers), then a
    matrix per `slots` entry (operand 0, 1 or 2 of a, b, c; an element offset added to its
    offset; its strides); or `run(alpha, a, b, beta, c)`, a product of several steps.
    `family` names the dispatch entry, `params` its kernel parameters."""

    __slots__ = ("acc", "family", "head", "itemsize", "launcher", "local", "params", "pins",
                 "run", "size", "slots", "tails")

    def __init__(self, family, params=None, run=None, launcher=None, size=None, local=None,
                 head=(), slots=(), acc=None, itemsize=0):
        self.family, self.params, self.run = family, params, run
        self.launcher, self.size, self.local = launcher, size, local
        self.head, self.slots, self.acc = tuple(head), tuple(slots), acc
        self.itemsize, self.pins = itemsize, None
        # a, b, c in order at their own offsets (the common case): their strides
        plain = [s[:2] for s in self.slots] == [(0, 0), (1, 0), (2, 0)]
        self.tails = tuple(s[2] for s in self.slots) if plain and itemsize else None

    def launch(self, alpha, a, b, beta, c):
        """c = alpha * a @ b + beta * c, for a, b, c of this plan's layout (of their own, only
        storage and offset are read); returns c."""
        if self.run is not None:
            return self.run(alpha, a, b, beta, c)
        if self.acc is not None:
            alpha, beta = self.acc(alpha), self.acc(beta)
        sa, sb, sc = a.storage, b.storage, c.storage
        if self.tails is not None:
            ta, tb, tc = self.tails
            size = self.itemsize
            args = [*self.head, alpha, beta, sa, a.offset // size, *ta, sb, b.offset // size,
                    *tb, sc, c.offset // size, *tc]
        else:
            ops = (a, b, c)
            args = [*self.head, alpha, beta]
            for src, delta, tail in self.slots:
                x = ops[src]
                args += (x.storage, x.offset // x.dtype.itemsize + delta, *tail)
        enqueue(sc.context, self.launcher, self.size, self.local, args, (sa, sb), (sc,))
        return c

    def __repr__(self):
        shown = f" {_show(self.params)}" if self.params else ""
        return f"<GemmPlan {self.family}{shown}>"


def _one_launch(family, params, kernel, size, local, head, acc, operands):
    """A GemmPlan of one launch; `operands`: (source index, source array, the view the
    kernel reads, its strides in the kernel's order) per matrix argument."""
    slots = [(i, (view.offset - src.offset) // view.itemsize, tuple(tail))
             for i, src, view, tail in operands]
    sizes = {src.itemsize for _, src, _, _ in operands}
    return GemmPlan(family, params, None, kernel, size, local, head, slots,
                    None if acc.kind == "f" else acc.type, sizes.pop() if len(sizes) == 1 else 0)


def _matrices(a, b, c, order=(0, 1, 2)):
    """gemm_into's operands as _one_launch takes them (strides m/k, k/n, m/n, then batch,
    then inner batch for 4-d operands); `order`: the operands of gemm_into that a, b, c are
    (views at their offsets: (1, 0, 2) for the transposed problem, _swap)."""
    return [(i, x, x, (*e[-2:], *e[:-2])) for i, x in zip(order, (a, b, c))
            for e in [_elements(x)]]


def forget_plans():
    """Decide every product again (after a change of GEMM_TILES, GEMV_SHAPES, MMA_TILES,
    MMA_MID_TILES or GEMM_EFFICIENCY; flags and tuned entries are followed without it)."""
    _epoch[0] += 1


def _state():
    """What a plan depends on besides the layout: the flags (replaced whole when one
    changes), the device_class function (tests patch it), the tuned entries' generation and
    forget_plans(). Plans pin the objects so that their ids stay theirs."""
    return id(config.flags), id(device_class), tuning.generation(), _epoch[0]


def _plan(ctx, a, b, c, use_beta):
    """The GemmPlan of gemm_into's operands (ctx.plans, else decided and kept)."""
    key = ("gemm", c.dtype, a.shape, a.strides, b.shape, b.strides, c.shape, c.strides,
           a.offset & 15, b.offset & 15, use_beta, _state())
    plan = ctx.plans.get(key)
    if plan is None:
        plan = ctx.plans[key] = _decide(ctx, a, b, c, use_beta)
    return plan


def gemm_into(alpha, a, b, beta, c):
    """c[p] = alpha * a[p] @ b[p] + beta * c[p] for 3-d GpuArrays of one dtype (batch p
    first; a batch stride may be 0), or 4-d ones (two batch levels p, q: broadcast batch
    dimensions that do not collapse into one). Enqueues and returns c. The product runs the
    plan kept for its layout: one dictionary lookup, then one launch where the plan is one
    kernel."""
    if c.dtype.kind == "c":
        return _complex_gemm_into(alpha, a, b, beta, c)
    ctx = a.storage.context
    if b.storage.context is not ctx or c.storage.context is not ctx:
        check_same_context(a, b, c)
    if not c._writeable and c.size:
        c._check_writeable()
    return _plan(ctx, a, b, c, beta != 0).launch(alpha, a, b, beta, c)


class Family(NamedTuple):
    """An entry of the GEMM dispatch table: whether it can take a problem, its estimated
    cost (0: a policy that takes every problem it applies to), and the plan it makes."""

    name: str
    applies: Callable
    cost: Callable
    build: Callable


class Problem(NamedTuple):
    """What the dispatch table decides on: gemm_into's operands and what follows from them."""

    ctx: object
    cls: str  # gemm_class
    tiles: dict  # {shape class: params}, tuned over built-in
    a: ArrayBase
    b: ArrayBase
    c: ArrayBase
    batch: int  # products (both levels of 4-d operands)
    m: int
    n: int
    k: int
    use_beta: bool
    flat: bool  # one batch level (3-d operands)


def _choose(ctx, a, b, c, use_beta, skip=()):
    """(family, problem): the least-cost entry of FAMILIES that applies (the first of cost 0,
    in table order), leaving out the entries named in `skip`."""
    dt = c.dtype
    _acc_dtype(dt)  # raises for dtypes without a GEMM
    dtypes.check_device(dt, ctx)
    cls = gemm_class(ctx)
    m, n = c.shape[-2:]
    p = Problem(ctx, cls, _tiles(ctx, dt, cls), a, b, c, math.prod(c.shape[:-2]), m, n,
                a.shape[-1], use_beta, c.ndim == 3)
    best, least = None, math.inf
    for family in FAMILIES:
        if family.name in skip or not family.applies(p):
            continue
        cost = family.cost(p)
        if cost < least:
            best, least = family, cost
            if cost == 0:
                break
    return best, p


def _decide(ctx, a, b, c, use_beta, skip=()):
    """The plan of _choose's entry."""
    family, p = _choose(ctx, a, b, c, use_beta, skip)
    plan = family.build(p)
    plan.pins = (config.flags, device_class)
    return plan


def _policy(p):
    return 0


def _nothing(alpha, a, b, beta, c):
    return c


def _k_zero(alpha, a, b, beta, c):
    """An empty sum: beta * c."""
    return c.fill(0) if beta == 0 else c._assign(UFUNCS["multiply"](c, beta))


def _mma_fits(p):
    """Tensor cores run products of this precision and size: m, n from their big tile up,
    or from the mid-sized tile's where the product is large enough (_mma_mid_fit)."""
    prec = _mma_precision(p.c.dtype)
    tile = prec and _mma_tile(p.ctx, prec)
    if not tile:
        return False
    if p.m >= tile["bm"] and p.n >= tile["bn"]:
        return True
    return _mma_mid_fit(p, prec) is not None


# Products narrower than the big tensor-core tile take the mid-sized one from this many
# multiply-adds (batch x m x n x k) up; below it the tiny/small kernels' latency wins.
# H100, CuPy 14.2 in the same run, two runs (.device/mmamid.py), SIMT tiles -> mid tile:
# x.T @ x of 2^22 x 64 (split-K's partials, 64 x 4096 x 64 each) float32 0.75-0.78 ->
# 0.97-0.99x CuPy, float64 0.27-0.40 -> 0.62-1.00x (CuPy's own time moved 828-1264 us);
# (2^22 x 64) @ (64 x 64) float32 0.75 -> 1.05-1.06x, float64 0.73 -> 0.70x; 16384 x 64^3
# batched float32 0.85 -> 1.06-1.10x, float64 0.33 -> 0.66-0.68x; one 64^3 product as before.
_MMA_MID_LEAST = 2**27


def _mma_mid_fit(p, prec):
    """The mid-sized tensor-core tile for a product whose m or n is below the big tile's
    side, at least the mid tile's sides and with _MMA_MID_LEAST multiply-adds, once the
    tile's probe passed; else None."""
    mid = _mma_builtin(MMA_MID_TILES.get(prec, {}), p.ctx)
    if mid is None or p.m < mid["bm"] or p.n < mid["bn"] or \
            p.batch * p.m * p.n * p.k < _MMA_MID_LEAST:
        return None
    return _mma_probed(p.ctx, prec, "mid", (mid,))


def _mma_choice(p):
    """(precision, tile) of a product the tensor cores take: the mid-sized tile where the
    estimate (_tile_cost) says the big one leaves compute units idle and its probe passes."""
    prec = _mma_precision(p.c.dtype)
    big = _mma_tile(p.ctx, prec)
    if p.m < big["bm"] or p.n < big["bn"]:
        return prec, _mma_mid_fit(p, prec)
    cost = functools.partial(_tile_cost, p.ctx.device.compute_units, "gpu", m=p.m, n=p.n,
                             k=p.k, batch=p.batch)
    mid = _mma_builtin(MMA_MID_TILES.get(prec, {}), p.ctx)
    if mid and cost("mma_mid", mid) < cost("mma", big):
        mid = _mma_probed(p.ctx, prec, "mid", (mid,))
    return prec, mid if mid and cost("mma_mid", mid) < cost("mma", big) else big


def _mma_build(p):
    return _mma_plan(p.ctx, p.a, p.b, p.c, p.use_beta, *_mma_choice(p))


def _clblast_applies(p, flat=True):
    if p.flat != flat:
        return False
    gemv = flat and _gemv_operands(p.a, p.b, p.c) is not None
    return _backend(p.ctx, _tile(p.ctx, p.c.dtype, p.m, p.n, p.k, p.batch), gemv) == "clblast"


def _clblast_build(p):
    """CLBlast, and where it declines a call (a layout or dtype it cannot take) the plan the
    table makes without it."""
    ctx, fallback = p.ctx, []

    def run(alpha, a, b, beta, c):
        if clblast.gemm_into(alpha, a, b, beta, c) is not None:
            return c
        if not fallback:
            fallback.append(_decide(ctx, a, b, c, beta != 0, skip=("clblast",)))
        return fallback[0].launch(alpha, a, b, beta, c)
    return GemmPlan("clblast", run=run)


def _direct_layout(b):
    return b.strides[-1] == b.itemsize and abs(b.strides[-2]) % 4096 != 0


def _swap(a, b, c):
    """The transposed problem's operands: c.T = b.T @ a.T (views)."""
    return b.swapaxes(-1, -2), a.swapaxes(-1, -2), c.swapaxes(-1, -2)


def _narrow_side(p):
    """min(m, n) of a single-level CPU product whose output is narrower than the CPU
    kernel's vector (its nwi), else 0."""
    if "direct" not in p.tiles or not p.flat:
        return 0
    side = min(p.m, p.n)
    return side if side < p.tiles["direct"]["nwi"] else 0


def _columns(p):
    """(a, b, c, order) of a product with its output's narrower side as n: the operands,
    or the transposed problem's (order as _matrices')."""
    if p.n <= p.m:
        return p.a, p.b, p.c, (0, 1, 2)
    return (*_swap(p.a, p.b, p.c), (1, 0, 2))


def _direct_orientation(p):
    """(a, b, c, order) for the CPU kernel, or None: the product as it is where B has unit
    stride along n (rows not a multiple of 4 KiB apart), else the transposed problem where A
    has unit stride along m, no copy either way. A narrow output takes the orientation
    with its narrow side on m, where the kernel broadcasts, wherever the layout allows (its
    operands' rows are read once: their distance does not matter)."""
    if "direct" not in p.tiles:
        return None
    as_is = (p.a, p.b, p.c, (0, 1, 2))
    if not p.flat:
        return as_is if _direct_layout(p.b) else None
    side = _narrow_side(p)
    options = [as_is, (*_swap(p.a, p.b, p.c), (1, 0, 2))]
    if side and p.n < p.m:
        options.reverse()
    return next((o for o in options if _direct_layout(o[1]) or
                 (side and o[1].strides[-1] == o[1].itemsize)), None)


def _direct_build(p):
    """The CPU kernel in _direct_orientation. An output of few rows (under the tile's mwi,
    or narrow) takes rows of a power of two and NARROW_VECTORS // rows vectors of nwi: each
    work-item walks k once over long stretches of B's rows; one of few columns takes vectors
    of a power of two under nwi (the scalar loop only for one column)."""
    a, b, c, order = _direct_orientation(p)
    tile = dict(p.tiles["direct"])
    m, n = c.shape[-2:]
    rows = 1 << (m - 1).bit_length()
    if 2 <= n < tile["nwi"]:
        nwi = 1 << (n.bit_length() - 1)
        tile.update(nwi=nwi, mwi=min(MAX_NARROW_ROWS, rows, tile["mwi"] * tile["nwi"] // nwi))
    elif m < tile["mwi"] or _narrow_side(p):
        tile["mwi"] = min(tile["mwi"], rows)
        tile["nvec"] = max(1, NARROW_VECTORS // tile["mwi"])
    return _direct_plan(p.ctx, a, b, c, p.use_beta, tile, order=order)


def _narrow_applies(p):
    """kernels/gemv.cl.mako's item mode takes a narrow output (2 columns or more) where A
    has unit stride along k (oriented by _columns) and k fills a vector."""
    if _narrow_side(p) < 2:
        return False
    a = _columns(p)[0]
    return abs(_elements(a)[2]) == 1 and p.k * a.itemsize >= GEMV_SHAPES["cpu"]["vector_bytes"]


def _narrow_build(p):
    """The narrow product's plan: B with unit stride along k (a copy of the small operand,
    k x a few, where it has none)."""
    a, b, c, order = _columns(p)
    (_, _, ak), (_, bk, _) = _elements(a), _elements(b)
    if bk == ak:  # unit stride along k in both (reversed in both: _gemv_plan turns them)
        return _gemv_plan(p.ctx, a, b, c, p.use_beta, order)
    ctx, plans, swap = p.ctx, [], order[0] == 1

    def run(alpha, a, b, beta, c):
        if swap:
            a, b, c = _swap(a, b, c)
        if a.strides[2] < 0:
            a, b = a[:, :, ::-1], b[:, ::-1]
        b = _k_major(b)
        if not plans:
            plans.append(_gemv_plan(ctx, a, b, c, beta != 0))
        return plans[0].launch(alpha, a, b, beta, c)
    return GemmPlan("narrow", run=run)


def _k_major(b):
    """A copy of b (batch, k, n) with unit stride along k (one copy of a broadcast batch)."""
    if b.shape[0] > 1 and b.strides[0] == 0:
        return broadcast_to(_k_major(b[:1]), b.shape)
    return b.swapaxes(1, 2).copy().swapaxes(1, 2)


def _strided_applies(p):
    """A narrow output whose large operand (A, oriented by _columns) has unit stride along
    neither axis: copied first, as numpy does."""
    if not _narrow_side(p):
        return False
    a = _columns(p)[0]
    _, sm, sk = _elements(a)
    return 1 not in (abs(sm), abs(sk)) and min(a.shape[1:]) > 1


def _strided_build(p):
    swap = _columns(p)[3][0] == 1

    def run(alpha, a, b, beta, c):
        a2, b2, c2 = _swap(a, b, c) if swap else (a, b, c)
        gemm_into(alpha, a2.copy(), b2, beta, c2)
        return c
    return GemmPlan("strided", run=run)


def _panels_applies(p):
    """CPUs: float32 products whose k and sides reach CPU_PANELS_LEAST take B in panels."""
    return (p.flat and "direct" in p.tiles and p.c.dtype == np.float32
            and min(p.m, p.n, p.k) >= CPU_PANELS_LEAST)


def _packed_build(p):
    """The CPU kernel on a copy of B (_panels where _panels_applies, else _packed, whose
    layout follows from B's shape); of the transposed problem's (A's transpose) where A is
    the smaller operand."""
    ctx, tile, plans = p.ctx, p.tiles["direct"], []
    swap = p.flat and p.a.size < p.b.size
    panel = _panels_applies(p)

    def run(alpha, a, b, beta, c):
        a2, b2, c2 = _swap(a, b, c) if swap else (a, b, c)
        b2 = _panels(b2, tile["nwi"], tile.get("nvec", 1)) if panel else _packed(b2)
        if not plans:
            plans.append(_direct_plan(ctx, a2, b2, c2, beta != 0, tile, panel=panel))
        plans[0].launch(alpha, a2, b2, beta, c2)
        return c
    return GemmPlan("panels" if panel else "packed", tile, run=run)


def _tiny_applies(p):
    return ("tiny" in p.tiles and p.m * p.n <= TINY_OUTPUTS and p.k <= TINY_K
            and p.b.strides[-1] == p.b.itemsize)


def _tiled(shape_class):
    """The table's entry of a tiled shape class (kernels/gemm.cl.mako)."""
    def applies(p):
        return "direct" not in p.tiles and shape_class in _tiled_classes(p.tiles, p.m, p.n)
    return Family(shape_class, applies, lambda p: _cost(p, shape_class),
                  lambda p: _tiled_plan(p.ctx, p.a, p.b, p.c, p.use_beta, p.tiles[shape_class],
                                        shape_class))


def _cost(p, shape_class):
    return _tile_cost(p.ctx.device.compute_units, p.cls, shape_class, p.tiles[shape_class],
                      p.m, p.n, p.k, p.batch)


def _flattened(alpha, a, b, beta, c):
    """A product of two batch levels as one level: 3-d views where the levels collapse,
    copies where not (c's copied back)."""
    a3, b3, c3 = (x.reshape(-1, *x.shape[2:]) for x in (a, b, c))
    gemm_into(alpha, a3, b3, beta, c3)
    if c3.storage is not c.storage:
        c._assign(c3.reshape(c.shape))
    return c


def _flatten_cost(p):
    """0 where CLBlast takes the one-level product, or tensor cores do and the levels collapse
    into views or the product's sides reach the big tile's (copies of a broadcast operand
    then cost a small part of the products); else a last resort (copies cost more than the
    portable kernels' two batch levels: 128 x 128 products of 64^3 float32, broadcast,
    794 us copied against 361 us in place on an H200)."""
    if _clblast_applies(p, flat=False):
        return 0
    if not _mma_fits(p):
        return _LAST_RESORT
    big = _mma_tile(p.ctx, _mma_precision(p.c.dtype))
    if p.m >= big["bm"] and p.n >= big["bn"]:
        return 0
    views = all(_nocopy_reshape(x.shape, x.strides, (x.shape[0] * x.shape[1], *x.shape[2:]))
                is not None for x in (p.a, p.b, p.c))
    return 0 if views else _LAST_RESORT


def _gemv(p):
    return p.flat and _gemv_operands(p.a, p.b, p.c) is not None


def _swapped(alpha, a, b, beta, c):
    """A row times a matrix as the transposed problem, which has one column."""
    return gemm_into(alpha, b.swapaxes(1, 2), a.swapaxes(1, 2), beta, c.swapaxes(1, 2))


# The GEMM dispatch table. Policies (cost 0) first, in the order they take precedence:
# nothing to compute, an empty sum, split-K where one accumulator would walk a long k
# (accuracy), tensor cores where their probe passed, CLBlast where flag blas_backend or a
# tuned entry asks for it, GEMV for one column of a row-major A (bandwidth-bound already),
# on CPUs a narrow output (NARROW_SHAPES: "narrow" where A has unit stride along k,
# "strided" copying an A of no unit stride) and the CPU kernel in whichever orientation
# reads both operands in place ("packed" copies the smaller where neither does); then the
# portable kernels by estimated cost (_tile_cost). Products of two
# batch levels (4-d operands) take the entries that read them (direct, tiny, the tiles) or
# are made one level ("flatten": for tensor cores and CLBlast, else the last resort).
_LAST_RESORT = 1e300
FAMILIES = (
    Family("empty", lambda p: p.c.size == 0, _policy, lambda p: GemmPlan("empty", run=_nothing)),
    Family("k0", lambda p: p.k == 0, _policy, lambda p: GemmPlan("k0", run=_k_zero)),
    Family("split_k", lambda p: p.flat and _split_k_parts(p.c, p.k, _gemv(p)) > 0, _policy,
           lambda p: GemmPlan("split_k", run=functools.partial(
               _gemm_split_k, parts=_split_k_parts(p.c, p.k, _gemv(p))))),
    Family("mma", lambda p: p.flat and _mma_fits(p), _policy, _mma_build),
    Family("flatten", lambda p: not p.flat, _flatten_cost,
           lambda p: GemmPlan("flatten", run=_flattened)),
    Family("clblast", _clblast_applies, _policy, _clblast_build),
    Family("gemv", _gemv, _policy,
           lambda p: _gemv_plan(p.ctx, *_gemv_operands(p.a, p.b, p.c), p.use_beta,
                                _gemv_order(p.a, p.b, p.c))),
    Family("narrow", _narrow_applies, _policy, _narrow_build),
    Family("strided", _strided_applies, _policy, _strided_build),
    Family("panels", _panels_applies, _policy, _packed_build),
    Family("direct", lambda p: _direct_orientation(p) is not None, _policy, _direct_build),
    Family("packed", lambda p: p.flat and "direct" in p.tiles, _policy, _packed_build),
    Family("row", lambda p: p.flat and p.m == 1 and p.n > 1, _policy,
           lambda p: GemmPlan("row", run=_swapped)),
    Family("tiny", _tiny_applies, lambda p: _cost(p, "tiny"),
           lambda p: _direct_plan(p.ctx, p.a, p.b, p.c, p.use_beta, p.tiles["tiny"], "tiny")),
    *(_tiled(s) for s in ("big", "medium", "small", "column")),
)


# A long sum of products is split along k into chunks whose partial products are summed by
# a reduction: one float32 accumulator over 2^20 terms kept 3 digits fewer than numpy
# (x.T @ x of a 2^20 x 8 array: 4.8e-4 relative error against numpy's 8e-7), and an output
# of fewer 64 x 64 tiles than a GPU has compute units leaves some idle while each work-group
# walks all of k. On GPUs such a product (narrow ones too, not the GEMVs of a row-major A,
# which read at the copy's rate) is split into SPLIT_K_PARTS chunks (fewer where they then
# divide k) of half SPLIT_K_FILL at least, where k is SPLIT_K_LEAST or more. H200, device
# time, 8 parts against none (`.device/splitcmp.py`; 2 parts about halfway): float32 x.T @ g,
# x 2000 x 784, 44 -> 19 us (CuPy 14); U.T @ v, U 4096^2, 115 -> 31 us (CuPy 19); h.T @ d,
# 500 x 2000 @ 2000 x 10, 49 -> 18 us (CuPy 21); x.T @ h, 784 x 2000 @ 2000 x 500 (104
# tiles), 185 -> 71 us (CuPy 45); 64 x 4000 @ 4000 x 4000 float32 / float64 455 / 448 ->
# 73 / 112 us; float64 64 x 4096 @ 4096 x 64 405 -> 102 us, 64 x 1024 @ 1024 x 64 224 ->
# 38 us. The split costs a second launch (eager calls: ~25 us more host time, 29 -> 54 us
# for 64 x 1024 @ 1024 x 64 float32, whose device time falls only 28 -> 18 us; DGEMM 512 in
# 4 chunks: 27 -> 91 us a call, device time 22 -> 24 us): below SPLIT_K_LEAST the host's
# cost outweighs the device's gain.
_SPLIT_K_CHUNK = 4096        # k per chunk, at least
_SPLIT_K_BYTES = 256 << 20   # the partial products' buffer, at most
SPLIT_K_FILL = 256
SPLIT_K_PARTS = 8
SPLIT_K_LEAST = {4: 1536, 8: 1024}  # k, by itemsize: float64's kernels are slower


def _split_k_parts(c, k, gemv=False):
    """The number of k chunks for a single float32/float64 product into c, or 0 (no split):
    k at least four chunks long and many times the output's sides; on GPUs, also an output
    of fewer 64 x 64 tiles than compute units with k of SPLIT_K_LEAST and two SPLIT_K_FILL
    chunks at least (SPLIT_K_PARTS chunks, or fewer that divide k), unless the product is a
    GEMV (`gemv`)."""
    _, m, n = c.shape
    if c.shape[0] != 1 or c.dtype not in _REAL[1:]:
        return 0
    if k >= 4 * _SPLIT_K_CHUNK and k >= 16 * max(m, n):
        parts = min(k // _SPLIT_K_CHUNK, _SPLIT_K_BYTES // (m * n * c.itemsize))
    elif (not gemv and device_class(c.context) == "gpu"
          and k >= max(SPLIT_K_LEAST[c.itemsize], 2 * SPLIT_K_FILL)
          and -(-m // 64) * -(-n // 64) < c.context.device.compute_units):
        # chunks down to half SPLIT_K_FILL where they divide k (the rest of k would take a
        # launch of its own)
        most = min(SPLIT_K_PARTS, k // (SPLIT_K_FILL // 2))
        parts = next((p for p in range(most, most // 2, -1) if k % p == 0), most)
    else:
        return 0
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
    ps = partial.strides
    gemm_into(alpha, a._view((parts, m, chunk), (chunk * sak, sam, sak)),
              b._view((parts, chunk, n), (chunk * sbk, sbk, sbn)), 0,
              partial._view((parts, m, n), ps))
    if full < k:
        gemm_into(alpha, a._view((1, m, k - full), a.strides, a.offset + full * sak),
                  b._view((1, k - full, n), b.strides, b.offset + full * sbk), 0,
                  partial._view((1, m, n), ps, parts * ps[0]))
    c2 = c._view((m, n), c.strides[1:])
    if beta == 0 and not partial._may_share(c2):
        sum_first_axis(partial, c2)
    else:
        UFUNCS["add"](reduce_sum(partial, axis=0), UFUNCS["multiply"](c2, beta), out=c2)
    return c


def _nv_capability(ctx):
    """(major, minor) compute capability of an NVIDIA GPU, else None."""
    return ctx.device.nv_capability


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
    """The tensor-core tile of precision `prec` for ctx's device: its tuned entry (class
    mma_<prec>), else MMA_TILES' entry for the compute capability, the first whose kernel
    builds and gets a probe product right on the device (an NVIDIA GPU of a capability an
    entry needs); else None."""
    builtin = _mma_builtin(MMA_TILES[prec], ctx)
    if builtin is None or (prec == "f64" and not ctx.fp64):
        return None
    dt = _REAL[2] if prec == "f64" else _REAL[1]
    return _mma_probed(ctx, prec, "big", lambda: (
        tuning.lookup(ctx, "gemm", dt, "mma_" + prec, gemm_class(ctx)), builtin))


def _mma_builtin(tiles, ctx):
    """The entry of `tiles` ({least major: tile}) for ctx's compute capability, or None."""
    cc = _nv_capability(ctx)
    majors = [v for v in tiles if cc and v <= cc[0]]
    return tiles[max(majors)] if majors else None


def _mma_probed(ctx, prec, which, candidates):
    """The first of `candidates` (or of what the function returns) whose probe passes, else
    None; once per context, precision, `which` tile, tuning generation and forget_plans()
    (ctx.state)."""
    key = ("gemm_mma", prec, which, tuning.generation(), _epoch[0])
    if key not in ctx.state:
        found = candidates() if callable(candidates) else candidates
        ctx.state[key] = next((t for t in found if t and _mma_probe(ctx, prec, t)), None)
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


def _mma_plan(ctx, a, b, c, use_beta, prec, tile):
    """The plan of GEMM on tensor cores (kernels/gemm_mma.cl.mako) at precision `prec` with
    `tile`, an entry as MMA_TILES'. Local memory holds each operand along its unit-stride
    index."""
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
                  edge_vec=bool((not a_mk and m % vec) or (not b_nk and n % vec)),
                  edge_k=bool(k % tile["bk"]), use_beta=use_beta)
    key = ("gemm_mma", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [c.dtype.type] * 2 + ([None] + [np.int64] * 4) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm_mma.cl.mako", arg_dtypes,
                                                name="gemm_mma", **params)
    threads = 32 * tile["wm"] * tile["wn"]
    size = (-(-m // tile["bm"]) * threads, -(-n // tile["bn"]), batch)
    return _one_launch("mma", dict(tile, prec=prec), kernel, size, (threads, 1, 1),
                       (m, n, k), c.dtype, _matrices(a, b, c))


def _gemm_mma(ctx, alpha, a, b, beta, c, prec, tile):
    """GEMM on tensor cores with `tile` (the probe and the tests pass theirs)."""
    return _mma_plan(ctx, a, b, c, beta != 0, prec, tile).launch(alpha, a, b, beta, c)


def _tiled_plan(ctx, a, b, c, use_beta, tile, family="tiled"):
    """The plan of the tiled kernel (kernels/gemm.cl.mako) with `tile`, an entry as
    GEMM_TILES'."""
    *levels, m, n = c.shape
    k = a.shape[-1]
    dt = c.dtype
    acc = _acc_dtype(dt)
    a_sm, a_sk = _elements(a)[-2:]
    b_sk, b_sn = _elements(b)[-2:]
    c_sm, c_sn = _elements(c)[-2:]
    two = len(levels) == 2
    params = dict(tile, dtype=dt.name, acc_dtype=acc.name, **({"batch2": 1} if two else {}),
                  edge_mn=bool(m % tile["mwg"] or n % tile["nwg"]), edge_k=bool(k % tile["kwg"]),
                  use_beta=use_beta,
                  a_fast="m" if abs(a_sm) == 1 and abs(a_sk) != 1 else "k",
                  b_fast="n" if abs(b_sn) == 1 and abs(b_sk) != 1 else "k",
                  c_fast="m" if abs(c_sm) == 1 and abs(c_sn) != 1 else "n")
    params.pop("backend", None)
    key = ("gemm", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * (3 + two) + [acc.type] * 2 + ([None] + [np.int64] * (4 + two)) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm.cl.mako", arg_dtypes,
                                                name="gemm", **params)
    threads = tile["mdimc"] * tile["ndimc"]
    size = (-(-m // tile["mwg"]) * threads, -(-n // tile["nwg"]), math.prod(levels))
    return _one_launch(family, tile, kernel, size, (threads, 1, 1), (m, n, k, *levels[1:]),
                       acc, _matrices(a, b, c))


def _gemm_tiled(ctx, alpha, a, b, beta, c, tile):
    """The tiled kernel with `tile` (the tuner passes its candidates here)."""
    return _tiled_plan(ctx, a, b, c, beta != 0, tile).launch(alpha, a, b, beta, c)


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
    if c.ndim == 3 and device_class(c.context) == "cpu" and min(c.shape[1:]) < 16 and \
            _complex_narrow(alpha.real, a, b, beta.real, c, real):
        return c
    ar, ai, br, bi, cr, ci = (x._view(x.shape, x.strides, offset=x.offset + part * real.itemsize,
                                      dtype=real) for x in (a, b, c) for part in (0, 1))
    alpha, beta = alpha.real, beta.real
    gemm_into(alpha, ar, br, beta, cr)
    gemm_into(-alpha, ai, bi, 1, cr)
    gemm_into(alpha, ar, bi, beta, ci)
    gemm_into(alpha, ai, br, 1, ci)
    return c


def _complex_narrow(alpha, a, b, beta, c, real):
    """A narrow complex product on a CPU (an output of under 16 columns or rows, its narrow
    side made n) as one real GEMM that reads the large operand A in place, where it has unit
    stride along k: A as real (m x 2k) @ [[Br, Bi], [-Bi, Br]] (2k x 2n, built by two
    elementwise calls) is C as real (m x 2n); or along m: A's rows as real, [Ar; Ai]
    (2m x k) @ B as real [Br Bi] (k x 2n) gives P, and C = P[Ar] + 1j * P[Ai]. False for
    other layouts of A (the four real GEMMs read those)."""
    if c.shape[1] < c.shape[2]:
        a, b, c = _swap(a, b, c)
    (batch, m, n), k, size = c.shape, a.shape[2], c.itemsize
    pair = functools.partial(empty, context=c.context, dtype=c.dtype)
    if a.strides[2] == size:
        if 2 * n < _tile(c.context, real, m, 2 * n)["nwi"]:  # narrow: unit stride along k
            t = pair((batch, n, 2, k))  # [n, 0, k] = conj(B[k, n]): B2[2k + q, 2n + 0]
            UFUNCS["conjugate"](b.swapaxes(1, 2), out=t[:, :, 0])
            UFUNCS["multiply"](t[:, :, 0], 1j, out=t[:, :, 1])
            b2 = t._view((batch, 2 * k, 2 * n), (t.strides[0], size // 2, k * size), dtype=real)
        else:  # along n: [k, 0, n] = B, [k, 1, n] = 1j * B
            t = pair((batch, k, 2, n))
            t[:, :, 0]._assign(b)
            UFUNCS["multiply"](b, 1j, out=t[:, :, 1])
            b2 = t._view((batch, 2 * k, 2 * n), (t.strides[0], n * size, size // 2), dtype=real)
        out = c if n == 1 or c.strides[2] == size else pair(c.shape)
        gemm_into(alpha, _as_real(a, real), b2, beta if out is c else 0, _as_real(out, real))
        if out is not c:
            c._assign(out if beta == 0 else UFUNCS["add"](out, UFUNCS["multiply"](c, beta)))
        return True
    if a.strides[1] != size:
        return False
    if n > 1 and b.strides[2] != size:
        b = b.copy()
    p = pair((batch, m, 2, n))
    rows = a._view((batch, 2 * m, k), (a.strides[0], size // 2, a.strides[2]), dtype=real)
    gemm_into(alpha, rows, _as_real(b, real),
              0, p._view((batch, 2 * m, 2 * n), (p.strides[0], n * size, size // 2),
                         dtype=real))
    t = UFUNCS["multiply"](p[:, :, 1], 1j)
    if beta != 0:
        t = UFUNCS["add"](t, UFUNCS["multiply"](c, beta), out=t)
    UFUNCS["add"](p[:, :, 0], t, out=c)
    return True


def _as_real(x, real):
    """A complex (batch, r, n) array with unit stride along n (or n == 1) as real
    (batch, r, 2n), real and imaginary parts side by side."""
    return x._view((*x.shape[:-1], 2 * x.shape[-1]), (*x.strides[:-1], x.itemsize // 2),
                   dtype=real)


def _direct_plan(ctx, a, b, c, use_beta, shape, family="direct", order=(0, 1, 2),
                 panel=False):
    """The plan of kernels/gemm_direct.cl.mako ((mwi, nwi[, nvec]) `shape`): B has unit
    stride along n, or is in panels (`panel`: _panels' (batch, panels, k, nwi), one batch
    level). `order`: as _matrices'."""
    *levels, m, n = c.shape
    two = len(levels) == 2
    params = dict(shape, dtype=c.dtype.name, use_beta=use_beta,
                  c_unit=c.strides[-1] == c.itemsize, **({"batch2": 1} if two else {}),
                  **({"panel": 1} if panel else {}))
    params.pop("backend", None)
    key = ("gemm_direct", tuple(sorted(params.items())))
    arg_dtypes = ([np.int32] * (3 + two) + [c.dtype.type] * 2
                  + ([None] + [np.int64] * (4 + two)) * 3)
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm_direct.cl.mako", arg_dtypes,
                                                name="gemm_direct", **params)
    # Fixed work-groups: PoCL compiles a kernel again for each work-group size it meets (its
    # choice varies with the global size), 0.3-1 s a size. On CPUs one work-item a group; on
    # GPUs DIRECT_GROUP, the global size rounded up (work-items past M or N store nothing).
    size = [-(-m // shape["mwi"]), -(-n // (shape["nwi"] * shape.get("nvec", 1))),
            math.prod(levels)]
    local = (1, 1, 1) if device_class(ctx) == "cpu" else (*DIRECT_GROUP, 1)
    size[:2] = (-(-s // g) * g for s, g in zip(size[:2], local))
    operands = _matrices(a, b, c, order)
    if panel:  # (B's strides along k and n: nwi, the distance of two panels)
        sb, sp, sk, _ = _elements(b)
        operands[1] = (order[1], b, b, (sk, sp, sb))
    return _one_launch(family, shape, kernel, tuple(size), local,
                       (m, n, a.shape[-1], *levels[1:]), c.dtype, operands)


def _gemm_direct(ctx, alpha, a, b, beta, c, shape=None):
    """The direct kernel; `shape` (mwi, nwi) defaults to the device's entry (the tuner
    passes its candidates)."""
    shape = shape or _tile(ctx, c.dtype, c.shape[1], c.shape[2])
    return _direct_plan(ctx, a, b, c, beta != 0, shape).launch(alpha, a, b, beta, c)


def _packed(b):
    """A copy of b for the CPU kernel, which walks B's rows as vectors: unit stride along n,
    and rows not a multiple of 4 KiB apart (such rows share cache sets: at 2048 float32
    columns the kernel ran at 0.4x its rate at 2000)."""
    batch, k, n = b.shape
    pad = 64 // b.itemsize if n * b.itemsize % 4096 == 0 else 0
    return empty((batch, k, n + pad), b.dtype, context=b.context)[:, :, :n]._assign(b)


def _panels(b, nwi, nvec=1):
    """b (batch, k, n) as panels of nwi columns for the CPU kernel's `panel` form: (batch,
    panels, k, nwi), zeros past n (up to a multiple of nvec panels: a work-item's)."""
    batch, k, n = b.shape
    full, rest = divmod(n, nwi)
    panels = -(-n // (nwi * nvec)) * nvec
    out = empty((batch, panels, k, nwi), b.dtype, context=b.context)
    if panels > full + 1:
        out[:, full + 1:].fill(0)
    if full:
        out[:, :full]._assign(b[:, :, :full * nwi].reshape(batch, k, full, nwi)
                              .transpose(0, 2, 1, 3))
    if rest:
        out[:, full, :, rest:].fill(0)
        out[:, full, :, :rest]._assign(b[:, :, full * nwi:])
    return out


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


def _gemv_order(a, b, c):
    """Which of a, b, c each of _gemv_operands' (A, x, y) comes from."""
    return (0, 1, 2) if _gemv_operands(a, b, c)[0] is a else (1, 0, 2)


def _gemv_plan(ctx, a, b, c, use_beta, order=(0, 1, 2)):
    """The plan of kernels/gemv.cl.mako for a row-major a and one column (n == 1), or on CPUs
    a few (a narrow product: NARROW_SHAPES, b with unit stride along k), which it reads
    once, as vectors (bandwidth-bound). `order`: the operands of gemm_into that a, b, c are
    views of."""
    sources = (a, b, c)
    if a.strides[2] < 0:  # k reversed in both operands: unit stride again
        a, b = a[:, :, ::-1], b[:, ::-1]
    batch, m, n = c.shape
    k = a.shape[2]
    cls = device_class(ctx)
    shape = GEMV_SHAPES[cls] if n == 1 else dict(GEMV_SHAPES[cls], **NARROW_SHAPES[cls])
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
        params.update(mode="item", local_size=0, rows=shape["rows"],
                      cols=min(shape.get("cols", 1), 1 << (n - 1).bit_length()))
        size = (-(-items // local) * local, 1, batch)
    key = ("gemv", tuple(sorted(params.items())))
    arg_dtypes = ([np.int32] * 4 + [acc.type] * 2 + [None, np.int64, np.int64, np.int64]
                  + [None, np.int64, np.int64, np.int64, np.int64] * 2)
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemv.cl.mako", arg_dtypes,
                                                name="gemv", **params)
    operands = [(src, source, x, (s1, sb, s2)[:2 + (x is not a)])
                for src, source, x in zip(order, sources, (a, b, c))
                for sb, s1, s2 in [_elements(x)]]
    # (the plan's slots count operands of gemm_into: a view's offset is its source's plus
    # the delta)
    return _one_launch("gemv" if n == 1 else "narrow", params, kernel, size, (local, 1, 1),
                       (m, k, row_items, n), acc, operands)


def _gemv_into(ctx, alpha, a, b, beta, c):
    """gemm_into for one column (n == 1) and a row-major a through kernels/gemv.cl.mako."""
    return _gemv_plan(ctx, a, b, c, beta != 0).launch(alpha, a, b, beta, c)


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
    broadcast; one batched GEMM launch. The plan of each layout is kept (ctx.plans): a
    repeated product costs a dictionary lookup, an allocation and one launch."""
    if out is None and isinstance(a, ArrayBase) and isinstance(b, ArrayBase):
        ctx = a.storage.context
        if b.storage.context is ctx:
            key = ("matmul", a.shape, a.strides, a.dtype, a.offset & 15, b.shape, b.strides,
                   b.dtype, b.offset & 15, _state())
            fast = ctx.plans.get(key)
            if fast is None:
                fast = ctx.plans[key] = _matmul_plan(ctx, a, b)
            if fast:
                shape, dt, plan = fast
                return plan.launch(1, a, b, 0, ArrayBase._empty(ctx, shape, dt))
    return _matmul(a, b, out)


def _matmul_plan(ctx, a, b):
    """(shape, dtype, GemmPlan) of a @ b where one launch on a, b and a new C-contiguous
    result does it (same dtypes, batch dimensions of at most two levels), else False."""
    if a.ndim == 0 or b.ndim == 0 or (a.ndim == 1 and b.ndim == 1):
        return False
    dt = _matmul_dtype(a.dtype, b.dtype)
    if a.dtype != dt or b.dtype != dt or dt.kind == "c":
        return False
    av, bv, shape, levels = _matmul_operands(a, b)
    if av is None:
        return False
    result = ArrayBase._empty(ctx, shape, dtypes.check_device(dt, ctx))
    plan = _plan(ctx, av, bv, _result_view(result, levels, av, bv), False)
    return False if plan.run is not None else (shape, dt, plan)


def _matmul_operands(a, b, copy=False):
    """a @ b as a batched product: views of a and b with one batch level, (batch, *core), or
    two where the batch dimensions collapse into two but not one (else copies with `copy`,
    None without); the result's shape and the batch levels' sizes."""
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
    if not batch_shape:  # (the common product: 3-d views without broadcasting)
        return (a2._view((1, m, k), (0, *a2.strides)), b2._view((1, k, n), (0, *b2.strides)),
                shape, (1,))
    ab, bb = broadcast_to(a2, (*batch_shape, m, k)), broadcast_to(b2, (*batch_shape, k, n))
    dims, (sa, sb) = elemwise.collapse(list(batch_shape), [list(ab.strides[:-2]),
                                                           list(bb.strides[:-2])])
    if len(dims) > 2:
        if not copy:
            return None, None, shape, ()
        batch = math.prod(batch_shape)
        ab, bb = ab.copy().reshape(batch, m, k), bb.copy().reshape(batch, k, n)
        return ab, bb, shape, (batch,)
    dims = dims or [1]
    sa, sb = sa or [0], sb or [0]
    return (ab._view((*dims, m, k), (*sa, *ab.strides[-2:])),
            bb._view((*dims, k, n), (*sb, *bb.strides[-2:])), shape, tuple(dims))


def _result_view(result, levels, av, bv):
    """The C-contiguous `result` as the product's output: (*levels, m, n)."""
    m, n = av.shape[-2], bv.shape[-1]
    size = result.itemsize
    return result._view((*levels, m, n), (*(s * m * n * size for s in (
        (levels[1], 1) if len(levels) == 2 else (1,))), n * size, size))


def _matmul(a, b, out):
    """matmul's general path: host operands, mixed dtypes, 1-d dot products, out=, batch
    dimensions that need copies."""
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
    a, b = a.astype(dt, copy=False), b.astype(dt, copy=False)
    av, bv, shape, levels = _matmul_operands(a, b, copy=True)
    result = ArrayBase._empty(ctx, shape, dtypes.check_device(dt, ctx))
    gemm_into(1, av, bv, 0, _result_view(result, levels, av, bv))
    if out is not None:
        return _check_out("matmul", out, shape, dt, "same_kind")._assign(result)
    return result


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
    """numpy's inner: the sum over the last axes of `a` and `b` (a scalar times an array
    where either is 0-d)."""
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
