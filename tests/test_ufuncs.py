"""Ufuncs against numpy (the oracle): every ufunc x dtype x shape x layout, edge values,
promotion, out=/dtype=/casting=/where=, operators, numpy dispatch and the ufunc-like helpers.

Kernel compiles dominate the cost (one per ufunc, operand dtypes and number of collapsed
dimensions; on PoCL one program build serves every ufunc of a loop signature, see
test_sibling_ufuncs_share_one_program), so the layout cases are chosen to need only two
kernels per ufunc loop: the contiguous ones (0-d, 1-d, offset 1-d) collapse to the flat
kernel, and every strided case (F order, negative steps, offset 3-d views, broadcasting,
mixed) keeps three dimensions.
"""

import functools
import math
import operator
import zlib

import numpy as np
import pyopencl as cl
import pytest
from numpy._core.umath import clip as np_clip  # the ufunc (numpy 1.26 has it here too)

import gpuarr as ga
from gpuarr import elemwise
from gpuarr.caches import Cache
from gpuarr.errors import UnsupportedError

REAL = ["bool", "int8", "uint8", "int32", "int64", "uint64", "float16", "float32", "float64"]
COMPLEX = ["complex64", "complex128"]
NUMPY1 = np.lib.NumpyVersion(np.__version__) < "2.0.0"
NUMPY1_SIGN = "numpy 1.x's sign(z) is the sign of z.real (of z.imag where z.real == 0); gpuarr " \
    "follows numpy 2: z / |z|"
COMPLEX_UFUNCS = {"add", "subtract", "multiply", "divide", "negative", "absolute", "square",
                  "reciprocal", "conjugate", "equal", "not_equal", "isnan", "isinf",
                  "isfinite", "sign"}

# ------------------------------------------------------------------ value domains


class D:
    """Where operand values come from: ints in [lo, hi] (the whole dtype range when `full`),
    floats in [flo, fhi]; `nonzero` replaces zeros by one (divisors)."""

    def __init__(self, lo=-100, hi=100, flo=None, fhi=None, full=False, nonzero=False,
                 dtype=None):
        self.lo, self.hi = lo, hi
        self.flo = lo if flo is None else flo
        self.fhi = hi if fhi is None else fhi
        self.full, self.nonzero, self.dtype = full, nonzero, dtype


ANY = D(full=True)
NONZERO = D(full=True, nonzero=True)
SHIFT = D(full=True)  # second operand of shifts: replaced by [0, bits) in _pool
EXACT, APPROX = "exact", "approx"

# name -> (kind, operand domains). EXACT: bitwise equal to numpy (NaNs equal, and signed
# zeros checked unless the op leaves them unspecified); APPROX: within a few ulp.
SPECS = {
    "add": (EXACT, [ANY, ANY]),
    "subtract": (EXACT, [ANY, ANY]),
    "multiply": (EXACT, [ANY, ANY]),
    "divide": (APPROX, [ANY, NONZERO]),
    "true_divide": (APPROX, [ANY, NONZERO]),
    "floor_divide": (EXACT, [ANY, NONZERO]),
    "remainder": (EXACT, [ANY, NONZERO]),
    "mod": (EXACT, [ANY, NONZERO]),
    "fmod": (EXACT, [ANY, NONZERO]),
    "power": (APPROX, [D(-10, 10, 0.5, 4), D(0, 5, -3, 3)]),
    "float_power": (APPROX, [D(-10, 10, 0.5, 4), D(0, 5, -3, 3)]),
    "negative": (EXACT, [ANY]),
    "positive": (EXACT, [ANY]),
    "absolute": (EXACT, [ANY]),
    "abs": (EXACT, [ANY]),
    "fabs": (EXACT, [ANY]),
    "sign": (EXACT, [ANY]),
    "reciprocal": (APPROX, [NONZERO]),
    "square": (EXACT, [ANY]),
    "sqrt": (APPROX, [D(0, 100)]),
    "cbrt": (APPROX, [D(-100, 100)]),
    "exp": (APPROX, [D(-5, 5)]),
    "exp2": (APPROX, [D(-5, 5)]),
    "expm1": (APPROX, [D(-5, 5)]),
    "log": (APPROX, [D(1, 100, 0.1, 100)]),
    "log2": (APPROX, [D(1, 100, 0.1, 100)]),
    "log10": (APPROX, [D(1, 100, 0.1, 100)]),
    "log1p": (APPROX, [D(0, 100, -0.9, 100)]),
    "logaddexp": (APPROX, [D(-5, 5), D(-5, 5)]),
    "logaddexp2": (APPROX, [D(-5, 5), D(-5, 5)]),
    "sin": (APPROX, [D(-3, 3)]),
    "cos": (APPROX, [D(-3, 3)]),
    "tan": (APPROX, [D(-1, 1, -1.4, 1.4)]),
    "arcsin": (APPROX, [D(-1, 1)]),
    "arccos": (APPROX, [D(-1, 1)]),
    "arctan": (APPROX, [D(-5, 5)]),
    "arctan2": (APPROX, [D(-5, 5), D(-5, 5)]),
    "hypot": (APPROX, [D(-5, 5), D(-5, 5)]),
    "sinh": (APPROX, [D(-5, 5)]),
    "cosh": (APPROX, [D(-5, 5)]),
    "tanh": (APPROX, [D(-5, 5)]),
    "arcsinh": (APPROX, [D(-5, 5)]),
    "arccosh": (APPROX, [D(1, 100)]),
    "arctanh": (APPROX, [D(0, 0, -0.95, 0.95)]),
    "deg2rad": (APPROX, [ANY]),
    "rad2deg": (APPROX, [ANY]),
    "degrees": (APPROX, [ANY]),
    "radians": (APPROX, [ANY]),
    "floor": (EXACT, [ANY]),
    "ceil": (EXACT, [ANY]),
    "trunc": (EXACT, [ANY]),
    "rint": (EXACT, [ANY]),
    "maximum": (EXACT, [ANY, ANY]),
    "minimum": (EXACT, [ANY, ANY]),
    "fmax": (EXACT, [ANY, ANY]),
    "fmin": (EXACT, [ANY, ANY]),
    "clip": (EXACT, [ANY, ANY, ANY]),
    "where": (EXACT, [D(dtype="bool"), ANY, ANY]),
    "isnan": (EXACT, [ANY]),
    "isinf": (EXACT, [ANY]),
    "isfinite": (EXACT, [ANY]),
    "signbit": (EXACT, [ANY]),
    "copysign": (EXACT, [ANY, ANY]),
    "nextafter": (EXACT, [ANY, ANY]),
    "ldexp": (EXACT, [D(-10, 10), D(-5, 5, dtype="int32")]),
    "greater": (EXACT, [ANY, ANY]),
    "greater_equal": (EXACT, [ANY, ANY]),
    "less": (EXACT, [ANY, ANY]),
    "less_equal": (EXACT, [ANY, ANY]),
    "equal": (EXACT, [ANY, ANY]),
    "not_equal": (EXACT, [ANY, ANY]),
    "logical_and": (EXACT, [ANY, ANY]),
    "logical_or": (EXACT, [ANY, ANY]),
    "logical_xor": (EXACT, [ANY, ANY]),
    "logical_not": (EXACT, [ANY]),
    "bitwise_and": (EXACT, [ANY, ANY]),
    "bitwise_or": (EXACT, [ANY, ANY]),
    "bitwise_xor": (EXACT, [ANY, ANY]),
    "invert": (EXACT, [ANY]),
    "bitwise_not": (EXACT, [ANY]),
    "left_shift": (EXACT, [ANY, SHIFT]),
    "right_shift": (EXACT, [ANY, SHIFT]),
    "conj": (EXACT, [ANY]),
    "conjugate": (EXACT, [ANY]),
    "heaviside": (EXACT, [ANY, ANY]),
}
# Aliases share their kernels with the ufunc they name: checked only on the cheap cases.
ALIASES = {"divide", "mod", "abs", "degrees", "radians", "bitwise_not", "conj"}
# Ops whose sign of zero numpy leaves to the implementation (which of +-0 max(0, -0) gives).
UNSIGNED_ZERO = {"maximum", "minimum", "fmax", "fmin", "clip"}

