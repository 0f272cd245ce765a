"""gpuarr as an Array API (2023.12) namespace: the standard's names and signatures (kept here
as data, from the specification), the not-yet list (which must match docs/array_api.md),
and the behaviour the standard adds to numpy's: promotion, devices, in-place operators,
unique_*, sort(descending=), cumulative_sum, vecdot, the linalg extension.

numpy 2 (itself a conforming namespace) is the oracle. Arrays are float64 and int32/int64
mostly, so the module reuses a handful of elementwise, reduction and sort kernels.
"""

import inspect
import math
import operator
import pathlib
import re

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import linalg
from gpuarr.errors import (
    ArgumentError,
    AxisError,
    BufferExportError,
    ShapeError,
    UnsupportedError,
)

# ---------------------------------------------------------------- the standard, as data

_UNARY = ("abs", "acos", "acosh", "asin", "asinh", "atan", "atanh", "bitwise_invert", "ceil",
          "conj", "cos", "cosh", "exp", "expm1", "floor", "imag", "isfinite", "isinf", "isnan",
          "log", "log1p", "log2", "log10", "logical_not", "negative", "positive", "real", "round",
          "sign", "signbit", "sin", "sinh", "square", "sqrt", "tan", "tanh", "trunc")
_BINARY = ("add", "atan2", "bitwise_and", "bitwise_left_shift", "bitwise_or", "bitwise_right_shift",
           "bitwise_xor", "copysign", "divide", "equal", "floor_divide", "greater", "greater_equal",
           "hypot", "less", "less_equal", "logaddexp", "logical_and", "logical_or", "logical_xor",
           "maximum", "minimum", "multiply", "not_equal", "pow", "remainder", "subtract")

NAMESPACE = "\n".join([
    # creation functions
    "def arange(start, /, stop=None, step=1, *, dtype=None, device=None): ...",
    "def asarray(obj, /, *, dtype=None, device=None, copy=None): ...",
    "def empty(shape, *, dtype=None, device=None): ...",
    "def empty_like(x, /, *, dtype=None, device=None): ...",
    "def eye(n_rows, n_cols=None, /, *, k=0, dtype=None, device=None): ...",
    "def from_dlpack(x, /, *, device=None, copy=None): ...",
    "def full(shape, fill_value, *, dtype=None, device=None): ...",
    "def full_like(x, /, fill_value, *, dtype=None, device=None): ...",
    "def linspace(start, stop, /, num, *, dtype=None, device=None, endpoint=True): ...",
    "def meshgrid(*arrays, indexing='xy'): ...",
    "def ones(shape, *, dtype=None, device=None): ...",
    "def ones_like(x, /, *, dtype=None, device=None): ...",
    "def tril(x, /, *, k=0): ...",
    "def triu(x, /, *, k=0): ...",
    "def zeros(shape, *, dtype=None, device=None): ...",
    "def zeros_like(x, /, *, dtype=None, device=None): ...",
    # data type functions
    "def astype(x, dtype, /, *, copy=True, device=None): ...",
    "def can_cast(from_, to, /): ...",
    "def finfo(type, /): ...",
    "def iinfo(type, /): ...",
    "def isdtype(dtype, kind): ...",
    "def result_type(*arrays_and_dtypes): ...",
    # element-wise functions
    *(f"def {name}(x, /): ..." for name in _UNARY),
    *(f"def {name}(x1, x2, /): ..." for name in _BINARY),
    "def clip(x, /, min=None, max=None): ...",
    # indexing, linear algebra
    "def take(x, indices, /, *, axis=None): ...",
    "def matmul(x1, x2, /): ...",
    "def matrix_transpose(x, /): ...",
    "def tensordot(x1, x2, /, *, axes=2): ...",
    "def vecdot(x1, x2, /, *, axis=-1): ...",
    # manipulation
    "def broadcast_arrays(*arrays): ...",
    "def broadcast_to(x, /, shape): ...",
    "def concat(arrays, /, *, axis=0): ...",
    "def expand_dims(x, /, *, axis=0): ...",
    "def flip(x, /, *, axis=None): ...",
    "def moveaxis(x, source, destination, /): ...",
    "def permute_dims(x, /, axes): ...",
    "def repeat(x, repeats, /, *, axis=None): ...",
    "def reshape(x, /, shape, *, copy=None): ...",
    "def roll(x, /, shift, *, axis=None): ...",
    "def squeeze(x, /, axis): ...",
    "def stack(arrays, /, *, axis=0): ...",
    "def tile(x, repetitions, /): ...",
    "def unstack(x, /, *, axis=0): ...",
    # searching, sets, sorting
    "def argmax(x, /, *, axis=None, keepdims=False): ...",
    "def argmin(x, /, *, axis=None, keepdims=False): ...",
    "def nonzero(x, /): ...",
    "def searchsorted(x1, x2, /, *, side='left', sorter=None): ...",
    "def where(condition, x1, x2, /): ...",
    "def unique_all(x, /): ...",
    "def unique_counts(x, /): ...",
    "def unique_inverse(x, /): ...",
    "def unique_values(x, /): ...",
    "def argsort(x, /, *, axis=-1, descending=False, stable=True): ...",
    "def sort(x, /, *, axis=-1, descending=False, stable=True): ...",
    # statistical, utility
    "def cumulative_sum(x, /, *, axis=None, dtype=None, include_initial=False): ...",
    "def max(x, /, *, axis=None, keepdims=False): ...",
    "def mean(x, /, *, axis=None, keepdims=False): ...",
    "def min(x, /, *, axis=None, keepdims=False): ...",
    "def prod(x, /, *, axis=None, dtype=None, keepdims=False): ...",
    "def std(x, /, *, axis=None, correction=0.0, keepdims=False): ...",
    "def sum(x, /, *, axis=None, dtype=None, keepdims=False): ...",
    "def var(x, /, *, axis=None, correction=0.0, keepdims=False): ...",
    "def all(x, /, *, axis=None, keepdims=False): ...",
    "def any(x, /, *, axis=None, keepdims=False): ...",
    # inspection
    "def __array_namespace_info__(): ...",
])

