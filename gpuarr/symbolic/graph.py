"""The graph: types, variables, constants, applied ops, the Op base classes, graph walks.

A variable here is the record (type, owner, index, name); its operators and methods
(`x + y`, `x.sum()`, `x.T`, `x.eval()`) need the ops and `function`, so the classes that
carry them are declared above those, in variables.py (TensorVariable, TensorConstant,
TensorSharedVariable), and register themselves: constructing `Variable`, `Constant` or
`SharedVariable` (as Apply, TensorType and as_variable do) builds the registered class.

An `Apply` node is an op applied to input variables, giving output variables; a variable
without an owner is a root (an input, a shared variable or a constant). Ops compare by
their `__props__`, so two equal ops on the same inputs compute the same values.

Every op is written once (its make_node, its computation over a namespace `xp`, its
gradient) and `op_pair` generates the host class (computes with numpy) and the Gpu class
(computes with gpuarr on one context) from it.
"""

import copy
import numbers
import types

import numpy as np

from .. import dtypes
from ..array import GpuArray
from ..errors import ArgumentTypeError, ShapeError, UnsupportedError
from ..ufuncs import Symbol
from .types import HOST, location_name

__all__ = [
    "Apply", "Constant", "GpuOp", "HostOp", "Op", "TensorType", "Variable", "as_variable",
    "clients", "op_pair", "roots", "toposort",
]

_KINDS = {(): "scalar", (False,): "vector", (False, False): "matrix", (True, False): "row",
          (False, True): "col", (False,) * 3: "tensor3", (False,) * 4: "tensor4"}


class TensorType:
    """dtype, broadcastable pattern (True: the dimension has length 1) and context name."""

    __slots__ = ("broadcastable", "context", "dtype")

    def __init__(self, dtype, broadcastable, context=HOST):
        self.dtype = dtypes.normalize(dtype)
        self.broadcastable = tuple(bool(b) for b in broadcastable)
        self.context = context

    ndim = property(lambda self: len(self.broadcastable))
    on_host = property(lambda self: isinstance(self.context, str) and self.context == HOST)

    def _key(self):
        return (self.dtype, self.broadcastable, self.context)

    def __eq__(self, other):
        return isinstance(other, TensorType) and self._key() == other._key()

    def __hash__(self):
        return hash(self._key())

    def clone(self, dtype=None, broadcastable=None, context=False):
        return TensorType(self.dtype if dtype is None else dtype,
                          self.broadcastable if broadcastable is None else broadcastable,
                          self.context if context is False else context)

    def __call__(self, name=None):
        """A new variable of this type."""
        return Variable(self, name=name)

    @property
    def kind(self):
        return _KINDS.get(self.broadcastable) or f"{self.ndim}d{self.broadcastable}"

    def __repr__(self):
        if self.on_host:
            return f"TensorType({self.dtype}, {self.kind})"
        return f"GpuArrayType<{self.context}>({self.dtype}, {self.kind})"

    def filter(self, value, allow_downcast=None, what="value"):
        """`value` as a numpy array of this type, or ArgumentTypeError saying why not.

        numpy data must cast safely unless allow_downcast; Python data (scalars, lists) may
        also go from float to a smaller float or keep its value exactly, as Theano allowed.
        """
        if isinstance(value, GpuArray):
            value = value.get()
        if isinstance(value, np.ndarray | np.generic):
            arr = np.asarray(value)
            if arr.dtype != self.dtype:
                if not (allow_downcast or np.can_cast(arr.dtype, self.dtype, "safe")):
                    raise ArgumentTypeError(
                        f"{what}: {self} cannot hold a value of dtype {arr.dtype} without "
                        f"risking loss of precision; cast it to {self.dtype} or pass "
                        f"allow_input_downcast=True")
                arr = arr.astype(self.dtype)
        else:
            try:
                src = np.asarray(value)
            except (TypeError, ValueError) as e:
                raise ArgumentTypeError(f"{what}: expected array data for {self}, got "
                                        f"{type(value).__name__} ({e})") from None
            if src.dtype.kind not in "biufc":
                raise ArgumentTypeError(f"{what}: expected numbers for {self}, got "
                                        f"{type(value).__name__} of dtype {src.dtype}")
            with np.errstate(all="ignore"):
                arr = src.astype(self.dtype)
            ok = (allow_downcast or np.can_cast(src.dtype, self.dtype, "safe")
                  or (allow_downcast is None and (
                      (src.dtype.kind == "f" and self.dtype.kind in "fc")
                      or np.array_equal(arr, src))))
            if not ok:
                raise ArgumentTypeError(f"{what}: {self} cannot hold {value!r} ({src.dtype}) "
                                        f"without loss; cast it or pass allow_input_downcast=True")
        if arr.ndim != self.ndim:
            raise ArgumentTypeError(f"{what}: expected {self.ndim} dimension(s) for {self}, got "
                                    f"an array of shape {arr.shape} ({arr.ndim} dimensions)")
        for d, (b, n) in enumerate(zip(self.broadcastable, arr.shape)):
            if b and n != 1:
                raise ShapeError(f"{what}: dimension {d} of {self} is broadcastable and must "
                                 f"have length 1, got shape {arr.shape}")
        return arr




