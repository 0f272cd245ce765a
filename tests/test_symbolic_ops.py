"""gpuarr.symbolic's tensor ops a Theano user reaches for first: symbolic shapes, reshape by
them, alloc/zeros/arange, concatenate/stack, advanced integer and boolean indexing and its
increments, dot/tensordot/matmul/batched_dot above 2-d, RandomStreams, pp and Print, the
`tensor` module, shared's dtypes. numpy is the oracle; gradients are checked against
central finite differences (`check_grads`), on the device and, where the path differs, on
the host (flag device=cpu).

Few compiled functions, small float64 arrays (float32 where the device has no fp64), so
that the kernels are few and shared.
"""

import numpy as np
import pytest
from conftest import USABLE
from symbolic_helpers import numeric_grad, on, ops

import gpuarr.symbolic as T
from gpuarr import config
from gpuarr.errors import ArgumentError, ArgumentTypeError, IndexOutOfRange, UnsupportedError
from gpuarr.random import Generator, Philox

DT = "float64" if USABLE[0].fp64 else "float32"
H = 1e-6 if DT == "float64" else 1e-2
RTOL, ATOL = (1e-5, 1e-7) if DT == "float64" else (2e-2, 2e-3)
RNG = np.random.default_rng(29)


def compiled(where, inputs, outputs):
    """function(inputs, outputs) for the device (the default) or the host (device=cpu)."""
    with on(where):
        return T.function(inputs, outputs)


WHERE = pytest.mark.parametrize("where", ["device", "host"])


def data(*shape, low=-1.0, high=1.0):
    return RNG.uniform(low, high, shape).astype(DT)


def check_grads(cost, inputs, values, n_wrt=None):
    """T.grad of the scalar `cost` against finite differences, for the first n_wrt inputs
    (default all)."""
    wrt = inputs[:n_wrt]
    f = T.function(inputs, [cost, *T.grad(cost, wrt)])
    out = f(*values)
    for k in range(len(wrt)):
        np.testing.assert_allclose(out[1 + k], numeric_grad(f, values, k, H), rtol=RTOL,
                                   atol=ATOL, err_msg=f"gradient of input {k}")
    return out[0]


@pytest.fixture(scope="module", autouse=True)
def device(ctx):
    return ctx


# ---------------------------------------------------------------- symbolic shapes

@WHERE
def test_shape_values_reshape_alloc_arange(where):
    x, v, n = T.matrix("x", dtype=DT), T.vector("v", dtype=DT), T.lscalar("n")
    outs = [x.shape, x.shape[0] * 2, x.shape[-1], x.shape[1:], x.size,
            x.reshape((x.shape[1], -1)), x.reshape((n, -1)), v.reshape(x.shape),
            T.reshape(v, T.stack([x.shape[1], x.shape[0]]), ndim=2),
            T.zeros((x.shape[0], 2), dtype=DT), T.ones(x.shape, dtype="int32"),
            T.alloc(v[:3], 2, x.shape[1]), T.arange(x.shape[0]), T.arange(1.0, n, 0.5),
            x.flatten()]
    f = compiled(where, [x, v, n], outs)
    xv, vv = data(2, 3), data(6)
    got = f(xv, vv, 3)
    want = [np.array([2, 3]), 4, 3, np.array([3]), 6, xv.reshape(3, -1), xv.reshape(3, -1),
            vv.reshape(2, 3), vv.reshape(3, 2), np.zeros((2, 2)), np.ones((2, 3), "int32"),
            np.broadcast_to(vv[:3], (2, 3)), np.arange(2), np.arange(1.0, 3, 0.5),
            xv.ravel()]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"output {k}")
    assert got[0].dtype == np.int64 and got[10].dtype == np.int32
    names = ops(f)
    # sizes are host values read from shapes: never a transfer of a size
    assert "Shape_i" in names
    assert ("GpuReshape" in names and "GpuARange" in names) == (where == "device")
    assert not any(n.op.__class__.__name__ == "GpuFromHost" and n.inputs[0].ndim == 0
                   for n in f.maker.fgraph.toposort())
    assert x.shape[0].ndim == 0 and x.shape[0].dtype == np.int64 and x.shape.ndim == 1
    rows, cols = x.shape  # a shape's length is known
    assert T.pp(rows) == "x.shape[0]" and T.pp(cols) == "x.shape[1]"
    # a dimension the type says is 1 is the constant 1
    assert isinstance(T.row().shape[0], T.Constant)