LINALG = "\n".join([
    "def cholesky(x, /, *, upper=False): ...",
    "def cross(x1, x2, /, *, axis=-1): ...",
    "def det(x, /): ...",
    "def diagonal(x, /, *, offset=0): ...",
    "def eigh(x, /): ...",
    "def eigvalsh(x, /): ...",
    "def inv(x, /): ...",
    "def matmul(x1, x2, /): ...",
    "def matrix_norm(x, /, *, keepdims=False, ord='fro'): ...",
    "def matrix_power(x, n, /): ...",
    "def matrix_rank(x, /, *, rtol=None): ...",
    "def matrix_transpose(x, /): ...",
    "def outer(x1, x2, /): ...",
    "def pinv(x, /, *, rtol=None): ...",
    "def qr(x, /, *, mode='reduced'): ...",
    "def slogdet(x, /): ...",
    "def solve(x1, x2, /): ...",
    "def svd(x, /, *, full_matrices=True): ...",
    "def svdvals(x, /): ...",
    "def tensordot(x1, x2, /, *, axes=2): ...",
    "def trace(x, /, *, offset=0, dtype=None): ...",
    "def vecdot(x1, x2, /, *, axis=-1): ...",
    "def vector_norm(x, /, *, axis=None, keepdims=False, ord=2): ...",
])

_UNARY_DUNDERS = ("abs", "bool", "complex", "dlpack_device", "float", "index", "int", "invert",
                  "neg", "pos")
_BINARY_DUNDERS = ("add", "and", "eq", "floordiv", "ge", "gt", "le", "lshift", "lt", "matmul",
                   "mod", "mul", "ne", "or", "pow", "rshift", "sub", "truediv", "xor")
_REFLECTED = ("add", "and", "floordiv", "lshift", "matmul", "mod", "mul", "or", "pow", "rshift",
              "sub", "truediv", "xor")
ARRAY_METHODS = "\n".join([
    *(f"def __{name}__(self, /): ..." for name in _UNARY_DUNDERS),
    *(f"def __{name}__(self, other, /): ..." for name in _BINARY_DUNDERS),
    *(f"def __{p}{name}__(self, other, /): ..." for p in ("r", "i") for name in _REFLECTED),
    "def __array_namespace__(self, /, *, api_version=None): ...",
    "def __dlpack__(self, /, *, stream=None, max_version=None, dl_device=None, copy=None): ...",
    "def __getitem__(self, key, /): ...",
    "def __setitem__(self, key, value, /): ...",
    "def to_device(self, device, /, *, stream=None): ...",
])
ARRAY_ATTRIBUTES = ("dtype", "device", "mT", "ndim", "shape", "size", "T")
CONSTANTS = {"e": math.e, "inf": math.inf, "nan": math.nan, "pi": math.pi, "newaxis": None}
DTYPE_NAMES = ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
               "float32", "float64", "complex64", "complex128")

# What gpuarr does not offer yet (docs/array_api.md's "Not there yet" lists the same).
NOT_YET = set()


def _stubs(source):
    ns = {}
    exec(source, ns)
    return {k: v for k, v in ns.items() if callable(v)}


SPEC = {**_stubs(NAMESPACE), **{f"linalg.{k}": v for k, v in _stubs(LINALG).items()}}
SPEC_METHODS = _stubs(ARRAY_METHODS)


def _lookup(name):
    obj = ga
    for part in name.split("."):
        obj = getattr(obj, part)
    return obj


