"""gpuarr.symbolic: placement and transfers, fusion, compiled functions (updates, givens,
outputs), dtype rules, errors, debugprint, profiles and the flags. numpy is the oracle.

Kernels are few on purpose (PoCL builds each in ~1.4 s cold): one data dtype, small
contiguous vectors (one guarded kernel per program), functions shared by several tests.
"""

import io
import warnings

import numpy as np
import pytest
from conftest import USABLE, flags, same_platform_pair
from symbolic_helpers import ops

import gpuarr as ga
import gpuarr.symbolic as T
from gpuarr import config
from gpuarr.errors import (
    ArgumentError,
    ArgumentTypeError,
    AxisError,
    ContextNotDefined,
    IndexOutOfRange,
    ShapeError,
    UnsupportedError,
)

DT = "float64" if USABLE[0].fp64 else "float32"
RNG = np.random.default_rng(7)
XV = RNG.uniform(0.5, 1.5, 6).astype(DT)
YV = RNG.uniform(-1, 1, 6).astype(DT)


def count(f, name):
    return ops(f).count(name)


@pytest.fixture(scope="module")
def dctx(ctx):
    """The default device's context (the symbolic layer places ops there)."""
    assert ga.get_context() is ctx
    return ctx


@pytest.fixture(scope="module")
def chain(dctx):
    """A host input through a chain of elementwise ops, compiled once."""
    x = T.vector("x", dtype=DT)
    y = (T.exp(x) * 2 + 1) / (x + 3) - T.sqrt(x)
    return x, y, T.function([x], y)


# ---------------------------------------------------------------- placement, transfers

def test_host_input_goes_to_the_device_and_back(chain):
    _, _, f = chain
    assert ops(f) == ["GpuFromHost", "GpuElemwise", "HostFromGpu"]
    out = f(XV)
    assert isinstance(out, np.ndarray) and out.dtype == DT
    np.testing.assert_allclose(out, (np.exp(XV) * 2 + 1) / (XV + 3) - np.sqrt(XV), rtol=1e-6)


def test_shared_on_device_and_result_kept_there(dctx):
    s = T.shared(XV, name="s")
    assert s.location is dctx and s.type.context is None
    back = T.function([], T.exp(s))
    kept = T.function([], T.exp(s).transfer(None))
    same = T.function([], T.gpu_from_host(T.exp(s)))
    assert ops(back) == ["GpuElemwise", "HostFromGpu"]
    assert ops(kept) == ["GpuElemwise"] == ops(same)
    r = kept()
    assert isinstance(r, ga.GpuArray) and r.context is dctx
    np.testing.assert_allclose(r.get(), np.exp(XV), rtol=1e-6)
    np.testing.assert_allclose(back(), np.exp(XV), rtol=1e-6)


def test_transfer_round_trips_are_removed(dctx):
    a = T.vector("a", dtype=DT)
    f = T.function([a], T.exp(a.transfer(None).transfer("cpu")).transfer(None))
    assert ops(f) == ["GpuFromHost", "GpuElemwise"]
    g = T.function([a], [T.exp(a), T.log(a), a.transfer(None)])  # one upload serves all
    assert count(g, "GpuFromHost") == 1 and count(g, "HostFromGpu") == 2
    e, lg, dev = g(XV)
    np.testing.assert_allclose(e, np.exp(XV), rtol=1e-12)
    np.testing.assert_allclose(lg, np.log(XV), rtol=1e-12)
    assert isinstance(dev, ga.GpuArray) and np.array_equal(dev.get(), XV)
    r = a.transfer(None).eval({a: XV})
    assert isinstance(r, ga.GpuArray) and np.array_equal(r.get(), XV)
    assert isinstance(T.exp(a).transfer("cpu").eval({a: XV}), np.ndarray)


def test_host_scalars_are_kernel_arguments(dctx):
    x, s = T.vector("x", dtype=DT), T.scalar("s", dtype=DT)
    f = T.function([x, s], x * s + s)
    assert ops(f) == ["GpuFromHost", "GpuElemwise", "HostFromGpu"]
    np.testing.assert_allclose(f(XV, 2.5), XV * 2.5 + 2.5)
    g = T.function([s], s * 2 + 1)  # scalar work only: stays on the host
    assert set(ops(g)) == {"Elemwise"} and g(1.5) == 4.0


