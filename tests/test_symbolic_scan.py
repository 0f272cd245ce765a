"""gpuarr.symbolic's control flow: scan (sequences, taps, fed-back and plain outputs,
shared-variable updates, n_steps, go_backwards, gradients through time, truncated) and
ifelse (lazy, differentiable), on the host (flag device=cpu: numpy) and on the device.
numpy is the oracle; the examples rnn_scan.py and power_series.py run with --check.

Kernels are few (PoCL builds each in ~1.4 s cold): device tests share one dtype and small
shapes; most cases run on the host, where the graphs are the same.
"""

import numpy as np
import pytest
from conftest import USABLE, same_platform_pair
from symbolic_helpers import central_differences, ops
from test_symbolic_examples import DEVICE, run

import gpuarr as ga
import gpuarr.symbolic as T
from gpuarr.errors import ArgumentError, ArgumentTypeError, ShapeError
from gpuarr.symbolic import inner
from gpuarr.symbolic.graph import Apply, HostOp

DT = "float64" if USABLE[0].fp64 else "float32"
RTOL, ATOL = (1e-7, 1e-9) if DT == "float64" else (1e-4, 1e-5)
RNG = np.random.default_rng(11)


def _check_place(f, where, op="Scan"):
    assert ("Gpu" + op in ops(f)) == (where == "device")
    assert (op in ops(f)) == (where == "host")


class Count(HostOp):
    """The identity, counting the values it computes (a side effect to see laziness)."""

    calls = 0

    def make_node(self, x):
        return Apply(self, [x], [x.type.clone()])

    def make_fn(self, node, xp, ctx):
        def fn(x):
            Count.calls += 1
            return x
        return fn

    def grad(self, node, grads):
        return [grads[0]]


# ---------------------------------------------------------------- a recurrent network

N_STEPS, N_IN, N_HID = 5, 3, 4
XV = RNG.normal(size=(N_STEPS, N_IN)).astype(DT)
UV = RNG.normal(size=(N_IN, N_HID)).astype(DT) * 0.7
WV = RNG.normal(size=(N_HID, N_HID)).astype(DT) * 0.5
H0 = RNG.normal(size=N_HID).astype(DT)
CV = RNG.uniform(0.5, 1.5, (N_STEPS, N_HID)).astype(DT)  # the cost's weights


def np_rnn(x, u, w, h0):
    h, out = h0, []
    for row in x:
        h = np.tanh(h @ w + row @ u)
        out.append(h)
    return np.array(out)


def np_bptt(x, u, w, h0, truncate=-1):
    """Gradients of sum(hs * CV) as Theano's scan computes them: with truncate=k only the
    last k steps are differentiated, and h0's gradient is what reaches step n - k."""
    hs = np_rnn(x, u, w, h0)
    n = len(x)
    first = 0 if truncate < 0 else max(n - truncate, 0)
    gw, gu, gx = np.zeros_like(w), np.zeros_like(u), np.zeros_like(x)
    owed = np.zeros_like(h0)
    for t in reversed(range(first, n)):
        dz = (CV[t] + owed) * (1 - hs[t] ** 2)
        prev = hs[t - 1] if t else h0
        gw += np.outer(prev, dz)
        gu += np.outer(x[t], dz)
        gx[t] = dz @ u.T
        owed = dz @ w.T
    return gw, gu, gx, owed


@pytest.fixture
def rnn(where):
    """hs, the gradients of sum(hs * C) and the compiled function, W a shared variable."""
    x, u, h0 = T.matrix("x", dtype=DT), T.matrix("u", dtype=DT), T.vector("h0", dtype=DT)
    w = T.shared(WV.copy(), name="W")
    hs, updates = T.scan(lambda row, h, u: T.tanh(T.dot(h, w) + T.dot(row, u)),
                         sequences=x, outputs_info=h0, non_sequences=u, name="rnn")
    assert updates == {}
    cost = (hs * CV).sum()
    f = T.function([x, u, h0], [hs, *T.grad(cost, [w, u, x, h0])])
    return f, where


