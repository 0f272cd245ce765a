"""gpuarr.symbolic's compiled functions: the schedule (order, prepared elementwise launches,
in-place updates of shared variables), the graph rewrites it runs (fusion of producer
groups, scalars read instead of filled arrays, products on the fast layout, repeated work
computed once), outputs that must not alias, `In`, and the modes, DebugMode included.
numpy is the oracle.

Kernels are few (PoCL builds each in ~1.4 s cold): float32 vectors and small matrices, and
graphs shared through module fixtures.
"""

import numpy as np
import pytest

import gpuarr as ga
import gpuarr.symbolic as T
from gpuarr.errors import ArgumentError, ArgumentTypeError
from gpuarr.symbolic import fusion
from gpuarr.symbolic.graph import Apply, Op, TensorType, op_pair
from gpuarr.symbolic.mode import DebugModeError

DT = "float32"
RNG = np.random.default_rng(29)
N, F = 12, 5
XM = RNG.standard_normal((N, F)).astype(DT)
YV = RNG.integers(0, 2, N).astype(DT)
W0 = (RNG.standard_normal(F) * 0.1).astype(DT)
V = RNG.uniform(0.5, 1.5, 7).astype(DT)


@pytest.fixture(scope="module")
def dctx(ctx):
    assert ga.get_context() is ctx
    return ctx


def _logreg(mode=None):
    """Theano's logistic regression step on (N, F) data: (function, w, b)."""
    x, y = T.fmatrix("x"), T.fvector("y")
    w = T.shared(W0.copy(), name="w")
    b = T.shared(np.zeros((), DT), name="b")
    p = 1 / (1 + T.exp(-T.dot(x, w) - b))
    xent = -y * T.log(p) - (1 - y) * T.log(1 - p)
    cost = xent.mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    f = T.function([x, y], [p > 0.5, xent], updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)],
                   mode=mode, name="train")
    return f, w, b


def _numpy_logreg(steps):
    w, b, found = W0.astype(np.float64), 0.0, []
    for _ in range(steps):
        p = 1 / (1 + np.exp(-(XM @ w) - b))
        found.append((p > 0.5, -YV * np.log(p) - (1 - YV) * np.log(1 - p)))
        g = (p - YV) / N
        w, b = w - 0.1 * (XM.T @ g + 0.02 * w), b - 0.1 * g.sum()
    return w, b, found


def _check_logreg(f, w, b, steps):
    """`steps` calls of the step f (from W0 and b = 0) against numpy: the outputs of each,
    then w and b."""
    wr, br, found = _numpy_logreg(steps)
    for pred, xent in found:
        got_pred, got_xent = f(XM, YV)
        np.testing.assert_array_equal(got_pred, pred)
        np.testing.assert_allclose(got_xent, xent, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(w.get_value(), wr, rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(b.get_value(), br, rtol=1e-5, atol=1e-6)


@pytest.fixture(scope="module")
def logreg(dctx):
    return _logreg()


def test_logreg_steps_match_numpy_and_update_in_place(logreg):
    f, w, b = logreg
    w.set_value(W0)
    b.set_value(np.zeros((), DT))
    assert set(f.schedule.inplace.values()) == {w, b}
    before = w.get_value(borrow=True, return_internal_type=True)
    _check_logreg(f, w, b, 3)
    # the new values went into the shared storage
    assert w.get_value(borrow=True, return_internal_type=True) is before


def test_logreg_graph_rewrites(logreg):
    """One forward kernel for prediction, xent and the gradient; no filled arrays; the
    transposed GEMV as a row product; transfers in first, reads back last."""
    f = logreg[0]
    nodes = f.maker.fgraph.toposort()
    names = [type(n.op).__name__ for n in nodes]
    assert names.count("GpuBroadcastLike") == 0 and names.count("GpuGemv") == 1
    assert not [n for n in nodes if isinstance(n.op, T.GpuGemv)
                and isinstance(n.inputs[0].owner.op, T.GpuDimShuffle)]
    kernels = [n for n in nodes if isinstance(n.op, T.GpuElemwise)]
    assert len(kernels) == 3 and sorted(len(n.outputs) for n in kernels) == [1, 1, 3]
    for n in kernels:  # repeated work computed once
        assert len(set(n.op.program.steps)) == len(n.op.program.steps)
    kinds = [type(n.op).__name__ for n in f.schedule.order]
    assert kinds[:2] == ["GpuFromHost"] * 2 and kinds[-2:] == ["HostFromGpu"] * 2


def test_chains_fuse_through_dimshuffles(dctx):
    v, m = T.fvector("v"), T.fmatrix("m")
    a, b = XM[:F, :], W0
    f = T.function([v, m], [T.exp(v).dimshuffle(0, "x") * m + 1, (T.exp(m) * v).T - v])
    kernels = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, T.GpuElemwise)]
    assert len(kernels) == 2  # one per chain: the dimshuffles moved to their inputs
    got = f(b, a)
    np.testing.assert_allclose(got[0], np.exp(b)[:, None] * a + 1, rtol=1e-6)
    np.testing.assert_allclose(got[1], (np.exp(a) * b).T - b, rtol=1e-6)


