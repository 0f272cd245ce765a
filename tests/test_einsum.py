"""einsum against numpy.einsum: subscripts (explicit, implicit, '...', spaces, sublists),
one/two/three operands, dtypes, views as operands, 0-size dims, out=, dtype=, casting=,
optimize= and the errors. Shapes and dtypes repeat on purpose: kernels are keyed by dtype
and layout, not sizes, and each new one takes ~1.4 s to build on PoCL."""

import math

import numpy as np
import pytest

import gpuarr as ga
from gpuarr.errors import ArgumentError, ArgumentTypeError, ContextMismatch, ShapeError

CASES = [
    ("ij,jk->ik", [(5, 6), (6, 7)]),                  # matmul
    ("ij,jk->ik", [(9, 300), (300, 4)]),               # a long contraction
    ("bij,bjk->bik", [(3, 5, 6), (3, 6, 7)]),          # batched
    ("...ij,...jk->...ik", [(2, 1, 5, 6), (3, 6, 7)]),  # batch broadcasting
    ("bik,bkj->bji", [(3, 5, 6), (1, 6, 7)]),          # a batch label of size 1, output permuted
    ("ij->ji", [(5, 6)]),
    ("ii", [(5, 5)]),                                  # trace
    ("ii->i", [(5, 5)]),                               # diagonal
    ("iii->i", [(4, 4, 4)]),
    ("ij->", [(5, 6)]),
    ("ij->j", [(5, 6)]),
    ("ijk->kji", [(3, 4, 5)]),
    ("i,i", [(6,), (6,)]),                             # dot
    ("i,j->ij", [(5,), (6,)]),                         # outer
    ("i,i->i", [(6,), (6,)]),                          # elementwise
    ("i,->i", [(6,), ()]),                             # a 0-d operand
    ("ij,ij->i", [(5, 6), (5, 6)]),                    # row-wise dots: batch + contracted
    ("ijk,jkl->il", [(3, 4, 5), (4, 5, 6)]),           # tensordot-like
    ("ij,jk", [(5, 6), (6, 7)]),                       # implicit
    ("Ba,aC", [(5, 6), (6, 7)]),                       # implicit: 'BC' (ASCII order)
    ("ik,kj->ji", [(5, 6), (6, 7)]),
    ("iij,jk->ik", [(5, 5, 6), (6, 7)]),               # diagonal inside a product
    ("ij,k->i", [(5, 6), (7,)]),                       # k summed on its own operand
    ("ij,jk", [(5, 1), (6, 7)]),                       # a size-1 label broadcasts
    ("ij...,j...->i...", [(3, 4, 5), (4, 1)]),
    ("i...->...", [(3, 4, 5)]),
    ("...", [(3, 4)]),
    (" a b , b c -> a c ", [(5, 6), (6, 7)]),          # spaces
    ("ij,jk,kl->il", [(5, 6), (6, 7), (7, 3)]),        # three operands, left to right
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 6)]),
    ("ab,ab,ab->", [(5, 6), (5, 6), (5, 6)]),
]


def _data(shape, dtype, seed):
    rng = np.random.default_rng(seed)
    if np.dtype(dtype).kind in "biu":
        return rng.integers(0, 2 if dtype == np.bool_ else 5, shape).astype(dtype)
    return (rng.random(shape) - 0.5).astype(dtype)


def _summed(subscripts, arrays):
    """How many products each output element sums (the tolerance scales with it)."""
    inputs, arrow, output = subscripts.replace(" ", "").partition("->")
    sizes = {}
    for term, a in zip(inputs.split(","), arrays):
        head, _, tail = term.partition("...")
        shape = np.shape(a)
        for c, n in [*zip(head, shape), *zip(tail, shape[len(shape) - len(tail):])]:
            sizes[c] = max(n, sizes.get(c, 0))
    letters = inputs.replace(",", "").replace(".", "")
    kept = output if arrow else [c for c in letters if letters.count(c) == 1]
    return math.prod(n for c, n in sizes.items() if c not in kept)


def _check(got, subscripts, host, **kw):
    expected = np.einsum(subscripts, *host, **kw)
    assert isinstance(got, ga.GpuArray)
    assert got.shape == expected.shape and got.dtype == expected.dtype, \
        (got.shape, got.dtype, expected.shape, expected.dtype)
    value = got.get()
    if expected.dtype.kind in "biu":
        np.testing.assert_array_equal(value, expected)
    else:
        eps = np.finfo(expected.dtype).eps
        k = max(_summed(subscripts, host), 1)
        np.testing.assert_allclose(value, expected, rtol=8 * eps * k, atol=8 * eps * k)


def _both(ctx, shapes, dtype, seed=0):
    host = [_data(s, dtype, seed + i) for i, s in enumerate(shapes)]
    return host, [ga.asarray(h, context=ctx) for h in host]


@pytest.mark.parametrize(("subscripts", "shapes"), CASES, ids=[c[0] for c in CASES])
def test_cases_float64(ctx, subscripts, shapes):
    host, dev = _both(ctx, shapes, np.float64)
    _check(ga.einsum(subscripts, *dev), subscripts, host)


