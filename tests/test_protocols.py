"""numpy's functions called with GpuArrays (`__array_function__`, and the ufunc path's
additions): they return GpuArrays equal to numpy's own results, mix numpy and GpuArray
arguments, and refuse what gpuarr lacks with UnsupportedError naming the numpy function.

Arrays are float64 (and int64 for indices), so the kernels are the few the representative
set needs, mostly shared with test_array_api.py.
"""

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import protocols
from gpuarr.errors import ContextMismatch, UnsupportedError

H = np.array([[1.5, -2.0, 3.0, 0.5], [0.0, 4.0, -1.0, 2.0], [2.5, 1.0, -3.5, 0.0]])
SORTED = np.array([-1.0, 0.0, 0.5, 2.0, 7.0])


@pytest.fixture(scope="module")
def g(ctx):
    return ga.asarray(H, context=ctx)


@pytest.fixture(scope="module")
def gs(ctx):
    return ga.asarray(SORTED, context=ctx)


def same(got, want, exact=False):
    """got (GpuArray, or a tuple/list of them) equals numpy's `want` in shape, dtype, values."""
    if isinstance(want, tuple | list):
        assert isinstance(got, tuple | list) and len(got) == len(want)
        for a, b in zip(got, want):
            same(a, b, exact)
        return
    assert isinstance(got, ga.GpuArray), type(got)
    want = np.asarray(want)
    assert (got.shape, got.dtype) == (want.shape, want.dtype), (got.shape, got.dtype,
                                                               want.shape, want.dtype)
    if exact:
        np.testing.assert_array_equal(got.get(), want)
    else:
        np.testing.assert_allclose(got.get(), want, rtol=1e-12, atol=1e-12)


