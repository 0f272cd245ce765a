"""Modes of `function`: which rewrites compile the graph and how its nodes run.

'FAST_RUN' (the default) folds constants, merges equal work, rewrites products, fuses
elementwise chains and updates shared variables in place; 'FAST_COMPILE' only places ops
and inserts transfers; 'DebugMode' (or `DebugMode()`) compiles as FAST_RUN, then runs every
node both as compiled and through numpy and raises `DebugModeError` naming the first node
whose values differ.
"""

import numpy as np

from ..errors import ArgumentError, ArgumentTypeError, DebugModeError

__all__ = ["MODES", "DebugMode", "DebugModeError", "Mode", "get_mode"]

_OPTIMIZERS = ("fast_run", "fast_compile")


class Mode:
    """How `function` compiles a graph: `Mode('fast_run')` or `Mode('fast_compile')`.

    Parameters
    ----------
    optimizer : {'fast_run', 'fast_compile'}
        'fast_run': constant folding and merging, product rewrites, elementwise fusion and
        in-place updates of shared variables; 'fast_compile': placement and transfers only
        (each op runs as its own kernel: the quickest to compile, the slowest to run).

    Attributes
    ----------
    rewrites, fusion, inplace : bool
        Which stages run (all three for 'fast_run').
    check : bool
        Whether every node is checked against numpy (DebugMode).
    """

    check = False

    def __init__(self, optimizer="fast_run"):
        if optimizer not in _OPTIMIZERS:
            raise ArgumentError(f"Mode optimizer must be one of {', '.join(_OPTIMIZERS)}, not "
                                f"{optimizer!r}")
        self.optimizer = optimizer
        fast = optimizer == "fast_run"
        self.rewrites = self.fusion = fast
        self.inplace = fast and not self.check

    @property
    def name(self):
        return self.optimizer.upper()

    def __repr__(self):
        return f"Mode({self.optimizer!r})"


class DebugMode(Mode):
    """FAST_RUN's graph, each node also run through numpy and compared (a slow mode to find
    a wrong kernel); shared variables are not updated in place.

    Parameters
    ----------
    optimizer : {'fast_run', 'fast_compile'}
        The rewrites whose graph is checked.
    rtol, atol : float, optional
        Tolerances of the comparison of floating-point values (default: by dtype, 1e-2 and
        1e-3 for float16, 1e-4 and 1e-5 for float32, 1e-7 and 1e-10 for float64).
    check_inputs : bool
        Also check that no node changes the values it reads.
    """

    check = True

    def __init__(self, optimizer="fast_run", rtol=None, atol=None, check_inputs=True):
        super().__init__(optimizer)
        self.rtol, self.atol, self.check_inputs = rtol, atol, bool(check_inputs)

    @property
    def name(self):
        return "DebugMode"

    def tolerances(self, dtype):
        """(rtol, atol) for values of `dtype`."""
        rtol, atol = _TOLERANCES.get(np.dtype(dtype).char, (1e-7, 1e-10))
        return (rtol if self.rtol is None else self.rtol,
                atol if self.atol is None else self.atol)

    def __repr__(self):
        return f"DebugMode({self.optimizer!r})"


# by dtype char: float16, float32, complex64 (float64 and complex128: the default)
_TOLERANCES = {"e": (1e-2, 1e-3), "f": (1e-4, 1e-5), "F": (1e-4, 1e-5)}

MODES = {"FAST_RUN": lambda: Mode("fast_run"), "FAST_COMPILE": lambda: Mode("fast_compile"),
         "DebugMode": DebugMode, "DEBUG_MODE": DebugMode}


def get_mode(mode):
    """The Mode of `mode`: None (FAST_RUN), one of MODES' names, or a Mode."""
    if mode is None:
        return Mode()
    if isinstance(mode, Mode):
        return mode
    if isinstance(mode, str):
        make = MODES.get(mode)
        if make is None:
            raise ArgumentError(f"unknown mode {mode!r}; use one of {', '.join(MODES)} or a "
                                f"Mode")
        return make()
    raise ArgumentTypeError(f"mode must be a name or a Mode, not {type(mode).__name__}")
