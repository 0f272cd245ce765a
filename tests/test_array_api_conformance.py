"""What the Array API conformance suite (data-apis/array-api-tests) checks, kept here so that
conformance cannot slip: the complex elementary functions (C99 Annex G's special values, as
the 2025.12 standard lists them, and numpy's values elsewhere), the version gpuarr follows
and what changes with it, finfo/iinfo, clip's signature, signatures without *args, the
0-size boolean mask, eye with a huge k, cumulative_prod and broadcast_shapes.
docs/array_api.md quotes the suite's counts.

numpy is the oracle where it follows the standard; where it does not (expm1's special values,
tanh(inf + iy)'s zero, log1p of tiny z), the standard's values are spelled out below. One
array per (function, dtype) holds every case, so each function builds one kernel per dtype.
"""

import cmath
import inspect
import math
import warnings

import numpy as np
import pytest
from conftest import using_flags

import gpuarr as ga
from gpuarr import array_api
from gpuarr.errors import ArgumentError, ShapeError

INF, NAN, PI = math.inf, math.nan, math.pi
COMPLEX = (np.complex64, np.complex128)

# the standard's names of the 21 complex functions, and numpy's
FUNCTIONS = {"acos": "arccos", "acosh": "arccosh", "asin": "arcsin", "asinh": "arcsinh",
             "atan": "arctan", "atanh": "arctanh", "cos": "cos", "cosh": "cosh", "exp": "exp",
             "expm1": "expm1", "log": "log", "log10": "log10", "log1p": "log1p",
             "log2": "log2", "sin": "sin", "sinh": "sinh", "sqrt": "sqrt", "tan": "tan",
             "tanh": "tanh"}


def _fp64(ctx, dtype):
    if np.dtype(dtype) == np.complex128 and not ctx.fp64:
        pytest.skip(f"{ctx.devname} has no float64")


def _run(name, z, dtype, ctx):
    """gpuarr's `name` of the complex values z (one kernel launch)."""
    _fp64(ctx, dtype)
    return getattr(ga, name)(ga.asarray(np.asarray(z, dtype), context=ctx)).get()


# ---------------------------------------------------------------- the standard's special cases

_F = (2.5, -0.75)          # nonzero finite numbers
_PF = (2.5, 0.75)          # positive finite numbers
_Z = (0.0, -0.0)


def _cases(*rules):
    """(a values, b values, expected, free) -> [(z, expected, free)]; expected is a complex
    or a function of (a, b); free names the parts whose sign the standard leaves open."""
    out = []
    for a_values, b_values, expected, free in rules:
        for a in a_values:
            for b in b_values:
                want = expected(a, b) if callable(expected) else expected
                out.append((complex(a, b), want, free))
    return out


def _cis(scale, shift=0.0):
    """scale * cis(b) + shift, with inf * cos(b) and 0 * sin(b) as IEEE gives them."""
    def value(a, b):
        re = scale * math.cos(b)
        return complex(re + shift if shift else re, scale * math.sin(b))
    return value


