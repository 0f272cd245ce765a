"""Gradient tools beyond `grad` (Theano's theano.gradient): Jacobians and Hessians as scans
over rows, the L- and R-operators, and `verify_grad`, which checks a gradient against
finite differences."""

import warnings

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, GradientError, UnsupportedError
from .basic import Size, subtensor, zeros_like
from .function import function
from .grad import grad
from .graph import TensorType, Variable, as_variable, toposort
from .scan import scan_steps

__all__ = ["GradientError", "Lop", "Rop", "grad", "hessian", "jacobian", "verify_grad"]


def _listed(x):
    """(x as a list of variables, whether x was a single item)."""
    if isinstance(x, list | tuple):
        return [as_variable(v) for v in x], False
    return [as_variable(x)], True


def _wrt(wrt, what):
    """(wrt as a list, whether it was a single variable); TypeError for data."""
    single = not isinstance(wrt, list | tuple)
    found = [wrt] if single else list(wrt)
    for w in found:
        if not isinstance(w, Variable):
            raise ArgumentTypeError(f"{what}: wrt must be symbolic variables, got {w!r}")
    return found, single


def jacobian(expression, wrt, consider_constant=None, disconnected_inputs="raise"):
    """d expression / d wrt for a vector (or scalar) `expression`: one gradient per element,
    computed by a scan over the elements.

    Parameters
    ----------
    expression : variable
        A float scalar or vector (flatten others first).
    wrt : variable or list of variables
    consider_constant, disconnected_inputs
        As in `grad`.

    Returns
    -------
    variable or list
        For each wrt, an array of shape (len(expression), *wrt.shape) (wrt's shape for a
        scalar expression).

    Examples
    --------
    >>> import gpuarr.symbolic as T
    >>> x = T.dvector("x")
    >>> T.jacobian(x ** 2, x).eval({x: np.array([1.0, 3.0])})
    array([[2., 0.],
           [0., 6.]])
    """
    expression = as_variable(expression)
    wrts, single = _wrt(wrt, "jacobian")
    if expression.ndim > 1:
        raise ArgumentError(f"jacobian: the expression must be a scalar or a vector, got "
                            f"{expression.type}; flatten it first (expression.flatten())")
    if expression.ndim == 0:
        found = grad(expression, wrts, consider_constant, disconnected_inputs)
    else:
        def row(t):
            return grad(subtensor(expression, t), wrts, consider_constant, disconnected_inputs)
        found, _ = scan_steps(row, Size()(expression), name="jacobian", return_list=True)
    return found[0] if single else found


def hessian(cost, wrt, consider_constant=None, disconnected_inputs="raise"):
    """The matrix of second derivatives of a scalar `cost` for each vector in `wrt`: the
    Jacobian of its gradient.

    Parameters
    ----------
    cost : scalar variable
    wrt : vector variable or list of them
    consider_constant, disconnected_inputs
        As in `grad`.

    Returns
    -------
    variable or list
        For each wrt, an (n, n) matrix.
    """
    wrts, single = _wrt(wrt, "hessian")
    found = []
    for w in wrts:
        if w.ndim != 1:
            raise ArgumentError(f"hessian: wrt must be vectors, got {w} of type {w.type}")
        g = grad(cost, w, consider_constant, disconnected_inputs)
        found.append(jacobian(g, w, consider_constant, disconnected_inputs))
    return found[0] if single else found


def _points(points, like, what):
    found, _ = _listed(points)
    if len(found) != len(like):
        raise ArgumentError(f"{what}: {len(found)} eval_points for {len(like)} variables")
    for p, v in zip(found, like):
        if p.ndim != v.ndim:
            raise ArgumentTypeError(f"{what}: the eval point {p} ({p.type}) of {v} ({v.type}) "
                                    f"must have as many dimensions")
    return found


def Lop(f, wrt, eval_points, consider_constant=None, disconnected_inputs="raise"):
    """The L-operator: v^T (d f / d wrt) for `eval_points` v shaped as f, by reverse mode.

    Parameters
    ----------
    f : variable or list of variables
    wrt : variable or list of variables
    eval_points : variable or list
        One per f, of its shape.
    consider_constant, disconnected_inputs
        As in `grad`.

    Returns
    -------
    variable or list
        One per wrt, of its shape.
    """
    fs, _ = _listed(f)
    wrts, single = _wrt(wrt, "Lop")
    known = {}
    for v, p in zip(fs, _points(eval_points, fs, "Lop")):
        known[v] = known[v] + p if v in known else p
    found = grad(None, wrts, consider_constant, disconnected_inputs, known_grads=known)
    return found[0] if single else found