def _binds(ours, spec, skip_self=False):
    """`ours` takes every call the spec's signature allows: the required arguments alone;
    every argument, positional-or-keyword ones by name; every argument, positionally where
    the spec allows it. (Keyword-only parameters of the spec may be positional here too: a
    superset, as numpy's.)"""
    sig, params = inspect.signature(ours), list(inspect.signature(spec).parameters.values())
    v = object()
    head = (v,) if skip_self else ()
    params = params[len(head):]
    positional = [p for p in params if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    pos_only = [v for p in params if p.kind is p.POSITIONAL_ONLY]
    var = (v, v) if any(p.kind is p.VAR_POSITIONAL for p in params) else ()
    kw_only = {p.name: v for p in params if p.kind is p.KEYWORD_ONLY}
    sig.bind(*head, *[v for p in positional if p.default is p.empty],
             **{p.name: v for p in params if p.kind is p.KEYWORD_ONLY and p.default is p.empty})
    sig.bind(*head, *pos_only, *var, **{p.name: v for p in positional
                                        if p.kind is p.POSITIONAL_OR_KEYWORD}, **kw_only)
    sig.bind(*head, *[v for _ in positional], *var, **kw_only)


# ---------------------------------------------------------------- names and signatures

@pytest.mark.parametrize("name", sorted(SPEC))
def test_standard_function_present_with_its_signature(name):
    if name in NOT_YET:
        obj = _lookup(name)
        assert callable(obj)
        return
    obj = _lookup(name)
    assert callable(obj), name
    _binds(obj, SPEC[name])


def test_standard_objects_present(m33):
    for name, value in CONSTANTS.items():
        got = getattr(ga, name)
        assert got is None if value is None else (got == value or (
            math.isnan(got) and math.isnan(value)))
        assert value is None or type(got) is float
    for name in DTYPE_NAMES:
        dt = getattr(ga, name)
        assert dt == np.dtype(name) and hash(dt) == hash(np.dtype(name))
    assert ga.__array_api_version__ == "2025.12"
    assert callable(ga.fft.fftn)  # the fft extension (tests/test_fft.py checks it)
    not_yet_linalg = tuple(sorted(n.split(".")[1] for n in NOT_YET if n.startswith("linalg.")))
    assert not_yet_linalg == ga.linalg.NOT_YET
    for name in ARRAY_ATTRIBUTES:
        assert hasattr(m33, name), name
    for name, spec in SPEC_METHODS.items():
        if name in NOT_YET:
            continue
        _binds(getattr(ga.GpuArray, name), spec, skip_self=True)


def test_not_yet_list_matches_docs():
    docs = pathlib.Path(__file__).resolve().parents[1] / "docs" / "array_api.md"
    text = docs.read_text()
    section = re.search(r"^## Not there yet\n(.*?)(?=^## |\Z)", text, re.S | re.M).group(1)
    listed = set(re.findall(r"^- `([\w.]+)`", section, re.M))
    assert listed == NOT_YET


def test_dlpack_round_trip_and_buffer_errors(ctx, m33):
    # (tests/test_interop.py covers DLPack in full)
    back = ga.from_dlpack(np.from_dlpack(m33, device="cpu"), device=ctx)
    np.testing.assert_array_equal(back.get(), m33.get())
    with pytest.raises(BufferExportError, match="copy=False"):  # a BufferError too
        ga.from_dlpack(np.ones(3), copy=False)


# ---------------------------------------------------------------- fixtures

@pytest.fixture(scope="module")
def h33():
    return np.array([[1.5, -2.0, 3.0], [0.0, 4.0, -1.0], [2.5, 1.0, -3.5]])


@pytest.fixture(scope="module")
def m33(ctx, h33):
    return ga.asarray(h33, context=ctx)


def check(g, h, exact=True):
    assert isinstance(g, ga.GpuArray), type(g)
    assert (g.shape, g.dtype) == (h.shape, h.dtype), ((g.shape, g.dtype), (h.shape, h.dtype))
    if exact:
        np.testing.assert_array_equal(g.get(), h)
    else:
        np.testing.assert_allclose(g.get(), h, rtol=1e-12, atol=1e-12)


# ---------------------------------------------------------------- namespace and dtypes

def test_array_namespace(m33):
    assert m33.__array_namespace__() is ga
    try:  # a version asked for is followed from then on, as array_api_strict does
        for version in ("2021.12", "2022.12", "2023.12", "2024.12", "2025.12"):
            assert m33.__array_namespace__(api_version=version) is ga
            assert ga.__array_api_version__ == version
    finally:
        ga.set_array_api_version(None)
    with pytest.raises(ArgumentError, match=r"'2026\.12'.*2025\.12"):
        m33.__array_namespace__(api_version="2026.12")
    with pytest.raises(ValueError):
        m33.__array_namespace__(api_version="1.0")


def _spec_promotion(a, b):
    """The standard's promotion table (2023.12): None where it leaves the pair undefined."""
    a, b = np.dtype(a), np.dtype(b)
    if a.kind == "b" or b.kind == "b":
        return a if a == b else None
    if a.kind in "iu" and b.kind in "iu":
        if a.kind == b.kind:
            return max(a, b, key=lambda d: d.itemsize)
        s, u = (a, b) if a.kind == "i" else (b, a)
        bits = max(s.itemsize, 2 * u.itemsize)
        return np.dtype(f"int{8 * bits}") if bits <= 8 else None
    if a.kind in "fc" and b.kind in "fc":
        size = max(x.itemsize // (2 if x.kind == "c" else 1) for x in (a, b))
        kind = "complex" if "c" in (a.kind, b.kind) else "float"
        return np.dtype(f"{kind}{8 * size * (2 if kind == 'complex' else 1)}")
    return None  # mixed kinds: unspecified


def test_promotion_table_and_python_scalars(ctx):
    defined = 0
    for a in DTYPE_NAMES:
        for b in DTYPE_NAMES:
            want = _spec_promotion(a, b)
            if want is not None:
                defined += 1
                assert ga.result_type(getattr(ga, a), getattr(ga, b)) == want, (a, b)
    assert defined == 73
    x8 = ga.asarray(np.array([1, 2], np.int8), context=ctx)
    f32 = ga.asarray(np.array([1.5, 2.0], np.float32), context=ctx)
    # Python scalars take the array's dtype within their kind
    for arr, scalar, want in [(x8, 1, np.int8), (x8, True, np.int8), (f32, 1, np.float32),
                              (f32, 2.5, np.float32), (f32, 1j, np.complex64)]:
        assert ga.result_type(arr, scalar) == want
    assert ga.result_type(x8, f32, np.int16) == np.float32
    check((x8 + 1), np.array([2, 3], np.int8))
    check((f32 * 2.0), np.array([3.0, 4.0], np.float32))
    check((x8 + ga.asarray(np.array([1, 1], np.uint8), context=ctx)), np.array([2, 3], np.int16))
    with pytest.raises(ArgumentError):
        ga.result_type()


def test_isdtype_can_cast_finfo_iinfo(m33):
    assert ga.isdtype(ga.int8, "signed integer") and not ga.isdtype(ga.uint8, "signed integer")
    assert ga.isdtype(ga.uint64, ("bool", "integral")) and ga.isdtype(ga.bool, "bool")
    assert ga.isdtype(ga.complex64, "numeric") and not ga.isdtype(ga.bool, "numeric")
    assert ga.isdtype(ga.float32, ga.float32) and not ga.isdtype(ga.float32, (ga.float64,))
    assert ga.isdtype(m33.dtype, "real floating")
    with pytest.raises(ArgumentError, match="'float'"):
        ga.isdtype(ga.float32, "float")
    with pytest.raises(TypeError, match=r"x\.dtype"):
        ga.isdtype(m33, "real floating")
    assert ga.can_cast(ga.int8, ga.int16) and not ga.can_cast(ga.int16, ga.int8)
    assert ga.can_cast(m33, ga.complex128) and not ga.can_cast(m33, ga.float32)
    fi, ii = ga.finfo(m33), ga.iinfo(ga.int16)
    assert (fi.bits, fi.eps, fi.smallest_normal, fi.dtype) == (
        64, np.finfo(np.float64).eps, np.finfo(np.float64).smallest_normal, np.float64)
    assert (ii.bits, ii.min, ii.max, ii.dtype) == (16, -32768, 32767, np.int16)
    assert ga.finfo(ga.complex64).dtype == np.float32


def test_astype(m33, h33):
    assert ga.astype(m33, ga.float64, copy=False) is m33
    same = ga.astype(m33, ga.float64)
    assert same is not m33 and same.storage is not m33.storage
    check(ga.astype(m33, ga.int32), h33.astype(np.int32))


# ---------------------------------------------------------------- devices

def test_device_and_to_device(ctx_pair):
    c0, c1 = ctx_pair
    h = np.arange(6.0).reshape(2, 3)
    x = ga.asarray(h, device=c0)
    assert x.device is c0 and x.device == c0 and {c0: 0, c1: 1}[x.device] == 0
    assert x.to_device(c0) is x and x.to_device(x.device) is x
    y = x.to_device(c1)
    assert y.device is c1 and y.device != x.device
    check(y, h)
    check(x.to_device(c1.devname), h)
    with pytest.raises(UnsupportedError, match="stream"):
        x.to_device(c1, stream=1)
    made = [ga.zeros(2, device=c1), ga.ones((2,), device=c1), ga.empty(2, device=c1),
            ga.full(2, 3, device=c1), ga.arange(3, device=c1), ga.eye(2, device=c1),
            ga.linspace(0, 1, 3, device=c1), ga.zeros_like(x, device=c1),
            ga.ones_like(x, device=c1), ga.empty_like(x, device=c1),
            ga.full_like(x, 2, device=c1), ga.asarray(x, device=c1),
            ga.astype(x, ga.float32, device=c1), ga.asarray([1, 2], device=c1)]
    assert all(m.device is c1 for m in made)
    check(made[-1], np.array([1, 2]))
    check(made[6], np.linspace(0, 1, 3, dtype=ga.config.floatX))
    assert ga.zeros_like(x).device is c0
    assert ga.zeros(1, context=c1.devname, device=c1).device is c1
    with pytest.raises(ArgumentError, match="different devices"):
        ga.zeros(1, context=c0, device=c1)
    info = ga.__array_namespace_info__()
    assert c0 in info.devices() and c1 in info.devices()
    assert info.default_device() is ga.get_context()


def test_inspection(ctx):
    info = ga.__array_namespace_info__()
    assert info.capabilities() == {"boolean indexing": True, "data-dependent shapes": True,
                                   "max dimensions": 64}
    defaults = info.default_dtypes(device=ctx)
    assert defaults["integral"] == defaults["indexing"] == np.int64
    assert defaults["real floating"] == ga.config.floatX
    assert defaults["complex floating"] == np.result_type(defaults["real floating"], 1j)
    every = info.dtypes(device=ctx)
    assert set(every) == set(DTYPE_NAMES) - (set() if ctx.fp64 else {"float64", "complex128"})
    assert all(every[k] == np.dtype(k) for k in every)
    assert list(info.dtypes(kind="signed integer")) == ["int8", "int16", "int32", "int64"]
    assert set(info.dtypes(kind=("bool", "complex floating"))) <= {"bool", "complex64",
                                                                   "complex128"}
    assert list(info.dtypes(kind="unsigned integer")) == ["uint8", "uint16", "uint32", "uint64"]
    with pytest.raises(ArgumentError):
        info.dtypes(kind="strings")


# ---------------------------------------------------------------- the array object

def test_array_attributes_and_scalars(ctx, m33, h33):
    assert (m33.ndim, m33.shape, m33.size, m33.dtype) == (2, (3, 3), 9, np.float64)
    check(m33.T, h33.T)
    b = ga.asarray(np.arange(24.0).reshape(2, 3, 4), context=ctx)
    check(b.mT, np.arange(24.0).reshape(2, 3, 4).swapaxes(-1, -2))
    assert b.mT.storage is b.storage
    with pytest.raises(ShapeError, match="at least 2"):
        _ = m33[0].mT
    one = m33[1, 1]
    assert (float(one), int(one), complex(one), bool(one)) == (4.0, 4, 4 + 0j, True)
    idx = ga.asarray(np.array(2, np.int64), context=ctx)
    assert operator.index(idx) == 2 and [10, 20, 30][idx] == 30
    with pytest.raises(TypeError):
        operator.index(one)
    check(abs(m33), np.abs(h33))
    check(m33 @ m33, h33 @ h33, exact=False)


def test_inplace_operators(ctx, h33):
    x = ga.asarray(h33, context=ctx)
    view = x[1:]
    storage = x.storage
    y = x
    y += ga.asarray(h33, context=ctx)
    y -= 1
    y *= 2.0
    assert y is x and x.storage is storage
    want = (h33 + h33 - 1) * 2.0
    check(x, want)
    check(view, want[1:])  # written in place: views see it
    x /= ga.asarray(np.float64(2.0), context=ctx)
    check(x, want / 2)
    # a GpuArray operand whose promotion would change x's dtype is refused, x unchanged
    f32 = ga.asarray(np.ones(3, np.float32), context=ctx)
    for op in (operator.iadd, operator.imul, operator.itruediv):
        with pytest.raises(UnsupportedError, match=r"change x's dtype: float32 .* float64"):
            op(f32, x[0])
    i32 = ga.asarray(np.arange(3, dtype=np.int32), context=ctx)
    for other in (ga.asarray(np.ones(3, np.int64), context=ctx), x[0]):
        with pytest.raises(TypeError, match="int32"):
            i32 += other
    with pytest.raises(TypeError):
        i32 /= ga.asarray(np.ones(3, np.int32), context=ctx)
    check(f32, np.ones(3, np.float32))
    i32 <<= ga.asarray(np.ones(3, np.int32), context=ctx)
    i32 |= 1
    check(i32, (np.arange(3, dtype=np.int32) << 1) | 1)
    # a numpy scalar casts back as numpy does (same_kind)
    f32 *= np.float64(3)
    check(f32, np.full(3, 3, np.float32))
    # broadcasting may not change x's shape
    with pytest.raises(ShapeError):
        f32 += ga.asarray(np.ones((2, 3), np.float32), context=ctx)
    # x @= y keeps x
    z = ga.asarray(h33, context=ctx)
    z @= ga.asarray(np.eye(3), context=ctx)
    check(z, h33)
    with pytest.raises(ShapeError, match="@="):
        z @= ga.asarray(np.ones((3, 2)), context=ctx)


# ---------------------------------------------------------------- functions

def test_manipulation_additions(ctx, m33, h33):
    b = np.arange(24.0).reshape(2, 3, 4)
    g = ga.asarray(b, context=ctx)
    check(ga.permute_dims(g, (2, 0, 1)), np.permute_dims(b, (2, 0, 1)))
    parts = ga.unstack(g, axis=-2)
    assert len(parts) == 3 and all(p.storage is g.storage for p in parts)
    for p, q in zip(parts, np.unstack(b, axis=-2)):
        check(p, q)
    with pytest.raises(ShapeError):
        ga.unstack(g[0, 0, 0])
    with pytest.raises(AxisError):
        ga.unstack(g, axis=3)
    check(ga.matrix_transpose(g), np.matrix_transpose(b))
    check(ga.concat([m33, m33], axis=None), np.concat([h33, h33], axis=None))
    check(ga.expand_dims(m33), h33[None])
    check(ga.expand_dims(m33, axis=-1), h33[..., None])
    view = ga.reshape(g, (6, 4), copy=False)
    assert view.storage is g.storage
    copied = ga.reshape(g, (6, 4), copy=True)
    assert copied.storage is not g.storage
    check(copied, b.reshape(6, 4))
    with pytest.raises(ArgumentError, match="without a copy"):
        ga.reshape(g.mT, (-1,), copy=False)
    check(ga.reshape(g.mT, shape=(-1,)), b.swapaxes(-1, -2).reshape(-1))
    assert ga.asarray(m33, copy=False) is m33
    assert ga.asarray(m33, copy=True).storage is not m33.storage
    for obj in (h33, [1.0, 2.0]):
        with pytest.raises(ArgumentError, match="copy=False"):
            ga.asarray(obj, copy=False)
    with pytest.raises(ArgumentError, match="float32"):
        ga.asarray(m33, dtype=np.float32, copy=False)


@pytest.mark.parametrize("bounds", [dict(min=-1.0), dict(max=2), dict(min=-1.0, max=2.0),
                                    dict(), dict(min=None, max=0.5)])
def test_clip_bounds(m33, h33, bounds):
    check(ga.clip(m33, **bounds), np.clip(h33, **bounds))


def test_clip_integers_and_arrays(ctx, m33, h33):
    i = np.array([-5, 0, 7, 100], np.int32)
    gi = ga.asarray(i, context=ctx)
    check(ga.clip(gi, min=0), np.clip(i, 0, None))
    check(ga.clip(gi, max=6), np.clip(i, None, 6))
    check(ga.clip(gi, 1, 8), np.clip(i, 1, 8))
    check(ga.clip(m33, m33[0], 2.0), np.clip(h33, h33[0], 2.0))
    with pytest.raises(TypeError, match="min or a_min"):
        ga.clip(m33, 0, a_min=1)


@pytest.mark.parametrize("correction", [0, 1, 1.5])
def test_var_std_correction(m33, h33, correction):
    check(ga.var(m33, correction=correction), np.var(h33, correction=correction), exact=False)
    check(ga.std(m33, axis=0, correction=correction, keepdims=True),
          np.std(h33, axis=0, correction=correction, keepdims=True), exact=False)


def test_var_correction_and_ddof_exclusive(m33):
    with pytest.raises(ArgumentError, match="simultaneously"):
        ga.var(m33, ddof=1, correction=1)


def _unique_data():
    nanny = np.array([2.0, np.nan, -0.0, 2.0, 0.0, np.nan, -1.0, 2.0])
    ints = np.array([[3, 1, 3], [2, 1, 1]], np.int32)
    return [nanny, ints, nanny[::-2], np.zeros(0), np.zeros((2, 0), np.int32)]


@pytest.mark.parametrize("case", range(5))
def test_unique_family(ctx, case):
    h = _unique_data()[case]
    g = ga.asarray(h, context=ctx)
    if case == 2:
        g = ga.asarray(_unique_data()[0], context=ctx)[::-2]
    # numpy's unique_* (sorted, NaNs distinct); unique_values may come unsorted from numpy
    want = np.unique_all(h)
    got = ga.unique_all(g)
    assert type(got).__name__ == "UniqueAllResult" and got._fields == want._fields
    for a, b in zip(got, want):
        check(a, b)
    counts, inverse = ga.unique_counts(g), ga.unique_inverse(g)
    for a, b in zip((*counts, *inverse), (*np.unique_counts(h), *np.unique_inverse(h))):
        check(a, b)
    assert counts._fields == ("values", "counts")
    assert inverse._fields == ("values", "inverse_indices")
    check(ga.unique_values(g), np.unique(h, equal_nan=False))


def _descending_stable(h, axis):
    """Oracle: Python's stable sort per row, keys descending with NaN first."""
    moved = np.moveaxis(h, axis, -1)
    rows = moved.reshape(math.prod(moved.shape[:-1]), moved.shape[-1])
    order = np.array([sorted(range(len(r)), key=lambda i, r=r: (
        0 if np.isnan(r[i]) else 1, -r[i]) if r.dtype.kind == "f" else -int(r[i]))
        for r in rows], dtype=np.int64).reshape(moved.shape)
    return np.moveaxis(order, -1, axis)


@pytest.mark.parametrize("layout", ["plain", "axis0", "strided", "flat", "empty"])
def test_sort_argsort_descending_stable(ctx, layout):
    f = np.array([[1.0, -0.0, np.nan, 2.0, 0.0, 1.0], [np.inf, 3.0, 3.0, np.nan, -1.0, 3.0]])
    i = np.array([[5, 1, 5, 2, 1, 9], [0, 0, 7, 7, 7, 1]], np.int64)
    for h in (f, i):
        g = ga.asarray(h, context=ctx)
        axis = -1
        if layout == "axis0":
            h, g, axis = h.T, g.T, 0
        elif layout == "strided":
            h, g = h[::-1, ::-2], g[::-1, ::-2]
        elif layout == "flat":
            axis = None
        elif layout == "empty":
            h, g = h[:, :0], g[:, :0]
        flat = h.ravel() if axis is None else h
        order = _descending_stable(flat, 0 if axis is None else axis)
        idx = ga.argsort(g, axis=axis, descending=True)
        check(idx, order)
        values = ga.sort(g, axis=axis, descending=True, stable=True)
        want = np.take_along_axis(flat, order, 0 if axis is None else axis)
        check(values, want)
        if h.dtype.kind == "f":  # -0.0 and 0.0 keep their order: compare the sign bits
            assert np.array_equal(np.signbit(values.get()), np.signbit(want))
        check(ga.sort(g, axis=axis), np.sort(h, axis=axis))


@pytest.mark.parametrize("include_initial", [False, True])
def test_cumulative_sum(ctx, include_initial):
    h = (np.arange(12) % 5 - 1).astype(np.int32).reshape(3, 4)  # sums in int64, as numpy
    g = ga.asarray(h, context=ctx)
    for axis in (0, 1, -1):
        check(ga.cumulative_sum(g, axis=axis, include_initial=include_initial),
              np.cumulative_sum(h, axis=axis, include_initial=include_initial))
    check(ga.cumulative_sum(g[1], include_initial=include_initial),
          np.cumulative_sum(h[1], include_initial=include_initial))
    check(ga.cumulative_sum(g[::-1, 1:3], axis=1, include_initial=include_initial,
                            dtype=np.int64),
          np.cumulative_sum(h[::-1, 1:3], axis=1, include_initial=include_initial,
                            dtype=np.int64))
    check(ga.cumulative_sum(g[:0], axis=0, include_initial=include_initial),
          np.cumulative_sum(h[:0], axis=0, include_initial=include_initial))


def test_cumulative_sum_needs_axis(m33):
    with pytest.raises(ArgumentError, match="axis"):
        ga.cumulative_sum(m33)


def test_vecdot(ctx):
    rng = np.random.default_rng(1)
    a = rng.standard_normal((2, 3, 4))
    b = rng.standard_normal((3, 4))
    ga_, gb = ga.asarray(a, context=ctx), ga.asarray(b, context=ctx)
    check(ga.vecdot(ga_, gb), np.vecdot(a, b), exact=False)
    check(ga.vecdot(ga_, gb[:, :, None][..., 0], axis=-2), np.vecdot(a, b, axis=-2),
          exact=False)
    check(ga.vecdot(ga_[..., ::-1], b[:, ::-1]), np.vecdot(a[..., ::-1], b[:, ::-1]),
          exact=False)
    c = a[0] + 1j * b
    gc = ga.asarray(c, context=ctx)
    check(ga.vecdot(gc, gc[::-1]), np.vecdot(c, c[::-1]), exact=False)  # conj(x1) * x2
    i = np.arange(6, dtype=np.int32).reshape(2, 3)
    check(ga.vecdot(ga.asarray(i, context=ctx), ga.asarray(i, context=ctx)), np.vecdot(i, i))
    with pytest.raises(ShapeError, match="4 elements along axis -1"):
        ga.vecdot(ga_, gb[:, :3])
    with pytest.raises(ShapeError):
        ga.vecdot(ga_[0, 0, 0], gb[0, 0])


# ---------------------------------------------------------------- linalg

@pytest.mark.parametrize("ord", [2, 1, np.inf, -np.inf, 0, 3, 0.5])
def test_vector_norm(m33, h33, ord):
    for axis, keepdims in ((None, False), (1, True), ((0, 1), False)):
        check(linalg.vector_norm(m33, axis=axis, keepdims=keepdims, ord=ord),
              np.linalg.vector_norm(h33, axis=axis, keepdims=keepdims, ord=ord), exact=False)


def test_vector_norm_dtypes(ctx, h33):
    i = np.array([[3, -4], [0, 5]], np.int32)
    check(linalg.vector_norm(ga.asarray(i, context=ctx)), np.linalg.vector_norm(i))
    c = h33 + 1j * h33[::-1]
    check(linalg.vector_norm(ga.asarray(c, context=ctx), axis=0),
          np.linalg.vector_norm(c, axis=0), exact=False)
    with pytest.raises(ArgumentError, match="'fro'"):
        linalg.vector_norm(ga.asarray(h33, context=ctx), ord="fro")


@pytest.mark.parametrize("ord", ["fro", 1, -1, np.inf, -np.inf])
def test_matrix_norm(ctx, ord):
    h = np.arange(24.0).reshape(2, 3, 4) - 7.5
    g = ga.asarray(h, context=ctx)
    for keepdims in (False, True):
        check(linalg.matrix_norm(g, ord=ord, keepdims=keepdims),
              np.linalg.matrix_norm(h, ord=ord, keepdims=keepdims), exact=False)
        check(linalg.norm(g, ord=ord, axis=(2, 0), keepdims=keepdims),
              np.linalg.norm(h, ord=ord, axis=(2, 0), keepdims=keepdims), exact=False)


def test_matrix_norm_refusals(m33, h33):
    for ord in ("nuc", 2, -2):  # through the singular values (tests/test_linalg.py)
        check(linalg.matrix_norm(m33, ord=ord), np.linalg.matrix_norm(h33, ord=ord), exact=False)
    with pytest.raises(ArgumentError, match="invalid order 3"):
        linalg.matrix_norm(m33, ord=3)
    with pytest.raises(ShapeError):
        linalg.matrix_norm(m33[0])


def test_norm_like_numpy(m33, h33):
    for kwargs in (dict(), dict(ord=1), dict(axis=1), dict(axis=0, ord=np.inf),
                   dict(keepdims=True), dict(ord="fro")):
        check(linalg.norm(m33, **kwargs), np.linalg.norm(h33, **kwargs), exact=False)
    check(linalg.norm(m33[0], ord=1), np.linalg.norm(h33[0], ord=1))
    with pytest.raises(ArgumentError):
        linalg.norm(m33[None], ord=1)


def test_linalg_products_and_diagonals(ctx, m33, h33):
    b = np.arange(18.0).reshape(2, 3, 3) - 4
    g = ga.asarray(b, context=ctx)
    check(linalg.diagonal(g, offset=1), np.linalg.diagonal(b, offset=1))
    check(linalg.trace(g, offset=-1), np.linalg.trace(b, offset=-1))
    check(linalg.trace(g, dtype=np.float32), np.linalg.trace(b, dtype=np.float32))
    check(linalg.outer(m33[0], h33[1]), np.linalg.outer(h33[0], h33[1]), exact=False)
    check(linalg.matmul(g, m33), np.linalg.matmul(b, h33), exact=False)
    check(linalg.tensordot(g, m33, axes=1), np.linalg.tensordot(b, h33, axes=1), exact=False)
    check(linalg.vecdot(g, m33, axis=-2), np.linalg.vecdot(b, h33, axis=-2), exact=False)
    check(linalg.matrix_transpose(g), np.linalg.matrix_transpose(b))
    check(linalg.cross(g, m33[1]), np.linalg.cross(b, h33[1]))
    check(linalg.cross(g.mT, m33.T, axis=-2), np.cross(b.swapaxes(-1, -2), h33.T, axis=-2))
    for n in (0, 1, 2, 5):
        check(linalg.matrix_power(g, n), np.linalg.matrix_power(b, n), exact=False)
    check(linalg.matrix_power(m33, -1), np.linalg.matrix_power(h33, -1), exact=False)
    with pytest.raises(ShapeError):
        linalg.matrix_power(g[:, :2], 2)
    with pytest.raises(ShapeError, match="3 elements"):
        linalg.cross(g[..., :2], m33[1, :2])
    with pytest.raises(ShapeError, match="1-d"):
        linalg.outer(m33, m33)
    with pytest.raises(ShapeError):
        linalg.diagonal(m33[0])
