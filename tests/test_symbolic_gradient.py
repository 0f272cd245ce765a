"""gpuarr.symbolic.gradient: jacobian, hessian, Lop and Rop against numpy, and verify_grad
(finite differences against T.grad) on every differentiable op.

The ops come from tables: every ufunc with a gradient rule (elemwise.GRADS, NAMED_GRADS),
every differentiable reduction (reductions.REDUCTIONS), every product (blas.PRODUCTS),
and CASES for the rest; `add_case` registers a check for a new op (see its docstring), and
test_every_differentiable_op_has_a_case fails for an op class with a gradient that no case
reaches. The checks run on the host (flag device=cpu, numpy, float64) where the graphs
are the ones the device runs; a few run on the device as well.
"""

import importlib
import inspect
import pkgutil

import numpy as np
import pytest
from conftest import USABLE

import gpuarr.symbolic as T
from gpuarr.errors import ArgumentError, ArgumentTypeError, UnsupportedError
from gpuarr.symbolic import blas, elemwise, reductions
from gpuarr.symbolic.gradient import GradientError, verify_grad
from gpuarr.symbolic.graph import Apply, GpuOp, HostOp, Op, toposort

DT = "float64" if USABLE[0].fp64 else "float32"
RNG = np.random.default_rng(5)

# ---------------------------------------------------------------- the cases

CASES = {}  # name -> (fun, points)


def _sample(shape, domain):
    if domain == "nonzero":
        return RNG.choice([-1.0, 1.0], shape) * RNG.uniform(0.3, 2.0, shape)
    return RNG.uniform(*domain, shape)


def add_case(name, fun, *inputs):
    """Check fun's gradient with verify_grad (float64, on the host) at `inputs`: each an
    array or (shape, domain), a domain being (low, high) or "nonzero" (|x| in [0.3, 2]).
    A new differentiable op joins the walk with one line, e.g.
    add_case("softmax", T.nnet.softmax, ((3, 4), (-2, 2)))."""
    points = [np.asarray(p, np.float64) if not isinstance(p, tuple) else _sample(*p)
              for p in inputs]
    assert name not in CASES, f"case {name} registered twice"
    CASES[name] = (fun, points)


# Elementwise: every ufunc with a gradient rule, its arity read from the rule; the default
# domain is (-2, 2) for each argument.
DOMAINS = {
    **dict.fromkeys(("absolute", "fabs", "reciprocal"), ("nonzero",)),
    **dict.fromkeys(("sqrt", "cbrt", "log", "log2", "log10"), ((0.2, 3),)),
    "log1p": [(-0.5, 2)], "tan": [(-1.2, 1.2)], "arcsin": [(-0.9, 0.9)],
    "arccos": [(-0.9, 0.9)], "arccosh": [(1.2, 3)], "arctanh": [(-0.9, 0.9)],
    "true_divide": [(-2, 2), "nonzero"], "power": [(0.3, 2), (-2, 2)],
    "float_power": [(0.3, 2), (-2, 2)], "arctan2": ["nonzero", "nonzero"],
    "remainder": [(0.1, 0.9), (1.1, 1.9)], "fmod": [(-0.9, 0.9), (1.1, 1.9)],
    "copysign": ["nonzero"], "clip": [(-2, 2), (-1.5, -0.5), (0.5, 1.5)],
}
# Arguments given as constants: piecewise constant in them (sign, exponent, condition).
FIXED = {
    "copysign": {1: np.array([1.0, -2.0, 0.5, -0.5, 3.0])},
    "ldexp": {1: np.array([1, -2, 0, 3, 1])},
    "where": {0: np.array([True, False, True, True, False])},
}


def _elementwise(name, nin):
    fixed = FIXED.get(name, {})
    free = [k for k in range(nin) if k not in fixed]
    fn = elemwise.FUNCTIONS[name]

    def fun(*xs):
        args = dict(zip(free, xs)) | fixed
        return fn(*(args[k] for k in range(nin)))
    fun.__name__ = name
    domains = DOMAINS.get(name, [])
    add_case(name, fun, *(((5,), domains[j] if j < len(domains) else (-2, 2))
                          for j in range(len(free))))


for _name, _rule in elemwise.GRADS.items():
    _elementwise(_name, len(inspect.signature(_rule).parameters) - 2)
for _name in elemwise.NAMED_GRADS:
    add_case(_name, getattr(T, _name), ((5,), (-3, 3)))
add_case("cast", lambda x: T.cast(x, "float32"), ((5,), (-2, 2)))

# Reductions: each differentiable one over an axis and over all, keepdims too.
for _name, _flat in reductions.REDUCTIONS.items():
    if not _flat:
        _f = reductions.FUNCTIONS_R[_name]
        add_case(f"{_name}_axis", lambda a, f=_f: f(a, axis=1) * 1.0, ((3, 4), "nonzero"))
        add_case(f"{_name}_all_keepdims", lambda a, f=_f: f(a, axis=(0, 1), keepdims=True),
                 ((3, 4), "nonzero"))