FLOAT_SPECIALS = [0.0, -0.0, 0.5, -0.5, 1.5, -1.5, 2.5, -2.5, 1.0, -1.0, 3.0]
POOL = 240  # values per operand: enough for the largest parent array, (3, 8, 10)


def _np_func(name):
    return np.clip if name == "clip" else getattr(np, name)


def _ga_func(name):
    return getattr(ga, name)


def _operand_dtypes(name, dtype):
    return [np.dtype(d.dtype or dtype) for d in SPECS[name][1]]


def _numpy_accepts(name, dtype):
    """numpy's verdict on the operand dtypes (TypeError -> rejected)."""
    if name == "where":
        return True
    uf = np_clip if name == "clip" else getattr(np, name)
    try:
        uf.resolve_dtypes((*_operand_dtypes(name, dtype), None))
    except TypeError:
        return False
    return True


@functools.cache
def _pool(name, dtype, k):
    """POOL deterministic values for operand k of ufunc `name`, specials first."""
    domain = SPECS[name][1][k]
    dt = np.dtype(domain.dtype or dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name}/{dt}/{k}".encode()))
    if dt.kind == "b":
        vals = rng.integers(0, 2, POOL).astype(bool)
        vals[:4] = [True, False, True, True]
        return vals
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if domain is SHIFT and k == 1:
            lo, hi = 0, dt.itemsize * 8 - 1
        elif domain.full:
            lo, hi = int(info.min), int(info.max)
        else:
            lo, hi = max(domain.lo, int(info.min)), min(domain.hi, int(info.max))
        vals = rng.integers(lo, hi, POOL, dtype=dt, endpoint=True)
        specials = [v for v in (lo, hi, 0, 1, -1, 2, -2) if lo <= v <= hi]
    else:
        real = dt.kind == "f"
        lo, hi = (domain.flo, domain.fhi) if real else (-10.0, 10.0)
        vals = rng.uniform(lo, hi, POOL)
        if not real:
            vals = vals + 1j * rng.uniform(lo, hi, POOL)
        specials = [v for v in FLOAT_SPECIALS if lo <= v <= hi]
        specials = specials[k:] + specials[:k]  # operands meet different specials
        if not real:
            specials = [complex(a, b) for a, b in zip(specials, [*specials[::-1], 1.0])]
        vals = vals.astype(dt)
    vals[: len(specials)] = np.array(specials, dtype=dt)
    if domain.nonzero:
        vals[vals == 0] = 1
    return vals


def _case_operands(case, name, dtype, ctx):
    """(host operands, device operands) of one layout case."""
    nin = len(SPECS[name][1])
    hosts, devs = [], []
    for k in range(nin):
        pool = _pool(name, dtype, k)
        lay = case if case != "mixed" else ("F", "negstep", "offset3d")[k]
        if lay == "0d":
            host = pool[:1].reshape(())
            hv, dv = host, ga.asarray(host, context=ctx)
        elif lay == "empty":
            host = pool[:0]
            hv, dv = host, ga.asarray(host, context=ctx)
        elif lay == "vec":
            host = pool[:7]
            hv, dv = host, ga.asarray(host, context=ctx)
        elif lay == "offset1d":
            host = pool[:8]
            hv, dv = host[1:], ga.asarray(host, context=ctx)[1:]
        elif lay == "F":
            hv = np.asfortranarray(pool[:60].reshape(3, 4, 5))
            dv = ga.asarray(hv, context=ctx)
            assert dv.strides == hv.strides
        elif lay == "negstep":
            host = pool[:240].reshape(3, 8, 10)
            hv, dv = host[::-1, ::2, ::-2], ga.asarray(host, context=ctx)[::-1, ::2, ::-2]
        elif lay == "offset3d":
            host = pool[:120].reshape(4, 5, 6)
            hv, dv = host[1:, 1:, 1:], ga.asarray(host, context=ctx)[1:, 1:, 1:]
        elif lay == "bcast":
            if nin == 1:
                host = pool[:15].reshape(3, 1, 5)
                hv = np.broadcast_to(host, (3, 4, 5))
                dv = ga.broadcast_to(ga.asarray(host, context=ctx), (3, 4, 5))
            else:
                shape = [(3, 1, 5), (4, 1), (5,)][k]
                hv = pool[: math.prod(shape)].reshape(shape)
                dv = ga.asarray(hv, context=ctx)
        else:
            raise AssertionError(case)
        hosts.append(hv)
        devs.append(dv)
    return hosts, devs


# ------------------------------------------------------------------ comparison


def _tolerance(dt):
    dt = np.dtype(dt)
    if dt in (np.float16,):
        return 1e-3, 1e-3
    if dt in (np.float32, np.complex64):
        return 2e-6, 1e-6
    return 1e-14, 1e-14


def assert_like(got, expected, exact=True, signed_zeros=True):
    """`got` (a GpuArray) has numpy's dtype, shape and values."""
    expected = np.asarray(expected)
    assert isinstance(got, ga.GpuArray), type(got)
    assert got.dtype == expected.dtype, f"dtype {got.dtype}, numpy {expected.dtype}"
    assert got.shape == expected.shape, f"shape {got.shape}, numpy {expected.shape}"
    host = got.get()
    if exact or expected.dtype.kind in "biu":
        np.testing.assert_array_equal(host, expected)
        if signed_zeros and expected.dtype.kind in "fc":
            for part in (np.real, np.imag) if expected.dtype.kind == "c" else (np.real,):
                h, e = part(host), part(expected)
                zero = e == 0
                np.testing.assert_array_equal(np.signbit(h[zero]), np.signbit(e[zero]),
                                              err_msg="sign of zero differs")
    else:
        rtol, atol = _tolerance(expected.dtype)
        wide = np.complex128 if expected.dtype.kind == "c" else np.float64
        np.testing.assert_allclose(host.astype(wide), expected.astype(wide), rtol=rtol,
                                   atol=atol, equal_nan=True)


def _expected(fn):
    with np.errstate(all="ignore"):
        return fn()


# Complex results that round more than once (products, hypot): a few ulp, not bit-exact.
COMPLEX_APPROX = {"multiply", "square", "absolute", "abs", "sign"}


def _check_call(name, hosts, devs):
    exact = SPECS[name][0] == EXACT and not (
        name in COMPLEX_APPROX and any(h.dtype.kind == "c" for h in hosts))
    expected = _expected(lambda: _np_func(name)(*hosts))
    got = _ga_func(name)(*devs)
    assert_like(got, expected, exact=exact, signed_zeros=name not in UNSIGNED_ZERO)


# ------------------------------------------------------------------ the matrix

CASES = ["0d", "empty", "vec", "offset1d", "F", "negstep", "offset3d", "bcast", "mixed"]
CHEAP_CASES = ["0d", "empty", "vec"]


def _matrix():
    accepted, rejected = [], []
    for name in SPECS:
        dts = REAL + (COMPLEX if name in COMPLEX_UFUNCS else [])
        for dt in dts:
            (accepted if _numpy_accepts(name, dt) else rejected).append((name, dt))
    return accepted, rejected


ACCEPTED, REJECTED = _matrix()
MATRIX = [
    pytest.param(name, dt, case, id=f"{name}-{dt}-{case}")
    for name, dt in ACCEPTED
    for case in (CHEAP_CASES if name in ALIASES else CASES)
    if not (case == "mixed" and len(SPECS[name][1]) == 1)
]


@pytest.mark.parametrize(("name", "dtype", "case"), MATRIX)
def test_ufunc_matches_numpy(ctx, name, dtype, case):
    if name == "sign" and dtype in COMPLEX and NUMPY1:
        pytest.skip(NUMPY1_SIGN)
    hosts, devs = _case_operands(case, name, dtype, ctx)
    _check_call(name, hosts, devs)