def test_reshape_by_shape_has_a_gradient():
    x, y = T.matrix("x", dtype=DT), T.matrix("y", dtype=DT)
    cost = (T.reshape(x, y.shape[::-1]) * y.T).sum() + (x.reshape((-1,)) ** 2).sum()
    check_grads(cost, [x, y], [data(2, 3), data(3, 2)], n_wrt=1)


def test_shape_errors():
    x = T.matrix("x")
    with pytest.raises(IndexOutOfRange, match="out of bounds"):
        x.shape[2]
    with pytest.raises(ArgumentError, match="one unknown dimension"):
        x.reshape((-1, -1))
    with pytest.raises(ArgumentError, match="pass ndim"):
        x.reshape(T.lvector("s"))
    with pytest.raises(ArgumentTypeError, match="integer scalars"):
        x.reshape((x.shape[0], T.scalar("f")))


# ---------------------------------------------------------------- concatenate, stack

@WHERE
def test_concatenate_and_stack_values_and_gradients(where):
    a, b, s = T.matrix("a", dtype=DT), T.matrix("b", dtype=DT), T.scalar("s", dtype=DT)
    av, bv = data(2, 3), data(2, 2)
    joined = T.concatenate([a, b, a], axis=1)
    stacked = T.stack([a, a * 2], axis=1)
    scalars = T.stack(s, s * 3, a[0, 0])
    f = compiled(where, [a, b, s], [joined, stacked, scalars, T.join(0, a, a)])
    got = f(av, bv, 2.0)
    np.testing.assert_array_equal(got[0], np.concatenate([av, bv, av], axis=1))
    np.testing.assert_array_equal(got[1], np.stack([av, av * 2], axis=1))
    np.testing.assert_array_equal(got[2], [2.0, 6.0, av[0, 0]])
    np.testing.assert_array_equal(got[3], np.concatenate([av, av]))
    assert ("GpuJoin" in ops(f)) == (where == "device")
    if where == "host":
        return
    w = data(2, 8)
    cost = (joined * w).sum() + (stacked ** 2).sum() + (scalars * scalars).sum()
    check_grads(cost, [a, b, s], [av, bv, np.asarray(0.5, DT)])
    with pytest.raises(ArgumentError, match="same number of dimensions"):
        T.concatenate([a, T.vector()])


# ---------------------------------------------------------------- advanced indexing

def test_advanced_indexing_values_as_numpy():
    x, i, m = T.tensor3("x", dtype=DT), T.lvector("i"), T.lmatrix("m")
    xv = data(3, 4, 5)
    iv, mv = np.array([2, 0, 2, -1]), np.array([[0, 1], [2, 2]])
    keys = [(i,), (slice(None), i), (i, slice(1, 3), 1), (slice(None), 0, i),
            (i, slice(None), i[::-1]), (m, i[:2]), (Ellipsis, i), (slice(None), None, m),
            ([0, 2],), (1, [3, 1, 3])]
    host_keys = [(iv,), (slice(None), iv), (iv, slice(1, 3), 1), (slice(None), 0, iv),
                 (iv, slice(None), iv[::-1]), (mv, iv[:2]), (Ellipsis, iv),
                 (slice(None), None, mv), ([0, 2],), (1, [3, 1, 3])]
    outs = [x[k] for k in keys] + [x[x > 0.5], x[0][x[0] < 0], x[:, x[0, :, 0] > 0]]
    f = T.function([x, i, m], outs)
    got = f(xv, iv, mv)
    want = [xv[k] for k in host_keys] + [xv[xv > 0.5], xv[0][xv[0] < 0], xv[:, xv[0, :, 0] > 0]]
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_array_equal(g, w, err_msg=f"key {k}")
    # the types' dimensions follow numpy's layout rules
    assert [o.ndim for o in outs] == [w.ndim for w in want]
    assert outs[7].broadcastable == (False, True, False, False, False)
    assert "GpuAdvancedSubtensor" in ops(f)