def test_device_cpu_flag_keeps_everything_on_the_host():
    with flags(device="cpu"):
        s = T.shared(XV)
        assert s.location == "cpu"
        x = T.vector("x", dtype=DT)
        f = T.function([x], T.exp(x) * s)
        assert ops(f) == ["Elemwise", "Elemwise"]
        assert all(isinstance(n.op, T.Elemwise) for n in f.maker.fgraph.toposort())
        np.testing.assert_allclose(f(YV), np.exp(YV) * XV)
        with pytest.raises(ContextNotDefined, match="cpu"):
            x.transfer(None)


def test_integer_shared_stays_on_the_host(dctx):
    c = T.shared(np.int64(3), name="c")
    v = T.shared(np.arange(4), name="v")
    assert c.location == "cpu" and v.location == "cpu"
    d = T.shared(np.arange(4), name="d", target=None)
    assert d.location is dctx
    assert T.shared(XV, target="cpu").location == "cpu"


def test_two_contexts(dctx):
    """Work stays where its shared variables live; a value from elsewhere moves once.
    (Contexts named by device string: binding names would rename the test session's.)"""
    pair = same_platform_pair()
    if pair is None:
        pytest.skip("needs two devices of one platform")
    n0, n1 = pair[0].name, pair[1].name
    c0, c1 = ga.get_context(n0), ga.get_context(n1)
    a0 = T.shared(XV[:4].reshape(2, 2), target=n0)
    b0 = T.shared(YV[:4].reshape(2, 2), target=n0)
    a1 = T.shared(XV[2:].reshape(2, 2), target=n1)
    f = T.function([], [T.dot(a0, b0).transfer(n0), T.dot(a1, a1), a0 + a1])
    where = {str(n.op) for n in f.maker.fgraph.toposort()}
    assert f"GpuDot22<{c0.name}>" in where and f"GpuDot22<{c1.name}>" in where
    assert count(f, "GpuToGpu") == 1  # a1 joins a0
    p0, p1, s = f()
    assert p0.context is c0 and a1.location is c1
    np.testing.assert_allclose(p0.get(), XV[:4].reshape(2, 2) @ YV[:4].reshape(2, 2))
    np.testing.assert_allclose(p1, XV[2:].reshape(2, 2) @ XV[2:].reshape(2, 2))
    np.testing.assert_allclose(s, XV[:4].reshape(2, 2) + XV[2:].reshape(2, 2))


# ---------------------------------------------------------------- fusion

def test_chain_is_one_kernel(dctx, chain):
    x, _, f = chain
    node = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, T.GpuElemwise)]
    assert len(node) == 1 and len(node[0].op.program.steps) == 7
    before = set(dctx.kernels)
    g = T.function([x], (T.arcsinh(x) * 3 - T.cosh(x)) ** 2)  # a program not built yet
    g(XV)
    assert len(set(dctx.kernels) - before) == 1
    np.testing.assert_allclose(g(XV), (np.arcsinh(XV) * 3 - np.cosh(XV)) ** 2, rtol=1e-12)


def test_multi_output_fusion(dctx):
    x, y = T.vector("x", dtype=DT), T.vector("y", dtype=DT)
    e = T.exp(x) * y
    f = T.function([x, y], [e + 1, e * y, T.maximum(e, y)])
    fused = [n for n in f.maker.fgraph.toposort() if isinstance(n.op, T.GpuElemwise)]
    assert len(fused) == 1 and len(fused[0].outputs) == 3
    a, b, c = f(XV, YV)
    ref = np.exp(XV) * YV
    np.testing.assert_allclose(a, ref + 1, rtol=1e-12)
    np.testing.assert_allclose(b, ref * YV, rtol=1e-12)
    np.testing.assert_allclose(c, np.maximum(ref, YV), rtol=1e-12)
    # a length-1 x broadcasting although typed non-broadcastable: outputs keep numpy's shapes
    a, b, c = f(XV[:1], YV)
    assert a.shape == (6,) and c.shape == (6,)
    np.testing.assert_allclose(b, np.exp(XV[:1]) * YV * YV, rtol=1e-12)
    g = T.function([x, y], [T.exp(x) + 1, x * y])  # siblings fused through x
    assert count(g, "GpuElemwise") == 1
    e, p = g(XV[:1], YV)
    assert e.shape == (1,) and p.shape == (6,)
    np.testing.assert_allclose(e, np.exp(XV[:1]) + 1, rtol=1e-12)


