"""Collectives in pygpu's names: all_reduce, reduce, broadcast, all_gather, reduce_scatter.

Two transports, one meaning:

* In one process the ranks are contexts: the module functions take a list of arrays, one per
  context, and return one result per context. Where the contexts share a `cl.Context` (CPU
  devices of one platform) data moves device to device with enqueued copies and reduces with
  the elementwise engine's ufunc kernels: a binomial tree below `RING_BYTES`, a ring
  (reduce-scatter, then all-gather) above. Otherwise (GPUs, each with a cl.Context of its own,
  or several platforms) the data moves in chunks through pinned host memory (gpuarr.staging),
  pipelined, and reduces on the receiving devices: below `RING_BYTES` every rank's data goes
  to every rank, which reduces it whole (one trip through the host); from it up each rank
  reduces its part of the data (reduce-scatter), then sends it to all (all-gather).
* Across processes and hosts the ranks are MPI processes, one context each: `GpuComm`, made
  from a `CommCliqueId` or with `GpuComm.from_mpi`. Device data meets MPI's collectives in
  host memory: mapped in place where the device shares the host's memory (PoCL, integrated
  GPUs), else staged through pinned (ALLOC_HOST_PTR) buffers in chunks, so device copies
  overlap the MPI traffic. Where the device's memory is host memory MPI reduces on the host
  (on PoCL that measured faster than device kernels); on GPUs all_reduce and reduce_scatter
  reduce on the device, MPI only moving the data (`GpuComm.reduce_on`; figures in
  benchmarks/bench_collectives.py). GPU ranks of one host skip MPI's messages: their devices
  copy chunks to and from a shared window of host memory (pinned for them) and reduce them
  (`GpuComm.staging` 'shared'; benchmarks/multi_gpu_report.py measures it).

Reductions are elementwise; all_gather concatenates and reduce_scatter splits the ranks' data
in C order, along the first axis (F order and the last axis when every rank's array is
F-contiguous only, as pygpu). Ops: sum, prod, max, min and pygpu's aliases ('+', 'add', '*',
'mul', 'product', 'maximum', 'minimum'), on integers, float32/64 and (sum, prod) complex;
broadcast and all_gather move any dtype. Integer sums wrap as numpy's do.
"""

import atexit
import contextlib
import ctypes
import functools
import mmap
import os
import pickle
import struct
import sys
import time

import numpy as np
import pyopencl as cl

from . import config, errors, staging
from .array import GpuArray
from .context import get_context
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    CommError,
    CommTimeout,
    ContextMismatch,
    GpuArrayError,
    ShapeError,
    UnsupportedError,
)
from .launch import host_copy, read_host, record, waits, write_host
from .ufuncs import UFUNCS

__all__ = [
    "CHUNK_BYTES", "DEVICE_CHUNK_BYTES", "ID_BYTES", "MAP_BYTES", "RING_BYTES", "CommCliqueId",
    "GpuComm", "all_gather", "all_reduce", "broadcast", "reduce", "reduce_scatter",
]

# In one process: messages of at least this many bytes reduce-scatter then all-gather (a
# ring on one cl.Context, staged otherwise), smaller ones take the tree (one cl.Context: on
# PoCL, whose devices share the host's cores, the tree won below 64 MiB and tied above) or
# go whole to every rank (staged: with two ranks both ways move the same bytes).
RING_BYTES = 64 << 20

_OPS = {"sum": "sum", "+": "sum", "add": "sum", "prod": "prod", "*": "prod", "mul": "prod",
        "product": "prod", "max": "max", "maximum": "max", "min": "min", "minimum": "min"}
_OPCODES = ("sum", "prod", "max", "min")  # pygpu's GA_SUM, GA_PROD, GA_MAX, GA_MIN
_KERNELS = {"sum": UFUNCS["add"], "prod": UFUNCS["multiply"], "max": UFUNCS["maximum"],
            "min": UFUNCS["minimum"]}
_REAL = tuple(np.dtype(t) for t in (np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                    np.uint32, np.int64, np.uint64, np.float32, np.float64))
_COMPLEX = (np.dtype(np.complex64), np.dtype(np.complex128))


# ---------------------------------------------------------------- shared checks and layouts

def _op_name(op, what):
    """'sum', 'prod', 'max' or 'min' for any of pygpu's spellings (or opcodes 0-3)."""
    if isinstance(op, int) and not isinstance(op, bool) and 0 <= op < len(_OPCODES):
        return _OPCODES[op]
    name = _OPS.get(op.lower()) if isinstance(op, str) else None
    if name is None:
        raise ArgumentError(f"{what}: unknown reduction op {op!r}; use one of "
                            f"{', '.join(map(repr, _OPS))}")
    return name


def _check_reducible(dtype, op, what):
    if dtype in _REAL or (dtype in _COMPLEX and op in ("sum", "prod")):
        return
    names = ", ".join(d.name for d in _REAL)
    extra = "complex numbers have no order; " if dtype in _COMPLEX else ""
    raise UnsupportedError(f"{what} with op {op!r} does not support dtype {dtype}; "
                           f"{extra}supported: {names} (and complex64/128 for sum and prod)")


def _f_only(a):
    return a._is_f() and not a._is_c()


def _flat(a, order):
    """`a` as a 1-d contiguous array in `order` (a view when its layout allows, else a copy)."""
    if not (a._is_c() if order == "C" else a._is_f()):
        a = a.copy(order)
    return a.reshape(a.size, order=order)


def _gather_shape(shape, count, nd_up, order):
    """pygpu's all_gather result: count ranks stacked on nd_up new leading axes (trailing
    in F order), or concatenated along the first (last) axis when nd_up is 0."""
    if nd_up == 0:
        if order == "C":
            return (shape[0] * count, *shape[1:])
        return (*shape[:-1], shape[-1] * count)
    if order == "C":
        return (count, *(1,) * (nd_up - 1), *shape)
    return (*shape, *(1,) * (nd_up - 1), count)


def _scatter_shape(shape, count, order, what):
    """pygpu's reduce_scatter result: the first (F order: last) axis split in `count`
    equal parts, and dropped when the parts have length 1."""
    axis = 0 if order == "C" else len(shape) - 1
    n = shape[axis]
    if n % count:
        raise ShapeError(f"{what}: cannot split shape {shape} in {count} equal parts along "
                         f"axis {axis} ({n} is not a multiple of {count})")
    part = n // count
    rest = list(shape)
    if part == 1:
        del rest[axis]
    else:
        rest[axis] = part
    return tuple(rest)


def _check_nd_up(nd_up, ndim, what):
    if isinstance(nd_up, bool) or not isinstance(nd_up, int | np.integer) or nd_up < 0:
        raise ArgumentError(f"{what}: nd_up must be an integer >= 0, not {nd_up!r}")
    if nd_up == 0 and ndim == 0:
        raise ShapeError(f"{what}: a 0-d array cannot be concatenated (nd_up=0); use nd_up >= 1")


def _check_scatter_src(src, count, what):
    if src.ndim == 0:
        raise ShapeError(f"{what}: the source must have at least one dimension, not shape ()")
    if src.size % count:
        raise ShapeError(f"{what}: cannot split shape {src.shape} ({src.size} elements) in "
                         f"{count} equal parts")


def _check_dest(dest, ctx, dtype, size, what, shape=None):
    """Everything about a given `dest` that does not depend on the other ranks."""
    if dest is None:
        return
    if not isinstance(dest, GpuArray):
        raise ArgumentTypeError(f"{what}: dest must be a GpuArray or None, not "
                                f"{type(dest).__name__}")
    if dest.context is not ctx:
        raise ContextMismatch(f"{what}: dest is on context {dest.context.name!r} "
                              f"({dest.context.devname}), its rank's data on {ctx.name!r} "
                              f"({ctx.devname})")
    if dest.dtype != dtype:
        raise ArgumentTypeError(f"{what}: dest has dtype {dest.dtype}, the result {dtype}")
    if shape is not None and dest.shape != shape:
        raise ShapeError(f"{what}: dest has shape {dest.shape}, the result {shape}")
    if dest.size != size:
        raise ShapeError(f"{what}: dest has {dest.size} elements (shape {dest.shape}), the "
                         f"result {size}")
    dest._check_writeable()


class _Target:
    """Where a result goes: `array` (dest, or a new array) and `flat`, the 1-d contiguous
    array the transport writes in `order`; `finish()` moves it into a dest that `flat`
    could not view."""

    def __init__(self, dest, ctx, shape, dtype, order):
        if dest is None:
            dest = GpuArray(shape, dtype, order=order, context=ctx)
        self.array = dest
        self._copy_back = not (dest._is_c() if order == "C" else dest._is_f())
        self.order = order
        if self._copy_back:
            self.flat = GpuArray._empty(ctx, (dest.size,), dtype)
        else:
            self.flat = dest.reshape(dest.size, order=order)

    def finish(self):
        if self._copy_back:
            self.array._assign(self.flat.reshape(self.array.shape, order=self.order))
        return self.array


def _sources(src, targets, order):
    """`src` flat in `order`, copied first when it overlaps a target other than itself."""
    flat = _flat(src, order)
    for t in targets:
        if t is not None and flat._may_share(t.flat) and not (
                flat.storage is t.flat.storage and flat.offset == t.flat.offset
                and flat.size == t.flat.size):
            return _flat(src, order).copy()
    return flat


# ---------------------------------------------------------------- one process: ranks are contexts

