"""gpuarr.fft against numpy.fft: every length up to 1024, primes (Bluestein), powers of two,
n-d transforms, norms, real and Hermitian transforms, views, out=, dtypes, errors, numpy's
dispatch and the Array API extension.

Accuracy is the relative L2 error against a float64 (or long double) reference, bounded by
10x numpy's own error there, or 10x the precision's unit roundoff where numpy's is smaller
(see ROUNDING).
"""

import dataclasses
import inspect
import re

import numpy as np
import pytest
from conftest import USABLE

import gpuarr as ga
from gpuarr import errors as E
from gpuarr import fft as gfft
from gpuarr.caches import Cache
from gpuarr.kernels import render

FP64 = USABLE[0].fp64
needs_fp64 = pytest.mark.skipif(not FP64, reason="the device has no float64")
# Floors of numpy's error: the unit roundoff of each precision. numpy 2 computes complex64
# transforms in float64, so its error there is the final rounding alone (2.5e-8), below what
# a float32 computation reaches (scipy.fft's float32 pocketfft: 1.1e-7 .. 3.3e-7).
ROUNDING = {np.complex64: 2.0**-24, np.complex128: 2.0**-53}


def rel(got, want):
    got, want = np.asarray(got), np.asarray(want)
    return float(np.linalg.norm((got - want).ravel()) / max(np.linalg.norm(want.ravel()), 1e-300))


def cdata(shape, dtype=np.complex64, seed=0):
    rng = np.random.default_rng(seed)
    return (rng.standard_normal(shape) + 1j * rng.standard_normal(shape)).astype(dtype)


def rdata(shape, dtype=np.float32, seed=0):
    return np.random.default_rng(seed).standard_normal(shape).astype(dtype)


def dev(ctx, h):
    return ga.asarray(h, context=ctx)


def longdouble_dft(x, inverse=False):
    """The DFT of x along its last axis in long double (O(n^2)): a reference independent of
    numpy's FFT."""
    n = x.shape[-1]
    k = np.arange(n)
    t = (np.outer(k, k) % n).astype(np.longdouble)
    angle = 2 * np.longdouble("3.14159265358979323846264338327950288") * t / n
    w = np.cos(angle) + (1j if inverse else -1j) * np.sin(angle)
    out = x.astype(np.clongdouble) @ w.T
    return out / n if inverse else out


def check_accuracy(got, x, fn, reference=None, **kw):
    """`got` (gpuarr's fn(x)) within 10x numpy's error of the float64 reference."""
    ref = fn(x.astype(np.result_type(x.dtype, np.float64)), **kw) if reference is None \
        else reference
    floor = ROUNDING[np.complex64 if np.asarray(got).dtype in (np.complex64, np.float32)
                     else np.complex128]
    numpy_err = rel(fn(x, **kw), ref)
    err = rel(got, ref)
    assert err <= 10 * max(numpy_err, floor), (err, numpy_err)
    return err


# ---------------------------------------------------------------- complex, any length

def test_every_length_to_1024(ctx):
    """Two rows of each length 1..1024, complex64 forward: mixed radix and Bluestein."""
    for n in range(1, 1025):
        x = cdata((2, n), seed=n)
        got = gfft.fft(dev(ctx, x)).get()
        assert got.dtype == np.complex64 and got.shape == (2, n)
        check_accuracy(got, x, np.fft.fft)


@pytest.mark.parametrize("n", [1, 2, 7, 16, 60, 97, 128, 243, 512, 1000, 1031])
@needs_fp64
def test_complex128_against_long_double(ctx, n):
    x = cdata(n, np.complex128, seed=n)
    for fn, inverse in ((gfft.fft, False), (gfft.ifft, True)):
        ref = longdouble_dft(x, inverse)
        got = fn(dev(ctx, x)).get()
        assert got.dtype == np.complex128
        check_accuracy(got, x, np.fft.ifft if inverse else np.fft.fft, reference=ref)


