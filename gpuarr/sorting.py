"""Sorting and searching: sort, argsort, partition, argpartition, searchsorted, unique.

One engine, a stable LSD radix sort (kernels/sort.cl.mako) on the raw bits of the elements;
each pass makes order-preserving unsigned keys of them on the fly (numpy's order: NaNs last,
-0.0 == +0.0, complex lexicographic), so one program per element width serves every dtype
of that width and sorted values keep their exact bits. argsort carries each element's flat
index as payload. A sort along an axis moves the axis last (a copy when it is not already
the contiguous one) and, after the key passes, sorts stably by row number. Key passes whose
digit is the same for every element are skipped: one OR over the keys, read back first.
CPUs run a work-item per chunk with 8-bit digits (a serial stable scatter); GPUs a
work-group per tile of 2048 with 4-bit digits, ranked in local memory, and sort rows of up
to 2048 elements whole in local memory instead (a work-group per row, one launch).
partition and argpartition are the full sort; there is no separate top-k.
"""

import functools
import numbers
from typing import NamedTuple

import numpy as np

from .base import ArrayBase, _normalize_axis, empty, to_device
from .context import get_context
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    ShapeError,
    UnsupportedError,
)
from .kernels import build, render
from .launch import Launcher, enqueue
from .reduction import cumsum

__all__ = ["FUNCTIONS", "SortingMethods", "argpartition", "argsort", "partition",
           "searchsorted", "sort", "unique"]

_SERIAL_BITS, _TILE_BITS = 8, 4
_GROUPS_PER_CU = 2  # chunks per compute unit on CPUs (PoCL, 2^20..2^22: 1-2 best)
_ROWS_MAX = 2048
_MAX_N = 2**31 - 1  # uint index arithmetic in the kernels, with room for the last chunk

# kernel -> its arguments: u a uint scalar, B a buffer
_ARGS = {
    "sort_diffbits": "uuuBB",
    "sort_hist_serial": "uuuuuuuBBB",
    "sort_scatter_serial": "uuuuuuuBBBBB",
    "sort_scan": "uB",
    "sort_hist_tile": "uuuuuuBBB",
    "sort_scatter_tile": "uuuuuuBBBBB",
    "sort_rows": "uuuuuBBB",
    "sort_index": "uuuBB",
    "sort_search": "uuuuuBBBBB",
    "unique_flags": "uuuBB",
    "unique_scatter": "uuuuuBBBBBBBB",
    "unique_counts": "uuBB",
}

_MODES = {"b": 0, "u": 0, "i": 1, "f": 2, "c": 3}


def _variant(ctx):
    """'serial' (a work-item per chunk) on CPUs, 'tile' (a work-group per tile) elsewhere."""
    return "serial" if ctx.device.type == "CPU" else "tile"


class _Geometry(NamedTuple):
    tile_local: int  # work-items of the tile kernels
    tile_items: int  # elements per work-item there
    rows_local: int  # work-items of sort_rows
    rows_max: int  # the longest row sort_rows takes
    scan_local: int  # work-items of sort_scan on GPUs


def _geometry(ctx, width):
    """The work-group shapes for `width`-bit elements: the largest that fit the device's
    work-group size and local memory (256 x 8 elements per tile, rows of 2048 at most)."""
    return _device_geometry(ctx.device.cl_device, ctx.devname, width)