def test_negative_log_likelihood_idiom_and_its_gradient():
    p, y = T.matrix("p", dtype=DT), T.lvector("y")
    nll = -T.mean(T.log(p)[T.arange(y.shape[0]), y])
    pv, yv = data(5, 4, low=0.1, high=1.0), np.array([0, 3, 1, 1, 2])
    f = T.function([p, y], [nll, T.grad(nll, p)])
    cost, grad = f(pv, yv)
    np.testing.assert_allclose(cost, -np.mean(np.log(pv)[np.arange(5), yv]), rtol=1e-12)
    want = np.zeros_like(pv)
    want[np.arange(5), yv] = -1 / (5 * pv[np.arange(5), yv])
    np.testing.assert_allclose(grad, want, rtol=1e-12)
    # the rows are an arange: the increment needs no accumulation of repeats
    inc = [n.op for n in f.maker.fgraph.toposort() if "AdvancedIncSubtensor" in str(n.op)]
    assert len(inc) == 1 and inc[0].unique is not None and "inc" in str(inc[0])


@WHERE
def test_advanced_gradients_accumulate_repeats(where):
    x, i = T.matrix("x", dtype=DT), T.lvector("i")
    xv, iv = data(4, 3), np.array([1, 3, -3, 1, 0])  # -3 is row 1 too
    w = data(5, 3)
    cost = (((x[i] * w) ** 2).sum() + (x[x > 0] ** 3).sum() + (x[:, [2, 0, 2]] * x[i[:4]]).sum()
            + (x[i.reshape((5, 1))] * 0.5).sum())
    with on(where):
        g = T.grad(cost, x)
        f = T.function([x, i], [cost, g])
        assert ("GpuAdvancedIncSubtensor" in ops(f)) == (where == "device")
        got = f(xv, iv)[1]
        fi = T.function([x, i], [cost, g])
    rows = xv[iv] * w
    want = np.zeros_like(xv)
    np.add.at(want, iv, 2 * rows * w)
    want += np.where(xv > 0, 3 * xv ** 2, 0)
    cols, sel = xv[:, [2, 0, 2]], xv[iv[:4]]
    np.add.at(want, (slice(None), [2, 0, 2]), sel)
    np.add.at(want, iv[:4], cols)
    np.add.at(want, iv, 0.5)
    np.testing.assert_allclose(got, want, rtol=1e-10 if DT == "float64" else 1e-5)
    np.testing.assert_allclose(got, numeric_grad(fi, [xv, iv], 0, H), rtol=RTOL, atol=ATOL)


def test_inc_and_set_subtensor_with_index_arrays():
    x, y, i = T.matrix("x", dtype=DT), T.vector("y", dtype=DT), T.lvector("i")
    xv, yv, iv = data(4, 3), data(3), np.array([2, 0, 2])
    # an arange shorter than the other index (broadcast) does repeat positions
    f = T.function([x, y, i], [T.inc_subtensor(x[i], y), T.set_subtensor(x[i, 1], 0.0),
                               T.inc_subtensor(x[x > 0], 1.0), T.set_subtensor(x[:, [0]], y[1]),
                               T.inc_subtensor(x[T.arange(1), i], y)])
    got = f(xv, yv, iv)
    want = [xv.copy() for _ in range(5)]
    np.add.at(want[0], iv, yv)
    want[1][iv, 1] = 0.0
    want[2][xv > 0] += 1.0
    want[3][:, [0]] = yv[1]
    np.add.at(want[4], (np.arange(1), iv), yv)
    for k, (g, w) in enumerate(zip(got, want)):
        np.testing.assert_allclose(g, w, rtol=1e-12, err_msg=f"output {k}")
    cost = (T.inc_subtensor(x[i], y) ** 2).sum() + (T.set_subtensor(x[[1, 3]], y) ** 3).sum()
    check_grads(cost, [x, y, i], [xv, yv, iv], n_wrt=2)


def test_index_errors():
    x = T.matrix("x")
    with pytest.raises(IndexOutOfRange, match="not valid"):
        x[T.vector("f")]
    with pytest.raises(IndexOutOfRange, match="too many indices"):
        x[T.lvector(), 0, 1]
    with pytest.raises(UnsupportedError, match="Python bool"):
        x[True]


# ---------------------------------------------------------------- products above 2-d