def test_inplace_only_where_safe(dctx):
    w = T.shared(V.copy(), name="w")
    # the kernel reads w through a view: not in place, and right
    f = T.function([], [], updates=[(w, w[::-1] + 1)])
    assert not f.schedule.inplace
    f()
    np.testing.assert_allclose(w.get_value(), V[::-1] + 1)
    # a product reads both the old and the new value: not in place
    w.set_value(V)
    new = w * 2
    g = T.function([], T.dot(new, w), updates=[(w, new)])
    assert not g.schedule.inplace
    np.testing.assert_allclose(g(), (V * 2) @ V, rtol=1e-5)
    np.testing.assert_allclose(w.get_value(), V * 2)
    # an output read from the old value and the update in one kernel: in place, both right
    w.set_value(V)
    h = T.function([], (w * 3).transfer(None), updates=[(w, w + 1)])
    assert h.schedule.inplace
    out = h()
    np.testing.assert_allclose(out.get(), V * 3)
    np.testing.assert_allclose(w.get_value(), V + 1)
    # two shared variables holding one array: the call declines to write in place
    a = T.shared(ga.asarray(V), name="a")
    c = T.shared(a.get_value(borrow=True, return_internal_type=True), name="c", borrow=True)
    k = T.function([], T.dot(c, c), updates=[(a, a + 1)])
    np.testing.assert_allclose(k(), V @ V, rtol=1e-5)
    np.testing.assert_allclose(a.get_value(), V + 1)
    np.testing.assert_allclose(c.get_value(), V)


def test_the_same_new_value_for_two_shared_variables(dctx):
    a, c = T.shared(V.copy(), name="a"), T.shared(V.copy(), name="c")
    new = a + 1
    f = T.function([], [], updates=[(a, new), (c, new)])
    f()
    f()
    np.testing.assert_allclose(a.get_value(), V + 2)
    np.testing.assert_allclose(c.get_value(), V + 2)
    assert not (a.get_value(borrow=True, return_internal_type=True)._may_share(
        c.get_value(borrow=True, return_internal_type=True)))


def test_outputs_never_alias(dctx):
    x = T.fvector("x")
    w = T.shared(V.copy(), name="w")
    y = x * 2
    f = T.function([x], [y, y, x, w, y.transfer(None), y.transfer(None)])
    a, b, c, d, e, g = f(V)
    assert a is not b and e is not g and not e._may_share(g)
    np.testing.assert_allclose(a, V * 2)
    np.testing.assert_allclose(b, V * 2)
    a[:] = 0
    np.testing.assert_allclose(b, V * 2)
    assert c is not V and np.array_equal(c, V)
    d[:] = 0
    np.testing.assert_allclose(w.get_value(), V)
    np.testing.assert_allclose(g.get(), V * 2)
    # a borrowed input may come back as it is
    borrowed = T.function([T.In(x, borrow=True)], x)
    assert borrowed(V) is V


def test_in_defaults_and_names(dctx):
    x, s = T.fvector("x"), T.fscalar("s")
    f = T.function([x, T.In(s, value=2.0, name="scale")], x * s)
    np.testing.assert_allclose(f(V), V * 2)
    np.testing.assert_allclose(f(V, 3.0), V * 3)
    np.testing.assert_allclose(f(V, scale=4.0), V * 4)
    np.testing.assert_allclose(f(x=V), V * 2)
    np.testing.assert_allclose(f(scale=0.5, x=V), V * 0.5)
    with pytest.raises(ArgumentError, match=r"input 0 \(x\) has no value and no default"):
        f(scale=1.0)
    with pytest.raises(ArgumentError, match="no input named 's'"):
        f(V, s=1.0)
    with pytest.raises(ArgumentError, match="twice"):
        f(V, x=V)
    with pytest.raises(ArgumentError, match="takes 2 input"):
        f(V, 1.0, 2.0)
    with pytest.raises(ArgumentTypeError, match="In\\(\\) takes a symbolic variable"):
        T.In(np.ones(3))
    # the default is filtered when compiling, as an argument would be
    with pytest.raises(ArgumentTypeError, match="input 1"):
        T.function([x, T.In(s, value=np.ones(3))], x * s)
    # two inputs of one name: neither passes by that name
    u, v = T.fvector("v"), T.fvector("v")
    g = T.function([u, v], u - v)
    np.testing.assert_allclose(g(V, V * 2), -V)
    with pytest.raises(ArgumentError, match="several inputs have that name"):
        g(V, v=V)


