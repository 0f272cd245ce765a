"""Sorting and searching against numpy: sort, argsort (exactly np.argsort(kind='stable')),
partition, argpartition, searchsorted, unique; every dtype, every kernel variant (the CPU's
serial chunks; the GPU's one-sweep tiles with decoupled look-back and by reduce-then-scan,
both forced on PoCL), the short-row kernel, layouts, errors.

The look-back is safe to force on PoCL: a work-group takes its tile number from an atomic
counter when it starts and waits only on lower numbers, held by work-groups that started
before it and that never wait on a later one, so no order or concurrency of work-groups
(PoCL's few threads, one work-group at a time) can deadlock it."""

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import errors, sorting

REAL = [np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32, np.uint32, np.int64,
        np.uint64, np.float16, np.float32, np.float64]
DTYPES = [*REAL, np.complex64, np.complex128]
SIZES = [0, 1, 2, 7, 300, 5000, 40000]


def _data(dtype, n, seed=0):
    """Duplicates throughout; floats with NaNs (both signs), infs and zeros of both signs;
    complex with NaN parts of every kind."""
    rng = np.random.default_rng(seed + n)
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return rng.random(n) > 0.5
    if dt.kind in "iu":
        info = np.iinfo(dt)
        wide = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        return np.where(rng.random(n) < 0.5, wide, rng.integers(0, 5, n).astype(dt))
    specials = np.array([np.nan, -np.nan, np.inf, -np.inf, 0.0, -0.0, 1.0, -1.0])
    if dt.kind == "f":
        x = np.round(rng.standard_normal(n) * 4, 1)
        pick = rng.random(n) < 0.2
        x[pick] = rng.choice(specials, pick.sum())
        return x.astype(dt)
    x = np.empty(n, dt)
    for part in (x.real, x.imag):
        part[...] = np.round(rng.standard_normal(n), 0)
        pick = rng.random(n) < 0.15
        part[pick] = rng.choice(specials, pick.sum())
    return x


def _bits(x):
    """The exact bits (so NaN payloads and -0.0 count)."""
    x = np.ascontiguousarray(x)
    return x.view(f"u{x.itemsize}") if x.itemsize <= 8 else x.view(np.uint64)


def _check_sorted(g_values, g_index, host, axis=-1):
    """values equal np.sort's, bit for bit equal to the stable sort's; argsort exact.

    (The oracle is kind='stable': numpy 2.4's default float16 sort on AVX-512 misplaces
    elements of arrays holding NaNs.)"""
    expected_index = np.argsort(host, axis=axis, kind="stable")
    if g_index is not None:
        got = g_index.get()
        assert got.dtype == np.int64
        np.testing.assert_array_equal(got, expected_index)
    if g_values is not None:
        got = g_values.get()
        expected = np.sort(host, axis=axis, kind="stable")
        assert got.dtype == host.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)
        flat = host.ravel() if axis is None else host
        stable = np.take_along_axis(flat, expected_index, axis=-1 if axis is None else axis)
        np.testing.assert_array_equal(_bits(got), _bits(stable))


@pytest.fixture(params=["serial", "tiles", "tiles-rts"])
def variant(request, monkeypatch):
    """Runs a test with the CPU kernels and again with the GPU tiles (on any device), by
    decoupled look-back and by reduce-then-scan (the ids with "tiles": marked gpu_paths)."""
    kind = "serial" if request.param == "serial" else "tile"
    monkeypatch.setattr(sorting, "_variant", lambda ctx: kind)
    if request.param == "tiles-rts":
        monkeypatch.setattr(sorting, "_lookback", lambda ctx, n: False)
    return request.param


@pytest.fixture
def gpu_tiles(monkeypatch):
    """The GPU passes (tiles) on any device (marks the test gpu_paths)."""
    monkeypatch.setattr(sorting, "_variant", lambda c: "tile")


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
def test_sort_argsort_1d(ctx, dtype, n):
    if np.dtype(dtype) in (np.float64, np.complex128) and not ctx.fp64:
        pytest.skip("no fp64")
    host = _data(dtype, n)
    g = ga.asarray(host, context=ctx)
    _check_sorted(ga.sort(g), ga.argsort(g), host)