for _name in ("mean", "var", "std"):
    add_case(_name, lambda a, f=reductions.FUNCTIONS_R[_name]: f(a, axis=0), ((3, 4), (-2, 2)))

# Products: every entry of the table, by its operands' dimensions.
_SHAPES = {2: [(3, 4), (4, 2)], 1: [(4,), (4,)]}
for _name, (_na, _nb) in blas.PRODUCTS.items():
    add_case(_name, T.dot, (_SHAPES[_na][0] if _na == 2 else (4,), (-1, 1)),
             ((4, 2) if _nb == 2 else (4,), (-1, 1)))
add_case("vector_matrix", T.dot, ((3,), (-1, 1)), ((3, 4), (-1, 1)))
add_case("tensordot", lambda a, b: T.tensordot(a, b, axes=[[1, 2], [0, 1]]),
         ((2, 3, 4), (-1, 1)), ((3, 4, 2), (-1, 1)))
add_case("batched_matmul", T.matmul, ((2, 3, 4), (-1, 1)), ((2, 4, 2), (-1, 1)))

# Structure, indexing, control flow and the rest.
_W = np.linspace(-1, 1, 12).reshape(3, 4)
add_case("transpose", lambda a: a.T * _W.T, ((3, 4), (-2, 2)))
add_case("dimshuffle", lambda a: a.dimshuffle(1, "x", 0) ** 2, ((3, 4), (-2, 2)))
add_case("reshape", lambda a: a.reshape((2, 6)) ** 3, ((3, 4), (-2, 2)))
add_case("flatten", lambda a: a.flatten() * 2, ((3, 4), (-2, 2)))
add_case("subtensor", lambda a: a[1:, ::2] * 2 + a[0, 3], ((3, 4), (-2, 2)))
add_case("set_subtensor", lambda a, v: T.set_subtensor(a[1], v) * _W, ((3, 4), (-2, 2)),
         ((4,), (-2, 2)))
add_case("inc_subtensor", lambda a, u: T.inc_subtensor(a[:, 2], u * u), ((3, 4), (-2, 2)),
         ((3,), (-2, 2)))
add_case("advanced_subtensor", lambda a: a[[2, 0, 2]] * 2, ((3, 4), (-2, 2)))
add_case("advanced_inc_subtensor", lambda a, u: T.inc_subtensor(a[[0, 2, 0]], u),
         ((3, 4), (-2, 2)), ((3, 4), (-2, 2)))
add_case("broadcast", lambda s, a: T.fill(a, s * s) * a, ((), (-2, 2)), ((3, 4), (-2, 2)))
add_case("alloc", lambda s: T.alloc(s, 2, 3) * _W[:2, :3], ((), (-2, 2)))
add_case("join", lambda a, b: T.concatenate([a, b * 2], axis=1), ((3, 2), (-2, 2)),
         ((3, 4), (-2, 2)))
add_case("make_vector", lambda a, b: T.MakeVector("float64")(a, b * 2) * _W[0, :2],
         ((), (-2, 2)), ((), (-2, 2)))
add_case("transfer", lambda a: a.transfer("cpu") * 3, ((3, 4), (-2, 2)))
add_case("softmax", lambda a: T.nnet.softmax(a) * _W, ((3, 4), (-2, 2)))
add_case("log_softmax", lambda a: T.nnet.log_softmax(a) * _W, ((3, 4), (-2, 2)))
add_case("print", lambda a: T.printing.Print("verify_grad", attrs=())(a) * 2, ((3,), (-2, 2)))


def _rnn(x, h0, w):
    hs, _ = T.scan(lambda v, h, w: T.tanh(T.dot(h, w) + v), sequences=x, outputs_info=h0,
                   non_sequences=w)
    return hs


def _fib(a0, x):
    out, _ = T.scan(lambda v, a, b: a * v + b * 0.5, sequences=x,
                    outputs_info=dict(initial=a0, taps=[-2, -1]))
    return out


add_case("scan", _rnn, ((4, 3), (-1, 1)), ((3,), (-1, 1)), ((3, 3), (-0.7, 0.7)))
add_case("scan_taps", _fib, ((2,), (-1, 1)), ((5,), (-1.5, 1.5)))
add_case("ifelse", lambda c, a: T.ifelse(T.gt(c, 0), T.exp(a) * c, a * a),
         ((), (0.5, 1.5)), ((4,), (-1, 1)))
add_case("ifelse_else", lambda c, a: T.ifelse(T.gt(c, 0), T.exp(a) * c, a * a * c),
         ((), (-1.5, -0.5)), ((4,), (-1, 1)))