@pytest.mark.parametrize("dtype", [np.float32, np.int32, np.int8])
@pytest.mark.parametrize(("subscripts", "shapes"), [
    ("ij,jk->ik", [(5, 6), (6, 7)]), ("bij,bjk->bik", [(3, 5, 6), (3, 6, 7)]),
    ("ii", [(5, 5)]), ("ij->j", [(5, 6)]), ("i,j->ij", [(5,), (6,)]),
    ("ijk,jkl->il", [(3, 4, 5), (4, 5, 6)])], ids=lambda x: x if isinstance(x, str) else "")
def test_dtypes(ctx, dtype, subscripts, shapes):
    host, dev = _both(ctx, shapes, dtype)
    _check(ga.einsum(subscripts, *dev), subscripts, host)  # int8 stays int8, as numpy


def test_bool_is_and_or(ctx):
    # 300 true products: a count would wrap in 8 bits, numpy's or does not
    host, dev = _both(ctx, [(3, 300), (300, 4)], np.bool_)
    host[0][:] = True
    dev[0] = ga.asarray(host[0], context=ctx)
    _check(ga.einsum("ij,jk->ik", *dev), "ij,jk->ik", host)
    _check(ga.einsum("ij->i", dev[0]), "ij->i", host[:1])


def test_mixed_dtypes_and_host_operands(ctx):
    a8, b64 = _data((5, 6), np.int8, 1), _data((6, 7), np.float64, 2)
    _check(ga.einsum("ij,jk", ga.asarray(a8, context=ctx), b64), "ij,jk", [a8, b64])
    v = _data(6, np.int32, 3)
    # numpy converts a Python scalar with asarray: int32 * int -> int64, not a weak scalar
    _check(ga.einsum("i,->i", ga.asarray(v, context=ctx), 3), "i,->i", [v, 3])
    _check(ga.einsum("i,i", v, v), "i,i", [v, v])  # no GpuArray: the default context


def test_views_as_operands(ctx):
    big = _data((20, 30), np.float64, 4)
    x = ga.asarray(big, context=ctx)
    pairs = [(big.T[:6, :5], x.T[:6, :5]), (big[2:8, 1:25:3], x[2:8, 1:25:3]),
             (big[::-1, ::-2][:8, :6], x[::-1, ::-2][:8, :6]), (big[5:15, 4:10], x[5:15, 4:10])]
    for ha, da in pairs:
        hb, db = pairs[-1]
        _check(ga.einsum("ij,jk->ik", da, db[: da.shape[1], :]), "ij,jk->ik",
               [ha, hb[: ha.shape[1], :]])
        _check(ga.einsum("ij->j", da), "ij->j", [ha])
        _check(ga.einsum("ji,jk->ik", da, da), "ji,jk->ik", [ha, ha])
    _check(ga.einsum("ii->i", x[::-2, ::-3][:7, :7]), "ii->i", [big[::-2, ::-3][:7, :7]])
    _check(ga.einsum("ii", x[3:9, 3:9]), "ii", [big[3:9, 3:9]])


def test_one_operand_results_are_views(ctx):
    host, (x,) = _both(ctx, [(5, 5)], np.float64)
    for subscripts in ("ij->ji", "ii->i", "ij"):
        r = ga.einsum(subscripts, x)
        assert r.storage is x.storage  # a strided view: no kernel, no copy
        _check(r, subscripts, host)


@pytest.mark.parametrize(("subscripts", "shapes"), [
    ("ij,jk->ik", [(0, 6), (6, 7)]), ("ij,jk->ik", [(5, 0), (0, 7)]),
    ("bij,bjk->bik", [(0, 5, 6), (0, 6, 7)]), ("ij->j", [(0, 6)]), ("ii", [(0, 0)]),
    ("i,j->ij", [(0,), (6,)]), ("ij,jk", [(5, 1), (0, 7)])], ids=str)
def test_empty(ctx, subscripts, shapes):
    host, dev = _both(ctx, shapes, np.float64)
    _check(ga.einsum(subscripts, *dev), subscripts, host)


def test_out_dtype_casting(ctx):
    host, dev = _both(ctx, [(5, 6), (6, 7)], np.float64)
    expected = np.einsum("ij,jk->ik", *host)
    out = ga.zeros((5, 7), np.float64, context=ctx)
    assert ga.einsum("ij,jk->ik", *dev, out=out) is out
    np.testing.assert_allclose(out.get(), expected, rtol=1e-13)
    out = ga.zeros((7, 5), np.float64, context=ctx)
    assert ga.einsum("ij,jk->ik", *dev, out=out.T) is not None  # a strided out
    np.testing.assert_allclose(out.get(), expected.T, rtol=1e-13)
    out32 = ga.zeros((5, 7), np.float32, context=ctx)
    ga.einsum("ij,jk", *dev, out=out32, casting="same_kind")
    np.testing.assert_allclose(out32.get(), expected, rtol=1e-6)
    r = ga.einsum("ij,jk", *dev, dtype=np.float32, casting="unsafe")
    _check(r, "ij,jk", host, dtype=np.float32, casting="unsafe")
    x = dev[0]
    ga.einsum("ij->i", x, out=x[:, 0])  # out overlapping the operand
    np.testing.assert_allclose(x.get()[:, 0], host[0].sum(1), rtol=1e-13)


