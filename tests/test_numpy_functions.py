"""numpy's everyday functions on GpuArrays (statistics, set routines, numerical routines,
polynomials, index routines, editing, inquiry): each case runs as `gpuarr.f(x)` and as
`np.f(x)` (through __array_function__) on device arrays and must equal numpy's `np.f(h)` on
the host arrays in dtype, shape and values, without numpy converting a GpuArray to the host.
Then the namespace walk: every function of numpy's main namespace that takes arrays (numpy's
dispatched functions and ufuncs) runs on GpuArrays or is listed in protocols.NOT_ON_DEVICE
with its reason, and docs/compatibility.md lists exactly those.

The arrays are float64 and int64 (with float32, complex128 and bool where a case is about
them), so most kernels are shared with the other modules' tests; the dtype sweep is slow.
"""

import re
import warnings
from pathlib import Path

import numpy as np
import pytest
from conftest import host_data

import gpuarr as ga
from gpuarr import protocols, ufuncs
from gpuarr.errors import GpuArrayError, UnsupportedError

NUMPY2 = np.lib.NumpyVersion(np.__version__) >= "2.0.0"
RNG = np.random.default_rng(7)
F = RNG.standard_normal((4, 6))
N = F.copy()
N[1, 2] = N[3, 0] = np.nan
N[2, :] = np.nan
HOST = {
    "f": F,
    "n": N,
    "i": RNG.integers(-5, 6, (4, 6)),
    "s": F.astype(np.float32),
    "c": F[:2] + 1j * F[2:],
    "b": F > 0,
    "e": np.zeros((0, 3)),
    "v": np.array([0.5, -1.0, 2.0, 2.0, 3.5, -0.25, 7.0, 1.0, 0.0]),
    "w": np.array([3, 0, 1, 1, 5, 2, 7, 1, 0, 3, 3, 2]),
    "x": np.array([-2.0, 0.0, 0.4, 1.0, 2.5, 4.0, 9.0, np.nan, -np.inf, np.inf]),
    "p": np.array([0.0, 1.0, 1.5, 3.0, 4.0]),
    "u": np.array([[0, 0, 0, 0], [0, 1, 0, 2], [0, 0, 3, 0], [0, 0, 0, 0]]),
    "z": np.float64(2.5),
}
SORTED = np.sort(HOST["v"])


@pytest.fixture(scope="module")
def dev(ctx):
    return {k: ga.asarray(v, context=ctx) for k, v in HOST.items()}


def _tolerance(dt):
    return {np.dtype(np.float32): 2e-6, np.dtype(np.complex64): 2e-6,
            np.dtype(np.float16): 2e-3}.get(np.dtype(dt), 1e-12)


def same(got, want):
    """got equals numpy's `want`: GpuArrays for arrays (dtype, shape, values), equal
    tuples/lists element by element, and Python values of the same type."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want), (got, want)
        for a, b in zip(got, want):
            same(a, b)
        return
    if isinstance(want, np.ndarray | np.generic) and not isinstance(want, np.dtype):
        assert isinstance(got, ga.GpuArray), type(got)
        want = np.asarray(want)
        assert (got.shape, got.dtype) == (want.shape, want.dtype), \
            (got.shape, got.dtype, want.shape, want.dtype)
        tol = _tolerance(want.dtype)
        np.testing.assert_allclose(got.get(), want, rtol=tol, atol=tol, equal_nan=True)
        return
    assert type(got) is type(want) and got == want, (got, want)


def _numpy_only(call):
    """numpy's result on the host arrays; a case numpy 1.x lacks (or fails under the
    tests' NEP 50 promotion) is skipped there."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call(np, HOST)
    except Exception as e:
        if NUMPY2:
            raise
        pytest.skip(f"numpy {np.__version__} cannot run this: {e!r}")


