"""Reductions over any axes: one kernel family (kernels/reduction.cl.mako), numpy's rules.

The reduced axes and the kept axes are collapsed separately. Each output is then a
reduction of `n` elements at `in_base(o) + k * stride`: a work-group per output when the
reduced axis is the inner one (coalesced, a tree in local memory), a work-item per output
when it is the outer one (neighbouring work-items read neighbouring addresses), and two
stages for a single output. The decomposition depends only on the layout, so the same input
gives the same bits.
"""

import builtins
import math

import numpy as np

from . import dtypes, elemwise
from .array import GpuArray, _normalize_axis, to_device
from .errors import ArgumentError, UnsupportedError
from .kernels import build, get_kernel, render
from .ufuncs import UFUNCS

_INT32_MAX = 2**31 - 1

_NAN_MAX = "((isnan(a) || a >= b) ? a : b)"
_NAN_MIN = "((isnan(a) || a <= b) ? a : b)"
_SKIP_NAN_MAX = "(isnan(a) ? b : (isnan(b) || a >= b) ? a : b)"
_SKIP_NAN_MIN = "(isnan(a) ? b : (isnan(b) || a <= b) ? a : b)"

# name -> (map of v, whether the map gives a bool, reduce of a and b (by accumulator kind
# where it differs), neutral element)
_OPS = {
    "sum": ("v", False, "a + b", "zero"),
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


def _neutral(kind, dt):
    ctype = dtypes.compute_type(dt)
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


def reduce(a, op, axis=None, acc_dtype=None, out_dtype=None, keepdims=False, out=None):
    """out[kept] = op over the `axis` elements of a (a GpuArray); dtypes already decided."""
    ndim = a.ndim
    axes = _axes(axis, ndim)
    kept = [d for d in range(ndim) if d not in axes]
    out_shape = tuple(1 if d in axes else a.shape[d] for d in range(ndim)) if keepdims \
        else tuple(a.shape[d] for d in kept)
    n = math.prod(a.shape[d] for d in axes)
    out_dtype = np.dtype(out_dtype)
    acc_dtype = np.dtype(acc_dtype)
    if out is None:
        out = GpuArray(out_shape, out_dtype, context=a.context)
    elif out.shape != out_shape:
        raise ArgumentError(f"output parameter for reduction has shape {out.shape}, "
                            f"expected {out_shape}")
    elif out.dtype != out_dtype:  # numpy casts the result into out
        return out._assign(reduce(a, op, axis, acc_dtype, out_dtype, keepdims))
    m = math.prod(a.shape[d] for d in kept)
    if m == 0:
        return out
    map_expr, map_bool, reduce_expr, neutral_kind = _OPS[op]
    if isinstance(reduce_expr, dict):
        reduce_expr = reduce_expr.get(acc_dtype.kind, reduce_expr.get("*"))
        if reduce_expr is None:
            raise UnsupportedError(f"{op} is not supported for dtype {a.dtype}")
    if n == 0:
        if neutral_kind in ("lowest", "highest") or op in ("nanmax", "nanmin"):
            raise ArgumentError(f"zero-size array to reduction operation {op} which has no "
                                f"identity")
        identity = {"zero": 0, "one": 1, "nan": np.nan}[neutral_kind]
        return out.fill(identity)
    item = a.itemsize
    out_view = out.reshape(tuple(a.shape[d] for d in kept)) if keepdims else out
    kdims, (kin, kout) = elemwise.collapse(
        [a.shape[d] for d in kept],
        [[a.strides[d] // item for d in kept], [s // out.itemsize for s in out_view.strides]])
    rdims, (rin,) = elemwise.collapse([a.shape[d] for d in axes],
                                      [[a.strides[d] // item for d in axes]])
    if not rdims:
        rdims, rin = [1], [0]
    ctx = a.context
    arg = op[3:] if op in ("argmax", "argmin") else None
    spec = dict(in_dtype=a.dtype.name, acc_dtype=acc_dtype.name, out_dtype=out_dtype.name,
                map_expr=map_expr, map_dtype="bool" if map_bool else a.dtype.name,
                reduce_expr=reduce_expr, neutral=_neutral(neutral_kind, acc_dtype), arg=arg)
    if not kdims and arg:
        # one work-group: the pairs of a first stage would need a second input (not yet)
        _launch(ctx, spec, True, 1, n, n, [], rdims, a, [], rin, out_view, [], groups=1)
        return out
    if not kdims:
        _full(ctx, a, out_view, n, rdims, rin, spec)
        return out
    inner_reduced = abs(rin[-1]) < abs(kin[-1])
    group = inner_reduced and n >= 32
    _launch(ctx, spec, group, m, n, n, kdims, rdims, a, kin, rin, out_view, kout, groups=m)
    return out


def _full(ctx, a, out, n, rdims, rin, spec):
    """A single output: work-groups reduce chunks into partials, then one group those."""
    local = _group_size(ctx)
    chunks = builtins.min(-(-n // (local * 8)), 4 * local)
    if chunks <= 1:
        _launch(ctx, spec, True, 1, n, n, [], rdims, a, [], rin, out, [], groups=1)
        return out
    chunk = -(-n // chunks)
    partial = GpuArray((chunks,), spec["acc_dtype"], context=ctx)
    first = dict(spec, out_dtype=spec["acc_dtype"])
    _launch(ctx, first, True, 1, n, chunk, [], rdims, a, [], rin, partial, [], groups=chunks)
    second = dict(spec, in_dtype=spec["acc_dtype"], map_expr="v", map_dtype=spec["acc_dtype"])
    _launch(ctx, second, True, 1, chunks, chunks, [], [chunks], partial, [], [1], out, [],
            groups=1)
    return out


def _largest_divisor(m, limit):
    """The largest divisor of m not above limit, if it is a usable work-group (>= 32)."""
    best = next(d for d in range(limit, 0, -1) if m % d == 0)
    return best if best >= 32 else limit


def _group_size(ctx):
    return 1 << (builtins.min(256, ctx.max_work_group_size).bit_length() - 1)


def _launch(ctx, spec, group, m, n, chunk, kdims, rdims, a, kin, rin, out, kout, groups):
    local = _group_size(ctx) if group else ctx.local_size
    if not group and m % local:
        local = _largest_divisor(m, local) if ctx.device.type == "CPU" else local
    guarded = not group and m % local != 0
    span = builtins.sum(abs(s) * (d - 1) for s, d in zip(kin + rin, kdims + rdims))
    reach = builtins.max(m, n, abs(a.offset // a.itemsize) + span)
    index_t = "int" if reach <= _INT32_MAX else "long"
    itype = np.int32 if index_t == "int" else np.int64
    key = ("reduce", tuple(sorted(spec.items())), len(kdims), len(rdims), group, local,
           guarded, index_t)
    nargs = 3 + len(kdims) + len(rdims) + 2 + len(kdims) + len(rdims) + 2 + len(kdims)
    arg_dtypes = [itype] * nargs
    arg_dtypes[3 + len(kdims) + len(rdims)] = None
    arg_dtypes[3 + 2 * len(kdims) + 2 * len(rdims) + 2] = None
    kernel = get_kernel(ctx, key, "reduction.cl.mako", arg_dtypes, name="reduce",
                        kdim=len(kdims), rdim=len(rdims), group=group, local_size=local,
                        guarded=guarded, index_t=index_t, **spec)
    args = [m, n, chunk, *kdims, *rdims, a.storage.buffer, a.offset // a.itemsize, *kin, *rin,
            out.storage.buffer, out.offset // out.itemsize, *kout]
    queue = ctx.queue
    wait_for = a.storage.wait_list(queue) + out.storage.wait_list(queue)
    size = groups * local if group else -(-m // local) * local
    with ctx.launch_lock:
        event = kernel(queue, (size,), (local,), *args, wait_for=wait_for or None)
    out.storage.written(event, queue)


# ---------------------------------------------------------------- numpy-named functions

def _as_array(a):
    return a if isinstance(a, GpuArray) else to_device(np.asarray(a), None)


def _sum_dtypes(a, dtype):
    out_dt = np.sum(np.zeros(1, a.dtype), dtype=dtype).dtype
    return (np.dtype(np.float32) if out_dt == np.float16 else out_dt), out_dt


def sum(a, axis=None, dtype=None, out=None, keepdims=False):
    """Sum over `axis` (numpy's accumulator: small ints in int64, float16 in float32)."""
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    return reduce(a, "sum", axis, acc, res, keepdims, out)


def prod(a, axis=None, dtype=None, out=None, keepdims=False):
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    if acc.kind == "c":
        raise UnsupportedError("prod of complex arrays is not supported yet")
    return reduce(a, "prod", axis, acc, res, keepdims, out)


def _extremum(op):
    def fn(a, axis=None, out=None, keepdims=False):
        a = _as_array(a)
        if a.dtype.kind == "c":
            raise UnsupportedError(f"{op} of complex arrays is not supported yet")
        acc = np.float32 if a.dtype == np.float16 else a.dtype
        return reduce(a, op, axis, acc, a.dtype, keepdims, out)
    fn.__name__ = op
    fn.__doc__ = f"numpy.{op} over `axis` (NaN propagates, as in numpy)."
    return fn


max = amax = _extremum("max")
min = amin = _extremum("min")


def _logical(op):
    def fn(a, axis=None, out=None, keepdims=False):
        a = _as_array(a)
        if a.dtype.kind == "c":
            a = _nonzero(a)
        return reduce(a, op, axis, np.bool_, np.bool_, keepdims, out)
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
        if a.dtype.kind == "c":
            raise UnsupportedError(f"{op} of complex arrays is not supported yet")
        if isinstance(axis, tuple | list):
            raise ArgumentError(f"{op} takes a single axis or None, not {axis!r}")
        if a.size == 0:
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
    a = _as_array(a)
    if a.dtype.kind == "c":
        a = _nonzero(a)
    return reduce(a, "count", axis, np.int64, np.int64, keepdims)


def _mean_dtypes(a, dtype):
    res = np.mean(np.zeros(1, a.dtype), dtype=dtype).dtype
    acc = np.dtype(np.float32) if res == np.float16 else res
    return acc, res


def mean(a, axis=None, dtype=None, out=None, keepdims=False):
    """Arithmetic mean (ints in float64, float16 accumulated in float32), as numpy."""
    a = _as_array(a)
    acc, res = _mean_dtypes(a, dtype)
    total = reduce(a, "sum", axis, acc, acc, keepdims)
    n = math.prod(a.shape[d] for d in _axes(axis, a.ndim))
    return _finish(UFUNCS["true_divide"](total, n if n else np.nan), res, out)


def _finish(result, dtype, out):
    """`result` (computed in the accumulator dtype) as `dtype`, or written into `out`."""
    if out is not None:
        return out._assign(result)
    return result if result.dtype == dtype else result.astype(dtype)


def var(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    """Variance: mean of squared deviations over (n - ddof), two passes as numpy."""
    a = _as_array(a)
    acc, res = _mean_dtypes(a, dtype)
    if acc.kind == "c":
        raise UnsupportedError("var of complex arrays is not supported yet")
    centre = mean(a, axis, acc, keepdims=True)
    dev = UFUNCS["subtract"](a.astype(acc, copy=False), centre)
    sq = UFUNCS["multiply"](dev, dev)
    n = math.prod(a.shape[d] for d in _axes(axis, a.ndim))
    total = reduce(sq, "sum", axis, acc, acc, keepdims)
    denom = builtins.max(n - ddof, 0)
    return _finish(UFUNCS["true_divide"](total, denom if denom else np.nan), res, out)


def std(a, axis=None, dtype=None, out=None, ddof=0, keepdims=False):
    a = _as_array(a)
    acc, res = _mean_dtypes(a, dtype)
    return _finish(UFUNCS["sqrt"](var(a, axis, acc, None, ddof, keepdims)), res, out)


def ptp(a, axis=None, out=None, keepdims=False):
    hi, lo = max(a, axis, keepdims=keepdims), min(a, axis, keepdims=keepdims)
    return UFUNCS["subtract"](hi, lo, out=out) if out is not None else UFUNCS["subtract"](hi, lo)


def _nan_variant(op, numpy_fn):
    def fn(a, axis=None, dtype=None, out=None, keepdims=False):
        a = _as_array(a)
        if a.dtype.kind != "f":
            return numpy_fn(a, axis=axis, dtype=dtype, out=out, keepdims=keepdims)
        acc, res = _sum_dtypes(a, dtype)
        return reduce(a, op, axis, acc, res, keepdims, out)
    fn.__name__ = op
    return fn


nansum = _nan_variant("nansum", sum)
nanprod = _nan_variant("nanprod", prod)


def _nan_extremum(op, plain):
    def fn(a, axis=None, out=None, keepdims=False):
        a = _as_array(a)
        if a.dtype.kind != "f":
            return plain(a, axis, out, keepdims)
        acc = np.float32 if a.dtype == np.float16 else a.dtype
        return reduce(a, op, axis, acc, a.dtype, keepdims, out)
    fn.__name__ = op
    return fn


nanmax = _nan_extremum("nanmax", max)
nanmin = _nan_extremum("nanmin", min)


def nanmean(a, axis=None, dtype=None, out=None, keepdims=False):
    a = _as_array(a)
    if a.dtype.kind != "f":
        return mean(a, axis, dtype, out, keepdims)
    acc, res = _mean_dtypes(a, dtype)
    total = reduce(a, "nansum", axis, acc, acc, keepdims)
    count = reduce(a, "count_notnan", axis, np.int64, np.int64, keepdims)
    return _finish(UFUNCS["true_divide"](total, count).astype(acc, copy=False), res, out)



FUNCTIONS = {f.__name__: f for f in (
    sum, prod, max, min, argmax, argmin, any, all, count_nonzero, mean, var, std, ptp, nansum,
    nanprod,
    nanmax, nanmin, nanmean)}
FUNCTIONS.update(amax=max, amin=min)
METHODS = ("sum", "prod", "max", "min", "argmax", "argmin", "any", "all", "mean", "var", "std",
           "ptp")


def _install_methods(cls):
    for name in METHODS:
        fn = FUNCTIONS[name]

        def method(self, *args, _fn=fn, **kwargs):
            return _fn(self, *args, **kwargs)
        method.__name__ = name
        method.__doc__ = fn.__doc__
        setattr(cls, name, method)


_install_methods(GpuArray)


# ---------------------------------------------------------------- scans

_SCAN_OPS = {"cumsum": ("a + b", "zero"), "cumprod": ("a * b", "one")}


def scan(a, op, axis, acc_dtype, out_dtype):
    """Inclusive scan along one axis (None: of the flattened array), as cumsum/cumprod."""
    if axis is None:
        a = a.ravel()
        axis = 0
    axis = _normalize_axis(axis, a.ndim) if a.ndim else 0
    if a.ndim == 0:
        a = a.reshape(1)
    acc_dtype, out_dtype = np.dtype(acc_dtype), np.dtype(out_dtype)
    out = GpuArray(a.shape, out_dtype, context=a.context)
    n = a.shape[axis]
    rows_shape = [s for d, s in enumerate(a.shape) if d != axis]
    rows = math.prod(rows_shape)
    if n == 0 or rows == 0:
        return out
    ctx = a.context
    kept = [d for d in range(a.ndim) if d != axis]
    kdims, (kin, kout) = elemwise.collapse(
        rows_shape, [[a.strides[d] // a.itemsize for d in kept],
                     [out.strides[d] // out.itemsize for d in kept]])
    local = _group_size(ctx)
    chunk = builtins.max(local * 8, -(-n // builtins.max(1, 4096 // builtins.max(rows, 1))))
    chunk = -(-chunk // local) * local
    chunks = -(-n // chunk)
    expr, neutral_kind = _SCAN_OPS[op]
    span = builtins.sum(abs(s) * (d - 1) for s, d in zip(kin, kdims)) + abs(
        a.strides[axis] // a.itemsize) * n
    index_t = "int" if builtins.max(span + abs(a.offset // a.itemsize), rows * chunks, n) \
        <= _INT32_MAX else "long"
    itype = np.int32 if index_t == "int" else np.int64
    params = dict(name="scan", in_dtype=a.dtype.name, acc_dtype=acc_dtype.name,
                  out_dtype=out_dtype.name, op_expr=expr,
                  neutral=_neutral(neutral_kind, acc_dtype), kdim=len(kdims),
                  local_size=local, index_t=index_t)
    key = ("scan", tuple(sorted(params.items())))
    head = [rows, n, chunks, chunk, *kdims]
    in_args = [a.storage.buffer, a.offset // a.itemsize, *kin, a.strides[axis] // a.itemsize]
    out_args = [out.storage.buffer, 0, *kout, out.strides[axis] // out.itemsize]
    head_t = [itype] * len(head)
    row_t = [None, itype, *[itype] * len(kdims), itype]
    k_totals, k_carry, k_scan = ctx.kernels.get(key) or _build_scan(
        ctx, key, params, [[*head_t, *row_t, None], [itype, itype, None],
                           [*head_t, *row_t, *row_t, None]])
    totals = GpuArray((rows * chunks,), acc_dtype, context=ctx)
    queue = ctx.queue
    wait_for = a.storage.wait_list(queue) or None
    size = (rows * chunks * local,)
    with ctx.launch_lock:
        k_totals(queue, size, (local,), *head, *in_args, totals.storage.buffer,
                 wait_for=wait_for)
        k_carry(queue, (-(-rows // 64) * 64,), (64,), rows, chunks, totals.storage.buffer)
        event = k_scan(queue, size, (local,), *head, *in_args, *out_args,
                       totals.storage.buffer)
    out.storage.written(event, queue)
    return out


def _build_scan(ctx, key, params, arg_dtypes):
    """The three kernels of a scan, from one program, cached under `key`."""
    program = build(ctx, render("scan.cl.mako", **params))
    kernels = tuple(getattr(program, f"scan_{part}") for part in ("totals", "carry", "scan"))
    for kernel, types in zip(kernels, arg_dtypes):
        kernel.set_scalar_arg_dtypes(types)
    ctx.kernels[key] = kernels
    return kernels


def cumsum(a, axis=None, dtype=None):
    """Inclusive running sum (numpy's accumulator: small ints in int64; float16 in float32)."""
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    return scan(a, "cumsum", axis, acc, res)


def cumprod(a, axis=None, dtype=None):
    a = _as_array(a)
    acc, res = _sum_dtypes(a, dtype)
    if acc.kind == "c":
        raise UnsupportedError("cumprod of complex arrays is not supported yet")
    return scan(a, "cumprod", axis, acc, res)


FUNCTIONS.update(cumsum=cumsum, cumprod=cumprod)
for _name in ("cumsum", "cumprod"):
    setattr(GpuArray, _name, lambda self, axis=None, dtype=None, _f=FUNCTIONS[_name]:
            _f(self, axis, dtype))