# {record class: the class with methods that constructing the record builds} (variables.py)
_CONCRETE = {}


class Variable(Symbol):
    """A symbolic value: its type, and the node computing it (None for a root)."""

    __array_priority__ = 300  # numpy, GpuArray and gpuarr's ufuncs defer to variables
    # == stays identity (variables are dict keys, as in Theano; T.eq compares values)
    __eq__ = object.__eq__
    __ne__ = object.__ne__
    __hash__ = object.__hash__

    def __init_subclass__(cls, concrete_for=None, **kwargs):
        """`class TensorVariable(..., Variable, concrete_for=Variable)`: constructing
        Variable builds TensorVariable from now on."""
        super().__init_subclass__(**kwargs)
        if concrete_for is not None:
            _CONCRETE[concrete_for] = cls

    def __new__(cls, *args, **kwargs):
        return object.__new__(_CONCRETE.get(cls, cls))

    def __init__(self, type, owner=None, index=None, name=None):
        self.type = type
        self.owner = owner
        self.index = index
        self.name = name
        self.tag = types.SimpleNamespace()

    dtype = property(lambda self: self.type.dtype)
    ndim = property(lambda self: self.type.ndim)
    broadcastable = property(lambda self: self.type.broadcastable)

    def __bool__(self):
        raise ArgumentTypeError(f"symbolic variable {self} has no truth value; use T.switch "
                                f"or T.where to choose between values")

    def __iter__(self):
        raise ArgumentTypeError(f"symbolic variable {self} is not iterable")

    def __str__(self):
        if self.name is not None:
            return self.name
        if self.owner is not None:
            op = str(self.owner.op)
            return op if len(self.owner.outputs) == 1 else f"{op}.{self.index}"
        return f"<{self.type}>"

    __repr__ = __str__


class Constant(Variable):
    """A fixed value: numpy data (or a GpuArray), or a weak Python scalar.

    Python scalars stay weak as in numpy 2 (`x * 2` keeps x's dtype); numpy values are
    strong (an np.float64 promotes a float32 operand).
    """

    def __init__(self, type, data, weak=False, name=None):
        super().__init__(type, name=name)
        self.data = data
        self.weak = weak

    @property
    def host_data(self):
        """The value on the host: a numpy array, or a Python scalar when weak."""
        return self.data.get() if isinstance(self.data, GpuArray) else self.data

    def signature(self):
        """A key equal for equal small host constants (for merging), else the identity."""
        if isinstance(self.data, GpuArray) or np.size(self.data) > 64:
            return id(self)
        data = self.data if self.weak else self.data.tobytes()
        return (self.type, self.weak, type(self.data), data)

    def __str__(self):
        if self.name is not None:
            return self.name
        if isinstance(self.data, GpuArray):
            return f"GpuArrayConstant{{{self.data.shape}}}"
        text = np.array2string(np.asarray(self.data), threshold=6, separator=",")
        return f"Constant{{{text}}}"

    __repr__ = __str__


_WEAK = (int, float, complex, bool)


def as_variable(x, name=None):
    """x as a Variable: variables unchanged, data as a Constant (Python scalars weak)."""
    if isinstance(x, Variable):
        return x
    if isinstance(x, GpuArray):
        return Constant(TensorType(x.dtype, [n == 1 for n in x.shape],
                                   location_name(x.context)), x, name=name)
    if type(x) in _WEAK:
        return Constant(TensorType(dtypes.default_for(x), ()), x, weak=True, name=name)
    if isinstance(x, np.ndarray | np.generic | numbers.Number | list | tuple):
        try:
            arr = np.asarray(x, dtype=dtypes.default_for(x))
        except (TypeError, ValueError) as e:
            raise ArgumentTypeError(f"cannot make a constant of {x!r}: {e}") from None
        return Constant(TensorType(arr.dtype, [n == 1 for n in arr.shape]), arr, name=name)
    raise ArgumentTypeError(f"expected a symbolic variable or array data, got "
                            f"{type(x).__name__}: {x!r}")


class Apply:
    """`op` applied to `inputs`, giving `outputs` (new variables of `output_types`)."""

    __slots__ = ("inputs", "op", "outputs")

    def __init__(self, op, inputs, output_types):
        self.op = op
        self.inputs = list(inputs)
        self.outputs = [Variable(t, self, k) for k, t in enumerate(output_types)]

    @property
    def out(self):
        return self.outputs[0]

    def __repr__(self):
        return f"{self.op}({', '.join(str(i) for i in self.inputs)})"


