"""Shared pieces of the differential fuzz tests: profiles, layouts, values, comparisons.

Every device operand is a view of a larger parent array: any strides (negative, sliced),
a byte offset, and now and then an F-ordered parent; the host operand is the same view of
the same parent, so numpy sees exactly the values and layout the device sees.

Comparison bounds (numpy is the oracle):
  - integers and bool: exact.
  - floats, +, -, *, max, min, abs, negative, square, floor, where, comparisons (and / and
    sqrt where the device rounds them correctly, which gpuarr asks for): exact (0 ULP; the
    sign of a zero result is not compared). Elementwise kernels are built without fma
    contraction, so a chain of these ops is exact too.
  - floats, transcendental functions: at most OpenCL's ULP bound for the function (OpenCL
    3.0, full profile: exp, log 3; sin, cos 4; tanh 5; divide 2.5 and sqrt 3 when not
    correctly rounded) plus 4 ULP for numpy's own SIMD loops, counted in the result dtype.
  - floats, sums (sum, mean, cumsum, matmul): |got - want| <= 2 n u sum|x| + a few ULP,
    the textbook bound for two different summation orders of n terms (u: unit roundoff).
NaN equals NaN (any payload); infinities must match exactly.
"""

import math

import numpy as np
from conftest import view_index
from hypothesis import settings
from hypothesis import strategies as st

import gpuarr as ga

DTYPES = ["bool", "uint8", "int32", "int64", "float32", "float64"]
FLOATS = ["float32", "float64"]

# OpenCL 3.0's ULP bounds (single, double), plus numpy's 4.
_NUMPY_ULP = 4
TRANSCENDENTAL_ULP = {"exp": 3, "log": 3, "sin": 4, "cos": 4, "tanh": 5}


def fuzz_settings(weight=1.0, **overrides):
    """The active profile ('long' when loaded, else 'ci'), with `weight` x its cases."""
    name = "long" if settings.get_current_profile_name() == "long" else "ci"
    profile = settings.get_profile(name)
    cases = max(1, round(profile.max_examples * weight))
    return settings(profile, max_examples=cases, **overrides)


def ulp_bound(name, dtype, ctx):
    """Allowed ULP distance from numpy for ufunc `name` on float `dtype` (see the module)."""
    if name in TRANSCENDENTAL_ULP:
        return TRANSCENDENTAL_ULP[name] + _NUMPY_ULP
    exact = "-cl-fp32-correctly-rounded-divide-sqrt" in ctx.build_options
    if name in ("true_divide", "sqrt") and not exact and dtype == "float32":
        return 3 + _NUMPY_ULP
    return 0


# ---------------------------------------------------------------- shapes and values

@st.composite
def shapes(draw, max_dims=3, max_side=5):
    """Mostly 1 to max_dims dims of 1 to max_side; now and then 0-d or one dim of 0."""
    pick = draw(st.integers(0, 11))
    if pick == 0:
        return ()
    shape = draw(st.lists(st.integers(1, max_side), min_size=1, max_size=max_dims))
    if pick == 1:
        shape[draw(st.integers(0, len(shape) - 1))] = 0
    return tuple(shape)


@st.composite
def broadcastable(draw, shape):
    """A shape that broadcasts to `shape`: leading dims dropped, some dims made 1."""
    drop = draw(st.integers(0, len(shape)))
    drop = 0 if drop > 1 and draw(st.booleans()) else drop
    return tuple(1 if draw(st.integers(0, 3)) == 0 else n for n in shape[drop:])


def elements(dtype, finite=False, small=False):
    """Values of `dtype`: the whole range for integers (small: -50..50), for floats every
    kind of value (NaN, infinities, subnormals, -0.0) unless `finite`/`small`."""
    dt = np.dtype(dtype)
    if dt == np.bool_:
        return st.booleans()
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if small:
            return st.integers(max(info.min, -50), min(info.max, 50))
        return st.one_of(st.integers(info.min, info.max),
                         st.integers(max(info.min, -3), min(info.max, 3)))
    width = dt.itemsize * 8
    if small:
        return st.floats(-100, 100, width=width)
    return st.one_of(st.floats(width=width, allow_nan=not finite, allow_infinity=not finite),
                     st.sampled_from([0.0, -0.0, 1.0, -1.5, 0.5]))


