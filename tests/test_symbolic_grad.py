"""T.grad checked against finite differences of numpy for every differentiable op, computed
on the device in float64 (float32 where the device has no fp64), and the errors for what
is not differentiable.

Two compiled functions carry every gradient (one for the elementwise ops, one for
reductions, products and structural ops), so the kernels are built once and fused.
"""

import numpy as np
import pytest
from conftest import USABLE

import gpuarr.symbolic as T
from gpuarr.errors import ArgumentError, ArgumentTypeError, UnsupportedError

DT = "float64" if USABLE[0].fp64 else "float32"
H = 1e-6 if DT == "float64" else 1e-2
RTOL, ATOL = (1e-5, 1e-7) if DT == "float64" else (2e-2, 2e-3)
N = 7
RNG = np.random.default_rng(3)


def _sample(domain, n=N):
    if domain == "nonzero":
        return RNG.choice([-1.0, 1.0], n) * RNG.uniform(0.3, 2.0, n)
    if domain == "int":
        return RNG.integers(-3, 4, n)
    return RNG.uniform(*domain, n)


def _sigmoid(x):
    with np.errstate(over="ignore"):
        return 1 / (1 + np.exp(-x))


# name -> (symbolic function, numpy function, domain of each argument)
UNARY = {
    **{name: (getattr(T, name), getattr(np, name), (-2, 2)) for name in (
        "negative", "positive", "square", "exp", "exp2", "expm1", "sin", "cos", "arctan",
        "sinh", "cosh", "tanh", "arcsinh", "deg2rad", "rad2deg", "conjugate")},
    **{name: (getattr(T, name), getattr(np, name), "nonzero") for name in (
        "absolute", "fabs", "reciprocal")},
    **{name: (getattr(T, name), getattr(np, name), (0.2, 3)) for name in (
        "sqrt", "cbrt", "log", "log2", "log10")},
    "log1p": (T.log1p, np.log1p, (-0.5, 2)),
    "tan": (T.tan, np.tan, (-1.2, 1.2)),
    "arcsin": (T.arcsin, np.arcsin, (-0.9, 0.9)),
    "arccos": (T.arccos, np.arccos, (-0.9, 0.9)),
    "arccosh": (T.arccosh, np.arccosh, (1.2, 3)),
    "arctanh": (T.arctanh, np.arctanh, (-0.9, 0.9)),
    "sigmoid": (T.sigmoid, _sigmoid, (-4, 4)),
    "softplus": (T.softplus, lambda x: np.log1p(np.exp(x)), (-4, 4)),
    # a cast's gradient ignores the rounding: checked with a step far above it
    "cast": (lambda x: T.cast(T.cast(x, "float32"), DT) * 1,
             lambda x: x.astype("float32").astype(DT), (-2, 2)),
}
BINARY = {
    **{name: (getattr(T, name), getattr(np, name), ((-2, 2), (-2, 2))) for name in (
        "add", "subtract", "multiply", "maximum", "minimum", "fmax", "fmin", "hypot",
        "logaddexp", "logaddexp2")},
    "true_divide": (T.true_divide, np.true_divide, ((-2, 2), "nonzero")),
    "power": (T.power, np.power, ((0.3, 2), (-2, 2))),
    "float_power": (T.float_power, np.float_power, ((0.3, 2), (-2, 2))),
    "arctan2": (T.arctan2, np.arctan2, ("nonzero", "nonzero")),
    "remainder": (T.remainder, np.remainder, ((0.1, 0.9), (1.1, 1.9))),
    "fmod": (T.fmod, np.fmod, ((-0.9, 0.9), (1.1, 1.9))),
    "copysign": (T.copysign, np.copysign, ("nonzero", "nonzero")),
    "ldexp": (T.ldexp, np.ldexp, ((-2, 2), "int")),
    "where": (lambda c, x: T.where(c > 0, x, -2 * x), lambda c, x: np.where(c > 0, x, -2 * x),
              ("nonzero", (-2, 2))),
    "clip": (lambda x, lo: T.clip(x, lo, lo + 1), lambda x, lo: np.clip(x, lo, lo + 1),
             ((-2, 2), (-1, 0))),
    "pow_const": (lambda x, y: x ** 3 + y ** 0.5 - 2 ** x, lambda x, y: x ** 3 + y ** 0.5 - 2 ** x,
                  ((-2, 2), (0.3, 2))),
}
# the argument a gradient is taken for (None: all; piecewise-constant arguments left out)
DIFFERENTIABLE = {"copysign": [0], "ldexp": [0], "where": [1]}


