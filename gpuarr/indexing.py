"""Advanced indexing with numpy's rules: integer and boolean arrays in `x[key]` and
`x[key] = v`, take, take_along_axis, put, nonzero, argwhere, flatnonzero, compress
(kernels/indexing.cl.mako).

A key becomes a basic view of the array (its slices, integers and None applied), index
arrays on some axes of that view, and a result laid out as P + B + Q: B is the broadcast
shape of the index arrays, first when the advanced indices are separated by a slice, None or
ellipsis, else in their place. One gather/scatter kernel per element size walks any such
layout from a small parameter buffer. Index arrays from the host are checked on the host
before they are uploaded (no wait for the device); device ones on the device: the kernel
records an offending index in a flag buffer that the host reads back, and never touches
data through it. A boolean mask of the array's shape is compacted on the device (per-work-group
counts, one scan over the groups, a pass that writes); only the count comes to the host.
Other boolean arrays index through their nonzero() coordinates, as in numpy. With repeated
indices, `x[idx] = v` keeps one of the writes; which one is unspecified, as in numpy.
"""

import math
import numbers
import operator
import threading

import numpy as np

from . import elemwise
from .base import (
    ArrayBase,
    _basic_index,
    _broadcast_assign_shape,
    _host_scalar,
    _is_scalar,
    _normalize_axis,
    broadcast_to,
    empty,
    to_device,
)
from .context import get_context
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    IndexOutOfRange,
    ShapeError,
)
from .kernels import build, render
from .launch import Launcher, copy_buffer, enqueue, read_host, write_host

__all__ = ["FUNCTIONS", "IndexingMethods", "argwhere", "compact", "compress", "flatnonzero",
           "getitem", "nonzero", "put", "setitem", "take", "take_along_axis"]

_INT32_MAX = 2**31 - 1
_MODES = {"raise": 0, "wrap": 1, "clip": 2}
# index dtype -> how the kernel loads it (ga_index)
_CODES = {"int8": 1, "uint8": 2, "bool": 2, "int16": 3, "uint16": 4, "int32": 5, "uint32": 6,
          "int64": 7, "uint64": 7}
# the bits of an element that make it nonzero (floats: all but the sign, so -0.0 is False)
_MAGNITUDE = {"float16": 0x7FFF, "float32": 0x7FFFFFFF, "float64": 2**63 - 1,
              "complex64": 0x7FFFFFFF7FFFFFFF, "complex128": 2**63 - 1}
# mask positions a work-item owns per tile, by element size (16-byte tiles stay in 48 KiB)
_ITEMS = {1: 16, 2: 16, 4: 16, 8: 16, 16: 8}
_VALID = ("only integers, slices (`:`), ellipsis (`...`), numpy.newaxis (`None`) and integer "
          "or boolean arrays are valid indices")


# ---------------------------------------------------------------- kernels and launches

class _Program:
    """The indexing kernels of a context for one index type (one build serves all)."""

    def __init__(self, ctx, index_t, local, sequential):
        self.local, self.sequential = local, sequential
        self.take_local = ctx.local_size if ctx.device.is_gpu else 64
        self.itype = np.dtype(np.int32 if index_t == "int" else np.int64)
        program = build(ctx, render("indexing.cl.mako", index_t=index_t, local_size=local,
                                    sizes=tuple(_ITEMS.items()), count_items=16,
                                    sequential=sequential))
        it, i32, u64 = self.itype.type, np.int32, np.uint64
        self.take, self.write = {}, {}  # write: ga_mask_seq or ga_mask_write by itemsize
        write = "ga_mask_seq" if sequential else "ga_mask_write"
        for s in _ITEMS:
            self.take[s] = Launcher(getattr(program, f"ga_take_{s}"),
                                    [it, it, i32, i32, None, it, None, it, None, None, None])
            self.write[s] = Launcher(getattr(program, f"{write}_{s}"),
                                     [it, it, i32, None, it, i32, u64, None, None, it, None,
                                      None, it, it])
        self.count = Launcher(program.ga_mask_count, [it, it, None, it, i32, u64, None])
        self.scan = Launcher(program.ga_mask_scan, [it, None])