def test_rnn_forward_and_bptt_match_numpy(rnn):
    f, where = rnn
    hs, gw, gu, gx, gh = f(XV, UV, H0)
    _check_place(f, where)
    np.testing.assert_allclose(hs, np_rnn(XV, UV, WV, H0), rtol=RTOL, atol=ATOL)
    for got, want in zip((gw, gu, gx, gh), np_bptt(XV, UV, WV, H0)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_bptt_oracle_matches_finite_differences():
    """The numpy BPTT above is right (so the scan gradient is)."""
    def cost(x=XV, u=UV, w=WV, h0=H0):
        return (np_rnn(x, u, w, h0) * CV).sum()
    gw, gu, gx, gh = np_bptt(XV, UV, WV, H0)
    for got, arg in ((gw, "w"), (gu, "u"), (gx, "x"), (gh, "h0")):
        value = {"w": WV, "u": UV, "x": XV, "h0": H0}[arg].astype(np.float64)
        want = central_differences(lambda a, arg=arg: cost(**{arg: a}), value)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("truncate", [2, 10])
def test_truncated_bptt(host, truncate):
    x, h0 = T.matrix("x", dtype=DT), T.vector("h0", dtype=DT)
    u, w = T.shared(UV.copy(), name="U"), T.shared(WV.copy(), name="W")
    hs, _ = T.scan(lambda row, h: T.tanh(T.dot(h, w) + T.dot(row, u)), sequences=x,
                   outputs_info=h0, truncate_gradient=truncate)
    f = T.function([x, h0], T.grad((hs * CV).sum(), [w, u, x, h0]))
    for got, want in zip(f(XV, H0), np_bptt(XV, UV, WV, H0, truncate)):
        np.testing.assert_allclose(got, want, rtol=RTOL, atol=ATOL)


def test_outputs_stay_on_the_device(default_ctx):
    x = T.vector("x", dtype=DT)
    w = T.shared(np.linspace(0.5, 1.5, 4).astype(DT), name="w")
    out, _ = T.scan(lambda v, acc: acc * w + v, sequences=x, outputs_info=T.zeros_like(w))
    f = T.function([x], out.transfer(None))
    got = f(np.arange(3, dtype=DT))
    assert isinstance(got, ga.GpuArray) and got.shape == (3, 4)
    wv, acc, want = w.get_value(), np.zeros(4, DT), []
    for v in range(3):
        acc = acc * wv + v
        want.append(acc)
    np.testing.assert_allclose(got.get(), want, rtol=RTOL)
    assert "HostFromGpu" not in ops(f)


def test_scan_runs_where_its_data_lives(ctx):
    """A shared variable on a second device takes the loop there (GpuScan<that device>)."""
    pair = same_platform_pair()
    if pair is None:
        pytest.skip("needs two devices of one platform")
    other = ga.get_context(pair[1].name)
    w = T.shared(np.linspace(0.5, 1.5, 4).astype(DT), target=pair[1].name, name="w1")
    x = T.vector("x", dtype=DT)
    out, _ = T.scan(lambda v, acc: acc * w + v, sequences=x, outputs_info=T.zeros_like(w))
    f = T.function([x], out.transfer(pair[1].name))
    assert f"GpuScan{{scan}}<{other.name}>" in {str(n.op) for n in f.maker.fgraph.toposort()}
    got = f(np.arange(3, dtype=DT))
    assert got.context is other
    acc, want = np.zeros(4, DT), []
    for v in range(3):
        acc = acc * w.get_value() + v
        want.append(acc)
    np.testing.assert_allclose(got.get(), want, rtol=RTOL)


# ---------------------------------------------------------------- taps, plain outputs, steps

def test_taps_fibonacci_and_its_gradient(where):
    a0 = T.vector("a0", dtype=DT)
    fib, _ = T.scan(lambda a, b: a + b, outputs_info=dict(initial=a0, taps=[-2, -1]),
                    n_steps=6)
    f = T.function([a0], [fib, T.grad(fib[-1] + fib.sum(), a0)])
    got, g = f(np.array([1.0, 2.0], DT))
    _check_place(f, where)
    np.testing.assert_allclose(got, [3, 5, 8, 13, 21, 34])
    np.testing.assert_allclose(g, [28, 45])  # 8a + 13b + (20a + 32b)


def test_sequence_taps_go_backwards_and_their_gradient(host):
    y = T.dvector("y")
    out, _ = T.scan(lambda a, b, c: a * b - c, go_backwards=True,
                    sequences=dict(input=y, taps=[-1, 0, 2]))
    f = T.function([y], [out, T.grad((out * np.arange(1.0, 4.0)).sum(), y)])
    yv = np.array([0.5, -1.0, 2.0, 1.5, 3.0, -0.5])

    def ref(v):
        r = v[::-1]
        return np.array([r[t] * r[t + 1] - r[t + 3] for t in range(3)])
    got, g = f(yv)
    np.testing.assert_allclose(got, ref(yv))
    want = central_differences(lambda v: (ref(v) * np.arange(1.0, 4.0)).sum(), yv)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_plain_outputs_several_outputs_and_return_forms(host):
    x = T.dvector("x")
    both, _ = T.scan(lambda v, acc: [v * 2, acc + v], sequences=x,
                     outputs_info=[None, np.float64(0)])
    doubled, sums = both
    one, _ = T.scan(lambda v: v * 3, sequences=[x])
    listed, _ = T.scan(lambda v: v * 3, sequences=[x], return_list=True)
    assert isinstance(one, T.Variable) and isinstance(listed, list) and len(listed) == 1
    got = T.function([x], [doubled, sums, one])(np.array([1.0, 2.0, 4.0]))
    np.testing.assert_allclose(got[0], [2, 4, 8])
    np.testing.assert_allclose(got[1], [1, 3, 7])
    np.testing.assert_allclose(got[2], [3, 6, 12])


def test_n_steps(host):
    x, k = T.dvector("x"), T.lscalar("k")
    powers, _ = T.scan(lambda p, x: p * x, outputs_info=T.ones_like(x), non_sequences=x,
                       n_steps=k)
    f = T.function([x, k], powers[-1])
    np.testing.assert_allclose(f(np.array([2.0, 3.0]), 4), [16, 81])
    firsts, _ = T.scan(lambda v: v + 1, sequences=x, n_steps=k)
    g = T.function([x, k], firsts)
    np.testing.assert_allclose(g(np.arange(5.0), 2), [1, 2])  # the first k rows
    assert g(np.arange(5.0), 0).shape == (0,)
    with pytest.raises(ShapeError, match=r"sequence 0 has 5 step\(s\), fewer than n_steps=6"):
        g(np.arange(5.0), 6)
    with pytest.raises(ArgumentError, match="n_steps must be >= 0"):
        g(np.arange(5.0), -1)


def test_nested_scan(host):
    """A scan inside a scan's step: the row-wise cumulative sums of a matrix."""
    m = T.dmatrix("m")

    def row_cumsum(row):
        sums, _ = T.scan(lambda v, acc: acc + v, sequences=row, outputs_info=np.float64(0))
        return sums
    out, _ = T.scan(row_cumsum, sequences=m)
    mv = RNG.normal(size=(3, 4))
    f = T.function([m], [out, T.grad((out ** 2).sum(), m)])
    got, g = f(mv)
    np.testing.assert_allclose(got, np.cumsum(mv, axis=1))
    want = central_differences(lambda a: (np.cumsum(a, axis=1) ** 2).sum(), mv)
    np.testing.assert_allclose(g, want, rtol=1e-6, atol=1e-8)


def test_hessian_through_scan(host):
    """Second derivatives: the gradient's own scan differentiated again."""
    x = T.dvector("x")
    hs, _ = T.scan(lambda v, h: T.tanh(h * v), sequences=x, outputs_info=np.float64(0.5))
    cost = (hs ** 2).sum()
    got = T.function([x], T.hessian(cost, x))(np.array([0.3, -0.8, 1.1]))

    def ref(v):
        h, total = 0.5, 0.0
        for a in v:
            h = np.tanh(h * a)
            total += h * h
        return total
    grad = lambda v: central_differences(ref, v, 1e-4)  # noqa: E731
    want = np.array([central_differences(lambda v, i=i: grad(v)[i],
                                         np.array([0.3, -0.8, 1.1]), 1e-4) for i in range(3)])
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-6)