def _weights(n=N):
    return np.linspace(0.5, 1.5, n).astype(DT)


@pytest.fixture(scope="module")
def elementwise(ctx):
    """One function: the gradients of sum(w * op(args)) for every elementwise op. Ops
    whose arguments have the same domains read the same inputs, so their gradients (each
    an output) fuse into a few kernels."""
    w = T.shared(_weights(), name="w")
    inputs, grads, slots = {}, [], {}
    for name, (fn, _, domains) in {**UNARY, **BINARY}.items():
        doms = (domains,) if name in UNARY else domains
        for k, d in enumerate(doms):
            if (k, d) not in inputs:
                dt = "int64" if d == "int" else DT
                inputs[k, d] = (T.vector(f"x{len(inputs)}", dtype=dt), _sample(d).astype(dt))
        args = [inputs[k, d][0] for k, d in enumerate(doms)]
        which = DIFFERENTIABLE.get(name, range(len(args)))
        slots[name] = (len(grads), [inputs[k, d][1] for k, d in enumerate(doms)], which)
        grads += T.grad((fn(*args) * w).sum(), [args[k] for k in which])
    f = T.function([v for v, _ in inputs.values()], grads)
    return f, f(*(x for _, x in inputs.values())), slots


@pytest.mark.parametrize("name", [*UNARY, *BINARY])
def test_elementwise_gradient(elementwise, name):
    _, got, slots = elementwise
    first, vals, which = slots[name]
    np_fn = {**UNARY, **BINARY}[name][1]
    h, rtol = (1e-2, 1e-4) if name == "cast" and DT == "float64" else (H, RTOL)
    for j, k in enumerate(which):
        lo, hi = list(vals), list(vals)
        lo[k], hi[k] = vals[k] - h, vals[k] + h
        numeric = (np_fn(*hi) - np_fn(*lo)) / (2 * h) * _weights()
        np.testing.assert_allclose(got[first + j], numeric, rtol=rtol, atol=ATOL,
                                   err_msg=f"d/d arg{k} of {name}")


