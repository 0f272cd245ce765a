"""gpuarr.symbolic.tensor: Theano's `theano.tensor` spelling of the T namespace.

    import gpuarr.symbolic.tensor as T        # as `import theano.tensor as T`
    T.dot(T.matrix(), T.vector()); T.nnet.softmax(x); T.shared_randomstreams.RandomStreams(1)

The module looks its names up in `gpuarr.symbolic` when they are first used (the package
imports this module, so it cannot import the package; the lookup is by name at run time),
so both spellings give the same objects. The module is also callable, because
`gpuarr.symbolic.tensor(dtype, broadcastable, name)` was, and still is, the variable
constructor: importing a submodule binds it in its package under its name, so the
constructor and the module must be one object.
"""

import sys
import types

from .variables import tensor as _tensor

__all__ = []


class _CallableModule(types.ModuleType):
    """A module that is also the `tensor` constructor."""

    def __call__(self, dtype=None, broadcastable=(), name=None):
        return _tensor(dtype, broadcastable, name)


def __getattr__(name):
    if name.startswith("__"):
        raise AttributeError(name)
    return getattr(sys.modules[__package__], name)


def __dir__():
    return sorted(set(dir(sys.modules[__package__])) | set(globals()))


sys.modules[__name__].__class__ = _CallableModule