def test_fusion_stops_where_it_would_make_a_cycle(dctx):
    x = T.vector("x", dtype=DT)
    y = T.exp(x)
    f = T.function([x], y + y.sum())  # y feeds the sum, the sum feeds the add
    assert count(f, "GpuElemwise") == 2
    np.testing.assert_allclose(f(XV), np.exp(XV) + np.exp(XV).sum(), rtol=1e-12)


def test_fused_outputs_keep_their_own_shapes(dctx):
    x, r = T.vector("x", dtype=DT), T.scalar("r", dtype=DT)
    t = T.exp(r.transfer(None))  # 0-d on the device: not an extra output of x's kernel
    f = T.function([x, r], [x * t, t])
    assert count(f, "GpuElemwise") == 2
    v, s = f(XV, 0.5)
    assert v.shape == (6,) and s.shape == ()
    np.testing.assert_allclose(v, XV * np.exp(0.5))


# ---------------------------------------------------------------- functions

def test_updates_all_read_the_old_values(dctx):
    a, b = T.shared(XV.copy(), name="a"), T.shared(YV.copy(), name="b")
    n = T.shared(0, name="n")
    swap = T.function([], [a + 0, n], updates=[(a, b), (b, a * 2), (n, n + 1)])
    out, count_before = swap()
    np.testing.assert_allclose(out, XV)
    assert count_before == 0 and n.get_value() == 1
    np.testing.assert_allclose(a.get_value(), YV)
    np.testing.assert_allclose(b.get_value(), XV * 2)
    swap()
    np.testing.assert_allclose(a.get_value(), XV * 2)
    # an output that is the shared value itself is not changed by the update
    get_and_bump = T.function([], a, updates={a: a + 1})
    old = get_and_bump()
    np.testing.assert_allclose(old, XV * 2)
    np.testing.assert_allclose(a.get_value(), XV * 2 + 1)
    # several functions share the variable; set_value reaches all of them
    a.set_value(np.zeros(6, DT))
    assert np.all(T.function([], a * 1)() == 0)
    T.function([], [], updates=[(a, a - 1)])()
    np.testing.assert_allclose(a.get_value(), -1)


def test_shared_values(dctx):
    s = T.shared(XV, name="s")
    raw = s.get_value(borrow=True, return_internal_type=True)
    assert isinstance(raw, ga.GpuArray) and isinstance(s.get_value(), np.ndarray)
    s.set_value([1, 2, 3, 4, 5, 6])
    np.testing.assert_array_equal(s.get_value(), np.arange(1, 7))
    with pytest.raises(ArgumentTypeError, match="dimension"):
        s.set_value(np.zeros((2, 3), DT))
    h = T.shared(np.arange(3), name="h")
    v = h.get_value()
    v[0] = 99
    assert h.get_value()[0] == 0  # a copy unless borrow=True


def test_givens_minibatches(dctx):
    data = T.shared(np.arange(12, dtype=DT), name="data")
    x, i = T.vector("x", dtype=DT), T.lscalar("i")
    f = T.function([i], (x ** 2).sum(), givens={x: data[i * 4:(i + 1) * 4]})
    for k in range(3):
        assert f(k) == (np.arange(12.0)[k * 4:(k + 1) * 4] ** 2).sum()
    assert count(f, "GpuSubtensor") == 1
    with pytest.raises(ArgumentTypeError, match="cannot be replaced"):
        T.function([i], x.sum(), givens={x: T.matrix(dtype=DT)})


def test_outputs_inputs_and_names(dctx):
    x, y = T.vector("x", dtype=DT), T.vector("y", dtype=DT)
    f = T.function([x, y], [x, x + y], name="pair")
    same, total = f(y=YV, x=XV)
    assert same is not XV and np.array_equal(same, XV)  # outputs never alias inputs
    np.testing.assert_allclose(total, XV + YV)
    assert f(XV.tolist(), YV)[0].dtype == DT
    one = T.function([x], x.sum())
    assert one(XV).shape == () and isinstance(one(XV), np.ndarray)


