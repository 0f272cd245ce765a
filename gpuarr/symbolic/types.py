"""Types of symbolic values: dtype, broadcastable pattern, and the context the value lives on.

A context is a name: 'cpu' for the host, None for the default device (flag `device`), or a
context name such as 'dev0' (flag `contexts`). `location` turns it into what placement uses:
'cpu' or a `gpuarr.Context`.
"""

import numpy as np

from .. import config, dtypes
from ..array import GpuArray
from ..context import get_context
from ..errors import ArgumentTypeError, ContextNotDefined, ShapeError

HOST = "cpu"

_KINDS = {(): "scalar", (False,): "vector", (False, False): "matrix", (True, False): "row",
          (False, True): "col", (False,) * 3: "tensor3", (False,) * 4: "tensor4"}


def location(context):
    """'cpu' or the Context that `context` (a name, None for the default device) names;
    ContextNotDefined for unknown names, and for None when flag device=cpu."""
    if isinstance(context, str) and context == HOST:
        return HOST
    if context is None and config.flags.device == "cpu":
        raise ContextNotDefined("the default device is 'cpu' (flag device=cpu), which has no "
                                "device context; name one (e.g. 'dev0') or set flag device")
    return get_context(context)


def location_name(loc):
    return HOST if isinstance(loc, str) else loc.name


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
        from .graph import Variable
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