# (id, call): call(a, s) with a the 3x4 array and s a sorted 1-d array, numpy's or ours
CASES = [
    ("sum", lambda a, s: np.sum(a)),
    ("sum_axis_keepdims", lambda a, s: np.sum(a, axis=0, keepdims=True)),
    ("mean", lambda a, s: np.mean(a, 1)),
    ("std_ddof", lambda a, s: np.std(a, ddof=1)),
    ("var_axis", lambda a, s: np.var(a, axis=0)),
    ("max", lambda a, s: np.max(a)),
    ("min_axis", lambda a, s: np.min(a, axis=1)),
    ("argmax", lambda a, s: np.argmax(a, axis=1)),
    ("prod", lambda a, s: np.prod(a[0])),
    ("any_all", lambda a, s: (np.any(a > 3), np.all(a > -5, axis=0))),
    ("cumsum", lambda a, s: np.cumsum(a, axis=1)),
    ("cumulative_sum", lambda a, s: np.cumulative_sum(a, axis=0, include_initial=True)),
    ("concatenate", lambda a, s: np.concatenate([a, a[:1]])),
    ("concat_none", lambda a, s: np.concat([a, a], axis=None)),
    ("stack", lambda a, s: np.stack([a, a], axis=1)),
    ("reshape", lambda a, s: np.reshape(a, (4, 3))),
    ("reshape_kw", lambda a, s: np.reshape(a, shape=(2, 6))),
    ("transpose", lambda a, s: np.transpose(a)),
    ("permute_dims", lambda a, s: np.permute_dims(a[None], (2, 0, 1))),
    ("swapaxes", lambda a, s: np.swapaxes(a, 0, 1)),
    ("expand_squeeze", lambda a, s: np.squeeze(np.expand_dims(a, 1), axis=1)),
    ("ravel", lambda a, s: np.ravel(a.T)),
    ("moveaxis", lambda a, s: np.moveaxis(a[None], 0, -1)),
    ("flip_roll", lambda a, s: np.roll(np.flip(a, 0), 1, axis=1)),
    ("tile_repeat", lambda a, s: (np.tile(a, (2, 1)), np.repeat(a, 2, axis=0))),
    ("broadcast_to", lambda a, s: np.broadcast_to(a[0], (2, 4))),
    ("broadcast_arrays", lambda a, s: np.broadcast_arrays(a, a[:1])),
    ("where", lambda a, s: np.where(a > 1, a, -a)),
    ("clip", lambda a, s: np.clip(a, -1, 2)),
    ("round", lambda a, s: np.round(a / 3, 2)),
    ("real_imag", lambda a, s: (np.real(a), np.imag(a))),
    ("nan_to_num", lambda a, s: np.nan_to_num(a)),
    ("dot", lambda a, s: np.dot(a, a.T)),
    ("matmul", lambda a, s: np.matmul(a.T, a)),
    ("einsum", lambda a, s: np.einsum("ij,ij->i", a, a)),
    ("tensordot", lambda a, s: np.tensordot(a, a, axes=([0], [0]))),
    ("inner_outer", lambda a, s: (np.inner(a, a), np.outer(a[0], a[1]))),
    ("vdot_vecdot", lambda a, s: (np.vdot(a, a), np.vecdot(a, a))),
    ("trace_diagonal", lambda a, s: (np.trace(a, 1), np.diagonal(a, -1))),
    ("tril_triu", lambda a, s: (np.tril(a), np.triu(a, 1))),
    ("sort", lambda a, s: np.sort(a, axis=0)),
    ("argsort", lambda a, s: np.argsort(a)),
    ("searchsorted", lambda a, s: np.searchsorted(s, np.array([0.5, -3.0, 9.0]))),
    ("unique", lambda a, s: np.unique(a, return_counts=True)),
    ("unique_values", lambda a, s: np.unique_values(a[:, :2])),
    ("take", lambda a, s: np.take(a, [0, 2], axis=1)),
    ("nonzero_argwhere", lambda a, s: (np.nonzero(a), np.argwhere(a))),
    ("likes", lambda a, s: (np.zeros_like(a), np.ones_like(a, dtype=np.int64),
                            np.full_like(a, 7.0))),
    ("zeros_like_positional", lambda a, s: np.zeros_like(a, None, "K", True, (2,))),
    ("astype", lambda a, s: np.astype(a, np.int64)),
    ("linalg_norm", lambda a, s: (np.linalg.norm(a), np.linalg.norm(a, axis=1),
                                  np.linalg.norm(a, 1))),
    ("linalg_vector_matrix_norm", lambda a, s: (np.linalg.vector_norm(a, ord=np.inf),
                                                np.linalg.matrix_norm(a))),
    ("linalg_others", lambda a, s: (np.linalg.trace(a), np.linalg.matrix_transpose(a),
                                    np.linalg.outer(a[0], a[1]), np.linalg.cross(a[:, :3],
                                                                                 a[:, 1:]))),
]


@pytest.mark.parametrize("call", [c for _, c in CASES], ids=[i for i, _ in CASES])
def test_numpy_function_returns_gpuarray(g, gs, call):
    try:
        want = call(H, SORTED)
    except (AttributeError, TypeError) as e:
        if np.lib.NumpyVersion(np.__version__) >= "2.0.0":
            raise
        pytest.skip(f"numpy {np.__version__} lacks this numpy 2 function or argument: {e}")
    same(call(g, gs), want)


def test_mixing_numpy_and_gpuarray_arguments(g, gs):
    h = H[::-1].copy()
    same(np.concatenate([g, h]), np.concatenate([H, h]))
    same(np.concatenate([h, g]), np.concatenate([h, H]))
    same(np.stack([h, g, h]), np.stack([h, H, h]))
    same(np.where(h > 1, g, 0.0), np.where(h > 1, H, 0.0))
    same(np.where(g > 1, h, 0.0), np.where(H > 1, h, 0.0))
    same(np.dot(h, g.T), np.dot(h, H.T))
    same(np.matmul(h, g.T), np.matmul(h, H.T))
    same(np.add(h, g), h + H)
    same(np.clip(g, h, 2.0), np.clip(H, h, 2.0))
    same(np.searchsorted(gs, np.array([0.0, 3.0])), np.searchsorted(SORTED, [0.0, 3.0]))
    same(np.einsum("ij,ij->j", h, g), np.einsum("ij,ij->j", h, H))


def test_numpy_conversions_stay_explicit(g):
    host = np.asarray(g)
    assert type(host) is np.ndarray and np.array_equal(host, H)
    assert type(np.array(g)) is np.ndarray
    assert ga.GpuArray.__array_priority__ == 100
    same(H + g, H + H)  # an ndarray on the left defers to the GpuArray
    assert np.asarray(g, dtype=np.float32).dtype == np.float32