def mask_local_size(ctx):
    """The work-group size of the mask kernels: 256 on GPUs, 16 on CPUs (PoCL runs a
    work-group's items as loops between barriers), less where local memory is short."""
    local = 256 if ctx.device.is_gpu else 16
    while local > 1 and (local > ctx.max_work_group_size or
                         local * (16 * 8 * 33 // 32 + 9) > ctx.device.cl_device.local_mem_size):
        local //= 2
    return local


def mask_sequential(ctx):
    """Whether the mask pass that writes runs a work-item per chunk, in order (CPUs), or a
    work-group per chunk, a tile at a time (GPUs: coalesced)."""
    return not ctx.device.is_gpu


def take_run(ctx):
    """Elements of the last dim a gather work-item walks: 1 on GPUs (neighbouring
    work-items, neighbouring elements), 256 on CPUs (the index arithmetic done once)."""
    return 1 if ctx.device.is_gpu else 256


def _program(ctx, wide):
    index_t = "long" if wide else "int"
    local, sequential = mask_local_size(ctx), mask_sequential(ctx)
    key = ("indexing", index_t, local, sequential)
    prog = ctx.kernels.get(key)
    if prog is None:
        prog = ctx.kernels[key] = _Program(ctx, index_t, local, sequential)
    return prog


def _elements(a):
    """Elements `a`'s storage holds in its own dtype (bounds every offset into it)."""
    return 0 if a is None else a.storage.nbytes // a.itemsize


def _enqueue(ctx, kernel, size, local, args, reads=(), writes=()):
    """Launch `kernel` over `size` work-items (rounded up to `local`) after the last writes
    of the arrays it touches; record it as the last write of `writes`."""
    return enqueue(ctx, kernel, (-(-size // local) * local,), (local,), args,
                   [a.storage for a in reads], [a.storage for a in writes])


def _params(ctx, values, itype):
    """`values` in a device buffer of `itype`, cached per context (layouts repeat)."""
    host = np.asarray(values, itype)
    # Kept on the context: a module-level WeakKeyDictionary would keep it alive through the
    # arrays it holds, so a released context would never be freed.
    cache = ctx.state.setdefault(("indexing", "params"), {})
    key = (host.dtype.char, host.tobytes())
    buf = cache.get(key)
    if buf is None:
        if len(cache) >= 1024:
            cache.clear()
        buf = cache[key] = to_device(host, ctx)
    return buf


_flag_lock = threading.Lock()


def _flag(ctx):
    """The context's error flag: [claimed, index, axis, size], zero while nothing failed."""
    flag = ctx.state.get(("indexing", "flag"))
    if flag is None:
        flag = ctx.state["indexing", "flag"] = empty((4,), np.int64, context=ctx).fill(0)
    return flag


def _raise_if_flagged(ctx, flag):
    host = np.empty(4, np.int64)
    read_host(ctx, host, flag.storage, 0)
    if host[0]:
        flag.fill(0)
        raise IndexOutOfRange(f"index {host[1]} is out of bounds for axis {host[2]} with "
                              f"size {host[3]}")


# ---------------------------------------------------------------- index arrays

class _Index:
    """An index array of a gather: `array` (host int64 or a GpuArray of integers), the
    axis it indexes (`size`, data `stride` in elements, `axis` for messages) and its
    element strides over the broadcast index shape (`bstrides`)."""

    __slots__ = ("array", "axis", "bstrides", "size", "stride")

    def __init__(self, array, size, stride, axis, bshape):
        self.array, self.size, self.stride, self.axis = array, size, stride, axis
        if isinstance(array, ArrayBase):
            strides = [s // array.itemsize for s in array.strides]
        else:
            strides = [s // 8 for s in array.strides]
        lead = len(bshape) - array.ndim
        self.bstrides = [0] * lead + [0 if n == 1 else s for n, s in zip(array.shape, strides)]


def _host_index(obj):
    """A list or numpy array as a C-contiguous host array (int64, or bool for masks)."""
    arr = np.asarray(obj)
    if arr.dtype.kind not in "iub":
        if arr.size == 0 and not isinstance(obj, np.ndarray):
            return np.zeros(arr.shape, np.int64)  # numpy: an empty list is an integer index
        raise IndexOutOfRange("arrays used as indices must be of integer (or boolean) type")
    if arr.dtype.kind == "b":
        return np.asarray(arr, order="C")
    return np.asarray(arr, np.int64, order="C")


def _pack(ctx, arrays):
    """One device buffer holding every index array: (buffer, element offsets, the arrays
    and buffers the kernel reads). Device arrays sharing one storage are used in place;
    otherwise host arrays are uploaded once and device ones copied in, layouts kept."""
    dev = [a for a in arrays if isinstance(a, ArrayBase)]
    if not arrays:
        return None, [], []
    if len(dev) == len(arrays) and all(a.storage is dev[0].storage for a in dev):
        return dev[0].storage, [a.offset // a.itemsize for a in dev], [dev[0]]
    places, pos = [], 0
    for a in arrays:
        if isinstance(a, ArrayBase) and a.size:
            lo, hi = a._extent()
        else:
            lo, hi = 0, a.nbytes
        places.append((pos, lo))
        pos += -(-(hi - lo) // 16) * 16
    host = np.zeros(max(pos, 16), np.uint8)
    for a, (at, _) in zip(arrays, places):
        if not isinstance(a, ArrayBase):
            host[at:at + a.nbytes] = a.reshape(-1).view(np.uint8)
    # (not waited for: pyopencl keeps `host` until the copy is done; a blocking write would
    # wait for everything queued before it)
    pack = empty(host.shape, np.uint8, context=ctx)
    write_host(ctx, pack.storage, host, 0, blocking=False)
    offsets = []
    for a, (at, lo) in zip(arrays, places):
        if isinstance(a, ArrayBase):
            if a.size:
                copy_buffer(ctx, pack.storage, a.storage, a._extent()[1] - lo, at, lo)
            offsets.append((at + a.offset - lo) // a.itemsize)
        else:
            offsets.append(at // 8)
    return pack.storage, offsets, [pack]


def _code(a):
    return _CODES[a.dtype.name] if isinstance(a, ArrayBase) else 7


# ---------------------------------------------------------------- gather / scatter

def _take(data, shape, data_strides, b0, nb, indices, dense, direction, mode):
    """The one gather/scatter launch: result dims `shape` (data strides in elements, B dims
    [b0, b0 + nb) walked by `indices`); direction 0 gathers into `dense` (an array of
    `shape`), 1 scatters it, 2 only checks. Raise mode (0) reads the flag back, except for
    scatters, which callers check first."""
    ctx = data.context
    if mode == 0 and indices and not any(isinstance(ix.array, ArrayBase) for ix in indices):
        _check_on_host(indices)  # (no flag to read back)
        if direction == 2:
            return
        mode = _MODES["clip"]
    n = math.prod(shape)
    if n == 0:
        bsize = math.prod(shape[b0:b0 + nb])
        if mode == 0 and direction != 2 and bsize and indices:
            _take(data, shape[b0:b0 + nb], [0] * nb, 0, nb, indices, None, 2, 0)
        return
    if direction == 0 and _take_rows(data, shape, data_strides, b0, nb, indices, dense, mode):
        return
    ndim = len(shape)
    dense_strides = elemwise._element_strides(dense, ndim) if dense is not None else [0] * ndim
    dims = []
    bstrides = []
    for region, (lo, hi) in enumerate(((0, b0), (b0, b0 + nb), (b0 + nb, ndim))):
        lists = [list(data_strides[lo:hi]), list(dense_strides[lo:hi])]
        if region == 1:
            lists += [list(ix.bstrides) for ix in indices]
        sizes, strides = elemwise.collapse(list(shape[lo:hi]), lists)
        if region == 1:
            b0_c, nb_c = len(dims) // 3, len(sizes)
            bstrides = strides[2:]
        dims += [v for d in range(len(sizes)) for v in (sizes[d], strides[0][d], strides[1][d])]
    buffer, offsets, keep = _pack(ctx, [ix.array for ix in indices])
    prm = [len(dims) // 3, len(indices), b0_c, nb_c, *dims]
    for ix, off, bs in zip(indices, offsets, bstrides):
        prm += [_code(ix.array), off, ix.size, ix.stride, ix.axis, *bs]
    wide = max(n, _elements(data), _elements(dense), *(abs(v) for v in prm)) > _INT32_MAX
    if buffer is not None:
        wide = wide or keep[0].storage.nbytes > _INT32_MAX
    prog = _program(ctx, wide)
    params = _params(ctx, prm, prog.itype)
    flag = _flag(ctx)
    items, run = n, take_run(ctx)
    if run > 1 and dims and (nb_c == 0 or b0_c + nb_c < len(dims) // 3 or len(indices) == 1):
        last = dims[-3]
        run = min(last, run)
        items = n // last * -(-last // run)
    else:
        run = 1
    args = (items, run, direction, mode, data.storage, data.offset // data.itemsize,
            None if dense is None else dense.storage,
            0 if dense is None else dense.offset // dense.itemsize, buffer,
            params.storage, flag.storage)
    reads = [*keep, params] + ([dense] if dense is not None and direction == 1 else [])
    writes = [flag] + ([data] if direction == 1 else [dense] if direction == 0 else [])
    kernel = prog.take[data.itemsize]
    if mode == 0 and direction != 1:
        with _flag_lock:
            _enqueue(ctx, kernel, items, prog.take_local, args, reads, writes)
            _raise_if_flagged(ctx, flag)
    else:
        _enqueue(ctx, kernel, items, prog.take_local, args, reads, writes)


_ROW_VECTORS = (16, 8, 4, 2, 1)  # bytes a work-item of gather_rows moves at once


def _rows_program(ctx):
    """{vector bytes: the gather_rows launcher} of a context (one build serves all)."""
    key = ("gather_rows",)
    kernels = ctx.kernels.get(key)
    if kernels is None:
        program = build(ctx, render("gather_rows.cl.mako"))
        i64, u64, i32 = np.int64, np.uint64, np.int32
        kernels = ctx.kernels[key] = {
            v: Launcher(getattr(program, f"gather_rows_{v}"),
                        [u64, np.uint32, i64, i64, i32, i32, None, u64, i64, None, i64, i64,
                         None, u64, None]) for v in _ROW_VECTORS}
    return kernels


def _check_on_host(indices):
    """Raise mode for host index arrays: IndexOutOfRange for the first index out of range
    (numpy's order), negative ones made positive in place (clip mode then takes them)."""
    for ix in indices:
        arr = ix.array
        if not arr.size:
            continue
        lo, hi = arr.min(), arr.max()
        if lo < -ix.size or hi >= ix.size:
            bad = arr.flat[np.flatnonzero((arr < -ix.size) | (arr >= ix.size))[0]]
            raise IndexOutOfRange(f"index {bad} is out of bounds for axis {ix.axis} with "
                                  f"size {ix.size}")
        if lo < 0:
            ix.array = np.where(arr < 0, arr + ix.size, arr)


def _take_rows(data, shape, data_strides, b0, nb, indices, dense, mode):
    """dense[r] = data's row indices[0][r] when the gather is one of whole rows (a 1-d
    index on the first axis; the rows contiguous in data and dense: x[idx], take(axis=0)),
    a work-group per run of rows moving 16-byte vectors where the row and offsets allow
    (kernels/gather_rows.cl.mako); False, with nothing done, for any other gather."""
    if b0 or nb != 1 or len(indices) != 1 or len(shape) < 2:
        return False
    ndim = len(shape)
    dense_strides = elemwise._element_strides(dense, ndim)
    inner, (src, dst) = elemwise.collapse(list(shape[1:]),
                                          [list(data_strides[1:]), dense_strides[1:]])
    row = inner[0] if inner else 1
    if len(inner) > 1 or (inner and (src[0] != 1 or dst[0] != 1)) or \
            (shape[0] > 1 and dense_strides[0] != row):
        return False
    ctx = data.context
    ix = indices[0]
    s = data.itemsize
    sizes = (row * s, data.offset, dense.offset, ix.stride * s)
    vb = next(v for v in _ROW_VECTORS if all(b % v == 0 for b in sizes))
    buffer, offsets, keep = _pack(ctx, [ix.array])
    flag = _flag(ctx)
    vecs = row * s // vb
    if ctx.device.is_gpu:
        across = min(1 << (vecs - 1).bit_length(), ctx.local_size)
        local = (across, max(1, ctx.local_size // across))
    else:  # a work-item per row (its loop over the vectors)
        local = (1, min(64, ctx.local_size))
    rows = shape[0]
    args = (rows, vecs, ix.size, ix.axis, _code(ix.array), mode, data.storage,
            data.offset // vb, ix.stride * s // vb, buffer, offsets[0], ix.bstrides[0],
            dense.storage, dense.offset // vb, flag.storage)
    launch = (ctx, _rows_program(ctx)[vb], (local[0], -(-rows // local[1]) * local[1]), local,
              args, [data.storage, *(k.storage for k in keep)], [dense.storage, flag.storage])
    if mode == 0:
        with _flag_lock:
            enqueue(*launch)
            _raise_if_flagged(ctx, flag)
    else:
        enqueue(*launch)
    return True


def _copy(src, dst=None):
    """dst[...] = src for one dtype and shape, any layouts (the take kernel, no index)."""
    if dst is None:
        dst = ArrayBase._empty(src.context, src.shape, src.dtype)
    strides = elemwise._element_strides(src, src.ndim)
    _take(src, src.shape, strides, 0, 0, [], dst, 0, 0)
    return dst


def _contiguous(a):
    return a if a._is_c() else _copy(a)


def _as_array(a, ctx=None):
    if isinstance(a, ArrayBase):
        return a if ctx is None or a.context is ctx else a.transfer(ctx)
    return to_device(np.asarray(a), get_context(ctx))


def _check_mode(mode):
    if mode not in _MODES:
        raise ArgumentError(f"clipmode must be one of 'clip', 'raise', or 'wrap' (got {mode!r})")
    return _MODES[mode]


# ---------------------------------------------------------------- boolean masks

def _mask_args(mask):
    """(buffer, byte offset, element size, magnitude bits) of a C-contiguous mask."""
    mag = _MAGNITUDE.get(mask.dtype.name, 2**64 - 1)
    return (mask.storage, mask.offset, mask.itemsize, mag)


def _mask_counts(prog, mask, n, s):
    """Count the set flags of `mask` per work-group: (offsets: exclusive per group, the
    total after them), groups, positions per group, for the write kernel of size s."""
    ctx = mask.context
    tile = prog.local * _ITEMS[s]
    tiles = -(-n // tile)
    target = ctx.device.compute_units * (16 if ctx.device.is_gpu else 4)
    per = -(-tiles // min(tiles, target))
    groups = -(-tiles // per)
    counts = empty((groups + 1,), prog.itype, context=ctx)
    local = prog.local
    _enqueue(ctx, prog.count, groups * local, local,
             (n, per * tile, *_mask_args(mask), counts.storage), [mask], [counts])
    _enqueue(ctx, prog.scan, local, local, (groups, counts.storage), [], [counts])
    return counts, groups, per * tile


def _total(counts, groups):
    host = np.empty(1, counts.dtype)
    read_host(counts.context, host, counts.storage, groups * counts.itemsize)
    return int(host[0])


def _data_prm(shape, strides):
    """ga_addr's parameters: R, sizes, strides of the data over the mask's C order."""
    return [len(shape), *shape, *strides]


def _mask_write(prog, direction, mask, counts, groups, chunk, data, prm, dense, dense_step):
    ctx = mask.context
    params = _params(ctx, prm, prog.itype)
    s = data.itemsize
    args = (mask.size, chunk, direction, *_mask_args(mask), counts.storage,
            data.storage, data.offset // s, params.storage,
            dense.storage, dense.offset // dense.itemsize, dense_step)
    reads = [mask, counts, params, dense if direction == 1 else data]
    writes = [data if direction == 1 else dense]
    local = 1 if prog.sequential else prog.local
    _enqueue(ctx, prog.write[s], groups * local, local, args, reads, writes)


def _layout_wide(*arrays):
    return max(max(a.size, _elements(a)) for a in arrays) > _INT32_MAX


def _device_mask(mask, ctx):
    """A boolean key as a C-contiguous GpuArray on `ctx`."""
    if isinstance(mask, ArrayBase):
        return _contiguous(mask if mask.context is ctx else mask.transfer(ctx))
    return to_device(np.asarray(mask, order="C"), ctx)


def _c_strides(shape):
    out, step = [], 1
    for n in reversed(shape):
        out.append(step)
        step *= n
    return out[::-1]


def compact(x, mask):
    """x[mask] for a boolean mask of x's shape: a 1-d array of the selected elements."""
    ctx = x.context
    mask = _device_mask(mask, ctx)
    n = x.size
    if n == 0:
        return ArrayBase._empty(ctx, (0,), x.dtype)
    prog = _program(ctx, _layout_wide(x, mask))
    counts, groups, chunk = _mask_counts(prog, mask, n, x.itemsize)
    total = _total(counts, groups)
    out = ArrayBase._empty(ctx, (total,), x.dtype)
    if total:
        dims, (_, strides) = elemwise.collapse(
            list(x.shape), [_c_strides(x.shape), elemwise._element_strides(x, x.ndim)])
        _mask_write(prog, 0, mask, counts, groups, chunk, x, _data_prm(dims, strides), out, 1)
    return out


def _expand(x, mask, value):
    """x[mask] = value for a boolean mask of x's shape; value 0-d or 1-d (numpy's rules)."""
    ctx = x.context
    mask = _device_mask(mask, ctx)
    if mask._may_share(x):  # read while x is written
        mask = _copy(mask)
    v = _value_array(value, x)
    if v.ndim > 1:
        raise ArgumentTypeError(f"NumPy boolean array indexing assignment requires a 0 or "
                                f"1-dimensional input, input has {v.ndim} dimensions")
    if x.size == 0:
        return
    prog = _program(ctx, _layout_wide(x, mask, v))
    counts, groups, chunk = _mask_counts(prog, mask, x.size, x.itemsize)
    if v.size != 1:
        total = _total(counts, groups)
        if v.size not in (1, total):
            raise ShapeError(f"NumPy boolean array indexing assignment cannot assign {v.size} "
                             f"input values to the {total} output values where the mask is "
                             f"true")
    step = 0 if v.size == 1 else v.strides[0] // v.itemsize
    if v._may_share(x):
        v = _copy(v)
        step = 1 if v.size > 1 else 0
    dims, (_, strides) = elemwise.collapse(
        list(x.shape), [_c_strides(x.shape), elemwise._element_strides(x, x.ndim)])
    _mask_write(prog, 1, mask, counts, groups, chunk, x, _data_prm(dims, strides), v, step)


def _nonzero_coords(a):
    """The C-order coordinates of a's nonzero elements: an int64 (ndim, count) array."""
    ctx = a.context
    mask = _contiguous(a)
    if a.size == 0:
        return ArrayBase._empty(ctx, (a.ndim, 0), np.dtype(np.int64))
    prog = _program(ctx, _layout_wide(mask) or a.size * a.ndim > _INT32_MAX)
    counts, groups, chunk = _mask_counts(prog, mask, a.size, 8)
    total = _total(counts, groups)
    out = ArrayBase._empty(ctx, (a.ndim, total), np.dtype(np.int64))
    if total:
        _mask_write(prog, 2, mask, counts, groups, chunk, out,
                    _data_prm(a.shape, [0] * a.ndim), out, total)
    return out


# ---------------------------------------------------------------- keys

def _key_items(a, key):
    """The key's items with every array as a host int64/bool array or a GpuArray."""
    items = []
    for k in key if isinstance(key, tuple) else (key,):
        if k is None or k is Ellipsis or isinstance(k, slice):
            items.append(k)
        elif isinstance(k, bool | np.bool_):
            items.append(np.array(bool(k)))
        elif isinstance(k, numbers.Integral):
            items.append(operator.index(k))
        elif isinstance(k, ArrayBase):
            if k.dtype.kind not in "iub":
                raise IndexOutOfRange("arrays used as indices must be of integer (or boolean) "
                                      "type")
            if k.ndim == 0 and k.dtype.kind != "b":
                items.append(operator.index(k))
            else:
                items.append(k if k.context is a.context else k.transfer(a.context))
        elif isinstance(k, np.ndarray | list | tuple):
            arr = _host_index(k)
            items.append(int(arr) if arr.ndim == 0 and arr.dtype.kind != "b" else arr)
        else:
            raise IndexOutOfRange(_VALID)
    # numpy: a 1-d empty boolean array indexes like an empty integer array
    return [np.zeros(0, np.int64) if _is_array(k) and k.dtype.kind == "b" and k.ndim == 1
            and k.size == 0 else k for k in items]


def _is_array(k):
    return isinstance(k, np.ndarray | ArrayBase)


def _parse(a, key):
    """(basic view, [(view dim, index array, array axis)], whether the advanced indices
    are adjacent) for an advanced key."""
    items = _key_items(a, key)
    if sum(k is Ellipsis for k in items) > 1:
        raise IndexOutOfRange("an index can only have a single ellipsis ('...')")
    used = sum(k.ndim if _is_array(k) and k.dtype.kind == "b" else 0 if k is None or
               k is Ellipsis else 1 for k in items)
    if used > a.ndim:
        raise IndexOutOfRange(f"too many indices for array: array is {a.ndim}-dimensional, "
                              f"but {used} were indexed")
    fill = [slice(None)] * (a.ndim - used)
    if Ellipsis in [k for k in items if not _is_array(k)]:
        at = next(i for i, k in enumerate(items) if k is Ellipsis)
        items = items[:at] + fill + items[at + 1:]
    else:
        items += fill
    basic, entries, positions = [], [], []
    vd = ad = 0
    for pos, k in enumerate(items):
        if k is None or isinstance(k, slice):
            basic.append(k)
            vd += 1
            ad += k is not None
        elif isinstance(k, int):
            basic.append(k)
            positions.append(pos)
            ad += 1
        elif k.dtype.kind == "b":
            positions.append(pos)
            if k.ndim == 0:  # a new axis of length 1, indexed by [0] or []
                true = bool(k.get() if isinstance(k, ArrayBase) else k)
                basic.append(None)
                entries.append((vd, np.zeros(int(true), np.int64), -1))
                vd += 1
                continue
            for j, (n, m) in enumerate(zip(a.shape[ad:], k.shape)):
                if n != m and m:  # numpy lets a mask axis of length 0 (no True) match any
                    raise IndexOutOfRange(
                        f"boolean index did not match indexed array along axis {ad + j}; "
                        f"size of axis is {n} but size of corresponding boolean axis is {m}")
            if isinstance(k, ArrayBase):
                coords = _nonzero_coords(k)
                coords = [coords[j] for j in range(k.ndim)]
            else:
                coords = [np.asarray(c, np.int64, order="C") for c in np.nonzero(k)]
            for c in coords:
                basic.append(slice(None))
                entries.append((vd, c, ad))
                vd += 1
                ad += 1
        else:
            basic.append(slice(None))
            entries.append((vd, k, ad))
            positions.append(pos)
            vd += 1
            ad += 1
    view = _basic_index(a, tuple(basic))
    adjacent = positions == list(range(positions[0], positions[0] + len(positions)))
    return view, entries, adjacent


def _shape_str(shape):
    """A shape as numpy's indexing messages write it: (2,3), (3,)."""
    return f"({','.join(map(str, shape))}{',' if len(shape) == 1 else ''})"


def _broadcast_indices(shapes):
    try:
        return elemwise.broadcast_shape(shapes) if shapes else ()
    except ShapeError:
        raise IndexOutOfRange("shape mismatch: indexing arrays could not be broadcast "
                              "together with shapes " + " ".join(map(_shape_str, shapes))
                              ) from None


def _layout(view, entries, adjacent):
    """(result shape, data strides, b0, nb, [_Index]) of a parsed key."""
    s = view.itemsize
    bshape = _broadcast_indices([arr.shape for _, arr, _ in entries])
    adv = [vd for vd, _, _ in entries]
    rest = [d for d in range(view.ndim) if d not in adv]
    pre = [d for d in rest if d < adv[0]] if adjacent else []
    post = [d for d in rest if d not in pre]
    shape = [view.shape[d] for d in pre] + list(bshape) + [view.shape[d] for d in post]
    strides = [view.strides[d] // s for d in pre] + [0] * len(bshape) + \
        [view.strides[d] // s for d in post]
    indices = [_Index(arr, view.shape[vd], view.strides[vd] // s, axis, bshape)
               for vd, arr, axis in entries]
    return tuple(shape), strides, len(pre), len(bshape), indices


def _full_mask(a, key):
    """The key when it is one boolean array of a's shape (compacted directly), else None."""
    k = key[0] if isinstance(key, tuple) and len(key) == 1 else key
    if isinstance(k, list):
        k = np.asarray(k)
    if (isinstance(k, np.ndarray | ArrayBase) and k.dtype == np.bool_ and a.ndim
            and k.shape == a.shape):
        return k
    return None


def getitem(a, key):
    """a[key] for a key with integer or boolean arrays (a new array, as in numpy)."""
    mask = _full_mask(a, key)
    if mask is not None:
        return compact(a, mask)
    view, entries, adjacent = _parse(a, key)
    shape, strides, b0, nb, indices = _layout(view, entries, adjacent)
    out = ArrayBase._empty(a.context, shape, a.dtype)
    _take(view, shape, strides, b0, nb, indices, out, 0, 0)
    return out


def _value_array(value, a):
    """`value` as a GpuArray of a's dtype on a's context (numpy's setitem cast)."""
    if isinstance(value, ArrayBase):
        v = value if value.context is a.context else value.transfer(a.context)
        return v if v.dtype == a.dtype else v.astype(a.dtype)
    if isinstance(value, np.ndarray):
        host = value.astype(a.dtype, copy=False)
    elif _is_scalar(value):
        host = _host_scalar(value, a.dtype)
    else:
        host = np.asarray(value, dtype=a.dtype)
    return to_device(np.asarray(host, order="C"), a.context)


def _scatter(data, shape, strides, b0, nb, indices, value, mode):
    """data[indices] = value broadcast to `shape`; raise mode checks every index first, so
    that nothing is written when one is out of range (as numpy)."""
    try:
        src = _broadcast_assign_shape(value.shape, shape)
    except ShapeError:
        raise ShapeError(f"shape mismatch: value array of shape {_shape_str(value.shape)} "
                         f"could not be broadcast to indexing result of shape "
                         f"{_shape_str(shape)}") from None
    if value._may_share(data):
        value = _copy(value)
    value = broadcast_to(value.reshape(src), shape)
    for ix in indices:  # indices read while data is written: never the same bytes
        if isinstance(ix.array, ArrayBase) and ix.array._may_share(data):
            ix.array = _copy(ix.array)
            ix.bstrides = _Index(ix.array, 0, 0, 0, shape[b0:b0 + nb]).bstrides
    if mode == 0 and indices:
        _take(data, shape[b0:b0 + nb], [0] * nb, 0, nb, indices, None, 2, 0)
    if math.prod(shape):
        _take(data, shape, strides, b0, nb, indices, value, 1, mode)


def setitem(a, key, value):
    """a[key] = value for a key with integer or boolean arrays."""
    a._check_writeable()
    mask = _full_mask(a, key)
    if mask is not None:
        return _expand(a, mask, value)
    view, entries, adjacent = _parse(a, key)
    shape, strides, b0, nb, indices = _layout(view, entries, adjacent)
    _scatter(view, shape, strides, b0, nb, indices, _value_array(value, a), 0)
    return None


# ---------------------------------------------------------------- numpy functions

def _index_operand(indices, ctx, what="indices"):
    """Integer indices as a host int64 array or a GpuArray of integers (bool reads as 0/1)."""
    if isinstance(indices, ArrayBase):
        if indices.dtype.kind not in "iub":
            raise ArgumentTypeError(f"Cannot cast array data from dtype('{indices.dtype}') to "
                                    f"dtype('int64') according to the rule 'safe'")
        return indices if indices.context is ctx else indices.transfer(ctx)
    arr = np.asarray(indices)
    if arr.dtype.kind not in "iub":
        if arr.size == 0 and not isinstance(indices, np.ndarray):
            return np.zeros(arr.shape, np.int64)
        raise ArgumentTypeError(f"Cannot cast array data from dtype('{arr.dtype}') to "
                                f"dtype('int64') according to the rule 'safe'")
    return np.asarray(arr, np.int64, order="C")


def _flat(a):
    """a's elements in C order as a 1-d array (a view when a is C-contiguous)."""
    return _contiguous(a).reshape(a.size)


def take(a, indices, axis=None, out=None, mode="raise"):
    """numpy.take: elements of `a` at `indices` along `axis` (of the flattened array if None).

    Indices are checked (host ones on the host, device ones on the device): with
    mode='raise' (the default) one out of range raises IndexError and nothing is read
    through it; 'wrap' and 'clip' as numpy's.

    Examples
    --------
    >>> x = ga.asarray(np.arange(10.0, 16.0).reshape(2, 3))
    >>> ga.take(x, [2, 0]).get()
    array([12., 10.])
    >>> ga.take(x, ga.asarray([2, 0]), axis=1).get()
    array([[12., 10.],
           [15., 13.]])
    """
    a = _as_array(a)
    m = _check_mode(mode)
    if axis is None:
        a, axis = _flat(a), 0
    axis = _normalize_axis(axis, a.ndim)
    idx = _index_operand(indices, a.context)
    size = a.shape[axis]
    if size == 0 and idx.size:
        raise IndexOutOfRange("cannot do a non-empty take from an empty axes.")
    s = a.itemsize
    shape = (*a.shape[:axis], *idx.shape, *a.shape[axis + 1:])
    strides = [st // s for st in a.strides[:axis]] + [0] * idx.ndim + \
        [st // s for st in a.strides[axis + 1:]]
    index = _Index(idx, size, a.strides[axis] // s, axis, idx.shape)
    target = _check_out(out, shape, a, "take")
    if target is out and isinstance(idx, ArrayBase) and out._may_share(idx):
        target = ArrayBase._empty(a.context, shape, a.dtype)
    _take(a, shape, strides, axis, idx.ndim, [index], target, 0, m)
    return _finish_out(out, target)


def _check_out(out, shape, a, name):
    """The array a gather writes: `out` itself, or a new one when out needs a cast or
    overlaps `a`."""
    if out is None:
        return ArrayBase._empty(a.context, tuple(shape), a.dtype)
    if not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"{name}: out must be a GpuArray, not {type(out).__name__}")
    if out.shape != tuple(shape):
        raise ShapeError(f"output array does not match result of {name}: out has shape "
                         f"{out.shape}, the result {tuple(shape)}")
    out._check_writeable()
    if out.dtype != a.dtype:
        if not np.can_cast(a.dtype, out.dtype, "safe"):
            raise ArgumentTypeError(f"Cannot cast array data from dtype('{a.dtype}') to "
                                    f"dtype('{out.dtype}') according to the rule 'safe'")
        return ArrayBase._empty(a.context, tuple(shape), a.dtype)
    if out._may_share(a) or out.context is not a.context:
        return ArrayBase._empty(a.context, tuple(shape), a.dtype)
    return out


def _finish_out(out, target):
    if out is None or out is target:
        return target
    return out._assign(target)


def take_along_axis(arr, indices, axis=-1):
    """numpy.take_along_axis: arr[..., indices, ...] matching 1-d slices along `axis`."""
    arr = _as_array(arr)
    if getattr(indices, "dtype", np.asarray(indices).dtype).kind not in "iu":
        raise IndexOutOfRange("`indices` must be an integer array")
    idx = _index_operand(indices, arr.context)
    if axis is None:
        if idx.ndim != 1:
            raise ArgumentError("when axis=None, `indices` must have a single dimension.")
        arr, axis = _flat(arr), 0
    if idx.ndim != arr.ndim:
        raise ArgumentError("`indices` and `arr` must have the same number of dimensions")
    axis = _normalize_axis(axis, arr.ndim)
    shapes = [tuple(n if d == axis else 1 for d, n in enumerate(idx.shape)), idx.shape,
              tuple(1 if d == axis else n for d, n in enumerate(arr.shape))]
    shape = list(_broadcast_indices(shapes))
    s = arr.itemsize
    strides = [0 if d == axis or arr.shape[d] == 1 else arr.strides[d] // s
               for d in range(arr.ndim)]
    index = _Index(idx, arr.shape[axis], arr.strides[axis] // s, axis, tuple(shape))
    out = ArrayBase._empty(arr.context, tuple(shape), arr.dtype)
    if arr.shape[axis] == 0 and idx.size:
        raise IndexOutOfRange("cannot do a non-empty take from an empty axes.")
    _take(arr, shape, strides, 0, len(shape), [index], out, 0, 0)
    return out


def put(a, ind, v, mode="raise"):
    """numpy.put: a.flat[ind] = v, v repeated as needed; a is changed in place.

    Examples
    --------
    >>> z = ga.zeros(5, dtype=np.int64)
    >>> ga.put(z, [0, 2], [7, 8])
    >>> z.get()
    array([7, 0, 8, 0, 0])
    """
    if not isinstance(a, ArrayBase):
        raise ArgumentTypeError(f"put needs a GpuArray to write into, not {type(a).__name__}")
    a._check_writeable()
    m = _check_mode(mode)
    idx = _index_operand(ind, a.context)
    idx = idx.reshape(-1) if isinstance(idx, np.ndarray) else _flat(idx)
    values = _value_array(v, a)
    if values.size == 0 or idx.size == 0:
        return
    if a.size == 0:
        raise IndexOutOfRange("cannot replace elements of an empty array")
    values = _flat(values)
    if values.size not in (1, idx.size):
        values = take(values, np.arange(idx.size), mode="wrap")
    flat = _flat(a)
    index = _Index(idx, a.size, 1, 0, idx.shape)
    _scatter(flat, idx.shape, [0], 0, 1, [index], values, m)
    if flat.storage is not a.storage:
        _copy(flat.reshape(a.shape), a)


def nonzero(a):
    """numpy.nonzero: a tuple of int64 arrays, the coordinates of the nonzero elements.

    The mask is compacted on the device; only the count of nonzeros is read back.

    Examples
    --------
    >>> rows, cols = ga.nonzero(ga.asarray(np.eye(2)))
    >>> rows.get(), cols.get()
    (array([0, 1]), array([0, 1]))
    """
    a = _as_array(a)
    if a.ndim == 0:
        raise ArgumentError("Calling nonzero on 0d arrays is not allowed. Use "
                            "np.atleast_1d(scalar).nonzero() instead.")
    coords = _nonzero_coords(a)
    return tuple(coords[d] for d in range(a.ndim))


def argwhere(a):
    """numpy.argwhere: the coordinates of the nonzero elements, one row each."""
    a = _as_array(a)
    if a.ndim == 0:
        return _nonzero_coords(a.reshape(1)).T[:, :0]
    return _nonzero_coords(a).T


def flatnonzero(a):
    """numpy.flatnonzero: indices of the nonzero elements of the flattened array."""
    a = _as_array(a)
    return _nonzero_coords(_flat(a))[0]


def compress(condition, a, axis=None, out=None):
    """numpy.compress: the slices of `a` along `axis` where `condition` is true.

    Examples
    --------
    >>> a = ga.asarray(np.arange(6).reshape(2, 3))
    >>> ga.compress(ga.asarray([True, False, True]), a, axis=1).get()
    array([[0, 2],
           [3, 5]])
    """
    a = _as_array(a)
    if isinstance(condition, ArrayBase):
        if condition.ndim != 1:
            raise ArgumentError("condition must be a 1-d array")
        idx = _nonzero_coords(condition)[0]
    else:
        cond = np.asarray(condition)
        if cond.ndim != 1:
            raise ArgumentError("condition must be a 1-d array")
        idx = np.flatnonzero(cond)
    return take(a, idx, axis, out)


FUNCTIONS = dict(take=take, take_along_axis=take_along_axis, put=put, nonzero=nonzero,
                 argwhere=argwhere, flatnonzero=flatnonzero, compress=compress)


class IndexingMethods:
    """numpy's advanced indexing in `x[key]` and `x[key] = v` (over ArrayBase's basic
    indexing), and take, put, nonzero, compress. A mixin of GpuArray (gpuarr/array.py)."""

    def __getitem__(self, key):
        view = _basic_index(self, key)
        if view is None:  # integer or boolean arrays: numpy's advanced indexing, a copy
            return getitem(self, key)
        return view

    def __setitem__(self, key, value):
        view = _basic_index(self, key)
        if view is None:
            return setitem(self, key, value)
        view._assign_value(value)

    def take(self, indices, axis=None, out=None, mode="raise"):
        return take(self, indices, axis, out, mode)

    def put(self, indices, values, mode="raise"):
        return put(self, indices, values, mode)

    def nonzero(self):
        return nonzero(self)

    def compress(self, condition, axis=None, out=None):
        return compress(condition, self, axis, out)

    for _fn in (take, put, nonzero, compress):
        _fn.__doc__ = FUNCTIONS[_fn.__name__].__doc__
    del _fn
