"""Shared variables: values that live between calls, on the host or on a device, read by
any number of functions and changed by their `updates` (or `set_value`)."""

import numpy as np

from .. import config, dtypes
from ..array import GpuArray, to_device
from ..errors import ArgumentTypeError, UnsupportedError
from .graph import TensorType, Variable, roots
from .types import HOST, location

__all__ = ["Container", "SharedVariable", "default_updates", "shared"]

_DEFAULT = object()


class Container:
    """The current value of a shared variable (functions read and update it)."""

    __slots__ = ("value",)

    def __init__(self, value):
        self.value = value


class SharedVariable(Variable):
    """A variable with a value kept between calls; `location` is 'cpu' or its Context.
    `default_update`, when set, is its new value after every call of a function that reads it
    and does not update it otherwise (a random stream's advanced state), as in Theano."""

    default_update = None

    def __init__(self, type, value, location, name=None, allow_downcast=None):
        super().__init__(type, name=name)
        self.location = location
        self.allow_downcast = allow_downcast
        self.container = Container(value)

    def get_value(self, borrow=False, return_internal_type=False):
        """The value as a numpy array (a GpuArray with return_internal_type=True); a copy
        unless borrow=True."""
        v = self.container.value
        if isinstance(v, GpuArray):
            if return_internal_type:
                return v if borrow else v.copy()
            return v.get()
        return v if borrow else v.copy()

    def set_value(self, value, borrow=False):
        """Replace the value (cast as the type allows; copied unless borrow=True)."""
        self.container.value = self._filter(value, borrow)

    def _filter(self, value, borrow):
        loc = self.location
        what = f"value of shared variable {self.name or self.type}"
        if loc != HOST and isinstance(value, GpuArray) and value.dtype == self.dtype:
            if value.ndim != self.ndim:
                raise ArgumentTypeError(f"{what}: expected {self.ndim} dimension(s), got "
                                        f"shape {value.shape}")
            if value.context is not loc:
                return value.transfer(loc)
            return value if borrow else value.copy()
        arr = self.type.filter(value, self.allow_downcast, what)
        if loc != HOST:
            return to_device(arr, loc)
        return arr if borrow and arr is value else arr.copy()

    def __str__(self):
        return self.name if self.name is not None else f"<{self.type}>"

    __repr__ = __str__


def default_updates(outputs, updated=()):
    """(shared variable, its default_update) for each shared variable that computing `outputs`
    reads (or that those default updates read in turn), except those in `updated`."""
    pairs, seen, todo = [], set(updated), list(outputs)
    while todo:
        found = [v for v in roots(todo) if isinstance(v, SharedVariable) and v not in seen
                 and v.default_update is not None]
        seen.update(found)
        pairs += [(v, v.default_update) for v in found]
        todo = [v.default_update for v in found]
    return pairs


def shared(value, name=None, target=_DEFAULT, borrow=False, broadcastable=None,
           allow_downcast=None):
    """A shared variable holding `value` (a copy unless borrow=True).

    The dtype is numpy's for the value (`shared(0.0)` is float64, `shared(0)` int64, as
    in Theano); numpy arrays keep theirs.
    target: 'cpu', None (the default device) or a context name. Left out, float values
    live on the default device when flag `device` names one (as Theano did for floatX)
    and everything else (integer counters, masks) on the host. A GpuArray stays on its
    context unless a target says otherwise.
    """
    if isinstance(value, GpuArray):
        dt = value.dtype
        loc = value.context if target is _DEFAULT else location(target)
        if loc == HOST:
            data = value.get()
        elif value.context is loc:
            data = value if borrow else value.copy()
        else:
            data = value.transfer(loc)
        ndim, context = value.ndim, target if target is not _DEFAULT else loc.name
    else:
        arr = np.asarray(value)  # numpy's dtype: Python floats are float64, as in Theano
        dt = arr.dtype
        if target is _DEFAULT:
            loc = _default_location(dt)
            context = None if loc != HOST else HOST
        else:
            loc, context = location(target), target
            if loc != HOST:
                dtypes.check_device(dt, loc)
        data = to_device(arr, loc) if loc != HOST else (
            arr if borrow and arr is value else arr.copy())
        ndim = arr.ndim
    if broadcastable is None:
        broadcastable = (False,) * ndim
    if len(broadcastable) != ndim:
        raise ArgumentTypeError(f"shared: broadcastable {tuple(broadcastable)} for a value of "
                                f"{ndim} dimension(s)")
    var = SharedVariable(TensorType(dt, broadcastable, context), data, loc, name,
                         allow_downcast)
    if any(broadcastable):
        var.type.filter(var.get_value(borrow=True), what=f"value of shared variable {name}")
    return var


def _default_location(dt):
    """The default device for float values when flag device names one, else the host."""
    if dt.kind not in "fc" or config.flags.device == "cpu":
        return HOST
    ctx = location(None)
    try:
        dtypes.check_device(dt, ctx)
    except UnsupportedError:
        return HOST
    return ctx