@pytest.mark.parametrize(("name", "dtype"), REJECTED, ids=[f"{n}-{d}" for n, d in REJECTED])
def test_ufunc_rejected_like_numpy(ctx, name, dtype):
    hosts, devs = _case_operands("vec", name, dtype, ctx)
    with pytest.raises(TypeError):
        _np_func(name)(*hosts)
    with pytest.raises(TypeError):
        _ga_func(name)(*devs)


def test_layout_cases_take_flat_and_strided_kernels(ctx):
    """The cases exercise the kernel without index arithmetic and the 3-d strided one."""
    for case, kdims in [("vec", {0}), ("offset1d", {0}), ("0d", {0}), ("F", {3}),
                        ("negstep", {3}), ("offset3d", {3}), ("bcast", {3}), ("mixed", {3})]:
        hosts, devs = _case_operands(case, "add", "float32", ctx)
        shape = np.broadcast_shapes(*(h.shape for h in hosts))
        arrays = [*devs, ga.empty(shape, "float32", context=ctx)]
        dims, strides = elemwise.collapse(
            shape, [elemwise._element_strides(a, len(shape)) for a in arrays])
        contiguous = len(dims) == 1 and all(s[0] == 1 for s in strides)
        assert {0 if contiguous else len(dims)} == kdims, case


# Complex inputs to the other ufuncs: numpy's answer or UnsupportedError, never a wrong one.
OTHER_COMPLEX = [(name, dt) for name in SPECS if name not in COMPLEX_UFUNCS
                 and name not in ALIASES and name != "where" for dt in COMPLEX]


@pytest.mark.parametrize(("name", "dtype"), OTHER_COMPLEX,
                         ids=[f"{n}-{d}" for n, d in OTHER_COMPLEX])
def test_complex_other_ufuncs_match_numpy_or_unsupported(ctx, name, dtype):
    hosts, devs = _case_operands("vec", name, dtype, ctx)
    try:
        expected = _expected(lambda: _np_func(name)(*hosts))
    except TypeError:
        with pytest.raises(TypeError):
            _ga_func(name)(*devs)
        return
    try:
        got = _ga_func(name)(*devs)
    except UnsupportedError:
        return
    assert_like(got, expected, exact=SPECS[name][0] == EXACT,
                signed_zeros=name not in UNSIGNED_ZERO)


def test_documented_unsupported_combinations(ctx):
    z = ga.asarray(np.array([1 + 2j, 3 - 1j], np.complex64), context=ctx)
    b = ga.asarray(np.array([True, False]), context=ctx)
    for fn in (lambda: z < z, lambda: ga.maximum(z, z), lambda: ga.logical_and(z, z)):
        with pytest.raises(UnsupportedError):
            fn()
    for fn, np_fn in ((lambda: b - b, lambda: np.array([True]) - np.array([True])),
                      (lambda: -b, lambda: -np.array([True]))):
        with pytest.raises(TypeError):
            np_fn()
        with pytest.raises(TypeError):
            fn()


def test_aliases_are_the_same_ufuncs():
    for alias, name in [("divide", "true_divide"), ("mod", "remainder"), ("abs", "absolute"),
                        ("conj", "conjugate"), ("bitwise_not", "invert"),
                        ("degrees", "rad2deg"), ("radians", "deg2rad")]:
        assert getattr(ga, alias) is getattr(ga, name)
    assert ga.around is ga.round


# ------------------------------------------------------------------ edge values

FLOATS = ["float16", "float32", "float64"]
NAN, INF = np.nan, np.inf


def _pair(ctx, a, b, dt):
    ha, hb = np.array(a, dt), np.array(b, dt)
    return ha, hb, ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx)


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("name", ["maximum", "minimum", "fmax", "fmin"])
def test_extrema_nan_inf_zero(ctx, name, dt):
    a = [NAN, 1.0, NAN, -INF, INF, 0.0, -0.0, 2.0, -0.0, INF]
    b = [1.0, NAN, NAN, INF, -INF, -0.0, 0.0, -1.0, -0.0, INF]
    ha, hb, da, db = _pair(ctx, a, b, dt)
    assert_like(_ga_func(name)(da, db), getattr(np, name)(ha, hb), signed_zeros=False)
    # equal zeros of one sign keep it
    got = _ga_func(name)(da, db).get()
    assert np.signbit(got[8])


SPECIAL = [NAN, -INF, INF, -0.0, 0.0, -3.0, 3.0, 0.25, -1e-3]


@pytest.mark.parametrize("dt", FLOATS)
def test_sign_and_predicates_on_specials(ctx, dt):
    h = np.array(SPECIAL, dt)
    d = ga.asarray(h, context=ctx)
    for name in ("sign", "isnan", "isinf", "isfinite", "signbit", "absolute", "negative",
                 "floor", "ceil", "trunc", "rint"):
        assert_like(_ga_func(name)(d), _expected(lambda n=name: getattr(np, n)(h)))


@pytest.mark.parametrize("dt", COMPLEX)
def test_complex_predicates_and_sign_on_specials(ctx, dt):
    h = np.array([complex(NAN, 0), complex(0, NAN), complex(INF, 1), complex(1, -INF),
                  complex(0, 0), complex(3, 4), complex(-0.0, 2)], dt)
    d = ga.asarray(h, context=ctx)
    for name in ("isnan", "isinf", "isfinite"):
        assert_like(_ga_func(name)(d), getattr(np, name)(h))
    finite = h[4:]
    if not NUMPY1:  # NUMPY1_SIGN
        assert_like(ga.sign(ga.asarray(finite, context=ctx)), np.sign(finite), exact=False)
    assert_like(d == d, h == h)
    assert_like(d != d, h != h)


@pytest.mark.parametrize("dt", FLOATS)
def test_heaviside_and_copysign_specials(ctx, dt):
    x = [NAN, -INF, INF, -0.0, 0.0, -2.0, 2.0, 0.0, -0.0]
    h2 = [0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, NAN, -0.0]
    ha, hb, da, db = _pair(ctx, x, h2, dt)
    assert_like(ga.heaviside(da, db), np.heaviside(ha, hb))
    signs = [1.0, -1.0, -0.0, 0.0, -INF, INF, -3.0, 2.0, -0.0]
    ha, hb, da, db = _pair(ctx, x, signs, dt)
    assert_like(ga.copysign(da, db), np.copysign(ha, hb))
    assert_like(ga.copysign(db, da)[1:], np.copysign(hb, ha)[1:])  # sign from non-NaN