@pytest.mark.parametrize("lookback", [True, False], ids=["lookback", "rts"])
@pytest.mark.parametrize("dtype", [np.uint8, np.int16, np.float16, np.int32, np.float32,
                                   np.uint64, np.float64, np.complex64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_tile_kernels(ctx, gpu_tiles, monkeypatch, dtype, lookback):
    """The GPU variant (8-bit digits, tiles of 256 x 16, 8 or 4 elements by element size)
    on sizes around the tile, by look-back and by reduce-then-scan, with its short-row
    kernel off, so the radix passes run for every size."""
    if np.dtype(dtype) in (np.float64, np.complex128) and not ctx.fp64:
        pytest.skip("no fp64")
    monkeypatch.setattr(sorting, "_lookback", lambda c, n: lookback)
    monkeypatch.setattr(sorting, "_rows_limit", lambda c, rows: 0)
    geo = sorting._geometry(ctx, 8 * np.dtype(dtype).itemsize)
    tile = geo.tile_local * geo.tile_items
    for n in (2, 300, tile - 1, tile, tile + 1, 2 * tile + 7, 5 * tile - 3):
        host = _data(dtype, n, seed=1)
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)


@pytest.mark.parametrize("dtype", [np.uint8, np.float16, np.float32, np.int64, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_warp_ranked_tiles(ctx, gpu_tiles, monkeypatch, dtype):
    """The tiles NVIDIA GPUs rank by warps (ballots, per-warp counters, one scan), their
    warps emulated through local memory, sorts by their own build without payloads (32- and
    64-bit keys read again to be placed): sizes around both builds' tiles, both digit paths
    of the first pass (a low digit that varies, one that does not), rows, reduce-then-scan."""
    if np.dtype(dtype) == np.complex64 and not ctx.fp64:
        pytest.skip("no fp64")
    monkeypatch.setattr(sorting, "WARP_EMULATED", True)
    monkeypatch.setattr(sorting, "_rows_limit", lambda c, rows: 0)
    width = 8 * np.dtype(dtype).itemsize
    geo, keys = sorting._geometry(ctx, width), sorting._geometry(ctx, width, keys_only=True)
    assert geo.rank == keys.rank == "warp-emulated"
    assert keys.reload == (width in (32, 64)) and not geo.reload
    tile = geo.tile_local * geo.tile_items
    for n in (2, tile - 1, tile + 1, 3 * tile + 5):
        host = _data(dtype, n, seed=4)
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)
    keys_tile = keys.tile_local * keys.tile_items
    for n in sorted({keys_tile - 1, keys_tile + 1} - {tile - 1, tile + 1}):
        host = _data(dtype, n, seed=9)
        _check_sorted(ga.sort(ga.asarray(host, context=ctx)), None, host)
    if np.dtype(dtype).kind == "i":  # the low digit the same everywhere: the first pass skips
        host = _data(dtype, 2 * tile + 3, seed=6) << 8
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)
    host = _data(dtype, 7 * 301, seed=8).reshape(7, 301)
    g = ga.asarray(host, context=ctx)
    _check_sorted(ga.sort(g, axis=0), ga.argsort(g, axis=0), host, axis=0)
    monkeypatch.setattr(sorting, "_lookback", lambda c, n: False)  # (past 2^29 elements)
    host = _data(dtype, 2 * tile + 5, seed=5)
    g = ga.asarray(host, context=ctx)
    _check_sorted(ga.sort(g), ga.argsort(g), host)


def test_warp_rank_probe_falls_back(ctx, gpu_tiles, monkeypatch):
    """A device that claims NVIDIA's warps but cannot build or run the PTX kernels (here the
    test device itself) fails the probe once and keeps sorting with the split ranking."""
    if ctx.device.nv_capability:
        pytest.skip("an NVIDIA device builds the PTX kernels: its probe passes")
    cls = type(ctx.device)
    monkeypatch.setattr(cls, "nv_capability", property(lambda self: (9, 0)))
    # (no verdict yet; monkeypatch puts back whatever the context held before)
    monkeypatch.setitem(ctx.state, ("sort_warp_rank", sorting.WARP_RANK), None)
    del ctx.state[("sort_warp_rank", sorting.WARP_RANK)]
    assert sorting._geometry(ctx, 32).rank == "split"
    assert ctx.state[("sort_warp_rank", sorting.WARP_RANK)] is False
    host = _data(np.float32, 9000, seed=3)
    g = ga.asarray(host, context=ctx)
    _check_sorted(ga.sort(g), ga.argsort(g), host)


def test_lookback_under_load(ctx, gpu_tiles):
    """Many tiles in flight at once on every compute unit: each waits on earlier ones."""
    host = _data(np.float32, 300_001, seed=3)
    g = ga.asarray(host, context=ctx)
    for _ in range(2):
        _check_sorted(ga.sort(g), ga.argsort(g), host)


def test_pooled_histograms_come_back_zeroed(ctx, gpu_tiles, monkeypatch):
    """GPU sorts count into histogram buffers from a pool of the context's, each zeroed
    after its last pass: a sort of rows (whose row digits' counts the host writes) and
    then sorts of other widths find them zeroed, and the pool stays bounded."""
    monkeypatch.setattr(sorting, "_rows_limit", lambda c, rows: 0)
    monkeypatch.setitem(ctx.state, "sort histograms", [])
    rows = _data(np.int32, 300 * 9, seed=2).reshape(300, 9)
    _check_sorted(ga.sort(ga.asarray(rows, context=ctx), axis=0),
                  ga.argsort(ga.asarray(rows, context=ctx), axis=0), rows, 0)
    for dtype in (np.uint8, np.float32, np.int64):
        host = _data(dtype, 5000, seed=4)
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)
    pool = ctx.state["sort histograms"]
    assert 1 <= len(pool) <= sorting._HIST_POOL
    for hist in pool:
        assert hist.size == sorting._HIST_WORDS and not hist.get().any()