def test_modes(dctx, logreg):
    x = T.fvector("x")
    expr = T.exp(x) * 2 + x
    fast = T.function([x], expr)
    slow = T.function([x], expr, mode="FAST_COMPILE")
    assert [len(n.op.program.steps) for n in slow.maker.fgraph.toposort()
            if isinstance(n.op, T.GpuElemwise)] == [1, 1, 1]
    np.testing.assert_allclose(slow(V), fast(V), rtol=1e-6)
    np.testing.assert_allclose(slow(V), np.exp(V) * 2 + V, rtol=1e-6)
    assert not slow.schedule.inplace
    assert T.function([x], expr, mode=T.Mode("fast_compile")).maker.mode.name == "FAST_COMPILE"
    with pytest.raises(ArgumentError, match="unknown mode 'FAST'"):
        T.function([x], expr, mode="FAST")
    with pytest.raises(ArgumentError, match="optimizer"):
        T.Mode("fastest")
    # the logistic regression step under DebugMode: every node agrees with numpy
    f, w, b = _logreg("DebugMode")
    assert f.maker.mode.name == "DebugMode" and not f.schedule.inplace
    _check_logreg(f, w, b, 2)


class _WrongOnDevice(Op):
    """x on the host; on a device x + 1 (`bug='value'`) or x, having added 1 to its input
    and taken it off again in a copy (`bug='input'`): ops DebugMode must catch."""

    __props__ = ("bug",)

    def __init__(self, bug):
        self.bug = bug

    def make_node(self, x):
        x = T.as_variable(x)
        return Apply(self, [x], [TensorType(x.dtype, x.broadcastable, self.context_name)])

    def make_fn(self, node, xp, ctx):
        if ctx is None:
            return lambda v: np.array(v)
        if self.bug == "value":
            return lambda v: v + 1

        def changes_input(v):
            v += 1
            return v - 1
        return changes_input


Wrong, GpuWrong = op_pair(_WrongOnDevice, "Wrong")


def test_debugmode_names_the_wrong_node(dctx):
    x = T.fvector("x")
    y = Wrong("value")(T.exp(x))
    np.testing.assert_allclose(T.function([x], y)(V), np.exp(V) + 1, rtol=1e-6)  # unnoticed
    f = T.function([x], y * 2, mode="DebugMode", name="bad")
    with pytest.raises(DebugModeError, match=r"function bad, node \d+ \(GpuWrong\{value\}.*"
                                             r"output 0 has 7 of 7 element\(s\) differ"):
        f(V)
    g = T.function([x], Wrong("input")(T.exp(x)) * 2, mode=T.DebugMode())
    with pytest.raises(DebugModeError, match=r"GpuWrong\{input\}.*changed its input 0"):
        g(V)
    # tolerances are the mode's
    loose = T.function([x], y, mode=T.DebugMode(atol=2.0))
    np.testing.assert_allclose(loose(V), np.exp(V) + 1, rtol=1e-6)


def test_sum_of_an_elementwise_program_is_one_kernel(dctx, monkeypatch):
    monkeypatch.setattr(fusion, "fuses_sums", lambda ctx: True)  # (GPUs only by default)
    x, y = T.fmatrix("x"), T.fmatrix("y")
    s = T.fscalar("s")
    a, b = XM[:, :4], XM[:, 1:] * 0.5
    f = T.function([x, y, s], [(T.exp(x) * y * s).sum(axis=1), (x * s - y).sum()])
    nodes = f.maker.fgraph.toposort()
    assert [type(n.op).__name__ for n in nodes].count("GpuElemwiseSum") == 2
    assert not [n for n in nodes if isinstance(n.op, (T.GpuElemwise, T.GpuCAReduce))]
    rows, total = f(a, b, 3.0)
    np.testing.assert_allclose(rows, (np.exp(a) * b * 3).sum(axis=1), rtol=1e-5)
    # a sum that cancels: its float32 error is relative to the sum of magnitudes
    terms = a.astype(np.float64) * 3 - b
    np.testing.assert_allclose(total, terms.sum(), rtol=1e-5, atol=1e-6 * np.abs(terms).sum())
    # the summed values also an output: the kernel stays, the sum reads it
    e = T.exp(x) * y
    g = T.function([x, y], [e, e.sum(axis=0)])
    assert "GpuElemwiseSum" not in [type(n.op).__name__ for n in g.maker.fgraph.toposort()]
    np.testing.assert_allclose(g(a, b)[1], (np.exp(a) * b).sum(axis=0), rtol=1e-5)