def _copy(dst, src):
    """dst[:] = src for 1-d contiguous arrays of one dtype and size, on contexts of one platform.

    Across contexts the copy runs on the source queue once the target queue has reached this
    point, and the target queue waits for it (as GpuArray.transfer does): neither queue's
    in-order reuse of pooled memory can overtake it.
    """
    if src.size == 0 or (src.storage is dst.storage and src.offset == dst.offset):
        return
    sq, dq = src.context.queue, dst.context.queue
    wait = waits(sq, (src.storage,), (dst.storage,)) or []
    if sq is not dq:
        wait.append(cl.enqueue_marker(dq))
    event = cl.enqueue_copy(sq, dst.storage.buffer, src.storage.buffer, byte_count=src.nbytes,
                            src_offset=src.offset, dst_offset=dst.offset, wait_for=wait or None)
    record(event, sq, (src.storage,))
    if sq is not dq:
        event = cl.enqueue_marker(dq, wait_for=[event])
    record(event, dq, (), (dst.storage,))


def _fetch(src, ctx):
    """A new 1-d array on `ctx` holding `src`."""
    out = GpuArray._empty(ctx, src.shape, src.dtype)
    _copy(out, src)
    return out


def _combine(op, a, b, out=None):
    """a (op) b elementwise on a's context, into `out` (new when None)."""
    return _KERNELS[op](a, b, out=out)


def _tree_reduce(flats, op, root, out):
    """Binomial tree: after ceil(log2 n) rounds the reduction is in `out` (root's context)."""
    n = len(flats)
    if n == 1:
        if out is not flats[root]:
            _copy(out, flats[root])
        return
    acc = list(flats)
    d = 1
    while d < n:
        for v in range(0, n - d, 2 * d):
            r, s = (v + root) % n, (v + d + root) % n
            last = v == 0 and 2 * d >= n
            target = out if last else (acc[r] if acc[r] is not flats[r] else None)
            acc[r] = _combine(op, acc[r], _fetch(acc[s], flats[r].context), target)
        d *= 2


def _tree_broadcast(flats, root):
    """Binomial tree from flats[root] into every other flat."""
    n = len(flats)
    d = 1
    while d < n:
        d *= 2
    while d > 1:
        d //= 2
        for v in range(0, n - d, 2 * d):
            _copy(flats[(v + d + root) % n], flats[(v + root) % n])


def _chunk(flat, bounds, k):
    return flat[bounds[k]:bounds[k + 1]]


def _ring_reduce_scatter(flats, op, bounds, outs):
    """n-1 steps around the ring; then rank r's chunk r is complete, in outs[r]."""
    n = len(flats)
    if n == 1:
        _copy(outs[0], _chunk(flats[0], bounds, 0))
        return
    carry = [None] * n
    for s in range(n - 1):
        new = [None] * n
        for r in range(n):
            k = (r - s - 1) % n  # the chunk rank r passes on at this step
            t = (r + 1) % n
            piece = carry[r] if s else _chunk(flats[r], bounds, k)
            recv = _fetch(piece, flats[t].context)
            new[t] = _combine(op, _chunk(flats[t], bounds, k), recv,
                              outs[t] if s == n - 2 else None)
        carry = new


def _ring_all_gather(flats, bounds):
    """Each flat's own chunk r goes around the ring into every other flat."""
    n = len(flats)
    for s in range(n - 1):
        for r in range(n):
            k = (r - s) % n
            _copy(_chunk(flats[(r + 1) % n], bounds, k), _chunk(flats[r], bounds, k))


def _one_cl_context(ctxs):
    return all(c.cl_context is ctxs[0].cl_context for c in ctxs)


def _rank_arrays(arrays, what):
    """The list of per-rank arrays, checked: GpuArrays of one shape and dtype."""
    if isinstance(arrays, GpuArray) or not isinstance(arrays, list | tuple) or not arrays:
        raise ArgumentTypeError(f"{what} takes a non-empty list of GpuArrays, one per rank "
                                f"(context); got {type(arrays).__name__}")
    for r, a in enumerate(arrays):
        if not isinstance(a, GpuArray):
            raise ArgumentTypeError(f"{what}: rank {r} holds {type(a).__name__}, not a GpuArray")
    a0 = arrays[0]
    for r, a in enumerate(arrays[1:], 1):
        if a.dtype != a0.dtype:
            raise ArgumentTypeError(f"{what}: ranks disagree on the dtype: rank 0 has "
                                    f"{a0.dtype}, rank {r} {a.dtype}")
        if a.shape != a0.shape:
            raise ShapeError(f"{what}: ranks disagree on the shape: rank 0 has {a0.shape}, "
                             f"rank {r} {a.shape}")
    return list(arrays)


def _rank_dests(dest, n, what):
    if dest is None:
        return [None] * n
    if isinstance(dest, GpuArray) or not isinstance(dest, list | tuple) or len(dest) != n:
        raise ArgumentTypeError(f"{what}: dest must be None or a list of {n} GpuArrays "
                                f"(or None), one per rank")
    return list(dest)


def _list_order(arrays):
    return "F" if all(_f_only(a) for a in arrays) else "C"


# ---------------------------------------------------------------- one process, staged

