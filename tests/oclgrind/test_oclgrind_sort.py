"""The sorting family's kernels under Oclgrind (see conftest.py; .ci/run's Oclgrind step):
the one-sweep passes with decoupled look-back (Oclgrind's device is a GPU, so they are its
default; also ranked by emulated warps, as on NVIDIA), the same passes by reduce-then-scan,
the CPU's serial passes, unique, searchsorted and the row gather. Sizes reach several tiles,
a ragged last tile, skipped digits and the row passes; Oclgrind runs work-groups one at a
time, so a look-back never waits there, but every access to the look-back words is checked
(they are atomics: no race to report)."""

import dataclasses

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import sorting

RNG = np.random.default_rng(11)


@pytest.fixture(params=["lookback", "reduce-then-scan", "serial"])
def sort_path(request, ctx, monkeypatch):
    if request.param == "reduce-then-scan":
        monkeypatch.setattr(sorting, "_lookback", lambda c, n: False)
    elif request.param == "serial":
        monkeypatch.setattr(sorting, "_variant", lambda c: "serial")
    return request.param


def test_sort_passes(ctx, sort_path):
    # float32: tiles of 2048 here (8 x 256), so 4500 is two whole tiles and a ragged one
    h = np.round(RNG.standard_normal(4500) * 100).astype(np.float32)
    h[::7] = np.nan
    x = ga.asarray(h, context=ctx)
    np.testing.assert_array_equal(ga.sort(x).get(), np.sort(h))
    np.testing.assert_array_equal(ga.argsort(x).get(), np.argsort(h, kind="stable"))
    u = (RNG.integers(0, 1 << 20, 2100) << 24).astype(np.uint64)  # 3 of 8 digits vary
    np.testing.assert_array_equal(ga.argsort(ga.asarray(u, context=ctx)).get(),
                                  np.argsort(u, kind="stable"))


def test_warp_ranked_tiles(ctx, monkeypatch):
    # NVIDIA's ranking by warps, the warps emulated through local memory: counters, digit
    # masks and the tile share one buffer; a ragged second tile (tiles of 256 x 11 here,
    # Oclgrind's 32 KiB of local memory), in argsorts and in a sort's own build without
    # payloads
    monkeypatch.setattr(sorting, "WARP_EMULATED", True)
    assert sorting._geometry(ctx, 32).rank == "warp-emulated"
    h = np.round(RNG.standard_normal(3077) * 100).astype(np.float32)
    h[::7] = np.nan
    x = ga.asarray(h, context=ctx)
    np.testing.assert_array_equal(ga.argsort(x).get(), np.argsort(h, kind="stable"))
    np.testing.assert_array_equal(ga.sort(x).get(), np.sort(h))


def test_row_passes_and_unique(ctx, sort_path, monkeypatch):
    monkeypatch.setattr(sorting, "_rows_limit", lambda c, rows: 0)  # rows by radix passes
    h = RNG.integers(-3, 3, (300, 7)).astype(np.int16)  # 300 rows: two row digits
    x = ga.asarray(h, context=ctx)
    np.testing.assert_array_equal(ga.argsort(x, axis=1).get(), np.argsort(h, 1, kind="stable"))
    np.testing.assert_array_equal(ga.sort(x, axis=0).get(), np.sort(h, axis=0))
    for got, want in zip(ga.unique(x, True, True, True), np.unique(h, True, True, True)):
        np.testing.assert_array_equal(got.get().reshape(want.shape), want)


def test_searchsorted(ctx):
    a = np.sort(RNG.standard_normal(1000).astype(np.float32))
    v = RNG.standard_normal(300).astype(np.float32)
    ga_a, ga_v = ga.asarray(a, context=ctx), ga.asarray(v, context=ctx)
    for side in ("left", "right"):
        np.testing.assert_array_equal(ga.searchsorted(ga_a, ga_v, side).get(),
                                      np.searchsorted(a, v, side))
    perm = RNG.permutation(1000)  # a[perm] sorted by argsort(perm)
    np.testing.assert_array_equal(
        ga.searchsorted(ga.asarray(a[perm], context=ctx), ga_v,
                        sorter=ga.asarray(np.argsort(perm), context=ctx)).get(),
        np.searchsorted(a, v))


@pytest.mark.parametrize("shape", [(40, 64), (30, 3), (20, 2, 5)])
def test_row_gather(ctx, monkeypatch, shape):
    h = RNG.standard_normal(shape).astype(np.float32)
    i = RNG.integers(-shape[0], shape[0], 50)
    for kind in ("GPU", "CPU"):
        monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, type=kind))
        x = ga.asarray(h, context=ctx)
        np.testing.assert_array_equal(x[i].get(), h[i])
        np.testing.assert_array_equal(x[1:][i % (shape[0] - 1)].get(), h[1:][i % (shape[0] - 1)])
        with pytest.raises(IndexError, match="out of bounds"):
            x[np.array([0, shape[0]])]