def _reads(v, targets):
    return v in targets or any(i in targets for n in toposort([v]) for i in n.inputs)


def Rop(f, wrt, eval_points, disconnected_outputs="raise"):
    """The R-operator: (d f / d wrt) v for `eval_points` v shaped as wrt (a Jacobian-vector
    product), computed as the gradient of a linear function of a stand-in for f's
    gradient (two reverse passes), so every differentiable op has one.

    Parameters
    ----------
    f : variable or list of variables
    wrt : variable or list of variables
    eval_points : variable or list
        One per wrt, of its shape.
    disconnected_outputs : {'raise', 'warn', 'ignore'}
        What an f that does not depend on wrt does (zeros unless 'raise').

    Returns
    -------
    variable or list
        One per f, of its shape.
    """
    fs, single = _listed(f)
    wrts, _ = _wrt(wrt, "Rop")
    points = _points(eval_points, wrts, "Rop")
    if disconnected_outputs not in ("raise", "warn", "ignore"):
        raise ArgumentError(f"disconnected_outputs must be 'raise', 'warn' or 'ignore', not "
                            f"{disconnected_outputs!r}")
    targets = set(wrts)
    for v in fs:
        if v.dtype.kind != "f":
            raise UnsupportedError(f"Rop: {v} has dtype {v.dtype}; only float outputs have "
                                   f"derivatives")
        if disconnected_outputs != "ignore" and not _reads(v, targets):
            msg = f"Rop: {v} does not depend on {', '.join(map(str, wrts))}"
            if disconnected_outputs == "raise":
                raise ArgumentError(msg + "; pass disconnected_outputs='ignore' for zeros")
            warnings.warn(msg, stacklevel=2)
    unique = list(dict.fromkeys(fs))
    # u stands for f's gradient: J^T u is linear in u, so d(v . J^T u)/du = J v, whatever u
    stand_ins = [zeros_like(v) for v in unique]
    back = grad(None, wrts, known_grads=dict(zip(unique, stand_ins)),
                disconnected_inputs="ignore")
    known = {}
    for g, p in zip(back, points):
        known[g] = known[g] + p if g in known else p
    found = dict(zip(unique, grad(None, stand_ins, known_grads=known,
                                  disconnected_inputs="ignore")))
    return found[fs[0]] if single else [found[v] for v in fs]


_EPS = {"float16": 1e-1, "float32": 1e-3, "float64": 1e-7}  # central differences
_TOL = {"float16": 5e-2, "float32": 1e-2, "float64": 1e-4}