def _chunk_ranges(lo, hi, dtype):
    """[lo, hi) in pieces of at most staging.CHUNK_BYTES."""
    per = max(staging.CHUNK_BYTES // dtype.itemsize, 1)
    return [(a, min(a + per, hi)) for a in range(lo, hi, per)]


def _region(a):
    return staging.Region.of(a)


def _staged_reduce(flats, op, jobs):
    """The staged reduction of `jobs`, each (lo, hi, {rank q: out_q}): every rank's
    flat[lo:hi], chunk by chunk, to every receiving rank q, which reduces the chunks in rank
    order (the same bits on every receiver) into out_q (hi - lo elements) by kernels.

    Returns, per job, [((a, b), [the chunk's moves])]. A receiver reduces a chunk once the
    others' have arrived and its own was sent (out_q may be its flat). It keeps
    staging.SLOTS chunks per sender in a scratch array; a chunk's moves wait for those of the
    chunk that used its scratch before (whose reduction is enqueued by then, ahead of them on
    the queue)."""
    n, dtype, slots = len(flats), flats[0].dtype, staging.SLOTS
    plans = []
    for lo, hi, outs in jobs:
        ranges = _chunk_ranges(lo, hi, dtype)
        per = ranges[0][1] - ranges[0][0] if ranges else 0
        scratch = {q: GpuArray._empty(flats[q].context, (n - 1, slots, per), dtype)
                   for q in outs}
        senders = [r for r in range(n) if outs.keys() - {r}]
        plan = []
        for k, (a, b) in enumerate(ranges):
            inbox = {q: [flats[q][a:b] if r == q else scratch[q][r - (r > q), k % slots, :b - a]
                         for r in range(n)] for q in outs}
            then = functools.partial(_arrived, op, inbox, {
                q: n - 1 + (q in senders) for q in outs}, {
                q: out[a - lo:b - lo] for q, out in outs.items()})
            after = tuple(plan[k - slots][1]) if k >= slots else ()
            moves = []
            for r in senders:
                to = [q for q in outs if q != r]
                moves.append(staging.Move(
                    _region(flats[r][a:b]), [_region(inbox[q][r]) for q in to],
                    [functools.partial(then, q) for q in outs if q == r or q in to], after))
            plan.append(((a, b), moves))
        plans.append(plan)
    return plans


def _arrived(op, inbox, expected, outs, q):
    """One more chunk arrived at rank q (or its own left); once all have, reduce them there
    in rank order."""
    expected[q] -= 1
    if not expected[q]:
        vals = inbox[q]
        acc = vals[0]
        for v in vals[1:-1]:  # (out_q may be q's own input: it is written last)
            acc = _combine(op, acc, v)
        _combine(op, acc, vals[-1], outs[q])


def _moves(plans):
    """The moves of several plans, chunk by chunk across them: they pipeline side by side."""
    out = []
    for k in range(max(map(len, plans), default=0)):
        out += [m for plan in plans if k < len(plan) for m in plan[k][1]]
    return out


def _staged_all_reduce(flats, op, outs):
    n, size = len(flats), flats[0].size
    if flats[0].nbytes < RING_BYTES:
        staging.run(_moves(_staged_reduce(flats, op, [(0, size, dict(enumerate(outs)))])))
        return
    bounds = [r * size // n for r in range(n + 1)]
    plans = _staged_reduce(flats, op, [(bounds[p], bounds[p + 1],
                                        {p: outs[p][bounds[p]:bounds[p + 1]]})
                                       for p in range(n)])
    for p, plan in enumerate(plans):  # then each reduced chunk goes to the other ranks
        for i, ((a, b), moves) in enumerate(plan):
            gather = staging.Move(_region(outs[p][a:b]),
                                  [_region(outs[q][a:b]) for q in range(n) if q != p],
                                  after=tuple(moves))
            plan[i] = ((a, b), [*moves, gather])
    staging.run(_moves(plans))


def _staged_sends(sources, dests_of):
    """Moves of each source's chunks [a, b) into dests_of(rank, a, b), side by side."""
    return _moves([[(None, [staging.Move(_region(src[a:b]),
                                         [_region(d) for d in dests_of(r, a, b)])])
                    for a, b in _chunk_ranges(0, src.size, src.dtype)]
                   for r, src in enumerate(sources)])


def all_reduce(arrays, op="sum", dest=None):
    """Every rank gets the reduction of all ranks' arrays: a list of results, one per rank."""
    what = "all_reduce"
    srcs = _rank_arrays(arrays, what)
    op = _op_name(op, what)
    a0 = srcs[0]
    _check_reducible(a0.dtype, op, what)
    dests = _rank_dests(dest, len(srcs), what)
    for s, d in zip(srcs, dests):
        _check_dest(d, s.context, a0.dtype, a0.size, what, a0.shape)
    order = _list_order(srcs)
    targets = [_Target(d, s.context, a0.shape, a0.dtype, order) for s, d in zip(srcs, dests)]
    flats = [_sources(s, [t], order) for s, t in zip(srcs, targets)]
    outs = [t.flat for t in targets]
    if a0.size == 0:
        pass
    elif not _one_cl_context([s.context for s in srcs]):
        _staged_all_reduce(flats, op, outs)
    elif a0.nbytes < RING_BYTES or len(srcs) == 1:
        _tree_reduce(flats, op, 0, outs[0])
        _tree_broadcast(outs, 0)
    else:
        n = len(srcs)
        bounds = [r * a0.size // n for r in range(n + 1)]
        _ring_reduce_scatter(flats, op, bounds, [_chunk(o, bounds, r) for r, o in enumerate(outs)])
        _ring_all_gather(outs, bounds)
    return [t.finish() for t in targets]


def reduce(arrays, op="sum", dest=None, root=0):
    """The reduction of all ranks' arrays on rank `root`: a list holding it at `root` and
    None elsewhere. `dest`: None, the root's GpuArray, or a list with it at `root`."""
    what = "reduce"
    srcs = _rank_arrays(arrays, what)
    n = len(srcs)
    root = _check_root(root, n, what)
    op = _op_name(op, what)
    a0 = srcs[0]
    _check_reducible(a0.dtype, op, what)
    d = dest if isinstance(dest, GpuArray) or dest is None else _rank_dests(dest, n, what)[root]
    ctx = srcs[root].context
    _check_dest(d, ctx, a0.dtype, a0.size, what, a0.shape)
    order = _list_order(srcs)
    target = _Target(d, ctx, a0.shape, a0.dtype, order)
    flats = [_sources(s, [target] if r == root else [], order) for r, s in enumerate(srcs)]
    if a0.size == 0:
        pass
    elif not _one_cl_context([s.context for s in srcs]):
        staging.run(_moves(_staged_reduce(flats, op, [(0, a0.size, {root: target.flat})])))
    else:
        _tree_reduce(flats, op, root, target.flat)
    result = [None] * n
    result[root] = target.finish()
    return result


def broadcast(arrays, root=0):
    """Copy rank `root`'s array into every other rank's array, in place; returns `arrays`."""
    what = "broadcast"
    arrays = _rank_arrays(arrays, what)
    n = len(arrays)
    root = _check_root(root, n, what)
    for r, a in enumerate(arrays):
        if r != root:
            a._check_writeable()
    order = _list_order(arrays)
    src = _flat(arrays[root], order)
    targets = [None if r == root else _Target(a, a.context, a.shape, a.dtype, order)
               for r, a in enumerate(arrays)]
    flats = [src if t is None else t.flat for t in targets]
    if src.size == 0:
        pass
    elif not _one_cl_context([a.context for a in arrays]):
        staging.run(_staged_sends([src], lambda _, a, b: [f[a:b] for f in flats if f is not src]))
    else:
        _tree_broadcast(flats, root)
    for t in targets:
        if t is not None:
            t.finish()
    return arrays


def all_gather(arrays, dest=None, nd_up=1):
    """Every rank gets all ranks' arrays in rank order, stacked on `nd_up` new leading axes
    (trailing for F-ordered arrays) or concatenated along the first (last) axis (nd_up=0)."""
    what = "all_gather"
    srcs = _rank_arrays(arrays, what)
    n = len(srcs)
    a0 = srcs[0]
    _check_nd_up(nd_up, a0.ndim, what)
    dests = _rank_dests(dest, n, what)
    for s, d in zip(srcs, dests):
        _check_dest(d, s.context, a0.dtype, n * a0.size, what)
    order = _list_order(srcs)
    shape = _gather_shape(a0.shape, n, nd_up, order)
    targets = [_Target(d, s.context, shape, a0.dtype, order) for s, d in zip(srcs, dests)]
    flats = [_sources(s, targets, order) for s in srcs]
    m = a0.size
    if m == 0:
        pass
    elif not _one_cl_context([s.context for s in srcs]):
        for k, f in enumerate(flats):
            _copy(targets[k].flat[k * m:(k + 1) * m], f)
        staging.run(_staged_sends(flats, lambda k, a, b: [
            t.flat[k * m + a:k * m + b] for q, t in enumerate(targets) if q != k]))
    else:
        for t in targets:
            for k, f in enumerate(flats):
                _copy(t.flat[k * m:(k + 1) * m], f)
    return [t.finish() for t in targets]


def reduce_scatter(arrays, op="sum", dest=None):
    """Rank r gets part r of the reduction, split in equal parts along the first axis (the
    last for F-ordered arrays); the axis is dropped when the parts have length 1."""
    what = "reduce_scatter"
    srcs = _rank_arrays(arrays, what)
    n = len(srcs)
    op = _op_name(op, what)
    a0 = srcs[0]
    _check_reducible(a0.dtype, op, what)
    _check_scatter_src(a0, n, what)
    order = _list_order(srcs)
    shape = _scatter_shape(a0.shape, n, order, what)
    dests = _rank_dests(dest, n, what)
    part = a0.size // n
    for s, d in zip(srcs, dests):
        _check_dest(d, s.context, a0.dtype, part, what)
    targets = [_Target(d, s.context, shape, a0.dtype, order) for s, d in zip(srcs, dests)]
    flats = [_sources(s, targets, order) for s in srcs]
    if part == 0:
        pass
    elif not _one_cl_context([s.context for s in srcs]):
        staging.run(_moves(_staged_reduce(flats, op, [
            (r * part, (r + 1) * part, {r: t.flat}) for r, t in enumerate(targets)])))
    else:
        bounds = [r * part for r in range(n + 1)]
        _ring_reduce_scatter(flats, op, bounds, [t.flat for t in targets])
    return [t.finish() for t in targets]


def _check_root(root, n, what):
    if isinstance(root, bool) or not isinstance(root, int | np.integer) or not 0 <= root < n:
        raise ArgumentError(f"{what}: root must be a rank in 0..{n - 1}, not {root!r}")
    return int(root)


# ---------------------------------------------------------------- MPI: ranks are processes

ID_BYTES = 128  # pygpu's GA_COMM_ID_BYTES
# MPI sees large messages in chunks of this many bytes per rank; staged ones double-buffered.
CHUNK_BYTES = 1 << 20
# GpuComm's chunks on devices whose memory is not the host's (GPUs): a chunk costs a few MPI
# and driver round trips, so a 256 MiB all_reduce should take tens of them, not hundreds.
DEVICE_CHUNK_BYTES = 8 << 20
# Devices that share the host's memory give MPI the mapped arrays from this size up.
MAP_BYTES = 1 << 20
# Shared windows come in multiples of this many bytes a rank, so that every rank's segment
# starts on a page where the window does (pinning needs whole pages; 64 KiB covers the page
# sizes of every platform).
_WINDOW_ALIGN = 64 << 10
_CTL_TAG = 1  # the tag of the messages on a GpuComm's control channel
_AGREE_SLOT = 256  # bytes per rank of _agree's one all-gather (its records take ~100)
# Every GpuComm made here, as its _Exit record: its peers hear when this process exits,
# whether or not the GpuComm itself is still referenced (a dropped one is left for good).
_EXITS = []
# Every shared window made here, with its pinning buffers (released at exit, before MPI's).
_WINDOWS = []
# The pending requests of collectives given up on (a timeout, a failed rank), kept for the
# job's life: MPI may still write into their buffers if a late rank joins.
_ORPHANS = []


def _mpi():
    MPI = sys.modules.get("mpi4py.MPI")  # (an import statement per call costs ~2 us)
    if MPI is not None:
        return MPI
    try:
        from mpi4py import MPI
    except ImportError:
        raise CommError("GpuComm needs mpi4py and an MPI library: pip install 'gpuarr[mpi]' "
                        "(mpi4py and mpich), then start the ranks with mpiexec -n N") from None
    return MPI


class CommCliqueId:
    """The opaque id (bytes) that the ranks of one communicator share.

    Make it on one rank, send `comm_id` to the others (e.g. with mpi4py's bcast) and rebuild
    it there with `CommCliqueId(context, comm_id=...)`; every rank then calls
    `GpuComm(clique_id, ndev, rank)`.
    """

    def __init__(self, context=None, comm_id=None):
        self.context = get_context(context)
        self.comm_id = os.urandom(ID_BYTES) if comm_id is None else comm_id

    @property
    def comm_id(self):
        """The id's bytes."""
        return self._id

    @comm_id.setter
    def comm_id(self, value):
        if not isinstance(value, bytes | bytearray | memoryview):
            raise ArgumentTypeError(f"comm_id must be bytes, not {type(value).__name__}")
        value = bytes(value)
        if not 0 < len(value) <= ID_BYTES:
            raise ArgumentError(f"comm_id must hold 1 to {ID_BYTES} bytes, not {len(value)}")
        self._id = value

    def __eq__(self, other):
        return type(other) is type(self) and other.comm_id == self.comm_id

    def __hash__(self):
        return hash((type(self).__name__, self.comm_id))

    def __reduce__(self):
        raise ArgumentTypeError("a CommCliqueId does not pickle (it holds a context); send "
                                "its comm_id bytes and rebuild it with CommCliqueId(context, "
                                "comm_id=...)")

    def __repr__(self):
        return f"<CommCliqueId {self.comm_id[:8].hex()}... on {self.context.name!r}>"


def _wait(request, timeout, what):
    """Poll a non-blocking MPI request until it completes or `timeout` seconds pass."""
    deadline = time.monotonic() + timeout
    pause = 1e-4
    while not request.Test():
        if time.monotonic() > deadline:
            err = CommTimeout(
                f"{what}: not every rank joined within {timeout:g} s; a rank never called it "
                f"(or is stuck before it). The job cannot go on safely: abort it "
                f"(MPI.COMM_WORLD.Abort()); the pending MPI request is this error's .request")
            err.request = request
            raise err
        time.sleep(pause)
        pause = min(2 * pause, 0.01)


def _record(comm_id, ndev, rank):
    return struct.pack("<qqq", len(comm_id), ndev, rank) + comm_id.ljust(ID_BYTES, b"\0")


def _join_clique(world, comm_id, ndev, rank, timeout):
    """The communicator of the processes that share `comm_id` (every process of `world`
    calls this; several cliques may form at once)."""
    what = f"GpuComm(ndev={ndev}, rank={rank})"
    mine = np.frombuffer(_record(comm_id, ndev, rank), np.uint8)
    table = np.empty((world.size, mine.size), np.uint8)
    _wait(world.Iallgather(mine, table), timeout, what)
    cliques = {}
    for w in range(world.size):
        length, n, r = struct.unpack("<qqq", table[w, :24].tobytes())
        cliques.setdefault(table[w, 24:24 + length].tobytes(), []).append((w, n, r))
    for key, members in cliques.items():  # every process checks every clique: same verdict
        sizes = sorted({n for _, n, _ in members})
        label = "this clique" if key == comm_id else f"clique {key[:4].hex()}..."
        if len(sizes) > 1:
            raise CommError(f"{what}: the ranks of {label} disagree on ndev: {sizes}")
        ranks = sorted(r for _, _, r in members)
        if ranks != list(range(sizes[0])):
            raise CommError(
                f"{what}: {label} needs ranks 0..{sizes[0] - 1} once each; the processes "
                f"(MPI.COMM_WORLD ranks {[w for w, _, _ in members]}) gave ranks {ranks}")
    color = sorted(cliques).index(comm_id)
    return world.Split(color, rank)


def _timeout(value):
    """A GpuComm's deadline in seconds: `value`, or flag comm_timeout when None."""
    if value is None:
        return config.flags.comm_timeout
    if isinstance(value, bool) or not isinstance(value, int | float) or not value > 0:
        raise ArgumentError(f"GpuComm: timeout must be a number of seconds over 0 (inf: no "
                            f"deadline) or None (flag comm_timeout), not {value!r}")
    return float(value)


class _Exit:
    """What a GpuComm's peers are told when this process exits: its control channel, its
    rank, and how many collectives it entered (kept up to date by GpuComm._begin)."""

    __slots__ = ("ctl", "rank", "seq", "size")

    def __init__(self, ctl):
        self.ctl, self.rank, self.size, self.seq = ctl, ctl.rank, ctl.size, 0


def _at_exit():
    """Tell the peers of every GpuComm made here that this process is leaving: a peer
    waiting in a collective this process never entered raises at once, not at its deadline."""
    MPI = sys.modules.get("mpi4py.MPI")
    if MPI is None or not MPI.Is_initialized() or MPI.Is_finalized():
        return
    for window in list(_WINDOWS):  # (the driver lets go of the memory before MPI unmaps it)
        with contextlib.suppress(Exception):
            _unpin(window)
    sent = []
    for ex in _EXITS:
        with contextlib.suppress(Exception):
            sent += [ex.ctl.isend(("leave", ex.seq, ex.rank), dest=r, tag=_CTL_TAG)
                     for r in range(ex.size) if r != ex.rank]
    end = time.monotonic() + 1.0  # small messages go out at once; never hold the exit long
    while sent and time.monotonic() < end:
        sent = [r for r in sent if not r.Test()]
        time.sleep(0.001)


def _shm_room():
    """Bytes free in /dev/shm, where MPI's shared windows live (None: no /dev/shm here)."""
    try:
        st = os.statvfs("/dev/shm")
    except OSError:
        return None
    return st.f_bavail * st.f_frsize


def _unpin(window):
    """Release a shared window's pinning buffers (`GpuComm._pin`)."""
    pins = window[2]
    while pins:
        pins.pop().release()


def _free_window(window):
    """Free a shared window: its pinning first, then the MPI window (collective)."""
    _unpin(window)
    _WINDOWS[:] = [w for w in _WINDOWS if w is not window]
    window[0].Free()


def _mismatch(infos, what):
    """The error every rank raises when the ranks' calls (as _agree exchanged them) differ,
    else None. Every rank compares every rank with rank 0, so all raise the same words."""
    name0, layout0, values0, _ = infos[0]
    for r, (name, lay, vals, _) in enumerate(infos[1:], 1):
        if name != name0:
            return ArgumentError(f"the ranks called different collectives: rank 0 {name0}, "
                                 f"rank {r} {name}")
        if lay[1] != layout0[1]:
            return ArgumentTypeError(f"{what}: ranks disagree on the dtype: rank 0 has "
                                     f"{np.dtype(layout0[1])}, rank {r} {np.dtype(lay[1])}")
        if lay[0] != layout0[0]:
            return ShapeError(f"{what}: ranks disagree on the shape: rank 0 has "
                              f"{layout0[0]}, rank {r} {lay[0]}")
        for key, v in vals.items():
            if v != values0.get(key):
                return ArgumentError(f"{what}: ranks disagree on {key}: rank 0 passed "
                                     f"{values0.get(key)!r}, rank {r} {v!r}")
    return None


def _collective(method):
    """A GpuComm collective: an exception that leaves it on this rank alone (not one every
    rank raises after `_agree`, not one a peer's failure caused) tells the other ranks, which
    raise CommError instead of waiting for this one."""

    @functools.wraps(method)
    def collective(self, *args, **kwargs):
        try:
            return method(self, *args, **kwargs)
        except BaseException as e:
            if self._broken is None and e is not self._agreed:
                self._fail(e)
            raise

    return collective


class GpuComm:
    """A communicator of MPI processes, one context each (pygpu's GpuComm).

        cid = CommCliqueId(ctx) if rank == 0 else None            # on one rank ...
        cid = CommCliqueId(ctx, comm_id=mpi.bcast(cid and cid.comm_id))   # ... shared
        comm = GpuComm(cid, ndev, rank)        # or GpuComm.from_mpi(MPI.COMM_WORLD, ctx)
        total = comm.all_reduce(x, "sum")

    `GpuComm(clique_id, ndev, rank)` forms the communicator over MPI.COMM_WORLD: every
    process of the job calls it, the ids group the processes (several cliques may form at
    once, each of `ndev` processes ranked 0..ndev-1), and a process that does not call it
    within `timeout` seconds makes the others raise CommTimeout. MPI (mpiexec, and its
    process manager across hosts) is what lets the processes find each other.

    Every collective has the same deadline (`timeout`, default flag comm_timeout, 300 s):
    a rank that does not join it in time makes every other rank raise CommTimeout naming
    it; a rank that raises inside one, or whose process exits before joining one, makes
    the others raise CommError at once. Either error leaves the ranks out of step: the
    GpuComm then raises CommError on any use (abort the job, or make a new GpuComm).
    """

    #: 'auto' maps device memory in place when the device shares the host's memory; on
    #: other devices (GPUs) reducing on the device it takes 'shared' when every rank is on
    #: one host, else stages chunks through pinned buffers. 'map', 'pinned' or 'shared' force
    #: one. 'shared' (ranks of one host): all_reduce and reduce_scatter reducing on the device
    #: move the data through host memory the ranks share (an MPI shared window, pinned for
    #: each rank's device) instead of MPI messages: each rank's device writes its chunks
    #: there and the others' devices read them; elsewhere it stages as 'pinned'.
    staging = "auto"
    #: Where reductions run: 'host' (MPI's own), 'device' (MPI moves the data, kernels
    #: reduce it: all_reduce and reduce_scatter), or 'auto': the device unless its memory is
    #: the host's (there MPI's reduction measured faster, on PoCL).
    reduce_on = "auto"
    #: Bytes per staged chunk or MPI piece; None: CHUNK_BYTES where the device's memory is
    #: the host's, DEVICE_CHUNK_BYTES elsewhere (a GPU: fewer, larger chunks).
    chunk_bytes = None

    def __init__(self, clique_id, ndev, rank, *, timeout=None):
        if not isinstance(clique_id, CommCliqueId):
            raise ArgumentTypeError(f"GpuComm needs a CommCliqueId, not "
                                    f"{type(clique_id).__name__}")
        if isinstance(ndev, bool) or not isinstance(ndev, int) or ndev < 1:
            raise ArgumentError(f"GpuComm: ndev must be a positive integer, not {ndev!r}")
        if isinstance(rank, bool) or not isinstance(rank, int) or not 0 <= rank < ndev:
            raise ArgumentError(f"GpuComm: rank must be in 0..{ndev - 1}, not {rank!r}")
        timeout = _timeout(timeout)
        world = _mpi().COMM_WORLD
        if world.size < ndev:
            raise CommError(f"GpuComm(ndev={ndev}): MPI.COMM_WORLD has {world.size} "
                            f"process(es); start the ranks with mpiexec -n {ndev}")
        self._setup(_join_clique(world, clique_id.comm_id, ndev, rank, timeout),
                    clique_id.context, timeout)

    @classmethod
    def from_mpi(cls, mpi_comm, context=None, *, timeout=None):
        """A GpuComm over the processes of an mpi4py intracommunicator (duplicated, so its
        traffic never meets the caller's); `context` is this process's device."""
        MPI = _mpi()
        if not isinstance(mpi_comm, MPI.Intracomm):
            raise ArgumentTypeError(f"from_mpi needs an mpi4py Intracomm (e.g. "
                                    f"MPI.COMM_WORLD), not {type(mpi_comm).__name__}")
        timeout = _timeout(timeout)
        comm, request = mpi_comm.Idup()
        _wait(request, timeout, f"GpuComm.from_mpi (size {mpi_comm.size})")
        self = object.__new__(cls)
        self._setup(comm, get_context(context), timeout)
        return self

    def _setup(self, comm, context, timeout):
        self.mpi_comm = comm
        self.context = context
        #: Seconds each collective waits for every rank (see the class docstring).
        self.timeout = timeout
        self._pinned = None
        self._slot_busy = [None, None]  # the last copy out of each pinned slot
        # staging 'shared': (MPI shared window, each rank's bytes, the buffers pinning it)
        self._window = None
        local = comm.Split_type(_mpi().COMM_TYPE_SHARED)
        self._one_host = local.size == comm.size  # (every rank sees the same)
        local.Free()
        self._seq = 0  # the collectives this rank entered
        self._what = ""  # the one running now
        self._deadline = None
        self._broken = None  # why this GpuComm cannot be used any more
        self._agreed = None  # the error every rank raises after _agree
        self._sent = []  # control messages not yet delivered
        self._left = {}  # rank -> collectives it entered before its process exited
        self._heres = {}  # collective -> the ranks that called the roll for it
        # A private channel for failures, exits and roll calls: never mixed with the data.
        self._ctl, request = comm.Idup()
        _wait(request, timeout, f"GpuComm (size {comm.size}): its control channel")
        if not _EXITS:
            atexit.register(_at_exit)  # after mpi4py's import: runs before MPI's finalizer
        self._exit = _Exit(self._ctl)
        _EXITS.append(self._exit)

    count = property(lambda self: self.mpi_comm.size, doc="the number of ranks")
    rank = property(lambda self: self.mpi_comm.rank, doc="this process's rank")

    def get_count(self):
        return self.count

    def get_rank(self):
        return self.rank

    def __repr__(self):
        return f"<GpuComm rank {self.rank} of {self.count} on {self.context.name!r}>"

    def __reduce__(self):
        raise ArgumentTypeError("a GpuComm does not pickle")

    # -- agreement: every rank raises the same error, or none does
    def _agree(self, what, src, check):
        """Run the local `check()` (a dict of values every rank must share, or a gpuarr
        error), exchange it with the array's shape and dtype, and raise the same error on
        every rank if any rank failed or they differ. Returns the common order.

        It opens the collective: its deadline starts here."""
        self._begin(what)
        error = values = None
        try:
            if not isinstance(src, GpuArray):
                raise ArgumentTypeError(f"{what}: expected a GpuArray, got {type(src).__name__}")
            if src.context is not self.context:
                raise ContextMismatch(
                    f"{what}: the array is on context {src.context.name!r} "
                    f"({src.context.devname}); this GpuComm's rank {self.rank} works on "
                    f"{self.context.name!r} ({self.context.devname}): transfer it first")
            values = check()
        except Exception as e:  # any error: the other ranks must not wait for this one
            error = e
        layout = None if error else (src.shape, src.dtype.str, _f_only(src))
        mine = (what, layout, values,
                None if error is None else (type(error).__name__, str(error)))
        infos = self._allgather_object(mine)
        for r, (_, _, _, failed) in enumerate(infos):
            if failed is not None:
                if r == self.rank:
                    self._agreed = error
                    raise error
                cls = getattr(errors, failed[0], None)
                if isinstance(cls, type) and issubclass(cls, GpuArrayError):
                    self._agreed = cls(f"{what} failed on rank {r}: {failed[1]}")
                else:
                    self._agreed = CommError(f"{what} failed on rank {r}: {failed[0]}: "
                                             f"{failed[1]}")
                raise self._agreed
        mismatch = _mismatch(infos, what)
        if mismatch is not None:
            self._agreed = mismatch
            raise mismatch
        return "F" if all(lay[2] for _, lay, _, _ in infos) else "C"

    def _root(self, root, what):
        if isinstance(root, int | np.integer) and root == -1:  # pygpu: -1 is this rank
            return self.rank
        return _check_root(root, self.count, what)

    # -- deadlines and failures: every MPI call of a collective is non-blocking, and
    # `_progress` waits for it while watching the deadline and the control channel.
    def _begin(self, what):
        if self._broken is not None:
            raise CommError(f"{what}: this GpuComm cannot be used any more: {self._broken}; "
                            f"its ranks are out of step (abort the job, or make a new GpuComm)")
        self._seq += 1
        self._exit.seq = self._seq
        self._what = what
        self._agreed = None
        self._deadline = time.monotonic() + self.timeout

    def _label(self):
        return f"{self._what} (collective #{self._seq} of this GpuComm)"

    def _allgather_object(self, obj):
        """Every rank's picklable `obj`, in rank order: one non-blocking all-gather of
        fixed slots (the length, then the pickle where it fits), a second of the pickles
        when one does not fit (an error's long message)."""
        comm, n, slot = self.mpi_comm, self.count, _AGREE_SLOT
        data = pickle.dumps(obj)
        mine = bytearray(slot)
        mine[:8] = len(data).to_bytes(8, "little")
        if len(data) <= slot - 8:
            mine[8:8 + len(data)] = data
        table = bytearray(n * slot)
        self._progress([comm.Iallgather(mine, table)], mine, table)
        sizes = [int.from_bytes(table[r * slot:r * slot + 8], "little") for r in range(n)]
        if max(sizes) <= slot - 8:
            return [pickle.loads(table[r * slot + 8:r * slot + 8 + c])
                    for r, c in enumerate(sizes)]
        displs = [sum(sizes[:r]) for r in range(n)]
        table = bytearray(sum(sizes))
        self._progress([comm.Iallgatherv(data, [table, (sizes, displs)])], data, table)
        return [pickle.loads(table[d:d + c]) for d, c in zip(displs, sizes)]

    def _progress(self, requests, *buffers):
        """Wait for the MPI `requests` of the running collective, on `buffers`. Spins for a
        moment (as a blocking MPI call would), then backs off to sleeps of up to 10 ms.
        Raises CommError when a peer fails or exits, CommTimeout at the deadline (see
        `_roll_call`); the requests and their buffers are then kept (mpi4py does not keep
        the buffers of a pending request alive)."""
        test_all = _mpi().Request.Testall
        if test_all(requests):
            return
        start = time.monotonic()
        spin_until, next_look, pause = start + 0.002, start + 0.001, 0.0
        try:
            while not test_all(requests):
                now = time.monotonic()
                if now >= next_look:
                    heard = self._look()
                    if heard or now > self._deadline:
                        self._roll_call(requests, heard, started_here=not heard)
                    next_look = now + 0.001
                if now > spin_until:
                    pause = min(max(2 * pause, 5e-5), 1e-3 if now - start < 1 else 1e-2)
                    time.sleep(pause)
        except BaseException:
            _ORPHANS.append((requests, buffers))
            raise

    def _look(self):
        """Read the control channel: raise on a peer's failure or exit that concerns the
        running collective; return the ranks that started a roll call for it."""
        MPI = _mpi()
        status = MPI.Status()
        while self._ctl.iprobe(source=MPI.ANY_SOURCE, tag=_CTL_TAG, status=status):
            kind, seq, rank, *detail = self._ctl.recv(source=status.Get_source(), tag=_CTL_TAG)
            if kind == "fail":
                where, text = detail
                raise self._break(CommError(
                    f"{self._label()}: rank {rank} raised inside {where} (its collective "
                    f"#{seq}): {text}. The ranks are out of step: this GpuComm cannot be used "
                    f"any more (abort the job, or make a new GpuComm)"))
            if kind == "leave":
                self._left[rank] = seq
            elif kind == "here" and seq >= self._seq:  # (a later one: kept for it)
                self._heres.setdefault(seq, set()).add(rank)
            elif kind == "here":
                raise self._break(CommError(
                    f"{self._label()}: rank {rank} gave up on its collective #{seq} (a "
                    f"timeout) after this rank had left it; this GpuComm cannot be used any "
                    f"more (abort the job, or make a new GpuComm)"))
        gone = sorted(r for r, seq in self._left.items() if seq < self._seq)
        if gone:
            raise self._break(CommError(
                f"{self._label()}: rank(s) {', '.join(map(str, gone))} exited before joining "
                f"it; this GpuComm cannot be used any more (abort the job)"))
        return self._heres.get(self._seq, set())

    def _roll_call(self, requests, heard, started_here):
        """Give up on the running collective: tell every peer that this rank is here, hear
        which peers answer within a grace period (those waiting in this collective answer
        within milliseconds, and give up too), and raise CommTimeout naming the others."""
        me, n = self.rank, self.count
        self._send_all(("here", self._seq, me))
        grace = min(max(self.timeout / 10, 0.5), 5.0)
        end = time.monotonic() + grace
        heard = set(heard)
        while len(heard) < n - 1 and time.monotonic() < end:
            heard |= self._look()
            time.sleep(0.001)
        missing = [r for r in range(n) if r != me and r not in heard]
        names = ", ".join(map(str, missing))
        if missing:
            why = (f"rank(s) {names} did not join within {self.timeout:g} s (flag "
                   f"comm_timeout, or GpuComm's timeout=): absent, stuck before it, or dead")
        else:
            why = ("every rank answered, but the other ranks gave up waiting first: this "
                   "rank joined it late" if not started_here else
                   f"every rank answered, but it did not complete within {self.timeout:g} s")
        err = CommTimeout(f"{self._label()}: {why}. Every rank that is here raises this; "
                          f"this GpuComm cannot be used any more: abort the job "
                          f"(MPI.COMM_WORLD.Abort()) or make a new GpuComm")
        err.missing = missing
        err.request = requests[0] if len(requests) == 1 else requests
        raise self._break(err)

    def _break(self, err):
        """Mark this GpuComm unusable because of `err`; returns it."""
        if self._broken is None:
            self._broken = f"{type(err).__name__} in {self._label()}"
        return err

    def _fail(self, error):
        """This rank leaves the running collective with `error`: tell the others."""
        self._break(error)
        text = f"{type(error).__name__}: {error}"[:2000]
        with contextlib.suppress(Exception):  # the error being raised matters more
            self._send_all(("fail", self._seq, self.rank, self._what, text))

    def _send_all(self, message):
        """Send `message` to every other rank on the control channel (not waited for)."""
        self._sent = [r for r in self._sent if not r.Test()]
        for r in range(self.count):
            if r != self.rank:
                self._sent.append(self._ctl.isend(message, dest=r, tag=_CTL_TAG))

    # -- the collectives
    @_collective
    def all_reduce(self, src, op="sum", dest=None):
        """The reduction of every rank's `src`, on every rank (into `dest` if given)."""
        what = "all_reduce"

        def check():
            name = _op_name(op, what)
            _check_reducible(src.dtype, name, what)
            _check_dest(dest, self.context, src.dtype, src.size, what, src.shape)
            return {"op": name, **self._settings()}

        order = self._agree(what, src, check)
        name = _op_name(op, what)
        target = _Target(dest, self.context, src.shape, src.dtype, order)
        flat, out = _sources(src, [target], order), target.flat
        if src.size == 0:
            pass
        elif self._on_device() and self._mode(flat.nbytes) in ("pinned", "shared"):
            n = self.count
            bounds = [r * flat.size // n for r in range(n + 1)]
            me = bounds[self.rank], bounds[self.rank + 1]
            if self._mode(flat.nbytes) == "shared":
                self._reduce_shared(flat, name, bounds, out[me[0]:me[1]], out)
            else:
                self._reduce_part_on_device(flat, name, bounds, out[me[0]:me[1]])
                self._gather_parts(out, bounds)
        elif self._on_device():
            self._all_reduce_on_device(flat, out, name)
        else:
            comm, mpi_op = self.mpi_comm, _mpi_op(name)
            in_place = flat.storage is out.storage and flat.offset == out.offset
            if self._mode(flat.nbytes) == "map":
                with self._mapped(out, read=in_place, write=True) as d:
                    if in_place:
                        self._pieces(d, lambda a, b: comm.Iallreduce(
                            _mpi().IN_PLACE, d[a:b], mpi_op))
                    else:
                        with self._mapped(flat, read=True, write=False) as s:
                            self._pieces(d, lambda a, b: comm.Iallreduce(
                                s[a:b], d[a:b], mpi_op))
            else:
                self._pipeline(flat.size, flat.dtype, 1, lambda a, c, k: [(flat, a, 0)],
                               lambda slot, a, c: comm.Iallreduce(_mpi().IN_PLACE, slot[:c],
                                                                  mpi_op),
                               lambda a, c, k: [(out, a, 0)])
        return target.finish()

    @_collective
    def reduce(self, src, op="sum", dest=None, root=0):
        """The reduction of every rank's `src` on rank `root` (returned there, into `dest` if
        given); None on the other ranks, which ignore `dest`. root=-1: this rank (pygpu)."""
        what = "reduce"
        is_root = False

        def check():
            nonlocal is_root
            name = _op_name(op, what)
            r = self._root(root, what)
            is_root = r == self.rank
            _check_reducible(src.dtype, name, what)
            if is_root:
                _check_dest(dest, self.context, src.dtype, src.size, what, src.shape)
            return {"op": name, "root": r}

        order = self._agree(what, src, check)
        r, mpi_op = self._root(root, what), _mpi_op(_op_name(op, what))
        target = _Target(dest, self.context, src.shape, src.dtype, order) if is_root else None
        flat = _sources(src, [target], order)
        comm, MPI = self.mpi_comm, _mpi()
        if src.size == 0:
            pass
        elif self._mode(flat.nbytes) == "map":
            with self._mapped(flat, read=True, write=False) as s:
                if is_root:
                    with self._mapped(target.flat, read=False, write=True) as d:
                        self._pieces(s, lambda a, b: comm.Ireduce(s[a:b], d[a:b], mpi_op, r))
                else:
                    self._pieces(s, lambda a, b: comm.Ireduce(s[a:b], None, mpi_op, r))
        else:
            self._pipeline(flat.size, flat.dtype, 1, lambda a, c, k: [(flat, a, 0)],
                           lambda slot, a, c: comm.Ireduce(MPI.IN_PLACE if is_root else slot[:c],
                                                        slot[:c] if is_root else None, mpi_op, r),
                           lambda a, c, k: [(target.flat, a, 0)] if is_root else [])
        return target.finish() if is_root else None

    @_collective
    def broadcast(self, array, root=0):
        """Rank `root`'s `array` copied into every other rank's `array`, in place; returns
        `array`. root=-1: this rank (pygpu)."""
        what = "broadcast"
        is_root = False

        def check():
            nonlocal is_root
            r = self._root(root, what)
            is_root = r == self.rank
            if not is_root:
                array._check_writeable()
            return {"root": r}

        order = self._agree(what, array, check)
        r, comm = self._root(root, what), self.mpi_comm
        target = None if is_root else _Target(array, self.context, array.shape, array.dtype,
                                              order)
        flat = _flat(array, order) if is_root else target.flat
        if array.size == 0:
            pass
        elif self._mode(flat.nbytes) == "map":
            with self._mapped(flat, read=is_root, write=not is_root) as h:
                self._pieces(h, lambda a, b: comm.Ibcast(h[a:b], r))
        else:
            self._pipeline(flat.size, flat.dtype, 1,
                           lambda a, c, k: [(flat, a, 0)] if is_root else [],
                           lambda slot, a, c: comm.Ibcast(slot[:c], r),
                           lambda a, c, k: [] if is_root else [(flat, a, 0)])
        if target is not None:
            target.finish()
        return array

    @_collective
    def all_gather(self, src, dest=None, nd_up=1):
        """Every rank's `src` in rank order on every rank: stacked on `nd_up` new leading
        axes (trailing for F-ordered arrays) or concatenated along the first (last) axis."""
        what = "all_gather"

        def check():
            _check_nd_up(nd_up, src.ndim, what)
            _check_dest(dest, self.context, src.dtype, self.count * src.size, what)
            return {}

        order = self._agree(what, src, check)
        n, m, me = self.count, src.size, self.rank
        target = _Target(dest, self.context, _gather_shape(src.shape, n, nd_up, order),
                         src.dtype, order)
        flat, out = _sources(src, [target], order), target.flat
        comm, MPI = self.mpi_comm, _mpi()
        if m == 0:
            pass
        elif self._mode(out.nbytes) == "map":
            with self._mapped(flat, read=True, write=False) as s, \
                    self._mapped(out, read=False, write=True) as d:
                self._progress([comm.Iallgather(s, d)], s, d)
        else:
            self._pipeline(m, flat.dtype, n, lambda a, c, _: [(flat, a, me * c)],
                           lambda slot, a, c: comm.Iallgather(MPI.IN_PLACE, slot[:n * c]),
                           lambda a, c, _: [(out, k * m + a, k * c) for k in range(n)])
        return target.finish()

    @_collective
    def reduce_scatter(self, src, op="sum", dest=None):
        """Part `rank` of the reduction of every rank's `src`, split in equal parts along the
        first axis (the last for F-ordered arrays; dropped when the parts have length 1)."""
        what = "reduce_scatter"

        def check():
            name = _op_name(op, what)
            _check_reducible(src.dtype, name, what)
            _check_scatter_src(src, self.count, what)
            _check_dest(dest, self.context, src.dtype, src.size // self.count, what)
            return {"op": name, **self._settings()}

        order = self._agree(what, src, check)
        n, mpi_op = self.count, _mpi_op(_op_name(op, what))
        try:
            shape = _scatter_shape(src.shape, n, order, what)
        except ShapeError as e:  # every rank finds it, from the agreed shape and order
            self._agreed = e
            raise
        target = _Target(dest, self.context, shape, src.dtype, order)
        flat, out = _sources(src, [target], order), target.flat
        part, comm = out.size, self.mpi_comm
        if part == 0:
            pass
        elif self._on_device() and self._mode(flat.nbytes) == "shared":
            self._reduce_shared(flat, _op_name(op, what), [r * part for r in range(n + 1)], out)
        elif self._on_device() and self._mode(flat.nbytes) == "pinned":
            self._reduce_part_on_device(flat, _op_name(op, what),
                                        [r * part for r in range(n + 1)], out)
        elif self._mode(flat.nbytes) == "map":
            with self._mapped(flat, read=True, write=False) as s, \
                    self._mapped(out, read=False, write=True) as d:
                self._progress([comm.Ireduce_scatter_block(s, d, mpi_op)], s, d)
        else:
            self._pipeline(part, flat.dtype, n + 1,
                           lambda a, c, _: [(flat, k * part + a, k * c) for k in range(n)],
                           lambda slot, a, c: comm.Ireduce_scatter_block(
                               slot[:n * c], slot[n * c:(n + 1) * c], mpi_op),
                           lambda a, c, k: [(out, a, n * c)])
        return target.finish()

    # -- data paths
    def _all_reduce_on_device(self, flat, out, op):
        """All-to-all of the ranks' parts, this rank's part reduced by kernels, then an
        all-gather: MPI only moves data (the reduce_on='device' variant)."""
        comm, MPI, n, me = self.mpi_comm, _mpi(), self.count, self.rank
        bounds = [r * flat.size // n for r in range(n + 1)]
        counts = [bounds[r + 1] - bounds[r] for r in range(n)]
        mine = counts[me]
        pieces = GpuArray._empty(self.context, (n * mine,), flat.dtype)
        with self._mapped(flat, read=True, write=False) as s, \
                self._mapped(pieces, read=False, write=True) as p:
            self._progress([comm.Ialltoallv([s, (counts, bounds[:-1])],
                                            [p, ([mine] * n, [r * mine for r in range(n)])])],
                           s, p)
        part = out[bounds[me]:bounds[me + 1]]
        if n == 1:
            _copy(part, pieces)
        for r in range(1, n):
            _combine(op, part if r > 1 else pieces[:mine], pieces[r * mine:(r + 1) * mine],
                     part)
        with self._mapped(out, read=True, write=True) as d:
            self._progress([comm.Iallgatherv(MPI.IN_PLACE, [d, (counts, bounds[:-1])])], d)

    def _settings(self):
        """What every rank must agree on for the data paths (a bad value raises here, before
        any data moves)."""
        self._mode(0)
        return {"reduce_on": self._on_device(), "staging 'shared'": self._mode(0) == "shared",
                "chunk_bytes": self._chunk_bytes()}

    def _chunk_bytes(self):
        if self.chunk_bytes is not None:
            return self.chunk_bytes
        unified = self.context.device.cl_device.host_unified_memory
        return CHUNK_BYTES if unified else DEVICE_CHUNK_BYTES

    def _on_device(self):
        """Whether reductions run on the device (GpuComm.reduce_on)."""
        if self.reduce_on not in ("auto", "host", "device"):
            raise ArgumentError(f"GpuComm.reduce_on must be 'auto', 'host' or 'device', not "
                                f"{self.reduce_on!r}")
        if self.reduce_on == "auto":
            return not self.context.device.cl_device.host_unified_memory
        return self.reduce_on == "device"

    def _mode(self, nbytes):
        """'map' (MPI on the mapped device memory), 'pinned' (the staged pipeline) or
        'shared' (the shared window: device reductions on one host)."""
        if self.staging not in ("auto", "map", "pinned", "shared"):
            raise ArgumentError(f"GpuComm.staging must be 'auto', 'map', 'pinned' or 'shared', "
                                f"not {self.staging!r}")
        if self.staging != "auto":
            return self.staging
        if self.context.device.cl_device.host_unified_memory:
            # Mapping costs four driver round trips, staging two: small messages stage.
            return "map" if nbytes >= MAP_BYTES else "pinned"
        # (the shared window: no MPI messages, no CPU copies; one barrier a chunk)
        return "shared" if self._one_host and self._on_device() else "pinned"

    def _pieces(self, host, call):
        """call(a, b) over the elements of `host` in pieces of chunk_bytes: MPI libraries
        run large messages slower than the same bytes in pieces (MPICH on PoCL's host:
        2.2 GB/s whole against 5.4 in 1 MiB pieces at 256 MiB)."""
        total = host.size
        per = max(1, self._chunk_bytes() // host.itemsize)
        for a in range(0, total, per):
            self._progress([call(a, min(a + per, total))], host, call)  # call holds the rest

    @contextlib.contextmanager
    def _mapped(self, flat, read, write):
        """A numpy view of a 1-d contiguous array's data in host memory: the mapped device
        memory where the device shares the host's, else a pinned copy (written back on exit
        when `write`)."""
        q = self.context.queue
        if flat.size == 0:
            yield np.empty(0, flat.dtype)
            return
        if not self.context.device.cl_device.host_unified_memory or self.staging == "pinned":
            host = staging.pinned(self.context, flat.nbytes)[:flat.nbytes].view(flat.dtype)
            if read:
                read_host(self.context, host, flat.storage, flat.offset)
            yield host
            if write:
                write_host(self.context, flat.storage, host, flat.offset)
            return
        flags = (cl.map_flags.READ if read else 0) | (
            (cl.map_flags.WRITE if read else cl.map_flags.WRITE_INVALIDATE_REGION) if write
            else 0)
        host, _ = cl.enqueue_map_buffer(q, flat.storage.buffer, flags, flat.offset,
                                        (flat.size,), flat.dtype,
                                        wait_for=waits(q, (), (flat.storage,)),
                                        is_blocking=True)
        try:
            yield host
        except BaseException:
            # A collective given up on: MPI may still write here. Keep the mapping and the
            # memory (out of the pool) for the job's life.
            _ORPHANS.append((flat, host))
            raise
        event = host.base.release(q)
        if write:
            record(event, q, (), (flat.storage,))

    def _staging(self, nbytes):
        """This communicator's pinned slots: at least `nbytes`, kept between calls."""
        if self._pinned is None or self._pinned.size < nbytes:
            self.context.sync()  # pending copies may still read the old buffer
            self._pinned = staging.pinned(self.context, max(nbytes, 1 << 16))
        return self._pinned

    def _pipeline(self, total, dtype, width, reads, call, writes, after=None):
        """Run a staged collective over `total` elements per rank, in chunks.

        Chunk k, elements [a, a+c), occupies one of two pinned slots of `width` x c elements:
        reads(a, c, k) lists (array, element offset, slot offset[, count (c)]) copied in (on
        the context's copy queue) before `call(slot, a, c)` runs MPI on it, writes(a, c, k)
        those copied out after (on its queue), and after(a, c, k) enqueues what follows them
        there (the device reductions). The next chunk's reads are enqueued before this
        chunk's MPI call, so device copies overlap the MPI traffic and each other; a slot's
        reads wait for its previous writes, and MPI waits for both.
        """
        ctx, size = self.context, dtype.itemsize
        rq, wq = ctx.copy_queue, ctx.queue
        per = min(max(1, self._chunk_bytes() // (size * width)), total)
        slot_bytes = per * width * size
        host = self._staging(2 * slot_bytes)
        slots = [host[k * slot_bytes:(k + 1) * slot_bytes].view(dtype) for k in range(2)]
        starts = range(0, total, per)

        def enqueue_reads(k):
            a = starts[k]
            c = min(per, total - a)
            event = None
            busy = self._slot_busy[k % 2]
            for flat, off, so, *count in reads(a, c, k):
                n = count[0] if count else c
                if n > 0:
                    event = host_copy(rq, slots[k % 2][so:so + n], flat.storage,
                                      flat.offset + off * size, False,
                                      after=(busy,) if busy is not None else ())
            if event is not None:
                rq.flush()
            return event

        pending = enqueue_reads(0)
        for k, a in enumerate(starts):
            c = min(per, total - a)
            following = enqueue_reads(k + 1) if k + 1 < len(starts) else None
            if pending is not None:
                pending.wait()
            if self._slot_busy[k % 2] is not None:  # (a chunk without reads: broadcast)
                self._slot_busy[k % 2].wait()
            self._progress([call(slots[k % 2], a, c)], slots)
            for flat, off, so, *count in writes(a, c, k):
                n = count[0] if count else c
                if n > 0:
                    self._slot_busy[k % 2] = host_copy(wq, slots[k % 2][so:so + n], flat.storage,
                                                       flat.offset + off * size, True)
            if after is not None:
                after(a, c, k)
            wq.flush()
            pending = following

    def _reduce_part_on_device(self, flat, op, bounds, dest):
        """This rank's part, flat[bounds[rank]:bounds[rank + 1]], reduced over the ranks
        into `dest` by kernels, chunk by chunk: an all-to-all brings each rank's piece of
        it (MPI only moves data); the pieces are reduced in rank order (the same bits as
        any rank would get)."""
        comm, n, me, size = self.mpi_comm, self.count, self.rank, flat.dtype.itemsize
        if n == 1:  # (the kernel below would combine flat with itself)
            _copy(dest, flat)
            return
        counts = [bounds[r + 1] - bounds[r] for r in range(n)]
        total = max(counts)
        per = min(max(1, self._chunk_bytes() // (size * 2 * n)), total)
        scratch = GpuArray._empty(self.context, (2, n, per), flat.dtype)

        def cnt(r, a, c):
            return max(0, min(c, counts[r] - a))

        def call(slot, a, c):
            send = [0 if p == me else cnt(p, a, c) for p in range(n)]
            recv = [0 if r == me else cnt(me, a, c) for r in range(n)]
            displs = [r * c for r in range(n)]
            return comm.Ialltoallv([slot[:n * c], (send, displs)],
                                   [slot[n * c:2 * n * c], (recv, displs)])

        def reduce(a, c, k):
            m = cnt(me, a, c)
            if m:
                vals = [flat[bounds[me] + a:bounds[me] + a + m] if r == me
                        else scratch[k % 2, r, :m] for r in range(n)]
                acc = vals[0]
                for v in vals[1:-1]:  # (dest may be this rank's part of flat: written last)
                    acc = _combine(op, acc, v)
                _combine(op, acc, vals[-1], dest[a:a + m])

        self._pipeline(total, flat.dtype, 2 * n,
                       lambda a, c, k: [(flat, bounds[p] + a, p * c, cnt(p, a, c))
                                        for p in range(n) if p != me],
                       call,
                       lambda a, c, k: [(scratch, (k % 2 * n + r) * per, n * c + r * c,
                                         cnt(me, a, c)) for r in range(n) if r != me],
                       reduce)

    def _shared_window(self, nbytes):
        """Every rank's `nbytes` (at least) of the host memory the ranks share (an MPI shared
        window), as uint8 arrays in rank order, pinned for this rank's device where it can be
        (`_pin`). Made, or made larger, by every rank inside the same collective (its size
        follows agreed values), blocking: once per size."""
        if self._window is not None and self._window[1][self.rank].size >= nbytes:
            return self._window[1]
        MPI, comm = _mpi(), self.mpi_comm
        if not self._one_host:  # (every rank raises it: the GpuComm stays usable)
            self._agreed = CommError(f"GpuComm.staging 'shared' needs every rank on one host; "
                                     f"these {comm.size} ranks span several (use 'pinned')")
            raise self._agreed
        nbytes = -(-nbytes // _WINDOW_ALIGN) * _WINDOW_ALIGN  # every segment page aligned
        held = 0 if self._window is None else self._window[1][0].size * comm.size
        room = _shm_room()
        fits = np.array([room is None or room + held >= nbytes * comm.size], np.int8)
        self._progress([comm.Iallreduce(_mpi().IN_PLACE, fits, MPI.MIN)], fits)
        if not fits[0]:  # (every rank raises it: the GpuComm stays usable)
            self._agreed = CommError(
                f"{self._label()}: GpuComm.staging 'shared' needs a shared window of "
                f"{nbytes * comm.size} bytes ({comm.size} ranks x {nbytes}) but /dev/shm has "
                f"{room} bytes free on some rank; make chunk_bytes smaller, /dev/shm larger, "
                f"or use staging 'pinned'")
            raise self._agreed
        if self._window is not None:
            self.context.sync()  # nothing of ours may still read the old window
            _free_window(self._window)
            self._window = None
        win = MPI.Win.Allocate_shared(nbytes, 1, comm=comm)
        views = [np.frombuffer(win.Shared_query(r)[0], np.uint8) for r in range(comm.size)]
        self._window = (win, views, self._pin(views))
        _WINDOWS.append(self._window)
        return views

    def _pin(self, views):
        """USE_HOST_PTR buffers of this rank's context over the window (one over all of it
        where the ranks' segments are contiguous, else one per segment): the driver then
        page-locks the memory, and copies between it and the device run at the pinned rate
        (NVIDIA's OpenCL: 55 GB/s each way against 12 and 7 pageable). The copies still go
        to and from the arrays; the buffers only hold the pinning. Unaligned memory, or a
        driver that refuses, is left pageable: `[]`."""
        addrs = [v.ctypes.data for v in views]
        if any(a % mmap.PAGESIZE for a in addrs):
            return []
        if all(addrs[r] == addrs[0] + r * views[0].size for r in range(len(views))):
            total = views[0].size * len(views)
            views = [np.frombuffer((ctypes.c_ubyte * total).from_address(addrs[0]), np.uint8)]
        flags = cl.mem_flags.READ_WRITE | cl.mem_flags.USE_HOST_PTR
        pins = []
        try:
            for v in views:
                pins.append(cl.Buffer(self.context.cl_context, flags, hostbuf=v))
        except cl.Error:
            for b in pins:
                b.release()
            return []
        return pins

    def _barrier(self):
        self._progress([self.mpi_comm.Ibarrier()])

    def _reduce_shared(self, flat, op, bounds, dest, out=None):
        """This rank's part of flat (bounds[rank]:bounds[rank + 1]) reduced over the ranks
        into `dest` by kernels, then (`out` given) every rank's reduced part into `out`,
        through the shared window in chunks of chunk_bytes per piece, one barrier a chunk.

        Each rank's window segment has two slots (chunk k uses slot k % 2), each holding its
        pieces of the others' parts, then its reduced chunk. Step t: wait for this rank's
        copies of step t - 1, a barrier; then, on the copy queue, the pieces of chunk t + 1
        out to the window and the reduced chunk t after its kernel; on the queue, the
        others' pieces of chunk t in and the kernel reducing them (in rank order: the same
        bits on every rank), then the others' reduced chunk t - 1 in. Copies out overlap
        copies in. A slot is written again two barriers after it was read, and the copies
        ordered here by hand are waited for before the call returns (the next collective
        starts with every rank's agreement, so no rank writes the window before all read)."""
        ctx, n, me, dt = self.context, self.count, self.rank, flat.dtype
        size = dt.itemsize
        rq, wq = ctx.copy_queue, ctx.queue
        if n == 1:
            _copy(dest, flat)
            return
        counts = [bounds[r + 1] - bounds[r] for r in range(n)]
        total = max(counts)
        per = min(max(1, self._chunk_bytes() // size), total)
        slot = n * per  # n - 1 pieces out, then the reduced chunk
        views = [v[:2 * slot * size].view(dt) for v in self._shared_window(2 * slot * size)]
        scratch = GpuArray._empty(ctx, (2, max(n - 1, 1), per), dt)
        starts = range(0, total, per)
        steps = len(starts)

        def cnt(r, a):
            return max(0, min(per, counts[r] - a))

        def place(holder, k, r):
            """Where rank `holder`'s window holds its piece of part `r` of chunk k (r ==
            holder: its reduced chunk)."""
            at = k % 2 * slot + (n - 1 if r == holder else r - (r > holder)) * per
            return views[holder][at:at + cnt(r, starts[k])]

        def copy(q, host, storage, offset, to_device, after):
            if to_device:
                return cl.enqueue_copy(q, storage.buffer, host, dst_offset=offset,
                                       wait_for=after or None, is_blocking=False)
            return cl.enqueue_copy(q, host, storage.buffer, src_offset=offset,
                                   wait_for=after or None, is_blocking=False)

        flat_after = waits(rq, (flat.storage,)) or []
        out_after = [] if out is None else waits(wq, (), (out.storage,)) or []

        def pieces_out(k):
            a = starts[k]
            return [copy(rq, place(me, k, p), flat.storage, flat.offset + (bounds[p] + a) * size,
                         False, flat_after) for p in range(n) if p != me and cnt(p, a)]

        pending = pieces_out(0)
        rq.flush()
        try:
            for t in range(steps + (out is not None)):
                _wait_all(pending)
                self._barrier()  # chunk t's pieces, chunk t - 1's results: in every window
                pending = pieces_out(t + 1) if t + 1 < steps else []
                if t < steps:
                    a = starts[t]
                    m = cnt(me, a)
                    if m:
                        others = [r for r in range(n) if r != me]
                        for j, r in enumerate(others):
                            pending.append(copy(
                                wq, place(r, t, me), scratch.storage,
                                scratch.offset + ((t % 2 * (n - 1) + j) * per) * size, True,
                                []))
                        vals = [flat[bounds[me] + a:bounds[me] + a + m] if r == me
                                else scratch[t % 2, others.index(r), :m] for r in range(n)]
                        acc = vals[0]
                        for v in vals[1:-1]:  # (dest may be this rank's part of flat)
                            acc = _combine(op, acc, v)
                        _combine(op, acc, vals[-1], dest[a:a + m])
                        if out is not None:
                            pending.append(copy(rq, place(me, t, me), dest.storage,
                                                dest.offset + a * size, False,
                                                [dest.storage.event]))
                if t and out is not None:
                    a = starts[t - 1]
                    pending += [copy(wq, place(r, t - 1, r), out.storage,
                                     out.offset + (bounds[r] + a) * size, True, out_after)
                                for r in range(n) if r != me and cnt(r, a)]
                rq.flush()
                wq.flush()
            _wait_all(pending)
            pending = []
        finally:  # (after an error: nothing of ours still reads or writes the window)
            for e in pending:
                with contextlib.suppress(cl.Error):
                    e.wait()

    def _gather_parts(self, out, bounds):
        """Every rank's part out[bounds[r]:bounds[r + 1]] into every rank's out, in chunks."""
        comm, n, me, MPI = self.mpi_comm, self.count, self.rank, _mpi()
        counts = [bounds[r + 1] - bounds[r] for r in range(n)]

        def cnt(r, a, c):
            return max(0, min(c, counts[r] - a))

        self._pipeline(max(counts), out.dtype, n,
                       lambda a, c, k: [(out, bounds[me] + a, me * c, cnt(me, a, c))],
                       lambda slot, a, c: comm.Iallgatherv(MPI.IN_PLACE, [slot[:n * c], (
                           [cnt(r, a, c) for r in range(n)], [r * c for r in range(n)])]),
                       lambda a, c, k: [(out, bounds[r] + a, r * c, cnt(r, a, c))
                                        for r in range(n) if r != me])


def _wait_all(events):
    for e in events:
        e.wait()


def _mpi_op(name):
    MPI = _mpi()
    return {"sum": MPI.SUM, "prod": MPI.PROD, "max": MPI.MAX, "min": MPI.MIN}[name]
