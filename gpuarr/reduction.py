"""Reductions over any axes: one kernel family (kernels/reduction.cl.mako), numpy's rules;
scans (kernels/scan.cl.mako); ReductionKernel and ScanKernel for user operations.

The reduced axes and the kept axes are collapsed separately; each output o then reduces n
elements at in_base(o) + k * stride, cut into parts when there are too few outputs to fill
the device. The decomposition (see _decompose and TUNING) follows the layout: on GPUs a
work-group per (output, part) when the reduced axis is inner (coalesced, vector loads, a
tree in local memory; the last group of an output reduces the partials in the same launch),
a work-item per (output, part) when it is outer; on CPUs a work-item with unrolled
accumulators (inner: vectors where the axis is contiguous, as not every CPU compiler
vectorises the unrolled loop), or bands of output rows accumulated a row of input at a time
(outer). Intel's CPU runtime gets its own TUNING entry (tuning_class).
It depends only on the layout and the device, so the same input gives the same bits. The
launches of a layout are worked out once and kept on the context.

Kernels are few: the collapsed kept and reduced dimensions are passed in buckets (1, or up
to 4 padded with size-1 dimensions), sizes and block lengths are arguments, and where the
driver compiles kernels lazily (PoCL) one program holds the layout variants a reduction's
layouts mostly need (see _family_of), so a program build serves most layouts.
"""

import builtins
import dataclasses
import functools
import math
import re
import types
import warnings

import numpy as np
import pyopencl as cl

from . import dtypes, elemwise
from .base import (
    ArrayBase,
    _normalize_axis,
    broadcast_to,
    check_same_context,
    empty,
    full,
    to_device,
    zeros,
)
from .errors import ArgumentError, ArgumentTypeError, ContextMismatch, ShapeError, UnsupportedError
from .kernels import get_program, kernel_from, render
from .kernels.cltypes import device_fence
from .launch import Launcher, enqueue
from .ufuncs import UFUNCS
from .ufuncs import where as ufunc_where

__all__ = [
    "FUNCTIONS", "METHODS", "TUNING", "ReductionKernel", "ReductionMethods", "ScanKernel",
    "all", "amax", "amin", "any", "argmax", "argmin", "count_nonzero", "cumprod", "cumsum",
    "device_class", "max", "mean", "min", "nanmax", "nanmean", "nanmin", "nanprod", "nansum",
    "prod", "ptp", "reduce", "scan", "std", "sum", "sum_first_axis", "tuning_class", "var",
]

_INT32_MAX = 2**31 - 1

# (the NaN test second, and as x != x: PoCL and Intel's CPU runtime vectorise these better,
# max 1.5-2x faster than with isnan)
_NAN_MAX = "((a >= b || a != a) ? a : b)"
_NAN_MIN = "((a <= b || a != a) ? a : b)"
_SKIP_NAN_MAX = "((a != a) ? b : (b != b || a >= b) ? a : b)"
_SKIP_NAN_MIN = "((a != a) ? b : (b != b || a <= b) ? a : b)"

# name -> (map of v, whether the map gives a bool, reduce of a and b (by accumulator kind
# where it differs), neutral element)
_OPS = {
    "sum": ("v", False, {"b": "a | b", "*": "a + b"}, "zero"),  # bool: logical or, as numpy
    "prod": ("v", False, "a * b", "one"),
    "max": ("v", False, {"f": _NAN_MAX, "*": "(a >= b ? a : b)"}, "lowest"),
    "min": ("v", False, {"f": _NAN_MIN, "*": "(a <= b ? a : b)"}, "highest"),
    "any": ("(v != 0)", True, "a | b", "zero"),
    "all": ("(v != 0)", True, "a & b", "one"),
    "nansum": ("(isnan(v) ? 0 : v)", False, "a + b", "zero"),
    "nanprod": ("(isnan(v) ? 1 : v)", False, "a * b", "one"),
    "nanmax": ("v", False, {"f": _SKIP_NAN_MAX}, "nan"),
    "nanmin": ("v", False, {"f": _SKIP_NAN_MIN}, "nan"),
    "count": ("(v != 0)", True, "a + b", "zero"),
    "count_notnan": ("(!isnan(v))", True, "a + b", "zero"),
    "argmax": ("v", False, "", "lowest"),
    "argmin": ("v", False, "", "highest"),
}


# complex accumulators: numpy's product, and its lexicographic order with NaN propagating
_CNAN = "(isnan({0}.s0) || isnan({0}.s1))"
_COMPLEX_REDUCE = {
    "prod": "ga_cmul_{T}(a, b)",
    "max": f"(({_CNAN.format('a')} || (!{_CNAN.format('b')} && (a.s0 > b.s0 || "
           f"(a.s0 == b.s0 && a.s1 >= b.s1)))) ? a : b)",
    "min": f"(({_CNAN.format('a')} || (!{_CNAN.format('b')} && (a.s0 < b.s0 || "
           f"(a.s0 == b.s0 && a.s1 <= b.s1)))) ? a : b)",
}


def _neutral(kind, dt):
    ctype = dtypes.compute_type(dt)
    if dt.kind == "c":
        value = {"zero": "0, 0", "one": "1, 0", "lowest": "-INFINITY, -INFINITY",
                 "highest": "INFINITY, INFINITY", "nan": "NAN, NAN"}[kind]
        return f"(({ctype})({value}))"
    if kind == "zero":
        return f"(({ctype})0)"
    if kind == "one":
        return f"(({ctype})1)"
    if kind == "nan":
        return "NAN"
    if dt.kind == "f":
        return "-INFINITY" if kind == "lowest" else "INFINITY"
    if dt.kind == "b":
        return "0" if kind == "lowest" else "1"
    info = np.iinfo(dt)
    value = info.min if kind == "lowest" else info.max
    return f"(({ctype}){value}{'UL' if dt.kind == 'u' else 'L'})" if value != -2**63 \
        else "LONG_MIN"


def _axes(axis, ndim):
    if axis is None:
        return tuple(range(ndim))
    axes = axis if isinstance(axis, tuple | list) else (axis,)
    norm = tuple(sorted(_normalize_axis(a, ndim) for a in axes))
    if len(set(norm)) != len(norm):
        raise ArgumentError(f"duplicate value in 'axis': {axis}")
    return norm


class _Spec(dict):
    """A reduction's template parameters; `key`, their hashable summary, made once."""

    @functools.cached_property
    def key(self):
        return tuple(sorted(self.items()))


@functools.lru_cache(maxsize=1024)
def _spec(op, in_dtype, acc_dtype, out_dtype):
    """The template parameters of builtin reduction `op` (a first stage); made once per
    dtypes (read-only: callers copy it to change it)."""
    map_expr, map_bool, reduce_expr, neutral_kind = _OPS[op]
    if in_dtype.kind == "b" and map_expr == "v":
        map_expr = "(v != 0)"  # a bool byte of 2 or 255 is True (max, argmax compare them)
    if isinstance(reduce_expr, dict):
        reduce_expr = reduce_expr.get(acc_dtype.kind, reduce_expr.get("*"))
        if reduce_expr is None:
            raise UnsupportedError(f"{op} is not supported for dtype {in_dtype}")
    preamble = ""
    if acc_dtype.kind == "c" and op in _COMPLEX_REDUCE:
        ctype = dtypes.compute_type(acc_dtype)
        reduce_expr = _COMPLEX_REDUCE[op].format(T=ctype)
        preamble = render("ufunc_helpers.cl.mako", helpers=(("cmul", ctype),)) \
            if op == "prod" else ""
    return _Spec(in_dtype=in_dtype.name, acc_dtype=acc_dtype.name, out_dtype=out_dtype.name,
                 map_expr=map_expr, map_dtype="bool" if map_bool else in_dtype.name,
                reduce_expr=reduce_expr, neutral=_neutral(neutral_kind, acc_dtype),
                arg=op[3:] if op in ("argmax", "argmin") else None, preamble=preamble,
                user_args=None, vectors=True)