@pytest.mark.parametrize("dtype", [np.uint16, np.int32, np.uint64, np.float32],
                         ids=lambda d: np.dtype(d).name)
def test_digit_boundaries(ctx, variant, dtype):
    """Keys that differ only in the bits on either side of each digit boundary (bits 7/8,
    15/16, ...) and in the top bit; passes run exactly for the digits that vary."""
    bits = 8 * np.dtype(dtype).itemsize
    ints = np.dtype(dtype).kind in "ui"
    rng = np.random.default_rng(5)
    for b in range(7, bits, 8):
        for lo, hi in ((b, b + 1), (b, b)):
            if hi >= bits:
                continue
            mask = (1 << lo) | (1 << hi)
            raw = rng.integers(0, 4, 3000, dtype=np.uint64) * (1 << lo) & mask
            host = raw.astype(f"u{bits // 8}").view(dtype) if ints else \
                (raw.astype(np.uint32) | 0x3F800000).view(np.float32)
            g = ga.asarray(host, context=ctx)
            _check_sorted(ga.sort(g), ga.argsort(g), host)
            if ints and np.dtype(dtype).kind == "u":
                k, geo = sorting._program(ctx, bits)
                passes = sorting._passes(ctx, k, geo, g, 0, bits, 3000, 1,
                                         sorting._variant(ctx) == "tile")
                assert [p.shift for p in passes] == sorted({lo // 8 * 8, hi // 8 * 8})


@pytest.mark.parametrize("limit", [0, 2048], ids=["radix", "rows"])
@pytest.mark.parametrize("shape", [(300, 5), (3, 2048), (17, 129), (2, 4000)])
def test_rows(ctx, variant, monkeypatch, shape, limit):
    """Many rows (row passes over several digits), rows through the local-memory kernel."""
    monkeypatch.setattr(sorting, "_rows_limit", lambda c, rows: limit)
    for dtype in (np.float32, np.int64):
        host = _data(dtype, shape[0] * shape[1]).reshape(shape)
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)


LAYOUTS = {
    "C": lambda a: a,
    "offset": lambda a: a[2:],  # contiguous, not from the start of its buffer
    "transposed": lambda a: a.T,
    "negative": lambda a: a[::-1, ..., ::-1],
    "sliced": lambda a: a[1:, ..., 1::2],
}


@pytest.mark.parametrize("layout", LAYOUTS)
@pytest.mark.parametrize("shape", [(37, 53), (5, 6, 7)])
def test_axes_and_layouts(ctx, variant, shape, layout):
    # (every dtype moves its axis through the same raw-bits copy: float32 stands for all)
    base = _data(np.float32, int(np.prod(shape))).reshape(shape)
    host = LAYOUTS[layout](base)
    g = LAYOUTS[layout](ga.asarray(base, context=ctx))
    for axis in (*range(len(shape)), -1, None):
        _check_sorted(ga.sort(g, axis=axis), ga.argsort(g, axis=axis), host, axis)


def test_skipped_passes_and_edge_values(ctx, variant):
    """Digits equal for every key skip their pass: constants, small ranges, one varying
    high byte; the extreme values of each integer type."""
    cases = [np.full(1000, 7, np.int64), np.zeros(5, np.float32), np.arange(3000, 0, -1),
             (np.arange(4000) % 3 << 40).astype(np.uint64), np.full(700, np.nan, np.float32)]
    for dtype in (np.int8, np.uint16, np.int32, np.uint32, np.int64, np.uint64):
        info = np.iinfo(dtype)
        cases.append(np.array([info.max, info.min, 0, 1, info.max, info.min, 0], dtype))
    for host in cases:
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)
    # rows whose keys need no pass: no pass runs (the elements stay in their rows)
    for host in (np.full((300, 7), 3, np.int32),
                 np.arange(2400, dtype=np.float32).reshape(3, 800) % 2):
        g = ga.asarray(host, context=ctx)
        for axis in (0, 1):
            _check_sorted(ga.sort(g, axis=axis), ga.argsort(g, axis=axis), host, axis)