_NN = complex(NAN, NAN)
SPEC = {  # the 2025.12 standard's complex special cases (imag(x) >= 0; conj gives the rest)
    "acos": _cases(
        (_Z, (0.0,), complex(PI / 2, -0.0), ""), (_Z, (NAN,), complex(PI / 2, NAN), ""),
        ((*_F, 0.0), (INF,), complex(PI / 2, -INF), ""), (_F, (NAN,), _NN, ""),
        ((-INF,), _PF, complex(PI, -INF), ""), ((INF,), _PF, complex(0.0, -INF), ""),
        ((-INF,), (INF,), complex(3 * PI / 4, -INF), ""),
        ((INF,), (INF,), complex(PI / 4, -INF), ""),
        ((INF, -INF), (NAN,), complex(NAN, INF), "im"), ((NAN,), (*_F, 0.0), _NN, ""),
        ((NAN,), (INF,), complex(NAN, -INF), ""), ((NAN,), (NAN,), _NN, "")),
    "acosh": _cases(
        (_Z, (0.0,), complex(0.0, PI / 2), ""), ((*_F, 0.0), (INF,), complex(INF, PI / 2), ""),
        (_F, (NAN,), _NN, ""), ((0.0,), (NAN,), complex(NAN, PI / 2), "im"),
        ((-INF,), _PF, complex(INF, PI), ""), ((INF,), _PF, complex(INF, 0.0), ""),
        ((-INF,), (INF,), complex(INF, 3 * PI / 4), ""),
        ((INF,), (INF,), complex(INF, PI / 4), ""),
        ((INF, -INF), (NAN,), complex(INF, NAN), ""), ((NAN,), (*_F, 0.0), _NN, ""),
        ((NAN,), (INF,), complex(INF, NAN), ""), ((NAN,), (NAN,), _NN, "")),
    "asinh": _cases(
        ((0.0,), (0.0,), complex(0.0, 0.0), ""), (_PF, (INF,), complex(INF, PI / 2), ""),
        ((*_F, 0.0), (NAN,), _NN, ""), ((INF,), _PF, complex(INF, 0.0), ""),
        ((INF,), (INF,), complex(INF, PI / 4), ""), ((NAN,), (0.0,), complex(NAN, 0.0), ""),
        ((NAN,), _F, _NN, ""), ((NAN,), (INF,), complex(INF, NAN), "re"),
        ((NAN,), (NAN,), _NN, "")),
    "atanh": _cases(
        ((0.0,), (0.0,), complex(0.0, 0.0), ""), ((0.0,), (NAN,), complex(0.0, NAN), ""),
        ((1.0,), (0.0,), complex(INF, 0.0), ""), (_PF, (INF,), complex(0.0, PI / 2), ""),
        (_F, (NAN,), _NN, ""), ((INF,), _PF, complex(0.0, PI / 2), ""),
        ((INF,), (INF,), complex(0.0, PI / 2), ""), ((INF,), (NAN,), complex(0.0, NAN), ""),
        ((NAN,), (*_F, 0.0), _NN, ""), ((NAN,), (INF,), complex(0.0, PI / 2), "re"),
        ((NAN,), (NAN,), _NN, "")),
    "cosh": _cases(
        ((0.0,), (0.0,), complex(1.0, 0.0), ""), ((0.0,), (INF, NAN), complex(NAN, 0.0), "im"),
        (_F, (INF, NAN), _NN, ""), ((INF,), (0.0,), complex(INF, 0.0), ""),
        ((INF,), _F, _cis(INF), ""), ((INF,), (INF,), complex(INF, NAN), "re"),
        ((INF,), (NAN,), complex(INF, NAN), ""), ((NAN,), _Z, complex(NAN, 0.0), "im"),
        ((NAN,), _F, _NN, ""), ((NAN,), (NAN,), _NN, "")),
    "exp": _cases(
        (_Z, (0.0,), complex(1.0, 0.0), ""), ((*_F, 0.0), (INF, NAN), _NN, ""),
        ((INF,), (0.0,), complex(INF, 0.0), ""), ((-INF,), (*_F, 0.0), _cis(0.0), ""),
        ((INF,), _F, _cis(INF), ""), ((-INF,), (INF, NAN), complex(0.0, 0.0), "re im"),
        ((INF,), (INF, NAN), complex(INF, NAN), "re"), ((NAN,), (0.0,), complex(NAN, 0.0), ""),
        ((NAN,), (*_F, INF, NAN), _NN, "")),
    "expm1": _cases(
        (_Z, (0.0,), complex(0.0, 0.0), ""), ((*_F, 0.0), (INF, NAN), _NN, ""),
        ((INF,), (0.0,), complex(INF, 0.0), ""), ((-INF,), (*_F, 0.0), _cis(0.0, -1.0), ""),
        ((INF,), _F, _cis(INF, -1.0), ""), ((-INF,), (INF, NAN), complex(-1.0, 0.0), "im"),
        ((INF,), (INF, NAN), complex(INF, NAN), "re"), ((NAN,), (0.0,), complex(NAN, 0.0), ""),
        ((NAN,), (*_F, INF, NAN), _NN, "")),
    "log": _cases(
        ((-0.0,), (0.0,), complex(-INF, PI), ""), ((0.0,), (0.0,), complex(-INF, 0.0), ""),
        ((*_F, 0.0), (INF,), complex(INF, PI / 2), ""), ((*_F, 0.0), (NAN,), _NN, ""),
        ((-INF,), _PF, complex(INF, PI), ""), ((INF,), _PF, complex(INF, 0.0), ""),
        ((-INF,), (INF,), complex(INF, 3 * PI / 4), ""),
        ((INF,), (INF,), complex(INF, PI / 4), ""),
        ((INF, -INF), (NAN,), complex(INF, NAN), ""), ((NAN,), (*_F, 0.0), _NN, ""),
        ((NAN,), (INF,), complex(INF, NAN), ""), ((NAN,), (NAN,), _NN, "")),
    "log1p": _cases(
        ((-1.0,), (0.0,), complex(-INF, 0.0), ""), ((*_F, 0.0), (INF,), complex(INF, PI / 2), ""),
        ((*_F, 0.0), (NAN,), _NN, ""), ((-INF,), _PF, complex(INF, PI), ""),
        ((INF,), _PF, complex(INF, 0.0), ""), ((-INF,), (INF,), complex(INF, 3 * PI / 4), ""),
        ((INF,), (INF,), complex(INF, PI / 4), ""), ((INF, -INF), (NAN,), complex(INF, NAN), ""),
        ((NAN,), (*_F, 0.0), _NN, ""), ((NAN,), (INF,), complex(INF, NAN), ""),
        ((NAN,), (NAN,), _NN, "")),
    "sinh": _cases(
        ((0.0,), (0.0,), complex(0.0, 0.0), ""), ((0.0,), (INF, NAN), complex(0.0, NAN), "re"),
        (_PF, (INF, NAN), _NN, ""), ((INF,), (0.0,), complex(INF, 0.0), ""),
        ((INF,), _PF, _cis(INF), ""), ((INF,), (INF, NAN), complex(INF, NAN), "re"),
        ((NAN,), (0.0,), complex(NAN, 0.0), ""), ((NAN,), _F, _NN, ""),
        ((NAN,), (NAN,), _NN, "")),
    "sqrt": _cases(
        (_Z, (0.0,), complex(0.0, 0.0), ""),
        ((*_F, 0.0, INF, -INF, NAN), (INF,), complex(INF, INF), ""),
        ((*_F, 0.0), (NAN,), _NN, ""), ((-INF,), _PF, complex(0.0, INF), ""),
        ((INF,), _PF, complex(INF, 0.0), ""), ((-INF,), (NAN,), complex(NAN, INF), "im"),
        ((INF,), (NAN,), complex(INF, NAN), ""), ((NAN,), (*_F, 0.0, NAN), _NN, "")),
    "tanh": _cases(
        ((0.0,), (0.0,), complex(0.0, 0.0), ""), (_F, (INF, NAN), _NN, ""),
        ((0.0,), (INF, NAN), complex(0.0, NAN), ""), ((INF,), _PF, complex(1.0, 0.0), ""),
        ((INF,), (INF, NAN), complex(1.0, 0.0), "im"), ((NAN,), (0.0,), complex(NAN, 0.0), ""),
        ((NAN,), (*_F, NAN), _NN, "")),
}