@pytest.mark.parametrize("dt", FLOATS)
def test_float_division_by_zero(ctx, dt):
    a = [1.0, -1.0, 0.0, -0.0, INF, NAN, 2.5, -2.5]
    b = [0.0, 0.0, 0.0, -0.0, 0.0, 0.0, -0.0, -0.0]
    ha, hb, da, db = _pair(ctx, a, b, dt)
    for name in ("true_divide", "floor_divide", "remainder", "fmod"):
        assert_like(_ga_func(name)(da, db), _expected(lambda n=name: getattr(np, n)(ha, hb)))
    assert_like(ga.reciprocal(db), _expected(lambda: np.reciprocal(hb)))
    assert_like(da / 0, _expected(lambda: ha / 0))
    assert_like(da // 0.0, _expected(lambda: ha // 0.0))
    assert_like(da % 0.0, _expected(lambda: ha % 0.0))


@pytest.mark.parametrize("dt", FLOATS)
def test_float_floor_divide_and_remainder_signs(ctx, dt):
    a = [7.0, -7.0, 7.0, -7.0, 0.0, -0.0, 6.0, -6.0, 1e-3, INF, 5.0]
    b = [2.0, 2.0, -2.0, -2.0, 3.0, -3.0, 3.0, 3.0, -1.0, 2.0, INF]
    ha, hb, da, db = _pair(ctx, a, b, dt)
    for name in ("floor_divide", "remainder", "fmod"):
        assert_like(_ga_func(name)(da, db), _expected(lambda n=name: getattr(np, n)(ha, hb)))


INTS = ["int8", "uint8", "int32", "int64", "uint64"]


@pytest.mark.parametrize("dt", INTS)
def test_integer_division_by_zero_gives_zero(ctx, dt):
    info = np.iinfo(dt)
    a = [int(info.min), int(info.max), 0, 1, 7, int(info.max) // 3]
    ha, hb, da, db = _pair(ctx, a, [0] * len(a), dt)
    for name in ("floor_divide", "remainder", "fmod"):
        expected = _expected(lambda n=name: getattr(np, n)(ha, hb))
        assert (expected == 0).all()
        assert_like(_ga_func(name)(da, db), expected)
    assert_like(da // 0, _expected(lambda: ha // 0))
    assert_like(da % 0, _expected(lambda: ha % 0))
    assert_like(ga.true_divide(da, db), _expected(lambda: np.true_divide(ha, hb)))


@pytest.mark.parametrize("dt", ["int8", "int32", "int64"])
def test_int_min_divided_by_minus_one(ctx, dt):
    lo = int(np.iinfo(dt).min)
    a = [lo, lo, lo + 1, -7, 7]
    b = [-1, 1, -1, -1, -1]
    ha, hb, da, db = _pair(ctx, a, b, dt)
    for name in ("floor_divide", "remainder", "fmod"):
        assert_like(_ga_func(name)(da, db), _expected(lambda n=name: getattr(np, n)(ha, hb)))
    assert_like(da // -1, _expected(lambda: ha // -1))
    assert_like(da % -1, _expected(lambda: ha % -1))


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "int64", "uint64"])
def test_integer_power_wraps(ctx, dt):
    signed = np.dtype(dt).kind == "i"
    base = [3, 2, -3 if signed else 5, 7, 1, 0, -1 if signed else 255, 2]
    exps = [100, 63, 41, 1000, 12345, 0, 999, 64]
    top = int(np.iinfo(dt).max)
    ha, hb, da, db = _pair(ctx, base, [min(e, top) for e in exps], dt)
    assert_like(ga.power(da, db), _expected(lambda: np.power(ha, hb)))
    assert_like(da ** 100, _expected(lambda: ha ** 100))


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "int64", "uint64"])
def test_shifts_past_the_width(ctx, dt):
    bits = np.dtype(dt).itemsize * 8
    info = np.iinfo(dt)
    vals = [1, -1 if info.min else 3, int(info.min), int(info.max), 5, -100 if info.min else 100]
    shifts = [bits - 1, bits, bits + 1, min(100, int(info.max)), 0, bits]
    ha, hb, da, db = _pair(ctx, vals, shifts, dt)
    for name in ("left_shift", "right_shift"):
        assert_like(_ga_func(name)(da, db), getattr(np, name)(ha, hb))
    assert_like(da << bits, ha << bits)
    assert_like(da >> bits, ha >> bits)
    if info.min:  # negative shift counts: numpy gives 0 (left) and the sign (right)
        hn = np.array([-1, -bits, -100], dt)
        dn = ga.asarray(hn, context=ctx)
        x = ga.asarray(ha[:3], context=ctx)
        assert_like(ga.left_shift(x, dn), np.left_shift(ha[:3], hn))
        assert_like(ga.right_shift(x, dn), np.right_shift(ha[:3], hn))


def test_ldexp_large_exponents(ctx):
    hm = np.array([1.0, 1.5, -2.0, 3.0], np.float32)
    for edt in ("int32", "int64"):
        he = np.array([200, -200, 2**31 - 1 if edt == "int32" else 2**40, 3], edt)
        got = ga.ldexp(ga.asarray(hm, context=ctx), ga.asarray(he, context=ctx))
        assert_like(got, _expected(lambda e=he: np.ldexp(hm, e)))


@pytest.mark.parametrize("dt", [np.float32, np.float64])
def test_logarithms_across_the_range(ctx, dt):
    """log, log2, log10 and log1p over every binade (subnormals included) and their special
    values, within OpenCL's bounds of numpy's float64 results (PoCL's CPUs compute them in
    ufunc_helpers' own vectorised log), and log2 exact at powers of two."""
    if dt == np.float64 and not ctx.fp64:
        pytest.skip("no float64 on this device")
    fi = np.finfo(dt)
    rng = np.random.default_rng(17)
    config = ctx.device.cl_device.single_fp_config if dt == np.float32 else None
    denorms = config is None or bool(config & cl.device_fp_config.DENORM)
    tiniest = fi.smallest_subnormal if denorms else fi.smallest_normal  # (else flushed)
    lo, hi = np.log(float(tiniest)), np.log(float(fi.max))
    wide = np.exp(rng.uniform(lo, hi, 20000)).astype(dt)
    near1 = (1 + rng.uniform(-1e-3, 1e-3, 2000)).astype(dt)
    special = np.array([0.0, -0.0, -1.0, -np.inf, np.inf, np.nan, tiniest,
                        fi.smallest_normal, fi.max, 1.0], dt)
    x = np.concatenate([wide, near1, special])
    for name, bound, arg in [("log", 3, x), ("log2", 3, x), ("log10", 3, x),
                             ("log1p", 2, np.concatenate([x - 1, rng.uniform(-1e-6, 1e-6,
                                                                             2000).astype(dt)]))]:
        arg = arg.astype(dt)
        got = getattr(ga, name)(ga.asarray(arg, context=ctx)).get()
        with np.errstate(all="ignore"):
            want = getattr(np, name)(arg.astype(np.float64))
        assert got.dtype == dt
        finite = np.isfinite(want)
        np.testing.assert_array_equal(got[~finite], want[~finite].astype(dt), err_msg=name)
        ulp = np.spacing(np.abs(want[finite]).astype(dt)).astype(np.float64)
        err = np.abs(got[finite].astype(np.float64) - want[finite]) / ulp
        assert err.max() <= bound, (name, float(err.max()), arg[finite][err.argmax()])
    k = np.arange(fi.minexp - (fi.nmant if denorms else 0), fi.maxexp)
    got = ga.log2(ga.asarray(np.ldexp(np.ones(k.size, dt), k), context=ctx)).get()
    np.testing.assert_array_equal(got, k.astype(dt))


def test_float32_power_special_values_and_range(ctx):
    """float32 x ** y: C99's special values as numpy gives them (signs of zeros and
    infinities included) over a grid of special operands, and random operands within
    OpenCL's 16 ulp of the float64 result (PoCL's CPUs, ufunc_helpers' own pow: 1 ulp)."""
    sp = np.array([0, -0.0, 1, -1, np.inf, -np.inf, np.nan, 2, -2, 0.5, -0.5, 1e-45, -1e-45,
                   3e38, -3e38], np.float32)
    ys = np.array([0, -0.0, 1, -1, 2, -2, 3, -3, 0.5, -0.5, np.inf, -np.inf, np.nan, 1e10,
                   2**25, 2**24 + 2, 1e-45, 7, -7, 1.5], np.float32)
    x, y = (a.ravel() for a in np.meshgrid(sp, ys))
    got = ga.power(ga.asarray(x, context=ctx), ga.asarray(y, context=ctx)).get()
    with np.errstate(all="ignore"):
        want = np.power(x, y)
    exact = ~np.isfinite(want) | (want == 0) | (np.abs(x) == 1) | (y == 0)
    np.testing.assert_array_equal(got[exact], want[exact])
    number = ~np.isnan(want)  # (a NaN's sign bit is not numpy's to promise)
    np.testing.assert_array_equal(np.signbit(got[number]), np.signbit(want[number]))
    np.testing.assert_allclose(got[~exact], want[~exact], rtol=2e-6)
    rng = np.random.default_rng(23)
    x = np.concatenate([rng.uniform(-10, 10, 20000), np.exp(rng.uniform(-80, 80, 20000))])
    y = np.concatenate([np.round(rng.uniform(-8, 8, 20000)), rng.uniform(-1, 1, 20000)])
    x, y = x.astype(np.float32), y.astype(np.float32)
    got = ga.power(ga.asarray(x, context=ctx), ga.asarray(y, context=ctx)).get()
    want = np.power(x.astype(np.float64), y.astype(np.float64))
    finite = np.isfinite(want) & (np.abs(want) >= np.finfo(np.float32).smallest_normal) & \
        (np.abs(want) <= np.finfo(np.float32).max)
    ulp = np.spacing(np.abs(want[finite]).astype(np.float32)).astype(np.float64)
    err = np.abs(got[finite].astype(np.float64) - want[finite]) / ulp
    assert err.max() <= (1 if "-DGA_OWN_LOG" in ctx.build_options else 16), err.max()
    assert np.array_equal(np.isnan(got), np.isnan(want))