@pytest.mark.parametrize("n", [17, 101, 1009, 4099, 10007])
def test_primes_bluestein(ctx, n):
    x = cdata(n, seed=n)
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)
    check_accuracy(gfft.ifft(dev(ctx, x)).get(), x, np.fft.ifft)
    if FP64:
        x = cdata(n, np.complex128, seed=n)
        assert rel(gfft.fft(dev(ctx, x)).get(), np.fft.fft(x)) < 1e-14


@pytest.mark.slow
def test_every_prime_to_10007(ctx):
    primes = [p for p in range(2, 10008) if all(p % q for q in range(2, int(p**0.5) + 1))]
    for n in primes:
        x = cdata(n, seed=n)
        check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)


@pytest.mark.parametrize("k", [12, 16, pytest.param(20, marks=pytest.mark.slow),
                               pytest.param(22, marks=pytest.mark.slow),
                               pytest.param(24, marks=pytest.mark.slow)])
def test_powers_of_two(ctx, k):
    x = cdata(1 << k, seed=k)
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)
    if k <= 16:
        check_accuracy(gfft.ifft(dev(ctx, x)).get(), x, np.fft.ifft)


@pytest.mark.parametrize("shape", [(2, 8192), (3, 2**16 * 3), (1, 110592), (2, 35000)])
def test_four_step_split(ctx, shape, monkeypatch):
    """Long rows as rows of their first passes, then rows of the rest, in local memory."""
    monkeypatch.setitem(gfft.ROWS, "gpu" if ctx.device.is_gpu else "cpu", True)
    x = cdata(shape, seed=shape[1])
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)
    check_accuracy(gfft.ifft(dev(ctx, x)).get(), x, np.fft.ifft)
    r = x.real.copy()
    check_accuracy(gfft.rfft(dev(ctx, r)).get(), r, np.fft.rfft)
    p = 4099  # Bluestein over a split transform of 8960
    check_accuracy(gfft.fft(dev(ctx, x[:, :p])).get(), x[:, :p], np.fft.fft)


@pytest.fixture
def gpu_choices(ctx, monkeypatch):
    """The GPU's choices on whatever device runs the tests (its work-group sizes, the split
    on, fft_rows_pow2), with fresh plans; restored afterwards, and the programs and kernels
    it built (of other local sizes) forgotten."""
    if not ctx.device.is_gpu:
        monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, type="GPU"))
    monkeypatch.setattr(ctx, "plans", {})
    monkeypatch.setattr(gfft, "PREVIOUS", False)
    monkeypatch.setitem(gfft.ROWS, "gpu", True)
    monkeypatch.setitem(gfft.BLOCK, "gpu", False)  # fft_rows: where fft_block does not apply
    for name in ("programs", "kernels"):
        monkeypatch.setattr(ctx, name, Cache(name, getattr(ctx, name).maxsize))
    return ctx


@pytest.mark.parametrize("elements, group, shape", [
    (512, 2, (1, 2**18)),  # 16 x 16 | 16 x 16 | 4: rows, rows, a global pass
    (128, 2, (1, 45360)),  # 16 | 9 | 9 x 5 | 7: global passes around fft_rows
    (128, 2, (1, 2**14)),  # 16 | 16 | 16 x 4: two global passes, then rows
    (2048, 4, (1, 8192)),  # 16 x 16 | 16 x 2
    (512, 4, (2, 2**18)),  # a batch: the two-segment split
])
def test_split_segments(gpu_choices, monkeypatch, elements, group, shape):
    """Long rows as three or more segments of their passes (the GPU's split), each
    direction, a strided output and complex128."""
    ctx = gpu_choices
    monkeypatch.setitem(gfft.ROWS_ELEMENTS, "gpu", elements)
    monkeypatch.setitem(gfft.ROWS_GROUP, "gpu", group)
    x = cdata(shape, seed=shape[1])
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)
    check_accuracy(gfft.ifft(dev(ctx, x), norm="ortho").get(), x, np.fft.ifft, norm="ortho")
    out = ga.zeros((shape[0], 2 * shape[1]), np.complex64, context=ctx)
    gfft.fft(dev(ctx, x[:, ::-1]), out=out[:, ::2])
    check_accuracy(out.get()[:, ::2], x[:, ::-1], np.fft.fft)
    if FP64 and shape[1] == 2**14:
        x2 = x.astype(np.complex128)
        check_accuracy(gfft.fft(dev(ctx, x2)).get(), x2, np.fft.fft)


