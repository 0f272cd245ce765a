"""The row gather (x[idx] with a 1-d integer index on the first axis, take(axis=0)) against
numpy: gpuarr/kernels/gather_rows.cl.mako moves whole rows as 16-, 8-, 4-, 2- or 1-byte
vectors, chosen from the row's bytes, the offsets and the row step; rows of other layouts
go through the general gather. Both work-group shapes (a work-item per row on CPUs, a
work-group across the row on GPUs) run on any device."""

import dataclasses

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import indexing
from gpuarr.errors import IndexOutOfRange


@pytest.fixture(params=["cpu", "gpu"])
def rows_taken(request, ctx, monkeypatch):
    """Runs a test with each work-group shape; yields the list of _take_rows' answers."""
    monkeypatch.setattr(ctx, "device", dataclasses.replace(
        ctx.device, type="GPU" if request.param == "gpu" else "CPU"))
    answers = []
    real = indexing._take_rows

    def spy(*args):
        answers.append(real(*args))
        return answers[-1]
    monkeypatch.setattr(indexing, "_take_rows", spy)
    return answers


def _host(dtype, shape, seed=0):
    x = np.random.default_rng(seed).standard_normal(shape) * 50
    return (x > 0) if dtype == np.bool_ else x.astype(dtype)


# (dtype, row shape): row bytes 1, 3, 8, 12, 16, 24, 256, 2000 and a 3-d row of 40 bytes
ROWS = [(np.uint8, (1,)), (np.int8, (3,)), (np.float32, (2,)), (np.int32, (3,)),
        (np.complex64, (2,)), (np.float64, (3,)), (np.float32, (64,)), (np.bool_, (2000,)),
        (np.int16, (4, 5)), (np.complex128, (5,))]


@pytest.mark.parametrize("dtype, row", ROWS, ids=lambda v: str(v) if isinstance(v, tuple)
                         else np.dtype(v).name)
def test_rows_match_numpy(ctx, rows_taken, dtype, row):
    h = _host(dtype, (37, *row))
    g = ga.asarray(h, context=ctx)
    idx = np.random.default_rng(1).integers(-37, 37, 300)
    # contiguous, offset (a misaligned start), every third row, reversed rows
    for view in (lambda a: a, lambda a: a[1:], lambda a: a[::3], lambda a: a[::-2]):
        hv, gv = view(h), view(g)
        i = idx % hv.shape[0] - (idx < 0) * hv.shape[0]  # negative indices stay in range
        np.testing.assert_array_equal(gv[i].get(), hv[i])
        np.testing.assert_array_equal(ga.take(gv, i, axis=0).get(), np.take(hv, i, axis=0))
    assert all(rows_taken), rows_taken


def test_index_sources_modes_and_errors(ctx, rows_taken):
    h = _host(np.float32, (50, 64))
    g = ga.asarray(h, context=ctx)
    idx = np.random.default_rng(2).integers(-50, 50, 257)
    for dtype in (np.int8, np.uint8, np.int16, np.int32, np.uint32, np.int64):
        i = idx.astype(dtype) if np.dtype(dtype).kind == "i" else (idx % 50).astype(dtype)
        gi = ga.asarray(np.repeat(i, 2), context=ctx)[::2]  # a strided device index
        np.testing.assert_array_equal(g[gi].get(), h[i.astype(np.int64)])
    for mode in ("wrap", "clip"):
        np.testing.assert_array_equal(ga.take(g, idx * 7, axis=0, mode=mode).get(),
                                      np.take(h, idx * 7, axis=0, mode=mode))
    out = ga.zeros((257, 64), np.float32, context=ctx)
    ga.take(g, idx, axis=0, out=out)
    np.testing.assert_array_equal(out.get(), h[idx])
    assert g[np.zeros(0, np.int64)].shape == (0, 64)
    assert g[:, :0][idx].shape == (257, 0)
    with pytest.raises(IndexOutOfRange, match="index 50 is out of bounds for axis 0 with "
                                               "size 50"):
        ga.take(g, [0, 50, 1], axis=0, out=out[:3])
    with pytest.raises(IndexOutOfRange, match="index -51 is out of bounds for axis 0"):
        g[np.array([-51])]
    np.testing.assert_array_equal(g[[3, -1]].get(), h[[3, -1]])  # the flag was cleared
    assert all(rows_taken), rows_taken


def test_other_layouts_take_the_general_gather(ctx, rows_taken):
    """Rows that are not contiguous (strided, transposed), two indices, an index on
    another axis or of two dimensions take the general gather; a contiguous part of each
    row (x[i, 2:5]) is a row gather."""
    h = _host(np.float32, (20, 30))
    g = ga.asarray(h, context=ctx)
    i = np.array([3, 0, 19, 3])
    for got, want in ((g[:, ::2][i], h[:, ::2][i]), (g.T[i[:2]], h.T[i[:2]]),
                      (g[i, 2:5], h[i, 2:5]), (g[i, i], h[i, i]), (g[:, i], h[:, i]),
                      (g[i.reshape(2, 2)], h[i.reshape(2, 2)])):
        np.testing.assert_array_equal(got.get(), want)
    assert rows_taken == [False, False, True, False, False, False]
