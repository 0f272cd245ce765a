"""`fuse`: trace a function of arrays and scalars into ONE elementwise kernel.

    @ga.fuse
    def step(a, b):
        return a * b + ga.exp(a) - b, a - b      # reads a and b once, two outputs

The function runs once per (input dtypes, which inputs are scalars) on symbols: every ufunc
call records itself with the loop dtypes numpy's resolution gives, and the records become the
statements of one kernel. Scalars never enter the source: a scalar operand is computed on the
host at each call (Python scalars stay weak as in numpy, even combined with each other) and
reaches the kernel as an argument, so new values reuse the kernel.
"""

import functools
import numbers

import numpy as np

from . import dtypes, elemwise
from .base import ArrayBase, check_same_context, to_device
from .context import get_context
from .errors import ArgumentError, UnsupportedError
from .kernels import cltypes, render, ufunc_ops
from .ufuncs import Symbol, broadcast_shapes, lookup, scalar_converter, weak_type

__all__ = ["Fused", "fuse"]


class _Traced(Symbol):
    """A value of the traced function.

    Device values (array inputs and results) have a numpy dtype and an OpenCL expression;
    scalars have `host`, a function of the call's arguments giving their value, and the
    type numpy's resolution sees (int/float/complex when weak, else a dtype).
    """

    __array_priority__ = 200

    def __init__(self, tracer, dtype, code=None, host=None):
        self.tracer = tracer
        self.dtype = dtype
        self.code = code
        self.host = host

    def record(self, ufunc, args):
        return self.tracer.record(ufunc, args)

    def __array_ufunc__(self, np_ufunc, method, *inputs, **kwargs):
        uf = lookup(np_ufunc.__name__)
        if method != "__call__" or uf is None or kwargs:
            return NotImplemented
        return self.tracer.record(uf, inputs)

    def __bool__(self):
        raise ArgumentError("a fused function cannot branch on array values; use ga.where")

    def astype(self, dtype):
        """The value cast to `dtype` (numpy's unsafe cast), inside the kernel."""
        return self.tracer.cast(self, dtypes.normalize(dtype))


class _Tracer:
    """Records ufunc calls into statements, scalar arguments and helper functions."""

    def __init__(self):
        self.statements = []
        self.scalar_args = []  # (compute dtype name, argument name)
        self.scalar_sources = []  # (host function of the call's arguments, compute dtype)
        self.helpers = []

    def constant(self, v):
        if not isinstance(v, numbers.Number | np.generic):
            raise ArgumentError(f"fused functions take arrays and scalars, not "
                                f"{type(v).__name__}")
        return _Traced(self, weak_type(v), host=lambda args: v)

    def operand(self, v, loop_dtype):
        """OpenCL expression of operand `v` in `loop_dtype`."""
        if v.host is None:
            return cltypes.convert(v.dtype.name, loop_dtype, v.code)
        name = f"s{len(self.scalar_args)}"
        compute = "float32" if loop_dtype == "float16" else loop_dtype
        self.scalar_args.append((compute, name))
        self.scalar_sources.append((v.host, compute))
        return cltypes.convert(compute, loop_dtype, name) if compute != loop_dtype else name

    def record(self, ufunc, args):
        if len(args) != ufunc.nin:
            raise ArgumentError(f"{ufunc.name} takes {ufunc.nin} inputs, got {len(args)}")
        args = [a if isinstance(a, _Traced) else self.constant(a) for a in args]
        if all(a.host is not None for a in args):
            return self._host_result(ufunc, args)
        loops, out_loop = ufunc.resolve(tuple(a.dtype for a in args))
        found = ufunc_ops.expression(
            ufunc.name, [self.operand(a, ldt) for a, ldt in zip(args, loops)],
            loops[ufunc.kind_input], loops)
        if found is None:
            raise UnsupportedError(f"{ufunc.name} is not supported for dtype "
                                   f"{loops[ufunc.kind_input]} on gpuarr")
        expr, helpers = found
        self.helpers += [h for h in helpers if h not in self.helpers]
        name = f"t{len(self.statements)}"
        self.statements.append(f"const {cltypes.ctype(out_loop)} {name} = {expr};")
        return _Traced(self, np.dtype(out_loop), code=name)

    def cast(self, v, dt):
        if v.host is not None:
            host = v.host
            return _Traced(self, dt, host=lambda args: np.asarray(host(args)).astype(dt)[()])
        name = f"t{len(self.statements)}"
        self.statements.append(f"const {cltypes.ctype(dt.name)} {name} = "
                               f"{cltypes.convert(v.dtype.name, dt.name, v.code)};")
        return _Traced(self, dt, code=name)

    def _host_result(self, ufunc, args):
        """An operation on scalars only: computed on the host at each call, as numpy
        would (the result stays weak when every operand is a weak Python scalar)."""
        weak = all(isinstance(a.dtype, type) for a in args)
        np_ufunc = ufunc.np_ufunc or np.where
        hosts = [a.host for a in args]

        def host(call_args):
            value = np_ufunc(*(h(call_args) for h in hosts))
            return value.item() if weak else value
        sample = np_ufunc(*(_sample(a.dtype) for a in args))
        return _Traced(self, weak_type(sample.item() if weak else sample), host=host)


