"""The GEMM autotuner behind `python -m gpuarr tune gemm`.

For each dtype and shape class (the portable tiles, the direct kernel's, and on NVIDIA
devices whose probe passes the tensor-core tiles, blas.MMA_CLASSES) it takes the built-in
entry, the stored one, random valid parameter sets drawn from blas.GEMM_SPACE (seeded) and
CLBlast where it loads; checks each against numpy on small problems (a wrong or failing one
is reported and skipped); times the rest on the shape class's three representative problems:
a power of two, a multiple of 64 that is not one, and ragged edges for every tile (on PoCL
one power of two alone favours big tiles, which lose where the edges are ragged); then
re-measures the fastest beside the built-in entry, alternating, and keeps it only where it
wins by more than `min_gain`. A figure is the geometric mean of the three GFLOP/s. Tiny
products are timed over TINY_CALLS calls per sync (their cost is the launch).
"""

import dataclasses
import math
import random
import sys
import time

import numpy as np

from . import blas, clblast, tuning
from .base import to_device
from .errors import ArgumentError, GpuArrayError

__all__ = [
    "DTYPES", "GIVE_UP", "SIZES", "Candidate", "Outcome", "Progress", "candidates", "check",
    "problems", "tune_gemm", "updates",
]

SIZES = {"cpu": 2048, "gpu": 4096}  # the representative size per device kind
DTYPES = ("float16", "float32", "float64")
GIVE_UP = 3  # a candidate whose first timed run is this many times the best gets no repeats
TINY_CALLS = 50  # calls per timed run of the "tiny" class
# The error bound's unit roundoff per shape class where it is not the dtype's: TF32 keeps a
# 10-bit mantissa.
EPS = {"mma_tf32": 2.0 ** -11}


