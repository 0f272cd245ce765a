"""`function`: compile a graph into a callable.

Compilation (FunctionMaker) applies `givens`, then, as the mode says (mode.py): folds
constants and merges equal work, places every op (placement.py), rewrites the placed graph
for the device (rewrites.py), fuses elementwise chains and sums of them (fusion.py) and
adds the copies that keep outputs from aliasing. The schedule (schedule.py) makes
everything a call needs: the cells, the steps in their order, the in-place updates; a call
is: bind the arguments (defaults of `In` inputs, names), filter the inputs into their
cells, read the shared values, run the steps, collect the outputs, install the updates
(after every output and update value is computed, so all of them read the old values), and
clear the cells.
"""

import time
import warnings

import numpy as np

from .. import config
from ..context import get_context
from ..errors import ArgumentError, ArgumentTypeError
from .fgraph import FunctionGraph, rebuild, remake
from .fusion import fuse_elemwise, fuse_reductions
from .graph import Constant, Variable, as_variable, roots
from .mode import get_mode
from .placement import place
from .rewrites import check_no_cpu_op, device_rewrites, fold_and_merge, protect
from .schedule import Schedule
from .shared import SharedVariable, default_updates
from .types import location

__all__ = ["Function", "FunctionMaker", "In", "function"]


def function(inputs, outputs=None, mode=None, updates=None, givens=None,
             no_default_updates=False, name=None, profile=None, allow_input_downcast=None,
             on_unused_input="raise", trust_input=False):
    """Compile `outputs` as a function of `inputs`.

    inputs: variables, or `In(variable, value=..., name=...)` for defaults and names.
    outputs: a variable or a list of them (None: only updates); values come back as numpy
    arrays, or as GpuArrays for outputs marked with .transfer(ctx).
    mode: 'FAST_RUN' (default), 'FAST_COMPILE', 'DebugMode' or a Mode (mode.py).
    updates: (shared variable, new value) pairs or a dict, installed after each call.
    no_default_updates: True, or a list of shared variables, to leave out the default updates
    (a shared variable's `default_update`, e.g. a random stream advancing) of all or those.
    givens: {variable: replacement} substituted in the graph before compiling.
    profile: time each op and print a summary at exit (default: flag profile).
    """
    maker = FunctionMaker(inputs, outputs, updates, givens, name, allow_input_downcast,
                          on_unused_input, mode, no_default_updates)
    return Function(maker, bool(config.flags.profile if profile is None else profile),
                    trust_input)


class In:
    """An input of `function` with options: a default value, a name to pass it by, and
    whether outputs may alias it.

    Parameters
    ----------
    variable : Variable
        The free variable (T.vector(), ...) the argument gives a value to.
    name : str, optional
        The keyword that passes it (default: the variable's name).
    value : array_like, optional
        The default, used when a call leaves the input out (None: the input is required).
    borrow : bool
        True: an output that is this input (or a view of it) may be the argument itself
        rather than a copy.
    mutable : bool
        True: the function may overwrite the argument. Functions here never write into
        their arguments (host arrays are copied to the device), so this grants nothing.
    allow_downcast : bool, optional
        This input's allow_input_downcast (default: the function's).
    """

    def __init__(self, variable, name=None, value=None, borrow=False, mutable=False,
                 allow_downcast=None):
        if not isinstance(variable, Variable):
            raise ArgumentTypeError(f"In() takes a symbolic variable, got {variable!r}")
        if name is not None and not isinstance(name, str):
            raise ArgumentTypeError(f"In(name=) must be a string, not {name!r}")
        self.variable = variable
        self.name = variable.name if name is None else name
        self.value = value
        self.borrow = bool(borrow)
        self.mutable = bool(mutable)
        self.allow_downcast = allow_downcast

    def __repr__(self):
        return f"In({self.variable}{'' if self.value is None else ', value=...'})"


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
                 on_unused_input, mode=None, no_default_updates=False):
        self.name = name
        self.mode = get_mode(mode)
        self.allow_input_downcast = allow_input_downcast
        self.specs = self._check_inputs(inputs)
        self.inputs = [spec.variable for spec in self.specs]
        self.single = outputs is not None and not isinstance(outputs, list | tuple)
        outs = [] if outputs is None else [outputs] if self.single else list(outputs)
        self.outputs = [as_variable(o) for o in outs]
        self.updates = self._check_updates(updates)
        if no_default_updates is not True:
            skip = [s for s, _ in self.updates] + list(no_default_updates or ())
            self.updates += self._check_updates(
                default_updates(self.outputs + [v for _, v in self.updates], skip))
        replace = self._check_givens(givens)
        wanted = self.outputs + [v for _, v in self.updates]
        if replace:
            wanted = rebuild(wanted, remake, replace)[0]
        shared = self._check_roots(wanted, on_unused_input)
        mode = self.mode
        folded = fold_and_merge(wanted) if mode.rewrites else wanted
        where = [location(v.type.context) for v in folded[:len(self.outputs)]]
        where += [s.location for s, _ in self.updates]
        default = None if config.flags.device == "cpu" else get_context(None)
        placed = place(folded, where, default)
        if mode.rewrites:
            placed = device_rewrites(placed)
        if mode.fusion:
            placed = fuse_reductions(fuse_elemwise(placed))
        n = len(self.outputs)
        borrowed = [spec.variable for spec in self.specs if spec.borrow]
        outs, upds = protect(placed[:n], placed[n:], [*self.inputs, *shared], borrowed)
        self.shared = shared
        self.fgraph = FunctionGraph([*self.inputs, *shared], [*outs, *upds])
        check_no_cpu_op(self.fgraph.toposort(), config.flags.assert_no_cpu_op, name)

    def _check_inputs(self, inputs):
        """The inputs as In specs, checked."""
        if isinstance(inputs, Variable | In) or not isinstance(inputs, list | tuple):
            raise ArgumentTypeError(f"function inputs must be a list of variables, got "
                                    f"{type(inputs).__name__}")
        specs = [v if isinstance(v, In) else In(v) if isinstance(v, Variable) else v
                 for v in inputs]
        for k, spec in enumerate(specs):
            v = spec.variable if isinstance(spec, In) else spec
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
        if len({spec.variable for spec in specs}) != len(specs):
            raise ArgumentError(f"function {self.name}: an input appears twice")
        return specs

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