def test_0d_and_empty_shapes(ctx):
    z = ga.asarray(np.array(3.5, np.float32), context=ctx)
    np.testing.assert_array_equal(ga.sort(z, axis=None).get(), [3.5])
    np.testing.assert_array_equal(ga.argsort(z, axis=None).get(), [0])
    with pytest.raises(errors.AxisError, match="axis -1 is out of bounds for array of "
                                                "dimension 0"):
        ga.sort(z)
    e = ga.zeros((3, 0, 2), np.float32, context=ctx)
    for axis in (0, 1, 2, None):
        assert ga.sort(e, axis=axis).shape == np.sort(np.zeros((3, 0, 2)), axis=axis).shape
        assert ga.argsort(e, axis=axis).dtype == np.int64


def test_array_likes_methods_and_errors(ctx):
    np.testing.assert_array_equal(ga.sort([3, 1, 2]).get(), [1, 2, 3])
    host = _data(np.float32, 60).reshape(6, 10)
    g = ga.asarray(host, context=ctx)
    view = g[::-1, 1::2]
    view.sort(axis=0)  # in place, through a view
    expected = host.copy()
    expected[::-1, 1::2] = np.sort(host[::-1, 1::2], axis=0)
    np.testing.assert_array_equal(g.get(), expected)
    np.testing.assert_array_equal(g.argsort(axis=1).get(), np.argsort(expected, 1, kind="stable"))
    assert ga.sort(g, kind="quicksort").shape == g.shape
    assert ga.argsort(g, stable=False).shape == g.shape
    with pytest.raises(errors.ArgumentError, match=r"sort kind must be one of .*'bogus'"):
        ga.sort(g, kind="bogus")
    with pytest.raises(errors.ArgumentError, match="`kind` and `stable`"):
        ga.argsort(g, kind="stable", stable=True)
    with pytest.raises(errors.ArgumentError, match="order"):
        ga.sort(g, order="x")
    with pytest.raises(errors.AxisError, match="axis 2 is out of bounds"):
        ga.argsort(g, axis=2)
    with pytest.raises(errors.ArgumentTypeError, match="integer axis"):
        g.sort(axis=None)
    ro = ga.broadcast_to(ga.asarray(np.arange(3.0), context=ctx), (2, 3))
    with pytest.raises(errors.ReadOnlyError):
        ro.sort()