def test_elementwise_gradients_are_fused(elementwise):
    f = elementwise[0]
    kinds = [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    assert "Elemwise" not in kinds
    assert kinds.count("GpuElemwise") <= 10  # 70 gradients of ~50 ops in a few kernels


# ---------------------------------------------------------------- reductions, products, views

A = RNG.uniform(0.5, 1.5, (3, 4)).astype(DT) * RNG.choice([-1, 1], (3, 4))
B = RNG.uniform(-1, 1, (4, 2)).astype(DT)
V = RNG.uniform(-1, 1, 4).astype(DT)
U = RNG.uniform(-1, 1, 3).astype(DT)
S = np.asarray(0.7, DT)
W34 = np.linspace(-1, 1, 12).reshape(3, 4).astype(DT)
W4, W3 = W34[0], W34[:, 1]
IDX = 2

# name -> (symbolic term, numpy term, arguments): every term is a scalar cost
TERMS = {
    "sum_axis0": (lambda a: (a.sum(axis=0) * W4).sum(), lambda a: (a.sum(0) * W4).sum(), "A"),
    "sum_axis1_keepdims": (lambda a: (a.sum(axis=1, keepdims=True) * a).sum(),
                           lambda a: (a.sum(1, keepdims=True) * a).sum(), "A"),
    "sum_all": (lambda a: a.sum() ** 2, lambda a: a.sum() ** 2, "A"),
    "prod": (lambda a: (a.prod(axis=1) * W3).sum(), lambda a: (a.prod(1) * W3).sum(), "A"),
    "max": (lambda a: (a.max(axis=0) * W4).sum(), lambda a: (a.max(0) * W4).sum(), "A"),
    "min": (lambda a: a.min() * 3, lambda a: a.min() * 3, "A"),
    "mean": (lambda a: (a.mean(axis=1) * W3).sum(), lambda a: (a.mean(1) * W3).sum(), "A"),
    "var": (lambda a: (a.var(axis=0) * W4).sum(), lambda a: (a.var(0) * W4).sum(), "A"),
    "std": (lambda a: a.std(), lambda a: a.std(), "A"),
    "dot22": (lambda a, b: (T.dot(a, b) ** 2).sum(), lambda a, b: ((a @ b) ** 2).sum(), "AB"),
    "gemv": (lambda a, v: (T.dot(a, v) * W3).sum(), lambda a, v: (a @ v * W3).sum(), "AV"),
    "vector_matrix": (lambda u, a: (T.dot(u, a) * W4).sum(), lambda u, a: (u @ a * W4).sum(),
                      "UA"),
    "dot": (lambda v: T.dot(v, v * W4), lambda v: v @ (v * W4), "V"),
    "matmul": (lambda a, b: (a @ b).sum(), lambda a, b: (a @ b).sum(), "AB"),
    "transpose": (lambda a: (a.T * W34.T).sum(), lambda a: (a.T * W34.T).sum(), "A"),
    "dimshuffle": (lambda a: (a.dimshuffle(1, "x", 0) ** 2 * W34.T[:, None]).sum(),
                   lambda a: (a.T[:, None] ** 2 * W34.T[:, None]).sum(), "A"),
    "reshape": (lambda a: (a.reshape((2, 6)) * W34.reshape(2, 6)[::-1]).sum(),
                lambda a: (a.reshape(2, 6) * W34.reshape(2, 6)[::-1]).sum(), "A"),
    "flatten": (lambda a: (a.flatten() ** 3).sum(), lambda a: (a.ravel() ** 3).sum(), "A"),
    "subtensor": (lambda a: (a[1:, ::2] * W34[1:, ::2]).sum() + a[0, 3] * 2,
                  lambda a: (a[1:, ::2] * W34[1:, ::2]).sum() + a[0, 3] * 2, "A"),
    "subtensor_symbolic": (lambda a: (a[IDXV] * W4).sum() + (a[:, IDXV - 1] ** 2).sum(),
                           lambda a: (a[IDX] * W4).sum() + (a[:, IDX - 1] ** 2).sum(), "A"),
    "set_subtensor": (lambda a, v: (T.set_subtensor(a[1], v) * W34).sum(),
                      lambda a, v: (np.vstack([a[:1], v[None], a[2:]]) * W34).sum(), "AV"),
    "inc_subtensor": (lambda a, u: (T.inc_subtensor(a[:, 2], u * u) * W34).sum(),
                      lambda a, u: ((a + np.outer(u * u, [0, 0, 1, 0])) * W34).sum(), "AU"),
    "broadcast_scalar": (lambda s, a: (s * a * W34).sum() + s ** 2,
                         lambda s, a: (s * a * W34).sum() + s ** 2, "SA"),
    "broadcast_row": (lambda r, a: ((a - r) ** 2).sum(), lambda r, a: ((a - r) ** 2).sum(),
                      "RA"),
    "transfer": (lambda a: (a.transfer("cpu") * W34).sum(), lambda a: (a * W34).sum(), "A"),
    "fill": (lambda s, a: (T.fill(a, s * s) * W34).sum() + (T.ones_like(a) * a).sum(),
             lambda s, a: (s * s * W34).sum() + a.sum(), "SA"),
}
IDXV = T.lscalar("idx")
VALUES = {"A": A, "B": B, "V": V, "U": U, "S": S, "R": A[:1].copy()}


@pytest.fixture(scope="module")
def structural(ctx):
    """One function: the gradients of every term with respect to its arguments."""
    symbols = {"A": T.matrix("A", dtype=DT), "B": T.matrix("B", dtype=DT),
               "V": T.vector("V", dtype=DT), "U": T.vector("U", dtype=DT),
               "S": T.scalar("S", dtype=DT), "R": T.row("R", dtype=DT)}
    grads, slots = [], {}
    for name, (term, _, args) in TERMS.items():
        slots[name] = len(grads)
        grads += T.grad(term(*(symbols[a] for a in args)), [symbols[a] for a in args])
    inputs = [*symbols.values(), IDXV]
    f = T.function(inputs, grads)
    return f, f(*VALUES.values(), IDX), slots


@pytest.mark.parametrize("name", list(TERMS))
def test_structural_gradient(structural, name):
    _, got, slots = structural
    _, np_term, args = TERMS[name]
    vals = [VALUES[a].copy() for a in args]
    for j, a in enumerate(args):
        numeric = np.zeros_like(vals[j])
        for i in np.ndindex(vals[j].shape):
            hi, lo = [v.copy() for v in vals], [v.copy() for v in vals]
            hi[j][i] += H
            lo[j][i] -= H
            numeric[i] = (np_term(*hi) - np_term(*lo)) / (2 * H)
        g = got[slots[name] + j]
        assert g.shape == vals[j].shape and g.dtype == vals[j].dtype
        np.testing.assert_allclose(g, numeric, rtol=RTOL, atol=ATOL, err_msg=f"d/d{a} of {name}")


def test_structural_gradients_run_on_the_device(structural):
    f = structural[0]
    host = [n for n in f.maker.fgraph.toposort()
            if not type(n.op).__name__.startswith(("Gpu", "HostFromGpu", "Deep"))]
    assert {type(n.op).__name__ for n in host} <= {"Size", "Elemwise"}  # counts, on the host


def test_logistic_regression_step_matches_numpy(ctx):
    """SGD updates from T.grad, all on the device; the update reads the old weights."""
    x, y = T.matrix("x", dtype=DT), T.vector("y", dtype=DT)
    w = T.shared(V.copy(), name="w")
    b = T.shared(np.asarray(0.1, DT), name="b")
    p = 1 / (1 + T.exp(-T.dot(x, w) - b))
    cost = (-y * T.log(p) - (1 - y) * T.log(1 - p)).mean() + 0.01 * (w ** 2).sum()
    gw, gb = T.grad(cost, [w, b])
    train = T.function([x, y], cost, updates=[(w, w - 0.1 * gw), (b, b - 0.1 * gb)])
    names = [type(n.op).__name__ for n in train.maker.fgraph.toposort()]
    assert "GpuGemv" in names and "Gemv" not in names
    xs, ys, wr, br = A, (U > 0).astype(DT), V.copy(), 0.1
    for _ in range(3):
        pr = _sigmoid(xs @ wr + br)
        ref_cost = (-ys * np.log(pr) - (1 - ys) * np.log(1 - pr)).mean() + 0.01 * (wr ** 2).sum()
        np.testing.assert_allclose(train(xs, ys), ref_cost, rtol=RTOL)
        wr, br = wr - 0.1 * (xs.T @ (pr - ys) / 3 + 0.02 * wr), br - 0.1 * (pr - ys).mean()
        np.testing.assert_allclose(w.get_value(), wr, rtol=RTOL, atol=ATOL)
        np.testing.assert_allclose(b.get_value(), br, rtol=RTOL, atol=ATOL)


def test_sigmoid_stays_finite_where_it_saturates(ctx):
    z = T.vector("z", dtype=DT)
    p = 1 / (1 + T.exp(-z))  # recognised as sigmoid
    assert str(p.owner.op) == "Elemwise{sigmoid}"
    xent = (-T.log(p) - T.log(1 - p)).sum()
    f = T.function([z], [xent, T.grad(xent, z)])
    big = np.array([-800.0, -40.0, 0.0, 40.0, 800.0], DT)
    cost, g = f(big)
    assert np.isfinite(cost) and np.all(np.isfinite(g))
    np.testing.assert_allclose(g, 1 - 2 * _sigmoid(-big), atol=1e-6)


# ---------------------------------------------------------------- what is not differentiable

def test_non_differentiable_ops():
    x = T.vector("x", dtype=DT)
    with pytest.raises(UnsupportedError, match=r"argmax.*not differentiable"):
        T.grad(T.cast(T.argmax(x), DT), x)
    with pytest.raises(UnsupportedError, match=r"greater.*not differentiable"):
        T.grad(T.cast(x > 0, DT).sum(), x)
    with pytest.raises(UnsupportedError, match=r"floor.*not differentiable"):
        T.grad(T.floor(x).sum(), x)
    with pytest.raises(UnsupportedError, match=r"cost .* has dtype int64"):
        T.grad(T.argmax(x), x)
    with pytest.raises(UnsupportedError, match=r"only float variables"):
        T.grad(T.cast(T.ivector("k"), DT).sum(), T.ivector("k"))
    # a comparison inside a switch only picks the branch: no error
    g = T.grad(T.switch(x > 0, x, 0).sum(), x)
    np.testing.assert_array_equal(g.eval({x: np.array([-1.0, 2.0], DT)}), [0.0, 1.0])


def test_disconnected_and_argument_errors():
    x, y = T.vector("x", dtype=DT), T.vector("y", dtype=DT)
    with pytest.raises(ArgumentError, match=r"y is not part of the graph"):
        T.grad(x.sum(), y)
    g = T.grad(x.sum(), [x, y], disconnected_inputs="ignore")[1]
    np.testing.assert_array_equal(g.eval({y: np.ones(2, DT)}), [0.0, 0.0])
    with pytest.warns(UserWarning, match="not part of the graph"):
        T.grad(x.sum(), y, disconnected_inputs="warn")
    with pytest.raises(ArgumentError, match="must be a scalar"):
        T.grad(x, x)
    with pytest.raises(ArgumentTypeError, match="symbolic variables"):
        T.grad(x.sum(), 3.0)
    e = T.exp(x)
    g = T.grad((x * e).sum(), x, consider_constant=[e])  # e's own dependence on x ignored
    np.testing.assert_allclose(g.eval({x: np.array([0.0, 1.0], DT)}), np.exp([0.0, 1.0]))