def test_sublists_and_optimize(ctx):
    host, dev = _both(ctx, [(5, 6), (6, 7), (7, 3)], np.float64)
    _check(ga.einsum(dev[0], [0, 1], dev[1], [1, 2], [0, 2]), "ij,jk->ik", host[:2])
    _check(ga.einsum(dev[0], [Ellipsis, 1], dev[1], [1, 2]), "...j,jk", host[:2])
    path = ["einsum_path", (1, 2), (0, 1)]
    for optimize in (True, "greedy", "optimal", path, path[1:]):
        _check(ga.einsum("ij,jk,kl->il", *dev, optimize=optimize), "ij,jk,kl->il", host)


def _raises(exc, words, subscripts, *operands, **kw):
    with pytest.raises(exc) as info:
        ga.einsum(subscripts, *operands, **kw)
    for w in words:
        assert w in str(info.value), (w, str(info.value))


def test_errors(ctx):
    a = ga.asarray(_data((2, 3), np.float64, 0), context=ctx)
    b = ga.asarray(_data((4, 5), np.float64, 1), context=ctx)
    sq = ga.asarray(_data((3, 3), np.float64, 2), context=ctx)
    _raises(ArgumentError, ["invalid subscript '1'", "letters"], "i1", a)
    _raises(ArgumentError, ["invalid subscript 'é'"], "ié", a)
    _raises(ArgumentError, ["invalid subscript '-'"], "ij-k", a)
    _raises(ArgumentError, ["fewer operands", "'ij,jk'"], "ij,jk", a)
    _raises(ArgumentError, ["more operands", "'ij'"], "ij", a, b)
    _raises(ArgumentError, ["no operands"], "ij")
    _raises(ArgumentError, ["output subscript 'q'", "never appeared"], "ij,jk->iq", a, b.T)
    _raises(ArgumentError, ["output subscript 'i'", "multiple times"], "ij,jk->ii", a, a.T)
    _raises(ShapeError, ["could not be broadcast", "label 'j'", "operand 1 (4)",
                         "previous terms (3)"], "ij,jk", a, b)
    _raises(ShapeError, ["collapsing index 'i'", "(2 != 3)"], "ii", a)
    _raises(ShapeError, ["could not be broadcast", "'...' dimension 0", "(3)", "(2)"],
            "...ij,...jk", ga.broadcast_to(a[:, :2], (2, 2, 2)),
            ga.broadcast_to(a[:, :2], (3, 2, 2)))
    _raises(ArgumentError, ["'.' that is not part of an ellipsis", "operand 0"], "i.j", a)
    _raises(ArgumentError, ["'.' that is not part of an ellipsis"], "...i...", a)
    _raises(ArgumentError, ["'.' that is not part of an ellipsis", "output"], "ij->i..", a)
    _raises(ArgumentError, ["no '...' ellipsis", "output"], "...i->i", sq)
    _raises(ArgumentError, ["too many subscripts", "operand 0"], "ijk", a)
    _raises(ArgumentError, ["more dimensions than subscripts", "operand 0"], "i", a)
    _raises(ArgumentError, ["only contain one '->'"], "ij->i->j", a)
    _raises(ArgumentTypeError, ["float64 to float32", "'safe'"], "ij", a, dtype=np.float32)
    _raises(ArgumentTypeError, ["float64", "float32", "'safe'"], "ij", a,
            out=ga.zeros((2, 3), np.float32, context=ctx))
    _raises(ShapeError, ["out has shape (3, 2)", "(2, 3)"], "ij", a,
            out=ga.zeros((3, 2), np.float64, context=ctx))
    _raises(ArgumentTypeError, ["out must be a GpuArray"], "ij", a, out=np.zeros((2, 3)))
    _raises(ArgumentError, ["casting must be one of", "'bogus'"], "ij", a, casting="bogus")
    _raises(ArgumentError, ["optimize", "'fast'"], "ij", a, optimize="fast")
    _raises(ArgumentError, ["invalid contraction (0, 5)"], "ij,jk", a, a.T,
            optimize=["einsum_path", (0, 5)])
    _raises(ArgumentError, ["leaves 2 operands"], "ij,jk,kl", a, a.T, a, optimize=[(0, 1)])
    _raises(ArgumentError, ["[0, 52)"], a, [0, 99])
    _raises(ArgumentTypeError, ["subscripts must be a string"], 5)


def test_context_mismatch(ctx_pair):
    c0, c1 = ctx_pair
    x0 = ga.asarray(np.ones((2, 2)), context=c0)
    x1 = ga.asarray(np.ones((2, 2)), context=c1)
    with pytest.raises(ContextMismatch):
        ga.einsum("ij,jk", x0, x1)