def _input_filter(spec, index, fname, allow_downcast):
    var = spec.variable
    t = var.type
    dt, nd, plain = t.dtype, t.ndim, not any(t.broadcastable)
    what = f"input {index} ({var}) of function {fname or '<unnamed>'}"
    if spec.allow_downcast is not None:
        allow_downcast = spec.allow_downcast

    def filter(v):
        if type(v) is np.ndarray and v.dtype == dt and v.ndim == nd and plain:
            return v
        return t.filter(v, allow_downcast, what)
    return filter


_MISSING = object()


class Function:
    """A compiled function: f(*inputs) -> outputs. `f.maker.fgraph` is its graph,
    `f.schedule` how a call runs it (schedule.py)."""

    def __init__(self, maker, profile=False, trust_input=False):
        self.maker = maker
        self.name = maker.name
        self.trust_input = trust_input
        fg = maker.fgraph
        n_in = len(maker.inputs)
        self.schedule = sched = Schedule(fg, n_in, [s for s, _ in maker.updates], maker.mode,
                                         profile, maker.name)
        self.profile = sched.profile
        self._filters = [_input_filter(spec, k, maker.name, maker.allow_input_downcast)
                         for k, spec in enumerate(maker.specs)]
        self._defaults = [_MISSING if spec.value is None else f(spec.value)
                          for f, spec in zip(self._filters, maker.specs)]
        self._required = sum(1 for d in self._defaults if d is _MISSING)
        self._single = maker.single
        self._n_in = n_in
        names = [spec.name for spec in maker.specs]
        # a name given to several inputs passes none of them (ambiguous)
        self._names = {n: (k if names.count(n) == 1 else None)
                       for k, n in enumerate(names) if n}

    def __call__(self, *args, **kwargs):
        if kwargs or len(args) != self._n_in:
            args = self._bind(args, kwargs)
        sched = self.schedule
        t0 = time.perf_counter() if sched.profile is not None else None
        cells = sched.cells
        try:
            if self.trust_input:
                for k, a in zip(sched.in_cells, args):
                    cells[k] = a
            else:
                for k, f, a in zip(sched.in_cells, self._filters, args):
                    cells[k] = f(a)
            for k, c in sched.shared_cells:
                cells[k] = c.value
            outs = None if sched.replays.why is not None else sched.replays.call(cells)
            if outs is None:
                for step in sched.steps:
                    step()
                outs = [cells[k] for k in sched.out_cells]
            for c, k in sched.update_cells:
                c.value = cells[k]
        finally:
            cells[sched.first:] = sched.blank
        if t0 is not None:
            sched.profile.called(time.perf_counter() - t0)
        if self._single:
            return outs[0]
        return outs

    def _bind(self, args, kwargs):
        """The arguments in input order: positional, then by name, then the defaults."""
        n = self._n_in
        if len(args) > n:
            raise ArgumentError(f"function {self.name or '<unnamed>'} takes {n} input(s), got "
                                f"{len(args)}")
        values = list(args) + [_MISSING] * (n - len(args))
        for key, value in kwargs.items():
            k = self._names.get(key, _MISSING)
            if k is _MISSING or k is None:
                why = ("several inputs have that name; rename them with In(variable, "
                       "name=...)" if k is None else
                       f"named: {', '.join(self._names) or 'none'}")
                raise ArgumentError(f"function {self.name or '<unnamed>'} has no input named "
                                    f"{key!r} ({why})")
            if values[k] is not _MISSING:
                raise ArgumentError(f"function {self.name or '<unnamed>'} got input {key!r} "
                                    f"twice (by position and by name)")
            values[k] = value
        for k, v in enumerate(values):
            if v is _MISSING:
                if self._defaults[k] is _MISSING:
                    raise ArgumentError(
                        f"function {self.name or '<unnamed>'} takes {n} input(s) "
                        f"({self._required} without a default), got {len(args)} positional "
                        f"and {len(kwargs)} named; input {k} "
                        f"({self.maker.inputs[k]}) has no value and no default")
                values[k] = self._defaults[k]
        return values

    def __repr__(self):
        return f"<gpuarr.symbolic.Function {self.name or '<unnamed>'}>"
