"""Elementwise engine: outputs = operation(inputs) as one cached OpenCL kernel.

Operands of any strides and offsets are broadcast to the output shape; dimensions that are
contiguous for every operand collapse into one; a fully contiguous call takes the kernel
variant without index arithmetic. Sizes, strides and scalars are kernel arguments, so one
build serves every shape and value. Where the driver compiles kernels lazily (PoCL), one
program holds every layout variant of a loop, and of its sibling ufuncs (see _kernel).
"""

import dataclasses
import functools
import math
import re

import numpy as np

from . import dtypes
from .errors import (
    ArgumentError,
    ArgumentTypeError,
    ContextMismatch,
    KernelBuildError,
    ShapeError,
)
from .kernels import get_program, kernel_from
from .launch import enqueue

__all__ = ["ElemwiseKernel", "Loop", "Siblings", "bind_arguments", "broadcast_shape", "collapse",
           "copy_loop", "lazy_kernels", "parse_arguments", "run", "run1", "run2", "run_plan"]

_INT32_MAX = 2**31 - 1


@dataclasses.dataclass(frozen=True)
class Loop:
    """The layout-independent part of an elementwise kernel.

    ins: (storage dtype name, loop dtype name, is_scalar) per input;
    outs: (storage dtype name, loop dtype name) per output;
    operation: OpenCL statements reading in0.., writing out0.. (may use the flat index i);
    scalar_args: (dtype name, argument name) of extra scalars the operation reads;
    siblings: None, or the Siblings of operations over the same operands whose kernels share
    one program with this loop's where kernels compile lazily (see lazy_kernels).
    """

    ins: tuple
    outs: tuple
    operation: str
    scalar_args: tuple = ()
    preamble: str = ""
    raw: bool = False
    siblings: object = None

    @functools.cached_property
    def has_scalars(self):
        return any(spec[2] for spec in self.ins)

    def __hash__(self):
        # Hashed on every launch (plan lookup): compute once.
        h = self.__dict__.get("_hash")
        if h is None:
            h = hash((self.ins, self.outs, self.operation, self.scalar_args, self.preamble,
                      self.raw, self.siblings))
            object.__setattr__(self, "_hash", h)
        return h


@dataclasses.dataclass(frozen=True)
class Siblings:
    """Operations (statements, one of them the loop's own) and the preamble they all need."""

    operations: tuple
    preamble: str


@functools.lru_cache(maxsize=1024)
def copy_loop(src_dtype, dst_dtype, scalar=False):
    """dst = src with numpy's unsafe cast (what copy, astype and setitem use)."""
    src, dst = np.dtype(src_dtype).name, np.dtype(dst_dtype).name
    return Loop(((src, src, scalar),), ((dst, src),), "out0 = in0;")


def lazy_kernels(ctx):
    """Whether ctx's driver compiles a program's kernels only at their first launch (PoCL on
    CPUs: building a program costs ~0.1 s whatever it holds, a kernel ~0.08 s at its first
    launch), so that one program may hold variants that are never launched at little cost."""
    return ctx.device.platform == "Portable Computing Language" and not ctx.device.is_gpu


