"""The FFT kernels' paths on Oclgrind (see conftest.py): global radix passes, whole rows in
local memory (rows and interleaved columns, a ragged last group), the four-step split,
Bluestein, the real-transform passes."""

import dataclasses

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import fft

RNG = np.random.default_rng(11)


def _c(shape):
    return (RNG.standard_normal(shape) + 1j * RNG.standard_normal(shape)).astype(np.complex64)


def _close(got, want):
    np.testing.assert_allclose(got.get(), want, rtol=1e-4, atol=1e-4 * np.abs(want).max())


@pytest.fixture(params=["gpu", "cpu"])
def path(request, ctx, monkeypatch):
    """The device's (GPU) choices, or the CPU ones (groups of 8 rows, 16 work-items)."""
    if request.param == "cpu":
        monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, type="CPU"))
    monkeypatch.setattr(ctx, "plans", {})
    return request.param


def test_complex_paths(ctx, path):
    for shape, axis in [((3, 48), -1), ((5, 96), -1), ((96, 5), 0), ((2, 17), -1),
                        ((37,), 0)]:
        h = _c(shape)
        x = ga.asarray(h, context=ctx)
        _close(fft.fft(x, axis=axis), np.fft.fft(h, axis=axis))
        _close(fft.ifft(x[..., ::-1], axis=axis), np.fft.ifft(h[..., ::-1], axis=axis))
    h = _c((3, 80)).astype(np.complex128)  # the double program
    _close(fft.fft(ga.asarray(h, context=ctx)), np.fft.fft(h))


def test_real_paths(ctx, path):
    for n in (130, 45):
        h = RNG.standard_normal((2, n)).astype(np.float32)
        _close(fft.rfft(ga.asarray(h, context=ctx)), np.fft.rfft(h))
        c = _c((2, n // 2 + 1))
        _close(fft.irfft(ga.asarray(c, context=ctx), n), np.fft.irfft(c, n))


@pytest.fixture
def gpu_path(ctx, monkeypatch):
    """The GPU's choices (split into segments on, fft_rows_pow2) on any device."""
    monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, type="GPU"))
    monkeypatch.setattr(ctx, "plans", {})
    monkeypatch.setitem(fft.ROWS, "gpu", True)
    monkeypatch.setattr(fft, "PREVIOUS", False)
    return ctx


def test_gpu_rows_pow2(gpu_path):
    for shape, axis in [((3, 256), -1), ((64, 6), 0), ((2, 96), -1)]:
        h = _c(shape)
        _close(fft.fft(ga.asarray(h, context=gpu_path), axis=axis), np.fft.fft(h, axis=axis))


def test_split_segments(gpu_path, monkeypatch):
    monkeypatch.setitem(fft.ROWS_ELEMENTS, "gpu", 128)
    monkeypatch.setitem(fft.ROWS_GROUP, "gpu", 2)
    # 16 x 2 | 9 x 3 | 5: rows (fft_rows_pow2), rows of the residues mod 32 (fft_rows), a
    # global pass; 16 | 16 | 16 x 4: global passes, then rows of the residues mod 256
    for n in (4320, 16384):
        h = _c((n,))
        _close(fft.fft(ga.asarray(h, context=gpu_path)), np.fft.fft(h))


def test_four_step_split(ctx, path, monkeypatch):
    cls = "gpu" if ctx.device.is_gpu else "cpu"
    monkeypatch.setitem(fft.ROWS, cls, True)
    monkeypatch.setitem(fft.ROWS_ELEMENTS, cls, 64)
    monkeypatch.setitem(fft.ROWS_GROUP, cls, 2)
    h = _c((3, 864))  # 16 x 2 | 9 x 3: rows of 32, then rows of 27
    _close(fft.fft(ga.asarray(h, context=ctx)), np.fft.fft(h))


def test_block_kernels(ctx, monkeypatch):
    """fft_block (the GPUs' kernel per row length): whole rows, interleaved columns with a
    ragged last group, segments of a row and of columns (the four-step twiddle), Bluestein
    with its products in the loads and stores."""
    monkeypatch.setitem(fft.BLOCK, "gpu" if ctx.device.is_gpu else "cpu", True)
    monkeypatch.setattr(fft, "BLOCK_ELEMENTS", 256)
    monkeypatch.setattr(ctx, "plans", {})
    for shape, axis in [((3, 60), -1), ((60, 5), 0), ((2, 1024), -1), ((512, 3), 0),
                        ((2, 37), -1)]:
        h = _c(shape)
        _close(fft.fft(ga.asarray(h, context=ctx), axis=axis), np.fft.fft(h, axis=axis))