def _part_ok(got, want, free, rtol):
    if math.isnan(want):
        return math.isnan(got)
    if free:
        got, want = abs(got), abs(want)
    if want == 0 or math.isinf(want):
        return got == want and math.copysign(1, got) == math.copysign(1, want)
    return math.isclose(got, want, rel_tol=rtol)


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", sorted(SPEC))
def test_special_values_of_the_standard(ctx, name, dtype):
    cases = SPEC[name]
    z = [c for c, _, _ in cases]
    got = _run(name, z, dtype, ctx)
    rtol = 1e-6 if dtype == np.complex64 else 1e-14
    bad = [(c, g, want) for (c, want, free), g in zip(cases, got)
           if not (_part_ok(g.real, want.real, "re" in free, rtol)
                   and _part_ok(g.imag, want.imag, "im" in free, rtol))]
    assert not bad, f"{name}: (input, got, the standard's value): {bad}"


# ---------------------------------------------------------------- numpy on grids and random values

_GRID_PARTS = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, 100.0, 1e30, -1e-30, INF, -INF, NAN)
GRID = np.array([complex(a, b) for a in _GRID_PARTS for b in _GRID_PARTS])
_RNG = np.random.default_rng(7)
RANDOM = (_RNG.standard_normal(400) * np.exp(_RNG.uniform(-5, 5, 400))
          + 1j * _RNG.standard_normal(400) * np.exp(_RNG.uniform(-5, 5, 400)))