@pytest.mark.parametrize("name", list(CASES))
def test_verify_grad(host, name):
    fun, points = CASES[name]
    verify_grad(fun, points, rng=np.random.default_rng(1))


@pytest.mark.parametrize("name", ["scan", "softplus", "Dot22"])
def test_verify_grad_on_the_device(default_ctx, name):
    fun, points = CASES[name]
    verify_grad(fun, [p.astype(DT) for p in points], rng=np.random.default_rng(1))


def _differentiable_ops():
    """The host op classes of gpuarr.symbolic (every module imported) that have a gradient."""
    for info in pkgutil.iter_modules(T.__path__):
        importlib.import_module(f"gpuarr.symbolic.{info.name}")
    found, stack = set(), [Op]
    while stack:
        cls = stack.pop()
        stack += cls.__subclasses__()
        if (cls.__module__.startswith("gpuarr.symbolic.") and not cls.__name__.startswith("_")
                and not issubclass(cls, GpuOp) and cls.grad is not Op.grad):
            found.add(cls)
    return found


def test_every_differentiable_op_has_a_case():
    reached = set()
    for fun, points in CASES.values():
        inputs = [T.tensor("float64", [False] * p.ndim) for p in points]
        reached.update(type(n.op) for n in toposort([T.as_variable(fun(*inputs))]))
    missing = sorted(cls.__name__ for cls in _differentiable_ops() - reached)
    assert not missing, (f"ops with a gradient that no verify_grad case reaches: {missing}; "
                         f"register one with add_case in tests/test_symbolic_gradient.py")
    names = {*elemwise.GRADS, *elemwise.NAMED_GRADS}
    assert names <= set(CASES)


# ---------------------------------------------------------------- verify_grad itself

class BadSquare(HostOp):
    """x ** 2 with a wrong gradient (x instead of 2 x), for verify_grad to catch."""

    def make_node(self, x):
        return Apply(self, [x], [x.type.clone()])

    def make_fn(self, node, xp, ctx):
        return lambda x: x * x

    def grad(self, node, grads):
        return [grads[0] * node.inputs[0]]


def test_verify_grad_reports_a_wrong_gradient(host):
    point = np.array([0.5, -1.0, 2.0])
    with pytest.raises(GradientError, match=r"gradient of input 0 \(shape \(3,\)\) disagrees "
                                            r"with finite differences at index \(\d,\)") as e:
        verify_grad(lambda x: BadSquare()(x), [point], rng=np.random.default_rng(0))
    assert isinstance(e.value, AssertionError) and verify_grad.E_grad is GradientError
    assert e.value.arg == 0 and e.value.abs_err > e.value.abs_tol
    np.testing.assert_array_equal(point, [0.5, -1.0, 2.0])  # pt is not changed
    verify_grad(lambda x: BadSquare()(x), [point], abs_tol=10, rel_tol=10)  # loose enough


def test_verify_grad_errors(host):
    with pytest.raises(UnsupportedError, match="input 0 has dtype int64"):
        verify_grad(lambda x: x * 2, [np.arange(3)])
    with pytest.raises(ArgumentTypeError, match="one variable"):
        verify_grad(lambda x: [x, x], [np.ones(2)])
    with pytest.raises(ArgumentError, match="at least one array"):
        verify_grad(lambda: T.constant(1.0), [])


# ---------------------------------------------------------------- jacobian, hessian, L/R-op

XV = np.array([0.3, -0.7, 1.1])
MV = np.linspace(-1, 1, 6).reshape(2, 3)


def test_jacobian(where):
    x, m = T.vector("x", dtype=DT), T.matrix("m", dtype=DT)
    y = T.tanh(T.dot(m, x)) * x[0]  # (2,)
    jx, jm = T.jacobian(y, [x, m])
    f = T.function([x, m], [jx, jm, T.jacobian(y.sum(), x)])
    got_x, got_m, got_scalar = f(XV.astype(DT), MV.astype(DT))
    if where == "device":
        assert "GpuScan" in [type(n.op).__name__ for n in f.maker.fgraph.toposort()]
    t = np.tanh(MV @ XV)
    dz = (1 - t ** 2) * XV[0]
    want_x = dz[:, None] * MV + np.outer(t, [1, 0, 0])
    want_m = np.zeros((2, 2, 3))
    for i in range(2):
        want_m[i, i] = dz[i] * XV
    rtol = 1e-10 if DT == "float64" else 1e-5
    np.testing.assert_allclose(got_x, want_x, rtol=rtol)
    np.testing.assert_allclose(got_m, want_m, rtol=rtol, atol=1e-12)
    np.testing.assert_allclose(got_scalar, want_x.sum(axis=0), rtol=rtol)
    with pytest.raises(ArgumentError, match="scalar or a vector"):
        T.jacobian(m, x)


