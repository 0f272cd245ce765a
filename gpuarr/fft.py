"""Discrete Fourier transforms: numpy.fft's functions, and the Array API's fft extension.

One kernel family (kernels/fft.cl.mako), one program per precision: sizes, strides, pass
parameters and direction are arguments, so every length shares its kernels. A length is
planned by the cheapest algorithm of ALGORITHMS that applies: Stockham (auto-sort) radix
passes when it factors into 2, 3, 5, 7, 11 and 13 (radices 16, 8, 4, 2, 9, 3, 25, 5, 7,
11, 13), else Bluestein's chirp-z, a convolution with a chirp through transforms of a
smooth m >= 2n - 1. Rows of up to ROWS_LONGEST run every pass in local memory in one launch
(fft_rows; on GPUs fft_rows_pow2 for lengths of 2, 4, 8 and 16 alone); other rows take one
launch per pass (fft_radix<R>), reading and writing every element once, or on GPUs (ROWS)
segments of their passes, each one launch of rows in local memory (_split). GPUs build
fft_block instead, a kernel per row length whose passes keep their values in registers
across one local buffer (whole rows, or segments of long rows with the four-step twiddle
in their loads: _block_split; Bluestein's products in the loads and stores). Rows are
batched along the other axes, and views are read and written as they lie (offsets and
strides are kernel arguments; two batch dimensions in a launch, more looped over). The
inverse is the forward transform of the conjugate, conjugated (flags of the first load and
the last store). Real transforms of even n take the complex transform of
the n/2 pairs of consecutive elements plus a pass that separates the halves (fft_r2c_post,
fft_c2r_pre); odd n take the complex transform of length n.

Plans (radices and twiddles, or Bluestein's chirp and its transform) are kept per (length,
precision) in the context's plan cache: their tables are computed once in float64 on the
host and stored in the transform's precision; one plan serves every shape and layout.
A call's launches are recorded at its layouts' first call and replayed after (_Schedule).
docs/fft.md gives the choices, accuracy and speed.
"""

import functools
import itertools
import math
import operator

import numpy as np

from . import dtypes, elemwise, launch, manipulation
from .base import ArrayBase, _normalize_axis, asarray, check_same_context, to_device, zeros
from .context import get_context
from .errors import ArgumentError, ArgumentTypeError, ShapeError
from .kernels import get_program, kernel_from
from .launch import enqueue
from .memory import serial_mark

__all__ = ["fft", "fft2", "fftfreq", "fftn", "fftshift", "hfft", "ifft", "ifft2", "ifftn",
           "ifftshift", "ihfft", "irfft", "irfft2", "irfftn", "rfft", "rfft2", "rfftfreq",
           "rfftn"]

RADICES = (16, 8, 4, 2, 9, 3, 25, 5, 7, 11, 13)  # in the order a length is factored
_KERNELS = (*(f"fft_radix{r}" for r in (1, *RADICES)), "fft_r2c_post", "fft_c2r_pre",
            "fft_hermitian", "fft_pointwise")
_ARG_TYPES = ([None] * 3 + [np.uint32] * 6 + [np.float32] * 3 + [np.int64] * 10
              + [np.uint32] * 2)
CONJ_IN, CONJ_OUT, REAL_IN, REAL_OUT = 1, 2, 4, 8
_NORMS = ("backward", "ortho", "forward")
_MAX_DIM1 = 65535  # launch dimension 1 (NVIDIA's limit on a grid's y)
_MAX_WORK = 2**31 - 1  # work-items per launch dimension 0 (uint index arithmetic)
# fft_rows: rows of ROWS_LEAST .. ROWS_LONGEST elements whole in local memory (shorter ones
# take one or two global passes; one long row would keep one compute unit busy),
# ROWS_LOCAL work-items per work-group (one size: PoCL builds a kernel per local size),
# ROWS_GROUP adjacent rows together where rows are interleaved, local buffers of
# ROWS_ELEMENTS at most (CPUs: both in a core's L2). Longer rows (where ROWS says so): the
# four-step split of their passes into rows of the first ones and rows of the rest.
ROWS_LEAST, ROWS_LONGEST = 64, 4096
ROWS_ELEMENTS = {"gpu": 32768, "cpu": 8192}
ROWS_LOCAL = {"gpu": 128, "cpu": 16}
ROWS_GROUP = {"gpu": 4, "cpu": 8}
# GPUs: the split on, into as many segments as it takes (rows of up to ROWS_ELEMENTS /
# ROWS_GROUP elements each, so that 2^20 .. 2^24 take three launches), and power-of-two rows
# in fft_rows_pow2 (docs/fft.md); PoCL: measured no gain yet.
ROWS = {"gpu": True, "cpu": False}
# fft_block: a kernel built per row length (GPUs; on CPUs PoCL would compile one per length,
# 1.4 s each), every pass in registers and one local buffer, so that a launch moves its
# rows at memory speed: whole rows where a work-group holds enough of them (BLOCK_COALESCE
# bytes of interleaved rows), else segments (BLOCK_SPLIT_COALESCE bytes: fewer launches).
BLOCK = {"gpu": True, "cpu": False}
BLOCK_LOCAL = 256  # work-items per work-group at most
BLOCK_ELEMENTS = 8192  # elements per work-group at most (GPUs: local memory bounds it first)
BLOCK_COALESCE = 128  # bytes: whole interleaved rows (columns) load in runs this long
BLOCK_SPLIT_COALESCE = 32  # bytes, for the segments of long rows (fewer launches first)
BLOCK_RADIX = 16  # fft_block's largest power-of-two radix (work-items per row: n / radix)
# True: the GPU choices of the first version (no split unless ROWS says so, one split
# into two segments at most, fft_rows for every length), for measuring old against new.
PREVIOUS = False


# ---------------------------------------------------------------- kernels and plans

def _program(ctx, key):
    """(program, argument types) of the FFT program of `key`: (name, real, nmax), name "fft"
    or "fft-rows-pow2" (fft_rows_pow2 alone, for GPUs: some implementations count the local
    memory of all a program's kernels together), real 'float' or 'double'."""
    name, real, nmax = key
    program = get_program(ctx, key, "fft.cl.mako", real=real, radices=(1, *RADICES),
                          nmax=nmax, rows_pow2=name == "fft-rows-pow2", block=None,
                          scalar_radix=_scalar_radix(ctx))
    return program, [*_ARG_TYPES, np.float32 if real == "float" else np.float64]


def _scalar_radix(ctx):
    """Whether fft_radix<R> runs a work-item a lane (Intel's CPU runtime, whose vectors of
    work-items gather their strided loads): 1.1-2.1x faster on a 2-core Zen 3 (docs/fft.md)."""
    return not ctx.device.is_gpu and "cl_intel_vec_len_hint" in ctx.device.cl_device.extensions


def _kernels(ctx, real):
    """{kernel name: Launcher} of the FFT program for `real` ('float' or 'double')."""
    key = ("fft", real, _row_max(ctx, real))
    found = ctx.kernels.get(key)
    if found is None:
        program, types = _program(ctx, key)
        found = {name: kernel_from(ctx, (key, name), program, name, types)
                 for name in _KERNELS}
        found["fft_rows"] = kernel_from(ctx, (key, "fft_rows"), program, "fft_rows",
                                        [*types, np.uint64, np.uint32])
        ctx.kernels[key] = found
    return found


def _rows_pow2(ctx, real):
    """The Launcher of fft_rows_pow2 (GPUs), built at its first use."""
    key = ("fft-rows-pow2", real, _row_max(ctx, real))
    found = ctx.kernels.get(key)
    if found is None:
        program, types = _program(ctx, key)
        found = kernel_from(ctx, key, program, "fft_rows_pow2", [*types, np.uint64, np.uint32])
    return found


