"""`function`: compile a graph into a callable.

Compilation (FunctionMaker) applies `givens`, folds constants and merges equal work,
places every op (placement.py), fuses elementwise chains (fusion.py) and adds the copies
that keep outputs from aliasing. Linking makes everything a call needs: one flat list of
storage cells (constants filled once) and one thunk per node reading and writing cells by
index, so a call is: filter the inputs into their cells, read the shared values, run the
thunks, collect the outputs, install the updates (after every output and update value is
computed, so all of them read the old values), and clear the cells.
"""

import time
import warnings

import numpy as np

from .. import config
from ..context import get_context
from ..errors import ArgumentError, ArgumentTypeError
from .fgraph import FunctionGraph, rebuild, remake
from .fusion import fuse_elemwise
from .graph import Constant, Variable, as_variable, roots
from .placement import place
from .profiling import ProfileStats
from .rewrites import check_no_cpu_op, fold_and_merge, protect
from .shared import SharedVariable
from .types import location

__all__ = ["Function", "FunctionMaker", "function"]


def function(inputs, outputs=None, updates=None, givens=None, name=None, profile=None,
             allow_input_downcast=None, on_unused_input="raise", trust_input=False):
    """Compile `outputs` as a function of `inputs`.

    outputs: a variable or a list of them (None: only updates); values come back as numpy
    arrays, or as GpuArrays for outputs marked with .transfer(ctx).
    updates: (shared variable, new value) pairs or a dict, installed after each call.
    givens: {variable: replacement} substituted in the graph before compiling.
    profile: time each op and print a summary at exit (default: flag profile).
    """
    maker = FunctionMaker(inputs, outputs, updates, givens, name, allow_input_downcast,
                          on_unused_input)
    return Function(maker, bool(config.flags.profile if profile is None else profile),
                    trust_input)


def _as_list(x, what):
    if x is None:
        return []
    if isinstance(x, dict):
        return list(x.items())
    if isinstance(x, list | tuple):
        return list(x)
    raise ArgumentTypeError(f"{what} must be a list of pairs or a dict, got {type(x).__name__}")


class FunctionMaker:
    """Compiles the graph; `fgraph` is the result (`fgraph.toposort()` lists its nodes)."""

    def __init__(self, inputs, outputs, updates, givens, name, allow_input_downcast,
                 on_unused_input):
        self.name = name
        self.allow_input_downcast = allow_input_downcast
        self.inputs = self._check_inputs(inputs)
        self.single = outputs is not None and not isinstance(outputs, list | tuple)
        outs = [] if outputs is None else [outputs] if self.single else list(outputs)
        self.outputs = [as_variable(o) for o in outs]
        self.updates = self._check_updates(updates)
        replace = self._check_givens(givens)
        wanted = self.outputs + [v for _, v in self.updates]
        if replace:
            wanted = rebuild(wanted, remake, replace)[0]
        shared = self._check_roots(wanted, on_unused_input)
        folded = fold_and_merge(wanted)
        where = [location(v.type.context) for v in folded[:len(self.outputs)]]
        where += [s.location for s, _ in self.updates]
        default = None if config.flags.device == "cpu" else get_context(None)
        placed = fuse_elemwise(place(folded, where, default))
        n = len(self.outputs)
        outs, upds = protect(placed[:n], placed[n:], [*self.inputs, *shared])
        self.shared = shared
        self.fgraph = FunctionGraph([*self.inputs, *shared], [*outs, *upds])
        check_no_cpu_op(self.fgraph.toposort(), config.flags.assert_no_cpu_op, name)

    def _check_inputs(self, inputs):
        if isinstance(inputs, Variable) or not isinstance(inputs, list | tuple):
            raise ArgumentTypeError(f"function inputs must be a list of variables, got "
                                    f"{type(inputs).__name__}")
        for k, v in enumerate(inputs):
            if not isinstance(v, Variable):
                raise ArgumentTypeError(f"input {k} of function {self.name} is not a symbolic "
                                        f"variable: {v!r}")
            if isinstance(v, SharedVariable):
                raise ArgumentTypeError(f"shared variable {v} cannot be an explicit input; its "
                                        f"value is read at each call (use givens to replace it)")
            if isinstance(v, Constant) or v.owner is not None:
                raise ArgumentTypeError(f"input {k} ({v}) of function {self.name} is computed "
                                        f"from other variables or constant; inputs must be "
                                        f"free variables such as T.vector()")
        if len(set(inputs)) != len(inputs):
            raise ArgumentError(f"function {self.name}: an input appears twice")
        return list(inputs)

    def _check_updates(self, updates):
        pairs, seen = [], set()
        for pair in _as_list(updates, "updates"):
            if not isinstance(pair, tuple | list) or len(pair) != 2:
                raise ArgumentTypeError(f"an update must be a (shared variable, new value) pair, "
                                        f"got {pair!r}")
            var, value = pair
            if not isinstance(var, SharedVariable):
                raise ArgumentTypeError(f"updates can only change shared variables, not {var!r}")
            if var in seen:
                raise ArgumentError(f"shared variable {var} is updated twice")
            seen.add(var)
            value = as_variable(value)
            if value.dtype != var.dtype or value.ndim != var.ndim:
                raise ArgumentTypeError(
                    f"the update of {var} ({var.type}) has type {value.type}; it must keep the "
                    f"dtype and number of dimensions (cast it with T.cast(value, "
                    f"'{var.dtype}'))")
            pairs.append((var, value))
        return pairs

    def _check_givens(self, givens):
        replace = {}
        for pair in _as_list(givens, "givens"):
            old, new = pair
            if not isinstance(old, Variable):
                raise ArgumentTypeError(f"givens keys must be variables, got {old!r}")
            new = as_variable(new)
            if new.dtype != old.dtype or new.ndim != old.ndim:
                raise ArgumentTypeError(f"givens: {old} ({old.type}) cannot be replaced by "
                                        f"{new} ({new.type}): dtype and dimensions must match")
            replace[old] = new
        return replace

    def _check_roots(self, wanted, on_unused_input):
        found = roots(wanted)
        shared = [v for v in found if isinstance(v, SharedVariable)]
        shared += [s for s, _ in self.updates if s not in shared]
        given = set(self.inputs)
        for v in found:
            if not (isinstance(v, Constant | SharedVariable) or v in given):
                raise ArgumentError(f"function {self.name}: input {v} ({v.type}) is needed to "
                                    f"compute the outputs but is not among the inputs")
        if on_unused_input not in ("raise", "warn", "ignore"):
            raise ArgumentError(f"on_unused_input must be 'raise', 'warn' or 'ignore', not "
                                f"{on_unused_input!r}")
        used = set(found)
        for k, v in enumerate(self.inputs):
            if v not in used and on_unused_input != "ignore":
                msg = (f"function {self.name}: input {k} ({v}) is not used to compute the "
                       f"outputs; pass on_unused_input='ignore' to allow it")
                if on_unused_input == "raise":
                    raise ArgumentError(msg)
                warnings.warn(msg, stacklevel=4)
        return shared