def test_nextafter_float16_steps_one_half_ulp(ctx):
    h = np.array([1.0, 1.0, 0.0, -2.0], np.float16)
    t = np.array([2.0, 0.0, 1.0, -3.0], np.float16)
    got = ga.nextafter(ga.asarray(h, context=ctx), ga.asarray(t, context=ctx))
    assert_like(got, np.nextafter(h, t))


# ------------------------------------------------------------------ promotion

PROMO = ["bool", "int8", "uint8", "int64", "uint64", "float16", "float32", "float64",
         "complex64"]
PAIRS = [(a, b) for i, a in enumerate(PROMO) for b in PROMO[i + 1:]]


def _vals(dt, n=5):
    dt = np.dtype(dt)
    if dt.kind == "b":
        return np.array([True, False, True, False, True][:n])
    return np.array([1, 2, 3, 0, 5][:n]).astype(dt) * (1 + 1j if dt.kind == "c" else 1)


@pytest.mark.parametrize(("a", "b"), PAIRS, ids=[f"{a}+{b}" for a, b in PAIRS])
def test_array_array_promotion(ctx, a, b):
    ha, hb = _vals(a), _vals(b)
    got = ga.add(ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx))
    assert got.dtype == np.result_type(ha, hb)
    assert_like(got, ha + hb)


@pytest.mark.parametrize(("a", "b"), [("int64", "uint64"), ("uint64", "int64"),
                                      ("int8", "uint64"), ("int32", "uint32")])
def test_mixed_sign_comparisons(ctx, a, b):
    ia, ib = np.iinfo(a), np.iinfo(b)
    ha = np.array([-1 if ia.min else 1, 0, 5, int(ia.max), int(ia.min)], a)
    hb = np.array([int(ib.max), 0, 5, 2, -1 if ib.min else 0], b)
    da, db = ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx)
    for name in ("less", "greater", "equal", "not_equal", "less_equal", "greater_equal"):
        assert_like(_ga_func(name)(da, db), getattr(np, name)(ha, hb))


@pytest.mark.parametrize("dt", ["int8", "uint8", "uint64"])
def test_comparisons_with_out_of_range_python_ints(ctx, dt):
    """numpy 2 compares with any Python int (no OverflowError): u8 < -1 is all False."""
    if NUMPY1:
        pytest.skip("numpy 1.x raises OverflowError here; gpuarr follows numpy 2")
    h = np.array([0, 1, int(np.iinfo(dt).max)], dt)
    d = ga.asarray(h, context=ctx)
    for big in (-1, 1000, 2**64, -(2**63) - 1):
        for op in (operator.lt, operator.le, operator.gt, operator.ge, operator.eq,
                   operator.ne):
            assert_like(op(d, big), op(h, big))
        assert_like(ga.less(big, d), np.less(big, h))


def _like_numpy(np_fn, ga_fn, exact=True):
    """ga_fn() equals np_fn(), or raises the same builtin exception class numpy raises."""
    try:
        expected = _expected(np_fn)
    except (TypeError, ValueError, OverflowError) as e:
        base = next(c for c in (OverflowError, TypeError, ValueError) if isinstance(e, c))
        with pytest.raises(base):
            ga_fn()
        return
    assert_like(ga_fn(), expected, exact=exact)


PY_SCALARS = [True, 3, -3, 1000, 2.5, 1 + 2j]


@pytest.mark.parametrize("dt", REAL)
@pytest.mark.parametrize("scalar", PY_SCALARS, ids=repr)
def test_python_scalar_promotion(ctx, dt, scalar):
    h = _vals(dt)
    d = ga.asarray(h, context=ctx)
    _like_numpy(lambda: h + scalar, lambda: d + scalar)
    _like_numpy(lambda: np.add(h, scalar), lambda: ga.add(d, scalar))


@pytest.mark.parametrize("dt", ["int8", "float32"])
@pytest.mark.parametrize("scalar", PY_SCALARS, ids=repr)
def test_python_scalar_on_the_left(ctx, dt, scalar):
    h = _vals(dt)
    d = ga.asarray(h, context=ctx)
    _like_numpy(lambda: scalar + h, lambda: scalar + d)
    _like_numpy(lambda: scalar * h, lambda: ga.multiply(scalar, d))


def test_promotion_examples_from_numpy2(ctx):
    i8 = ga.asarray(np.array([1, 2, 127], np.int8), context=ctx)
    assert (i8 + 1).dtype == np.int8
    assert_like(i8 + 1, np.array([1, 2, 127], np.int8) + 1)  # wraps to -128
    with pytest.raises(OverflowError):
        i8 + 1000
    with pytest.raises(OverflowError):
        ga.asarray(np.array([1], np.uint8), context=ctx) + (-1)
    u8 = ga.asarray(np.array([1, 2], np.uint8), context=ctx)
    assert (u8 + 1.5).dtype == (np.array([1], np.uint8) + 1.5).dtype == np.float64
    f16 = ga.asarray(np.array([1, 2], np.float16), context=ctx)
    assert (f16 + 1.0).dtype == np.float16
    f32 = ga.asarray(np.array([1, 2], np.float32), context=ctx)
    assert (f32 + np.float64(1)).dtype == np.float64
    assert (f32 + np.float32(1)).dtype == np.float32
    assert (f32 + 1).dtype == np.float32
    assert (f32 + 1j).dtype == np.complex64
    assert_like(ga.add(1, 2), np.add(1, 2))
    assert_like(ga.multiply(2.5, True), np.asarray(np.multiply(2.5, True)))


NP_SCALARS = [np.bool_(True), np.int8(3), np.uint8(3), np.int64(-3), np.uint64(3),
              np.float16(1.5), np.float32(1.5), np.float64(1.5), np.complex64(1 + 1j),
              np.array(2, np.int16)]


@pytest.mark.parametrize("dt", ["int8", "uint8", "float16", "float32"])
@pytest.mark.parametrize("scalar", NP_SCALARS, ids=lambda s: f"{np.asarray(s).dtype}")
def test_numpy_scalar_promotion(ctx, dt, scalar):
    h = _vals(dt)
    d = ga.asarray(h, context=ctx)
    _like_numpy(lambda: h + scalar, lambda: d + scalar)
    _like_numpy(lambda: scalar + h, lambda: scalar + d)


# ------------------------------------------------------------------ dtype= casting= out=


def test_dtype_argument(ctx):
    h8 = np.array([100, 100, -3], np.int8)
    d8 = ga.asarray(h8, context=ctx)
    assert_like(ga.add(d8, d8, dtype="int32"), np.add(h8, h8, dtype="int32"))
    assert_like(ga.add(d8, d8, dtype=np.float32), np.add(h8, h8, dtype=np.float32))
    assert_like(ga.sqrt(d8[:2], dtype="float32"), np.sqrt(h8[:2], dtype="float32"),
                exact=False)
    hf = np.array([1.5, 2.25], np.float32)
    df = ga.asarray(hf, context=ctx)
    assert_like(ga.multiply(df, df, dtype="float64"), np.multiply(hf, hf, dtype="float64"))
    # a dtype that needs an unsafe input cast
    _like_numpy(lambda: np.add(hf, hf, dtype="int32"), lambda: ga.add(df, df, dtype="int32"))
    _like_numpy(lambda: np.add(hf, hf, dtype="int32", casting="unsafe"),
                lambda: ga.add(df, df, dtype="int32", casting="unsafe"))