@WHERE
def test_dot_tensordot_matmul_batched_dot_values(where):
    a, b, m, v = (T.tensor3("a", dtype=DT), T.tensor3("b", dtype=DT), T.matrix("m", dtype=DT),
                  T.vector("v", dtype=DT))
    t4 = T.tensor4("t4", dtype=DT)
    av, bv, mv, vv, t4v = data(2, 3, 4), data(2, 4, 5), data(4, 3), data(4), data(2, 3, 2, 4)
    outs = [T.dot(a, m), T.dot(m.T, b), T.tensordot(a, b, [[2], [1]]), T.tensordot(a, mv, 1),
            T.tensordot(a, b, axes=([0, 2], [0, 1])), a @ b, a @ m, v @ b, a @ v,
            T.batched_dot(a, b), T.batched_dot(a[:, :, 0], a[:, :, 1]),
            T.batched_dot(a, b[:, :, 0]), T.batched_dot(t4, b), T.dot(a, v)]
    f = compiled(where, [a, b, m, v, t4], outs)
    want = [np.dot(av, mv), np.dot(mv.T, bv), np.tensordot(av, bv, [[2], [1]]),
            np.tensordot(av, mv, 1), np.tensordot(av, bv, ([0, 2], [0, 1])), av @ bv, av @ mv,
            vv @ bv, av @ vv, av @ bv, (av[:, :, 0] * av[:, :, 1]).sum(1),
            np.einsum("bij,bj->bi", av, bv[:, :, 0]), np.einsum("bijk,bkl->bijl", t4v, bv),
            np.dot(av, vv)]
    for k, (g, w) in enumerate(zip(f(av, bv, mv, vv, t4v), want)):
        np.testing.assert_allclose(g, w, rtol=1e-10 if DT == "float64" else 1e-4,
                                   err_msg=f"output {k}")
    assert ({"GpuTensorDot", "GpuMatMul"} <= set(ops(f))) == (where == "device")
    assert [o.ndim for o in outs] == [w.ndim for w in want]


def test_products_above_2d_have_gradients():
    a, b, m = T.tensor3("a", dtype=DT), T.tensor3("b", dtype=DT), T.matrix("m", dtype=DT)
    cost = ((T.tensordot(a, b, [[0, 2], [0, 1]]) ** 2).sum() + (T.dot(a, m) ** 2).sum()
            + T.batched_dot(a, b).sum() + (a @ m).sum() + (T.tensordot(b, a, [[1], [2]])).sum())
    check_grads(cost, [a, b, m], [data(2, 3, 2), data(2, 2, 3), data(2, 2)])


# ---------------------------------------------------------------- random streams

def _reference(seed, count):
    return [Generator(p) for p in Philox(seed).spawn(count)]


@WHERE
def test_random_streams_are_gpuarr_random_streams(where):
    srng = T.shared_randomstreams.RandomStreams(seed=42)
    n = T.lscalar("n")
    draws = [srng.uniform((2, 3)), srng.normal((n,), avg=1.0, std=2.0),
             srng.binomial((4,), p=0.3), srng.choice((6,), a=5),
             srng.uniform((5,), low=-1, high=1, dtype="float32"),
             srng.random_integers((3,), low=2, high=4)]
    with on(where):
        f = T.function([n], draws, updates=srng.updates())
    assert ("GpuRandomDraw" in ops(f)) == (where == "device")
    gens = _reference(42, len(draws))
    for _ in range(2):  # the second call continues the streams
        got = f(7)
        want = [gens[0].random((2, 3)).get(), 1.0 + 2.0 * gens[1].standard_normal(7).get(),
                gens[2].random(4).get() < 0.3, gens[3].integers(0, 5, 6).get(),
                np.float32(-1) + np.float32(2) * gens[4].random(5, np.float32).get(),
                gens[5].integers(2, 5, 3).get()]
        for k in (0, 2, 3, 4, 5):  # uniforms and integers: the same bits on every path
            np.testing.assert_array_equal(got[k], want[k], err_msg=f"draw {k}")
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        assert got[0].dtype == config.floatX and got[2].dtype == np.int64
    assert all(s.default_update is new for s, new in srng.updates())
    assert draws[0].rng is srng.updates()[0][0] and draws[0].update == srng.updates()[0]