_T = np.linspace(-3, 3, 40)
# the hard places: near the unit circle (log), near 0 and the branch points +-1 and +-i,
# along the branch cuts from either side, and huge and tiny |z|
HARD = np.concatenate([
    np.exp(1j * _T) * (1 + 1e-6), np.exp(1j * _T) * (1 - 3e-7),
    1 + 1e-4 * np.exp(1j * _T), -1 + 1e-4 * np.exp(1j * _T), 1j + 1e-4 * np.exp(1j * _T),
    np.linspace(-4, 4, 33) + 1e-7j, np.linspace(-4, 4, 33) - 1e-7j,
    1j * np.linspace(-4, 4, 33) + 1e-7, 1j * np.linspace(-4, 4, 33) - 1e-7,
    1e18 * np.exp(1j * _T), 1e-18 * np.exp(1j * _T),
])
# standard name -> the inputs the reference is no oracle for: where the standard differs
# from numpy or numpy's formula loses accuracy (what the standard says there is tested
# above), and exp2 of a huge imaginary part, whose angle y ln 2 keeps no digit in float32
NO_REFERENCE = {
    "expm1": lambda z: ~np.isfinite(z) | (z.imag == 0),    # numpy: NaN for inf and 0i cases
    "log1p": lambda z: np.abs(z) < 1e-2,                     # numpy: log(1 + z), rounded
    "tan": lambda z: np.isinf(z.imag),                       # tanh(inf + iy)'s zero sign
    "tanh": lambda z: np.isinf(z.real),
    "exp2": lambda z: np.abs(z.imag) > 50,
}


def _numpy(name, z):
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        return getattr(np, FUNCTIONS.get(name, name))(z)


def _close(got, want, rtol):
    """NaNs where numpy has them, the same infinities and zeros (their signs are the
    standard's business, tested above), finite values within rtol of |want|."""
    for g, w in ((got.real, want.real), (got.imag, want.imag)):
        assert np.array_equal(np.isnan(g), np.isnan(w))
        ok = ~np.isnan(w)
        g, w = g[ok], w[ok]
        special = np.isinf(w) | (w == 0)
        assert np.array_equal(np.abs(g[special]), np.abs(w[special]))
    scale = np.abs(want)
    finite = np.isfinite(scale) & (scale > 0)
    err = np.abs(got[finite] - want[finite]) / scale[finite]
    assert err.max(initial=0) <= rtol, (err.max(), got[finite][err.argmax()])