def _row_max(ctx, real):
    """The elements fft_rows holds per work-group: two buffers of them in local memory."""
    item = 8 if real == "float" else 16
    if ctx.device.is_gpu and not PREVIOUS:
        item += item / 16  # fft_rows_pow2 pads its buffers by one element in 16 (GPUs)
    n = ROWS_ELEMENTS["gpu" if ctx.device.is_gpu else "cpu"]
    while n > 64 and 2 * n * item > ctx.device.cl_device.local_mem_size - 1024:
        n //= 2
    return n


def _block_on(ctx):
    return BLOCK["gpu" if ctx.device.is_gpu else "cpu"] and not PREVIOUS


def _block_limits(ctx):
    """(local memory bytes, work-items per work-group, BLOCK_ELEMENTS, BLOCK_COALESCE,
    BLOCK_SPLIT_COALESCE, BLOCK_RADIX): what fft_block's shapes depend on."""
    local = ctx.plans.get("fft-local-memory")
    if local is None:  # (a driver query: kept)
        local = ctx.plans["fft-local-memory"] = ctx.device.cl_device.local_mem_size
    return (local, min(BLOCK_LOCAL, ctx.max_work_group_size), BLOCK_ELEMENTS, BLOCK_COALESCE,
            BLOCK_SPLIT_COALESCE, BLOCK_RADIX)