# ---------------------------------------------------------------- shared variables

def test_shared_updates_inside_the_loop(where):
    count = T.shared(np.int64(0), name="count")
    total = T.shared(np.asarray(1.0, DT), name="total")
    x = T.vector("x", dtype=DT)

    def step(v):
        return v * total, {count: count + 1, total: total + v}
    out, updates = T.scan(step, sequences=x)
    assert list(updates) == [count, total]
    f = T.function([x], out, updates=updates)
    got = f(np.array([1.0, 2.0, 3.0], DT))
    np.testing.assert_allclose(got, [1 * 1, 2 * 2, 3 * 4])  # each step reads the last value
    assert count.get_value() == 3 and total.get_value() == 7
    np.testing.assert_allclose(f(np.array([1.0], DT)), [7])
    assert count.get_value() == 4 and total.get_value() == 8


def test_random_streams_draw_at_every_step(host):
    """A random stream's state (a shared variable with a default_update) read in the step
    advances at every step, and the updates carry it on: the numbers are the stream's."""
    srng = T.shared_randomstreams.RandomStreams(7)
    x = T.dvector("x")
    out, updates = T.scan(lambda v: v + srng.uniform(size=(2,)), sequences=x)
    f = T.function([x], out, updates=updates)
    ref = T.shared_randomstreams.RandomStreams(7)
    draw = T.function([], ref.uniform(size=(2,)), updates=ref.updates())
    want = [draw() for _ in range(5)]
    np.testing.assert_allclose(f(np.zeros(3)), want[:3])
    np.testing.assert_allclose(f(np.ones(2)), np.array(want[3:]) + 1)