def test_random_streams_advance_by_default_updates():
    srng = T.shared_randomstreams.RandomStreams(seed=5)
    u = srng.uniform((8,))
    f = T.function([], u)  # no updates=: the state's default update advances it
    first, second = f(), f()
    assert not np.array_equal(first, second)
    srng.seed(5)
    np.testing.assert_array_equal(f(), first)
    frozen = T.function([], u, no_default_updates=True)
    np.testing.assert_array_equal(frozen(), frozen())
    listed = T.function([], u, no_default_updates=[u.rng])
    np.testing.assert_array_equal(listed(), listed())
    # an explicit update of the state wins over its default one
    reset = T.function([], u, updates=[(u.rng, u.rng)])
    np.testing.assert_array_equal(reset(), reset())


def test_random_streams_reseed_and_independence():
    srng = T.shared_randomstreams.RandomStreams(seed=3)
    u, v = srng.uniform((50,)), srng.uniform((50,))
    f = T.function([], [u, v], updates=srng.updates())
    first = f()
    assert not np.array_equal(first[0], first[1])  # streams of their own
    assert not np.array_equal(f()[0], first[0])  # the state advanced
    srng.seed(3)
    again = f()
    np.testing.assert_array_equal(again[0], first[0])
    np.testing.assert_array_equal(again[1], first[1])
    # a size given as another variable's shape
    x = T.matrix("x", dtype=DT)
    mask = srng.binomial(size=x.shape, p=0.5, dtype=DT)
    g = T.function([x], x * mask, updates=srng.updates())
    out = g(np.ones((3, 4), DT))
    assert out.shape == (3, 4) and set(np.unique(out)) <= {0.0, 1.0}
    with pytest.raises(UnsupportedError, match="replace=False"):
        srng.choice((2,), a=5, replace=False)


# ---------------------------------------------------------------- printing

def test_pp_and_print(capsys):
    x, w, i = T.matrix("x", dtype=DT), T.vector("w", dtype=DT), T.lscalar("i")
    assert T.pp(T.dot(x, w) * 2 + 1) == "((dot(x, w) * 2) + 1)"
    assert T.pp(T.exp(-x)[i, 1:].sum(axis=0)) == "sum(exp(-x)[i, 1:], axis=0)"
    assert T.pp(x.shape[0]) == "x.shape[0]" and T.pp(T.nnet.sigmoid(x).T) == "sigmoid(x).T"
    shown = T.printing.Print("x is")(x)
    y = shown * 2
    f = T.function([x], [y, T.grad(y.sum(), x)])
    xv = data(2, 2)
    got = f(xv)
    assert capsys.readouterr().out.count(f"x is __str__ = {xv}") == 1
    np.testing.assert_array_equal(got[0], xv * 2)
    np.testing.assert_array_equal(got[1], np.full((2, 2), 2.0))
    T.function([x], T.printing.Print("shape", attrs=("shape",))(x))(xv)
    assert capsys.readouterr().out == "shape shape = (2, 2)\n"
    assert T.pp(shown) == "Print{x is}(x)"


# ---------------------------------------------------------------- namespaces, shared

def test_tensor_module_is_the_namespace_and_the_constructor():
    import gpuarr.symbolic.tensor as TT
    from gpuarr.symbolic.tensor import dot, nnet

    assert TT is T.tensor and dot is T.dot and nnet is T.nnet and TT.matrix is T.matrix
    assert TT.shared_randomstreams.RandomStreams is T.random.RandomStreams
    v = T.tensor(DT, (False, True), name="v")
    assert v.type == T.TensorType(DT, (False, True)) and v.name == "v"
    assert TT("int32", (False,)).dtype == np.int32
    assert "dot" in dir(TT)
    with pytest.raises(AttributeError):
        _ = TT.no_such_name


def test_shared_python_scalars_take_numpy_dtypes():
    assert T.shared(0.0).dtype == np.float64 and T.shared(0).dtype == np.int64
    assert T.shared([1.5, 2.0]).dtype == np.float64
    assert T.shared(np.float32(1)).dtype == np.float32
    acc = T.shared(0.0, target="cpu")
    f = T.function([], [], updates=[(acc, acc + np.float64(0.25))])
    f()
    f()
    assert acc.get_value() == 0.5
