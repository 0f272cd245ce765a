"""Reductions against numpy: functions x dtypes x axes x keepdims x layouts x shapes."""

import warnings

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import reduction

DTYPES = [np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64]
FUNCS = ["sum", "prod", "max", "min", "any", "all", "mean", "var", "std", "ptp", "count_nonzero"]
NAN_FUNCS = ["nansum", "nanprod", "nanmax", "nanmin", "nanmean"]
CASES = [  # shape, axis
    ((1023, 1025), None), ((1023, 1025), 0), ((1023, 1025), 1),
    ((3, 4, 5), (0, 2)), ((3, 4, 5), -1), ((3, 4, 5), (0, 1, 2)), ((3, 1, 5), 1),
    ((7,), 0), ((5, 0), 1), ((0, 5), 1), ((), None), ((300, 3), 0), ((3, 3000), 1),
]
LAYOUTS = {
    "C": lambda a: a,
    "F": lambda a: a.T,
    "negative": lambda a: a[::-1] if a.ndim else a,
    "sliced": lambda a: a[1::2] if a.ndim else a,
}


def _data(dtype, shape, seed=0):
    rng = np.random.default_rng(seed)
    if dtype == np.bool_:
        return np.asarray(rng.random(shape) > 0.3)
    if np.dtype(dtype).kind in "iu":
        return np.asarray(rng.integers(0, 4, shape), dtype=dtype)
    return np.asarray(rng.random(shape) * 2 + 0.5, dtype=dtype)


def _numpy(name, host, axis, keepdims):
    """numpy's result; for float16 input computed from float32 (numpy sums float16 in float16,
    overflowing where gpuarr's float32 accumulator does not) in numpy's result dtype."""
    kwargs = {} if name == "count_nonzero" else {"keepdims": keepdims}
    fn = getattr(np, name)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if host.dtype != np.float16:
            return fn(host, axis=axis, **kwargs)
        dtype = np.asarray(fn(host, axis=axis, **kwargs)).dtype
        return np.asarray(fn(host.astype(np.float32), axis=axis, **kwargs)).astype(dtype)


def _check(got, expected, host_dtype, name):
    expected = np.asarray(expected)
    g = got.get() if isinstance(got, ga.GpuArray) else np.asarray(got)
    assert g.shape == expected.shape, (g.shape, expected.shape)
    assert g.dtype == expected.dtype, (g.dtype, expected.dtype)
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(g, expected)
    else:
        # float16 numpy sums in float16 (we accumulate in float32); summation orders differ
        rtol = {np.float16: 2e-2, np.float32: 2e-5}.get(np.dtype(host_dtype).type, 1e-12)
        if name in ("var", "std"):
            rtol *= 10
        np.testing.assert_allclose(g.astype(np.float64), expected.astype(np.float64),
                                   rtol=rtol, atol=rtol, equal_nan=True)


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(("shape", "axis"), CASES, ids=str)
def test_reductions_match_numpy(ctx, dtype, shape, axis):
    if np.dtype(dtype) == np.float64 and not ctx.fp64:
        pytest.skip("no fp64")
    host = _data(dtype, shape)
    x = ga.asarray(host, context=ctx)
    for lname, take in LAYOUTS.items():
        hv, xv = take(host), take(x)
        ax = axis if lname != "F" or axis is None or isinstance(axis, tuple) else -1 - axis
        if isinstance(ax, tuple) and lname == "F":
            ax = tuple(hv.ndim - 1 - a for a in ax)
        for keepdims in (False, True):
            for name in FUNCS:
                if keepdims and name == "count_nonzero":
                    continue
                try:
                    expected = _numpy(name, hv, ax, keepdims)
                except (ValueError, TypeError):
                    with pytest.raises((ValueError, TypeError)):
                        getattr(ga, name)(xv, axis=ax, keepdims=keepdims)
                    continue
                kwargs = {} if name == "count_nonzero" else {"keepdims": keepdims}
                got = getattr(ga, name)(xv, axis=ax, **kwargs)
                _check(got, expected, dtype, f"{name} {lname} keepdims={keepdims}")


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64])
@pytest.mark.parametrize(("shape", "axis"), [((64, 33), None), ((64, 33), 0), ((64, 33), 1)])
def test_nan_functions(ctx, dtype, shape, axis):
    if np.dtype(dtype) == np.float64 and not ctx.fp64:
        pytest.skip("no fp64")
    host = _data(dtype, shape)
    host[::3, ::4] = np.nan
    x = ga.asarray(host, context=ctx)
    for name in [*NAN_FUNCS, "sum", "max", "min", "mean"]:
        _check(getattr(ga, name)(x, axis=axis), _numpy(name, host, axis, False), dtype, name)


def test_methods_dtype_out_ddof_and_errors(ctx):
    host = _data(np.int16, (6, 7))
    x = ga.asarray(host, context=ctx)
    _check(x.sum(axis=1), host.sum(axis=1), np.int16, "sum")
    _check(x.sum(dtype=np.float32), host.sum(dtype=np.float32), np.int16, "sum")
    _check(x.mean(axis=0), host.mean(axis=0), np.int16, "mean")
    _check(x.var(ddof=1), host.var(ddof=1), np.int16, "var")
    out = ga.zeros(7, dtype=np.int64, context=ctx)
    assert x.sum(axis=0, out=out) is out
    _check(out, host.sum(axis=0), np.int16, "sum")
    out32 = ga.zeros(7, dtype=np.float32, context=ctx)  # another dtype: cast as numpy does
    assert x.sum(axis=0, out=out32) is out32
    _check(out32, host.sum(axis=0, out=np.zeros(7, np.float32)), np.int16, "sum")
    with pytest.raises(ValueError):
        ga.max(ga.zeros((0, 3), context=ctx), axis=0)
    with pytest.raises(ga.errors.AxisError):
        x.sum(axis=2)
    with pytest.raises(ValueError):
        x.sum(axis=(0, 0))
    with pytest.raises(ValueError):
        x.sum(axis=0, out=ga.zeros(3, dtype=np.int64, context=ctx))