def test_casting_argument(ctx):
    h8 = np.array([1, 2], np.int8)
    hf = np.array([1.5, -2.5], np.float32)
    d8, df = ga.asarray(h8, context=ctx), ga.asarray(hf, context=ctx)
    for casting in ("no", "equiv", "safe", "same_kind", "unsafe"):
        _like_numpy(lambda c=casting: np.add(h8, hf, casting=c),
                    lambda c=casting: ga.add(d8, df, casting=c))
        _like_numpy(lambda c=casting: np.add(hf, hf, casting=c),
                    lambda c=casting: ga.add(df, df, casting=c))
    with pytest.raises(TypeError):
        ga.add(d8, df, casting="no")


def test_out_argument(ctx):
    ha = np.array([[1.5, -2.5, 3.0]], np.float64)
    hb = np.array([[100.25], [-7.75]], np.float64)
    da, db = ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx)
    out = ga.empty((2, 3), "float64", context=ctx)
    assert ga.add(da, db, out=out) is out
    assert_like(out, ha + hb)
    out32 = ga.empty((2, 3), "float32", context=ctx)  # same_kind downcast is fine
    assert ga.multiply(da, db, out=out32) is out32
    assert_like(out32, np.multiply(ha, hb, out=np.empty((2, 3), np.float32)))
    out_t = ga.empty((2, 3), "float64", context=ctx)
    assert ga.subtract(da, db, out=(out_t,)) is out_t
    assert_like(out_t, ha - hb)
    # int16 out for a float64 result: numpy's same_kind rule refuses
    with pytest.raises(TypeError):
        np.add(ha, hb, out=np.empty((2, 3), np.int16))
    with pytest.raises(TypeError):
        ga.add(da, db, out=ga.empty((2, 3), "int16", context=ctx))
    o16 = ga.empty((2, 3), "int16", context=ctx)
    ga.add(da, db, out=o16, casting="unsafe")
    assert_like(o16, np.add(ha, hb, out=np.empty((2, 3), np.int16), casting="unsafe"))
    # wrong shapes
    for shape in ((3,), (2, 2), (1, 3)):
        with pytest.raises(ValueError):
            ga.add(da, db, out=ga.empty(shape, "float64", context=ctx))
    # an out larger than the inputs' broadcast shape is fine: the inputs broadcast into it
    big = ga.empty((4, 2, 3), "float64", context=ctx)
    ga.add(da, db, out=big)
    assert_like(big, np.add(ha, hb, out=np.empty((4, 2, 3))))
    # int8 loop with an int32 out: numpy computes in int8 (wraps), then casts
    h8 = np.array([100, 1], np.int8)
    d8 = ga.asarray(h8, context=ctx)
    o = ga.zeros(2, "int32", context=ctx)
    ga.add(d8, d8, out=o)
    assert_like(o, np.add(h8, h8, out=np.zeros(2, np.int32)))


def test_out_strided_and_aliasing(ctx):
    h = np.arange(12.0).reshape(3, 4)
    d = ga.asarray(h, context=ctx)
    hs = np.zeros((3, 8))
    ds = ga.asarray(hs, context=ctx)
    ga.multiply(d, 2, out=ds[:, ::-2])
    np.multiply(h, 2, out=hs[:, ::-2])
    assert_like(ds, hs)
    # out is an input
    ga.add(d, d, out=d)
    h = h + h
    assert_like(d, h)
    # out overlaps an input shifted by one element: numpy's result is as if buffered
    x = np.arange(10.0)
    dx = ga.asarray(x, context=ctx)
    ga.add(dx[:-1], 1, out=dx[1:])
    np.add(x[:-1], 1, out=x[1:])
    assert_like(dx, x)
    # non-GpuArray out and readonly out
    with pytest.raises(TypeError):
        ga.add(dx, 1, out=np.empty(10))
    with pytest.raises(ValueError):
        ga.add(dx, 1, out=ga.broadcast_to(dx[:1], (10,)))


def test_where_with_out(ctx):
    ha = np.arange(15.0).reshape(3, 5)
    hb = np.full((3, 5), 0.5)
    da, db = ga.asarray(ha, context=ctx), ga.asarray(hb, context=ctx)
    mask = (np.arange(15).reshape(3, 5) % 3) == 0
    for where in (mask, ga.asarray(mask, context=ctx), mask[0], [True, False, True, False, True],
                  False, np.True_):
        ho = np.full((3, 5), -1.0)
        do = ga.asarray(ho, context=ctx)
        assert ga.add(da, db, out=do, where=where) is do
        w = where.get() if isinstance(where, ga.GpuArray) else where
        np.add(ha, hb, out=ho, where=w)
        assert_like(do, ho)
    # a masked int op with a dtype change of the output
    h8 = np.array([1, 2, 3], np.int8)
    ho = np.zeros(3, np.int32)
    do = ga.asarray(ho, context=ctx)
    ga.multiply(ga.asarray(h8, context=ctx), 3, out=do, where=np.array([True, False, True]))
    np.multiply(h8, 3, out=ho, where=np.array([True, False, True]))
    assert_like(do, ho)
    # numpy would leave the masked elements uninitialised: gpuarr asks for out=
    with pytest.raises(ValueError):
        ga.add(da, db, where=mask)


# ------------------------------------------------------------------ operators


def _rsub(a, b):
    return b - a


BINOPS = [operator.add, operator.sub, operator.mul, operator.truediv, operator.floordiv,
          operator.mod, operator.pow, operator.and_, operator.or_, operator.xor,
          operator.lshift, operator.rshift, operator.lt, operator.le, operator.gt,
          operator.ge, operator.eq, operator.ne]
FLOAT_BINOPS = BINOPS[:7] + BINOPS[12:]


@pytest.mark.parametrize("op", BINOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [3, np.int32(2), "array"], ids=str)
def test_int_operators(ctx, op, other):
    h = np.array([[5, -7, 0, 9], [1, 2, 3, 31]], np.int32)
    d = ga.asarray(h, context=ctx)
    if isinstance(other, str):
        ho = np.array([[2, 3, 1, 4], [5, 1, 7, 2]], np.int32)
        do = ga.asarray(ho, context=ctx)
    else:
        ho = do = other
    _like_numpy(lambda: op(h, ho), lambda: op(d, do), exact=op is not operator.truediv)
    rh = np.abs(h) % 8 if op in (operator.pow, operator.lshift, operator.rshift) else h
    rd = ga.asarray(rh, context=ctx)
    _like_numpy(lambda: op(ho, rh), lambda: op(do, rd), exact=op is not operator.truediv)


@pytest.mark.parametrize("op", FLOAT_BINOPS, ids=lambda f: f.__name__)
@pytest.mark.parametrize("other", [2.5, np.float32(-1.5), np.float64(0.75), 2], ids=str)
def test_float_operators(ctx, op, other):
    h = np.array([1.5, -2.25, 3.0, 0.5], np.float32)
    d = ga.asarray(h, context=ctx)
    exact = op not in (operator.truediv, operator.pow)
    _like_numpy(lambda: op(h, other), lambda: op(d, other), exact=exact)
    _like_numpy(lambda: op(other, h), lambda: op(other, d), exact=exact)


@pytest.mark.parametrize("dt", ["int8", "uint8", "int32", "bool", "float32", "float64"])
def test_unary_operators(ctx, dt):
    h = _vals(dt) if dt == "bool" else np.array([3, -2, 0, 7, 127], np.int64).astype(dt)
    d = ga.asarray(h, context=ctx)
    for op in (operator.neg, operator.pos, operator.abs, operator.invert):
        _like_numpy(lambda o=op: o(h), lambda o=op: o(d))


INPLACE = [("iadd", 3), ("isub", 2), ("imul", 3), ("ifloordiv", 2), ("imod", 3), ("ipow", 2),
           ("iand", 6), ("ior", 1), ("ixor", 5), ("ilshift", 2), ("irshift", 1)]