def _out_shape(shape, axes, keepdims):
    if keepdims:
        return tuple(1 if d in axes else n for d, n in enumerate(shape))
    return tuple(n for d, n in enumerate(shape) if d not in axes)


def _check_out(out, shape, dtype, like, others=()):
    """A new output, or `out` checked; None where out needs a cast (numpy casts into out) or
    may overlap the input `like` (or `others`): the caller then computes into a temporary
    and copies it into out, as numpy does."""
    if out is None:
        ctx = like.context
        return ArrayBase._empty(ctx, shape, dtypes.check_device(dtype, ctx))
    if not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"out= must be a GpuArray, not {type(out).__name__}")
    if out.shape != shape:
        raise ArgumentError(f"output parameter for reduction has shape {out.shape}, "
                            f"expected {shape}")
    check_same_context(like, out)
    out._check_writeable()
    if out.dtype != dtype or out._may_share(like) or builtins.any(
            out._may_share(a) for a in others):
        return None
    return out


def reduce(a, op, axis=None, acc_dtype=None, out_dtype=None, keepdims=False, out=None):
    """out[kept] = op over the `axis` elements of a (a GpuArray); dtypes already decided."""
    axes = _axes(axis, a.ndim)
    out_shape = _out_shape(a.shape, axes, keepdims)
    out_dtype, acc_dtype = np.dtype(out_dtype), np.dtype(acc_dtype)
    result = _check_out(out, out_shape, out_dtype, a)
    if result is None:
        return out._assign(reduce(a, op, axis, acc_dtype, out_dtype, keepdims))
    if result.size == 0:
        return result
    spec = _spec(op, a.dtype, acc_dtype, out_dtype)
    if 0 in a.shape and math.prod(a.shape[d] for d in axes) == 0:
        neutral_kind = _OPS[op][3]
        if neutral_kind in ("lowest", "highest") or op in ("nanmax", "nanmin"):
            raise ArgumentError(f"zero-size array to reduction operation {op} which has no "
                                f"identity")
        return result.fill({"zero": 0, "one": 1, "nan": np.nan}[neutral_kind])
    source = _Source([a.storage], a.offset // a.itemsize, _elements(a.strides, a), [a])
    return _reduce_into(a.context, spec, a.shape, axes, source, result)


class _Source:
    """What a reduction reads: kernel arguments, element offset and strides, the arrays."""

    __slots__ = ("args", "arrays", "offset", "strides")

    def __init__(self, args, offset, strides, arrays):
        self.args, self.offset, self.strides, self.arrays = args, offset, strides, arrays


def _reduce_into(ctx, spec, shape, axes, source, out):
    """Reduce `source` (of `shape`) over `axes` into `out` (non-empty), in one or two stages.
    The launches are worked out once per layout and kept on the context."""
    key = ("reduce", spec.key, shape, axes, tuple(source.strides), source.offset,
           len(source.args), out.shape, out.strides, out.offset, out.dtype, tuning_class(ctx))
    recipe = ctx.plans.get(key)
    if recipe is None:
        recipe = ctx.plans[key] = _recipe(ctx, spec, shape, axes, source, out)
    launches, temps = recipe
    bound = {"out": out}
    for role, (tshape, dtype) in temps.items():
        bound[role] = _counters(ctx, tshape) if role == "counters" else \
            ArrayBase._empty(ctx, tshape, dtype)
    for launch in launches:
        _run(ctx, launch, source, bound)
    return out


def _compute_dtype(name):
    """The dtype name whose storage is the compute type of dtype `name` (float16: float32)."""
    return "float32" if name == "float16" else name


def _recipe(ctx, spec, shape, axes, source, out):
    """([launches], {temporary role: (shape, dtype)}) of a reduction."""
    kept = [d for d in range(len(shape)) if d not in axes]
    out_view = out.reshape(tuple(shape[d] for d in kept)) if out.ndim != len(kept) else out
    kdims, (kin, kout) = elemwise.collapse(
        [shape[d] for d in kept],
        [[source.strides[d] for d in kept], [s // out.itemsize for s in out_view.strides]])
    rdims, (rin,) = elemwise.collapse([shape[d] for d in axes], [[source.strides[d] for d in axes]])
    if not rdims:
        rdims, rin = [1], [0]
    m, n = math.prod(kdims), math.prod(rdims)
    inner = not kdims or abs(rin[-1]) < abs(kin[-1])
    band_ok = len(kdims) == 1 and not spec["arg"]
    plan = _plan(ctx, m, n, inner, band_ok, vec=_vector(ctx, spec, rin))
    out_off = out.offset // out.itemsize
    src = (source.offset, len(source.args))
    # partials are kept in the accumulator's compute type (float16 as float32)
    acc = _compute_dtype(spec["acc_dtype"])
    if plan.parts == 1 and (plan.mode != "band" or out.dtype.name == acc):
        return [_prepare(ctx, spec, plan, kdims, rdims, src, kin, rin, out_off, 0, kout)], {}
    # First stage: partial[p, o] (plus the indices for argmax/argmin); second: over p.
    temps = {"partial": ((plan.parts, m), np.dtype(acc))}
    if spec["arg"]:
        temps["pidx"] = ((plan.parts, m), np.dtype(np.int64))
    if plan.mode == "group":  # the last group of each output does the second stage
        temps["counters"] = (m, np.uint32)
        return [_prepare(ctx, spec, plan, kdims, rdims, src, kin, rin, out_off, 0, kout,
                         finish=True)], temps
    contiguous = [math.prod(kdims[d + 1:]) for d in range(len(kdims))]
    first = _prepare(ctx, spec, plan, kdims, rdims, src, kin, rin, 0, m, contiguous,
                     out_role="partial", pair=bool(spec["arg"]), out_dtype=acc)
    second = _Spec(spec, in_dtype=acc, map_expr="v", map_dtype=acc, user_args=None)
    plan2 = _plan(ctx, m, plan.parts, m == 1, False, final=True,
                  vec=1 if spec["arg"] else _vector(ctx, second, [m]))
    return [first, _prepare(ctx, second, plan2, kdims, [plan.parts], (0, "partial"), contiguous,
                            [m], out_off, 0, kout, arg_in=bool(spec["arg"]))], temps


@dataclasses.dataclass(frozen=True)
class _Plan:
    """How a stage lays out its work (see kernels/reduction.cl.mako)."""
    mode: str
    local: int
    unroll: int
    parts: int
    block: int = 1
    unit: bool = False
    vec: int = 1


# Work decomposition constants, measured (benchmarks/bench_reduction.py): per compute unit,
# the work-groups (GPU, reduced axis inner) or work-items (GPU outer, CPU) to aim for; the
# fewest elements per part; loads or accumulators per step; CPUs: the bytes of a vector
# accumulator (item mode, a contiguous reduced axis: see _item_vector) and how many; with
# scalar accumulators over a reduced axis inner, the part length below which work-items run
# in work-groups of 64 rather than of 1 (the driver then vectorises across work-items, a
# gather per load: PoCL gains below ~1024 elements, Intel's CPU runtime loses at any length,
# 1.5-6x; with vector accumulators both gain from work-groups of 64).
TUNING = {
    "gpu": dict(groups_per_cu=16, group_unroll=4, group_least=4096, items_per_cu=2048,
                item_unroll=4, item_least=256, scan_unroll=16, scan_chunks_per_cu=16,
                scan_least=16384),
    "cpu": dict(items_per_cu=16, inner_unroll=16, inner_least=8192, outer_unroll=4,
                outer_least=1024, band_block=16384, bands_per_cu=4, scan_unroll=32,
                scan_chunks_per_cu=16, scan_least=65536, inner_group_below=1024,
                item_vec_bytes=64, item_vec_unroll=4),
}
# Intel's CPU runtime (pip's intel-opencl-rt): the CPU decompositions, tuned for it
TUNING["intel-cpu"] = dict(TUNING["cpu"], inner_group_below=0)


def device_class(ctx):
    """'gpu' or 'cpu': which decompositions a context gets (tests patch it to run the GPU
    decompositions on PoCL)."""
    return "gpu" if ctx.device.is_gpu else "cpu"


def tuning_class(ctx):
    """Which TUNING entry a context gets: device_class's, or 'intel-cpu' for Intel's CPU
    runtime, whose compiler wants other constants than PoCL's (tests patch it too)."""
    cls = device_class(ctx)
    if cls == "cpu" and "intel" in ctx.device.vendor.lower():
        return "intel-cpu"
    return cls


def _plan(ctx, m, n, inner, band_ok, final=False, vec=1):
    """The decomposition of m reductions of n elements, from the layout and the device only
    (so the same input always gives the same bits). `final`: one part, no band; `vec`:
    the elements of vector accumulators work-items may take (_vector)."""
    return _decompose(tuning_class(ctx), ctx.device.compute_units, ctx.local_size,
                      _group_size(ctx), m, n, inner, band_ok, final, vec)


def _vector(ctx, spec, rin):
    """_item_vector for a stage of `spec` over reduced strides `rin` on ctx's device."""
    return _item_vector(spec, rin, TUNING[tuning_class(ctx)].get("item_vec_bytes", 0))


@functools.lru_cache(maxsize=4096)
def _decompose(cls, cu, item_local, group_local, m, n, inner, band_ok, final, vec=1):
    """_plan's decision (cached: after changing TUNING, call _decompose.cache_clear())."""
    def split(target, least):  # parts so that at most `target` workers run, each >= least
        return 1 if final else builtins.max(1, builtins.min(target // m, n // least))

    if cls == "gpu":
        t = TUNING["gpu"]
        if inner and n >= 32:
            return _Plan("group", group_local, t["group_unroll"],
                         split(t["groups_per_cu"] * cu, t["group_least"]))
        return _Plan("item", item_local, t["item_unroll"],
                     split(t["items_per_cu"] * cu, t["item_least"]))
    t = TUNING[cls]
    if not inner and band_ok and not final:
        block = builtins.min(m, t["band_block"])
        parts = builtins.max(1, builtins.min(-(-t["bands_per_cu"] * cu // -(-m // block)),
                                             n // 16))
        return _Plan("band", 1, 1, parts, block)
    parts = split(t["items_per_cu"] * cu, t["inner_least"] if inner else t["outer_least"])
    # at least 8 work-groups per compute unit, of 1 or 64 work-items (PoCL compiles a kernel
    # once per work-group size; a work-group of one costs it some 40 ns more per item, Intel's
    # runtime more); scalar accumulators over a reduced axis inner: see inner_group_below
    grouped = not inner or vec > 1 or -(-n // parts) < t["inner_group_below"]
    local = 64 if grouped and m * parts >= 64 * 8 * cu else 1
    if vec > 1:
        return _Plan("item", local, t["item_vec_unroll"], parts, vec=vec)
    return _Plan("item", local, t["inner_unroll"] if inner else t["outer_unroll"], parts)


def _scalar_type(dt):
    """The dtype a scalar kernel argument is passed as (float16 travels as float)."""
    return np.dtype(np.float32) if dt == "float16" else np.dtype(dt)


_VECTOR_BYTES = 16
_VECTOR_DTYPES = ("float32", "int32", "uint32", "float64", "int64", "uint64")


def _item_vector(spec, rin, vec_bytes):
    """The elements of an item-mode stage's vector accumulators (1: scalar ones): vectors of
    vec_bytes where the reduced axis is contiguous and the operation a builtin one (spec
    `vectors`: its expressions hold for vectors, where a user's may call scalar functions)
    whose map is the identity (argmax/argmin: not a second stage)."""
    dt = spec["in_dtype"]
    if not vec_bytes or rin != [1] or not spec["vectors"] or \
            spec["map_expr"] != "v" or dt != spec["acc_dtype"] or dt not in _VECTOR_DTYPES:
        return 1
    return builtins.min(vec_bytes // np.dtype(dt).itemsize, 16)  # OpenCL vectors: 2 to 16


def _group_size(ctx):
    return 1 << (builtins.min(256, ctx.max_work_group_size).bit_length() - 1)


def _counters(ctx, m):
    """m zeroed uint32 counters of `ctx` for single-launch reductions (left zeroed)."""
    m = m if isinstance(m, int) else m[0]
    counters = ctx.state.get("reduction counters")
    if counters is None or counters.size < m:
        counters = ctx.state["reduction counters"] = zeros(builtins.max(m, 1024), np.uint32,
                                                           context=ctx)
    return counters


@dataclasses.dataclass
class _Launch:
    """One reduction kernel launch, its buffers named by role: 'src' (the source's
    arguments), 'out', 'partial', 'pidx', 'counters'; bound to arrays at each call."""
    kernel: object   # launch.Launcher
    size: tuple
    local: tuple
    args: list
    slots: list      # (position in args, role)
    roles: tuple     # the roles the kernel reads or writes, besides the source
    writes: tuple
    chunk: int       # reduced elements per part


def _prepare(ctx, spec, plan, kdims, rdims, src, kin, rin, out_off, out_ps, kout,
             out_role="out", pair=False, arg_in=False, finish=False, out_dtype=None):
    """The launch of one reduction kernel: part p of output o into out[o + p * out_ps].
    `src`: (element offset, number of arguments) of the source, or (0, role) of a temporary;
    `pair`: also write the indices (pidx); `arg_in`: read them; `finish`: one launch for both
    stages (partial, pidx, counters); `out_dtype`: of the output, if not the spec's."""
    m, n = math.prod(kdims), math.prod(rdims)
    src_offset, src_args = src
    chunk = -(-n // plan.parts)
    if plan.mode == "band":
        plan = dataclasses.replace(plan, unit=kin == [1] and kout == [1])
    elif plan.mode == "group" and rin == [1] and not arg_in and not spec["user_args"]:
        vec = _VECTOR_BYTES // np.dtype(spec["in_dtype"]).itemsize
        if spec["in_dtype"] in _VECTOR_DTYPES:
            plan = dataclasses.replace(plan, vec=vec)
            chunk = -(-chunk // vec) * vec
    items = m * plan.parts
    span = builtins.sum(abs(s) * (d - 1) for s, d in zip(kin + rin, kdims + rdims))
    out_span = builtins.sum(abs(s) * (d - 1) for s, d in zip(kout, kdims))
    reach = builtins.max(items + plan.local, n + chunk + plan.unroll * plan.local * plan.vec,
                         abs(src_offset) + span, out_off + out_span + out_ps * plan.parts,
                         m * plan.block)
    index_t = "int" if reach <= _INT32_MAX else "long"
    itype = np.int32 if index_t == "int" else np.int64
    kdims, kin, kout = _pad_kept(kdims, kin, kout)
    rdims, rin = _pad_reduced(rdims, rin)
    variant = _Variant(plan.mode, len(kdims), len(rdims), plan.unroll, plan.vec, plan.unit,
                       arg_in, pair and bool(spec["arg"]), finish,
                       plan.local if plan.mode == "group" else 1,
                       _compute_dtype(spec["acc_dtype"]) if plan.mode == "band" else
                       out_dtype or spec["out_dtype"])
    key = ("reduce", spec.key, plan, variant, index_t)
    after_out = ["pidx"] if pair else ["partial", "pidx", "counters"] if finish else []
    if not spec["arg"]:
        after_out = [r for r in after_out if r != "pidx"]
    user = spec["user_args"]
    in_types = [None, itype] if user is None else \
        [t for _, dt, is_array in user for t in ([None, itype] if is_array else
                                                   [_scalar_type(dt)])] + [itype]
    arg_dtypes = [itype] * (5 + len(kdims) + len(rdims)) + in_types + \
        [itype] * (len(kdims) + len(rdims)) + [None] * arg_in + \
        [None, itype, itype] + [itype] * len(kdims) + [None] * len(after_out)
    kernel = ctx.kernels.get(key) or _kernel(ctx, key, spec, variant, index_t, arg_dtypes)
    head = [m, n, chunk, plan.parts, plan.block, *kdims, *rdims]
    if isinstance(src_args, str):  # a temporary: buffer, offset 0
        slots, args = [(len(head), src_args)], [*head, None, 0]
    else:
        slots = [(len(head) + i, i) for i in range(src_args)]
        args = [*head, *[None] * src_args, src_offset]
    args += [*kin, *rin]
    roles = [src_args] if isinstance(src_args, str) else []
    if arg_in:
        slots.append((len(args), "pidx"))
        args.append(None)
        roles.append("pidx")
    slots.append((len(args), out_role))
    args += [None, out_off, out_ps, *kout]
    for role in after_out:
        slots.append((len(args), role))
        args.append(None)
    writes = (out_role, *after_out)
    if plan.mode == "band":
        size, local = (-(-m // plan.block), plan.parts), (1, 1)
    elif plan.mode == "group":
        size, local = (items * plan.local,), (plan.local,)
    else:
        size, local = (-(-items // plan.local) * plan.local,), (plan.local,)
    return _Launch(kernel, size, local, args, slots, tuple(roles) + writes, writes,
                   chunk)


# Kept and reduced dimensions (after collapsing) are passed in buckets: 1, or up to
# _DIMS padded with size-1 dimensions of stride 0 (more: their exact number), so that one
# kernel serves every layout of a bucket. A single output passes one kept dimension of 1.
_DIMS = 4


def _bucket(ndim):
    return 1 if ndim <= 1 else _DIMS if ndim <= _DIMS else ndim


def _pad_kept(dims, *strides):
    """Kept dims padded at the front (their index arithmetic is once per output)."""
    pad = _bucket(len(dims)) - len(dims)
    return [1] * pad + dims, *([0] * pad + s for s in strides)


def _pad_reduced(dims, strides):
    """Reduced dims padded after the outermost one: the kernel skips dims of size 1, and the
    outermost needs no division, so a padded layout costs a branch per padding and element."""
    pad = _bucket(len(dims)) - len(dims)
    return dims[:1] + [1] * pad + dims[1:], strides[:1] + [0] * pad + strides[1:]


@dataclasses.dataclass(frozen=True)
class _Variant:
    """The layout parameters of one kernel of reduction.cl.mako (see there)."""
    mode: str
    kdim: int
    rdim: int
    unroll: int
    vec: int
    unit: bool
    arg_in: bool
    pair: bool
    finish: bool
    local: int
    out_dtype: str

    @property
    def name(self):
        flags = "".join(f for f, on in (("v", self.vec > 1), ("u", self.unit), ("i", self.arg_in),
                                         ("p", self.pair), ("f", self.finish)) if on)
        return (f"reduce_{self.mode}{self.unroll}_k{self.kdim}r{self.rdim}_{flags}"
                f"{self.vec if self.vec > 1 else ''}_{self.local}_{self.out_dtype}")

    def params(self):
        return (self.name, self.mode, self.kdim, self.rdim, self.unroll, self.vec, self.unit,
                self.arg_in, self.pair, self.finish, self.local, self.out_dtype)


def _kernel(ctx, key, spec, variant, index_t, arg_dtypes):
    """The kernel of `variant`, stored under `key`. Its program holds the variant alone, or,
    where the driver compiles a program's kernels only when first launched (PoCL: a program
    costs ~0.1 s to build, each kernel ~0.08 s at its first launch), every variant of the
    spec's family: one build then serves the spec's other layouts."""
    family = _family_of(spec.key, tuning_class(ctx), _group_size(ctx)) \
        if elemwise.lazy_kernels(ctx) else ()
    variants = family if variant in family else (variant,)
    params = {k: v for k, v in spec.items() if k != "out_dtype"}
    program = get_program(ctx, ("reduce", spec.key, variants, index_t), "reduction.cl.mako",
                          variants=[v.params() for v in variants], index_t=index_t,
                          fence=device_fence(ctx.device.nv_capability), **params)
    return kernel_from(ctx, key, program, variant.name, arg_dtypes)


@functools.lru_cache(maxsize=1024)
def _family_of(spec_key, cls, group_local):
    """The variants of a reduction spec (its `key`) that share one program where kernels
    compile lazily: those most layouts of the decompositions of `cls` need (measured on the
    tests' layouts: a variant adds some 0.01-0.05 s to the program's build, a program of its
    own costs 0.1-0.2 s); the others, such as the argmax/argmin stages of many parts and
    reductions over both several kept and several reduced dimensions, are built alone."""
    spec = dict(spec_key)
    acc = _compute_dtype(spec["acc_dtype"])
    out = spec["out_dtype"]
    t = TUNING[cls]
    found = []

    def add(mode, unroll, kdim=1, rdim=1, vec=1, unit=False, finish=False, local=1, dt=out):
        found.append(_Variant(mode, kdim, rdim, unroll, vec, unit, False, False, finish,
                              local, dt))

    shapes = ((1, 1), (_DIMS, 1), (1, _DIMS))
    if cls == "gpu":
        for kdim, rdim in shapes:
            for finish in (False, True):
                add("group", t["group_unroll"], kdim, rdim, finish=finish, local=group_local)
            add("item", t["item_unroll"], kdim, rdim)
        vec = _VECTOR_BYTES // np.dtype(spec["in_dtype"]).itemsize
        if spec["in_dtype"] in _VECTOR_DTYPES and not spec["user_args"]:
            for finish in (False, True):
                add("group", t["group_unroll"], vec=vec, finish=finish, local=group_local)
        first = t["item_unroll"]
    else:
        for kdim, rdim in shapes:
            add("item", t["inner_unroll"], kdim, rdim)
        vec = _item_vector(spec, [1], t.get("item_vec_bytes", 0))
        if vec > 1:  # a contiguous reduced axis
            for kdim in (1, _DIMS):
                add("item", t["item_vec_unroll"], kdim, vec=vec)
        add("item", t["outer_unroll"])
        if not spec["arg"]:
            for unit, rdim in ((True, 1), (False, 1), (False, _DIMS)):
                add("band", 1, rdim=rdim, unit=unit, dt=acc)
        first = t["inner_unroll"]
    if acc != out and not spec["arg"]:  # the first of two stages writes partials
        add("item", first, dt=acc)
    return tuple(found)


def _run(ctx, launch, source, bound):
    """Enqueue `launch` with its roles bound to `source` (for integer roles) and arrays."""
    args = launch.args.copy()
    for pos, role in launch.slots:
        args[pos] = source.args[role] if isinstance(role, int) else bound[role].storage
    writes = [bound[r].storage for r in launch.writes]
    reads = [a.storage for a in source.arrays]
    reads += [bound[r].storage for r in launch.roles if r not in launch.writes]
    enqueue(ctx, launch.kernel, launch.size, launch.local, args, reads, writes)


# ---------------------------------------------------------------- user kernels

class ReductionKernel:
    """A user reduction in pyopencl's form, over any axes of arrays of any layout.

        dot = ReductionKernel(np.float32, "0", "a + b", "x[i] * y[i]",
                              "const float *x, const float *y")
        dot(x, y)                   # a 0-d GpuArray; dot(x, y, axis=1, keepdims=True)

    `map_expr` reads array arguments as name[i] (the element of the broadcast shape of all
    arrays) and scalar arguments by name; `reduce_expr` combines accumulators `a` and `b`
    (it must be associative: the order of combination is fixed but not sequential);
    `neutral` is its identity, an OpenCL expression. The result has dtype `dtype_out`.
    """

    def __init__(self, dtype_out, neutral, reduce_expr, map_expr, arguments, preamble="",
                 name="reduce", context=None):
        self.name, self.context = name, context
        self.dtype = dtypes.normalize(dtype_out)
        self.args = elemwise.parse_arguments(arguments, name)
        for var, _, is_array in self.args:
            if is_array:
                map_expr = re.sub(rf"\b{re.escape(var)}\s*\[\s*i\s*\]", f"ga_load_{var}(i)",
                                  map_expr)
        self.spec = _Spec(in_dtype=self.dtype.name, acc_dtype=self.dtype.name,
                         out_dtype=self.dtype.name, map_expr=map_expr,
                         map_dtype=self.dtype.name, reduce_expr=reduce_expr, neutral=neutral,
                         arg=None, preamble=preamble,
                         user_args=tuple((v, dt.name, is_array) for v, dt, is_array in self.args),
                         vectors=False)

    def __call__(self, *values, axis=None, keepdims=False, out=None):
        arrays, scalars, ctx = elemwise.bind_arguments(self.name, self.args, values,
                                                       self.context)
        dtypes.check_device(self.dtype, ctx)
        shape = elemwise.broadcast_shape([a.shape for a in arrays])
        if builtins.any(a.shape != shape or _elements(a.strides, a) != _elements(
                arrays[0].strides, arrays[0]) for a in arrays):
            # one layout for all: C-contiguous copies of the broadcast arrays
            arrays = [broadcast_to(a, shape).copy() for a in arrays]
        axes = _axes(axis, len(shape))
        result = _check_out(out, _out_shape(shape, axes, keepdims), self.dtype, arrays[0],
                            arrays[1:])
        if result is None:
            return out._assign(self(*values, axis=axis, keepdims=keepdims))
        if result.size == 0:
            return result
        it_arrays, it_scalars = iter(arrays), iter(scalars)
        args = []
        for _, _, is_array in self.args:
            if is_array:
                a = next(it_arrays)
                args += [a.storage, a.offset // a.itemsize]
            else:
                args.append(next(it_scalars))
        first = arrays[0]
        source = _Source(args, 0, _elements(first.strides, first), arrays)
        return _reduce_into(ctx, self.spec, shape, axes, source, result)


def _elements(strides, a):
    return [s // a.itemsize for s in strides]


class ScanKernel:
    """A user scan along one axis: out[k] = x[0] op x[1] op ... op x[k] (inclusive), or
    the same up to x[k-1] with out[0] = neutral (exclusive).

        running_max = ScanKernel(np.float32, "fmax(a, b)", "-INFINITY")
        running_max(x, axis=0)

    `scan_expr` combines accumulators `a` and `b` (associative), `neutral` is its identity;
    inputs are converted to `dtype`, the accumulator and result dtype. A work-efficient
    blocked scan, the same bits every run: on GPUs one pass (kernels/scan.cl.mako's
    look-back), on CPUs a reduction of chunks, then the scan.
    """

    def __init__(self, dtype, scan_expr, neutral, exclusive=False, preamble="", name="scan",
                 context=None):
        self.name, self.context = name, context
        self.dtype = dtypes.normalize(dtype)
        self.spec = dict(acc_dtype=self.dtype.name, out_dtype=self.dtype.name, op_expr=scan_expr,
                         neutral=neutral, preamble=preamble, exclusive=bool(exclusive))

    def __call__(self, x, axis=None, out=None):
        if not isinstance(x, ArrayBase):
            raise ArgumentTypeError(f"scan {self.name} takes a GpuArray, got "
                                    f"{type(x).__name__}")
        if self.context is not None and self.context is not x.context:
            raise ContextMismatch(f"scan {self.name} was made for {self.context.devname}, "
                                  f"called on an array of {x.context.devname}")
        dtypes.check_device(self.dtype, x.context)
        return scan(x, dict(self.spec, in_dtype=x.dtype.name), axis, out)


# ---------------------------------------------------------------- numpy-named functions

def _as_array(a):
    return a if isinstance(a, ArrayBase) else to_device(np.asarray(a), None)


def _sum_dtypes(a, dtype):
    """(accumulator, result) dtypes of numpy's sum of `a` with `dtype`."""
    return _numpy_dtypes(np.sum, a.dtype, dtype)


@functools.lru_cache(maxsize=512)
def _numpy_dtypes(fn, in_dtype, dtype):
    res = fn(np.zeros(1, in_dtype), dtype=dtype).dtype
    return (np.dtype(np.float32) if res == np.float16 else res), res


def sum_first_axis(a, out):
    """out = a.sum(axis=0) for a float32/float64 GpuArray `a` into `out` (a[0]'s shape and
    a's dtype, sharing no memory with a): `reduce` without its checks (blas's split-K)."""
    dt = a.dtype
    source = _Source([a.storage], a.offset // a.itemsize, _elements(a.strides, a), [a])
    return _reduce_into(a.context, _spec("sum", dt, dt, dt), a.shape, (0,), source, out)


def sum(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Sum over `axis` (numpy's accumulator: small ints in int64, float16 in float32)."""
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    return _reduce_with(a, "sum", axis, acc, res, keepdims, out, initial, where)


def prod(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
    """Product over `axis` (numpy's accumulator: small ints in int64, float16 in float32)."""
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    return _reduce_with(a, "prod", axis, acc, res, keepdims, out, initial, where)


def _extremum(op):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        a = _as_array(a)
        acc = np.float32 if a.dtype == np.float16 else a.dtype
        return _reduce_with(a, op, axis, acc, a.dtype, keepdims, out, initial, where)
    fn.__name__ = op
    fn.__doc__ = f"numpy.{op} over `axis` (NaN propagates, as in numpy)."
    return fn


max = amax = _extremum("max")
min = amin = _extremum("min")

# what a masked-out element becomes (None: the `initial` the user must give), and the ufunc
# that brings `initial` into a result
_MASK_FILL = {"sum": 0, "prod": 1, "any": False, "all": True, "nansum": 0, "nanprod": 1}
_WITH_INITIAL = {"sum": "add", "prod": "multiply", "max": "maximum", "min": "minimum",
                 "nansum": "add", "nanprod": "multiply", "nanmax": "fmax", "nanmin": "fmin"}


def _reduce_with(a, op, axis, acc, res, keepdims, out, initial=None, where=True):
    """reduce() with numpy's `initial` (a first element) and `where` (a mask of the
    elements that take part)."""
    if where is not True:
        fill = _MASK_FILL.get(op, initial)
        if fill is None:
            raise ArgumentError(f"reduction operation {op!r} does not have an identity, so to "
                                f"use a where mask one has to specify 'initial'")
        a = _masked(a, where, fill)
    if initial is None:
        return reduce(a, op, axis, acc, res, keepdims, out)
    acc = np.dtype(acc)
    axes = _axes(axis, a.ndim)
    if math.prod(a.shape[d] for d in axes) == 0:
        return _finish(full(_out_shape(a.shape, axes, keepdims), initial, acc,
                            context=a.context), res, out)
    total = reduce(a, op, axis, acc, acc, keepdims)
    return _finish(UFUNCS[_WITH_INITIAL[op]](total, np.asarray(initial).astype(acc)[()]), res,
                   out)


def _mask(a, where):
    """`where` as a boolean GpuArray of a's shape (numpy broadcasts it to a)."""
    mask = where if isinstance(where, ArrayBase) else to_device(np.asarray(where), a.context)
    if mask.dtype != np.bool_:
        mask = UFUNCS["not_equal"](mask, 0)
    if elemwise.broadcast_shape([mask.shape, a.shape]) != a.shape:
        raise ShapeError(f"where mask of shape {mask.shape} does not broadcast to the "
                         f"array's shape {a.shape}")
    return broadcast_to(mask, a.shape)


def _masked(a, where, fill):
    """a where the mask is True, `fill` elsewhere."""
    return ufunc_where(_mask(a, where), a, np.asarray(fill).astype(a.dtype)[()])


def _logical(op):
    def fn(a, axis=None, out=None, keepdims=False, where=True):
        a = _as_array(a)
        if a.dtype.kind == "c":
            a = _nonzero(a)
        return _reduce_with(a, op, axis, np.bool_, np.bool_, keepdims, out, where=where)
    fn.__name__ = op
    fn.__doc__ = f"numpy.{op} over `axis`."
    return fn


any = _logical("any")
all = _logical("all")


def _nonzero(a):
    """a != 0 (complex values reduce through it)."""
    return UFUNCS["not_equal"](a, 0)


def _arg_extremum(op):
    def fn(a, axis=None, out=None, keepdims=False):
        a = _as_array(a)
        if isinstance(axis, tuple | list):
            raise ArgumentError(f"{op} takes a single axis or None, not {axis!r}")
        if a.size == 0 and (axis is None or 0 in (a.shape[i] for i in _axes(axis, a.ndim))):
            raise ArgumentError(f"attempt to get {op} of an empty sequence")
        acc = np.float32 if a.dtype == np.float16 else a.dtype
        result = reduce(a, op, axis, acc, np.int64, keepdims, out)
        if axis is None and keepdims:
            return result.reshape((1,) * a.ndim) if out is None else result
        return result
    fn.__name__ = op
    fn.__doc__ = f"numpy.{op}: index of the first {op[3:]}imum along `axis` (flat if None)."
    return fn


argmax = _arg_extremum("argmax")
argmin = _arg_extremum("argmin")


def count_nonzero(a, axis=None, keepdims=False):
    """How many elements over `axis` are not zero (int64; complex: either part non-zero)."""
    a = _as_array(a)
    if a.dtype.kind == "c":
        a = _nonzero(a)
    return reduce(a, "count", axis, np.int64, np.int64, keepdims)


def _mean_dtypes(a, dtype):
    return _numpy_dtypes(np.mean, a.dtype, dtype)


def mean(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    """Arithmetic mean (ints in float64, float16 accumulated in float32), as numpy."""
    a = _as_array(a)
    acc, res = _mean_dtypes(a, dtype)
    return _finish(_mean(a, axis, acc, keepdims, where, warn="Mean of empty slice"), res, out)


def _mean(a, axis, acc, keepdims, where, ddof=0, warn=None):
    """sum / max(count - ddof, 0) in the accumulator dtype, over the elements `where`
    selects: a divisor of 0 gives inf or nan, as numpy, with its RuntimeWarning `warn` (where
    is True only: with a mask, the counts are on the device)."""
    if where is True:
        total = reduce(a, "sum", axis, acc, acc, keepdims)
        n = math.prod(a.shape[d] for d in _axes(axis, a.ndim)) - ddof
        if n <= 0:
            if warn:
                warnings.warn(warn, RuntimeWarning, stacklevel=3)
            n = 0
        return UFUNCS["true_divide"](total, n)
    total = reduce(_masked(a, where, 0), "sum", axis, acc, acc, keepdims)
    count = reduce(_mask(a, where), "count", axis, np.int64, np.int64, keepdims)
    if ddof:
        count = UFUNCS["maximum"](UFUNCS["subtract"](count, ddof), 0)
    return UFUNCS["true_divide"](total, count).astype(acc, copy=False)


def _finish(result, dtype, out):
    """`result` (computed in the accumulator dtype) as `dtype`, or written into `out`."""
    if out is not None:
        return out._assign(result)
    return result if result.dtype == dtype else result.astype(dtype)


def _ddof(ddof, correction):
    """numpy's ddof, or the Array API's name for it (correction=)."""
    if correction is None:
        return ddof
    if ddof != 0:
        raise ArgumentError(f"ddof ({ddof!r}) and correction ({correction!r}) can't be "
                            f"provided simultaneously")
    return correction


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True, *,
        correction=None):
    """Variance: mean of squared deviations over (n - ddof), two passes as numpy;
    correction= is the Array API's name for ddof."""
    a = _as_array(a)
    ddof = _ddof(ddof, correction)
    acc, res = _mean_dtypes(a, dtype)
    if acc.kind == "c":
        raise UnsupportedError("var of complex arrays is not supported yet")
    centre = _mean(a, axis, acc, True, where)
    dev = UFUNCS["subtract"](a.astype(acc, copy=False), centre)
    return _finish(_mean(UFUNCS["multiply"](dev, dev), axis, acc, keepdims, where, ddof,
                         warn="Degrees of freedom <= 0 for slice"), res, out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False, where=True, *,
        correction=None):
    """Standard deviation over `axis`: sqrt of var (`ddof`, or the Array API's
    `correction`, divides by n - ddof)."""
    a = _as_array(a)
    ddof = _ddof(ddof, correction)
    acc, res = _mean_dtypes(a, dtype)
    return _finish(UFUNCS["sqrt"](var(a, axis, acc, None, ddof, keepdims, where)), res, out)


def ptp(a, axis=None, out=None, keepdims=False):
    """max - min over `axis` ("peak to peak"), in `a`'s dtype as numpy's."""
    hi, lo = max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims)
    return UFUNCS["subtract"](hi, lo, out=out) if out is not None else UFUNCS["subtract"](hi, lo)


def _nan_variant(op, plain):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False, initial=None, where=True):
        a = _as_array(a)
        if a.dtype.kind != "f":
            return plain(a, axis, dtype, out, keepdims, initial, where)
        acc, res = _sum_dtypes(a, dtype)
        return _reduce_with(a, op, axis, acc, res, keepdims, out, initial, where)
    fn.__name__ = op
    fn.__doc__ = (f"{plain.__name__} over `axis` with NaNs taken as "
                  f"{'zero' if op == 'nansum' else 'one'} (other dtypes: as {plain.__name__}).")
    return fn


nansum = _nan_variant("nansum", sum)
nanprod = _nan_variant("nanprod", prod)


def _nan_extremum(op, plain):
    def fn(a, axis=None, out=None, keepdims=False, initial=None, where=True):
        a = _as_array(a)
        if a.dtype.kind != "f":
            return plain(a, axis, out, keepdims, initial, where)
        acc = np.float32 if a.dtype == np.float16 else a.dtype
        return _reduce_with(a, op, axis, acc, a.dtype, keepdims, out, initial, where)
    fn.__name__ = op
    fn.__doc__ = (f"{plain.__name__} over `axis` ignoring NaNs (NaN where every element is "
                  f"NaN, as numpy's, without its warning).")
    return fn


nanmax = _nan_extremum("nanmax", max)
nanmin = _nan_extremum("nanmin", min)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False, where=True):
    """Mean over `axis` of the elements that are not NaN (NaN where every element is)."""
    a = _as_array(a)
    if a.dtype.kind != "f":
        return mean(a, axis, dtype, out, keepdims, where)
    acc, res = _mean_dtypes(a, dtype)
    if where is not True:
        a = _masked(a, where, np.nan)
    total = reduce(a, "nansum", axis, acc, acc, keepdims)
    count = reduce(a, "count_notnan", axis, np.int64, np.int64, keepdims)
    return _finish(UFUNCS["true_divide"](total, count).astype(acc, copy=False), res, out)



FUNCTIONS = {f.__name__: f for f in (
    sum, prod, max, min, argmax, argmin, any, all, count_nonzero, mean, var, std, ptp, nansum,
    nanprod,
    nanmax, nanmin, nanmean)}
FUNCTIONS.update(amax=max, amin=min)
# the reductions that are also GpuArray methods (ReductionMethods, at the end)
METHODS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "mean", "var", "std",
           "ptp")


# ---------------------------------------------------------------- scans

_SCAN_OPS = {"cumsum": ("a + b", "zero"), "cumprod": ("a * b", "one")}


@functools.lru_cache(maxsize=256)
def _scan_spec(op, in_dtype, acc_dtype, out_dtype):
    """The scan's kernel parameters (read-only: shared between calls)."""
    expr, neutral_kind = _SCAN_OPS[op]
    if acc_dtype.kind == "b" and op == "cumsum":
        expr = "a | b"  # numpy's bool sum is a logical or (an 8-bit + would wrap)
    preamble = ""
    if acc_dtype.kind == "c" and op == "cumprod":
        ctype = dtypes.compute_type(acc_dtype)
        expr = _COMPLEX_REDUCE["prod"].format(T=ctype)
        preamble = render("ufunc_helpers.cl.mako", helpers=(("cmul", ctype),))
    return types.MappingProxyType(dict(
        in_dtype=in_dtype.name, acc_dtype=acc_dtype.name, out_dtype=out_dtype.name,
        op_expr=expr, neutral=_neutral(neutral_kind, acc_dtype), preamble=preamble,
        exclusive=False, vectors=True))


# Tuning classes whose scans take the one-pass look-back form (kernels/scan.cl.mako); the
# others reduce, then scan. H200, cumsum of 2^24 float32: reduce-then-scan 172 us on the
# device (the chunks' carries, one work-item, 93 of them) and 308 us a call, look-back 70
# and 86-89 us; 4096 x 4096 along axis 0: 851, 411 (scan_lookback's strided loads) and 77
# us (scan_columns; 1563 us while its last tile zeroed its 2M words alone). CPUs keep it
# (no work-group there waits on another). The look-back's block: 256 work-items of 16
# elements (8 for 16-byte accumulators), 4096 x 8-byte accumulators in local memory: 2^24
# float32 / int64, 4096 x 4096 along axis 1: 75-77 / 129-131 / 62-63 us against 79 / 140 /
# 67 with 8 elements, 66 / 164 / 79 with 32; 128 work-items: 95-440 us (more groups than its
# work-items fold at once) (H200, .device/scantune.py).
SCAN_LOOKBACK = ("gpu",)
# Work-items of a look-back scan's work-groups (None: the device's largest, up to 256).
LOOKBACK_LOCAL = None
# The look-back scan of rows that are neighbours in memory along a strided axis
# (cumsum(axis=0) of a C-ordered matrix), a row a work-item: for at least COLUMNS_LEAST[0]
# rows of at most COLUMNS_LEAST[1] elements (each work-item folds its row's earlier chunk
# totals itself); work-items a work-group (None: as LOOKBACK_LOCAL) and a row's elements a
# work-item (half for 16-byte accumulators).
COLUMNS_LEAST = (64, 1 << 16)
COLUMNS_LOCAL = 128
COLUMNS_UNROLL = 32


def scan(a, spec, axis, out=None):
    """Scan along one axis (None: of the flattened array) into a new array or `out`."""
    if axis is None:
        a = a if a.ndim == 1 else a.ravel()
        axis = 0
    axis = _normalize_axis(axis, a.ndim) if a.ndim else 0
    if a.ndim == 0:
        a = a.reshape(1)
    out_dtype = np.dtype(spec["out_dtype"])
    result = _check_out(out, a.shape, out_dtype, a)
    if result is None:
        return out._assign(scan(a, spec, axis))
    n = a.shape[axis]
    if n == 0 or a.size == 0:
        return result
    ctx = a.context
    cls = tuning_class(ctx)
    if cls in SCAN_LOOKBACK:
        return _scan_lookback(ctx, a, result, spec, axis)
    kdims, kin, kout, rows, step, out_step = _scan_layout(a, result, axis)
    acc = np.dtype(spec["acc_dtype"])
    t = TUNING[cls]
    local = _group_size(ctx) if cls == "gpu" else 1
    unroll = t["scan_unroll"] if acc.itemsize <= 8 else t["scan_unroll"] // 2
    chunks = builtins.max(1, builtins.min(-(-t["scan_chunks_per_cu"] * ctx.device.compute_units
                                             // rows), n // t["scan_least"]))
    # the chunk totals: a reduction in as many parts as chunks, into totals[c, r]
    totals = empty((chunks, rows), _compute_dtype(acc.name), context=ctx)
    reduce_spec = _Spec(in_dtype=spec["in_dtype"], acc_dtype=acc.name, out_dtype=totals.dtype.name,
                       map_expr="v", map_dtype=spec["in_dtype"], reduce_expr=spec["op_expr"],
                       neutral=spec["neutral"], arg=None, preamble=spec["preamble"],
                       user_args=None, vectors=spec.get("vectors", False))
    inner = not kdims or abs(step) < abs(kin[-1])
    plan = dataclasses.replace(_plan(ctx, rows, n, inner, False, final=True,
                                     vec=_vector(ctx, reduce_spec, [step])), parts=chunks)
    source = _Source([a.storage], a.offset // a.itemsize, [], [a])
    contiguous = [math.prod(kdims[d + 1:]) for d in range(len(kdims))]
    launch = _prepare(ctx, reduce_spec, plan, kdims, [n], (source.offset, 1), kin, [step], 0,
                      rows, contiguous, out_role="totals")
    _run(ctx, launch, source, {"totals": totals})
    chunk = launch.chunk
    index_t, itype = _scan_index(a, result, rows * chunks * local + n + chunk)
    kdims, kin, kout = _pad_kept(kdims, kin, kout)
    params = dict(spec, name="scan", local_size=local, unroll=unroll, index_t=index_t,
                  lookback=False, columns=False, slot_words=0, poll_atomic=False)
    key = ("scan", tuple(sorted(params.items())), len(kdims))
    row_t = [None, itype, *[itype] * len(kdims), itype]
    k_carry, k_scan = ctx.kernels.get(key) or _build_scan(
        ctx, key, params, ("scan_carry", f"scan_scan{len(kdims)}"),
        [[itype, itype, None], [itype] * (3 + len(kdims)) + row_t * 2 + [None]])
    totals_st = totals.storage
    enqueue(ctx, k_carry, (-(-rows // 64) * 64,), (64,), [rows, chunks, totals_st],
            writes=[totals_st])
    enqueue(ctx, k_scan, (rows * chunks * local,), (local,),
            [rows, n, chunk, *kdims, a.storage, a.offset // a.itemsize, *kin, step,
             result.storage, result.offset // result.itemsize, *kout, out_step, totals_st],
            reads=[a.storage, totals_st], writes=[result.storage])
    return result


def _scan_layout(a, result, axis):
    """(kdims, kin, kout, rows, step, out_step): the rows of a scan along `axis` of `a` into
    `result`, their dimensions collapsed (kin, kout: their strides, in elements)."""
    kept = [d for d in range(a.ndim) if d != axis]
    kdims, (kin, kout) = elemwise.collapse(
        [a.shape[d] for d in kept], [[a.strides[d] // a.itemsize for d in kept],
                                     [result.strides[d] // result.itemsize for d in kept]])
    return (kdims, kin, kout, math.prod(kdims), a.strides[axis] // a.itemsize,
            result.strides[axis] // result.itemsize)


def _scan_index(a, result, reach):
    """The scan kernels' index type ("int" or "long", and its numpy type): "long" where an
    element of the two buffers or `reach` (work-items, chunk ends) passes int32."""
    reach = builtins.max(reach, a.storage.nbytes // a.itemsize,
                         result.storage.nbytes // result.itemsize)
    return ("int", np.int32) if reach <= _INT32_MAX else ("long", np.int64)


def _plain_words(ctx):
    """Whether look-back scans poll their words by plain loads (NVIDIA GPUs) rather than
    atomics."""
    return "nvidia" in ctx.device.vendor.lower()


def _scan_lookback(ctx, a, result, spec, axis):
    """The scan by one launch of a look-back kernel (scan_lookback, or scan_columns for rows
    neighbouring in memory along a strided axis); its layout, geometry and kernel kept in
    ctx.plans; scan_lookback's words (zero between scans) in ctx.state, scan_columns' zeroed
    a call."""
    key = ("scan-lookback", tuple(spec.items()), a.shape, a.strides, a.storage.nbytes,
           result.strides, result.storage.nbytes, axis, LOOKBACK_LOCAL)
    plan = ctx.plans.get(key)
    if plan is None:
        kdims, kin, kout, rows, step, out_step = _scan_layout(a, result, axis)
        acc = np.dtype(spec["acc_dtype"])
        n = a.shape[axis]
        wide = acc.itemsize > 8
        # neighbouring rows neighbours in memory, the scan axis strided: a row a work-item
        columns = bool(rows >= COLUMNS_LEAST[0] and n <= COLUMNS_LEAST[1] and kin
                       and kin[-1] == 1 and abs(step) > 1)
        local = (COLUMNS_LOCAL if columns else LOOKBACK_LOCAL) or _group_size(ctx)
        unroll = (COLUMNS_UNROLL if columns else TUNING["gpu"]["scan_unroll"]) // (1 + wide)
        room = ctx.device.cl_device.local_mem_size - 1024  # (scan_lookback's block)
        while not columns and unroll > 1 and local * (unroll * 33 // 32 + 1) * \
                np.dtype(_compute_dtype(acc.name)).itemsize > room:
            unroll //= 2
        block = unroll if columns else local * unroll
        slots = rows * -(-n // block)
        tiles = -(-rows // local) * -(-n // block) if columns else slots
        index_t, itype = _scan_index(a, result, tiles * local + n + block)
        kdims, kin, kout = _pad_kept(kdims, kin, kout)
        slot_words = -(-np.dtype(_compute_dtype(acc.name)).itemsize // 2)
        params = dict(spec, name="scan", local_size=local, unroll=unroll, index_t=index_t,
                      lookback=True, columns=columns, slot_words=slot_words,
                      poll_atomic=not _plain_words(ctx))
        kkey = ("scan", tuple(sorted(params.items())), len(kdims))
        row_t = [None, itype, *[itype] * len(kdims), itype]
        name = "scan_columns" if columns else "scan_lookback"
        kernel, = ctx.kernels.get(kkey) or _build_scan(
            ctx, kkey, params, (f"{name}{len(kdims)}",),
            [[itype] * (3 + len(kdims)) + row_t * 2 + [None]])
        plan = ctx.plans[key] = (kernel, tiles, local, 2 + 2 * slots * slot_words,
                                 [rows, n, block, *kdims], kin, [step], kout, [out_step],
                                 columns)
    kernel, tiles, local, words, head, kin, step, kout, out_step, columns = plan
    if columns:  # (its words zeroed a call)
        slots = zeros((words,), np.uint32, context=ctx)
    else:  # (zero, and left zero by each scan)
        slots = ctx.state.get("scan words")
        if slots is None or slots.size < words:
            slots = ctx.state["scan words"] = zeros((builtins.max(words, 1 << 16),),
                                                     np.uint32, context=ctx)
    enqueue(ctx, kernel, (tiles * local,), (local,),
            [*head, a.storage, a.offset // a.itemsize, *kin, *step, result.storage,
             result.offset // result.itemsize, *kout, *out_step, slots.storage],
            reads=[a.storage], writes=[result.storage, slots.storage])
    return result


def _build_scan(ctx, key, params, names, arg_dtypes):
    """The kernels `names` of a scan (for the row dimensions of `key`'s last entry), from
    one program, cached under `key`; where kernels compile lazily, the program holds the
    kernels of both buckets of row dimensions."""
    kdim = key[-1]
    kdims = (1, _DIMS) if elemwise.lazy_kernels(ctx) and kdim in (1, _DIMS) else (kdim,)
    program = get_program(ctx, ("scan", key[1], kdims), "scan.cl.mako", kdims=kdims, **params)
    kernels = tuple(Launcher(cl.Kernel(program, name), types)
                    for name, types in zip(names, arg_dtypes))
    return ctx.kernels.setdefault(key, kernels)


def cumsum(a, axis=None, dtype=None, out=None):
    """Inclusive running sum (numpy's accumulator: small ints in int64; float16 in float32)."""
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    return scan(a, _scan_spec("cumsum", a.dtype, acc, res), axis, out)


def cumprod(a, axis=None, dtype=None, out=None):
    """Inclusive running product, with numpy's accumulator dtypes."""
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    return scan(a, _scan_spec("cumprod", a.dtype, acc, res), axis, out)


FUNCTIONS.update(cumsum=cumsum, cumprod=cumprod)


# ---------------------------------------------------------------- GpuArray methods

def _method(fn):
    """x.fn(...) as fn(x, ...), with fn's name and documentation."""
    def method(self, *args, **kwargs):
        return fn(self, *args, **kwargs)
    method.__name__ = method.__qualname__ = fn.__name__
    method.__doc__ = fn.__doc__
    return method


class ReductionMethods:
    """x.sum(), x.max(axis=0), x.cumsum(), ...: the reductions of METHODS and the scans.
    A mixin of GpuArray (gpuarr/array.py)."""

    sum = _method(sum)
    prod = _method(prod)
    max = _method(max)
    min = _method(min)
    argmax = _method(argmax)
    argmin = _method(argmin)
    any = _method(any)
    all = _method(all)
    mean = _method(mean)
    var = _method(var)
    std = _method(std)
    ptp = _method(ptp)

    def cumsum(self, axis=None, dtype=None, out=None):
        return cumsum(self, axis, dtype, out)

    def cumprod(self, axis=None, dtype=None, out=None):
        return cumprod(self, axis, dtype, out)

    cumsum.__doc__, cumprod.__doc__ = FUNCTIONS["cumsum"].__doc__, FUNCTIONS["cumprod"].__doc__