def test_dtype_rules(dctx):
    f32, i32 = T.fvector("f"), T.ivector("i")
    assert (f32 + i32).dtype == np.float64  # int32 with float32: float64 unless cast
    assert (f32 + T.cast(i32, "float32")).dtype == np.float32
    assert (f32 * 2).dtype == np.float32 and (f32 * 2.5).dtype == np.float32
    assert (f32 * np.float64(2)).dtype == np.float64
    assert (i32 * 2).dtype == np.int32 and (i32 / 2).dtype == np.float64
    assert T.mean(i32).dtype == np.float64 and T.mean(f32).dtype == np.float32
    assert T.argmax(f32).dtype == np.int64 and (f32 > 0).dtype == np.bool_
    assert T.vector().dtype == np.dtype(config.floatX)
    assert T.dot(T.fmatrix(), T.dvector()).dtype == np.float64
    g = T.function([i32], (i32 * 3 + 1) // 2)
    np.testing.assert_array_equal(g(np.arange(5, dtype="int32")),
                                  (np.arange(5, dtype="int32") * 3 + 1) // 2)


def test_structural_ops_and_reductions_on_device(dctx):
    m, i = T.matrix("m", dtype=DT), T.lscalar("i")
    mv = np.arange(12, dtype=DT).reshape(3, 4) / 7
    outs = [m.T, m.dimshuffle("x", 1, 0), m.reshape((2, 6)), m.flatten(), m[1:, ::2], m[i],
            m[:, i], m.sum(axis=0), m.max(axis=1, keepdims=True), m.argmax(axis=1),
            m.mean(), m.var(axis=0), m.std(axis=1), m.prod(axis=0), m.min(),
            T.set_subtensor(m[0], 5), T.inc_subtensor(m[1:, :2], 1), T.dot(m, m.T),
            T.dot(m, m[0]), T.dot(m[:, 0], m), T.dot(m[0], m[1]), m @ m.T,
            T.switch(m > 0.5, m, -m), T.clip(m, 0.2, 1.0), m.astype("float32")]
    refs = [mv.T, mv.T[None], mv.reshape(2, 6), mv.ravel(), mv[1:, ::2], mv[2], mv[:, 2],
            mv.sum(0), mv.max(1, keepdims=True), mv.argmax(1), mv.mean(), mv.var(0),
            mv.std(1), mv.prod(0), mv.min(), np.vstack([np.full(4, 5.0), mv[1:]]),
            mv + np.pad(np.ones((2, 2)), ((1, 0), (0, 2))), mv @ mv.T, mv @ mv[0],
            mv[:, 0] @ mv, mv[0] @ mv[1], mv @ mv.T, np.where(mv > 0.5, mv, -mv),
            np.clip(mv, 0.2, 1.0), mv.astype("float32")]
    f = T.function([m, i], outs)
    assert not [n for n in f.maker.fgraph.toposort()
                if not type(n.op).__name__.startswith(("Gpu", "Host", "Size", "Elemwise", "Deep"))]
    for got, ref in zip(f(mv, 2), refs):
        assert got.dtype == ref.dtype and got.shape == ref.shape
        np.testing.assert_allclose(got, ref, rtol=1e-6, atol=1e-12)


# ---------------------------------------------------------------- errors

def test_input_errors(chain):
    x, _, f = chain
    wrong = np.ones(6, "float32" if DT == "float64" else "float64")
    if DT == "float32":
        with pytest.raises(ArgumentTypeError, match=r"float64.*allow_input_downcast"):
            f(wrong)
        np.testing.assert_allclose(T.function([x], x, allow_input_downcast=True)(wrong), 1)
    with pytest.raises(ArgumentTypeError, match=r"input 0 \(x\).*shape \(2, 3\)"):
        f(np.ones((2, 3), DT))
    k = T.ivector("k")
    with pytest.raises(ArgumentTypeError, match=r"int32.*complex64"):
        T.function([k], k * 1)(np.ones(3, "complex64"))
    with pytest.raises(ArgumentError, match="takes 1 input"):
        f(XV, XV)
    with pytest.raises(ShapeError, match="broadcastable"):
        T.function([r := T.row("r", dtype=DT)], r * 1)(np.ones((2, 3), DT))


def test_compile_errors(dctx):
    x, y = T.vector("x", dtype=DT), T.vector("y", dtype=DT)
    s = T.shared(XV, name="s")
    with pytest.raises(ArgumentError, match=r"input y .* not among the inputs"):
        T.function([x], x + y)
    with pytest.raises(ArgumentError, match=r"input 1 \(y\) is not used"):
        T.function([x, y], x * 2)
    T.function([x, y], x * 2, on_unused_input="ignore")
    with pytest.raises(ArgumentTypeError, match="shared variable s"):
        T.function([s], s * 2)
    with pytest.raises(ArgumentTypeError, match=r"update of s .*float32"):
        T.function([], [], updates=[(s, T.cast(s, "float32"))])
    with pytest.raises(ArgumentTypeError, match="only change shared variables"):
        T.function([x], x, updates=[(x, x + 1)])
    with pytest.raises(ContextNotDefined, match="'nowhere'"):
        T.shared(XV, target="nowhere")
    with pytest.raises(ContextNotDefined, match="'nowhere'"):
        x.transfer("nowhere")
    with pytest.raises(ArgumentTypeError, match="truth value"):
        bool(x > 0)


def test_graph_building_errors():
    x, m = T.vector("x"), T.matrix("m")
    with pytest.raises(IndexOutOfRange, match="too many indices"):
        x[0, 1]
    with pytest.raises(ArgumentError, match="not broadcastable"):
        m.dimshuffle(0)
    with pytest.raises(AxisError, match="axis 2 is out of bounds"):
        m.sum(axis=2)
    with pytest.raises(ArgumentError, match="takes 1 inputs, got 2"):
        T.exp(x, x)
    with pytest.raises(UnsupportedError, match="bitwise_and"):
        T.bitwise_and(x, x)
    with pytest.raises(ArgumentError, match="integers to negative integer powers"):
        T.ivector() ** -1


# ---------------------------------------------------------------- printing, profiles, flags

def test_debugprint(chain):
    x, y, f = chain
    text = T.debugprint(f, file=io.StringIO())
    lines = text.splitlines()
    assert lines[0].startswith("HostFromGpu(gpuarray) [id A] ''   2")
    assert lines[1].startswith(" |GpuElemwise{Composite{")
    assert lines[-1] == "     |x [id D]"
    text = T.debugprint(y * 2, file=io.StringIO())
    assert "Elemwise{multiply} [id A]" in text and "Elemwise{exp}" in text
    assert str(T.exp(x)) == "Elemwise{exp}" and str(x) == "x"


def test_profile(dctx):
    x = T.vector("x", dtype=DT)
    f = T.function([x], T.exp(x).sum(), profile=True)
    for _ in range(3):
        f(XV)
    out = io.StringIO()
    f.profile.summary(out)
    text = out.getvalue()
    assert "Time in 3 calls to Function.__call__" in text
    assert "in cpu op," in text and "in gpu op and" in text and "in transfer op" in text
    split = f.profile.split()
    assert split["gpu"] > 0 and split["transfer"] > 0
    with flags(profile=True):
        g = T.function([x], x * 2)
    assert g.profile is not None
    T.profiling._PROFILES[:] = [p for p in T.profiling._PROFILES if p not in (f.profile,
                                                                             g.profile)]


def test_assert_no_cpu_op():
    x = T.vector("x", dtype=DT)
    with flags(device="cpu", assert_no_cpu_op="raise"), pytest.raises(
            UnsupportedError, match=r"left on the host.*Elemwise\{exp\}"):
        T.function([x], T.exp(x))
    with flags(device="cpu", assert_no_cpu_op="warn"), warnings.catch_warnings(record=True) as w:
        warnings.simplefilter("always")
        T.function([x], T.exp(x))
        assert any("Elemwise{exp}" in str(m.message) for m in w)
    with flags(assert_no_cpu_op="raise"):
        T.function([x], T.exp(x))  # everything on the device: no complaint


def test_flags_parse():
    assert config.parse_flags("assert_no_cpu_op=warn,profile=True") == {
        "assert_no_cpu_op": "warn", "profile": True}
    with pytest.raises(ga.errors.FlagError, match="assert_no_cpu_op"):
        config.parse_flags("assert_no_cpu_op=pdb")