@functools.lru_cache(maxsize=64)
def _device_geometry(device, devname, width):
    # (cached per cl.Device, not per Context: the cache must not keep a context alive)
    local_mem, wg = device.local_mem_size, device.max_work_group_size
    local = 1 << (min(wg, 256).bit_length() - 1)
    if local < 16:
        raise UnsupportedError(f"device {devname} takes work-groups of {wg} work-items, "
                               f"too few for the sort kernels (16)")
    key_bytes = {8: 4, 16: 4, 32: 4, 64: 8, 128: 16}[width]
    for items in (8, 4, 2, 1):
        need = 4 * ((16 * local) * 33 // 32 + local + 16) + local * items * (width // 8 + 5)
        if need <= local_mem:
            break
    else:
        raise UnsupportedError(f"device {devname} has {local_mem} bytes of local memory, "
                               f"too few for the sort kernels")
    rows_max = _ROWS_MAX
    while rows_max > 64 and rows_max * (key_bytes + 2) > local_mem:
        rows_max //= 2
    return _Geometry(local, items, local, rows_max, 1 << (min(wg, 1024).bit_length() - 1))


def _program(ctx, width):
    """({kernel name: cl.Kernel}, _Geometry) of the sort program for `width`-bit elements."""
    geo = _geometry(ctx, width)
    key = ("sort", width, geo)
    entry = ctx.kernels.get(key)
    if entry is None:
        program = build(ctx, render("sort.cl.mako", width=width, **geo._asdict()))
        kernels = {}
        for name, args in _ARGS.items():
            kernels[name] = Launcher(getattr(program, name),
                                     [np.uint32 if c == "u" else None for c in args])
        entry = ctx.kernels[key] = kernels, geo
    return entry


def _raw_dtype(dtype):
    """The dtype whose bits the kernels read for `dtype`: an unsigned int of its width
    (complex128 stays itself: 128 bits)."""
    if dtype == np.complex128:
        return dtype
    return np.dtype(f"uint{8 * dtype.itemsize}")


def _as_gpu(a, context=None):
    return a if isinstance(a, ArrayBase) else to_device(np.asarray(a), get_context(context))


def _launch(ctx, kernel, size, local, args, reads=(), writes=()):
    """Enqueue `kernel` over `size` work-items; `reads`/`writes`: the arrays (or None) it
    reads and writes."""
    return enqueue(ctx, kernel, (size,), (local,), args,
                   [a.storage for a in reads if a is not None],
                   [a.storage for a in writes if a is not None])


def _temp(ctx, n, dtype):
    return ArrayBase._empty(ctx, (n,), np.dtype(dtype))


def _buf(a):
    return None if a is None else a.storage


def _dense(a):
    """`a` if it is C-contiguous from the start of its buffer (as the kernels read their
    arrays), else a copy that is."""
    return a if a.offset == 0 and a._is_c() else a.copy()


# ---------------------------------------------------------------- the radix sort engine

def _radix(flat, mode, keybits, row_len, want_index, want_values=True):
    """Stable sort of `flat` (1-d, C-contiguous raw bits, rows of `row_len`) by (row, key).

    Returns (sorted raw bits, or `flat` itself when no pass was needed, or None when not
    wanted and not computed; int64 positions of the sorted elements within their rows, or
    None).
    """
    flat = _dense(flat)
    ctx = flat.context
    n = flat.size
    if n > _MAX_N:
        raise UnsupportedError(f"sorting {n} elements at once is not supported (at most "
                               f"{_MAX_N})")
    if n == 0:
        return flat, (_temp(ctx, 0, np.int64) if want_index else None)
    k, geo = _program(ctx, 8 * flat.itemsize)
    tile = _variant(ctx) == "tile"
    bits = _TILE_BITS if tile else _SERIAL_BITS
    rows = n // row_len if row_len else 0
    if 1 < row_len <= min(_rows_limit(ctx, n // row_len), geo.rows_max):
        return _sort_rows(ctx, k, geo, flat, mode, row_len, want_index, want_values)

    passes = []
    if n > 1 and row_len > 1:
        diff = _varying_bits(ctx, k, geo, flat, mode, tile)
        passes = [(0, s) for s in range(0, keybits, bits) if (diff >> s) & ((1 << bits) - 1)]
        passes += [(1, s) for s in range(0, (rows - 1).bit_length(), bits)]
    payload = want_index or rows > 1
    pay_mode = 2 if payload else 0
    src_k, src_p = flat, None
    spare_k, spare_p = [], []
    if tile:
        local = geo.tile_local
        groups = -(-n // (local * geo.tile_items))
        chunk_args = ()
        scan_local = geo.scan_local
        hist, scatter = k["sort_hist_tile"], k["sort_scatter_tile"]
    else:
        local = 1
        groups = max(1, min(-(-n // 16384), _GROUPS_PER_CU * ctx.device.compute_units))
        chunk = -(-n // groups)
        groups = -(-n // chunk)
        chunk_args = (chunk,)
        scan_local = 1
        hist, scatter = k["sort_hist_serial"], k["sort_scatter_serial"]
    counts = _temp(ctx, (1 << bits) * groups, np.uint32) if passes else None
    for by_row, shift in passes:
        dst_k = spare_k.pop() if spare_k else _temp(ctx, n, flat.dtype)
        dst_p = (spare_p.pop() if spare_p else _temp(ctx, n, np.uint32)) if payload else None
        common = (mode, shift, by_row, row_len, pay_mode)
        _launch(ctx, hist, groups * local, local,
                [n, *chunk_args, *common, src_k.storage, _buf(src_p), counts.storage],
                (src_k, src_p), (counts,))
        _launch(ctx, k["sort_scan"], scan_local, scan_local, [counts.size, counts.storage],
                writes=(counts,))
        _launch(ctx, scatter, groups * local, local,
                [n, *chunk_args, *common, src_k.storage, dst_k.storage, _buf(src_p),
                 _buf(dst_p), counts.storage], (src_k, src_p, counts), (dst_k, dst_p))
        if src_k is not flat:
            spare_k.append(src_k)
        if src_p is not None:
            spare_p.append(src_p)
        src_k, src_p, pay_mode = dst_k, dst_p, (1 if payload else 0)
    index = None
    if want_index:
        index = _temp(ctx, n, np.int64)
        _launch(ctx, k["sort_index"], _round_up(n, ctx.local_size), ctx.local_size,
                [n, row_len, pay_mode, _buf(src_p), index.storage], (src_p,), (index,))
    return src_k, index


def _rows_limit(ctx, rows):
    """The longest rows sort_rows takes on `ctx` (longer ones go through the radix passes).

    PoCL (2 cores): sort_rows is 4-5x slower than the radix passes for 256 rows or more of
    8..2048 elements, and only wins for a single row of up to ~1024 (0.05 vs 0.2 ms). GPUs:
    one launch reading the data once against ~26 launches and a read-back (not measured).
    """
    if _variant(ctx) == "serial":
        return 1024 if rows == 1 else 0
    return _ROWS_MAX


def _sort_rows(ctx, k, geo, flat, mode, row_len, want_index, want_values):
    """Rows of at most geo.rows_max sorted whole in local memory, a work-group each."""
    n = flat.size
    out = _temp(ctx, n, flat.dtype) if want_values else None
    index = _temp(ctx, n, np.int64) if want_index else None
    _launch(ctx, k["sort_rows"], n // row_len * geo.rows_local, geo.rows_local,
            [row_len, 1 << (row_len - 1).bit_length(), mode, int(want_values), int(want_index),
             flat.storage, _buf(out), _buf(index)], (flat,), (out, index))
    return out, index


def _round_up(n, m):
    return -(-n // m) * m


def _varying_bits(ctx, k, geo, flat, mode, tile):
    """The key bits that differ between elements of `flat` (one OR pass, read back)."""
    n = flat.size
    words = max(1, flat.itemsize // 4)
    out = _temp(ctx, words, np.uint32).fill(0)
    if tile:
        local = geo.tile_local
        groups = max(1, min(-(-n // (local * 16)), 8 * ctx.device.compute_units))
    else:
        local, groups = 1, max(1, min(-(-n // 16384), _GROUPS_PER_CU * ctx.device.compute_units))
    chunk = -(-n // groups)
    groups = -(-n // chunk)
    _launch(ctx, k["sort_diffbits"], groups * local, local,
            [n, chunk, mode, flat.storage, out.storage], (flat,), (out,))
    return sum(int(w) << (32 * i) for i, w in enumerate(out.get()))


def _keybits(dtype):
    return 8 * dtype.itemsize


def _sorted(a, axis, values=True, index=False):
    """(sorted values, int64 argsort) of `a` along `axis` (None: flattened); either None
    when not asked for."""
    raw_dt = _raw_dtype(a.dtype)
    r = a if raw_dt == a.dtype else a.view(raw_dt)
    if axis is None:
        r = r.reshape(-1)
        ax = 0
    else:
        ax = _normalize_axis(axis, a.ndim)
    nd = r.ndim
    perm = [d for d in range(nd) if d != ax] + [ax]
    moved = ax != nd - 1
    if moved:
        r = r.transpose(perm)
    owned = not r._is_c()
    if owned:
        r = r.copy()
    shape = r.shape
    flat = r.reshape(-1)
    row_len = shape[-1]
    sorted_raw, idx = _radix(flat, _MODES[a.dtype.kind], _keybits(a.dtype), row_len, index,
                             values)
    inverse = [perm.index(d) for d in range(nd)]
    out_v = out_i = None
    if values:
        if sorted_raw is flat and not owned:
            sorted_raw = flat.copy()
        out_v = sorted_raw.reshape(shape)
        if moved:
            out_v = out_v.transpose(inverse).copy()
        out_v = out_v.view(a.dtype)
    if index:
        out_i = idx.reshape(shape)
        if moved:
            out_i = out_i.transpose(inverse).copy()
    return out_v, out_i


# ---------------------------------------------------------------- numpy's functions

def _check_kind(kind, stable):
    if kind is not None and stable is not None:
        raise ArgumentError("`kind` and `stable` parameters can't be provided at the same time; "
                            "use only one of them")
    if kind is not None and not (isinstance(kind, str) and kind and kind[0].lower() in "qhms"):
        raise ArgumentError(f"sort kind must be one of 'quick', 'heap', or 'stable' "
                            f"(got {kind!r})")


def _check_order(order):
    if order is not None:
        raise ArgumentError(f"Cannot specify order ({order!r}) when the array has no fields")


def sort(a, axis=-1, kind=None, order=None, *, stable=None):
    """A sorted copy of `a` along `axis` (None: flattened). Always stable (every `kind`);
    numpy's order: NaNs last, -0.0 == +0.0, complex lexicographic."""
    a = _as_gpu(a)
    _check_kind(kind, stable)
    _check_order(order)
    return _sorted(a, axis)[0]


def argsort(a, axis=-1, kind=None, order=None, *, stable=None):
    """int64 indices that sort `a` along `axis` (None: flattened); always stable, so equal
    elements keep their order, as np.argsort(kind='stable')."""
    a = _as_gpu(a)
    _check_kind(kind, stable)
    _check_order(order)
    return _sorted(a, axis, values=False, index=True)[1]


def _check_kth(a, kth, axis, kind, order):
    if kind != "introselect":
        raise ArgumentError(f"select kind must be 'introselect' (got {kind!r})")
    _check_order(order)
    n = a.size if axis is None else a.shape[_normalize_axis(axis, a.ndim)]
    kth = np.asarray(kth)
    if kth.dtype.kind not in "iu":
        raise ArgumentTypeError(f"Partition index must be integer, not {kth.dtype} "
                                f"({kth.tolist()!r})")
    for k in kth.ravel().tolist():
        if not -n <= k < n:
            raise ArgumentError(f"kth(={k}) out of bounds ({n})")


def partition(a, kth, axis=-1, kind="introselect", order=None):
    """A copy of `a` with the element at each `kth` where a sort puts it, smaller ones before
    and larger ones after (here: the whole axis sorted, stably)."""
    a = _as_gpu(a)
    _check_kth(a, kth, axis, kind, order)
    return _sorted(a, axis)[0]


def argpartition(a, kth, axis=-1, kind="introselect", order=None):
    """int64 indices that partition `a` around `kth` (here: the stable argsort)."""
    a = _as_gpu(a)
    _check_kth(a, kth, axis, kind, order)
    return _sorted(a, axis, values=False, index=True)[1]


def _search_dtype(a_dtype, v):
    """numpy's common dtype of searchsorted(a, v); Python numbers are weak, out-of-range
    Python ints widen it as numpy does."""
    if isinstance(v, ArrayBase):
        return np.result_type(a_dtype, v.dtype)
    if isinstance(v, numbers.Number) and not isinstance(v, np.generic):
        if a_dtype.kind in "iu" and isinstance(v, int) and not isinstance(v, bool):
            info = np.iinfo(a_dtype)
            if not info.min <= v <= info.max:
                return np.result_type(a_dtype, np.min_scalar_type(v))
        return np.result_type(a_dtype, v)
    return np.result_type(a_dtype, np.asarray(v).dtype)


def searchsorted(a, v, side="left", sorter=None):
    """Indices where the elements of `v` would go in the sorted 1-d `a` (or `a[sorter]`):
    the first position whose element is >= v ('left') or > v ('right'). int64, v's shape.

    Examples
    --------
    >>> a = ga.asarray(np.array([1.0, 2.0, 2.0, 5.0]))
    >>> ga.searchsorted(a, ga.asarray([2.0, 6.0])).get()
    array([1, 4])
    >>> ga.searchsorted(a, 2.0, side="right").get()
    array(3)
    """
    a = _as_gpu(a)
    ctx = a.context
    if a.ndim != 1:
        raise ShapeError(f"object too deep for desired array: searchsorted needs a 1-d array, "
                         f"got shape {a.shape}")
    if side not in ("left", "right"):
        raise ArgumentError(f"search side must be 'left' or 'right' (got {side!r})")
    dt = _search_dtype(a.dtype, v)
    if isinstance(v, ArrayBase):
        v = v.transfer(ctx)
        if v.dtype != dt:
            v = v.astype(dt)
    else:
        v = to_device(np.asarray(v, dtype=dt), ctx)
    if a.dtype != dt:
        a = a.astype(dt)
    n, m = a.size, v.size
    if n > _MAX_N or m > _MAX_N:
        raise UnsupportedError(f"searchsorted over {n} elements with {m} queries is not "
                               f"supported (at most {_MAX_N} each)")
    if sorter is not None:
        sorter = _as_gpu(sorter, ctx).transfer(ctx)
        if sorter.dtype.kind not in "iu":
            raise ArgumentTypeError(f"sorter must only contain integers, not {sorter.dtype}")
        if sorter.ndim != 1 or sorter.size != n:
            raise ShapeError(f"sorter.size must equal a.size (sorter has shape {sorter.shape}, "
                             f"a has {n} elements)")
        sorter = _dense(sorter.astype(np.int64, copy=False))
    out = empty(v.shape, np.int64, context=ctx)
    items = max(m, n if sorter is not None else 0)  # (a work-item per sorter value checks it)
    if items == 0:
        return out
    raw_dt = _raw_dtype(dt)
    flat_a = _dense(a.view(raw_dt))
    flat_v = _dense(v.view(raw_dt)).reshape(-1)
    err = _temp(ctx, 1, np.uint32).fill(0)
    k = _program(ctx, 8 * dt.itemsize)[0]
    local = ctx.local_size
    _launch(ctx, k["sort_search"], _round_up(items, local), local,
            [m, n, _MODES[dt.kind], int(side == "right"), int(sorter is not None),
             _buf(flat_a), _buf(sorter), _buf(flat_v), _buf(out), err.storage],
            (flat_a, sorter, flat_v), (out, err))
    if sorter is not None and err.get()[0]:
        raise ArgumentError(f"Sorter index out of range (sorter values must lie in [0, {n}))")
    return out


def unique(ar, return_index=False, return_inverse=False, return_counts=False, axis=None, *,
           equal_nan=True, sorted=True):
    """The sorted unique elements of the flattened `ar`, and optionally the index of each
    one's first occurrence, the inverse (in `ar`'s shape) and the counts, as numpy 2
    (equal_nan=True: all NaNs are one value; sorted=False is taken, the result is sorted
    anyway). Reads the number of unique values back.

    Returns
    -------
    GpuArray or tuple of GpuArray
        The values, then the first-occurrence indices, the inverse and the counts that
        were asked for (int64), in that order.

    Raises
    ------
    UnsupportedError
        `axis` other than None.

    Examples
    --------
    >>> values, counts = ga.unique(ga.asarray([3, 1, 3, 2, 3]), return_counts=True)
    >>> values.get(), counts.get()
    (array([1, 2, 3]), array([1, 1, 3]))
    """
    if axis is not None:
        raise UnsupportedError(f"unique(axis={axis!r}) is not supported: gpuarr's unique works "
                               f"on the flattened array only (axis=None)")
    a = _as_gpu(ar)
    ctx = a.context
    n = a.size
    need_perm = return_index or return_inverse
    values, perm = _sorted(a, None, values=True, index=need_perm)
    index = inverse = counts = None
    if n == 0:
        index, counts = _temp(ctx, 0, np.int64), _temp(ctx, 0, np.int64)
        inverse = empty(a.shape, np.int64, context=ctx)
    else:
        raw_dt = _raw_dtype(a.dtype)
        s = values.view(raw_dt)
        k = _program(ctx, 8 * a.itemsize)[0]
        local = ctx.local_size
        size = _round_up(n, local)
        flags = _temp(ctx, n, np.int64)
        _launch(ctx, k["unique_flags"], size, local,
                [n, _MODES[a.dtype.kind], int(bool(equal_nan)), s.storage, flags.storage],
                (s,), (flags,))
        pos = cumsum(flags)
        u = int(pos[n - 1:].get()[0])
        out = _temp(ctx, u, raw_dt)
        index = _temp(ctx, u, np.int64) if return_index else None
        inverse = empty(a.shape, np.int64, context=ctx) if return_inverse else None
        starts = _temp(ctx, u, np.int64) if return_counts else None
        _launch(ctx, k["unique_scatter"], size, local,
                [n, int(perm is not None), int(return_index), int(return_inverse),
                 int(return_counts), flags.storage, pos.storage, s.storage, _buf(perm),
                 out.storage, _buf(index), _buf(inverse), _buf(starts)],
                (flags, pos, s, perm), (out, index, inverse, starts))
        if return_counts:
            counts = _temp(ctx, u, np.int64)
            _launch(ctx, k["unique_counts"], _round_up(u, local), local,
                    [u, n, starts.storage, counts.storage], (starts,), (counts,))
        values = out.view(a.dtype)
    result = (values,)
    if return_index:
        result += (index,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result if len(result) > 1 else values


FUNCTIONS = {f.__name__: f for f in (sort, argsort, partition, argpartition, searchsorted,
                                     unique)}


# ---------------------------------------------------------------- GpuArray methods

class SortingMethods:
    """x.sort() and x.partition() in place, x.argsort(), x.argpartition(),
    x.searchsorted(). A mixin of GpuArray (gpuarr/array.py)."""

    def sort(self, axis=-1, kind=None, order=None, *, stable=None):
        """Sort in place along `axis` (stable; numpy's order)."""
        if axis is None:
            raise ArgumentTypeError("an in-place sort needs an integer axis, not None")
        self._check_writeable()
        self._assign(sort(self, axis, kind, order, stable=stable))

    def partition(self, kth, axis=-1, kind="introselect", order=None):
        """Partition in place around `kth` along `axis` (here: a full stable sort)."""
        self._check_writeable()
        self._assign(partition(self, kth, axis, kind, order))

    def argsort(self, axis=-1, kind=None, order=None, *, stable=None):
        return argsort(self, axis, kind, order, stable=stable)

    def argpartition(self, kth, axis=-1, kind="introselect", order=None):
        return argpartition(self, kth, axis, kind, order)

    def searchsorted(self, v, side="left", sorter=None):
        return searchsorted(self, v, side, sorter)

    for _fn in (argsort, argpartition, searchsorted):
        _fn.__doc__ = FUNCTIONS[_fn.__name__].__doc__
    del _fn