class Op:
    """Base of every op: equality by `__props__`; subclasses define make_node, make_fn
    (the computation over numpy or gpuarr) and grad."""

    __props__ = ()
    view = False  # outputs may share memory with inputs
    shape_only = ()  # inputs read only for their shape: any location will do
    host_inputs = ()  # inputs that must be host values (indices)
    host_scalars = ()  # 0-d host inputs a Gpu op takes as they are ("all" for every input)
    gpu_class = None  # the Gpu version of a host op, set by op_pair
    # its device commands follow from the shapes, dtypes and layouts of its inputs, the host
    # values it takes and the flags (no state of its own, no reads of device data): a
    # compiled function may replay them (replay.py)
    replayable = False

    def _props(self):
        return tuple(getattr(self, p) for p in self.__props__)

    def __eq__(self, other):
        return type(self) is type(other) and self._props() == other._props()

    def __hash__(self):
        return hash((type(self), self._props()))

    def __call__(self, *inputs):
        node = self.make_node(*inputs)
        return node.outputs[0] if len(node.outputs) == 1 else node.outputs

    @property
    def context_name(self):
        """The context name of the outputs' types."""
        return HOST

    def make_node(self, *inputs):
        raise NotImplementedError

    def fn(self, node):
        """A Python callable computing the node's outputs from its input values."""
        raise NotImplementedError

    def grad(self, node, output_grads):
        """The gradients of the inputs (None where disconnected), given the outputs'."""
        raise UnsupportedError(f"{self} is not differentiable")

    def differentiable(self, node):
        """False for piecewise-constant ops (comparisons, argmax, floor...)."""
        return True

    def gpu_check(self, node, ctx):
        """Whether the Gpu version handles this node on `ctx` (beyond the dtype checks)."""
        return True

    def takes_host_scalar(self, k):
        return self.host_scalars == "all" or k in self.host_scalars

    def _describe(self):
        return ", ".join(str(v) for v in self._props())

    def __str__(self):
        props = self._describe()
        return f"{type(self).__name__}{{{props}}}" if props else type(self).__name__

    __repr__ = __str__


class HostOp(Op):
    """Computes with numpy."""

    def fn(self, node):
        return self.make_fn(node, np, None)

    def gpu_supported(self, node, ctx):
        """Whether the Gpu version can run this node on `ctx`."""
        if self.gpu_class is None:
            return False
        try:
            for v in (*node.inputs, *node.outputs):
                dtypes.check_device(v.dtype, ctx)
            return self.gpu_check(node, ctx)
        except UnsupportedError:
            return False

    def on(self, ctx):
        """The Gpu version of this op on context `ctx`."""
        op = copy.copy(self)
        op.__class__ = self.gpu_class
        op.ctx = ctx
        return op


class GpuOp(Op):
    """Computes with gpuarr on `self.ctx`."""

    ctx = None

    def _props(self):
        return (*super()._props(), self.ctx)

    @property
    def context_name(self):
        return self.ctx.name

    def fn(self, node):
        import gpuarr
        return self.make_fn(node, gpuarr, self.ctx)

    def _describe(self):
        return ", ".join(str(v) for v in super()._props())

    def __str__(self):
        return f"{super().__str__()}<{self.ctx.name}>"


def op_pair(impl, name):
    """The host class `name` and the Gpu class `Gpu<name>` of one op implementation. The
    Gpu class is no subclass of the host one, so `isinstance(op, T.Elemwise)` means host."""
    host = type(name, (impl, HostOp), {"__module__": impl.__module__, "__doc__": impl.__doc__})
    gpu = type("Gpu" + name, (impl, GpuOp), {"__module__": impl.__module__,
                                              "__doc__": impl.__doc__})
    host.gpu_class = gpu
    gpu.host_class = host
    return host, gpu


# ---------------------------------------------------------------- walks

def toposort(outputs, blockers=()):
    """The Apply nodes computing `outputs`, each after the nodes of its inputs; the walk
    stops at variables in `blockers`."""
    order, done = [], set()
    for root in outputs:
        node = root.owner
        if node is None or node in done or root in blockers:
            continue
        stack, active = [(node, iter(node.inputs))], {node}
        while stack:
            node, it = stack[-1]
            for v in it:
                o = v.owner
                if o is not None and o not in done and o not in active and v not in blockers:
                    active.add(o)
                    stack.append((o, iter(o.inputs)))
                    break
            else:
                stack.pop()
                done.add(node)
                order.append(node)
    return order


def roots(outputs, blockers=()):
    """The variables without owner (and the blockers) the outputs are computed from, in
    order of first use."""
    seen, found = set(), []

    def add(v):
        if v not in seen:
            seen.add(v)
            found.append(v)
    for v in outputs:
        if v.owner is None or v in blockers:
            add(v)
    for node in toposort(outputs, blockers):
        for v in node.inputs:
            if v.owner is None or v in blockers:
                add(v)
    return found


def clients(order):
    """{variable: [nodes reading it]} over the nodes of `order`."""
    found = {}
    for node in order:
        for v in node.inputs:
            found.setdefault(v, []).append(node)
    return found