def verify_grad(fun, pt, n_tests=2, rng=None, eps=None, abs_tol=None, rel_tol=None):
    """Check the symbolic gradient of `fun` at the point `pt` against central finite
    differences, as Theano's verify_grad: the cost is sum(fun(*inputs) * r) for a random
    projection r (one per test); GradientError where they disagree.

    Parameters
    ----------
    fun : callable
        Symbolic inputs (one per array of pt) -> one float variable of any shape.
    pt : list of arrays
        The float values at which to check (not changed).
    n_tests : int
        Random projections tried.
    rng : numpy.random.Generator or numpy.random.RandomState, optional
    eps : float, optional
        The finite-difference step (default by dtype: 1e-7 float64, 1e-3 float32).
    abs_tol, rel_tol : float, optional
        An element fails when both its absolute and relative errors exceed these
        (default by dtype: 1e-4 float64, 1e-2 float32).

    Raises
    ------
    GradientError
        Naming the input, the position and both values; an AssertionError too.

    Examples
    --------
    >>> import gpuarr.symbolic as T
    >>> T.verify_grad(lambda x: T.tanh(x) * x, [np.array([0.5, -1.0, 2.0])],
    ...               rng=np.random.default_rng(0))
    """
    pt = [np.array(p) for p in pt]
    if not pt:
        raise ArgumentError("verify_grad: pt must hold at least one array")
    for k, p in enumerate(pt):
        if p.dtype.kind != "f":
            raise UnsupportedError(f"verify_grad: input {k} has dtype {p.dtype}; only float "
                                   f"inputs have gradients (close over the others in fun)")
    rng = np.random.default_rng() if rng is None else rng
    inputs = [TensorType(p.dtype, [False] * p.ndim)(f"input {k}") for k, p in enumerate(pt)]
    out = fun(*inputs)
    if isinstance(out, list | tuple):
        raise ArgumentTypeError("verify_grad: fun must return one variable, got a "
                                f"{type(out).__name__} of {len(out)}")
    out = as_variable(out)
    if out.dtype.kind != "f":
        raise UnsupportedError(f"verify_grad: fun returned {out} of dtype {out.dtype}; only "
                               f"float outputs have gradients")
    name = getattr(fun, "__name__", str(fun))
    least = min((p.dtype for p in pt), key=lambda d: d.itemsize).name
    least = out.dtype.name if out.dtype.itemsize < np.dtype(least).itemsize else least
    eps = _EPS.get(least, 1e-7) if eps is None else eps
    abs_tol = _TOL.get(least, 1e-4) if abs_tol is None else abs_tol
    rel_tol = _TOL.get(least, 1e-4) if rel_tol is None else rel_tol
    value = function(inputs, out, on_unused_input="ignore")
    proj = TensorType(out.dtype, [False] * out.ndim)("projection")
    grads = function([*inputs, proj],
                     grad((out * proj).sum(), inputs, disconnected_inputs="ignore"),
                     on_unused_input="ignore")
    shape = np.shape(value(*pt))
    slopes = [_slopes(value, pt, k, eps, shape) for k in range(len(pt))]
    for test in range(n_tests):
        r = np.asarray(rng.uniform(0.5, 1.5, size=shape), out.dtype)
        symbolic = grads(*pt, r)
        for k, (p, s, d) in enumerate(zip(pt, symbolic, slopes)):
            numeric = np.tensordot(d, r.astype(np.float64), axes=r.ndim)
            _compare(np.asarray(s, np.float64), numeric, k, p, abs_tol, rel_tol,
                     f"{name}, test {test + 1} of {n_tests}")


verify_grad.E_grad = GradientError  # Theano's spelling


def _slopes(value, pt, k, eps, shape):
    """d value / d pt[k] by central differences: shape pt[k].shape + the output's."""
    p = pt[k]
    found = np.empty(p.shape + tuple(shape), np.float64)
    args = list(pt)
    for idx in np.ndindex(p.shape):
        hi, lo = p.copy(), p.copy()
        hi[idx] += eps
        lo[idx] -= eps
        step = float(hi[idx]) - float(lo[idx])
        args[k] = hi
        up = np.asarray(value(*args), np.float64)
        args[k] = lo
        found[idx] = (up - np.asarray(value(*args), np.float64)) / step
    return found


def _compare(symbolic, numeric, k, p, abs_tol, rel_tol, where):
    if symbolic.shape != numeric.shape:
        raise GradientError(k, None, np.inf, np.inf, abs_tol, rel_tol,
                            f"verify_grad ({where}): the gradient of input {k} has shape "
                            f"{symbolic.shape}; the input has shape {p.shape}")
    abs_err = np.abs(symbolic - numeric)
    rel_err = abs_err / np.maximum(np.abs(symbolic) + np.abs(numeric), 1e-8)
    bad = np.minimum(abs_err / abs_tol, rel_err / rel_tol)
    if bad.size == 0 or not (bad.max() > 1 or np.isnan(bad).any()):
        return
    pos = np.unravel_index(np.nanargmax(np.where(np.isnan(bad), np.inf, bad)), bad.shape)
    raise GradientError(
        k, pos, float(abs_err[pos]), float(rel_err[pos]), abs_tol, rel_tol,
        f"verify_grad ({where}): the gradient of input {k} (shape {p.shape}) disagrees with "
        f"finite differences at index {tuple(int(i) for i in pos)}: symbolic "
        f"{symbolic[pos]:.6g}, numeric {numeric[pos]:.6g} (abs error {abs_err[pos]:.3g} > "
        f"{abs_tol:g} and rel error {rel_err[pos]:.3g} > {rel_tol:g}), input value "
        f"{p[pos]!r}")