def host_array(draw, dtype, shape, **kinds):
    """An array of `shape`: a drawn palette of up to 6 values (hypothesis shrinks these),
    spread over the array by a drawn seed, half the time mixed with random values."""
    n = math.prod(shape)
    palette = np.array(draw(st.lists(elements(dtype, **kinds), min_size=1, max_size=6)),
                       dtype=dtype)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    values = palette[rng.integers(0, len(palette), n)]
    if draw(st.booleans()):
        dt = np.dtype(dtype)
        if dt == np.bool_:
            noise = rng.integers(0, 2, n).astype(bool)
        elif dt.kind in "iu":
            info = np.iinfo(dt)
            lo, hi = (max(info.min, -50), min(info.max, 50)) if kinds.get("small") else \
                (info.min, info.max)
            noise = rng.integers(lo, hi, n, dtype=dt, endpoint=True)
        else:
            scale = 100 if kinds.get("small") else 10.0 ** rng.integers(-3, 4, n)
            noise = (rng.standard_normal(n) * scale).astype(dt)
        values = np.where(rng.integers(0, 2, n).astype(bool), noise, values)
    return values.reshape(shape)


@st.composite
def layouts(draw, shape, dtype, ctx, **kinds):
    """(host view, device view) of `shape`: a strided, offset view of a larger parent
    (negative steps, F order now and then), the same view on both sides."""
    steps = [draw(st.sampled_from([1, 1, 2, -1, -2, 3])) for _ in shape]
    starts = [draw(st.integers(0, 2)) for _ in shape]
    parent_shape = tuple(s + n * abs(p) + 1 for n, p, s in zip(shape, steps, starts))
    if draw(st.integers(0, 3)) == 0:  # a plain contiguous array, the common case
        steps, starts, parent_shape = [1] * len(shape), [0] * len(shape), shape
    parent = host_array(draw, dtype, parent_shape, **kinds)
    if len(shape) > 1 and draw(st.integers(0, 3)) == 0:
        parent = np.asfortranarray(parent)
    index = view_index(shape, steps, starts)
    host = parent[index]
    assert host.shape == tuple(shape), (host.shape, shape)
    return host, ga.asarray(parent, context=ctx)[index]


# ---------------------------------------------------------------- comparisons

def _ordered(a):
    """Float bits as integers ordered like the floats (-0.0 and 0.0 both 0)."""
    it = {2: np.int16, 4: np.int32, 8: np.int64}[a.dtype.itemsize]
    bits = np.ascontiguousarray(a).view(it).astype(np.int64)
    low = np.iinfo(it).min
    return np.where(bits < 0, low - bits, bits)


def ulp_distance(got, want):
    """Elementwise ULP distance of two float arrays of one dtype; 0 where both are NaN,
    a huge number where only one is."""
    got, want = np.asarray(got), np.asarray(want)
    dist = np.abs(_ordered(got) - _ordered(want))
    gn, wn = np.isnan(got), np.isnan(want)
    dist = np.where(gn & wn, 0, dist)
    return np.where(gn ^ wn, np.iinfo(np.int64).max, dist)


def _describe(got, want, bad, what):
    idx = np.argwhere(bad)[:5]
    pairs = ", ".join(f"{tuple(i)}: got {got[tuple(i)]!r} want {want[tuple(i)]!r}" for i in idx)
    return f"{what}: {int(bad.sum())} of {bad.size} differ; {pairs}"


def check_same_kind(got, want):
    """Shape and dtype as numpy's."""
    assert isinstance(got, ga.GpuArray), type(got)
    want = np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    return got.get(), want


def assert_matches(got, want, ulps=0, what="result"):
    """`got` (a GpuArray) equals numpy's `want`: exactly, or within `ulps` for floats."""
    host, want = check_same_kind(got, want)
    if want.dtype.kind == "f":
        bad = ulp_distance(host, want) > ulps
    elif want.dtype.kind == "c":
        bad = (ulp_distance(host.real, want.real) > ulps) | \
              (ulp_distance(host.imag, want.imag) > ulps)
    else:
        bad = host != want
    assert not bad.any(), _describe(host, want, bad, f"{what} ({want.dtype}, <= {ulps} ULP)")


def assert_sum_close(got, want, magnitude, terms, what="result"):
    """A float sum of `terms` terms whose absolute values sum to `magnitude` (broadcast
    to the result): |got - want| <= 2 n u magnitude + 4 ULP of want."""
    host, want = check_same_kind(got, want)
    if want.dtype.kind != "f":
        assert np.array_equal(host, want), _describe(host, want, host != want, what)
        return
    u = np.finfo(want.dtype).eps / 2
    tol = 2 * max(terms, 1) * u * np.asarray(magnitude, np.float64) + \
        4 * np.spacing(np.abs(want)).astype(np.float64)
    both_nan = np.isnan(host) & np.isnan(want)
    same_inf = np.isinf(want) & (host == want)
    diff = np.abs(host.astype(np.float64) - want.astype(np.float64))
    bad = ~(both_nan | same_inf | (diff <= tol))
    assert not bad.any(), _describe(host, want, bad, f"{what} (sum bound, n={terms})")