def _block_fits(limits, size, item, group):
    """Whether fft_block's buffer of `group` rows of `size` elements of `item` bytes fits."""
    total = group * size
    return total <= limits[2] and (total + total // 16 + 1) * item <= limits[0] - 1024


@functools.lru_cache(maxsize=1024)
def _block_group(limits, size, item, rows, interleaved):
    """(rows per work-group, work-items per row) of fft_block: rows added (doubling) while
    the buffer fits, the work-group holds at most limits[1] work-items and there are rows
    for them, or more are needed to cover BLOCK_COALESCE bytes of interleaved rows."""
    threads, group = size // max(_block_radices(size, limits[5])), 1
    want = limits[3] // item if interleaved else 1
    while (2 * group <= rows or group < want) and threads * group * 2 <= limits[1] and \
            _block_fits(limits, size, item, 2 * group):
        group *= 2
    return group, threads


@functools.lru_cache(maxsize=1024)
def _block_radices(size, most):
    """fft_block's radices of a length: factor's, powers of two no larger than `most`."""
    out = []
    for r in RADICES:
        while size % r == 0 and (r <= most or r & (r - 1)):
            out.append(r)
            size //= r
    return out


@functools.lru_cache(maxsize=1024)
def _block_segments(limits, n, item):
    """The lengths of fft_block segments of rows of n (a product of small primes): as few as
    it takes, balanced, each fitting BLOCK_SPLIT_COALESCE bytes of interleaved rows."""
    least = max(1, limits[4] // item)
    primes = []
    for f in (13, 11, 7, 5, 3, 2):
        while n % f == 0:
            primes.append(f)
            n //= f
    for count in range(2, 6):
        bins = [1] * count
        for f in primes:
            i = min(range(count), key=bins.__getitem__)
            bins[i] *= f
        if all(_block_fits(limits, b, item, least) for b in bins):
            return tuple(sorted(bins, reverse=True))
    return None


_BLOCK_TYPES = [None] * 5 + [np.uint32] * 7 + [np.int64] * 12 + [np.uint32] * 2
MUL_CONJ = 16  # fft_block's flag: conjugate before the multiply of `post`


def _block_kernel(ctx, real, size, radices, group, threads, layout):
    """The Launcher of fft_block for rows of `size`; layout: (in_swap, out_swap, twist,
    vec_in, vec_out, pre, post)."""
    key = ("fft-block", real, size, radices, group, *layout)
    found = ctx.kernels.get(key)
    if found is None:
        spec = dict(zip(("in_swap", "out_swap", "twist", "vec_in", "vec_out", "pre", "post"),
                        layout),
                    n=size, radices=radices, threads=threads, group=group)
        program = get_program(ctx, key, "fft.cl.mako", real=real, radices=(), nmax=0,
                              rows_pow2=False, block=tuple(sorted(spec.items())),
                              scalar_radix=False)
        found = kernel_from(ctx, key, program, "fft_block",
                            [*_BLOCK_TYPES, np.float32 if real == "float" else np.float64])
    return found


def _block_twiddles(ctx, radices, real):
    """fft_block's twiddles of a length's passes after the first: exp(-2 pi i j k / (p R))
    for 1 <= j < R, k < p, k fastest (adjacent work-items load adjacent entries), pass
    after pass; kept per context."""
    key = ("fft-block-twiddles", radices, real)
    tab = ctx.plans.get(key)
    if tab is None:
        parts, p = [np.zeros(1)], 1
        for r in radices:
            if p > 1:
                parts.append(_unit_roots(np.arange(1, r)[:, None] * np.arange(p), p * r).ravel())
            p *= r
        tab = ctx.plans[key] = _upload(ctx, np.concatenate(parts[1:] or parts), real)
    return tab


def _twist_table(ctx, modulus, real):
    """(table, bits): exp(-2 pi i l / M) for l < 2^bits, then exp(-2 pi i h 2^bits / M) for
    h < M / 2^bits (M = modulus), kept per context: one product of two entries gives any
    exp(-2 pi i e / M), e < M."""
    key = ("fft-twist", modulus, real)
    found = ctx.plans.get(key)
    if found is None:
        bits = (modulus.bit_length() + 1) // 2
        t = np.concatenate([np.arange(1 << bits), np.arange(-(-modulus >> bits)) << bits])
        found = ctx.plans[key] = (_upload(ctx, _unit_roots(t, modulus), real), bits)
    return found


def _even(rows):
    """Whether `rows` are complex numbers at even offsets (loads and stores of both parts
    at once)."""
    return rows.d == 1 and not (rows.o | rows.s | rows.b1 | rows.b2 | rows.b3) & 1


def _block(ctx, real, size, src, dst, counts, flags, scale, lim, twist=0, twist_dim=0,
           pre=None, post=None):
    """fft_block over counts[0] x counts[1] x counts[2] rows of `size` (batch dimensions
    b1, b2, b3 of src and dst), src -> dst; twist: the modulus M of the four-step twiddle
    (element t of row r times exp(-2 pi i t r / M), r the index along dimension
    `twist_dim`, 0 or 1) or 0. pre (mode, table, offset, stride, lim) and post (mode,
    table, offset, stride): the products of the loads and stores with a table (fft_block's
    pre and post; mode 1: the element's index, 2 and 3: plus the row's along dimension 0
    or 1); post's bound is `lim`."""
    item, limits = _cdtype(real).itemsize, _block_limits(ctx)
    in_swap = counts[0] > 1 and abs(src.b1) < abs(src.s)
    out_swap = counts[0] > 1 and abs(dst.b1) < abs(dst.s)
    # (the group _block_way decided by: interleaved on either side)
    group, threads = _block_group(limits, size, item, counts[0], in_swap or out_swap)
    layout = (in_swap, out_swap, (1 + twist_dim) if twist else 0,
              not flags & REAL_IN and _even(src), not flags & REAL_OUT and _even(dst),
              pre[0] if pre else 0, post[0] if post else 0)
    radices = tuple(_block_radices(size, limits[5]))
    tab = _block_twiddles(ctx, radices, real)
    twt, bits = _twist_table(ctx, twist, real) if twist else (tab, 0)
    mtab = (pre or post or (0, tab))[1]
    pre, post = pre or (0, tab, 0, 0, 0), post or (0, tab, 0, 0)
    launcher = _block_kernel(ctx, real, size, radices, group, threads, layout)
    args = (src.storage, dst.storage, tab.storage, twt.storage, mtab.storage, counts[0], bits,
            *pre[2:], *post[2:], src.o, src.s, src.d, src.b1, src.b2, src.b3, dst.o, dst.s,
            dst.d, dst.b1, dst.b2, dst.b3, 0xFFFFFFFF if lim is None else lim, flags, scale)
    local = threads * group
    reads = tuple({id(b): b for b in (src.storage, tab.storage, twt.storage,
                                      mtab.storage)}.values())
    enqueue(ctx, launcher, (-(-counts[0] // group) * local, counts[1], counts[2]),
            (local, 1, 1), args, reads, (dst.storage,))


def _block_split(ctx, n, sizes, src, dst, batch, real, fin, fout, scale, lim, pool, pre,
                 post):
    """nb1 rows of n (batch.nb2 == 1) as fft_block segments of `sizes`, each one launch
    reading and writing every element once (the four-step method). After segments of
    product P, element b P + k1 (b < n / P) of a row is the P-point transform of its
    elements b + t n / P at frequency k1, so a segment of B after P transforms rows
    (k1 < P, b < q = n / (P B)) of the B elements (b + t q) P + k1, each first times
    exp(-2 pi i t k1 / (P B)), into b P B + k1 + P k2. Where the rows are interleaved
    (batch.swap: columns), the rows' index runs fastest and k1 on dimension 1; else the
    first segment runs along b and the others along k1 (adjacent in memory), the rows on
    the last launch dimension. pre (table, offset, lim) multiplies the first segment's loads
    by the table at their element's index (b + t q), post (table, offset) the last
    segment's stores (at k1 + P k2, bounded by lim)."""
    cols = batch.swap
    temp = _Batch(batch.nb1, 1, cols)
    pool = [b for b in pool or () if b is not src and b.key() == _temp_layout(n, temp)]
    outs = [dst]
    for _ in range(len(sizes) - 1):
        spare = [b for b in pool if b is not outs[0]]
        outs.insert(0, spare[0] if spare else _temp(ctx, n, temp, real))
        if not spare:
            pool.append(outs[0])
    cur, big_p, nb = src, 1, batch.nb1
    for i, size in enumerate(sizes):
        last = i == len(sizes) - 1
        out, q = outs[i], n // (big_p * size)
        flags, factor_ = (fin if i == 0 else 0) | (fout if last else 0), scale if last else 1.0
        mode = 3 if cols else 2  # the segment's row index b (first) or k1 (last)
        mul = {"pre": (mode, *pre[:2], q, pre[2]) if pre and i == 0 else None,
               "post": (mode, *post, big_p) if post and last else None}
        bound = lim if last else None
        c, o = cur, out
        if cols and big_p == 1:
            a = _Rows(c.storage, c.o, c.s * q, c.d, c.b1, c.s)
            b = _Rows(o.storage, o.o, o.s, o.d, o.b1, o.s * size)
            _block(ctx, real, size, a, b, (nb, q, 1), flags, factor_, bound, **mul)
        elif cols:
            a = _Rows(c.storage, c.o, c.s * q * big_p, c.d, c.b1, c.s, c.s * big_p)
            b = _Rows(o.storage, o.o, o.s * big_p, o.d, o.b1, o.s, o.s * big_p * size)
            _block(ctx, real, size, a, b, (nb, big_p, q), flags, factor_, bound,
                   big_p * size, 1, **mul)
        elif big_p == 1:
            a = _Rows(c.storage, c.o, c.s * q, c.d, c.s, c.b1)
            b = _Rows(o.storage, o.o, o.s, o.d, o.s * size, o.b1)
            _block(ctx, real, size, a, b, (q, nb, 1), flags, factor_, bound, **mul)
        else:
            a = _Rows(c.storage, c.o, c.s * q * big_p, c.d, c.s, c.s * big_p, c.b1)
            b = _Rows(o.storage, o.o, o.s * big_p, o.d, o.s, o.s * big_p * size, o.b1)
            _block(ctx, real, size, a, b, (big_p, q, nb), flags, factor_, bound,
                   big_p * size, 0, **mul)
        cur, big_p = out, big_p * size


def _block_way(ctx, n, src, dst, batch, real, lim, post=None):
    """How fft_block transforms these rows of n: ("rows", None): whole rows in one launch
    where a work-group holds enough of them; ("split", sizes): segments; None: it does not
    apply."""
    item = _cdtype(real).itemsize
    limits = _block_limits(ctx)
    interleaved = batch.nb1 > 1 and (abs(src.b1) < abs(src.s) or abs(dst.b1) < abs(dst.s))
    group, _ = _block_group(limits, n, item, batch.nb1, interleaved)
    if _block_fits(limits, n, item, group) and \
            (not interleaved or group * item >= BLOCK_COALESCE or group >= batch.nb1):
        return "rows", None
    sizes = _block_segments(limits, n, item)
    if not sizes or (lim is not None and post is None) or batch.nb2 != 1:
        return None
    # the launch dimensions 1 and 2: q of each segment, and P (columns) or the rows
    qs = [n // math.prod(sizes[:i + 1]) for i in range(len(sizes))]
    spans = [*qs, *(math.prod(sizes[:i]) for i in range(1, len(sizes)))] if batch.swap \
        else [*qs[1:], batch.nb1]
    return ("split", sizes) if max(spans) <= _MAX_DIM1 else None


def _block_c2c(ctx, way, n, src, dst, batch, real, fin, fout, scale, lim, pool, pre=None,
               post=None):
    """The transform by fft_block launches, the way _block_way says. pre (table, offset,
    lim) and post (table, offset): products of the loads and stores with a table at the
    element's index (_block); post's bound is lim."""
    if way[0] == "rows":
        _block(ctx, real, n, src, dst, (batch.nb1, batch.nb2, 1), fin | fout, scale, lim,
               pre=pre and (1, *pre[:2], 1, pre[2]), post=post and (1, *post, 1))
    else:
        _block_split(ctx, n, way[1], src, dst, batch, real, fin, fout, scale, lim, pool, pre,
                     post)


def _rows_fit(passes, group, most):
    """Whether fft_rows takes `passes` (two or more) on `group` rows of at most `most`
    elements at once."""
    return len(passes) > 1 and math.prod(r for r, _, _ in passes) * group <= most


def _local(ctx):
    """Work-items per work-group (dimension 0)."""
    return min(64 if ctx.device.is_gpu else 16, ctx.max_work_group_size)


def factor(n):
    """The radices of a length's Stockham passes, or None when n has a prime factor > 13."""
    out = []
    for r in RADICES:
        while n % r == 0:
            out.append(r)
            n //= r
    return out if n == 1 else None


class _Plan:
    """A transform length's passes [(radix, p, table offset)] and table, or Bluestein's:
    `m`, the sub-plan of length m, and the table (the chirp, then its transform's product
    factors from entry n)."""

    __slots__ = ("m", "n", "passes", "sub", "tab")

    def __init__(self, n):
        self.n, self.passes, self.sub, self.m, self.tab = n, [], None, 0, None


def _cdtype(real):
    return np.dtype(np.complex64 if real == "float" else np.complex128)


def _upload(ctx, values, real):
    host = np.ascontiguousarray(values, dtype=_cdtype(real))
    return to_device(host if host.size else np.zeros(1, host.dtype), ctx)


def _unit_roots(t, period):
    """exp(-2 pi i t / period) in float64, the angle reduced to |angle| <= pi first."""
    t = np.asarray(t, dtype=np.int64) % period
    t = np.where(2 * t > period, t - period, t)
    return np.exp(-2j * np.pi * (t / period))


def _stockham(ctx, n, real):
    """The passes of length n (smooth) and their twiddles, pass after pass: exp(-2 pi i j k
    / (p r)) for k < p, 1 <= j < r."""
    plan = _Plan(n)
    tables, offset, p = [], 0, 1
    for r in factor(n) or [1]:
        plan.passes.append((r, p, offset))
        if p > 1:
            k, j = np.arange(p)[:, None], np.arange(1, r)[None, :]
            tables.append(_unit_roots(j * k, p * r).ravel())
            offset += tables[-1].size
        p *= r
    plan.tab = _upload(ctx, np.concatenate(tables) if tables else [], real)
    return plan


def _bluestein_plan(ctx, n, real):
    """The chirp exp(-pi i j^2 / n) and the transform of its conjugate wrapped to length m,
    over m (then the inverse transform needs no scaling)."""
    plan = _Plan(n)
    m = _convolution_length(2 * n - 1)
    plan.m, plan.sub = m, _plan(ctx, m, real)
    j = np.arange(n, dtype=np.int64)
    chirp = _unit_roots(j * j, 2 * n)
    b = np.zeros(m, np.complex128)
    b[:n] = chirp.conj()
    b[m - n + 1:] = chirp.conj()[1:][::-1]
    plan.tab = _upload(ctx, np.concatenate([chirp, np.fft.fft(b) / m]), real)
    return plan


def _bluestein_cost(n):
    m = _convolution_length(2 * n - 1)
    return 2 * m * len(factor(m)) + 2 * m + n


# The algorithms for a length: (name, applies(n), cost(n) in elements read and written,
# make(ctx, n, real)); the cheapest that applies makes the plan.
ALGORITHMS = (
    ("stockham", lambda n: factor(n) is not None, lambda n: n * max(1, len(factor(n))),
     _stockham),
    ("bluestein", lambda n: n > 1, _bluestein_cost, _bluestein_plan),
)


def _plan(ctx, n, real):
    """The plan of length `n` in precision `real`, made once per context."""
    key = ("fft", n, real)
    plan = ctx.plans.get(key)
    if plan is None:
        make = min((a for a in ALGORITHMS if a[1](n)), key=lambda a: a[2](n))[3]
        plan = ctx.plans[key] = make(ctx, n, real)
    return plan


@functools.lru_cache(maxsize=256)
def _convolution_length(n):
    """Bluestein's m >= n: the 2^a 3^b 5^c 7^d of least m x passes (each pass moves every
    element once)."""
    top = 1 << (n - 1).bit_length()
    best = (top * len(factor(top)), top)
    odd = [1]
    for r in (3, 5, 7):
        odd = [f * r**e for f in odd for e in range(top.bit_length()) if f * r**e < top]
    for f in odd:
        m = f << max(0, (-(-n // f) - 1).bit_length())
        best = min(best, (m * len(factor(m)), m))
    return best[1]


def _real_table(ctx, h, real):
    """exp(-2 pi i k / 2h) for k = 0..h, kept per context."""
    key = ("fft-real", h, real)
    tab = ctx.plans.get(key)
    if tab is None:
        tab = ctx.plans[key] = _upload(ctx, _unit_roots(np.arange(h + 1), 2 * h), real)
    return tab


# ---------------------------------------------------------------- geometry and launches

class _Rows:
    """Where rows of complex elements are: a Storage; offset, element stride, the
    imaginary part's distance and the strides of the batch dimensions (a third for
    fft_block's launches), in real numbers."""

    __slots__ = ("b1", "b2", "b3", "d", "o", "s", "storage")

    def __init__(self, storage, o, s, d, b1, b2, b3=0):
        self.storage, self.o, self.s, self.d = storage, o, s, d
        self.b1, self.b2, self.b3 = b1, b2, b3

    def key(self):
        return (self.o, self.s, self.d, self.b1, self.b2)


class _Batch:
    """The rows a launch covers: nb1 x nb2 of them, nb1 the faster in memory; `swap` puts
    the rows' index fastest among the work-items (when rows are interleaved in memory)."""

    __slots__ = ("nb1", "nb2", "swap")

    def __init__(self, nb1, nb2, swap):
        self.nb1, self.nb2, self.swap = nb1, nb2, swap


def _temp_layout(length, batch):
    """(offset, element stride, imaginary distance, b1 and b2 strides) of new rows of
    `length` complex elements: the rows' index fastest where `batch` swaps."""
    nb1 = batch.nb1
    if batch.swap:
        return (0, 2 * nb1, 1, 2, 2 * length * nb1)
    return (0, 2, 1, 2 * length, 2 * length * nb1)


def _temp(ctx, length, batch, real):
    """New rows of `length` complex elements (_temp_layout)."""
    a = ArrayBase._empty(ctx, (max(1, length * batch.nb1 * batch.nb2),), _cdtype(real))
    return _Rows(a.storage, *_temp_layout(length, batch))


# ---------------------------------------------------------------- schedules

class _Schedule:
    """The launches of one transform call (_run), recorded at its first run (a
    launch.Recording) and replayed by the next calls of the same layouts: the input's and
    output's Storages and new temporaries of the recorded sizes go in, every other argument
    is as recorded. A repeated transform then costs its launches on the host, not their
    planning. None where the call made other commands than launches (copies, fills)."""

    __slots__ = ("steps", "temps")

    @classmethod
    def of(cls, rec, first, x, y):
        """The schedule of the commands `rec` recorded; the temporaries are the Storages the
        launches write that were allocated during it (serials past `first`; the twiddle
        tables, made then too, are only read) besides x and y."""
        if any(fn is not enqueue for fn, _ in rec.commands):
            return None
        self = cls()
        launches = [args[1:7] for _, args in rec.commands]
        temps = {id(st): st for *_, writes in launches for st in writes
                 if st.serial > first and st is not x and st is not y}
        index = {id(st): i for i, st in enumerate([x, y, *temps.values()])}

        def places(values):
            return tuple(values), tuple((p, index[id(v)]) for p, v in enumerate(values)
                                        if id(v) in index)

        # each step with its own copy of the kernel: the recorded arguments stay set, a
        # replay sets only the call's buffers
        self.steps = [(launcher.copy(), size, local, *places(args), *places(reads),
                       *places(writes))
                      for launcher, size, local, args, reads, writes in launches]
        self.temps = [st.nbytes for st in temps.values()]
        return self

    def replay(self, ctx, x, y):
        storages = [x, y, *(ctx.allocate(nbytes) for nbytes in self.temps)]
        for launcher, size, local, args, ap, reads, rp, writes, wp in self.steps:
            enqueue(ctx, launcher, size, local, _put(args, ap, storages),
                    _put(reads, rp, storages), _put(writes, wp, storages))


def _put(values, places, storages):
    values = list(values)
    for p, i in places:
        values[p] = storages[i]
    return values


def _launch(ctx, launcher, cnt, batch, src, dst, tab, n, p=1, toff=0, lim=None, flags=0,
            scale=1.0):
    """Run `launcher` with `cnt` work-items per row over `batch`'s rows, src -> dst."""
    nb1 = batch.nb1
    local = _local(ctx)
    total = cnt * nb1
    if total > _MAX_WORK:
        raise ArgumentError(f"FFT of {cnt} work-items x {nb1} rows in one launch: at most "
                            f"{_MAX_WORK}")
    args = (src.storage, dst.storage, tab.storage, n, p, toff, cnt, nb1, int(batch.swap),
            1.0 / cnt, 1.0 / nb1, 1.0 / p, src.o, src.s, src.d, src.b1, src.b2,
            dst.o, dst.s, dst.d, dst.b1, dst.b2, 0xFFFFFFFF if lim is None else lim, flags,
            scale)
    size = (-(-total // local) * local, batch.nb2)
    reads = (src.storage, tab.storage) if src.storage is not tab.storage else (src.storage,)
    enqueue(ctx, launcher, size, (local, 1), args, reads, (dst.storage,))


def _route(count, src, dst, pool):
    """The output of each of `count` passes src -> dst: none writes what it reads."""
    outs = [dst]
    for _ in range(count - 1):
        outs.insert(0, next(b for b in pool if b is not outs[0]))
    if count and outs[0] is src:
        raise AssertionError("FFT pass routing: a pass would write its input")
    return outs


def _c2c(ctx, plan, src, dst, batch, real, fin=0, fout=0, scale=1.0, lim=None, pool=None):
    """dst's rows = the forward transform of src's (the plan's length); flags `fin` on the
    first load, `fout`, `scale` and `lim` on the last store. `pool`: one or two temporaries
    of the plan's rows the passes may use (dst among them where it has their layout)."""
    k = _kernels(ctx, real)
    if plan.sub is not None:
        return _bluestein(ctx, plan, src, dst, batch, real, fin, fout, scale, lim)
    n, passes = plan.n, plan.passes
    way = _block_on(ctx) and len(passes) > 1 and _block_way(ctx, n, src, dst, batch, real, lim)
    if way:
        _block_c2c(ctx, way, n, src, dst, batch, real, fin, fout, scale, lim, pool)
        return
    cls = "gpu" if ctx.device.is_gpu else "cpu"
    lmax = _row_max(ctx, real)
    # whole rows in local memory: interleaved groups of adjacent ones where rows are
    # columns (adjacent elements belong to adjacent rows)
    group = min(ROWS_GROUP[cls], 1 << (batch.nb1.bit_length() - 1)) if batch.swap else 1
    if ROWS_LEAST <= n <= ROWS_LONGEST and _rows_fit(passes, group, lmax):
        group = _widen(ctx, group, n, batch.nb1, lmax)
        _rows(ctx, k, plan, passes, src, dst, (batch.nb1, batch.nb2), group, fin | fout,
              scale, lim)
        return
    group = ROWS_GROUP[cls]
    if ROWS[cls] and ctx.device.is_gpu and not PREVIOUS and batch.nb1 == 1 and \
            batch.nb2 == 1 and lim is None:
        segments = _segments(passes, lmax // group)
        if len(segments) > 1 and n // math.prod(r for r, _, _ in segments[0]) <= _MAX_WORK \
                and all(n // segments[i][0][1] // math.prod(r for r, _, _ in seg) <= _MAX_DIM1
                        for i, seg in enumerate(segments) if i):
            _split(ctx, k, plan, segments, src, dst, batch, real, group, fin, fout, scale,
                   pool)
            return
    head = _head(passes, lmax // group) if ROWS[cls] and not batch.swap and \
        batch.nb2 == 1 and batch.nb1 <= _MAX_DIM1 else 0
    if head >= len(passes) or not _rows_fit(passes[:head], group, lmax):
        head = 0
    # (the first split launch reads all of src: it cannot write there)
    pool = [b for b in pool or () if not (head and b is src)]
    while len(passes) > 1 and len(pool) < 2:
        pool.append(_temp(ctx, n, batch, real))
    rest = passes[head:]
    tail = head and lim is None and _rows_fit(rest, group, lmax)
    outs = _route(1 if tail else len(rest), None if head else src, dst, pool)
    cur = src
    if head:
        # four-step: the first passes as rows of `size` (elements q + Q j of a row, q < Q,
        # into q * size + ...), then the rest as rows of the elements k1 mod size
        size = n // math.prod(r for r, _, _ in rest)
        q = n // size
        cur = next(b for b in pool if b is not outs[0])
        _rows(ctx, k, plan, passes[:head],
              _Rows(src.storage, src.o, src.s * q, src.d, src.s, src.b1),
              _Rows(cur.storage, cur.o, cur.s, cur.d, cur.s * size, cur.b1), (q, batch.nb1),
              group, fin, 1.0, None)
        fin = 0
        if tail:
            _rows(ctx, k, plan, rest, _Rows(cur.storage, cur.o, cur.s * size, cur.d, cur.s,
                                            cur.b1),
                  _Rows(dst.storage, dst.o, dst.s * size, dst.d, dst.s, dst.b1),
                  (size, batch.nb1), group, fout, scale, None)
            return
    for i, (r, p, toff) in enumerate(rest):
        last = i == len(rest) - 1
        _launch(ctx, k[f"fft_radix{r}"], n // r, batch, cur, outs[i], plan.tab, n // r, p,
                toff, lim if last else None, (fin if i == 0 else 0) | (fout if last else 0),
                scale if last else 1.0)
        cur = outs[i]


def _segments(passes, most):
    """`passes` cut into runs of consecutive ones, each of product <= `most` (greedily)."""
    out, size = [], most + 1
    for step in passes:
        if size * step[0] > most:
            out.append([])
            size = 1
        out[-1].append(step)
        size *= step[0]
    return out


def _split(ctx, k, plan, segments, src, dst, batch, real, group, fin, fout, scale, pool):
    """The transform of one row of n as segments of its passes, each one launch that reads
    and writes every element once. Between segments the data are the Stockham passes' own
    (after passes of product P: element b P + k1, b < n / P, is the P-point transform of the
    elements b + t n / P at frequency k1), so a segment of product B after P is rows (k1 < P,
    b < n / (P B)) of the B elements b P + k1 + t n / B, stored at b P B + k1 + t P: rows in
    local memory (fft_rows) where the segment has two or more passes, else one global pass.
    The first segment (P = 1) runs its rows along b, the others along k1 (adjacent rows are
    adjacent in memory: coalesced in groups of `group`)."""
    n, lmax = plan.n, _row_max(ctx, real)
    pool = [b for b in pool or () if b is not src]
    while len(pool) < 2:
        pool.append(_temp(ctx, n, batch, real))
    outs = [dst]
    for _ in range(len(segments) - 1):
        outs.insert(0, next(b for b in pool if b is not outs[0]))
    cur = src
    for i, seg in enumerate(segments):
        last = i == len(segments) - 1
        out = outs[i]
        flags = (fin if i == 0 else 0) | (fout if last else 0)
        factor = 1.0 if not last else scale
        big_p, size = seg[0][1], math.prod(r for r, _, _ in seg)
        q = n // (big_p * size)
        if len(seg) == 1:
            r, p, toff = seg[0]
            _launch(ctx, k[f"fft_radix{r}"], n // r, batch, cur, out, plan.tab, n // r, p,
                    toff, None, flags, factor)
        elif big_p == 1:
            _rows(ctx, k, plan, seg, _Rows(cur.storage, cur.o, cur.s * q, cur.d, cur.s, 0),
                  _Rows(out.storage, out.o, out.s, out.d, out.s * size, 0), (q, 1),
                  _widen(ctx, group, size, q, lmax), flags, factor, None)
        else:
            _rows(ctx, k, plan, seg,
                  _Rows(cur.storage, cur.o, cur.s * (n // size), cur.d, cur.s, cur.s * big_p),
                  _Rows(out.storage, out.o, out.s * big_p, out.d, out.s,
                        out.s * big_p * size), (big_p, q), _widen(ctx, group, size, big_p, lmax),
                  flags, factor, None)
        cur = out


def _widen(ctx, group, size, rows, most):
    """GPUs: `group` doubled while the group's rows of `size` still fit in `most` elements
    (at most 16 rows, and no more than there are), so that every work-item has butterflies
    to do and loads of adjacent rows span whole memory segments."""
    if not ctx.device.is_gpu or PREVIOUS:
        return group
    while group < 16 and 2 * group * size <= most and 2 * group <= rows:
        group *= 2
    return group


def _head(passes, most):
    """How many first passes make rows of at most `most` (0 when fewer than two)."""
    size, count = 1, 0
    for r, _, _ in passes:
        if size * r > most:
            break
        size, count = size * r, count + 1
    return count if count > 1 else 0


def _rows(ctx, k, plan, passes, src, dst, rows, group, flags, scale, lim):
    """`passes` (of `plan`) over rows (nb1 x nb2 of them) in local memory, `group` (a power
    of two) rows per work-group. Passes after the first of the plan work on rows of the
    elements b1 mod p (p: the product of the earlier radices), stored whole (lim None)."""
    code, size = 0, 1
    for i, (r, _, _) in enumerate(passes):
        code |= (1, *RADICES).index(r) << (4 * i)
        size *= r
    p, toff = passes[0][1], passes[0][2]
    local = min(ROWS_LOCAL["gpu" if ctx.device.is_gpu else "cpu"], ctx.max_work_group_size)
    if lim is not None and p > 1:
        raise AssertionError("fft_rows stores every element of a later segment")
    real = "float" if plan.tab.dtype == np.complex64 else "double"
    pow2 = ctx.device.is_gpu and not PREVIOUS and all(r in (2, 4, 8, 16) for r, _, _ in passes)
    args = (src.storage, dst.storage, plan.tab.storage, size, p, toff, group, rows[0],
            group.bit_length() - 1, 1.0, 1.0, 1.0, src.o, src.s, src.d, src.b1, src.b2, dst.o,
            dst.s, dst.d, dst.b1, dst.b2, 0xFFFFFFFF if lim is None else lim, flags, scale,
            code, len(passes))
    enqueue(ctx, _rows_pow2(ctx, real) if pow2 else k["fft_rows"],
            (-(-rows[0] // group) * local, rows[1]), (local, 1), args,
            (src.storage, plan.tab.storage), (dst.storage,))


def _bluestein(ctx, plan, src, dst, batch, real, fin, fout, scale, lim):
    """Bluestein's chirp-z: y = chirp * IFFT_m(FFT_m(chirp * x) * B), the inverse transform
    as the conjugated forward one, 1/m folded into B."""
    k = _kernels(ctx, real)
    n, m, sub = plan.n, plan.m, plan.sub
    p0, p1 = _temp(ctx, m, batch, real), _temp(ctx, m, batch, real)
    lim = n if lim is None else min(n, lim)
    if _block_on(ctx) and len(sub.passes) > 1:
        # the three products folded into the loads and stores of fft_block's launches
        first = _block_way(ctx, m, src, p1, batch, real, None)
        second = _block_way(ctx, m, p1, dst, batch, real, lim, plan.tab)
        if first and second:
            _block_c2c(ctx, first, m, src, p1, batch, real, fin & ~CONJ_OUT, CONJ_OUT, 1.0,
                       None, [p0], pre=(plan.tab, 0, n), post=(plan.tab, n))
            _block_c2c(ctx, second, m, p1, dst, batch, real, 0,
                       MUL_CONJ | (fout & ~CONJ_IN), scale, lim, [p0], post=(plan.tab, 0))
            return
    count = len(sub.passes)
    first = _route(count, None, p1, [p0, p1])
    start = p0 if first[0] is p1 else p1
    _launch(ctx, k["fft_pointwise"], m, batch, src, start, plan.tab, n, flags=fin & ~CONJ_OUT)
    _c2c(ctx, sub, start, p1, batch, real, pool=[p0, p1])
    # the product, conjugated: the next forward transform is then the inverse one
    _launch(ctx, k["fft_pointwise"], m, batch, p1, p1, plan.tab, m, toff=n, flags=CONJ_OUT)
    final = p1 if count % 2 == 0 else p0
    _c2c(ctx, sub, p1, final, batch, real, pool=[p0, p1])
    _launch(ctx, k["fft_pointwise"], n, batch, final, dst, plan.tab, n, lim=lim,
            flags=CONJ_IN | (fout & ~CONJ_IN), scale=scale)


# ---------------------------------------------------------------- one axis

def _check_norm(norm):
    if norm is None:
        return "backward"
    if norm not in _NORMS:
        raise ArgumentError(f'Invalid norm value {norm!r}; should be "backward", "ortho" or '
                            f'"forward"')
    return norm


def _scale(norm, n, inverse):
    if norm == "ortho":
        return 1 / math.sqrt(n)
    return 1.0 / n if (norm == "forward") != inverse else 1.0


def _points(n, what="FFT data points"):
    try:
        n = operator.index(n)
    except TypeError:
        raise ArgumentTypeError(f"the number of {what} must be an integer, not {n!r}") from None
    if n < 1:
        raise ArgumentError(f"Invalid number of {what} ({n}) specified.")
    return n


def _real_of(ctx, dt):
    """('float' or 'double') the precision a transform of dtype `dt` computes in: numpy's
    (float32 and complex64 in single, the rest in double), single on a device without fp64
    for integers and bools."""
    if dt in (np.float16, np.float32, np.complex64):
        return "float"
    if dt.kind in "fc":
        dtypes.check_device(dt, ctx)
        return "double"
    return "double" if ctx.fp64 else "float"


def _as_gpu(a):
    return a if isinstance(a, ArrayBase) else asarray(a)


def _rows_of(a, axis):
    """(_Rows of `a` along `axis` with the batch strides left out, in reals; element
    stride in reals) of an array of the transform's precision."""
    rsize = a.itemsize // (2 if a.dtype.kind == "c" else 1)
    return a.offset // rsize, a.strides[axis] // rsize, [s // rsize for s in a.strides]


def _fit(a, axis, n):
    """`a` with `n` elements along `axis`: a view of the first n, or a copy padded with
    zeros (as numpy pads)."""
    have = a.shape[axis]
    if n == have:
        return a
    index = [slice(None)] * a.ndim
    if n < have:
        index[axis] = slice(0, n)
        return a[tuple(index)]
    padded = zeros((*a.shape[:axis], n, *a.shape[axis + 1:]), a.dtype, context=a.context)
    index[axis] = slice(0, have)
    padded[tuple(index)] = a
    return padded


def _check_out(out, shape, dtype, like):
    """`out` to compute into directly, None to compute into a new array (then copied to out
    when given)."""
    if out is None:
        return None
    if not isinstance(out, ArrayBase):
        raise ArgumentTypeError(f"out= must be a GpuArray, not {type(out).__name__}")
    if out.shape != shape:
        raise ShapeError(f"out= has shape {out.shape}, the transform's is {shape}")
    check_same_context(like, out)
    out._check_writeable()
    return out if out.dtype == dtype and not out._may_share(like) else None


def _one_axis(a, n, axis, norm, out, kind, inverse, conj=False):
    """The transform of `kind` ('c2c', 'r2c', 'c2r') of `a` along `axis` with n points.
    A call repeated on a new output (same layouts, nothing to convert) replays the first
    one's schedule at once."""
    a = _as_gpu(a)
    ctx = a.context
    if out is None:
        call = ("fft-call", kind, inverse, conj, n, axis, norm, a.shape, a.strides, a.offset,
                a.dtype, _switches(ctx))
        known = ctx.plans.get(call)
        if known is not None:
            shape, dtype, schedule = known
            y = ArrayBase._empty(ctx, shape, dtype)
            schedule.replay(ctx, a.storage, y.storage)
            return y
    given = a
    norm = _check_norm(norm)
    if a.ndim == 0:
        raise ArgumentError("FFT of a 0-d array: it needs at least one axis")
    axis = _normalize_axis(axis, a.ndim)
    real = _real_of(ctx, a.dtype)
    cdt = _cdtype(real)
    rdt = np.dtype(np.float32 if real == "float" else np.float64)
    if kind == "c2r":
        n = _points(2 * (a.shape[axis] - 1) if n is None else n)
        out_len, out_dt = n, rdt
    else:
        n = _points(a.shape[axis] if n is None else n)
        out_len, out_dt = (n // 2 + 1 if kind == "r2c" else n), cdt
    if kind == "r2c" and a.dtype.kind == "c":
        raise ArgumentTypeError(f"rfft needs real input, got {a.dtype}; use fft")
    shape = (*a.shape[:axis], out_len, *a.shape[axis + 1:])
    dst_arr = _check_out(out, shape, out_dt, a)
    if dst_arr is None:
        dst_arr = ArrayBase._empty(ctx, shape, out_dt)
    if kind == "c2r":
        lim = min(a.shape[axis], n // 2 + 1)
        a = _fit(a, axis, lim) if a.shape[axis] > lim else a
    else:
        a = _fit(a, axis, n)
    want = cdt if (a.dtype.kind == "c" or kind == "c2r") else rdt
    if a.dtype != want:
        a = a.astype(want)
    if dst_arr.size:
        schedule = _run(a, dst_arr, axis, n, kind, real, _scale(norm, n, inverse), inverse,
                        conj)
        if out is None and a is given and schedule is not None:
            ctx.plans[call] = (shape, out_dt, schedule)
    if out is not None and dst_arr is not out:
        return out._assign(dst_arr)
    return dst_arr


def _run(a, y, axis, n, kind, real, scale, inverse, conj):
    """y = the transform of a along axis (both of the transform's precision, y's length
    there the transform's output), by the schedule of its layouts: made by _plan_run at the
    first call, replayed after. Returns the schedule (None: none could be kept)."""
    ctx = a.context
    key = ("fft-run", kind, n, real, scale, inverse, conj, axis, a.shape, a.strides, a.offset,
           a.dtype, y.shape, y.strides, y.offset, y.dtype, a.storage is y.storage,
           _switches(ctx))
    schedule = ctx.plans.get(key)
    if schedule is None:
        rec, first = launch.Recording(), serial_mark()
        with launch.recording(rec):
            _plan_run(a, y, axis, n, kind, real, scale, inverse, conj)
        schedule = _Schedule.of(rec, first, a.storage, y.storage)
        if schedule is not None:
            ctx.plans[key] = schedule
    else:
        schedule.replay(ctx, a.storage, y.storage)
    return schedule


def _switches(ctx):
    """What the module's choices are now (tests and benchmarks change them)."""
    cls = "gpu" if ctx.device.is_gpu else "cpu"
    return (BLOCK[cls], ROWS[cls], PREVIOUS, _block_limits(ctx), ROWS_ELEMENTS[cls],
            ROWS_GROUP[cls], ROWS_LOCAL[cls])


def _plan_run(a, y, axis, n, kind, real, scale, inverse, conj):
    """_run's launches, planned from the layouts."""
    ctx = a.context
    xo, xs, xb = _rows_of(a, axis)
    yo, ys, yb = _rows_of(y, axis)
    others = [d for d in range(a.ndim) if d != axis]
    dims, (xbs, ybs) = elemwise.collapse([a.shape[d] for d in others],
                                         [[xb[d] for d in others], [yb[d] for d in others]])
    dims, xbs, ybs = [1, 1, *dims], [0, 0, *xbs], [0, 0, *ybs]
    nb1, nb2 = dims[-1], dims[-2]
    outer = list(zip(dims[:-2], xbs[:-2], ybs[:-2]))
    if nb2 > _MAX_DIM1:
        outer.append((nb2, xbs[-2], ybs[-2]))
        nb2 = 1
    swap = nb1 > 1 and abs(ybs[-1]) < abs(ys)
    batch = _Batch(nb1, nb2, swap)
    xreal, yreal = a.dtype.kind != "c", y.dtype.kind != "c"
    for index in itertools.product(*(range(d) for d, _, _ in outer)):
        dx = sum(i * s for i, (_, s, _) in zip(index, outer))
        dy = sum(i * s for i, (_, _, s) in zip(index, outer))
        # a real array's elements as complex ones: pairs (r2c, c2r of even n) or alone
        pair_x, pair_y = kind == "r2c" and n % 2 == 0, kind == "c2r" and n % 2 == 0
        src = _Rows(a.storage, xo + dx, 2 * xs if pair_x else xs,
                    (xs if pair_x else 0) if xreal else 1, xbs[-1], xbs[-2])
        dst = _Rows(y.storage, yo + dy, 2 * ys if pair_y else ys,
                    (ys if pair_y else 0) if yreal else 1, ybs[-1], ybs[-2])
        fin = (REAL_IN if xreal and not pair_x else 0)
        if kind == "c2c":
            _c2c_rows(ctx, n, src, dst, batch, real, fin, inverse, scale, a, y)
        elif kind == "r2c":
            _r2c_rows(ctx, n, src, dst, batch, real, fin, scale, conj)
        else:
            _c2r_rows(ctx, n, src, dst, batch, real, scale, conj, a.shape[axis])


def _c2c_rows(ctx, n, src, dst, batch, real, fin, inverse, scale, a, y):
    flip = CONJ_IN | CONJ_OUT if inverse else 0
    plan = _plan(ctx, n, real)
    # an output laid out as the temporaries (a new one): the passes ping-pong through it
    pool = [dst] if (y.offset == 0 and y._is_c() and not y._may_share(a)
                     and dst.key() == _temp_layout(n, batch)) else None
    _c2c(ctx, plan, src, dst, batch, real, fin | (flip & CONJ_IN), flip & CONJ_OUT, scale,
         pool=pool)


def _r2c_rows(ctx, n, src, dst, batch, real, fin, scale, conj):
    k = _kernels(ctx, real)
    fout = CONJ_OUT if conj else 0
    if n % 2:
        _c2c(ctx, _plan(ctx, n, real), src, dst, batch, real, fin, fout, scale, n // 2 + 1)
        return
    h = n // 2
    z = _temp(ctx, h, batch, real)
    _c2c(ctx, _plan(ctx, h, real), src, z, batch, real, pool=[z])
    _launch(ctx, k["fft_r2c_post"], h + 1, batch, z, dst, _real_table(ctx, h, real), h,
            flags=fout, scale=scale)


def _c2r_rows(ctx, n, src, dst, batch, real, scale, conj, given):
    k = _kernels(ctx, real)
    fin = CONJ_IN if conj else 0
    lim = min(given, n // 2 + 1)
    if n % 2:
        full = _temp(ctx, n, batch, real)
        _launch(ctx, k["fft_hermitian"], n, batch, src, full, full, n, lim=lim, flags=fin)
        _c2c(ctx, _plan(ctx, n, real), full, dst, batch, real, CONJ_IN, CONJ_OUT | REAL_OUT,
             scale)
        return
    h = n // 2
    plan = _plan(ctx, h, real)
    pool = [_temp(ctx, h, batch, real), _temp(ctx, h, batch, real)]
    if plan.sub is None:
        outs = _route(len(plan.passes), None, dst, pool)
        z = next(b for b in pool if b is not outs[0])
    else:
        z = pool[0]
    _launch(ctx, k["fft_c2r_pre"], h, batch, src, z, _real_table(ctx, h, real), h, lim=lim,
            flags=fin)
    _c2c(ctx, plan, z, dst, batch, real, CONJ_IN, CONJ_OUT, scale, pool=pool)


# ---------------------------------------------------------------- numpy's functions

def fft(a, n=None, axis=-1, norm=None, out=None):
    """The discrete Fourier transform of `a` along `axis` (numpy.fft.fft)."""
    return _one_axis(a, n, axis, norm, out, "c2c", False)


def ifft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse discrete Fourier transform along `axis` (numpy.fft.ifft)."""
    return _one_axis(a, n, axis, norm, out, "c2c", True)


def rfft(a, n=None, axis=-1, norm=None, out=None):
    """The transform of real `a` along `axis`: its n // 2 + 1 non-negative frequencies."""
    return _one_axis(a, n, axis, norm, out, "r2c", False)


def irfft(a, n=None, axis=-1, norm=None, out=None):
    """The real inverse of rfft: n (default 2 * (m - 1)) real points along `axis`."""
    return _finish_real(a, _one_axis(a, n, axis, norm, out, "c2r", True), out)


def hfft(a, n=None, axis=-1, norm=None, out=None):
    """The real transform of a Hermitian-symmetric signal given by its first half."""
    norm = _swap(norm)
    return _finish_real(a, _one_axis(a, n, axis, norm, out, "c2r", True, conj=True), out)


def ihfft(a, n=None, axis=-1, norm=None, out=None):
    """The inverse of hfft: the first half of the Hermitian spectrum of real `a`."""
    return _one_axis(a, n, axis, _swap(norm), out, "r2c", False, conj=True)


def _swap(norm):
    norm = _check_norm(norm)
    return {"backward": "forward", "forward": "backward"}.get(norm, norm)


def _finish_real(a, result, out):
    """numpy gives float16 for float16 input of irfft and hfft."""
    if out is None and getattr(a, "dtype", None) == np.float16:
        return result.astype(np.float16)
    return result


def _cook(a, s, axes, invreal=False):
    """numpy's (s, axes) of an n-d transform."""
    if axes is not None:
        axes = [axes] if isinstance(axes, int | np.integer) else list(axes)
    if s is None:
        axes = list(range(a.ndim)) if axes is None else axes
        s = [a.shape[_normalize_axis(ax, a.ndim)] for ax in axes]
        if invreal and s:
            s[-1] = (s[-1] - 1) * 2
    else:
        s = [s] if isinstance(s, int | np.integer) else list(s)
        if axes is None:
            axes = list(range(-len(s), 0))
        if len(s) != len(axes):
            raise ArgumentError(f"Shape and axes have different lengths: s={tuple(s)}, "
                                f"axes={tuple(axes)}")
        s = [a.shape[_normalize_axis(ax, a.ndim)] if v == -1 else v for v, ax in zip(s, axes)]
    return s, [_normalize_axis(ax, a.ndim) for ax in axes]


def _nd(a, s, axes, norm, out, inverse):
    a = _as_gpu(a)
    s, axes = _cook(a, s, axes)
    if not axes:
        return a.astype(_cdtype(_real_of(a.context, a.dtype)))
    for i in range(len(axes) - 1, -1, -1):
        a = _one_axis(a, s[i], axes[i], norm, out if i == 0 else None, "c2c", inverse)
    return a


def fftn(a, s=None, axes=None, norm=None, out=None):
    """The n-d transform over `axes` (all by default), with `s` points along them."""
    return _nd(a, s, axes, norm, out, False)


def ifftn(a, s=None, axes=None, norm=None, out=None):
    """The n-d inverse transform over `axes`."""
    return _nd(a, s, axes, norm, out, True)


def fft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-d transform over `axes`."""
    return _nd(a, s, axes, norm, out, False)


def ifft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-d inverse transform over `axes`."""
    return _nd(a, s, axes, norm, out, True)


def rfftn(a, s=None, axes=None, norm=None, out=None):
    """The n-d transform of real `a`: rfft along the last of `axes`, fft along the rest."""
    a = _as_gpu(a)
    s, axes = _cook(a, s, axes)
    if not axes:
        raise ArgumentError("rfftn needs at least one axis")
    a = rfft(a, s[-1], axes[-1], norm, out if len(axes) == 1 else None)
    for i in range(len(axes) - 2, -1, -1):
        a = _one_axis(a, s[i], axes[i], norm, out if i == 0 else None, "c2c", False)
    return a


def irfftn(a, s=None, axes=None, norm=None, out=None):
    """The inverse of rfftn: ifft along all of `axes` but the last, irfft along it."""
    a = _as_gpu(a)
    s, axes = _cook(a, s, axes, invreal=True)
    if not axes:
        raise ArgumentError("irfftn needs at least one axis")
    b = a
    for i in range(len(axes) - 1):
        b = _one_axis(b, s[i], axes[i], norm, None, "c2c", True)
    return _finish_real(a, _one_axis(b, s[-1], axes[-1], norm, out, "c2r", True), out)


def rfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The 2-d transform of real `a`."""
    return rfftn(a, s, axes, norm, out)


def irfft2(a, s=None, axes=(-2, -1), norm=None, out=None):
    """The inverse of rfft2."""
    return irfftn(a, s, axes, norm, out)


# ---------------------------------------------------------------- helpers

def _freq_dtype(ctx, dtype):
    if dtype is not None:
        return dtypes.check_device(dtype, ctx)
    return np.dtype(np.float64 if ctx.fp64 else np.float32)


def fftfreq(n, d=1.0, device=None, *, dtype=None, context=None):
    """The sample frequencies of a transform of n points, spacing d (float64 as numpy's,
    float32 on a device without fp64)."""
    n = _points(n, "frequencies")
    ctx = get_context(device if device is not None else context)
    k = np.concatenate([np.arange((n - 1) // 2 + 1), np.arange(-(n // 2), 0)])
    return to_device((k / (n * d)).astype(_freq_dtype(ctx, dtype)), ctx)


def rfftfreq(n, d=1.0, device=None, *, dtype=None, context=None):
    """The sample frequencies of rfft's output, n // 2 + 1 of them."""
    n = _points(n, "frequencies")
    ctx = get_context(device if device is not None else context)
    return to_device((np.arange(n // 2 + 1) / (n * d)).astype(_freq_dtype(ctx, dtype)), ctx)


def _shift(x, axes, sign):
    x = _as_gpu(x)
    if axes is None:
        axes = tuple(range(x.ndim))
    elif isinstance(axes, int | np.integer):
        axes = (axes,)
    shifts = [sign * (x.shape[_normalize_axis(ax, x.ndim)] // 2) for ax in axes]
    if not axes:
        return x.copy()
    return manipulation.roll(x, shifts, tuple(axes))


def fftshift(x, axes=None):
    """The zero frequency moved to the middle of `axes` (all by default)."""
    return _shift(x, axes, 1)


def ifftshift(x, axes=None):
    """The inverse of fftshift."""
    return _shift(x, axes, -1)

