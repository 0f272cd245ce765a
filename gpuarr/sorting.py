"""Sorting and searching: sort, argsort, partition, argpartition, searchsorted, unique.

One engine, a stable LSD radix sort with 8-bit digits (kernels/sort.cl.mako) on the raw
bits of the elements; each pass makes order-preserving unsigned keys of them on the fly
(numpy's order: NaNs last, -0.0 == +0.0, complex lexicographic), so one program per element
width serves every dtype of that width and sorted values keep their exact bits. argsort
carries each element's flat index as payload and its last pass writes the int64 result.
A sort along an axis moves the axis last (a copy when it is not already the contiguous one)
and, after the key passes, sorts stably by row number.

Digits equal for every key skip their pass; which vary is read back before the passes. On
GPUs one read of the keys counts every digit's histogram (sort_hist_all), and each pass is
then one launch in the one-sweep style: a work-group per tile of 256 x 16 elements (fewer
for wide keys) ranks its elements in local memory and finds where its digits go by
decoupled look-back on the earlier tiles (tile numbers from an atomic counter, so that a
work-group only waits on ones that have started); sorts of 2^29 elements or more, whose
counts do not fit the look-back words, count and scan first (reduce-then-scan). CPUs OR
the keys to find the varying digits and run a work-item per chunk (counts, one scan, a
serial stable scatter): reduce-then-scan, no work-group waiting on another (their programs
leave the GPU passes' kernels out). GPUs sort rows of up to 2048 elements whole in local
memory instead (a work-group per row, one launch).
partition and argpartition are the full sort; there is no separate top-k. unique counts
the new values of the sorted keys per group, scans the counts, reads the total back and
writes every output in one more pass.
"""

import functools
import numbers
import threading
from typing import NamedTuple

import numpy as np
import pyopencl as cl

from .base import ArrayBase, _normalize_axis, empty, to_device
from .context import get_context
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    ShapeError,
    UnsupportedError,
)
from .kernels import build, render
from .launch import Launcher, enqueue, fill_buffer, read_host, write_host

__all__ = ["FUNCTIONS", "SortingMethods", "argpartition", "argsort", "partition",
           "searchsorted", "sort", "unique"]