@pytest.mark.parametrize(("name", "value"), INPLACE)
def test_inplace_int_operators(ctx, name, value):
    h = np.array([5, -7, 0, 9, 100], np.int16)
    d = ga.asarray(h, context=ctx)
    before = d
    fn = getattr(operator, name)
    res = fn(d, value)
    h = fn(h, value)
    assert res is before
    assert_like(res, h)
    res = fn(res, np.int8(value))
    h = fn(h, np.int8(value))
    assert res is before
    assert_like(res, h)


def test_inplace_float_operators_and_refusals(ctx):
    h = np.array([1.5, -2.5, 4.0], np.float32)
    d = ga.asarray(h, context=ctx)
    x = d
    for name, v in [("iadd", 1), ("isub", 0.5), ("imul", np.float64(2)), ("itruediv", 4),
                    ("ifloordiv", 0.5), ("imod", 3), ("ipow", 2)]:
        d = getattr(operator, name)(d, v)
        h = getattr(operator, name)(h, v)
        assert d is x
        assert_like(d, h, exact=name not in ("itruediv", "ipow"))
    gi = ga.asarray(np.arange(3), context=ctx)
    with pytest.raises(TypeError):
        gi += 1.5
    with pytest.raises(TypeError):
        gi /= 2
    g8 = ga.asarray(np.arange(3, dtype=np.int8), context=ctx)
    with pytest.raises(OverflowError):
        g8 += 1000
    gb = ga.asarray(np.array([True, False]), context=ctx)
    with pytest.raises(TypeError):
        gb -= True
    ro = ga.broadcast_to(ga.asarray(np.arange(3.0), context=ctx), (2, 3))
    with pytest.raises(ValueError):
        ro += 1
    # x += x[::-1]: the input is read before the writes land
    hv = np.arange(6.0)
    dv = ga.asarray(hv, context=ctx)
    dv += dv[::-1]
    hv += hv[::-1]
    assert_like(dv, hv)


def test_operators_with_unknown_types_return_notimplemented(ctx):
    d = ga.asarray(np.arange(3.0), context=ctx)
    with pytest.raises(TypeError):
        d + "a"
    with pytest.raises(TypeError):
        None * d
    assert (d == "a") is False


# ------------------------------------------------------------------ numpy dispatch


def test_numpy_ufuncs_dispatch_to_gpuarr(ctx):
    h = np.array([0.5, 1.0, 2.0], np.float32)
    d = ga.asarray(h, context=ctx)
    got = np.exp(d)
    assert isinstance(got, ga.GpuArray)
    assert_like(got, np.exp(h), exact=False)
    host = np.array([1.0, 2.0, 3.0])
    for got, expected in [(host + d, host + h), (d + host, h + host), (host * d, host * h),
                          (np.add(d, d), h + h), (np.float64(2) * d, np.float64(2) * h),
                          (np.int8(2) - d, np.int8(2) - h), (np.maximum(host, d),
                                                            np.maximum(host, h)),
                          (host < d, host < h)]:
        assert isinstance(got, ga.GpuArray)
        assert_like(got, expected)
    out = ga.empty(3, "float32", context=ctx)
    assert np.sqrt(d, out=out) is out
    assert_like(out, np.sqrt(h), exact=False)
    with pytest.raises(TypeError):
        np.add.reduce(d)


def test_numpy_ufuncs_dispatch_under_their_own_names(ctx):
    """numpy's ufunc objects name themselves: np.true_divide is 'divide', np.degrees is
    'degrees', np.radians 'radians' (ndarray / GpuArray goes through np.divide)."""
    h = np.array([0.5, 1.0, 2.0], np.float32)
    d = ga.asarray(h, context=ctx)
    host = np.array([1.0, 2.0, 3.0])
    for got, expected in [(np.divide(d, 2), np.divide(h, 2)), (host / d, host / h),
                          (np.float32(3) / d, np.float32(3) / h),
                          (np.true_divide(d, d), h / h), (np.degrees(d), np.degrees(h)),
                          (np.radians(d), np.radians(h)), (np.abs(-d), np.abs(-h)),
                          (np.mod(d, 0.75), np.mod(h, 0.75)), (np.conj(d), np.conj(h))]:
        assert isinstance(got, ga.GpuArray)
        assert_like(got, expected, exact=False)


# ------------------------------------------------------------------ round, fix, parts


@pytest.mark.parametrize("dt", FLOATS)
@pytest.mark.parametrize("decimals", [0, 2, -1])
def test_round(ctx, dt, decimals):
    h = np.array([0.5, 1.5, 2.5, -0.5, -2.5, 0.125, 0.375, 1.2345, -3.14159, 15.0, 25.0, 35.0,
                  -45.0, 123.456, 0.0, -0.0], dt)
    d = ga.asarray(h, context=ctx)
    assert_like(ga.round(d, decimals), np.round(h, decimals))
    assert_like(ga.around(d[::-1], decimals), np.around(h[::-1], decimals))
    out = ga.empty(h.shape, dt, context=ctx)
    assert ga.round(d, decimals, out=out) is out
    assert_like(out, np.round(h, decimals))


@pytest.mark.parametrize("dt", ["int8", "int32", "uint64"])
def test_round_integers(ctx, dt):
    h = np.array([5, 15, 25, 127], dt)
    d = ga.asarray(h, context=ctx)
    for decimals in (0, 2):
        got = ga.round(d, decimals)
        assert got is not d
        assert_like(got, np.round(h, decimals))


@pytest.mark.parametrize("dt", ["float16", "float32", "float64", "int8", "int64"])
def test_fix(ctx, dt):
    h = np.array([2.5, -2.5, 0.7, -0.7, 3, -3, 0]).astype(dt)
    if np.dtype(dt).kind == "f":
        h = np.append(h, np.array([np.nan, np.inf, -np.inf, -0.0], dt))
    d = ga.asarray(h, context=ctx)
    assert_like(ga.fix(d), np.fix(h))


@pytest.mark.parametrize("dt", COMPLEX)
def test_real_imag_are_views(ctx, dt):
    h = np.array([1 + 2j, -3 - 4j, 5.5 + 0j, 0 - 1j], dt)
    z = ga.asarray(h, context=ctx)
    r, i = ga.real(z), ga.imag(z)
    assert_like(r, np.real(h))
    assert_like(i, np.imag(h))
    r.fill(7)
    h.real = 7
    assert_like(z, h)
    i[1:3] = np.array([10, 20])
    h.imag[1:3] = [10, 20]
    assert_like(z, h)
    i += 1
    h.imag += 1
    assert_like(z, h)
    # strided complex views
    assert_like(ga.real(z[::-2]), np.real(h[::-2]))
    assert_like(ga.imag(z[::-2]), np.imag(h[::-2]))
    assert_like(ga.real(z[1:]) * 2, np.real(h[1:]) * 2)


@pytest.mark.parametrize("dt", ["int32", "float32", "bool"])
def test_real_imag_of_real_arrays(ctx, dt):
    h = _vals(dt)
    d = ga.asarray(h, context=ctx)
    assert_like(ga.real(d), np.real(h))
    im = ga.imag(d)
    assert_like(im, np.imag(h))
    with pytest.raises(ValueError):
        im.fill(1)
    with pytest.raises(ValueError):
        np.imag(h)[...] = 1


@pytest.mark.parametrize("dt", FLOATS + COMPLEX)
def test_nan_to_num(ctx, dt):
    vals = [NAN, INF, -INF, 1.5, -0.0, 0.0, -2.5]
    h = np.array(vals, dt)
    if np.dtype(dt).kind == "c":
        h.imag = vals[::-1]  # (1j * inf would put a NaN in the real part)
    d = ga.asarray(h, context=ctx)
    assert_like(ga.nan_to_num(d), np.nan_to_num(h))
    for kw in ({"nan": 9.0}, {"posinf": 1e3}, {"neginf": -7.0},
               {"nan": -1.0, "posinf": 2.0, "neginf": -3.0}):
        assert_like(ga.nan_to_num(d, **kw), np.nan_to_num(h, **kw))
    # the default copy leaves the input alone; copy=False works in place
    assert_like(d, h)
    res = ga.nan_to_num(d, copy=False, nan=4.0)
    np.nan_to_num(h, copy=False, nan=4.0)
    assert_like(d, h)
    assert res is d
    # a strided view
    h2 = np.array(vals * 2, dt)
    d2 = ga.asarray(h2, context=ctx)
    assert_like(ga.nan_to_num(d2[::-3]), np.nan_to_num(h2[::-3]))


