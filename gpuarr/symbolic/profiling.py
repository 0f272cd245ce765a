"""Profiles of compiled functions (flag profile=True or function(profile=True)): the time
of each node, waiting for its device work to finish, and a summary printed at exit with the
split "Spent Xs (X%) in cpu op, Xs (X%) in gpu op and Xs (X%) in transfer op"."""

import atexit
import sys
import time

from ..array import GpuArray
from .graph import GpuOp
from .transfer import TRANSFERS

__all__ = ["ProfileStats", "kind", "print_all"]

_PROFILES = []


def kind(op):
    """'transfer', 'gpu' or 'cpu'."""
    if isinstance(op, TRANSFERS):
        return "transfer"
    return "gpu" if isinstance(op, GpuOp) else "cpu"


class ProfileStats:
    """Calls and time per function and per node."""

    def __init__(self, name, order):
        self.name = name
        self.order = list(order)
        self.calls = 0
        self.call_time = 0.0
        self.node_time = dict.fromkeys(self.order, 0.0)
        self.node_calls = dict.fromkeys(self.order, 0)
        if not _PROFILES:
            atexit.register(print_all)
        _PROFILES.append(self)

    def timed(self, node, thunk, outs, cells):
        """`thunk`, timed to the end of its device work."""
        times, calls = self.node_time, self.node_calls

        def run():
            t0 = time.perf_counter()
            thunk()
            for k in outs:
                v = cells[k]
                if isinstance(v, GpuArray):
                    v.sync()
            times[node] += time.perf_counter() - t0
            calls[node] += 1
        return run

    def called(self, seconds):
        self.calls += 1
        self.call_time += seconds

    def split(self):
        """{'cpu': s, 'gpu': s, 'transfer': s} of node time."""
        found = {"cpu": 0.0, "gpu": 0.0, "transfer": 0.0}
        for node, t in self.node_time.items():
            found[kind(node.op)] += t
        return found

    def summary(self, file=None):
        file = sys.stderr if file is None else file
        total = sum(self.node_time.values())
        split = self.split()

        def pc(t):
            return 100 * t / total if total else 0.0
        print(f"\nFunction profiling\n==================\n  Message: {self.name or '<unnamed>'}",
              file=file)
        print(f"  Time in {self.calls} calls to Function.__call__: {self.call_time:.6f}s",
              file=file)
        share = 100 * total / self.call_time if self.call_time else 0.0
        print(f"  Time in thunks: {total:.6f}s ({share:.1f}%)", file=file)
        print(f"  Spent {split['cpu']:.3f}s ({pc(split['cpu']):.1f}%) in cpu op, "
              f"{split['gpu']:.3f}s ({pc(split['gpu']):.1f}%) in gpu op and "
              f"{split['transfer']:.3f}s ({pc(split['transfer']):.1f}%) in transfer op",
              file=file)
        by_class = {}
        for node, t in self.node_time.items():
            name = type(node.op).__name__
            t0, n = by_class.get(name, (0.0, 0))
            by_class[name] = (t0 + t, n + 1)
        print("\nClass\n---\n<% time> <time> <#apply> <class name>", file=file)
        for name, (t, n) in sorted(by_class.items(), key=lambda kv: -kv[1][0]):
            print(f"  {pc(t):5.1f}%  {t:.6f}s  {n:4d}  {name}", file=file)
        print("\nApply\n---\n<% time> <time> <time per call> <#call> <id> <apply>", file=file)
        ids = {node: k for k, node in enumerate(self.order)}
        for node, t in sorted(self.node_time.items(), key=lambda kv: -kv[1]):
            calls = self.node_calls[node]
            per = t / calls if calls else 0.0
            print(f"  {pc(t):5.1f}%  {t:.6f}s  {per:.3e}s  {calls:5d}  {ids[node]:3d}  {node}",
                  file=file)


def print_all(file=None):
    """Print the summary of every profiled function that was called."""
    for p in _PROFILES:
        if p.calls:
            p.summary(file)