@pytest.mark.parametrize("shape, axis", [((64, 1024), -1), ((1024, 36), 0), ((9, 4096), -1),
                                         ((4096, 3), 0), ((16, 96), -1), ((3, 256, 8), 1)])
def test_gpu_rows(gpu_choices, shape, axis):
    """Whole rows in local memory with the GPU's choices: fft_rows_pow2 (padded local
    indices) on rows and interleaved columns, fft_rows for the other radices."""
    ctx = gpu_choices
    x = cdata(shape, seed=sum(shape))
    check_accuracy(gfft.fft(dev(ctx, x), axis=axis).get(), x, np.fft.fft, axis=axis)
    check_accuracy(gfft.ifft(dev(ctx, x), axis=axis).get(), x, np.fft.ifft, axis=axis)
    r = x.real.copy()
    check_accuracy(gfft.rfft(dev(ctx, r), axis=axis).get(), r, np.fft.rfft, axis=axis)


def test_gpu_bluestein_and_2d(gpu_choices):
    ctx = gpu_choices
    x = cdata(10007, seed=5)
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)
    y = cdata((256, 512), seed=6)
    check_accuracy(gfft.fft2(dev(ctx, y)).get(), y, np.fft.fft2)


@pytest.fixture
def block_on(ctx, monkeypatch):
    """fft_block (the GPUs' kernels per row length) on whatever device runs the tests, with
    fresh plans and schedules."""
    monkeypatch.setitem(gfft.BLOCK, "gpu" if ctx.device.is_gpu else "cpu", True)
    monkeypatch.setattr(ctx, "plans", Cache("plans", ctx.plans.maxsize))
    return ctx


@pytest.mark.parametrize("shape, axis, elements", [
    ((5, 1000), -1, 8192),   # whole rows (8 x 25 x 5: butterflies past the last row's)
    ((1000, 5), 0, 8192),    # whole interleaved rows (columns)
    ((3, 2, 64), 1, 8192),   # two batch dimensions, rows of 16 x 4
    ((3, 20000), -1, 8192),  # two segments of long rows, each row on launch dimension 2
    ((20000, 3), 0, 8192),   # segments of columns: the columns fastest, k1 on dimension 1
    ((1, 2**14), -1, 256),   # three segments of one row
    ((2**14, 2), 0, 256),    # three segments of columns
])
def test_block_kernels(block_on, shape, axis, elements, monkeypatch):
    """fft_block's launches: whole rows and segments, rows and columns, each direction,
    real transforms, a reversed view into a strided out=, and the replayed schedule of a
    second call on new data."""
    ctx = block_on
    monkeypatch.setattr(gfft, "BLOCK_ELEMENTS", elements)
    x = cdata(shape, seed=sum(shape))
    check_accuracy(gfft.fft(dev(ctx, x), axis=axis).get(), x, np.fft.fft, axis=axis)
    check_accuracy(gfft.ifft(dev(ctx, x), axis=axis, norm="ortho").get(), x, np.fft.ifft,
                   axis=axis, norm="ortho")
    y = cdata(shape, seed=1)
    check_accuracy(gfft.fft(dev(ctx, y), axis=axis).get(), y, np.fft.fft, axis=axis)
    r = x.real.copy()
    check_accuracy(gfft.rfft(dev(ctx, r), axis=axis).get(), r, np.fft.rfft, axis=axis)
    view = tuple(slice(None, None, -1) if d == (axis % x.ndim) else slice(None)
                 for d in range(x.ndim))
    out = ga.zeros((*shape[:-1], 2 * shape[-1]), np.complex64, context=ctx)
    for data in (x, y):
        gfft.fft(dev(ctx, data)[view], axis=axis, out=out[..., ::2])
        check_accuracy(out.get()[..., ::2], data[view], np.fft.fft, axis=axis)