@pytest.mark.parametrize("dt", ["int32", "bool"])
def test_nan_to_num_of_exact_types(ctx, dt):
    h = _vals(dt)
    assert_like(ga.nan_to_num(ga.asarray(h, context=ctx)), np.nan_to_num(h))


@pytest.mark.parametrize("dt", ["int8", "uint8", "int64", "float16", "float32", "float64"])
def test_clip(ctx, dt):
    h = np.array([-5, 0, 3, 7, 100, 2, 1]).astype(dt)
    d = ga.asarray(h, context=ctx)
    assert_like(ga.clip(d, 1, 5), np.clip(h, 1, 5))
    assert_like(ga.clip(d, 5, 1), np.clip(h, 5, 1))  # lo > hi gives hi, as numpy
    lo = np.array([0, 1, 2, 3, 4, 5, 6]).astype(dt)
    hi = np.array([1, 9, 2, 8, 50, 1, 6]).astype(dt)
    assert_like(ga.clip(d, ga.asarray(lo, context=ctx), ga.asarray(hi, context=ctx)),
                np.clip(h, lo, hi))
    assert_like(ga.clip(d[::-1], lo, 6), np.clip(h[::-1], lo, 6))
    # bounds broadcasting against a 2-d array
    h2 = np.arange(12).reshape(3, 4).astype(dt)
    lo2 = np.array([[1], [5], [0]]).astype(dt)
    assert_like(ga.clip(ga.asarray(h2, context=ctx), ga.asarray(lo2, context=ctx), 9),
                np.clip(h2, lo2, 9))
    _like_numpy(lambda: np.clip(h, 0.5, 3), lambda: ga.clip(d, 0.5, 3))


@pytest.mark.parametrize("dt", FLOATS)
def test_clip_nan(ctx, dt):
    h = np.array([NAN, 1.0, -INF, INF, 3.0], dt)
    d = ga.asarray(h, context=ctx)
    assert_like(ga.clip(d, 0, 2), np.clip(h, 0, 2))
    lo = np.array([0, NAN, 0, 0, 0], dt)
    assert_like(ga.clip(d, ga.asarray(lo, context=ctx), 2), np.clip(h, lo, 2))


def test_where_function(ctx):
    c = np.array([[True], [False], [True]])
    x = np.arange(4, dtype=np.int8).reshape(1, 4)
    y = np.array([1.5, -2.5, 3.5, 4.5], np.float32)
    dc, dx, dy = (ga.asarray(a, context=ctx) for a in (c, x, y))
    assert_like(ga.where(dc, dx, dy), np.where(c, x, y))
    if not NUMPY1:  # numpy 1.x's where() promotes Python scalars by value, even under NEP 50
        assert_like(ga.where(dc, dx, 0), np.where(c, x, 0))
        assert_like(ga.where(dc, 7, dx), np.where(c, 7, x))
        assert_like(ga.where(dc, 1.5, dx), np.where(c, 1.5, x))
        assert_like(ga.where(dc, 1, 2), np.where(c, 1, 2))
        assert_like(ga.where(dc, 1.0, 2), np.where(c, 1.0, 2))
    assert_like(ga.where(dc, np.float32(1), dy), np.where(c, np.float32(1), y))
    assert_like(ga.where(dc[::-1], dx, dy[::-1]), np.where(c[::-1], x, y[::-1]))
    assert_like(ga.where(c, dx, y), np.where(c, x, y))  # host condition and operand
    # non-bool conditions: anything nonzero is true (256 as int32, 0.5, NaN)
    cn = np.array([0, 256, -1, 1], np.int32)
    assert_like(ga.where(ga.asarray(cn, context=ctx), dx, dy), np.where(cn, x, y))
    cf = np.array([0.0, 0.5, NAN, -0.0], np.float32)
    assert_like(ga.where(ga.asarray(cf, context=ctx), dx, dy), np.where(cf, x, y))
    for got, want in zip(ga.where(dc), np.where(c)):  # one argument: nonzero
        np.testing.assert_array_equal(got.get(), want)
    with pytest.raises(ValueError):
        ga.where(dc, dx)


# ------------------------------------------------------------------ kernel sharing


@pytest.mark.parametrize("lazy", [True, False], ids=["one-program", "program-per-kernel"])
def test_sibling_ufuncs_share_one_program(ctx, monkeypatch, lazy):
    """Where kernels compile lazily, the ufuncs of one loop signature share one program of
    every layout (add, subtract, multiply of uint16 arrays, flat and strided); else each
    kernel is a program of its own (elemwise.lazy_kernels decides; patched both ways)."""
    monkeypatch.setattr(elemwise, "lazy_kernels", lambda c: lazy)
    for name in ("kernels", "programs", "plans"):
        monkeypatch.setattr(ctx, name, Cache(name, 4096))
    h = (np.arange(60) * 977 % 65536).astype(np.uint16).reshape(3, 4, 5)
    x = ga.asarray(h, context=ctx)
    for name in ("add", "subtract", "multiply"):
        for view in (np.s_[:], np.s_[::-1, :, ::2]):
            assert_like(_ga_func(name)(x[view], x[view]), _np_func(name)(h[view], h[view]))
    assert len(ctx.programs) == (1 if lazy else 6), list(ctx.programs)


def test_scalars_share_one_kernel(ctx):
    x = ga.asarray(np.arange(7, dtype=np.float32) * 1.25, context=ctx)
    x + 1
    before = len(ctx.kernels)
    assert_like(x + 2, np.arange(7, dtype=np.float32) * 1.25 + 2)
    assert_like(x + 3.5, np.arange(7, dtype=np.float32) * 1.25 + 3.5)
    assert len(ctx.kernels) == before
    y = ga.asarray(np.arange(5, dtype=np.int16), context=ctx)
    first = len(ctx.kernels)
    y * 3
    second = len(ctx.kernels)
    y * 4
    ga.multiply(y, -9)
    assert len(ctx.kernels) == second <= first + 1
    # other sizes and offsets, one kernel still
    ga.asarray(np.arange(50, dtype=np.int16), context=ctx)[3:] * 5
    assert len(ctx.kernels) == second


def test_integer_to_negative_scalar_power_raises_like_numpy(ctx):
    host = np.array([2, 3], np.int32)
    x = ga.asarray(host, context=ctx)
    with pytest.raises(ValueError):
        host ** -1
    with pytest.raises(ValueError):
        x ** -1
    with pytest.raises(ValueError):
        ga.power(x, np.int64(-2))
    np.testing.assert_array_equal((x ** 2).get(), host ** 2)
    np.testing.assert_allclose((ga.asarray(host.astype(np.float32), context=ctx) ** -1).get(),
                               host.astype(np.float32) ** -1, rtol=2e-6)  # pow: a few ulp


def test_float64_result_on_device_without_fp64(ctx, monkeypatch):
    """sqrt(int32) needs a float64 loop (numpy's rule): refused clearly without cl_khr_fp64."""
    x = ga.asarray(np.arange(4, dtype=np.int32), context=ctx)
    f = ga.asarray(np.arange(4, dtype=np.float32), context=ctx)
    monkeypatch.setattr(type(ctx), "fp64", property(lambda self: False))
    # the capability is checked when a call pattern is first seen
    monkeypatch.setattr(ctx, "ufunc_calls", {})
    with pytest.raises(ga.errors.UnsupportedError, match="float64"):
        ga.sqrt(x)
    with pytest.raises(ga.errors.UnsupportedError, match="float64"):
        f + np.float64(1)
    np.testing.assert_array_equal((f + 1.0).get(), np.arange(4, dtype=np.float32) + 1)