def test_full_reduction_stays_on_device_and_is_deterministic(ctx):
    host = _data(np.float32, (1 << 20,))
    x = ga.asarray(host, context=ctx)
    s1, s2 = x.sum(), x.sum()
    assert isinstance(s1, ga.GpuArray) and s1.shape == ()
    assert s1.get().tobytes() == s2.get().tobytes()
    np.testing.assert_allclose(float(s1), host.astype(np.float64).sum(), rtol=1e-6)


def test_group_and_thread_decompositions_agree(ctx):
    """The reduced axis inner or outer take different decompositions (GPU: a work-group
    or a work-item per output; CPU: a work-item per output or per band of outputs)."""
    host = _data(np.float64 if ctx.fp64 else np.float32, (257, 129))
    x = ga.asarray(host, context=ctx)
    for axis in (0, 1):
        for view, hv in ((x, host), (x.T, host.T), (x[::-1, ::2], host[::-1, ::2])):
            _check(view.sum(axis=axis), hv.sum(axis=axis), host.dtype, "sum")
    modes = {key[2].mode for key in ctx.kernels if key[0] == "reduce"}
    assert modes >= ({"group", "item"} if ctx.device.is_gpu else {"item", "band"}), modes


def test_reduction_module_names():
    for name in ("sum", "prod", "amax", "amin", "any", "all", "mean", "var", "std", "ptp",
                 "nansum", "nanprod", "nanmax", "nanmin", "nanmean", "count_nonzero"):
        assert callable(getattr(ga, name)) and name in reduction.FUNCTIONS


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.uint64, np.float16, np.float32])
@pytest.mark.parametrize(("shape", "axis"), [((1023, 1025), None), ((1023, 1025), 0),
                                             ((1023, 1025), 1), ((7,), None), ((3, 4, 5), -1),
                                             ((300, 3), 0), ((), None)])
def test_argmax_argmin_first_index(ctx, dtype, shape, axis):
    """Ties (few distinct values) and NaNs: numpy returns the first extremum / first NaN."""
    host = np.asarray(np.random.default_rng(2).integers(0, 5, shape)).astype(dtype)
    if np.dtype(dtype).kind == "f" and host.ndim:
        host.flat[::97] = np.nan
    x = ga.asarray(host, context=ctx)
    for lname, take in LAYOUTS.items():
        hv, xv = take(host), take(x)
        ax = axis if lname != "F" or axis is None else hv.ndim - 1 - axis % hv.ndim
        for name in ("argmax", "argmin"):
            for keepdims in (False, True):
                expected = getattr(np, name)(hv, axis=ax, keepdims=keepdims)
                got = getattr(xv, name)(axis=ax, keepdims=keepdims)
                _check(got, expected, dtype, name)


def test_argmax_errors(ctx):
    x = ga.asarray(np.arange(6.0).reshape(2, 3), context=ctx)
    with pytest.raises(ValueError):
        ga.argmax(ga.zeros((0, 3), context=ctx))
    with pytest.raises(ValueError):
        ga.argmax(x, axis=(0, 1))


@pytest.mark.parametrize("dtype", [np.bool_, np.int8, np.int32, np.float16, np.float32,
                                   np.float64])
@pytest.mark.parametrize(("shape", "axis"), [((100003,), None), ((1023, 1025), None),
                                             ((1023, 1025), 0), ((1023, 1025), 1), ((7,), 0),
                                             ((3, 4, 5), -1), ((300, 3), 0), ((), None),
                                             ((0, 3), 1)])
def test_cumsum_cumprod(ctx, dtype, shape, axis):
    if np.dtype(dtype) == np.float64 and not ctx.fp64:
        pytest.skip("no fp64")
    host = np.asarray(np.random.default_rng(3).integers(0, 3, shape)).astype(dtype)
    if np.dtype(dtype).kind == "f" and host.ndim:
        host = host * np.asarray(0.5, dtype) + np.asarray(0.75, dtype)  # products stay finite
    x = ga.asarray(host, context=ctx)
    for lname, take in LAYOUTS.items():
        hv, xv = take(host), take(x)
        ax = axis if lname != "F" or axis is None else hv.ndim - 1 - axis % hv.ndim
        for name in ("cumsum", "cumprod"):
            if name == "cumprod" and hv.size > 5000 and np.dtype(dtype).kind == "f":
                continue  # long float products under/overflow either way
            expected = getattr(np, name)(hv, axis=ax)
            if dtype == np.float16:  # numpy accumulates float16 in float16, gpuarr in float32
                expected = getattr(np, name)(hv.astype(np.float32), axis=ax).astype(np.float16)
            _check(getattr(xv, name)(axis=ax), expected, dtype, name)


def test_scan_is_deterministic_and_multi_chunk(ctx):
    host = np.random.default_rng(4).random(1 << 18).astype(np.float32)
    x = ga.asarray(host, context=ctx)
    a, b = ga.cumsum(x), ga.cumsum(x)
    assert a.get().tobytes() == b.get().tobytes()
    np.testing.assert_allclose(a.get(), np.cumsum(host.astype(np.float64)), rtol=1e-5)