def _sample(t):
    return {int: 1, float: 1.0, complex: 1j}.get(t) if isinstance(t, type) else t.type(1)


def _scalar_type(v):
    return weak_type(v) if isinstance(v, numbers.Number | np.generic) else None


class Fused:
    """A function traced into one kernel per (input dtypes, scalar pattern); call it on arrays."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._cache = {}

    def __call__(self, *args):
        arrays = [a for a in args if isinstance(a, ArrayBase)]
        ctx = check_same_context(*arrays) if arrays else get_context()
        args = [to_device(a, ctx) if isinstance(a, np.ndarray) and a.ndim else a for a in args]
        key = (ctx, tuple(a.dtype if isinstance(a, ArrayBase) else _scalar_type(a) for a in args))
        entry = self._cache.get(key)
        if entry is None:
            loop, positions, sources, out_dtypes, single = self._trace(args, ctx)
            out_dtypes = tuple(dtypes.check_device(dt, ctx) for dt in out_dtypes)
            sources = tuple((host, scalar_converter(dt)) for host, dt in sources)
            entry = self._cache[key] = (loop, positions, sources, out_dtypes, single)
        loop, array_positions, scalar_sources, out_dtypes, single = entry
        shape = broadcast_shapes(*(args[k].shape for k in array_positions))
        outs = [ArrayBase._empty(ctx, shape, dt) for dt in out_dtypes]
        scalars = [convert(host(args)) for host, convert in scalar_sources]
        elemwise.run(loop, outs, [args[k] for k in array_positions], scalars)
        return outs[0] if single else tuple(outs)

    def _trace(self, args, ctx):
        tracer = _Tracer()
        symbols, array_positions = [], []
        for k, a in enumerate(args):
            if isinstance(a, ArrayBase):
                symbols.append(_Traced(tracer, a.dtype, code=f"in{len(array_positions)}"))
                array_positions.append(k)
            elif isinstance(a, numbers.Number | np.generic):
                symbols.append(_Traced(tracer, weak_type(a),
                                       host=lambda call_args, k=k: call_args[k]))
            else:
                raise ArgumentError(f"fused function {self.__name__} takes arrays and scalars, "
                                    f"not {type(a).__name__}")
        result = self.fn(*symbols)
        single = not isinstance(result, tuple)
        results = (result,) if single else result
        outs, assigns = [], []
        for j, r in enumerate(results):
            if not isinstance(r, _Traced) or r.host is not None:
                raise ArgumentError(f"fused function {self.__name__} must return arrays "
                                    f"computed from its array inputs, got {r!r}")
            outs.append((r.dtype.name, r.dtype.name))
            assigns.append(f"out{j} = {r.code};")
        for dt in [o[0] for o in outs] + [args[k].dtype.name for k in array_positions]:
            dtypes.check_device(dt, ctx)
        ins = tuple((args[k].dtype.name, args[k].dtype.name, False) for k in array_positions)
        preamble = render("ufunc_helpers.cl.mako", helpers=tuple(tracer.helpers)) \
            if tracer.helpers else ""
        loop = elemwise.Loop(ins, tuple(outs), "\n    ".join(tracer.statements + assigns),
                             scalar_args=tuple(tracer.scalar_args), preamble=preamble)
        return (loop, array_positions, tracer.scalar_sources,
                [np.dtype(o[0]) for o in outs], single)


def fuse(fn=None):
    """Decorator: run `fn` (written with gpuarr/numpy ufuncs) as one elementwise kernel.

    `fn` takes arrays and scalars and returns one array or a tuple of arrays, built from
    ufuncs, operators and `where`. It is traced once per input dtypes and pattern of scalar
    arguments; scalars become kernel arguments, so new values reuse the kernel. Inputs
    broadcast as in numpy, result dtypes are numpy's for the same calls.

    Parameters
    ----------
    fn : callable
        The function to fuse; `fuse()` with no argument returns the decorator.

    Returns
    -------
    Fused
        A callable: arrays (GpuArrays of one context; numpy arrays are copied there) and
        scalars in, new GpuArrays out.

    Examples
    --------
    >>> @ga.fuse
    ... def axpy(a, x, y):
    ...     return a * x + y
    >>> x = ga.asarray(np.arange(3, dtype=np.float32))
    >>> axpy(2.0, x, x).get()
    array([0., 3., 6.], dtype=float32)
    """
    if fn is None:
        return fuse
    return Fused(fn)