def problems(shape_class, size):
    """The timed (m, k, n): square (32, 48, 25 columns for "small", one for "column") at
    `size` (a quarter of it for "medium"), at 3/4 of it (a multiple of 64, not a power of
    two) and at half of it plus 9 (ragged edges for every tile); "tiny": 16^3, 40^3, 64^3."""
    if shape_class == "tiny":
        return [(16, 16, 16), (40, 40, 40), (64, 64, 64)]
    size = size // 4 if shape_class == "medium" else size
    sides = (size, max(size * 3 // 4 // 64 * 64, 64), size // 2 + 9)
    columns = {"small": (32, 48, 25), "column": (1, 1, 1)}.get(shape_class, sides)
    return list(dict.fromkeys((s, s, n) for s, n in zip(sides, columns)))


def _rate(shapes, seconds):
    """GFLOP/s: the geometric mean over the problems (0 if any failed)."""
    rates = [2 * m * n * k / t / 1e9 for (m, k, n), t in zip(shapes, seconds)]
    return math.prod(rates) ** (1 / len(rates)) if rates and all(rates) else 0.0


@dataclasses.dataclass
class Candidate:
    params: dict
    source: str  # "built-in", "stored", "sampled" or "clblast"
    seconds: list = dataclasses.field(default_factory=list)  # best time per problem
    rate: float = 0.0  # GFLOP/s
    error: str = ""


@dataclasses.dataclass
class Outcome:
    """One dtype and shape class: every candidate, and the final re-measurement."""

    dtype: str
    shape_class: str
    device_class: str
    shapes: list  # the timed (m, k, n)
    candidates: list  # fastest first
    best: Candidate
    builtin: Candidate
    best_figure: float  # GFLOP/s, best and built-in measured in alternation
    builtin_figure: float
    keep: bool  # the best beats the built-in by more than min_gain


class Progress:
    """A one-line text bar on stderr."""

    def __init__(self, total, label, stream=None, width=24):
        self.total, self.label, self.width = total, label, width
        self.stream = sys.stderr if stream is None else stream
        self.done = 0

    def step(self, note=""):
        self.done += 1
        filled = self.width * self.done // max(self.total, 1)
        bar = "#" * filled + "-" * (self.width - filled)
        self.stream.write(f"\r{self.label} [{bar}] {self.done}/{self.total} {note}"[:119]
                          .ljust(119))
        self.stream.flush()

    def close(self):
        self.stream.write("\n")
        self.stream.flush()


def _frozen(params):
    return tuple(sorted(params.items()))


def _valid(ctx, dtype, shape_class, params, cls):
    try:
        blas.check_tile(ctx, dtype, shape_class, params, cls)
    except ArgumentError:
        return False
    return True


def candidates(ctx, dtype, shape_class, budget, seed=0):
    """Up to `budget` distinct valid parameter sets: the built-in entry, the device's tuned
    one if any, then random draws from GEMM_SPACE (every key it lists; the others keep the
    built-in value)."""
    cls = blas.gemm_class(ctx)
    builtin = {k: v for k, v in blas.builtin_tile(cls, dtype, shape_class, ctx).items()
               if k != "backend"}
    found = [Candidate(builtin, "built-in")]
    stored = tuning.lookup(ctx, "gemm", dtype, shape_class, cls)
    if stored:
        stored = {k: v for k, v in stored.items() if k != "backend"}
        if stored != builtin:
            found.append(Candidate(stored, "stored"))
    seen = {_frozen(c.params) for c in found}
    space = blas.GEMM_SPACE[cls][shape_class]
    rng = random.Random(seed)
    for _ in range(1000 * budget):  # enough draws to exhaust a small space
        if len(found) >= budget:
            break
        params = dict(builtin, **{k: rng.choice(space[k]) for k in sorted(space)})
        key = _frozen(params)
        if key not in seen:
            seen.add(key)
            if _valid(ctx, dtype, shape_class, params, cls):
                found.append(Candidate(params, "sampled"))
    return found[:budget]


def _enqueue(ctx, shape_class, cand, a, b, c):
    """c = a @ b with cand; False where CLBlast declines the call."""
    if cand.source == "clblast":
        return clblast.gemm_into(1.0, a, b, 0.0, c) is not None
    if shape_class in blas.MMA_CLASSES:
        blas._gemm_mma(ctx, 1.0, a, b, 0.0, c, blas.MMA_CLASSES[shape_class], cand.params)
    elif shape_class in blas.DIRECT_CLASSES:
        blas._gemm_direct(ctx, 1.0, a, b, 0.0, c, cand.params)
    else:
        blas._gemm_tiled(ctx, 1.0, a, b, 0.0, c, cand.params)
    return True


def _check_shape(shape_class, params, timed):
    """A small (m, k, n) for the check that builds the kernel the timed problem uses (the
    same edge_mn and edge_k), with edges where the kernel has them."""
    n1 = shape_class == "column"
    if "mwi" in params:
        return 3 * params["mwi"] + 1, 37, 3 * params["nwi"] + 1
    if "bm" in params:  # the tensor-core tiles
        m, k, n = timed
        edge_mn = int(bool(m % params["bm"] or n % params["bn"]))
        return (2 * params["bm"] + edge_mn, 2 * params["bk"] + int(bool(k % params["bk"])),
                2 * params["bn"] + edge_mn)
    if "mwg" not in params:
        return 67, 45, 1 if n1 else 33
    m, k, n = timed
    edge_mn = int(bool(m % params["mwg"] or n % params["nwg"]))
    edge_k = int(bool(k % params["kwg"]))
    return (2 * params["mwg"] + edge_mn, 2 * params["kwg"] + edge_k,
            1 if n1 else 2 * params["nwg"] + edge_mn)


def _operands(ctx, dtype, shape, seed):
    """Device a, b and a c inside a buffer with a guard row either side (a kernel writing out
    of bounds is caught), with the host copies. A single column's A is stored transposed
    (unit stride along m): a row-major one runs kernels/gemv.cl.mako, not the column tile."""
    m, k, n = shape
    rng = np.random.default_rng(seed)
    ha = (rng.random((1, m, k)) - 0.5).astype(dtype)
    hb = (rng.random((1, k, n)) - 0.5).astype(dtype)
    hc = np.full((1, m + 2, n), 7, dtype)
    a, b, c = (to_device(h, ctx) for h in (ha, hb, hc))
    if n == 1:
        a = to_device(np.ascontiguousarray(ha.swapaxes(1, 2)), ctx).swapaxes(1, 2)
    return ha, hb, a, b, c, c[:, 1:m + 1]


def _failure(e):
    return f"{type(e).__name__}: {(str(e).splitlines() or [''])[0][:200]}"


def check(ctx, dtype, shape_class, cand, timed):
    """'' if cand's product matches numpy's within the dtype's error bound on a small
    problem built like `timed`, else what went wrong."""
    shape = _check_shape(shape_class, cand.params, timed)
    ha, hb, a, b, c_full, c = _operands(ctx, dtype, shape, 1)
    try:
        if not _enqueue(ctx, shape_class, cand, a, b, c):
            return "CLBlast cannot take this call"
        got = c_full.get().astype(np.float64)
    except Exception as e:  # a build, launch or template failure disqualifies the candidate
        return _failure(e)
    if np.any(got[:, 0] != 7) or np.any(got[:, -1] != 7):
        return f"wrote outside C (m, k, n = {shape})"
    a64, b64 = ha.astype(np.float64), hb.astype(np.float64)
    ref = a64 @ b64
    eps = EPS.get(shape_class, np.finfo(dtype).eps)
    # the classic bound of a k-term dot product, plus the rounding of the result
    bound = (shape[1] + 2) * eps * (np.abs(a64) @ np.abs(b64)) + eps * np.abs(ref)
    err = np.abs(got[:, 1:-1] - ref)
    if not np.all(err <= 2 * bound + np.finfo(dtype).tiny):
        worst = np.max(err / (bound + np.finfo(dtype).tiny))
        return f"wrong result (m, k, n = {shape}): error up to {worst:.3g} x the bound"
    return ""


def _seconds(ctx, fn, calls=1):
    """Seconds per call of `calls` calls of fn and one sync."""
    t0 = time.perf_counter()
    for _ in range(calls):
        fn()
    ctx.sync()
    return (time.perf_counter() - t0) / calls


def tune_gemm(ctx, dtypes=None, shape_classes=None, budget=40, size=None, repeats=3, seed=0,
              min_gain=0.05, progress=True):
    """Tune GEMM on ctx's device: a list of Outcome, one per (dtype, shape class). The shape
    classes default to those gemm uses for each dtype on this device (the tensor-core ones
    where their probe passes)."""
    cls = blas.gemm_class(ctx)
    size = size or SIZES["gpu" if ctx.device.is_gpu else "cpu"]
    dtypes = dtypes or (["float32", "float64"] if ctx.fp64 else ["float32"])
    outcomes = []
    for dt in map(np.dtype, dtypes):
        if dt.name not in DTYPES:
            raise ArgumentError(f"tune gemm takes dtypes {', '.join(DTYPES)}, not {dt.name}")
        if dt == np.float64 and not ctx.fp64:
            raise ArgumentError(f"device {ctx.devname} ({ctx.device.device_name}) has no "
                                f"float64 support; tune float32 only")
        usable = [s for s in blas.shape_classes(cls, dt)
                  if s not in blas.MMA_CLASSES or blas._mma_ok(ctx, blas.MMA_CLASSES[s])]
        for shape_class in shape_classes or usable:
            if shape_class not in usable:
                raise ArgumentError(
                    f"no GEMM shape class {shape_class!r} for {dt.name} on {cls} devices "
                    f"({ctx.devname}); classes: {', '.join(usable)}")
            outcomes.append(_tune_one(ctx, cls, dt, shape_class, budget, size, repeats, seed,
                                      min_gain, progress))
    return outcomes


def _measure(ctx, fn, repeats, give_up, calls=1):
    """Best seconds per call of `repeats` runs after a warm-up; one run where that is over
    give_up."""
    fn()
    ctx.sync()
    best = _seconds(ctx, fn, calls)
    for _ in range(repeats - 1 if best < give_up else 0):
        best = min(best, _seconds(ctx, fn, calls))
    return best


def _tune_one(ctx, cls, dt, shape_class, budget, size, repeats, seed, min_gain, progress):
    shapes = problems(shape_class, size)
    cands = candidates(ctx, dt, shape_class, budget, seed)
    if clblast.available() and shape_class not in blas.MMA_CLASSES:
        cands.append(Candidate({}, "clblast"))
    calls = TINY_CALLS if shape_class == "tiny" else 1
    bar = Progress(len(cands), f"{dt.name} {shape_class}") if progress else None
    operands = [_operands(ctx, dt, shape, 2)[2:] for shape in shapes]
    best = [math.inf] * len(shapes)

    def run(cand, i):
        a, b, _, c = operands[i]
        return lambda: _enqueue(ctx, shape_class, cand, a, b, c)

    for cand in cands:
        checks = {_check_shape(shape_class, cand.params, shape): shape for shape in shapes}
        cand.error = next(filter(None, (check(ctx, dt, shape_class, cand, shape)
                                        for shape in checks.values())), "")
        if not cand.error:
            try:
                cand.seconds = [_measure(ctx, run(cand, i), repeats, GIVE_UP * best[i], calls)
                                for i in range(len(shapes))]
            except Exception as e:  # e.g. out of resources at the timed size
                cand.error = _failure(e)
            else:
                cand.rate = _rate(shapes, cand.seconds)
                best = [min(x, y) for x, y in zip(best, cand.seconds)]
        if bar:
            top = max(c.rate for c in cands)
            bar.step(f"best {top:.3g} GFLOP/s" if top else "")
    if bar:
        bar.close()
    builtin = cands[0]
    if builtin.error:
        raise GpuArrayError(f"the built-in {dt.name} {shape_class} GEMM entry "
                            f"{blas._show(builtin.params)} fails on {ctx.devname}: "
                            f"{builtin.error}")
    ranked = sorted(cands, key=lambda x: -x.rate)
    winner = ranked[0]
    # the winner and the built-in again, alternating, so that the machine's noise hits both
    # (fresh times: the search's best of many draws favours whichever got a lucky run)
    times = [[math.inf] * len(shapes), [math.inf] * len(shapes)]
    if winner is builtin:
        times = [builtin.seconds, builtin.seconds]
    for _ in range(max(2 * repeats, 4) if winner is not builtin else 0):
        for j, cand in enumerate((winner, builtin)):
            times[j] = [min(t, _seconds(ctx, run(cand, i), calls))
                        for i, t in enumerate(times[j])]
    best_figure, builtin_figure = (_rate(shapes, t) for t in times)
    keep = winner is not builtin and best_figure > builtin_figure * (1 + min_gain)
    return Outcome(dt.name, shape_class, cls, shapes, ranked, winner, builtin, best_figure,
                   builtin_figure, keep)


def updates(ctx, outcomes):
    """The store's changes for these outcomes ({entry key: entry}): each kept winner (CLBlast
    with the best template parameters, used where CLBlast declines a call); where the built-in
    entry won over a tuned one, the built-in entry, so that it overrides a shipped one."""
    changes = {}
    for o in outcomes:
        key = tuning.entry_key("gemm", o.dtype, o.shape_class)
        if o.keep:
            params = dict(o.best.params)
            if o.best.source == "clblast":
                template = next(c for c in o.candidates if c.source != "clblast")
                params = dict(template.params, backend="clblast")
            figure = o.best_figure
        elif any(c.source == "stored" for c in o.candidates):
            params, figure = dict(o.builtin.params), o.builtin_figure
        else:
            continue
        changes[key] = tuning.record(ctx, params, o.device_class, figure, o.builtin_figure,
                                     "GFLOP/s (geometric mean)", o.shapes)
    return changes