# (id, call): call(xp, a) with xp gpuarr or numpy and `a` the arrays (device or host)
CASES = [
    # statistics: average, median, quantiles
    ("average", lambda xp, a: xp.average(a["f"])),
    ("average_axis_weights", lambda xp, a: xp.average(a["f"], axis=1, weights=HOST["v"][:6])),
    ("average_returned_int", lambda xp, a: xp.average(a["i"], axis=0, weights=a["f"] ** 2,
                                                      returned=True)),
    ("average_keepdims", lambda xp, a: xp.average(a["s"], axis=(0, 1), keepdims=True)),
    ("median", lambda xp, a: xp.median(a["f"])),
    ("median_axis0_int", lambda xp, a: xp.median(a["i"], axis=0)),
    ("median_axes_keepdims", lambda xp, a: xp.median(a["f"], axis=(0, 1), keepdims=True)),
    ("median_nan_rows", lambda xp, a: xp.median(a["n"], axis=1)),
    ("median_float32", lambda xp, a: xp.median(a["s"], axis=-1)),
    ("median_complex", lambda xp, a: xp.median(a["c"], axis=1)),
    ("nanmedian", lambda xp, a: (xp.nanmedian(a["n"]), xp.nanmedian(a["n"], axis=0))),
    ("nanmedian_keepdims", lambda xp, a: xp.nanmedian(a["n"], axis=1, keepdims=True)),
    ("quantile_linear", lambda xp, a: xp.quantile(a["f"], 0.3)),
    ("quantile_list_axis", lambda xp, a: xp.quantile(a["f"], [0.0, 0.25, 0.9, 1.0], axis=1)),
    ("quantile_int_q", lambda xp, a: xp.quantile(a["i"], 1)),
    ("quantile_float32_weak_q", lambda xp, a: (xp.quantile(a["s"], 0.4),
                                               xp.quantile(a["s"], [0.4]))),
    ("quantile_nan", lambda xp, a: xp.quantile(a["n"], [0.5, 0.75], axis=1)),
    ("quantile_weights", lambda xp, a: xp.quantile(a["f"], [0.2, 0.7], axis=1,
                                                   method="inverted_cdf",
                                                   weights=np.arange(1.0, 7.0))),
    ("quantile_out", lambda xp, a: xp.quantile(a["f"], 0.5, axis=0,
                                               out=xp.zeros_like(a["f"][0]))),
    ("percentile", lambda xp, a: xp.percentile(a["i"], [10, 50, 90], axis=(0, 1),
                                               keepdims=True)),
    ("nanquantile", lambda xp, a: xp.nanquantile(a["n"], [0.1, 0.5], axis=1)),
    ("nanpercentile", lambda xp, a: xp.nanpercentile(a["n"], 40, axis=0, method="nearest")),
    # statistics: NaN-ignoring reductions
    ("nanargmax_nanargmin", lambda xp, a: (xp.nanargmax(a["n"][:2]), xp.nanargmin(a["n"][:2],
                                                                                  axis=1))),
    ("nancumsum_nancumprod", lambda xp, a: (xp.nancumsum(a["n"], axis=1),
                                            xp.nancumprod(a["n"]))),
    ("nanvar_nanstd", lambda xp, a: (xp.nanvar(a["n"], axis=1), xp.nanstd(a["n"], ddof=1),
                                     xp.nanvar(a["n"], axis=0, ddof=3, keepdims=True))),
    ("nanvar_int_complex", lambda xp, a: (xp.nanvar(a["i"], axis=0), xp.nanvar(a["c"]))),
    # statistics: covariance, histograms, counting
    ("cov", lambda xp, a: (xp.cov(a["f"]), xp.cov(a["f"], rowvar=False, bias=True))),
    ("cov_y_int", lambda xp, a: xp.cov(a["i"][0], a["i"][1])),
    ("cov_weights", lambda xp, a: xp.cov(a["f"], fweights=[1, 2, 1, 3, 1, 1],
                                         aweights=np.abs(F[0]))),
    ("cov_complex_ddof", lambda xp, a: xp.cov(a["c"], ddof=0)),
    ("corrcoef", lambda xp, a: (xp.corrcoef(a["f"]), xp.corrcoef(a["c"]),
                                xp.corrcoef(a["f"][0], a["f"][1]))),
    ("bincount", lambda xp, a: (xp.bincount(a["w"]), xp.bincount(a["w"], minlength=10))),
    ("bincount_weights", lambda xp, a: xp.bincount(a["w"], weights=a["v"].repeat(2)[:12])),
    ("histogram", lambda xp, a: xp.histogram(a["f"])),
    ("histogram_edges_weights", lambda xp, a: xp.histogram(a["f"], bins=[-2, -0.5, 0, 2],
                                                           weights=a["i"])),
    ("histogram_range_density", lambda xp, a: xp.histogram(a["f"], 5, range=(-1, 1),
                                                           density=True)),
    ("histogram_int_estimator", lambda xp, a: (xp.histogram(a["w"], "auto"),
                                               xp.histogram(a["f"], "fd"))),
    ("histogram_bin_edges", lambda xp, a: xp.histogram_bin_edges(a["v"], "sturges")),
    ("histogram2d", lambda xp, a: xp.histogram2d(a["f"][0], a["f"][1], bins=[3, 2])),
    ("histogramdd", lambda xp, a: xp.histogramdd(a["f"][:, :3], bins=2, weights=a["v"][:4],
                                                 density=True)),
    ("digitize", lambda xp, a: (xp.digitize(a["x"], a["p"]),
                                xp.digitize(a["x"], a["p"][::-1], right=True))),
    # set routines
    ("isin", lambda xp, a: (xp.isin(a["i"], [1, 2, -5]), xp.isin(a["x"], a["x"][:3],
                                                                  invert=True))),
    ("isin_mixed_dtypes", lambda xp, a: xp.isin(a["w"], a["v"])),
    ("isin_kinds", lambda xp, a: (xp.isin(a["i"], a["w"], kind="sort"),
                                  xp.isin(a["i"], a["w"] * 1000, invert=True),
                                  xp.isin(a["b"], a["b"][0], kind="table"))),
    ("intersect1d", lambda xp, a: (xp.intersect1d(a["w"], a["i"]),
                                   xp.intersect1d(a["w"], a["i"], return_indices=True))),
    ("setdiff_union_xor", lambda xp, a: (xp.setdiff1d(a["i"], a["w"]), xp.union1d(a["w"], a["i"]),
                                         xp.setxor1d(a["w"], a["i"]))),
    ("lexsort", lambda xp, a: (xp.lexsort((a["i"][1], a["i"][0])), xp.lexsort(a["b"], axis=0))),
    ("sort_complex", lambda xp, a: (xp.sort_complex(a["c"]), xp.sort_complex(a["w"]))),
    # numerical routines
    ("diff", lambda xp, a: (xp.diff(a["f"]), xp.diff(a["i"], 2, axis=0), xp.diff(a["b"]))),
    ("diff_prepend_append", lambda xp, a: xp.diff(a["s"], prepend=0, append=a["s"][:, :1])),
    ("ediff1d", lambda xp, a: xp.ediff1d(a["i"], to_begin=[-9, -8], to_end=7)),
    ("gradient", lambda xp, a: (xp.gradient(a["f"]), xp.gradient(a["i"], 0.5, axis=0))),
    ("gradient_coordinates", lambda xp, a: xp.gradient(a["f"], a["p"][:4],
                                                       a["v"][:6].cumsum(), edge_order=2)),
    ("trapezoid", lambda xp, a: tuple(  # numpy 1.x: trapz
        getattr(xp, "trapezoid", getattr(xp, "trapz", None))(*args, **kw)
        for args, kw in [((a["f"],), {}), ((a["f"], a["p"][:4]), {"axis": 0}),
                         ((a["i"],), {"dx": 0.5})])),
    ("unwrap", lambda xp, a: xp.unwrap(a["f"].cumsum(axis=1) * 3)),
    ("trim_zeros", lambda xp, a: (xp.trim_zeros(a["u"]), xp.trim_zeros(a["u"][1], "f"))),
    ("cross", lambda xp, a: (xp.cross(a["f"][:, :3], a["f"][:, 3:]),
                             xp.cross(a["i"][:3], a["i"][1:], axisa=0, axisb=0, axisc=0))),
    ("kron", lambda xp, a: (xp.kron(a["f"][:2, :3], a["i"][:2]), xp.kron(a["v"], a["i"][0]))),
    ("convolve", lambda xp, a: tuple(xp.convolve(a["v"], a["f"][0][:4], m)
                                     for m in ("full", "same", "valid"))),
    ("correlate", lambda xp, a: tuple(xp.correlate(a["f"][0][:4], a["v"], m)
                                      for m in ("full", "same", "valid"))),
    ("correlate_complex_int", lambda xp, a: (xp.correlate(a["c"][0], a["c"][1][:3], "same"),
                                             xp.convolve(a["w"], a["w"][:3]))),
    ("interp", lambda xp, a: (xp.interp(a["x"], a["p"], a["v"][:5]),
                              xp.interp(a["x"], a["p"], a["v"][:5], left=-1, right=9))),
    ("interp_complex_period", lambda xp, a: (xp.interp(a["v"], a["p"], a["p"] * 1j + 2),
                                             xp.interp(a["v"], a["p"], a["p"], period=3.0))),
    ("geomspace", lambda xp, a: xp.geomspace(a["p"][1:3], 100.0, 5, axis=1)),
    ("sinc_i0", lambda xp, a: (xp.sinc(a["f"]), xp.sinc(a["i"]), xp.i0(a["x"][:-3]),
                               xp.i0(a["s"]))),
    ("angle_complex_parts", lambda xp, a: (xp.angle(a["c"], deg=True), xp.iscomplex(a["c"]),
                                           xp.isreal(a["f"]), xp.real_if_close(a["c"] * 0 + 2))),
    ("isposinf_isneginf", lambda xp, a: (xp.isposinf(a["x"]), xp.isneginf(a["x"]))),
    ("isclose_allclose", lambda xp, a: (xp.isclose(a["f"], a["f"] + 1e-9),
                                        xp.isclose(a["x"], a["x"], equal_nan=True),
                                        xp.allclose(a["f"], a["f"] * (1 + 1e-7)),
                                        xp.allclose(a["x"], a["x"]))),
    ("array_equal_equiv", lambda xp, a: (xp.array_equal(a["x"], a["x"], equal_nan=True),
                                         xp.array_equal(a["f"], a["f"][:2]),
                                         xp.array_equiv(a["i"], a["i"][:1]),
                                         xp.array_equiv(a["i"][:1], a["i"][0]))),
    # polynomials
    ("polyval", lambda xp, a: (xp.polyval([3, 0, 1], a["f"]), xp.polyval(a["v"][:3], a["i"]))),
    ("poly_arithmetic", lambda xp, a: (xp.polyadd(a["v"][:3], a["w"][:5]),
                                       xp.polysub(a["w"][:2], a["v"][:4]),
                                       xp.polymul(a["v"][:3], a["w"][:4]),
                                       xp.polydiv(a["v"][:5], a["v"][1:3]))),
    ("poly_calculus", lambda xp, a: (xp.polyder(a["w"][:5], 2), xp.polyint(a["v"][:4], 2, k=[1, 2]),
                                     xp.poly(a["p"][1:4]), xp.vander(a["w"][:4], 3, True))),
    ("polyfit", lambda xp, a: xp.polyfit(a["p"], a["p"] ** 2 - a["v"][:5], 2, cov=True)),
    # index routines
    ("choose", lambda xp, a: xp.choose(a["w"][:4] % 3, [a["i"][0][:4], a["i"][1][:4], 0])),
    ("extract", lambda xp, a: xp.extract(a["f"] > 0, a["i"])),
    ("ravel_unravel", lambda xp, a: (xp.ravel_multi_index((a["w"] % 4, a["w"] % 6), (4, 6)),
                                     xp.unravel_index(a["w"], (2, 4)),
                                     xp.ravel_multi_index((a["w"], a["w"]), (5, 5), mode="clip",
                                                          order="F"))),
    ("ix_", lambda xp, a: xp.ix_(a["w"][:3], a["b"][0])),
    ("index_builders", lambda xp, a: (xp.diag_indices_from(a["u"]), xp.tril_indices_from(a["f"], 1),
                                      xp.triu_indices_from(a["f"], -1))),
    # editing
    ("copy", lambda xp, a: (xp.copy(a["f"].T), xp.copy(a["f"][::2], order="F"))),
    ("delete", lambda xp, a: (xp.delete(a["f"], 1, axis=1), xp.delete(a["f"], [0, 5, -1]),
                              xp.delete(a["f"], slice(0, 4, 2), axis=0),
                              xp.delete(a["f"], a["b"][0], axis=1))),
    ("insert", lambda xp, a: (xp.insert(a["f"], 1, 9.0, axis=1),
                              xp.insert(a["f"], [0, 2, 2], [7.0, 8.0, 9.0], axis=1),
                              xp.insert(a["i"], 3, [[1], [2], [3], [4]], axis=1),
                              xp.insert(a["w"], slice(0, 4, 2), [1, 2]),
                              xp.insert(a["w"], 2, 2.7))),
    ("append_resize", lambda xp, a: (xp.append(a["f"], a["v"]), xp.append(a["i"], a["i"], 0),
                                     xp.resize(a["f"], (5, 7)), xp.resize(a["e"], 3))),
    ("rot90_rollaxis", lambda xp, a: (xp.rot90(a["f"]), xp.rot90(a["f"], -1), xp.rot90(a["f"], 2),
                                      xp.rollaxis(a["f"][None], 2))),
    ("block_diagflat", lambda xp, a: (
        xp.block([[a["f"][:2, :2], a["i"][:2, :1]], [a["f"][2:, :3]]]),
        xp.diagflat(a["i"][:2, :2], -1))),
    ("packbits_unpackbits", lambda xp, a: (xp.packbits(a["b"], axis=1),
                                           xp.unpackbits(xp.packbits(a["b"]), count=-3),
                                           xp.packbits(a["w"], bitorder="little"))),
    ("select_piecewise", lambda xp, a: (
        xp.select([a["f"] < -1, a["f"] > 1], [a["f"], 9.0], -9),
        xp.piecewise(a["f"], [a["f"] < 0], [lambda v: v * 2, 5.0]))),
    ("apply_along_over_axes", lambda xp, a: (
        xp.apply_along_axis(lambda r: r[0] + r[-1], 1, a["f"]),
        xp.apply_along_axis(lambda r: xp.sort(r)[:2], 0, a["i"]),
        xp.apply_over_axes(xp.sum, a["i"], [0, 1]))),
    # inquiry
    ("inquiry", lambda xp, a: (xp.shape(a["f"]), xp.ndim(a["e"]), xp.size(a["f"], 1),
                               xp.iscomplexobj(a["c"]), xp.isrealobj(a["c"]),
                               xp.min_scalar_type(a["z"]), xp.common_type(a["s"], a["i"]))),
    ("einsum_path_text", lambda xp, a: (xp.einsum_path("ij,jk->ik", a["f"], a["f"].T)[0],
                                        xp.array_str(a["i"]), xp.array_repr(a["b"]),
                                        xp.array2string(a["f"], precision=3))),
    # empty arrays
    ("empty", lambda xp, a: (xp.diff(a["e"], axis=0), xp.median(a["e"], axis=0),
                             xp.isin(a["e"], a["v"]), xp.cov(a["e"].T), xp.unique(a["e"]),
                             xp.histogram(a["e"], 3), xp.bincount(a["e"].astype(int).ravel()),
                             xp.insert(a["e"], 0, 1.0, axis=1), xp.delete(a["e"], 0, axis=1))),
]