@pytest.mark.parametrize("dtype", COMPLEX)
@pytest.mark.parametrize("name", [*sorted(FUNCTIONS), "exp2", "round"])
def test_complex_functions_match_numpy(ctx, name, dtype):
    z = np.concatenate([GRID, RANDOM, HARD]).astype(dtype)
    got = _run(name, z, dtype, ctx)
    # the reference in complex128 (numpy's complex64 loops are less accurate than ours)
    want = _numpy("round" if name == "round" else name, z.astype(np.complex128))
    keep = ~NO_REFERENCE.get(name, lambda z: np.zeros(z.shape, bool))(z)
    if dtype == np.complex64:
        # values beyond float32 overflow or flush in gpuarr, as numpy's complex64 loops do
        fits = (np.abs(want.real) < 3e38) & (np.abs(want.imag) < 3e38)
        fits &= (np.abs(want.real) > 1e-37) | (want.real == 0)
        fits &= (np.abs(want.imag) > 1e-37) | (want.imag == 0)
        keep &= fits | ~np.isfinite(want)
    _close(got[keep], want[keep].astype(dtype), 4e-6 if dtype == np.complex64 else 1e-13)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_log1p_of_tiny_values_keeps_their_digits(ctx, dtype):
    z = np.array([1e-10 + 2e-10j, -3e-9 - 1e-12j, 1e-20j, 2e-5 + 0j])
    got = _run("log1p", z, dtype, ctx)
    want = z - z * z / 2 + z ** 3 / 3  # the series, exact to double rounding here
    np.testing.assert_allclose(got.real, want.real, rtol=1e-5, atol=0)
    np.testing.assert_allclose(got.imag, want.imag, rtol=1e-5, atol=0)


@pytest.mark.parametrize("name", sorted(FUNCTIONS))
def test_conjugate_symmetry(ctx, name):
    # f(conj(z)) == conj(f(z)) wherever both parts' signs are specified (finite z)
    z = np.concatenate([RANDOM[:50], HARD[::7], [0j, -0.0 + 0j, 2.0 + 0j, -2 + 0j]])
    both = np.concatenate([z, np.conj(z)]).astype(np.complex64)
    got = _run(name, both, np.complex64, ctx)
    f, fc = got[:z.size], got[z.size:]
    np.testing.assert_array_equal(np.signbit(fc.imag), np.signbit(np.conj(f).imag))
    np.testing.assert_allclose(fc, np.conj(f), rtol=1e-6)


def test_branch_cuts_follow_the_sign_of_zero(ctx):
    z = np.array([-2 + 0j, complex(-2, -0.0), 2 + 0j, complex(2, -0.0)], np.complex64)
    cases = {"sqrt": [1.414j, -1.414j, 1.414, 1.414], "log": [0.693 + PI * 1j,
             0.693 - PI * 1j, 0.693, 0.693], "asin": [-PI / 2 + 1.317j, -PI / 2 - 1.317j,
             PI / 2 + 1.317j, PI / 2 - 1.317j], "atanh": [-0.549 + PI / 2 * 1j,
             -0.549 - PI / 2 * 1j, 0.549 + PI / 2 * 1j, 0.549 - PI / 2 * 1j]}
    for name, want in cases.items():
        np.testing.assert_allclose(_run(name, z, np.complex64, ctx), want, rtol=1e-3)


@pytest.mark.parametrize("dtype", COMPLEX)
def test_complex_power_matches_numpy(ctx, dtype):
    _fp64(ctx, dtype)
    parts = (0.0, -0.0, 1.0, -1.0, 0.5, -2.5, 3.0, INF, NAN)
    g = np.array([complex(a, b) for a in parts for b in parts])
    base = np.concatenate([np.repeat(g, g.size), RANDOM[:64].repeat(8)]).astype(dtype)
    expo = np.concatenate([np.tile(g, g.size),
                           np.tile([2, -1, 3, 0.5, 7, -101, 2 + 1j, 0], 64)]).astype(dtype)
    got = ga.power(ga.asarray(base, context=ctx), ga.asarray(expo, context=ctx)).get()
    with np.errstate(all="ignore"):
        want = np.power(base, expo)
    # (x**-101 goes through exp(w log z): float32's rounding of w log z, amplified by exp)
    np.testing.assert_allclose(got, want, rtol=5e-5 if dtype == np.complex64 else 1e-12)
    x = ga.asarray(base[:8], context=ctx)
    assert (x ** 2).dtype == dtype and ga.pow(x, 1 + 2j).dtype == dtype