@pytest.mark.parametrize("dtype", [np.int8, np.uint64, np.float32, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_partition(ctx, dtype):
    host = _data(dtype, 24 * 31).reshape(24, 31)
    g = ga.asarray(host, context=ctx)
    for kth, axis in ((5, 0), ([0, 7, -1], 0), (30, 1), (-3, -1), (100, None)):
        part = ga.partition(g, kth, axis=axis).get()
        index = ga.argpartition(g, kth, axis=axis).get()
        flat = host.ravel() if axis is None else host
        ax = -1 if axis is None else axis
        for got in (part, np.take_along_axis(flat, index, axis=ax)):
            ref = np.sort(flat, axis=ax)
            for k in np.atleast_1d(kth):
                pivot = np.take(got, [k], axis=ax)
                np.testing.assert_array_equal(pivot, np.take(ref, [k], axis=ax))
                n = flat.shape[ax]
                k %= n
                before = np.take(got, range(k), axis=ax)
                after = np.take(got, range(k + 1, n), axis=ax)
                # numpy's order, NaNs last: compare as positions in the sorted order
                assert np.all(_rank(before, ref, ax) <= _rank(pivot, ref, ax))
                assert np.all(_rank(after, ref, ax) >= _rank(pivot, ref, ax))
        np.testing.assert_array_equal(np.sort(index, axis=ax),
                                      np.sort(np.argsort(flat, axis=ax), axis=ax))
    g.partition(3, axis=1)
    np.testing.assert_array_equal(g.get()[:, 3], np.sort(host, axis=1)[:, 3])
    with pytest.raises(errors.ArgumentError, match=r"kth\(=31\) out of bounds \(31\)"):
        ga.partition(g, 31)
    with pytest.raises(errors.ArgumentError, match="select kind must be 'introselect'"):
        ga.argpartition(g, 1, kind="quick")
    with pytest.raises(errors.ArgumentTypeError, match="Partition index must be integer"):
        ga.partition(g, 1.5)


def _rank(values, ref, axis):
    """Where each of `values` sits in the sorted `ref` (per row), NaNs last."""
    ref_t, val_t = np.moveaxis(ref, axis, -1), np.moveaxis(values, axis, -1)
    out = np.empty(val_t.shape, np.int64)
    for row in np.ndindex(ref_t.shape[:-1]):
        out[row] = np.searchsorted(ref_t[row], val_t[row], side="left")
    return out


@pytest.mark.parametrize("dtype", [np.int8, np.uint64, np.float16, np.float32, np.complex64],
                         ids=lambda d: np.dtype(d).name)
def test_searchsorted(ctx, dtype):
    host = _data(dtype, 3000)
    sorter = np.argsort(host, kind="stable")
    a_sorted = np.sort(host)
    v = np.concatenate([_data(dtype, 200, seed=5), host[:50]]).reshape(10, 25)
    g_sorted = ga.asarray(a_sorted, context=ctx)
    g_host = ga.asarray(host, context=ctx)
    g_sorter = ga.asarray(sorter, context=ctx)
    g_v = ga.asarray(v, context=ctx)
    for side in ("left", "right"):
        expected = np.searchsorted(a_sorted, v, side=side)
        got = ga.searchsorted(g_sorted, g_v, side=side)
        assert got.shape == v.shape and got.dtype == np.int64
        np.testing.assert_array_equal(got.get(), expected)
        np.testing.assert_array_equal(g_sorted.searchsorted(v[1:4, ::3], side).get(),
                                      np.searchsorted(a_sorted, v[1:4, ::3], side))
        np.testing.assert_array_equal(
            ga.searchsorted(g_host, g_v, side=side, sorter=g_sorter).get(),
            np.searchsorted(host, v, side=side, sorter=sorter))
        np.testing.assert_array_equal(
            ga.searchsorted(g_host, g_v, side=side, sorter=sorter.tolist()).get(), expected)
        scalar = ga.searchsorted(g_sorted, v[0, 0], side=side)
        assert scalar.shape == () and int(scalar) == np.searchsorted(a_sorted, v[0, 0], side)
    if dtype == np.float32:  # views with offsets and strides (their copies are per width)
        np.testing.assert_array_equal(
            ga.searchsorted(g_sorted[7:], g_v[2:, ::-2], side="right").get(),
            np.searchsorted(a_sorted[7:], v[2:, ::-2], side="right"))
        half = np.argsort(host[::2], kind="stable")
        g_half = ga.asarray(np.concatenate([[9, 9, 9], half]), context=ctx)[3:]
        np.testing.assert_array_equal(ga.searchsorted(g_host[::2], g_v[3], sorter=g_half).get(),
                                      np.searchsorted(host[::2], v[3], sorter=half))
    empty = ga.asarray(np.zeros(0, dtype), context=ctx)
    np.testing.assert_array_equal(ga.searchsorted(empty, g_v).get(), np.zeros(v.shape))
    assert ga.searchsorted(g_sorted, g_v[:0]).shape == (0, 25)


@pytest.mark.parametrize("n", [4096, 9001, 70001], ids=lambda n: f"n{n}")
@pytest.mark.parametrize("dtype", [np.int16, np.float32, np.int64, np.complex128],
                         ids=lambda d: np.dtype(d).name)
def test_searchsorted_sampled(ctx, dtype, n):
    """Long sorted arrays (samples in local memory take the first steps): repeated values,
    NaNs at the end, queries equal to sampled elements, a query count that fills no
    work-group."""
    if np.dtype(dtype) == np.complex128 and not ctx.fp64:
        pytest.skip("no fp64")
    a = np.sort(_data(dtype, n, seed=2))
    v = np.concatenate([_data(dtype, 1500, seed=9), a[::97], a[-3:]])
    g_a, g_v = ga.asarray(a, context=ctx), ga.asarray(v, context=ctx)
    for side in ("left", "right"):
        np.testing.assert_array_equal(ga.searchsorted(g_a, g_v, side=side).get(),
                                      np.searchsorted(a, v, side=side))


def test_searchsorted_promotion_and_errors(ctx):
    host = np.arange(-3, 4, dtype=np.int8)
    a = ga.asarray(host, context=ctx)
    # Python numbers are weak, out-of-range ints widen (numpy's answers); each dtype a cast
    for v, dtype in ((300, np.int32), (-300, np.int16), (2, np.int8), (2.5, np.float64),
                     (np.float32(-1.5), np.float32), ([1, 70000], np.int64)):
        assert sorting._search_dtype(host.dtype, v) == dtype
    for v in (300, -300, 2, 2.5) if ctx.fp64 else (300, -300, 2):
        np.testing.assert_array_equal(ga.searchsorted(a, v).get(), np.searchsorted(host, v))
    with pytest.raises(errors.ShapeError, match="object too deep"):
        ga.searchsorted(ga.zeros((2, 2), context=ctx), 1)
    with pytest.raises(errors.ArgumentError, match="search side must be 'left' or 'right'"):
        ga.searchsorted(a, 1, side="middle")
    with pytest.raises(errors.ArgumentError, match="Sorter index out of range"):
        ga.searchsorted(a, 1, sorter=[0, 1, 2, 3, 4, 5, 7])
    with pytest.raises(errors.ShapeError, match=r"sorter\.size must equal a\.size"):
        ga.searchsorted(a, 1, sorter=[0, 1])
    with pytest.raises(errors.ArgumentTypeError, match="sorter must only contain integers"):
        ga.searchsorted(a, 1, sorter=np.arange(7.0))


NUMPY1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"
FLAGS = [(i, v, c) for i in (False, True) for v in (False, True) for c in (False, True)]


@pytest.mark.parametrize("dtype", [np.bool_, np.int32, np.uint64, np.float16, np.float32,
                                   np.complex64], ids=lambda d: np.dtype(d).name)
def test_unique(ctx, variant, dtype):
    for shape in ((0,), (), (1,), (1000,), (40, 70)):
        host = _data(dtype, int(np.prod(shape))).reshape(shape)
        g = ga.asarray(host, context=ctx)
        for flags in FLAGS:
            expected = np.unique(host, *flags)
            got = ga.unique(g, *flags)
            if not any(flags):
                expected, got = (expected,), (got,)
            assert len(got) == len(expected)
            for k, (e, r) in enumerate(zip(expected, got)):
                r = r.get()
                if NUMPY1 and flags[1] and k == 1 + flags[0]:
                    r = r.ravel()  # numpy 1.x: a flat inverse; numpy 2 and gpuarr: host's shape
                assert r.dtype == e.dtype and r.shape == e.shape, (flags, r.shape, e.shape)
                np.testing.assert_array_equal(r, e)
        for equal_nan in (False, True):
            e_vals, e_counts = np.unique(host, return_counts=True, equal_nan=equal_nan)
            vals, counts = ga.unique(g, return_counts=True, equal_nan=equal_nan)
            np.testing.assert_array_equal(vals.get(), e_vals)
            np.testing.assert_array_equal(counts.get(), e_counts)


@pytest.mark.parametrize("n", [4095, 4097, 40000])
def test_unique_across_groups(ctx, variant, n):
    """Runs of one value across the unique kernels' groups (4096 elements on GPUs, chunks
    of 16384 or more on CPUs) and many short runs."""
    rng = np.random.default_rng(n)
    for host in (np.repeat(rng.integers(0, 9, 9), n // 9 + 1)[:n].astype(np.int32),
                 rng.integers(0, n // 2, n).astype(np.float32)):
        got = ga.unique(ga.asarray(host, context=ctx), True, True, True)
        for r, e in zip(got, np.unique(host, True, True, True)):
            np.testing.assert_array_equal(r.get().reshape(e.shape), e)


def test_unique_axis_is_unsupported(ctx):
    g = ga.zeros((3, 3), context=ctx)
    with pytest.raises(errors.UnsupportedError, match=r"unique\(axis=0\)"):
        ga.unique(g, axis=0)


def test_unique_of_views(ctx):
    host = _data(np.float32, 3000).reshape(60, 50)
    g = ga.asarray(host, context=ctx)
    for view in (lambda a: a[3:], lambda a: a[::-2, 5:]):
        got = ga.unique(view(g), return_index=True, return_inverse=True, return_counts=True)
        for r, e in zip(got, np.unique(view(host), True, True, True)):
            r = r.get().reshape(e.shape) if NUMPY1 else r.get()  # numpy 1.x: a flat inverse
            np.testing.assert_array_equal(r, e)


def test_small_geometry(ctx, gpu_tiles, monkeypatch):
    """Tiles of 64 x 2, scans of 64 and rows of at most 256, as a device with little local
    memory would take them (one more build, for float32)."""
    monkeypatch.setattr(sorting, "_geometry",
                        lambda c, width, keys_only=False: sorting._Geometry(64, 2, 64, 256, 64))
    for shape in ((5000,), (3, 300), (40, 256), (7, 3)):
        host = _data(np.float32, int(np.prod(shape))).reshape(shape)
        g = ga.asarray(host, context=ctx)
        _check_sorted(ga.sort(g), ga.argsort(g), host)