def test_inner_graph_compiles_once_and_loop_invariants_run_once(host, monkeypatch):
    compiled = []
    real = inner.function

    def counting(*args, **kwargs):
        compiled.append(1)
        return real(*args, **kwargs)
    monkeypatch.setattr(inner, "function", counting)
    x, w = T.dvector("x"), T.dvector("w")
    Count.calls = 0
    out, _ = T.scan(lambda v, acc: acc + Count()(v) * Count()(w), sequences=x,
                    outputs_info=T.zeros_like(w))
    f = T.function([x, w], out[-1])
    assert len(compiled) == 1
    np.testing.assert_allclose(f(np.arange(10.0), np.ones(2)), [45, 45])
    f(np.arange(3.0), np.ones(2))
    assert len(compiled) == 1
    assert Count.calls == 10 + 1 + 3 + 1  # v at every step, w once per call


def test_views_of_loop_invariants_stay_in_the_step(host):
    """T.dot(v, w) reads w.T: the view is taken inside the step (where the product rewrites
    see the matrix it views), the matrix itself comes from outside."""
    x, w = T.dmatrix("x"), T.dmatrix("w")
    out, _ = T.scan(lambda v: T.dot(v, w), sequences=x)
    f = T.function([x, w], out)
    assert "DimShuffle" not in ops(f)
    xv, wv = RNG.normal(size=(3, 2)), RNG.normal(size=(2, 4))
    np.testing.assert_allclose(f(xv, wv), xv @ wv, rtol=1e-12)


# ---------------------------------------------------------------- errors

def test_scan_errors(host):
    x = T.dvector("x")
    with pytest.raises(ArgumentTypeError, match=r"output 0 of fn is .*int64.* initial value.*"
                                                r"float64.*cast"):
        T.scan(lambda v, acc: T.cast(acc + v, "int64"), sequences=x, outputs_info=x[0])
    with pytest.raises(ArgumentError, match=r"fn returned 2 output.*outputs_info has 1"):
        T.scan(lambda v: [v, v], sequences=x, outputs_info=[None])
    with pytest.raises(ArgumentError, match="n_steps is needed"):
        T.scan(lambda acc: acc * 2, outputs_info=x)
    with pytest.raises(ArgumentError, match="taps of output 0 must be negative"):
        T.scan(lambda a: a, outputs_info=dict(initial=x, taps=[0]), n_steps=2)
    w = T.shared(np.ones(2), name="w_strict")
    with pytest.raises(ArgumentError, match=r"strict=True.*w_strict"):
        T.scan(lambda v: v * w, sequences=x, strict=True)
    shrink, _ = T.scan(lambda acc: acc[1:], outputs_info=x, n_steps=2)
    with pytest.raises(ShapeError, match=r"step 0 gives output 0 the shape \(1,\).*keep"):
        T.function([x], shrink)(np.ones(2))


