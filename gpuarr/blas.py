"""BLAS: a tiled GEMM from one Mako template (kernels/gemm.cl.mako) on every OpenCL device,
and what builds on it: gemm, gemm_batched, matmul and `@`, dot, tensordot, inner, outer,
vdot, plus gemv and ger (pygpu's names). The dot of two float vectors is a bandwidth-bound
reduction, not a GEMM.

Transposes and views are strides: the kernel reads any layout, loading along whichever index
has unit stride. The tile shape comes from a table per device class (GEMM_TILES).
"""

import functools
import math

import numpy as np

from . import dtypes, elemwise
from .array import GpuArray, broadcast_to, check_same_context, to_device
from .errors import ArgumentError, ArgumentTypeError, ShapeError, UnsupportedError
from .kernels import get_kernel
from .reduction import ReductionKernel, device_class
from .ufuncs import UFUNCS

# Work-group tile (mwg x nwg, k step kwg), work-group shape (mdimc x ndimc) and local memory
# padding, options of kernels/gemm.cl.mako (vw, prefetch), by device class; "small"
# serves matrices with M or N under the big tile, "column" products with one column (gemv).
# CPUs take kernels/gemm_direct.cl.mako for float32/64 ("direct": outputs per work-item).
# Measured with benchmarks/bench_blas.py.
GEMM_TILES = {
    "gpu": {"big": dict(mwg=128, nwg=128, kwg=8, mdimc=16, ndimc=16, pad=0, vw=2,
                        prefetch=1),
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

_REAL = tuple(np.dtype(t) for t in (np.float16, np.float32, np.float64))


def _acc_dtype(dt):
    if dt == np.float16:
        return np.dtype(np.float32)
    if dt.kind == "f":
        return dt
    if dt.kind in "biu":
        return np.dtype(np.int64 if dt.itemsize == 8 else np.int32)
    raise UnsupportedError(f"matrix products of {dt} arrays are not supported yet")


def _tile(ctx, m, n):
    tiles = GEMM_TILES[device_class(ctx)]
    if n == 1 and "column" in tiles:
        return tiles["column"]
    big = tiles["big"]
    return tiles["big" if m >= big["mwg"] and n >= big["nwg"] else "small"]


def _elements(a):
    return [s // a.itemsize for s in a.strides]


def gemm_into(alpha, a, b, beta, c):
    """c[p] = alpha * a[p] @ b[p] + beta * c[p] for 3-d GpuArrays of one dtype (batch p
    first; a batch stride may be 0). Enqueues and returns c."""
    ctx = check_same_context(a, b, c)
    batch, m, n = c.shape
    k = a.shape[2]
    if c.size == 0:
        return c
    c._check_writeable()
    dt = c.dtype
    acc = _acc_dtype(dt)
    dtypes.check_device(dt, ctx)
    if k == 0:  # an empty sum: beta * c
        return c.fill(0) if beta == 0 else c._assign(UFUNCS["multiply"](c, beta))
    direct = device_class(ctx) == "cpu" and dt in _REAL[1:]
    if direct and b.strides[2] != b.itemsize:
        b = b.copy()  # O(K N) so that rows of B load as vectors
    if direct:
        return _gemm_direct(ctx, alpha, a, b, beta, c)
    if m == 1 and n > 1:  # a row times a matrix: the transposed problem has one column
        return gemm_into(alpha, b.swapaxes(1, 2), a.swapaxes(1, 2), beta, c.swapaxes(1, 2))
    _, a_sm, a_sk = _elements(a)
    _, b_sk, b_sn = _elements(b)
    _, c_sm, c_sn = _elements(c)
    tile = _tile(ctx, m, n)
    guarded = bool(m % tile["mwg"] or n % tile["nwg"] or k % tile["kwg"])
    params = dict(tile, dtype=dt.name, acc_dtype=acc.name, guarded=guarded,
                  use_beta=beta != 0,
                  a_fast="m" if abs(a_sm) == 1 and abs(a_sk) != 1 else "k",
                  b_fast="n" if abs(b_sn) == 1 and abs(b_sk) != 1 else "k",
                  c_fast="m" if abs(c_sm) == 1 and abs(c_sn) != 1 else "n")
    key = ("gemm", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [acc.type] * 2 + ([None] + [np.int64] * 4) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm.cl.mako", arg_dtypes,
                                                name="gemm", **params)
    threads = tile["mdimc"] * tile["ndimc"]
    size = (-(-m // tile["mwg"]) * threads, -(-n // tile["nwg"]), batch)
    return _launch(ctx, kernel, size, (threads, 1, 1), alpha, a, b, beta, c)


def _launch(ctx, kernel, size, local, alpha, a, b, beta, c):
    args = [c.shape[1], c.shape[2], a.shape[2], alpha, beta]
    for x in (a, b, c):
        sb, s1, s2 = _elements(x)
        args += [x.storage.buffer, x.offset // x.itemsize, s1, s2, sb]
    queue = ctx.queue
    wait_for = [e for x in (a, b, c) for e in x.storage.wait_list(queue)]
    with ctx.launch_lock:
        event = kernel(queue, size, local, *args, wait_for=wait_for or None)
    c.storage.written(event, queue)
    return c


def _gemm_direct(ctx, alpha, a, b, beta, c):
    """The CPU kernel (kernels/gemm_direct.cl.mako): B has unit stride along n."""
    batch, m, n = c.shape
    shape = GEMM_TILES["cpu"]["direct"][c.dtype.name]
    params = dict(shape, dtype=c.dtype.name, use_beta=beta != 0,
                  c_unit=c.strides[2] == c.itemsize)
    key = ("gemm_direct", tuple(sorted(params.items())))
    arg_dtypes = [np.int32] * 3 + [c.dtype.type] * 2 + ([None] + [np.int64] * 4) * 3
    kernel = ctx.kernels.get(key) or get_kernel(ctx, key, "gemm_direct.cl.mako", arg_dtypes,
                                                name="gemm_direct", **params)
    size = (-(-m // shape["mwi"]), -(-n // shape["nwi"]), batch)
    return _launch(ctx, kernel, size, None, alpha, a, b, beta, c)


def _as_batch(x):
    """A 2-d array as a batch of one (a view)."""
    return x._view((1, *x.shape), (0, *x.strides))


def _check_matrices(name, *arrays):
    for x in arrays:
        if not isinstance(x, GpuArray):
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
        C, beta = GpuArray((m, n), A.dtype, context=ctx), 0.0
    else:
        if C.shape != (m, n):
            raise ShapeError(f"gemm: C has shape {C.shape}, op(A) @ op(B) has {(m, n)}")
        if not overwrite_c:
            C = C.copy()
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
        C, beta = GpuArray(shape, A.dtype, context=ctx), 0.0
    elif C.shape != shape:
        raise ShapeError(f"gemm_batched: C has shape {C.shape}, the product has {shape}")
    elif not overwrite_c:
        C = C.copy()
    gemm_into(alpha, broadcast_to(op_a, (batch, *op_a.shape[1:])),
              broadcast_to(op_b, (batch, *op_b.shape[1:])), beta, C)
    return C


# ---------------------------------------------------------------- numpy's products

def _as_array(x, ctx=None):
    return x if isinstance(x, GpuArray) else to_device(np.asarray(x), ctx)


@functools.lru_cache(maxsize=256)
def _matmul_dtype(a, b):
    return np.matmul(np.zeros((1, 1), a), np.zeros((1, 1), b)).dtype


def matmul(a, b, out=None):
    """numpy.matmul: 1-d operands promoted and the added axis removed, batch dimensions
    broadcast; one batched GEMM launch."""
    a = _as_array(a)
    b = _as_array(b, a.context)
    ctx = check_same_context(a, b)
    if a.ndim == 0 or b.ndim == 0:
        raise ArgumentError("matmul: input operand does not have enough dimensions "
                            "(0-d arrays: use multiply)")
    dt = _matmul_dtype(a.dtype, b.dtype)
    if a.ndim == 1 and b.ndim == 1 and a.shape == b.shape and dt in _REAL[1:]:
        result = _dot_kernel(dt)(a.astype(dt, copy=False), b.astype(dt, copy=False))
        return result if out is None else out._assign(result)
    a2 = a.reshape(1, a.shape[0]) if a.ndim == 1 else a
    b2 = b.reshape(b.shape[0], 1) if b.ndim == 1 else b
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
    result = GpuArray(shape, dt, context=ctx)
    batch = math.prod(batch_shape)
    gemm_into(1, _batched(a2.astype(dt, copy=False), batch_shape, (m, k)),
              _batched(b2.astype(dt, copy=False), batch_shape, (k, n)), 0,
              result.reshape(batch, m, n))
    if out is not None:
        if out.shape != shape:
            raise ShapeError(f"matmul: out has shape {out.shape}, the product has {shape}")
        return out._assign(result)
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
    a, b = _as_array(a), _as_array(b)
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
    at = a.transpose(*free_a, *axes_a).reshape(-1, k)
    bt = b.transpose(*axes_b, *free_b).reshape(k, -1)
    return matmul(at, bt).reshape(*(a.shape[i] for i in free_a),
                                  *(b.shape[i] for i in free_b))


def dot(a, b, out=None):
    """numpy.dot: matmul for 1-d and 2-d operands, a sum over the last axis of a and the
    second-to-last of b otherwise, multiply for 0-d."""
    a = _as_array(a)
    b = _as_array(b, a.context)
    if a.ndim == 0 or b.ndim == 0:
        result = UFUNCS["multiply"](a, b)
    elif a.ndim <= 2 and b.ndim <= 2:
        result = matmul(a, b)
    else:
        result = tensordot(a, b, ([-1], [-2 if b.ndim > 1 else -1]))
    return result if out is None else out._assign(result)


def inner(a, b):
    a, b = _as_array(a), _as_array(b)
    if a.ndim == 0 or b.ndim == 0:
        return UFUNCS["multiply"](a, b)
    return tensordot(a, b, ([-1], [-1]))


def outer(a, b):
    """numpy.outer: one elementwise product of a column and a row (no GEMM needed)."""
    a, b = _as_array(a).ravel(), _as_array(b).ravel()
    return UFUNCS["multiply"](a.reshape(a.size, 1), b.reshape(1, b.size))


def vdot(a, b):
    """numpy.vdot: the conjugate of a (flattened) dotted with b."""
    a, b = _as_array(a).ravel(), _as_array(b).ravel()
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
    c = None if y is None else y.reshape(y.shape[0], 1)
    result = gemm(alpha, op_a, x.reshape(x.shape[0], 1), beta, c, overwrite_c=overwrite_y)
    return result.reshape(result.shape[0])


def ger(alpha, x, y, A=None, overwrite_a=False):
    """A + alpha * outer(x, y) (pygpu's blas.ger; A of zeros when None): elementwise."""
    _check_matrices("ger", *((x, y) if A is None else (x, y, A)))
    if x.ndim != 1 or y.ndim != 1:
        raise ShapeError(f"ger takes 1-d x and y, got {x.shape} and {y.shape}")
    update = UFUNCS["multiply"](outer(x, y), alpha) if alpha != 1 else outer(x, y)
    if A is None:
        return update.astype(x.dtype, copy=False)
    if A.shape != (x.shape[0], y.shape[0]):
        raise ShapeError(f"ger: A has shape {A.shape}, outer(x, y) has "
                         f"{(x.shape[0], y.shape[0])}")
    if overwrite_a:
        return UFUNCS["add"](A, update, out=A)
    return UFUNCS["add"](A, update)


def _install(cls):
    cls.__matmul__ = lambda self, other: matmul(self, other)
    cls.__rmatmul__ = lambda self, other: matmul(other, self)
    cls.dot = lambda self, b, out=None: dot(self, b, out)


_install(GpuArray)


FUNCTIONS = {f.__name__: f for f in (matmul, dot, tensordot, inner, outer, vdot)}