@pytest.mark.parametrize("call", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_matches_numpy(dev, call, monkeypatch):
    want = _numpy_only(call)

    def refuse(self, *args, **kwargs):
        raise AssertionError("a GpuArray went to numpy through __array__ (a host round trip)")

    monkeypatch.setattr(ga.GpuArray, "__array__", refuse)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        same(call(ga, dev), want)
        same(call(np, dev), want)


# every quantile method, on data with ties, along an axis and for a NaN-ignoring slice
@pytest.mark.parametrize("method", ["inverted_cdf", "averaged_inverted_cdf",
                                    "closest_observation", "interpolated_inverted_cdf",
                                    "hazen", "weibull", "linear", "median_unbiased",
                                    "normal_unbiased", "lower", "higher", "midpoint",
                                    "nearest"])
def test_quantile_methods(dev, method):
    if method == "closest_observation" and not NUMPY2:
        pytest.skip("numpy 1.x rounds closest_observation to even order statistics (fixed in "
                    "numpy 2.0, which gpuarr follows)")
    q = [0.0, 0.1, 0.33, 0.5, 0.9, 1.0]
    for name, fn in (("quantile", "f"), ("quantile", "i"), ("nanquantile", "n")):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = getattr(np, name)(HOST[fn], q, axis=1, method=method)
            same(getattr(ga, name)(dev[fn], q, axis=1, method=method), want)
    same(ga.quantile(dev["w"], 0.5, method=method), np.quantile(HOST["w"], 0.5, method=method))


def test_in_place_routines(ctx):
    def pair(h):
        return h.copy(), ga.asarray(h, context=ctx)

    h, g = pair(np.arange(8))
    np.place(h, h > 2, [44, 55])
    ga.place(g, g > 2, [44, 55])
    same(g, h)
    h, g = pair(np.arange(8))
    np.putmask(h, h % 3 == 0, [-1, -2])
    np.putmask(g, g % 3 == 0, [-1, -2])  # through numpy
    same(g, h)
    h, g = pair(np.zeros((2, 3)))
    np.copyto(h, [1.0, 2.0, 3.0], where=[True, False, True])
    np.copyto(g, [1.0, 2.0, 3.0], where=ga.asarray([True, False, True], context=ctx))
    same(g, h)
    with pytest.raises(TypeError):
        ga.copyto(ga.zeros(2, np.int64, context=ctx), 1.5)
    h, g = pair(np.array([[10, 30, 20], [60, 40, 50]]))
    np.put_along_axis(h, np.array([[1], [0]]), 99, axis=1)
    ga.put_along_axis(g, ga.asarray([[1], [0]], context=ctx), 99, axis=1)
    same(g, h)
    for shape, wrap in [((3, 3), False), ((5, 3), True), ((2, 2, 2), False)]:
        h, g = pair(np.zeros(shape, np.int64))
        np.fill_diagonal(h, [4, 5], wrap)
        np.fill_diagonal(g, [4, 5], wrap)
        same(g, h)


def test_numpy1_names(dev):
    """in1d and trapz, numpy 1.x's names (removed in numpy 2.4), for code written for it."""
    same(ga.in1d(dev["i"], dev["w"], invert=True), np.isin(HOST["i"], HOST["w"],
                                                            invert=True).ravel())
    same(ga.trapz(dev["f"], dx=0.5, axis=0), np.sum((F[1:] + F[:-1]) / 2.0 * 0.5, axis=0))


# numpy's exception for a mistake is the one gpuarr raises (gpuarr's classes derive from it)
ERRORS = [
    lambda xp, a: xp.diff(a["z"]),
    lambda xp, a: xp.diff(a["f"], -1),
    lambda xp, a: xp.quantile(a["f"], 1.5),
    lambda xp, a: xp.quantile(a["c"], 0.5),
    lambda xp, a: xp.quantile(a["f"], 0.5, method="best"),
    lambda xp, a: xp.quantile(a["f"], 0.5, method="linear", weights=a["f"]),
    lambda xp, a: xp.percentile(a["f"], -1),
    lambda xp, a: xp.average(a["f"], weights=a["f"][0]),
    lambda xp, a: xp.average(a["f"], axis=1, weights=a["f"][:, 0]),
    lambda xp, a: xp.bincount(a["f"].ravel()),
    lambda xp, a: xp.bincount(a["i"].ravel()),
    lambda xp, a: xp.bincount(a["i"]),
    lambda xp, a: xp.histogram(a["f"], bins=0),
    lambda xp, a: xp.histogram(a["f"], bins=[1, 0]),
    lambda xp, a: xp.histogram(a["n"]),
    lambda xp, a: xp.digitize(a["f"], [1, 0, 2]),
    lambda xp, a: xp.digitize(a["c"], [0, 1]),
    lambda xp, a: xp.interp(a["v"], a["p"], a["v"]),
    lambda xp, a: xp.convolve(a["f"], a["v"]),
    lambda xp, a: xp.convolve(a["v"], a["v"][:0]),
    lambda xp, a: xp.cross(a["f"], a["f"]),
    lambda xp, a: xp.i0(a["c"]),
    lambda xp, a: xp.delete(a["f"], 9, axis=1),
    lambda xp, a: xp.insert(a["f"], 9, 1.0, axis=1),
    lambda xp, a: xp.rot90(a["f"], axes=(0, 0)),
    lambda xp, a: xp.select([a["f"] > 0], [a["f"], a["f"]]),
    lambda xp, a: xp.select([a["i"]], [a["f"]]),
    lambda xp, a: xp.piecewise(a["f"], [a["f"] > 0], [1, 2, 3]),
    lambda xp, a: xp.apply_along_axis(np.sum, 1, a["e"]),
    lambda xp, a: xp.isin(a["f"], a["f"], kind="table"),
    lambda xp, a: xp.nanargmax(a["n"], axis=1),
    lambda xp, a: xp.choose(a["w"], [a["w"] * 0.5, a["w"] * 1.0]),
    lambda xp, a: xp.unravel_index(a["w"], (2, 2)),
    lambda xp, a: xp.ravel_multi_index((a["w"], a["w"]), (3, 3)),
    lambda xp, a: xp.packbits(a["f"]),
    lambda xp, a: xp.trim_zeros(a["u"], "x"),
    lambda xp, a: xp.polyder(a["v"], -1),
    lambda xp, a: xp.geomspace(a["z"] * 0, 1),
]


@pytest.mark.parametrize("call", ERRORS, ids=[f"error{i}" for i in range(len(ERRORS))])
def test_errors_match_numpy(dev, call):
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(np, HOST)
    except Exception as e:
        numpy_error = e
    else:
        assert not NUMPY2, "numpy raised no error"
        pytest.skip(f"numpy {np.__version__} does not check this")
    if not NUMPY2 and isinstance(numpy_error, TypeError) and "unexpected keyword" in str(
            numpy_error):
        pytest.skip(f"numpy {np.__version__} lacks the argument: {numpy_error}")
    for xp in (ga, np):
        with pytest.raises(type(numpy_error)) as ours, warnings.catch_warnings():
            warnings.simplefilter("ignore")
            call(xp, dev)
        assert isinstance(ours.value, GpuArrayError), repr(ours.value)


def test_unsupported_forms_say_why(dev):
    with pytest.raises(UnsupportedError, match="stone"):
        ga.histogram(dev["v"], "stone")


@pytest.mark.slow
@pytest.mark.parametrize("dtype", [np.int8, np.uint16, np.int32, np.float32, np.float16])
def test_dtype_sweep(ctx, dtype):
    """The sorting-based and differencing routines keep numpy's dtypes for each dtype."""
    h = host_data(dtype, (3, 8))
    g = ga.asarray(h, context=ctx)
    calls = [lambda xp, a: xp.median(a, axis=1), lambda xp, a: xp.quantile(a, [0.2, 0.5]),
             lambda xp, a: xp.percentile(a, 50, axis=0, method="lower"),
             lambda xp, a: xp.diff(a), lambda xp, a: xp.isin(a, a[0]),
             lambda xp, a: xp.intersect1d(a[0], a[1]), lambda xp, a: xp.histogram(a, 4),
             lambda xp, a: xp.digitize(a, [0, 5, 50]),
             lambda xp, a: getattr(xp, "trapezoid", getattr(xp, "trapz", None))(a),
             lambda xp, a: xp.average(a, axis=0, weights=a[:, 0] * 0 + 2)]
    for call in calls:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = call(np, h)
            same(call(ga, g), want)


# ---------------------------------------------------------------- the namespace walk

# Names another change implements now (interop: saving, memory overlap); they leave this
# list when it lands.
OTHER_CHANGES = {"may_share_memory", "shares_memory", "save", "savez", "savez_compressed",
                 "savetxt", "from_dlpack"}


def walked():
    """{name: 'function' or 'ufunc'} for numpy's main namespace functions that take arrays:
    those numpy dispatches with __array_function__, and its ufuncs."""
    dispatched = type(np.concatenate)
    names = {}
    for name in dir(np):
        if name.startswith("_"):
            continue
        obj = getattr(np, name, None)
        if isinstance(obj, np.ufunc):
            names[name] = "ufunc"
        elif isinstance(obj, dispatched):
            names[name] = "function"
    return names


def implemented(name, kind):
    obj = getattr(np, name)
    if kind == "ufunc":
        return ufuncs.lookup(obj.__name__) is not None or obj in (np.matmul,
                                                                  getattr(np, "vecdot", None))
    return obj in protocols.table()


def test_every_numpy_function_runs_on_the_device_or_is_listed():
    names = walked()
    assert len(names) > 300
    missing = sorted(n for n, kind in names.items() if not implemented(n, kind)
                     and n not in protocols.NOT_ON_DEVICE and n not in OTHER_CHANGES)
    assert not missing, f"numpy functions neither implemented nor in NOT_ON_DEVICE: {missing}"
    stale = sorted(n for n in protocols.NOT_ON_DEVICE if n in names and implemented(n, names[n]))
    assert not stale, f"implemented now, remove from NOT_ON_DEVICE: {stale}"
    assert all(isinstance(r, str) and len(r) > 10 for r in protocols.NOT_ON_DEVICE.values())


def test_listed_functions_raise_naming_themselves(dev):
    for name in ("is_busday", "datetime_as_string", "frexp"):
        if not hasattr(np, name):
            continue
        with pytest.raises(UnsupportedError, match=rf"numpy\.{name}"):
            getattr(np, name)(dev["v"])


def test_compatibility_page_lists_the_table():
    page = (Path(__file__).resolve().parents[1] / "docs" / "compatibility.md").read_text()
    section = page.split("<!-- section: numpy coverage -->")[1].split("\n## ")[0]
    listed = set(re.findall(r"^\| `(\w+)` \|", section, re.MULTILINE))
    assert listed == set(protocols.NOT_ON_DEVICE)