_BITS = 8  # bits per digit (the kernels' 256-entry histograms)
_GROUPS_PER_CU = 2  # chunks per compute unit on CPUs (PoCL, 2^20..2^22: 1-2 best)
_ROWS_MAX = 2048
_MAX_N = 2**31 - 1  # uint index arithmetic in the kernels, with room for the last chunk
_LOOKBACK_N = 2**29  # look-back words hold counts below this (kernels/sort.cl.mako)
_STATUS_HEAD = 32  # the tile counters before the look-back words (one per pass)
_HIST_WORDS = (128 // _BITS + 4) * 256  # sort_hist_all's histograms: a 128-bit key's digits
# and a row number's (rows < 2^32)
_HIST_POOL = 4  # zeroed histogram buffers a context keeps (sorts in flight at once)
_ZERO_WORD = np.zeros(1, np.uint32)  # (fill_buffer's pattern)
# sort_search_sampled: work-items, queries per work-item, samples of a (half for 128-bit
# elements), bytes of the stretch of a read at once to end a search (a binary search down
# to that, then a count; 0: a binary search to the end); it searches arrays of
# 4 x _SEARCH_SAMPLES elements and more. H100, 2^22 queries in 2^24 float32 / int64 /
# float64 against CuPy (.device/searchcmp.py): tail 0: 0.78-0.81 / 0.77 / 0.76; 32 bytes:
# 0.94-0.97 / 0.89-0.92 / 0.89-0.90; 64: 0.87-0.88 / 0.89-0.90 / 0.86-0.87; 128: 0.38-0.65;
# 256 samples or 8 queries a work-item: no better.
_SEARCH_LOCAL, _SEARCH_QUERIES, _SEARCH_SAMPLES, _SEARCH_TAIL = 256, 4, 1024, 32
# GPUs with warps of 32 and inline PTX (NVIDIA, compute capability 7 and up): tiles ranked by
# warps (kernels/sort.cl.mako, rank='warp'), where a probe sort gets numpy's result.
WARP_RANK = True
# tests: the warp-ranked tiles on any device, the warps' exchanges through local memory
WARP_EMULATED = False
# warp-ranked tiles of sorts without payloads, keys of 32 / 64 bits: each key read again (from
# the L2 cache) to be placed rather than held in a register over the ranking. H200, a pass
# over 2^24 keys (.device/sortreload.py): float32 512 x 11 50 -> 40 registers (three tiles a
# multiprocessor instead of two), 121 -> 108 us; uint64 62 -> 40, 128 -> 123 us. Argsorts
# (payloads read again too) lost: float32 146 -> 191 us at 55 registers, uint64 195 -> 197.
WARP_RELOAD = True
# element width -> (work-items, most elements per work-item) of the warp-ranked tiles; the
# elements are bounded by 48 KiB of local memory too. _KEYS: sorts without payloads (their
# own build, keys_only). H200, a pass over 2^24 keys (.device/sortprof.py; the shared build,
# float keys by branches: float32 184 us, uint64 210): float32 8 / 9 / 11 / 16 items 153 /
# 145 / 131 / 247 us; uint64 7 / 9 / 11 items 168 / 153 / 152 us. Argsorts' 512 x 9 / 10
# and 256 x 11 were no faster. Tried and dropped: the tile's counts published before the
# ranking (CUB's early counts, a local atomic an element): float32 133 -> 155 us a pass,
# argsort 208 -> 313 us (normal keys' top digits take few values: the atomics collide).
# Ranked by digit masks (.device/sortgeo.py, keys only, float32 / uint64): 512 x 11 at 64
# registers (two tiles a multiprocessor) 123 / 144 us; 256 x 11 136 / 153; 256 x 16 156 /
# 167; 512 x 8 144 / 152; 384 x 11 145 / 154. With rank and digit in one register (no
# spills): 512 x 11 121 / 128, argsort 512 x 11 float32 147, 512 x 7 uint64 196. Keys read
# again (WARP_RELOAD, 40 registers): float32 512 x 10 / 11 / 12 / 13 113 / 108 / 108 / 105 us;
# uint64 512 x 9 / 10 / 11 129 / 125 / 123 (11: the most that local memory holds).
_WARP_TILE = {8: (512, 16), 16: (512, 16), 32: (512, 11), 64: (512, 7)}
_WARP_TILE_KEYS = {8: (512, 16), 16: (512, 16), 32: (512, 13), 64: (512, 11)}

# kernel -> its arguments: u a uint scalar, B a buffer
_ARGS = {
    "sort_diffbits": "uuuBB",
    "sort_hist_all": "uuuuBBB",
    "sort_hist_serial": "uuuuuuuBBB",
    "sort_scatter_serial": "uuuuuuuuBBBBBB",
    "sort_scan": "uB",
    "sort_count_tile": "uuuuuuBBB",
    "sort_onesweep": "uuuuuuuuuuuBBBBBBBB",
    "sort_rows": "uuuuuBBB",
    "sort_index": "uuuBB",
    "sort_search": "uuuuuBBBBB",
    "sort_search_sampled": "uuuuBBB",
    "unique_count": "uuuuBB",
    "unique_write": "uuuuuBBBBBBB",
    "unique_counts": "uuBB",
}

_TILE_KERNELS = ("sort_hist_all", "sort_count_tile", "sort_onesweep")  # (GPUs' passes)

_MODES = {"b": 0, "u": 0, "i": 1, "f": 2, "c": 3}


def _variant(ctx):
    """'serial' (a work-item per chunk) on CPUs, 'tile' (a work-group per tile) elsewhere."""
    return "serial" if ctx.device.type == "CPU" else "tile"


def _lookback(ctx, n):
    """Whether the tile passes over `n` elements find their tiles' places by decoupled
    look-back (one launch a pass), else by reduce-then-scan (three). Look-back waits only
    on work-groups that started earlier, so it is safe on any device; CPUs take the serial
    variant, which never waits."""
    return n < _LOOKBACK_N


class _Geometry(NamedTuple):
    tile_local: int  # work-items of the tile kernels
    tile_items: int  # elements per work-item there
    rows_local: int  # work-items of sort_rows
    rows_max: int  # the longest row sort_rows takes
    scan_local: int  # work-items of sort_scan (and the unique kernels) on GPUs
    hist_copies: int = 1  # histograms in sort_hist_all's local memory
    rank: str = "split"  # sort_onesweep's ranking: 'split' or 'warp'
    reload: bool = False  # sort_onesweep reads keys again to place them (WARP_RELOAD)


def _geometry(ctx, width, keys_only=False):
    """The work-group shapes for `width`-bit elements: the largest that fit the device's
    work-group size and local memory (tiles of 256 x 16 elements, rows of 2048 at most);
    `keys_only`: the warp-ranked tiles' of sorts without payloads."""
    warp = width in _WARP_TILE and (WARP_EMULATED or _warp_rank(ctx))
    return _device_geometry(ctx.device.cl_device, ctx.devname, width, warp, WARP_EMULATED,
                            keys_only)


def _warp_rank(ctx):
    """Whether sort_onesweep ranks tiles by warps on ctx: WARP_RANK, an NVIDIA GPU of compute
    capability 7 or later, and a probe argsort through it equal to numpy's (once per
    context; any failure, such as a driver without inline PTX, means no). Other threads
    wait for the probe's verdict; only the probe's own sort ranks by warps before it."""
    key = ("sort_warp_rank", WARP_RANK)
    if key in ctx.state:
        return ctx.state[key]
    if getattr(_probing, "ctx", None) is ctx:
        return True
    with _PROBE_LOCK:
        if key not in ctx.state:
            cc = ctx.device.nv_capability
            ok = bool(WARP_RANK and cc and cc[0] >= 7)
            if ok:
                keys = np.random.default_rng(7).integers(0, 2**32, 40009, dtype=np.uint32)
                keys[::3] &= 0x0f0f
                _probing.ctx = ctx
                try:
                    ok = np.array_equal(argsort(to_device(keys, ctx)).get(),
                                        np.argsort(keys, kind="stable"))
                except Exception:
                    ok = False
                finally:
                    _probing.ctx = None
            ctx.state[key] = ok
    return ctx.state[key]


_PROBE_LOCK = threading.Lock()
_probing = threading.local()  # .ctx: the context whose probe sort this thread runs


@functools.lru_cache(maxsize=64)
def _device_geometry(device, devname, width, warp=False, emulated=False, keys_only=False):
    # (cached per cl.Device, not per Context: the cache must not keep a context alive)
    local_mem, wg = device.local_mem_size, device.max_work_group_size
    local = 1 << (min(wg, 256).bit_length() - 1)
    if local < 16:
        raise UnsupportedError(f"device {devname} takes work-groups of {wg} work-items, "
                               f"too few for the sort kernels (16)")
    raw_bytes = max(1, width // 8)
    key_bytes = {8: 4, 16: 4, 32: 4, 64: 8, 128: 16}[width]
    # GPUs: tiles of 512 x 8 (an H100 sorts 2^24 float32 keys in 0.82x the time of 256 x 16,
    # argsorts in 0.79x: .device/sortsweep.py)
    gpu = bool(device.type & cl.device_type.GPU) and wg >= 512
    tile_local = 512 if gpu else local
    # sort_onesweep: split counters, two scan buffers, three digit tables; keys and payloads
    # (at most 48 KiB: a few work-groups per compute unit)
    fixed = 4 * ((8 * tile_local) * 33 // 32 + 2 * tile_local + 3 * 256 + 1)
    for items in (8, 4, 2, 1) if gpu else (16, 8, 4, 2, 1):
        if fixed + tile_local * items * (raw_bytes + 4) <= min(local_mem, 49152):
            break
    else:
        raise UnsupportedError(f"device {devname} has {local_mem} bytes of local memory, "
                               f"too few for the sort kernels")
    rank = "split"
    if warp:  # counters and masks (16 a work-item) and then the tile share local memory
        tile_local, most = (_WARP_TILE_KEYS if keys_only else _WARP_TILE)[width]
        # run starts, global offsets, warp sums, ticket; bytes a work-item: counters and
        # masks, the lanes' exchange when emulated (devices with 32 KiB of local memory,
        # Oclgrind's: tiles of 256 work-items)
        room = min(local_mem, 49152) - 4 * (257 + 256 + 32 + 1)
        lanes = 4 if emulated else 0
        while tile_local > 256 and (64 + lanes) * tile_local > room:
            tile_local //= 2
        room -= lanes * tile_local
        pay = 0 if keys_only else 4
        items = max(i for i in range(1, most + 1) if max(
            64 * tile_local, tile_local * i * (raw_bytes + pay)) <= room)
        rank = "warp-emulated" if emulated else "warp"
    rows_max = _ROWS_MAX
    while rows_max > 64 and rows_max * (key_bytes + 2) > local_mem:
        rows_max //= 2
    hist = width // 8 * 256 * 4
    # (tried on an H200: the high digits counted by warps, the lanes of one digit found by
    # match.any and one atomic each: uint32 keys' histograms 41 -> 136 us, uint64 70 -> 141)
    copies = next(c for c in (4, 2, 1) if c == 1 or c * hist <= min(16384, local_mem // 2))
    return _Geometry(tile_local, items, local, rows_max,
                     1 << (min(wg, 1024).bit_length() - 1), copies, rank,
                     WARP_RELOAD and warp and keys_only and width in (32, 64))


def _program(ctx, width, digit=None, keys_only=False):
    """({kernel name: cl.Kernel}, _Geometry) of the sort program for `width`-bit elements;
    with `digit` (a key mode, or 'row'), one whose passes take their digits that way only
    (fewer instructions: the tile passes on GPUs that rank by warps), and with `keys_only`
    too, whose passes carry no payloads (sorts, not argsorts: a larger tile). The GPU
    passes' kernels are in it only where the 'tile' variant runs."""
    geo = _geometry(ctx, width, keys_only)
    search = (_SEARCH_LOCAL, _SEARCH_QUERIES, _SEARCH_SAMPLES, _SEARCH_TAIL)
    tiles = _variant(ctx) == "tile"
    key = ("sort", width, geo, digit, keys_only, search, tiles)  # (searchsorted's too)
    entry = ctx.kernels.get(key)
    if entry is None:
        program = build(ctx, render("sort.cl.mako", width=width, digit=digit,
                                    keys_only=keys_only, search=search, tiles=tiles,
                                    **geo._asdict()))
        kernels = {}
        for name, args in _ARGS.items():
            if tiles or name not in _TILE_KERNELS:
                kernels[name] = Launcher(getattr(program, name),
                                         [np.uint32 if c == "u" else None for c in args])
        entry = ctx.kernels[key] = kernels, geo
    return entry


@functools.lru_cache(maxsize=32)
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


def _round_up(n, m):
    return -(-n // m) * m


def _chunks(ctx, n, local):
    """(groups, elements per group) for kernels that walk chunks: on CPUs a work-item per
    chunk, a few per compute unit; elsewhere work-groups of `local`, 8 per compute unit."""
    cu = ctx.device.compute_units
    if local == 1:
        groups = max(1, min(-(-n // 16384), _GROUPS_PER_CU * cu))
    else:
        groups = max(1, min(-(-n // (local * 16)), 8 * cu))
    chunk = _round_up(-(-n // groups), local)
    return -(-n // chunk), chunk


# ---------------------------------------------------------------- the radix sort engine

class _Pass(NamedTuple):
    src: int  # 0: a key digit, 1: a digit of the row number
    shift: int
    row: int  # GPUs: the row of the histograms (elements of each digit value)


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
    rows = n // row_len if row_len else 0
    if 1 < row_len <= min(_rows_limit(ctx, rows), geo.rows_max):
        return _sort_rows(ctx, k, geo, flat, mode, row_len, want_index, want_values)
    chain = _Chain(ctx, k, geo, flat, mode, row_len, want_index or rows > 1, tile)
    if n > 1 and row_len > 1:
        passes = _passes(ctx, k, geo, flat, mode, keybits, row_len, rows, tile, chain)
        for i, p in enumerate(passes):
            chain.step(p, i == len(passes) - 1, want_index, want_values)
        if chain.hist is not None:
            _recycle_hist(ctx, *chain.hist)
    return chain.result(want_index, want_values)


class _Chain:
    """The radix passes of one sort, one after another: each reads the keys (and payloads:
    the elements' original indices) the last one wrote and writes them in its digit's
    order."""

    def __init__(self, ctx, k, geo, flat, mode, row_len, payload, tile):
        self.ctx, self.k, self.geo, self.flat = ctx, k, geo, flat
        self.mode, self.row_len, self.payload, self.tile = mode, row_len, payload, tile
        self.keys_only = tile and not payload and geo.rank != "split"
        if self.keys_only:
            self.geo = _geometry(ctx, 8 * flat.itemsize, True)
        self.scratch = None
        self.hist = None  # GPUs: (the pooled histograms, the words this sort used)
        self.launched = 0  # passes enqueued (a skipped one too: it took its status words)
        self.last = False  # whether the last one wrote the final outputs
        self.src_k, self.src_p, self.index = flat, None, None
        self.spare_k, self.spare_p = [], []
        self._undo = None  # what `skipped` restores

    def step(self, p, last, want_index, want_values, skip=0):
        """Run pass `p` (the last: it writes what was asked for). With `skip`, the pass
        writes nothing when its key digit is the same in every element (GPUs: a first pass
        enqueued before the host knows): `skipped` undoes its bookkeeping then."""
        ctx, n = self.ctx, self.flat.size
        if last:
            out_mode = (1 if want_values else 0) | (4 if want_index else 0)
        else:
            out_mode = 1 | (2 if self.payload else 0)
        dst_k = (self.spare_k.pop() if self.spare_k else _temp(ctx, n, self.flat.dtype)) \
            if out_mode & 1 else None
        dst_p = (self.spare_p.pop() if self.spare_p else _temp(ctx, n, np.uint32)) \
            if out_mode & 2 else None
        self.index = _temp(ctx, n, np.int64) if out_mode & 4 else None
        pay_mode = 0 if not self.payload else 2 if self.src_p is None else 1
        common = [n, self.mode, p.shift, p.src, self.row_len, pay_mode, out_mode]
        bufs = (self.src_k, dst_k, self.src_p, dst_p, self.index)
        if self.tile:
            k = self.k
            if self.geo.rank != "split":
                digit = ("row" if p.src else self.mode) if self.geo.rank == "warp" else None
                k = _program(ctx, 8 * self.flat.itemsize, digit, self.keys_only)[0]
            _tile_pass(ctx, k, self.geo, self.scratch, self.launched, common, bufs, p.row,
                       skip)
        else:
            _serial_pass(ctx, self.k, self.geo, self.scratch, self.launched, common, bufs)
        self._undo = (self.src_k, self.src_p, dst_k, dst_p)
        if self.src_k is not self.flat:
            self.spare_k.append(self.src_k)
        if self.src_p is not None:
            self.spare_p.append(self.src_p)
        self.src_k, self.src_p = dst_k, dst_p
        self.launched += 1
        self.last = last

    def skipped(self):
        """The last step wrote nothing (its digit did not vary): back to before it."""
        src_k, src_p, dst_k, dst_p = self._undo
        self.spare_k = [b for b in self.spare_k if b is not src_k] + [dst_k]
        self.spare_p = [b for b in self.spare_p if b is not src_p] + \
            ([dst_p] if dst_p is not None else [])
        self.src_k, self.src_p, self.index = src_k, src_p, None

    def result(self, want_index, want_values):
        """(sorted keys or None, int64 positions in their rows or None) after the passes."""
        ctx, n = self.ctx, self.flat.size
        if self.last:
            return self.src_k, self.index
        index = None
        if want_index:  # no pass, or only a first one that did not know it was the last
            index = _temp(ctx, n, np.int64)
            pay_mode = 2 if self.src_p is None else 1
            _launch(ctx, self.k["sort_index"], _round_up(n, ctx.local_size), ctx.local_size,
                    [n, self.row_len, pay_mode, _buf(self.src_p), index.storage],
                    (self.src_p,), (index,))
        return self.src_k, index


def _passes(ctx, k, geo, flat, mode, keybits, row_len, rows, tile, chain=None):
    """The passes a sort needs, in order: the key digits that are not the same for every
    element, then the digits of the row numbers when there are several rows and a key pass
    moved elements out of them. GPUs count every key digit's histogram in one read of the
    keys (sort_hist_all, which also zeroes the look-back words; into pooled histograms that
    came zeroed, so it is the sort's first command) and read that back; the first key
    digit's pass is enqueued before the read (`chain`: it writes nothing if that digit
    turns out the same everywhere), so the device does not wait for the host. CPUs,
    which count per pass anyway, only OR the keys (sort_diffbits, cheaper there)."""
    n = flat.size
    digits = keybits // _BITS
    local = geo.tile_local if tile else 1
    groups, chunk = _chunks(ctx, n, local)
    row_digits = -(-(rows - 1).bit_length() // _BITS) if rows > 1 else 0
    if not tile:
        words = _temp(ctx, max(1, flat.itemsize // 4), np.uint32).fill(0)
        _launch(ctx, k["sort_diffbits"], groups, 1, [n, chunk, mode, flat.storage,
                                                     words.storage], (flat,), (words,))
        diff = sum(int(w) << (32 * i) for i, w in enumerate(words.get()))
        passes = [_Pass(0, s, 0) for s in range(0, keybits, _BITS) if (diff >> s) & 255]
        if chain is not None:
            chain.scratch = _serial_scratch(ctx, geo, n)
    else:
        hist = _zeroed_hist(ctx)
        status = None
        if chain is not None:
            chain.hist = hist, (digits + row_digits) * 256
            chain.scratch = _tile_scratch(ctx, chain.geo, n, hist)
            status = chain.scratch[1]
        _launch(ctx, k["sort_hist_all"], groups * local, local,
                [n, chunk, mode, 0 if status is None else status.size, flat.storage,
                 hist.storage, _buf(status)], (flat,), (hist, status))
        if row_digits:  # (pyopencl keeps the host array until the copy is done)
            write_host(ctx, hist.storage, _row_counts(rows, row_len, row_digits),
                       digits * 256 * 4, blocking=False)
        early = None
        if status is not None:
            early = _Pass(0, 0, 0)
            chain.step(early, False, False, True, skip=1)
        counts = np.empty((digits, 256), np.uint32)
        read_host(ctx, counts, hist.storage, 0, queue=ctx.copy_queue)
        passes = [_Pass(0, _BITS * d, d) for d in np.flatnonzero(counts.max(axis=1) < n).tolist()]
        if early is not None:
            if passes and passes[0].shift == 0:
                passes = passes[1:]
            else:
                chain.skipped()
    if row_digits and (passes or (chain is not None and chain.src_k is not flat)):
        # (no key pass: the elements are still in their rows' order)
        passes += [_Pass(1, _BITS * q, digits + q) for q in range(row_digits)]
    return passes


def _zeroed_hist(ctx):
    """_HIST_WORDS zeroed uint32 words, the calling sort's own until it hands them to
    _recycle_hist: from the context's pool, which holds those that earlier sorts zeroed
    after their last pass, so that a sort's first command is its histogram pass."""
    try:
        return ctx.state.setdefault("sort histograms", []).pop()
    except IndexError:
        return _temp(ctx, _HIST_WORDS, np.uint32).fill(0)


def _recycle_hist(ctx, hist, words):
    """Zero the first `words` of `hist` after the commands enqueued so far and pool it."""
    fill_buffer(ctx, hist.storage, _ZERO_WORD, 0, 4 * words)
    pool = ctx.state.setdefault("sort histograms", [])
    if len(pool) < _HIST_POOL:
        pool.append(hist)


def _row_counts(rows, row_len, row_digits):
    """The elements of each digit value of the row numbers (uint32, row_digits x 256)."""
    d = np.arange(256, dtype=np.int64)
    out = np.empty((row_digits, 256), np.uint32)
    for q in range(row_digits):
        block = 1 << (_BITS * q)  # rows r with digit q of r equal to d, row_len each
        full, rest = divmod(rows, block << _BITS)
        out[q] = (full * block + np.clip(rest - d * block, 0, block)) * row_len
    return out


def _serial_scratch(ctx, geo, n):
    groups, chunk = _chunks(ctx, n, 1)
    return groups, chunk, _temp(ctx, 256 * groups, np.uint32)


def _serial_pass(ctx, k, geo, scratch, i, common, bufs):
    """One pass on CPUs: counts per chunk, their scan, a serial stable scatter per chunk."""
    groups, chunk, counts = scratch
    src_k, dst_k, src_p, dst_p, index = bufs
    n, mode, shift, src, seg_n, pay_mode, _ = common
    _launch(ctx, k["sort_hist_serial"], groups, 1,
            [n, chunk, mode, shift, src, seg_n, pay_mode, src_k.storage, _buf(src_p),
             counts.storage], (src_k, src_p), (counts,))
    _launch(ctx, k["sort_scan"], 1, 1, [counts.size, counts.storage], writes=(counts,))
    _launch(ctx, k["sort_scatter_serial"], groups, 1,
            [n, chunk, *common[1:], src_k.storage, _buf(dst_k), _buf(src_p), _buf(dst_p),
             _buf(index), counts.storage], (src_k, src_p, counts), (dst_k, dst_p, index))


def _tile_scratch(ctx, geo, n, hist):
    """(tiles, look-back status (zeroed by sort_hist_all), histograms, or reduce-then-scan
    counts)."""
    tiles = -(-n // (geo.tile_local * geo.tile_items))
    if _lookback(ctx, n):
        status = _temp(ctx, _STATUS_HEAD + 256 * tiles, np.uint32)
        return tiles, status, hist, None
    return tiles, None, None, _temp(ctx, 256 * tiles, np.uint32)


def _tile_pass(ctx, k, geo, scratch, i, common, bufs, row, skip):
    """One pass on GPUs: sort_onesweep by look-back, or after counting and scanning
    (reduce-then-scan)."""
    tiles, status, hist, counts = scratch
    src_k, dst_k, src_p, dst_p, index = bufs
    local = geo.tile_local
    if counts is not None:
        _launch(ctx, k["sort_count_tile"], tiles * local, local,
                [*common[:6], src_k.storage, _buf(src_p), counts.storage], (src_k, src_p),
                (counts,))
        scan = min(geo.scan_local, 1 << (counts.size.bit_length() - 1))
        _launch(ctx, k["sort_scan"], scan, scan, [counts.size, counts.storage],
                writes=(counts,))
    _launch(ctx, k["sort_onesweep"], tiles * local, local,
            [*common, i, int(status is not None), row, skip, src_k.storage, _buf(dst_k),
             _buf(src_p), _buf(dst_p), _buf(index), _buf(hist), _buf(status),
             _buf(counts)],
            (src_k, src_p, hist, counts), (dst_k, dst_p, index, status))


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


def _keybits(dtype):
    return 8 * dtype.itemsize


def _sorted(a, axis, values=True, index=False):
    """(sorted values, int64 argsort) of `a` along `axis` (None: flattened); either None
    when not asked for."""
    raw_dt = _raw_dtype(a.dtype)
    r = a if raw_dt == a.dtype else a._view(a.shape, a.strides, dtype=raw_dt)  # (same width)
    if axis is None:
        r = r if r.ndim == 1 else r.reshape(-1)
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
    flat = r if nd == 1 else r.reshape(-1)  # (a reshape costs microseconds of Python)
    row_len = shape[-1]
    sorted_raw, idx = _radix(flat, _MODES[a.dtype.kind], _keybits(a.dtype), row_len, index,
                             values)
    inverse = [perm.index(d) for d in range(nd)]
    out_v = out_i = None
    if values:
        if sorted_raw is flat and not owned:
            sorted_raw = flat.copy()
        out_v = sorted_raw if nd == 1 else sorted_raw.reshape(shape)
        if moved:
            out_v = out_v.transpose(inverse).copy()
        out_v = out_v._view(out_v.shape, out_v.strides, dtype=a.dtype)
    if index:
        out_i = idx if nd == 1 else idx.reshape(shape)
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
    err = None if sorter is None else _temp(ctx, 1, np.uint32).fill(0)
    k = _program(ctx, 8 * dt.itemsize)[0]
    if sorter is None and n >= 4 * _SEARCH_SAMPLES and m and \
            ctx.device.cl_device.max_work_group_size >= _SEARCH_LOCAL:
        per = _SEARCH_LOCAL * _SEARCH_QUERIES
        _launch(ctx, k["sort_search_sampled"], -(-m // per) * _SEARCH_LOCAL, _SEARCH_LOCAL,
                [m, n, _MODES[dt.kind], int(side == "right"), flat_a.storage, flat_v.storage,
                 out.storage], (flat_a, flat_v), (out,))
        return out
    local = ctx.local_size
    _launch(ctx, k["sort_search"], _round_up(items, local), local,
            [m, n, _MODES[dt.kind], int(side == "right"), int(sorter is not None),
             _buf(flat_a), _buf(sorter), _buf(flat_v), _buf(out), _buf(err)],
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
        index, inverse, counts, values = _unique_runs(a, values, perm, return_index,
                                                      return_inverse, return_counts, equal_nan)
    result = (values,)
    if return_index:
        result += (index,)
    if return_inverse:
        result += (inverse,)
    if return_counts:
        result += (counts,)
    return result if len(result) > 1 else values


def _unique_runs(a, values, perm, return_index, return_inverse, return_counts, equal_nan):
    """unique's steps after the sort: (index, inverse, counts, values) from the sorted
    `values` and the sort's permutation `perm`. New values are counted per group, the
    counts scanned, their total read back; one more read writes every output but counts,
    which come from the run starts."""
    ctx = a.context
    n = a.size
    raw_dt = _raw_dtype(a.dtype)
    s = values.view(raw_dt)
    k, geo = _program(ctx, 8 * a.itemsize)
    if _variant(ctx) == "tile":
        local, per, scan = geo.tile_local, geo.tile_items, geo.scan_local
    else:
        local, per, scan = 1, _chunks(ctx, n, 1)[1], 1
    groups = -(-n // (local * per))
    offsets = _temp(ctx, groups + 1, np.uint32)
    mode, equal_nan = _MODES[a.dtype.kind], int(bool(equal_nan))
    _launch(ctx, k["unique_count"], groups * local, local,
            [n, per, mode, equal_nan, s.storage, offsets.storage], (s,), (offsets,))
    scan = min(scan, 1 << (offsets.size.bit_length() - 1))
    _launch(ctx, k["sort_scan"], scan, scan, [offsets.size, offsets.storage],
            writes=(offsets,))
    u = int(offsets[groups:].get()[0])
    out = _temp(ctx, u, raw_dt)
    index = _temp(ctx, u, np.int64) if return_index else None
    inverse = empty(a.shape, np.int64, context=ctx) if return_inverse else None
    starts = _temp(ctx, u, np.int64) if return_counts else None
    want = (1 if return_index else 0) | (2 if return_inverse else 0) | \
        (4 if return_counts else 0)
    _launch(ctx, k["unique_write"], groups * local, local,
            [n, per, mode, equal_nan, want, s.storage, _buf(perm), offsets.storage,
             out.storage, _buf(index), _buf(inverse), _buf(starts)],
            (s, perm, offsets), (out, index, inverse, starts))
    counts = None
    if return_counts:
        counts = _temp(ctx, u, np.int64)
        _launch(ctx, k["unique_counts"], _round_up(u, ctx.local_size), ctx.local_size,
                [u, n, starts.storage, counts.storage], (starts,), (counts,))
    return index, inverse, counts, out.view(a.dtype)


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