def test_block_bluestein_and_complex128(block_on):
    """Bluestein over fft_block segments (m = 20480), and complex128 rows and segments."""
    ctx = block_on
    x = cdata(10007, seed=5)
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)
    if FP64:
        for shape in ((3, 1000), (2, 20000)):
            z = cdata(shape, np.complex128, seed=7)
            check_accuracy(gfft.fft(dev(ctx, z)).get(), z, np.fft.fft)


@pytest.mark.slow
@pytest.mark.parametrize("n", [3**13, 5**9, 2**10 * 3**4 * 5 * 7, 65537, 2**20 + 7])
def test_large_mixed_and_prime(ctx, n):
    x = cdata(n, seed=3)
    check_accuracy(gfft.fft(dev(ctx, x)).get(), x, np.fft.fft)


@pytest.mark.parametrize("shape, axis", [((6, 8, 10), 0), ((6, 8, 10), 1), ((6, 8, 10), -1),
                                         ((3, 17, 5), 1), ((4096, 3), 0), ((2, 3, 4, 5, 6), 2)])
def test_any_axis(ctx, shape, axis):
    x = cdata(shape)
    g = dev(ctx, x)
    check_accuracy(gfft.fft(g, axis=axis).get(), x, np.fft.fft, axis=axis)
    check_accuracy(gfft.ifft(g, axis=axis).get(), x, np.fft.ifft, axis=axis)


@pytest.mark.parametrize("n", [1, 5, 8, 12, 19, 40])
def test_padding_and_trimming(ctx, n):
    x = cdata((3, 12))
    for axis in (0, 1):
        check_accuracy(gfft.fft(dev(ctx, x), n, axis).get(), x, np.fft.fft, n=n, axis=axis)
        check_accuracy(gfft.ifft(dev(ctx, x), n, axis).get(), x, np.fft.ifft, n=n, axis=axis)


# ---------------------------------------------------------------- real and Hermitian

@pytest.mark.parametrize("n", [1, 2, 3, 4, 5, 6, 7, 8, 9, 15, 16, 17, 34, 38, 100, 101, 128,
                               1000, 1001, 2 * 1009, 4096])