def _input_filter(var, index, fname, allow_downcast):
    t = var.type
    dt, nd, plain = t.dtype, t.ndim, not any(t.broadcastable)
    what = f"input {index} ({var}) of function {fname or '<unnamed>'}"

    def filter(v):
        if type(v) is np.ndarray and v.dtype == dt and v.ndim == nd and plain:
            return v
        return t.filter(v, allow_downcast, what)
    return filter


def _thunk(fn, ins, outs, cells):
    """A callable running `fn` from the cells `ins` into the cells `outs`."""
    if len(outs) == 1:
        o = outs[0]
        if len(ins) == 1:
            i = ins[0]

            def run():
                cells[o] = fn(cells[i])
        elif len(ins) == 2:
            i, j = ins

            def run():
                cells[o] = fn(cells[i], cells[j])
        else:
            def run():
                cells[o] = fn(*[cells[k] for k in ins])
        return run

    def run_many():
        for k, v in zip(outs, fn(*[cells[k] for k in ins])):
            cells[k] = v
    return run_many


class Function:
    """A compiled function: f(*inputs) -> outputs. `f.maker.fgraph` is its graph."""

    def __init__(self, maker, profile=False, trust_input=False):
        self.maker = maker
        self.name = maker.name
        self.trust_input = trust_input
        fg = maker.fgraph
        order = fg.toposort()
        variables = []
        for v in [*fg.inputs, *(x for n in order for x in (*n.inputs, *n.outputs)),
                  *fg.outputs]:
            variables.append(v)
        consts = list(dict.fromkeys(v for v in variables if isinstance(v, Constant)))
        others = list(dict.fromkeys(v for v in variables if not isinstance(v, Constant)))
        index = {v: k for k, v in enumerate(consts + others)}
        self._cells = cells = [c.data for c in consts] + [None] * len(others)
        self._first = len(consts)
        self._blank = [None] * len(others)
        n_in = len(maker.inputs)
        self._in_cells = [index[v] for v in maker.inputs]
        self._filters = [_input_filter(v, k, maker.name, maker.allow_input_downcast)
                         for k, v in enumerate(maker.inputs)]
        self._shared_cells = [(index[v], v.container) for v in fg.inputs[n_in:]]
        n_out = len(maker.outputs)
        self._out_cells = [index[v] for v in fg.outputs[:n_out]]
        self._update_cells = [(s.container, index[v])
                              for (s, _), v in zip(maker.updates, fg.outputs[n_out:])]
        self._single = maker.single
        self._n_in = n_in
        self._names = {v.name: k for k, v in enumerate(maker.inputs) if v.name}
        self.profile = ProfileStats(self.name, order) if profile else None
        self._thunks = []
        for node in order:
            thunk = _thunk(node.op.fn(node), [index[v] for v in node.inputs],
                           [index[v] for v in node.outputs], cells)
            if self.profile is not None:
                thunk = self.profile.timed(node, thunk, [index[v] for v in node.outputs], cells)
            self._thunks.append(thunk)

    def __call__(self, *args, **kwargs):
        if kwargs:
            args = self._bind(args, kwargs)
        if len(args) != self._n_in:
            raise ArgumentError(f"function {self.name or '<unnamed>'} takes {self._n_in} "
                                f"input(s), got {len(args)}")
        t0 = time.perf_counter() if self.profile is not None else None
        cells = self._cells
        try:
            if self.trust_input:
                for k, a in zip(self._in_cells, args):
                    cells[k] = a
            else:
                for k, f, a in zip(self._in_cells, self._filters, args):
                    cells[k] = f(a)
            for k, c in self._shared_cells:
                cells[k] = c.value
            for t in self._thunks:
                t()
            outs = [cells[k] for k in self._out_cells]
            for c, k in self._update_cells:
                c.value = cells[k]
        finally:
            cells[self._first:] = self._blank
        if t0 is not None:
            self.profile.called(time.perf_counter() - t0)
        if self._single:
            return outs[0]
        return outs

    def _bind(self, args, kwargs):
        args = list(args) + [None] * (self._n_in - len(args))
        for key, value in kwargs.items():
            k = self._names.get(key)
            if k is None:
                raise ArgumentError(f"function {self.name} has no input named {key!r}")
            args[k] = value
        return args

    def __repr__(self):
        return f"<gpuarr.symbolic.Function {self.name or '<unnamed>'}>"