@pytest.mark.parametrize("call, name", [
    (lambda a: np.is_busday(a), "numpy.is_busday"),
    (lambda a: np.add.reduce(a), "numpy.add.reduce"),
    (lambda a: np.frexp(a), "numpy.frexp"),
])
def test_unimplemented_numpy_function_raises_naming_it(g, call, name):
    with pytest.raises(UnsupportedError, match=rf"^{name} is not implemented for GpuArray; "
                                                rf"call \.get\(\) to compute on the host$"):
        call(g)
    with pytest.raises(TypeError):
        call(g)


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.0.0",
                    reason="np.std(mean=), np.vecdot, np.linalg.matrix_norm are numpy 2's")
def test_unsupported_numpy_arguments_raise_naming_them(g):
    for call, word in [(lambda: np.std(g, mean=0.0), "mean"),
                       (lambda: np.outer(g[0], g[1], g[:, :1]), "out"),
                       (lambda: np.zeros_like(g, None, "K", False), "subok"),
                       (lambda: np.vecdot(g, g, keepdims=True), "keepdims")]:
        with pytest.raises(UnsupportedError, match=rf"numpy\.\w+\(\.\.\., {word}=\.\.\.\)"):
            call()


def test_like_creates_on_the_arrays_device(ctx_pair):
    c0, c1 = ctx_pair
    g1 = ga.asarray(H, context=c1)
    fx = ga.config.floatX  # gpuarr's defaults: Python floats and dtype=None give floatX
    for got, want in [(np.ones(3, like=g1), np.ones(3, fx)),
                      (np.full((2, 2), 7, like=g1), np.full((2, 2), 7)),
                      (np.eye(2, like=g1), np.eye(2)),  # numpy passes dtype=float
                      (np.arange(4, like=g1), np.arange(4)),
                      (np.asarray([1.0, 2.0], like=g1), np.array([1.0, 2.0], fx)),
                      (np.array([[1, 2]], like=g1), np.array([[1, 2]])),
                      (np.tri(2, like=g1), np.tri(2))]:  # numpy passes dtype=float
        assert got.device is c1
        same(got, want, exact=True)
    with pytest.raises(ContextMismatch):
        np.concatenate([ga.asarray(H, context=c0), g1])


class Foreign:
    """Another library's array: gpuarr leaves it to numpy (or that library)."""

    def __array_function__(self, func, types, args, kwargs):
        return NotImplemented

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        return NotImplemented


def test_foreign_array_types_are_left_alone(g):
    for call in (lambda: np.concatenate([g, Foreign()]), lambda: np.add(g, Foreign())):
        with pytest.raises(TypeError) as info:
            call()
        assert not isinstance(info.value, UnsupportedError)


def test_table_is_generated_from_names():
    table = protocols.table()
    assert len(table) > 100
    namespaces = {"numpy": (np, ga), "numpy.linalg": (np.linalg, ga.linalg),
                  "numpy.fft": (np.fft, ga.fft)}
    for func, entry in table.items():
        np_ns, ga_ns = namespaces[func.__module__ if func.__module__ in namespaces else "numpy"]
        names = [n for n in dir(np_ns) if getattr(np_ns, n, None) is func]
        assert any(getattr(ga_ns, n, None) is entry.fn for n in names), func
    for name in protocols.EXCLUDED:
        func = getattr(np, name, None)
        assert func not in table
    for name in ga.linalg.NOT_YET:
        assert getattr(np.linalg, name, None) not in table  # numpy 1.26 lacks some
    assert table[np.transpose].fn is ga.transpose  # np.permute_dims is np.transpose
    assert table[np.trace].fn is ga.trace
    if hasattr(np.linalg, "trace"):  # numpy 2
        assert table[np.linalg.trace].fn is ga.linalg.trace
    assert table[np.fft.fft].fn is ga.fft.fft and np.is_busday not in table
    assert table[np.roots].fn is ga.roots and table[np.linalg.eig].fn is ga.linalg.eig