def test_real_transforms(ctx, n):
    x = rdata((2, n), seed=n)
    g = dev(ctx, x)
    got = gfft.rfft(g).get()
    assert got.dtype == np.complex64 and got.shape == (2, n // 2 + 1)
    check_accuracy(got, x, np.fft.rfft)
    check_accuracy(gfft.ihfft(g).get(), x, np.fft.ihfft)
    c = cdata((2, n // 2 + 1), seed=n)
    got = gfft.irfft(dev(ctx, c), n).get()
    assert got.dtype == np.float32 and got.shape == (2, n)
    check_accuracy(got, c, np.fft.irfft, n=n)
    check_accuracy(gfft.hfft(dev(ctx, c), n).get(), c, np.fft.hfft, n=n)


@pytest.mark.parametrize("n", [6, 7, 64, 97])
def test_real_round_trips(ctx, n):
    x = rdata((3, n), seed=n)
    g = dev(ctx, x)
    back = gfft.irfft(gfft.rfft(g), n).get()
    assert rel(back, x) < 1e-6
    back = gfft.hfft(gfft.ihfft(g), n).get()
    assert rel(back, x) < 1e-6
    # irfft's input longer or shorter than n // 2 + 1, and the default n
    c = cdata((3, n), seed=1)
    for m in (None, 4, 2 * n, 2 * n - 1):
        check_accuracy(gfft.irfft(dev(ctx, c), m).get(), c, np.fft.irfft, n=m)
        check_accuracy(gfft.hfft(dev(ctx, c), m, axis=0).get(), c, np.fft.hfft, n=m, axis=0)
    check_accuracy(gfft.rfft(g, 2 * n + 1).get(), x, np.fft.rfft, n=2 * n + 1)


def test_real_along_axes_and_views(ctx):
    h = rdata((9, 14, 6))
    g = dev(ctx, h)
    for axis in (0, 1, 2):
        check_accuracy(gfft.rfft(g, axis=axis).get(), h, np.fft.rfft, axis=axis)
    v, hv = g[::-2, 3:, ::-1], h[::-2, 3:, ::-1]
    for axis in (0, 1, 2):
        check_accuracy(gfft.rfft(v, axis=axis).get(), hv, np.fft.rfft, axis=axis)
        c = np.fft.rfft(hv, axis=axis).astype(np.complex64)
        gc = dev(ctx, c)[::-1] if axis else dev(ctx, c)
        hc = c[::-1] if axis else c
        check_accuracy(gfft.irfft(gc, axis=axis).get(), hc, np.fft.irfft, axis=axis)


# ---------------------------------------------------------------- n-d, norms, views, out=

@pytest.mark.parametrize("norm", [None, "backward", "ortho", "forward"])
def test_norms(ctx, norm):
    x, r = cdata((4, 30)), rdata((4, 30))
    g, gr = dev(ctx, x), dev(ctx, r)
    for fn, np_fn, src, h in ((gfft.fft, np.fft.fft, g, x), (gfft.ifft, np.fft.ifft, g, x),
                              (gfft.rfft, np.fft.rfft, gr, r), (gfft.ihfft, np.fft.ihfft, gr, r),
                              (gfft.irfft, np.fft.irfft, g, x), (gfft.hfft, np.fft.hfft, g, x),
                              (gfft.fft2, np.fft.fft2, g, x), (gfft.ifftn, np.fft.ifftn, g, x),
                              (gfft.rfftn, np.fft.rfftn, gr, r),
                              (gfft.irfftn, np.fft.irfftn, g, x)):
        check_accuracy(fn(src, norm=norm).get(), h, np_fn, norm=norm)


@pytest.mark.filterwarnings("ignore:`axes` should not be `None`:DeprecationWarning")
@pytest.mark.parametrize("s, axes", [(None, None), ((5, 6), None), (None, (0, 2)),
                                     ((8, 3), (2, 0)), (None, (-1, 0, 1)), ((4, 4, 4), None),
                                     (None, (1, 1))])
def test_nd(ctx, s, axes):
    x = cdata((6, 7, 8))
    g = dev(ctx, x)
    for fn, np_fn in ((gfft.fftn, np.fft.fftn), (gfft.ifftn, np.fft.ifftn)):
        check_accuracy(fn(g, s, axes).get(), x, np_fn, s=s, axes=axes)
    if axes is None or len(set(axes)) == len(axes):
        r = x.real.copy()
        check_accuracy(gfft.rfftn(dev(ctx, r), s, axes).get(), r, np.fft.rfftn, s=s, axes=axes)
        c = np.fft.rfftn(r, s, axes).astype(np.complex64)
        check_accuracy(gfft.irfftn(dev(ctx, c), s, axes).get(), c, np.fft.irfftn, s=s,
                       axes=axes)


def test_2d_functions(ctx):
    x = cdata((3, 16, 24))
    g = dev(ctx, x)
    check_accuracy(gfft.fft2(g).get(), x, np.fft.fft2)
    check_accuracy(gfft.ifft2(g, axes=(0, 2)).get(), x, np.fft.ifft2, axes=(0, 2))
    check_accuracy(gfft.fft2(g, s=(10, 13)).get(), x, np.fft.fft2, s=(10, 13))
    r = x.real.copy()
    check_accuracy(gfft.rfft2(dev(ctx, r)).get(), r, np.fft.rfft2)
    c = np.fft.rfft2(r).astype(np.complex64)
    check_accuracy(gfft.irfft2(dev(ctx, c)).get(), c, np.fft.irfft2)
    check_accuracy(gfft.irfft2(dev(ctx, c), s=(16, 23)).get(), c, np.fft.irfft2, s=(16, 23))


def test_3d(ctx):
    x = cdata((12, 10, 9))
    check_accuracy(gfft.fftn(dev(ctx, x)).get(), x, np.fft.fftn)
    r = x.real.copy()
    back = gfft.irfftn(gfft.rfftn(dev(ctx, r)), r.shape).get()
    assert rel(back, r) < 1e-6


def test_views_and_negative_strides(ctx):
    h = cdata((10, 40, 6))
    g = dev(ctx, h)
    for key in [(slice(None, None, -1), slice(3, 37), slice(None)),
                (slice(1, None, 3), slice(None, None, -2), slice(None, None, -1)),
                (Ellipsis, 2), (slice(None), 5)]:
        v, hv = g[key], h[key]
        for axis in range(hv.ndim):
            check_accuracy(gfft.fft(v, axis=axis).get(), hv, np.fft.fft, axis=axis)
            check_accuracy(gfft.ifft(v, axis=axis).get(), hv, np.fft.ifft, axis=axis)
    t = g.transpose(2, 0, 1)
    check_accuracy(gfft.fftn(t, axes=(0, 2)).get(), h.transpose(2, 0, 1), np.fft.fftn,
                   axes=(0, 2))


def test_out(ctx):
    x = cdata((4, 12))
    g = dev(ctx, x)
    out = ga.empty((4, 12), np.complex64, context=ctx)
    assert gfft.fft(g, out=out) is out
    check_accuracy(out.get(), x, np.fft.fft)
    # into a strided view, and in place over the input
    big = ga.zeros((4, 24), np.complex64, context=ctx)
    assert gfft.ifft(g, out=big[:, ::2]).base is not None
    check_accuracy(big.get()[:, ::2], x, np.fft.ifft)
    assert np.all(big.get()[:, 1::2] == 0)
    h = g.copy()
    gfft.fft(h, axis=0, out=h)
    check_accuracy(h.get(), x, np.fft.fft, axis=0)
    r = rdata((4, 12))
    rout = ga.empty((4, 7), np.complex64, context=ctx)
    assert gfft.rfft(dev(ctx, r), out=rout) is rout
    check_accuracy(rout.get(), r, np.fft.rfft)
    fout = ga.empty((4, 12), np.complex64, context=ctx)
    assert gfft.fft2(g, out=fout) is fout
    check_accuracy(fout.get(), x, np.fft.fft2)
    with pytest.raises(E.ShapeError, match=r"\(4, 13\)"):
        gfft.fft(g, out=ga.empty((4, 13), np.complex64, context=ctx))


# ---------------------------------------------------------------- dtypes, sizes, errors

@pytest.mark.parametrize("dtype, want", [(np.float32, np.complex64),
                                         (np.complex64, np.complex64),
                                         (np.float16, np.complex64),
                                         (np.float64, np.complex128),
                                         (np.complex128, np.complex128),
                                         (np.int32, np.complex128), (np.bool_, np.complex128),
                                         (np.uint8, np.complex128)])
def test_dtypes(ctx, dtype, want):
    if np.dtype(want) == np.complex128 and not FP64:
        pytest.skip("the device has no float64")
    h = (np.arange(24).reshape(2, 12) % 5).astype(dtype)
    got = gfft.fft(dev(ctx, h))
    assert got.dtype == want  # numpy 2's (numpy 1 gives complex128 for all)
    check_accuracy(got.get(), h.astype(want), np.fft.fft)
    if np.dtype(dtype).kind != "c":
        r = gfft.rfft(dev(ctx, h))
        assert r.dtype == want
        assert gfft.irfft(r).dtype == want(0).real.dtype
        assert gfft.irfft(dev(ctx, h)).dtype == (np.float16 if dtype == np.float16
                                                 else want(0).real.dtype)
        check_accuracy(r.get(), h.astype(want(0).real.dtype), np.fft.rfft)


def test_zero_size_and_bad_lengths(ctx):
    g = dev(ctx, cdata((0, 8)))
    for fn in (gfft.fft, gfft.ifft, gfft.irfft, gfft.hfft):
        got = fn(g)
        want = getattr(np.fft, fn.__name__)(np.zeros((0, 8), np.complex64))
        assert got.shape == want.shape and got.dtype == want.dtype
    assert gfft.rfft(dev(ctx, rdata((3, 0, 8)))).shape == (3, 0, 5)
    with pytest.raises(E.ArgumentError, match=r"Invalid number of FFT data points \(0\)"):
        gfft.fft(dev(ctx, cdata((2, 0))))
    with pytest.raises(ValueError, match=r"\(0\)"):
        gfft.fft(dev(ctx, cdata(4)), n=0)
    with pytest.raises(ValueError, match=r"\(-3\)"):
        gfft.rfft(dev(ctx, rdata(4)), n=-3)
    with pytest.raises(ValueError, match=r"\(0\)"):
        gfft.irfft(dev(ctx, cdata(1)))
    with pytest.raises(TypeError, match=r"2\.5"):
        gfft.fft(dev(ctx, cdata(4)), n=2.5)


def test_errors_name_the_values(ctx):
    g = dev(ctx, cdata((3, 4)))
    with pytest.raises(E.ArgumentError, match=r"'bad'.*backward.*ortho.*forward"):
        gfft.fft(g, norm="bad")
    with pytest.raises(E.AxisError, match="axis 2 is out of bounds"):
        gfft.fft(g, axis=2)
    with pytest.raises(E.AxisError, match="axis -3"):
        gfft.fftn(g, axes=(0, -3))
    with pytest.raises(E.ArgumentError, match=r"s=\(4,\), axes=\(0, 1\)"):
        gfft.fftn(g, s=(4,), axes=(0, 1))
    with pytest.raises(E.ArgumentTypeError, match="complex64"):
        gfft.rfft(g)
    with pytest.raises(ValueError, match=r"\(0\)"):
        gfft.fftfreq(0)
    with pytest.raises(E.ArgumentError, match="0-d"):
        gfft.fft(dev(ctx, np.complex64(1)))


# ---------------------------------------------------------------- helpers, dispatch, API

def test_freqs_and_shifts(ctx):
    for n in (1, 7, 8):
        for d in (1.0, 0.25):
            np.testing.assert_allclose(gfft.fftfreq(n, d, device=ctx).get(), np.fft.fftfreq(n, d))
            np.testing.assert_allclose(gfft.rfftfreq(n, d, device=ctx).get(),
                                       np.fft.rfftfreq(n, d))
    assert gfft.fftfreq(4, dtype=np.float32, device=ctx).dtype == np.float32
    h = cdata((5, 6, 7))
    g = dev(ctx, h)
    for axes in (None, 0, (1, 2), (-1,)):
        np.testing.assert_array_equal(gfft.fftshift(g, axes).get(), np.fft.fftshift(h, axes))
        np.testing.assert_array_equal(gfft.ifftshift(g, axes).get(), np.fft.ifftshift(h, axes))
    np.testing.assert_array_equal(gfft.ifftshift(gfft.fftshift(g)).get(), h)


def test_numpy_dispatch(ctx):
    h, r = cdata((4, 10)), rdata((4, 10))
    g, gr = dev(ctx, h), dev(ctx, r)
    for name, src, host in (("fft", g, h), ("ifft2", g, h), ("rfft", gr, r), ("fftn", g, h),
                            ("irfft", g, h), ("hfft", g, h), ("fftshift", g, h)):
        got = getattr(np.fft, name)(src)
        assert isinstance(got, ga.GpuArray), name
        np.testing.assert_allclose(got.get(), getattr(np.fft, name)(host), rtol=1e-4,
                                   atol=1e-4 * np.abs(h).max() * 10)
    got = np.fft.fft(g, 16, 0, "ortho")
    check_accuracy(got.get(), h, np.fft.fft, n=16, axis=0, norm="ortho")


ARRAY_API_FFT = """
def fft(x, /, *, n=None, axis=-1, norm='backward'): ...
def ifft(x, /, *, n=None, axis=-1, norm='backward'): ...
def fftn(x, /, *, s=None, axes=None, norm='backward'): ...
def ifftn(x, /, *, s=None, axes=None, norm='backward'): ...
def rfft(x, /, *, n=None, axis=-1, norm='backward'): ...
def irfft(x, /, *, n=None, axis=-1, norm='backward'): ...
def rfftn(x, /, *, s=None, axes=None, norm='backward'): ...
def irfftn(x, /, *, s=None, axes=None, norm='backward'): ...
def hfft(x, /, *, n=None, axis=-1, norm='backward'): ...
def ihfft(x, /, *, n=None, axis=-1, norm='backward'): ...
def fftfreq(n, /, *, d=1.0, device=None): ...
def rfftfreq(n, /, *, d=1.0, device=None): ...
def fftshift(x, /, *, axes=None): ...
def ifftshift(x, /, *, axes=None): ...
"""


def test_array_api_extension(ctx):
    spec = {}
    exec(ARRAY_API_FFT, spec)
    for name, stub in spec.items():
        if not callable(stub):
            continue
        ours = inspect.signature(getattr(gfft, name))
        for p in inspect.signature(stub).parameters.values():
            assert p.name in ours.parameters or p.kind is p.POSITIONAL_ONLY, (name, p.name)
    x = cdata((3, 8))
    xp = dev(ctx, x).__array_namespace__()
    assert xp.fft is gfft
    got = xp.fft.fft(dev(ctx, x), n=6, axis=0, norm="ortho")
    check_accuracy(got.get(), x, np.fft.fft, n=6, axis=0, norm="ortho")
    got = xp.fft.irfftn(dev(ctx, x), s=(3, 14), axes=(0, 1), norm="forward")
    check_accuracy(got.get(), x, np.fft.irfftn, s=(3, 14), axes=(0, 1), norm="forward")
    assert xp.fft.fftfreq(5, d=2.0, device=ctx).device is ctx


def test_plans_cached_and_one_program(ctx, monkeypatch):
    """Plans are kept; without fft_block (CPUs) one program per precision serves every
    length (GPUs build a kernel per row length)."""
    monkeypatch.setitem(gfft.BLOCK, "gpu" if ctx.device.is_gpu else "cpu", False)
    for name in ("programs", "kernels", "plans"):  # empty, whatever earlier tests left there
        monkeypatch.setattr(ctx, name, Cache(name, getattr(ctx, name).maxsize))
    x = dev(ctx, cdata((2, 48)))
    gfft.fft(x)
    hits = ctx.plans.hits
    gfft.fft(x)
    assert ctx.plans.hits > hits
    assert ("fft", 48, "float") in ctx.plans
    programs = [k for k in ctx.programs if isinstance(k, tuple) and k[:2] == ("fft", "float")]
    assert len(programs) == 1  # one program per precision serves every length


def test_radix_passes_a_work_item_a_lane_on_intels_cpu_runtime(ctx):
    """Intel's CPU compiler is asked not to vectorise the radix passes across work-items
    (their strided loads became gathers: half PoCL's speed); other devices get no hint."""
    intel = ctx.device.platform.startswith("Intel(R) OpenCL") and not ctx.device.is_gpu
    assert gfft._scalar_radix(ctx) == intel
    for scalar in (False, True):
        src = render("fft.cl.mako", real="float", radices=(1, 16), nmax=64, rows_pow2=False,
                     block=None, scalar_radix=scalar)
        hinted = re.findall(r"__kernel __attribute__\(\(intel_vec_len_hint\(1\)\)\)\s*void (\w+)",
                            src)
        assert hinted == (["fft_radix1", "fft_radix16"] if scalar else [])
    x = dev(ctx, cdata((3, 4096)))  # (the hinted build computes what numpy does)
    check_accuracy(gfft.fft(x).get(), x.get(), np.fft.fft)