def test_hessian(host):
    x, z = T.dvector("x"), T.dvector("z")
    a = np.array([[1.0, 2.0, 0.0], [0.5, -1.0, 3.0], [0.0, 1.0, 2.0]])
    cost = T.dot(x, T.dot(a, x)) + T.tanh(x).sum() + (x * z).sum() * z[0]
    hx, hz = T.hessian(cost, [x, z])
    got_x, got_z = T.function([x, z], [hx, hz])(XV, np.array([0.5, 1.0, -1.0]))
    t = np.tanh(XV)
    np.testing.assert_allclose(got_x, a + a.T + np.diag(-2 * t * (1 - t ** 2)), rtol=1e-12)
    # (x . z) z0: d2/dz0 dz_j = x_j + x_0 [j == 0]
    want_z = np.zeros((3, 3))
    want_z[0] += XV
    want_z[:, 0] += XV
    np.testing.assert_allclose(got_z, want_z, atol=1e-12)
    with pytest.raises(ArgumentError, match="wrt must be vectors"):
        T.hessian(cost, T.dmatrix("m"))


def test_lop_and_rop(where):
    x, m = T.vector("x", dtype=DT), T.matrix("m", dtype=DT)
    u, v, vm = T.vector("u", dtype=DT), T.vector("v", dtype=DT), T.matrix("vm", dtype=DT)
    y = T.tanh(T.dot(m, x))
    r = T.Rop(y, [m, x], [vm, v])
    lm, lx = T.Lop(y, [m, x], u)
    f = T.function([x, m, u, v, vm], [r, lm, lx, T.Rop([y, y * 2], x, v)[1]])
    uv, vv, vmv = np.array([1.0, -2.0]), np.array([0.5, 0.2, -1.0]), MV[::-1] * 0.3
    got_r, got_lm, got_lx, got_r2 = f(*(a.astype(DT) for a in (XV, MV, uv, vv, vmv)))
    s = 1 - np.tanh(MV @ XV) ** 2
    rtol = 1e-10 if DT == "float64" else 1e-5
    np.testing.assert_allclose(got_r, s * (vmv @ XV + MV @ vv), rtol=rtol)
    np.testing.assert_allclose(got_lm, np.outer(uv * s, XV), rtol=rtol)
    np.testing.assert_allclose(got_lx, MV.T @ (uv * s), rtol=rtol)
    np.testing.assert_allclose(got_r2, 2 * s * (MV @ vv), rtol=rtol)


def test_grad_with_known_grads(host):
    """T.grad(cost, wrt, known_grads={y: g}): the cost's gradient plus what flows back from
    y; with cost None only the latter (what Lop is)."""
    x, u = T.dvector("x"), T.dvector("u")
    y = T.sin(x) * 2
    f = T.function([x, u], [T.grad(None, x, known_grads={y: u}),
                             T.grad((x ** 2).sum(), x, known_grads={y: u})])
    uv = np.array([1.0, -1.0, 0.5])
    only, both = f(XV, uv)
    np.testing.assert_allclose(only, 2 * np.cos(XV) * uv)
    np.testing.assert_allclose(both, 2 * XV + 2 * np.cos(XV) * uv)
    with pytest.raises(ArgumentError, match="give a cost, or known_grads"):
        T.grad(None, x)


def test_rop_through_scan(host):
    """Rop takes two reverse passes: through a scan, the second differentiates the first's
    backward scan."""
    x, h0, v = T.dvector("x"), T.dvector("h0"), T.dvector("v")
    hs, _ = T.scan(lambda a, h: T.tanh(h * a + 0.3), sequences=x, outputs_info=h0)
    f = T.function([x, h0, v], T.Rop(hs, h0, v))
    hv, vv = np.array([0.2, -0.4]), np.array([1.0, 0.5])

    def ref(h):
        out = []
        for a in XV:
            h = np.tanh(h * a + 0.3)
            out.append(h)
        return np.array(out)
    eps = 1e-6
    want = (ref(hv + eps * vv) - ref(hv - eps * vv)) / (2 * eps)
    np.testing.assert_allclose(f(XV, hv, vv), want, rtol=1e-7, atol=1e-9)


def test_rop_and_lop_errors():
    x, y = T.dvector("x"), T.dvector("y")
    with pytest.raises(ArgumentError, match="does not depend on x"):
        T.Rop(y * 2, x, x)
    assert T.Rop(y * 2, x, x, disconnected_outputs="ignore").ndim == 1
    with pytest.raises(ArgumentError, match="1 eval_points for 2 variables"):
        T.Rop(x * y, [x, y], x)
    with pytest.raises(ArgumentTypeError, match="as many dimensions"):
        T.Lop(x * 2, x, T.dmatrix("m"))
    with pytest.raises(UnsupportedError, match="only float outputs"):
        T.Rop(T.argmax(x), x, x)