def test_round_of_complex_rounds_each_part(ctx):
    z = np.array([1.2345 + 2.5678j, -3.14159 - 0.5j, 2.5 + 3.5j, complex(-0.4, 0.5)])
    x = ga.asarray(z, context=ctx)
    for decimals in (0, 2, -1):
        got = ga.round(x, decimals).get()
        np.testing.assert_array_equal(got, np.round(z, decimals))
    np.testing.assert_array_equal(np.signbit(ga.round(x).get().real), np.signbit(np.round(z).real))


# ---------------------------------------------------------------- the version followed

@pytest.fixture
def version():
    """The flag's version before and after a test that sets one."""
    ga.set_array_api_version(None)
    yield ga.set_array_api_version
    ga.set_array_api_version(None)


def test_default_version_is_the_current_standard(ctx, version):
    assert ga.__array_api_version__ == "2025.12" == array_api.API_VERSION
    assert array_api.VERSIONS[-1] == "2025.12"
    xs = ga.arange(3, context=ctx), ga.arange(2, context=ctx)
    assert type(ga.meshgrid(*xs)) is tuple and type(ga.broadcast_arrays(*xs[:1])) is tuple
    info = ga.__array_namespace_info__()
    assert type(info.devices()) is tuple and ctx in info.devices()
    assert info.capabilities()["max dimensions"] == 64


@pytest.mark.parametrize("old, seq, has_max", [("2023.12", list, False), ("2024.12", list, True),
                                               ("2022.12", list, False)])
def test_older_versions_are_selectable(ctx, version, old, seq, has_max):
    assert version(old) == "2025.12"
    assert ga.__array_api_version__ == old
    xs = ga.arange(3, context=ctx), ga.arange(2, context=ctx)
    mesh = ga.meshgrid(*xs, indexing="ij")
    assert type(mesh) is seq and [m.shape for m in mesh] == [(3, 2), (3, 2)]
    assert type(ga.broadcast_arrays(*xs[:1])) is seq
    info = ga.__array_namespace_info__()
    assert type(info.devices()) is seq
    assert ("max dimensions" in info.capabilities()) is has_max
    assert version(None) == old and ga.__array_api_version__ == "2025.12"


def test_array_namespace_selects_the_version_as_array_api_strict(ctx, version):
    x = ga.arange(3, context=ctx)
    assert x.__array_namespace__(api_version="2023.12") is ga
    assert ga.__array_api_version__ == "2023.12" and type(ga.meshgrid(x)) is list
    with pytest.raises(ArgumentError, match=r"'2026\.12'.*2025\.12"):
        x.__array_namespace__(api_version="2026.12")
    with pytest.raises(ValueError):
        version("2023")


def test_the_flag_chooses_the_version(version):
    with using_flags("array_api_version=2023.12,print_active_device=False"):
        assert array_api.api_version() == "2023.12"
        assert type(ga.broadcast_arrays(np.zeros(2))) is list
    assert array_api.api_version() == "2025.12"


# ---------------------------------------------------------------- data types, signatures, edges

@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64", "complex128", "float16"])
def test_finfo_fields_are_python_numbers(dtype):
    info, ref = ga.finfo(dtype), np.finfo(dtype)
    assert type(info.bits) is int and info.bits == ref.bits
    for field in ("eps", "max", "min", "smallest_normal"):
        assert type(getattr(info, field)) is float and getattr(info, field) == getattr(ref, field)
    assert info.dtype == ref.dtype and info.tiny == ref.tiny  # numpy's extras stay
    assert ga.finfo(ga.zeros(1, dtype=dtype if dtype != "float16" else "float32")).bits > 0


@pytest.mark.parametrize("dtype", ["int8", "uint8", "int64", "uint64"])
def test_iinfo_fields_are_python_ints(dtype):
    info, ref = ga.iinfo(dtype), np.iinfo(dtype)
    assert (info.bits, info.max, info.min, info.dtype) == (ref.bits, ref.max, ref.min, ref.dtype)
    assert all(type(v) is int for v in (info.bits, info.max, info.min))
    with pytest.raises(TypeError):
        ga.iinfo("float32")
    with pytest.raises(TypeError):
        ga.finfo("int32")


