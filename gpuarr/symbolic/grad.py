"""Reverse-mode gradients: `grad(cost, wrt)` builds the graph of d cost / d wrt from each
op's `grad`, walking the cost's graph backwards once."""

import functools
import operator
import warnings

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, UnsupportedError
from .basic import BroadcastLike, dimshuffle, zeros_like
from .elemwise import cast
from .graph import Constant, Variable, as_variable, toposort
from .reductions import CAReduce

__all__ = ["grad"]


def grad(cost, wrt, consider_constant=None, disconnected_inputs="raise", known_grads=None):
    """d cost / d wrt for a float scalar `cost` and a variable or list of variables `wrt`.

    Gradients stop at integer and boolean values and at piecewise-constant ops
    (comparisons, argmax, floor...); a `wrt` that reaches the cost only through those, or
    not at all, raises unless disconnected_inputs is 'warn' or 'ignore' (zeros then).
    Variables in `consider_constant` are treated as constants. `known_grads`
    ({variable: its gradient}, Theano's) adds gradients that flow back from those
    variables; with it the cost may be None (what `T.Lop` computes).
    """
    if disconnected_inputs not in ("raise", "warn", "ignore"):
        raise ArgumentError(f"disconnected_inputs must be 'raise', 'warn' or 'ignore', not "
                            f"{disconnected_inputs!r}")
    known = _known(known_grads)
    if cost is None and not known:
        raise ArgumentError("grad: give a cost, or known_grads to start from")
    if cost is not None:
        cost = as_variable(cost)
        if cost.ndim != 0:
            raise ArgumentError(f"grad: the cost must be a scalar (0-d), got {cost} of type "
                                f"{cost.type}; reduce it first, e.g. with .sum()")
        if cost.dtype.kind != "f":
            made = f" (made by {cost.owner.op})" if cost.owner is not None else ""
            raise UnsupportedError(f"grad: the cost {cost}{made} has dtype {cost.dtype}, which "
                                   f"is not differentiable; only float costs have gradients")
    single = not isinstance(wrt, list | tuple)
    wrts = [wrt] if single else list(wrt)
    for w in wrts:
        if not isinstance(w, Variable) or isinstance(w, Constant):
            raise ArgumentTypeError(f"grad: wrt must be symbolic variables, got {w!r}")
        if w.dtype.kind != "f":
            raise UnsupportedError(f"grad with respect to {w} ({w.type}): only float "
                                   f"variables are differentiable")
    constants = set(consider_constant or ())
    ends = [v for v, _ in known] if cost is None else [cost, *(v for v, _ in known)]
    order = toposort(ends)
    depends = _descendants(order, wrts)
    pending = {} if cost is None else {
        cost: [Constant(cost.type.clone(broadcastable=()), np.ones((), cost.dtype))]}
    for v, g in known:
        pending.setdefault(v, []).append(g)
    blocked = []
    for node in reversed(order):
        gs = [_total(pending.get(o)) for o in node.outputs]
        if all(g is None for g in gs) or not any(v in depends for v in node.inputs):
            continue
        if any(o in constants for o in node.outputs):
            continue
        if not node.op.differentiable(node) or all(o.dtype.kind != "f" for o in node.outputs):
            blocked.append(node)
            continue
        gs = [zeros_like(o) if g is None else g for g, o in zip(gs, node.outputs)]
        for k, (v, g) in enumerate(zip(node.inputs, node.op.grad(node, gs))):
            if g is None or v not in depends or k in node.op.shape_only:
                continue
            if v.dtype.kind != "f":
                if v.owner is not None:
                    blocked.append(v.owner)
                continue
            pending.setdefault(v, []).append(_fit(g, v))
    found = []
    what = f"the cost {cost}" if cost is not None else "the variables of known_grads"
    for w in wrts:
        g = _total(pending.get(w))
        found.append(g if g is not None else _disconnected(w, what, order, blocked,
                                                           disconnected_inputs))
    return found[0] if single else found


def _known(known_grads):
    """[(variable, gradient)] of known_grads, each gradient of its variable's type."""
    pairs = []
    for v, g in dict(known_grads or {}).items():
        if not isinstance(v, Variable):
            raise ArgumentTypeError(f"grad: known_grads keys must be symbolic variables, got "
                                    f"{v!r}")
        g = as_variable(g)
        if g.ndim > v.ndim:
            raise ArgumentError(f"grad: the known gradient of {v} ({v.type}) has "
                                f"{g.ndim} dimensions, more than the variable")
        if v.dtype.kind == "f":
            pairs.append((v, _fit(g, v)))
    return pairs


def _descendants(order, starts):
    """The variables computed from `starts` (reading them as data, not only their shape)."""
    found = set(starts)
    for node in order:
        if any(v in found for k, v in enumerate(node.inputs) if k not in node.op.shape_only):
            found.update(node.outputs)
    return found


def _total(grads):
    if not grads:
        return None
    return functools.reduce(operator.add, grads)


def _fit(g, v):
    """g summed over the dimensions v was broadcast along, broadcast where v is not, and
    cast to v's dtype."""
    g = as_variable(g)
    lead = g.ndim - v.ndim
    if lead < 0:
        g = BroadcastLike()(g, v)
        lead = 0
    if v.ndim == 0 and g.ndim:
        return cast(CAReduce("sum")(g), v.dtype)
    axes = tuple(range(lead)) + tuple(lead + d for d, b in enumerate(v.broadcastable)
                                      if b and not g.broadcastable[lead + d])
    if axes:
        g = CAReduce("sum", axes, keepdims=True)(g)
        if lead:
            g = dimshuffle(g, *range(lead, g.ndim))
    if any(gb and not vb for gb, vb in zip(g.broadcastable, v.broadcastable)):
        g = BroadcastLike()(g, v)
    return cast(g, v.dtype)


def _disconnected(w, what, order, blocked, mode):
    reached = _descendants(order, [w])
    ops = sorted({str(n.op) for n in blocked if any(v in reached for v in n.inputs)})
    if ops:
        error = UnsupportedError(
            f"grad: {w} reaches {what} only through {', '.join(ops)}, which "
            f"{'is' if len(ops) == 1 else 'are'} not differentiable (piecewise constant: "
            f"the gradient is zero almost everywhere); pass disconnected_inputs='ignore' "
            f"for zeros")
    else:
        error = ArgumentError(f"grad: {w} is not part of the graph of {what}; pass "
                              f"disconnected_inputs='ignore' for zeros")
    if mode == "raise":
        raise error
    if mode == "warn":
        warnings.warn(str(error), stacklevel=3)
    return zeros_like(w)