def _element_strides(a, ndim):
    """`a`'s strides in elements, right-aligned to `ndim` dims; 0 where it broadcasts."""
    lead = ndim - a.ndim
    return [0] * lead + [0 if n == 1 else s // a.itemsize for n, s in zip(a.shape, a.strides)]


def collapse(shape, strides_list):
    """Drop size-1 dims and merge dims contiguous for every operand.

    Returns (dims, strides per operand); the C-order flat index is preserved.
    """
    keep = [d for d, n in enumerate(shape) if n != 1]
    dims = [shape[d] for d in keep]
    strides = [[s[d] for d in keep] for s in strides_list]
    k = len(dims) - 1
    while k > 0:
        if all(s[k - 1] == s[k] * dims[k] for s in strides):
            dims[k - 1] *= dims[k]
            del dims[k]
            for s in strides:
                s[k - 1] = s[k]
                del s[k]
        k -= 1
    return dims, strides


def _scalar_dtype(loop_dtype):
    ctype = dtypes.compute_type(loop_dtype)
    return {"float": np.float32, "double": np.float64, "uchar": np.uint8}.get(
        ctype, np.dtype(loop_dtype).type
    )


class _Plan:
    """Everything about a launch that depends only on (loop, shapes, strides), not on data.

    `launches` holds (launcher, global size, global offset): one on GPUs; on CPUs an
    unguarded kernel over the whole work-groups and a guarded one for the ragged tail,
    because PoCL vectorises across work-items only without the bounds check.
    """

    __slots__ = ("head", "launches", "local", "max_offset", "tails")

    def __init__(self, head, tails, max_offset, launches, local):
        self.head, self.tails, self.max_offset = head, tails, max_offset
        self.launches, self.local = launches, local


def _make_plan(ctx, loop, shape, arrays, wide=False):
    n = math.prod(shape)
    if n == 0:
        return None
    ndim = len(shape)
    dims, strides = collapse(shape, [_element_strides(a, ndim) for a in arrays])
    contiguous = len(dims) <= 1 and all(s in ([], [1]) for s in strides)
    # Offsets vary between calls of one plan: 32-bit indexing holds while every element
    # offset stays under max_offset, checked per call.
    spans = [sum(abs(x) * (d - 1) for x, d in zip(s, dims)) for s in strides]
    index_t = "long" if wide or max([n, *spans]) > _INT32_MAX else "int"
    max_offset = (_INT32_MAX - max(spans, default=0)) if index_t == "int" else 2**62
    kdim = 0 if contiguous else len(dims)
    per_item = ctx.per_item if contiguous else 1
    itype = np.int32 if index_t == "int" else np.int64
    arg_dtypes = [itype] * (1 + kdim) + [None, itype, *[itype] * kdim] * len(arrays)
    arg_dtypes += [_scalar_dtype(ldt) for _, ldt, s in loop.ins if s]
    arg_dtypes += [_scalar_dtype(d) for d, _ in loop.scalar_args]

    def kernel(guarded):
        key = ("elemwise", loop, kdim, per_item, guarded, index_t)
        return ctx.kernels.get(key) or _kernel(ctx, key, loop, (kdim, per_item, guarded),
                                               index_t, arg_dtypes)

    local = ctx.local_size
    launches = []
    bulk = n // local * local if per_item == 1 and ctx.device.type == "CPU" else 0
    if bulk:
        launches.append((kernel(False), (bulk,), None))
    if bulk < n:
        groups = -(-(n - bulk) // (local * per_item))
        launches.append((kernel(True), (groups * local,), (bulk,) if bulk else None))
    head = (n, *([] if contiguous else dims))
    tails = [() if contiguous else tuple(s) for s in strides]
    return _Plan(head, tails, max_offset, tuple(launches), (local,))


# Where kernels compile lazily, one program holds a loop's kernels for every layout up to
# this many collapsed dimensions (bulk and guarded): one build serves them all.
_FAMILY_NDIM = 4


def _kernel(ctx, key, loop, variant, index_t, arg_dtypes):
    """The kernel of `variant` (ndim, per_item, guarded) of `loop`, stored under `key`: from a
    program of its own, or, where kernels compile lazily, of the loop's layouts up to
    _FAMILY_NDIM dimensions, for its siblings' operations too (a program that fails to build
    with them is built again without)."""
    layouts = (variant,)
    groups = [((loop.operation,), loop.preamble)]
    if lazy_kernels(ctx):
        family = tuple((ndim, ctx.per_item if ndim == 0 else 1, guarded)
                       for ndim in range(_FAMILY_NDIM + 1) for guarded in (False, True))
        layouts = family if variant in family else layouts
        if loop.siblings is not None:
            groups.insert(0, (loop.siblings.operations, loop.siblings.preamble))
    for operations, preamble in groups:
        pkey = ("elemwise", loop.ins, loop.outs, loop.scalar_args, loop.raw, operations,
                preamble, layouts, index_t)
        if pkey in ctx.programs and ctx.programs[pkey] is None:
            continue  # the siblings' program failed to build before
        try:
            program = get_program(
                ctx, pkey, "elemwise.cl.mako", ins=loop.ins, outs=loop.outs,
                scalar_args=loop.scalar_args, index_t=index_t, preamble=preamble, raw=loop.raw,
                variants=[(_name(j, *v), *v, op) for j, op in enumerate(operations)
                          for v in layouts])
            break
        except KernelBuildError:
            if len(operations) == 1:
                raise
            ctx.programs[pkey] = None
    return kernel_from(ctx, key, program, _name(operations.index(loop.operation), *variant),
                       arg_dtypes)


def _name(op, ndim, per_item, guarded):
    return f"elemwise_{op}_{ndim}_{per_item}{'g' if guarded else 'u'}"


def run(loop, outputs, inputs, scalars=(), shape=None):
    """Enqueue `loop` over `shape` (default `outputs[0].shape`); operands broadcast to it.

    `inputs` holds a GpuArray for each array input and a Python/numpy number for each
    scalar input; `scalars` the values of `loop.scalar_args`. Returns the event. The launch
    plan (kernel, collapsed dims and strides) is cached per (loop, shapes, strides).
    """
    out0 = outputs[0]
    ctx = out0.storage.context
    if shape is None:
        shape = out0.shape
    if loop.has_scalars:
        reads = [a for a, spec in zip(inputs, loop.ins) if not spec[2]]
        scalars = [*[v for v, spec in zip(inputs, loop.ins) if spec[2]], *scalars]
    else:
        reads = inputs
    arrays = [*reads, *outputs]
    key = (loop, shape, *[v for a in arrays for v in (a.shape, a.strides)])
    plan = ctx.plans.get(key, False)
    if plan is False:
        plan = _new_plan(ctx, key, loop, shape, arrays)
    if plan is None:
        return None
    return run_plan(ctx, plan, loop, shape, arrays, scalars, len(reads))


def _new_plan(ctx, key, loop, shape, arrays):
    plan = ctx.plans[key] = _make_plan(ctx, loop, shape, arrays)
    return plan


def run_plan(ctx, plan, loop, shape, arrays, scalars, n_in):
    """Enqueue `plan` for `arrays` (the first `n_in` read, the rest written) and scalars."""
    args = [*plan.head]
    storages = []
    for a, tail in zip(arrays, plan.tails):
        offset = a.offset // a.dtype.itemsize
        if offset > plan.max_offset:  # past 32-bit indexing: a plan of its own, not kept
            plan = _make_plan(ctx, loop, shape, arrays, wide=True)
            return run_plan(ctx, plan, loop, shape, arrays, scalars, n_in)
        st = a.storage
        storages.append(st)
        args += (st, offset, *tail)
    args += scalars
    reads, writes = storages[:n_in], storages[n_in:]
    for launcher, size, offset in plan.launches:
        event = enqueue(ctx, launcher, size, plan.local, args, reads, writes, offset)
    return event


# The common calls of ufuncs, unrolled (list building dominates a small launch's host time):
# the keys are those `run` makes for the same operands.

def run1(loop, out, a, scalars=()):
    """run(loop, [out], inputs) where `a` is the one array input and `scalars` the values of
    the scalar inputs, in order."""
    ctx = out.storage.context
    shape = out.shape
    key = (loop, shape, a.shape, a.strides, shape, out.strides)
    plan = ctx.plans.get(key, False)
    if plan is False:
        plan = _new_plan(ctx, key, loop, shape, (a, out))
    if plan is None:
        return None
    oa, oo = a.offset // a.dtype.itemsize, out.offset // out.dtype.itemsize
    if oa > plan.max_offset or oo > plan.max_offset:
        return run_plan(ctx, plan, loop, shape, (a, out), scalars, 1)
    ta, to = plan.tails
    sa, so = a.storage, out.storage
    args = [*plan.head, sa, oa, *ta, so, oo, *to, *scalars]
    reads, writes = (sa,), (so,)
    for launcher, size, offset in plan.launches:
        event = enqueue(ctx, launcher, size, plan.local, args, reads, writes, offset)
    return event


def run2(loop, out, a, b):
    """run(loop, [out], [a, b]) for two array inputs."""
    ctx = out.storage.context
    shape = out.shape
    key = (loop, shape, a.shape, a.strides, b.shape, b.strides, shape, out.strides)
    plan = ctx.plans.get(key, False)
    if plan is False:
        plan = _new_plan(ctx, key, loop, shape, (a, b, out))
    if plan is None:
        return None
    oa, ob = a.offset // a.dtype.itemsize, b.offset // b.dtype.itemsize
    oo = out.offset // out.dtype.itemsize
    if oa > plan.max_offset or ob > plan.max_offset or oo > plan.max_offset:
        return run_plan(ctx, plan, loop, shape, (a, b, out), (), 2)
    ta, tb, to = plan.tails
    sa, sb, so = a.storage, b.storage, out.storage
    args = [*plan.head, sa, oa, *ta, sb, ob, *tb, so, oo, *to]
    reads, writes = (sa, sb), (so,)
    for launcher, size, offset in plan.launches:
        event = enqueue(ctx, launcher, size, plan.local, args, reads, writes, offset)
    return event


class ElemwiseKernel:
    """A user elementwise kernel in pyopencl's form, on arrays of any strides.

        k = ElemwiseKernel("float *x, float a, float *y", "y[i] = a * exp(x[i])")
        k(x, 2.0, y)

    Arrays are read and written as name[i], i being the flat index of the element in the
    broadcast shape of all array arguments; scalars are kernel arguments.

    Parameters
    ----------
    arguments : str
        OpenCL C argument list: `type *name` is an array (a GpuArray of exactly that
        dtype), `type name` a scalar converted to that type at each call. Types: `char`,
        `uchar`, `short`, `ushort`, `int`, `uint`, `long`, `ulong`, `half`, `float`,
        `double`, `float2`, `double2`.
    operation : str
        OpenCL C statement(s) run once per element, reading and writing `name[i]`.
    name : str
        The kernel's name in errors and build logs.
    preamble : str
        OpenCL C placed before the kernel (helper functions, macros).
    context : Context, optional
        Only arrays of this context are accepted (default: any; the kernel is built once
        per context it meets).

    Raises
    ------
    ArgumentError
        An argument that does not parse, a reserved name (`i`, `ga_*`, `in<k>*`,
        `out<k>*`), no array argument, or a call with the wrong number of values.
    ArgumentTypeError
        A call whose array is not a GpuArray of the declared dtype.
    ShapeError
        Array arguments that do not broadcast together.

    Examples
    --------
    >>> k = ga.ElemwiseKernel("float *x, float a, float *y", "y[i] = a * x[i] + 1")
    >>> x = ga.asarray(np.arange(4, dtype=np.float32))
    >>> y = ga.empty(4, dtype=np.float32)
    >>> _ = k(x, 2.0, y)
    >>> y.get()
    array([1., 3., 5., 7.], dtype=float32)
    """

    def __init__(self, arguments, operation, name="kernel", preamble="", context=None):
        self.name = name
        self.context = context
        self.args = parse_arguments(arguments, name)
        arrays = [(v, dt) for v, dt, is_array in self.args if is_array]
        for k, (var, _) in enumerate(arrays):
            operation = re.sub(rf"\b{re.escape(var)}\s*\[\s*i\s*\]", f"out{k}_p[out{k}_i]",
                               operation)
        self.loop = Loop(
            (), tuple((dt.name, dt.name) for _, dt in arrays), operation.strip().rstrip(";") + ";",
            scalar_args=tuple((dt.name, v) for v, dt, is_array in self.args if not is_array),
            preamble=preamble, raw=True,
        )

    def __call__(self, *values):
        arrays, scalars, _ = bind_arguments(self.name, self.args, values, self.context)
        shape = broadcast_shape([a.shape for a in arrays])
        return run(self.loop, arrays, [], scalars, shape=shape)


_ARG_RE = re.compile(r"(?:const\s+)?(?:__global\s+|global\s+)?(?P<type>[A-Za-z_][\w ]*?)"
                     r"(?:\s*(?P<star>\*)\s*|\s+)(?P<name>[A-Za-z_]\w*)")
# Names the generated kernel uses itself.
_RESERVED_RE = re.compile(r"i|ga_\w*|(?:in|out)\d+\w*")


def parse_arguments(arguments, name):
    """A user kernel's argument list ('float *x, int n') as [(name, dtype, is_array)]."""
    args = []
    for item in filter(None, (a.strip() for a in arguments.split(","))):
        m = _ARG_RE.fullmatch(item)
        if m is None:
            raise ArgumentError(f"cannot parse kernel argument {item!r} of {name}: "
                                f"expected e.g. 'float *x' or 'int n'")
        ctype, star, var = m.group("type"), m.group("star"), m.group("name")
        if _RESERVED_RE.fullmatch(var):
            raise ArgumentError(f"argument name {var!r} of {name} is reserved (i, ga_*, "
                                f"in<k>*, out<k>* name the kernel's own variables)")
        args.append((var, dtypes.from_cl_type(ctype), bool(star)))
    if not any(is_array for _, _, is_array in args):
        raise ArgumentError(f"kernel {name} needs at least one array argument")
    return args


def bind_arguments(name, args, values, context=None):
    """Check a user kernel's call: (arrays, scalar values, context) or a clear error."""
    if len(values) != len(args):
        raise ArgumentError(f"kernel {name} takes {len(args)} arguments "
                            f"({', '.join(a[0] for a in args)}), got {len(values)}")
    arrays, scalars = [], []
    for (var, dt, is_array), v in zip(args, values):
        if is_array:
            if getattr(v, "dtype", None) != dt or not hasattr(v, "storage"):
                raise ArgumentTypeError(f"argument {var} of {name} must be a GpuArray "
                                        f"of dtype {dt}, got {type(v).__name__} of "
                                        f"{getattr(v, 'dtype', None)}")
            arrays.append(v)
        else:
            scalars.append(_kernel_scalar_value(v, dt))
    ctx = arrays[0].context
    for a in arrays[1:]:
        if a.context is not ctx:
            raise ContextMismatch(f"kernel {name}: arrays on {ctx.devname} and "
                                  f"{a.context.devname}")
    if context is not None and context is not ctx:
        raise ContextMismatch(f"kernel {name} was made for {context.devname}, "
                              f"called on arrays of {ctx.devname}")
    return arrays, scalars, ctx


def _kernel_scalar_value(value, dtype):
    if dtype == np.float16:
        return np.float32(np.float16(value))
    return dtype.type(value)


def broadcast_shape(shapes):
    """numpy's broadcast of a list of shapes, or ShapeError naming them."""
    ndim = max(map(len, shapes))
    out = [1] * ndim
    for shape in shapes:
        for k, n in enumerate(shape, ndim - len(shape)):
            if n != 1:
                if out[k] not in (1, n):
                    raise ShapeError("operands could not be broadcast together with shapes "
                                     + " ".join(map(str, shapes)))
                out[k] = n
    return tuple(out)