def test_clip_has_the_standards_signature(ctx):
    params = list(inspect.signature(ga.clip).parameters.values())
    assert [(p.name, p.kind) for p in params[:3]] == [
        ("x", inspect.Parameter.POSITIONAL_ONLY), ("min", inspect.Parameter.POSITIONAL_OR_KEYWORD),
        ("max", inspect.Parameter.POSITIONAL_OR_KEYWORD)]
    h = np.array([-5, 0, 7, 100], np.int32)
    x = ga.asarray(h, context=ctx)
    np.testing.assert_array_equal(ga.clip(x, max=6).get(), np.clip(h, None, 6))
    np.testing.assert_array_equal(ga.clip(x, a_min=1, a_max=8).get(), np.clip(h, 1, 8))
    np.testing.assert_array_equal(np.clip(x, 0, 9).get(), np.clip(h, 0, 9))
    assert ga.clip(ga.asarray(np.arange(3.0, dtype=np.float32), context=ctx), 1, 2).dtype == \
        np.float32  # int bounds do not promote
    with pytest.raises(TypeError, match="min or a_min"):
        ga.clip(x, 0, a_min=1)


def test_linalg_functions_have_real_signatures():
    for name in dir(ga.linalg):
        fn = getattr(ga.linalg, name)
        if not inspect.isfunction(fn) or fn.__module__ != "gpuarr.linalg":
            continue
        kinds = {p.kind for p in inspect.signature(fn).parameters.values()}
        assert inspect.Parameter.VAR_KEYWORD not in kinds, name


def test_empty_boolean_mask_of_other_shape(ctx):
    for shape, mask_shape, want in [((0, 1), (0, 0), (0,)), ((2, 3), (2, 0), (0,)),
                                    ((0, 3, 2), (0, 0), (0, 2))]:
        x = ga.zeros(shape, context=ctx)
        assert x[ga.zeros(mask_shape, dtype=bool, context=ctx)].shape == want
        assert x[np.zeros(mask_shape, bool)].shape == want
    with pytest.raises(IndexError):
        ga.zeros((2, 3), context=ctx)[np.zeros((1, 0), bool)]


def test_eye_with_a_huge_diagonal_offset(ctx):
    assert ga.eye(1, k=2**63, context=ctx).get().tolist() == [[0.0]]
    assert ga.eye(2, 3, k=-2**70, context=ctx).get().sum() == 0
    assert ga.tril(ga.ones((2, 2), context=ctx), k=2**64).get().sum() == 4


def test_cumulative_prod_and_broadcast_shapes(ctx):
    h = np.array([[1, 2, 3], [4, 5, 6]], np.int32)
    x = ga.asarray(h, context=ctx)
    np.testing.assert_array_equal(ga.cumulative_prod(x, axis=1).get(), np.cumprod(h, axis=1))
    got = ga.cumulative_prod(x, axis=0, include_initial=True).get()
    np.testing.assert_array_equal(got, np.concatenate([np.ones((1, 3), int), np.cumprod(h, 0)]))
    assert got.dtype == np.cumprod(h).dtype
    with pytest.raises(ArgumentError, match="axis"):
        ga.cumulative_prod(x)
    assert ga.broadcast_shapes((3, 1), (4,), ()) == (3, 4) == np.broadcast_shapes((3, 1), 4)
    assert ga.broadcast_shapes() == ()
    with pytest.raises(ShapeError):
        ga.broadcast_shapes((2,), (3,))


def test_cmath_agrees_on_a_few_values(ctx):
    # the suite's own reference (cmath) on ordinary values, for the standard's names
    z = [0.3 + 0.4j, -1.5 + 2j, 2 - 0.5j]
    for name in ("acos", "asinh", "atan", "log10", "sqrt", "tan"):
        ref = getattr(cmath, name if name != "log10" else "log10")
        np.testing.assert_allclose(_run(name, z, np.complex64, ctx), [ref(v) for v in z],
                                   rtol=1e-5)