# ---------------------------------------------------------------- ifelse

def test_ifelse_selects_and_is_differentiable(where):
    c, a, b = T.scalar("c", dtype=DT), T.vector("a", dtype=DT), T.vector("b", dtype=DT)
    outs = T.ifelse(T.gt(c, 0), [T.exp(a) * b, a], [b * 2, a - b])
    cost = (outs[0] ** 2).sum() + (outs[1] * b).sum()
    f = T.function([c, a, b], [*outs, *T.grad(cost, [a, b])])
    _check_place(f, where, "IfElse")
    av, bv = np.array([0.5, -1.0], DT), np.array([2.0, 3.0], DT)
    o0, o1, ga_, gb = f(1.0, av, bv)
    e = np.exp(av)
    np.testing.assert_allclose(o0, e * bv, rtol=RTOL)
    np.testing.assert_allclose(o1, av)
    np.testing.assert_allclose(ga_, 2 * e * bv * e * bv + bv, rtol=RTOL)
    np.testing.assert_allclose(gb, 2 * e * bv * e + av, rtol=RTOL)
    o0, o1, ga_, gb = f(-1.0, av, bv)
    np.testing.assert_allclose(o0, bv * 2)
    np.testing.assert_allclose(o1, av - bv)
    np.testing.assert_allclose(ga_, bv)
    np.testing.assert_allclose(gb, 8 * bv + av - 2 * bv, rtol=RTOL)


def test_ifelse_is_lazy(host):
    c, x = T.lscalar("c"), T.dvector("x")
    Count.calls = 0
    bad = x.reshape((7,))  # fails for any other size: the branch must not run
    out = T.ifelse(c, Count()(x) * 2, bad)
    f = T.function([c, x], out)
    np.testing.assert_allclose(f(1, np.arange(3.0)), [0, 2, 4])
    assert Count.calls == 1
    with pytest.raises(Exception, match=r"reshape|shape"):
        f(0, np.arange(3.0))
    assert Count.calls == 1  # the then branch did not run
    g = T.function([c, x], T.ifelse(c, Count()(x), x * 3))
    np.testing.assert_allclose(g(0, np.ones(2)), [3, 3])
    assert Count.calls == 1


def test_ifelse_inside_scan(host):
    """A step that picks a branch per element of the sequence (relu of a running sum)."""
    x = T.dvector("x")
    out, _ = T.scan(lambda v, acc: T.ifelse(T.gt(acc + v, 0), acc + v, acc * 0),
                    sequences=x, outputs_info=np.float64(0))
    f = T.function([x], [out, T.grad(out.sum(), x)])
    got, g = f(np.array([1.0, -3.0, 2.0, 0.5]))
    np.testing.assert_allclose(got, [1, 0, 2, 2.5])
    np.testing.assert_allclose(g, [1, 0, 2, 1])


def test_ifelse_errors():
    x, m = T.dvector("x"), T.dmatrix("m")
    with pytest.raises(ArgumentTypeError, match="condition must be a scalar"):
        T.ifelse(x, x, x)
    with pytest.raises(ArgumentTypeError, match=r"output 0 is .*vector.* then branch and .*"
                                                r"matrix.* else branch"):
        T.ifelse(x[0], x, m)
    with pytest.raises(ArgumentError, match="then branch has 2 output"):
        T.ifelse(x[0], [x, x], [x])
    out = T.ifelse(x[0], x.sum(), 0)  # a Python scalar takes the other branch's dtype
    assert out.dtype == np.float64


# ---------------------------------------------------------------- the examples

@pytest.mark.parametrize(("script", "flags", "args"), [
    ("rnn_scan.py", DEVICE, ["--check"]),
    ("rnn_scan.py", "device=cpu", ["--check", "--truncate", "4"]),
    ("power_series.py", DEVICE, ["--check"]),
    ("power_series.py", "device=cpu", ["--check"]),
])
def test_examples_check_against_numpy(script, flags, args):
    out = run(script, flags, args)
    assert f"scan runs on the {'cpu' if flags == 'device=cpu' else 'gpu'}" in out
    assert out.splitlines()[-1] == "check: all match numpy"
