"""`fuse`: trace a function of arrays and scalars into ONE elementwise kernel.

    @ga.fuse
    def step(a, b):
        return a * b + ga.exp(a) - b, a - b      # reads a and b once, two outputs

The function runs once per (input dtypes, which inputs are scalars) on symbols: every ufunc
call records itself with the loop dtypes numpy's resolution gives, and the records become the
statements of one kernel. Python scalars (arguments or constants in the body) are weak, as in
numpy, and travel as kernel arguments.
"""

import functools
import numbers

import numpy as np

from . import dtypes, elemwise
from .array import GpuArray, _upload, check_same_context
from .context import get_context
from .errors import ArgumentError, UnsupportedError
from .kernels import cltypes, render, ufunc_ops
from .ufuncs import Symbol, _converter, broadcast_shapes


class _Traced(Symbol):
    """One value of the traced function: an input, a constant or an intermediate result."""

    __array_priority__ = 200

    def __init__(self, tracer, dtype, code):
        self.tracer = tracer
        self.dtype = dtype  # np.dtype, or a Python type for a weak scalar
        self.code = code    # OpenCL expression naming the value

    def record(self, ufunc, args):
        return self.tracer.record(ufunc, args)

    def __array_ufunc__(self, np_ufunc, method, *inputs, **kwargs):
        from .ufuncs import UFUNCS

        uf = UFUNCS.get(np_ufunc.__name__)
        if method != "__call__" or uf is None or kwargs:
            return NotImplemented
        return self.tracer.record(uf, inputs)

    def __bool__(self):
        raise ArgumentError("a fused function cannot branch on array values; use ga.where")


class _Tracer:
    """Records ufunc calls into statements, scalar arguments and helper functions."""

    def __init__(self):
        self.statements = []
        self.scalar_args = []  # (loop dtype name, argument name)
        self.scalar_sources = []  # ('input', k) or ('const', value), per scalar argument
        self.helpers = []

    def value(self, v, loop_dtype):
        """OpenCL expression of operand `v` in `loop_dtype`."""
        if isinstance(v, _Traced):
            if isinstance(v.dtype, type):  # weak scalar input: a kernel argument per use
                return self._scalar(("input", v.code), loop_dtype)
            return cltypes.convert(v.dtype.name, loop_dtype, v.code)
        if isinstance(v, numbers.Number | np.generic):
            return self._scalar(("const", v), loop_dtype)
        raise ArgumentError(f"fused functions take arrays and scalars, not {type(v).__name__}")

    def _scalar(self, source, loop_dtype):
        name = f"s{len(self.scalar_args)}"
        compute = "float32" if loop_dtype == "float16" else loop_dtype
        self.scalar_args.append((compute, name))
        self.scalar_sources.append((source, compute))
        return cltypes.convert(compute, loop_dtype, name) if compute != loop_dtype else name

    def record(self, ufunc, args):
        if len(args) != ufunc.nin:
            raise ArgumentError(f"{ufunc.name} takes {ufunc.nin} inputs, got {len(args)}")
        types = tuple(_type_of(a) for a in args)
        loops, out_loop = ufunc.resolve(types)
        found = ufunc_ops.expression(
            ufunc.name, [self.value(a, ldt) for a, ldt in zip(args, loops)],
            loops[ufunc.kind_input])
        if found is None:
            raise UnsupportedError(f"{ufunc.name} is not supported for dtype "
                                   f"{loops[ufunc.kind_input]} on gpuarr")
        expr, helpers = found
        self.helpers += [h for h in helpers if h not in self.helpers]
        name = f"t{len(self.statements)}"
        self.statements.append(f"const {cltypes.ctype(out_loop)} {name} = {expr};")
        return _Traced(self, np.dtype(out_loop), name)


def _type_of(v):
    if isinstance(v, _Traced):
        return v.dtype
    if isinstance(v, bool | int | float | complex):
        return type(v)
    return np.asarray(v).dtype


class Fused:
    """A function traced into one kernel per (input dtypes, scalar pattern); call it on arrays."""

    def __init__(self, fn):
        functools.update_wrapper(self, fn)
        self.fn = fn
        self._cache = {}

    def __call__(self, *args):
        arrays = [a for a in args if isinstance(a, GpuArray)]
        ctx = check_same_context(*arrays) if arrays else get_context()
        args = [_upload(a, ctx) if isinstance(a, np.ndarray) and a.ndim else a for a in args]
        types = tuple(a.dtype if isinstance(a, GpuArray) else _type_of(a) for a in args)
        key = (ctx, types, tuple(isinstance(a, GpuArray) for a in args))
        entry = self._cache.get(key)
        if entry is None:
            entry = self._cache[key] = self._trace(args, ctx)
        loop, array_positions, scalar_sources, out_dtypes, single = entry
        shape = broadcast_shapes(*(args[k].shape for k in array_positions))
        outs = [GpuArray(shape, dt, context=ctx) for dt in out_dtypes]
        scalars = [_converter(dt)(args[src[1]] if src[0] == "input" else src[1])
                   for src, dt in scalar_sources]
        elemwise.run(loop, outs, [args[k] for k in array_positions], scalars)
        return outs[0] if single else tuple(outs)

    def _trace(self, args, ctx):
        tracer = _Tracer()
        symbols, array_positions = [], []
        for k, a in enumerate(args):
            if isinstance(a, GpuArray):
                symbols.append(_Traced(tracer, a.dtype, f"in{len(array_positions)}"))
                array_positions.append(k)
            else:
                t = _type_of(a)
                symbols.append(_Traced(tracer, t, k) if isinstance(t, type)
                               else _Traced(tracer, t, None))
        for s in symbols:
            if s.code is None:  # numpy scalar argument: a strong-typed kernel argument
                s.code = tracer._scalar(("input", symbols.index(s)), s.dtype.name)
        result = self.fn(*symbols)
        single = not isinstance(result, tuple)
        results = (result,) if single else result
        outs, assigns = [], []
        for j, r in enumerate(results):
            if not isinstance(r, _Traced) or isinstance(r.dtype, type):
                raise ArgumentError(f"fused function {self.__name__} must return arrays "
                                    f"computed from its array inputs, got {r!r}")
            outs.append((r.dtype.name, r.dtype.name))
            assigns.append(f"out{j} = {r.code};")
        for dt in [o[0] for o in outs] + [a.dtype.name for a in args if isinstance(a, GpuArray)]:
            dtypes.check_device(dt, ctx)
        ins = tuple((args[k].dtype.name, args[k].dtype.name, False) for k in array_positions)
        preamble = render("ufunc_helpers.cl.mako", helpers=tuple(tracer.helpers)) \
            if tracer.helpers else ""
        loop = elemwise.Loop(ins, tuple(outs), "\n    ".join(tracer.statements + assigns),
                             scalar_args=tuple(tracer.scalar_args), preamble=preamble)
        return (loop, array_positions, tracer.scalar_sources,
                [np.dtype(o[0]) for o in outs], single)


def fuse(fn=None):
    """Decorator: run `fn` (written with gpuarr/numpy ufuncs) as one elementwise kernel."""
    if fn is None:
        return fuse
    return Fused(fn)
