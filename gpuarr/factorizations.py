"""Dense factorizations on the device: Cholesky, LU with partial pivoting, triangular solves,
inverse, Householder QR, on batches of matrices (p, m, n).

Small matrices (n <= the block size) take one kernel launch for the whole batch
(kernels/linalg.cl.mako): one work-group per matrix on GPUs, one work-item per matrix on CPUs.
Larger ones run blocked, LAPACK's right-looking way, with as few launches as the algorithm
allows (each costs the host ~10 us on NVIDIA's OpenCL): Cholesky's diagonal blocks by one
kernel, the panel below by the substitution kernel (GPUs) or one GEMM with the block's
inverse (CPUs); LU's and QR's panels by one kernel each on GPUs (a work-group holding the
panel's rows in registers; on NVIDIA, for one matrix, the grid kernels: the rows spread over
up to one work-group per multiprocessor, meeting at a barrier in global memory once a
column; CPUs: recursive halves down to the one-matrix kernels for LU, the host's LAPACK for
QR, the MAGMA way); the triangular solves and inverses recursive (halves: most flops in
large GEMMs; on NVIDIA the solves of one matrix with few right-hand sides one grid kernel
each); the trailing updates, where the O(n^3) flops are, by blas.gemm_into. Failures (a
non-positive pivot, a zero pivot) are flagged on the device, one int per matrix, read back
once by the caller; so is a grid kernel's barrier that gave up (DeviceTimeout).
"""

from typing import NamedTuple

import numpy as np

from . import blas
from .base import empty, to_device, zeros
from .errors import DeviceTimeout
from .kernels import get_program, kernel_from
from .kernels.cltypes import device_acqrel, device_fence, device_redux
from .launch import enqueue
from .reduction import device_class
from .ufuncs import UFUNCS

__all__ = ["apply_block", "block_size", "gather_rows", "gauss_jordan_fits", "geqrf", "gesvj",
           "gesvj_fits", "gesvj_rows", "getrf", "getri", "getrs", "identity", "inverse",
           "jacobi_max", "laswp", "orgqr", "potrf", "solve_small", "syevj", "syrk_lower", "sytrd",
           "sytrd_fits", "trsm"]

# Block sizes (Cholesky's diagonal blocks, LU's and QR's panel widths) by device class;
# matrices up to this size take one launch. GPUs: at most what potrf_leaf's local memory
# holds (_local_sizes).
BLOCK = {"gpu": 64, "cpu": 64}
# The most row swaps laswp_group applies in one launch (a block's): on an H200 a 4096 LU's
# swaps after each 64-column panel took 30.7 us one swap after another a column (2 ms of a
# float32 solve's 18), 15.6 us by laswp_group with 32 columns a work-group, 12.8 us with 16
# (standalone, `.device/laswpvar.py`, 64 random pivots: 11.0 against 12.7 us).
SWAPS = 64
# Cholesky: the diagonal blocks are grouped in panels of this many blocks; the update right
# of a panel is one SYRK (split in halves SYRK_DEPTH times, as GEMMs).
CHOL_OUTER = {"gpu": 4, "cpu": 1}
SYRK_DEPTH = {"gpu": 1, "cpu": 3}
# Cholesky's panel below a diagonal block: True, the block and L21^T = conj(L11)^-1 A21^T
# in one launch (potrf_panel: every work-group factors the block, then substitutes for its
# rows); False, one GEMM with the block's inverse, which the diagonal block's kernel forms
# (MAGMA's way). H100, 4096, float32, with the substitution a launch of its own: GPU time
# 6.75 ms against 8.0 ms.
CHOL_TRSM = {"gpu": True, "cpu": False}
# LU: panels (of the block size) grouped in outer panels of this many, whose trailing update
# is one GEMM (GPUs: GEMMs with k = 64 run far below their peak).
LU_OUTER = {"gpu": 4, "cpu": 1}
# QR: block sizes a panel (GPUs: at most PANEL_WIDTH columns).
QR_BLOCK = {"gpu": 1, "cpu": 1}
# Columns potrf_leaf and potrf_panel (rows trsm_tile) take between two barriers: a diagonal
# block of this size (2 or more) factored (solved) by every work-item in registers. H200, a
# 64 x 64 block: 4 took potrf_leaf 37 -> 29 us, 8 36 us.
LEAF_STEP = 4
# Triangular solves: leaves of this many block sizes (GPUs: at most trsm_tile's tb).
TRSM_LEAF = {"gpu": 2, "cpu": 1}
# Columns of the LU panel's leaves on CPUs (the one-matrix kernel); wider panels split in
# halves.
PANEL_LEAF = 16
# GPU panel kernels (getrf_panel, geqrf_panel): work-items of a work-group (64 for panels of
# at most 64 rows), 32-bit registers a work-item gives the panel's values (and a quarter of
# that for a chunk of the rest of the panel), bytes of local memory for a reduction's
# partial sums, widest panel.
PANEL_THREADS = 512
PANEL_WORDS = 64
PANEL_LOCAL = 32768
PANEL_WIDTH = 128
# Rows a work-item holds (the fewest of these that cover the panel): each is a kernel build
# per dtype, and a panel's time goes to latency more than to rows.
PANEL_ROWS = (2, 8, 32)
# Whether the panel kernels' column loops are unrolled (None: everywhere but PoCL, whose
# compiler takes minutes over them and miscompiles their unrollable form).
PANEL_UNROLL = None
# The grid kernels (NVIDIA GPUs, one matrix; other GPUs, whose compute units are not
# multiprocessors, and batches keep the one-work-group kernels): getrf_grid and geqrf_grid,
# the LU and QR panels with their rows spread over work-groups of GRID_LOCAL work-items,
# GRID_ROWS rows each at least (more where the compute units would not suffice; at most
# GRID_TILE bytes) in local memory, meeting at a barrier in global memory once a column;
# trsm_grid, a block of rows a work-group. At most one work-group per compute unit, so that
# all run at once. H100, 4096, a panel's time: getrf_grid 163 us (256, 32), 181 (256, 64),
# 167 (128, 32), 182 (512, 64); geqrf_grid 151 (512, 64), 155 (256, 64), 158 (256, 32);
# trsm_grid 0.70 ms a solve at 512 work-items, 0.82 at 256 (float32, .device/lin_run.py prof).
GRID_LOCAL = {"getrf_grid": 256, "geqrf_grid": 512, "trsm_grid": 512, "sytrd_grid": 256}
GRID_ROWS = {"getrf_grid": 32, "geqrf_grid": 64}
GRID_TILE = 32768
# Work-items leading each column of getrf_grid (a warp: NVIDIA's inline PTX shuffles).
GRID_WARP = 32
# getrf_grid applies its panel's row swaps to the rest of the matrix before it ends (no
# laswp launch a panel), this many columns at a time a work-group, with at least enough
# work-groups that each takes two such chunks (up to the first panel's work-groups).
GRID_SWAP_COLUMNS = 16
# trsm_grid (the triangular solves of one matrix, one launch): right-hand sides at most
# (fewer where 2 blocks of them would pass GRID_TILE bytes); the triangle's blocks pass
# through the rest of GRID_BYTES of local memory (the widest power-of-two slice that fits).
GRID_RHS = 16
GRID_BYTES = 40960
# sytrd_grid (Householder tridiagonalization, one launch): matrices up to SYTRD_MAX (a
# work-item's columns in registers), the bytes of local memory for its rows' sums, the bytes
# of a work-item's loads in flight at once.
SYTRD_MAX = 4096
SYTRD_REDUCE = 32768
SYTRD_LOADS = 128
# False: no kernel whose work-groups wait on each other (getrf_panel, GEMM-based solves).
GRID = True
# Inverses and solves of matrices up to this size (a batch, or one; solves with at most
# max(GJ_ROWS) right-hand sides) by one launch of getri_gj / gesv_gj (Gauss-Jordan, a row a
# work-item in registers, GJ_LOCAL work-items a work-group holding several matrices) rather
# than getrf and getrs; CPUs keep those (one work-item a matrix).
GJ_MAX = {"gpu": 32, "cpu": 0}
GJ_LOCAL = 128
# Row lengths of getri_gj's builds (work-items a matrix): the smallest that holds n.
GJ_ROWS = (8, 16, 32)
# Bytes of a work-item's rows (A's, and b's for a solve) at most: past it the registers
# spill (H100, 10,000 systems of 32 complex128 with one right-hand side: 3.9 ms, against
# 2.8 ms by LU; inverses of 32 complex128, 512 bytes: 2.0 against 3.2 ms).
GJ_BYTES = 512
# Hermitian eigenproblems up to this size run cyclic Jacobi on the device (one work-item per
# matrix), larger ones numpy's LAPACK on the host. CPU: measured against numpy (0.5-2x at
# 8-32); GPU: unmeasured, kept small (a work-item's matrix should stay in cache).
JACOBI_MAX = {"gpu": 16, "cpu": 32}
# One-sided block Jacobi on the device (gesvj) takes SVDs with min(m, n) >= GESVJ_MIN, and
# batches of at least GESVJ_BATCH SVDs or Hermitian eigenproblems past JACOBI_MAX, of
# matrices at least GESVJ_BATCH_LEAST wide, and single eigenproblems from GESVJ_EIGH_ONE;
# the rest, and CPUs (numpy's LAPACK is faster there), the host's LAPACK.
# H200 against the host's LAPACK (16 cores), first version: svd 512 / 2048 float32 0.04 /
# 0.42 s against 0.09 / 1.8 s; eigh of one 512 / 1024 matrix 0.034 / 0.11 s against 0.027 /
# 0.11 s, of 64 x 128 x 128 0.007 s against 0.08 s.
GESVJ_MIN = {"gpu": 128, "cpu": None}
GESVJ_BATCH = {"gpu": 2, "cpu": None}
GESVJ_EIGH_ONE = 1024
GESVJ_BATCH_LEAST = 17
# gesvj's vectors a block (a work-group rotates two blocks), its work-group size, the bytes
# of a work-group's tile of them (the next one's loads in flight while it works on one), the
# rows from which the host reorders them after each sweep (gesvj), the inner Jacobi sweeps
# over a pair's Gram matrix, and the sweeps at most. H200, svd 2048 float32, before the QR
# and the prefetch: blocks of 8 0.48 s, of 16 0.63 s, of 4 0.45 s; one inner sweep as fast
# and more accurate than two; after them: tiles of 8 / 16 / 32 KiB 0.211 / 0.225 / 0.205 s,
# float64 0.366 / 0.338 / 0.299 s; blocks of 4 / 16 0.34 / 0.27 s; work-groups of 512
# 0.194 / 0.282 s (float32 / float64) against 256's 0.196 / 0.312.
GESVJ_BLOCK = 8
GESVJ_LOCAL = {"gpu": 256, "cpu": 64}
GESVJ_TILE = 32768
GESVJ_ORDER = 512
GESVJ_INNER = 1
GESVJ_SWEEPS = 40
# Work-group size of the one-matrix kernels.
LOCAL = {"gpu": 256, "cpu": 32}
# Whether a small matrix (and Cholesky's diagonal blocks) takes one work-item rather than a
# work-group: on CPUs the barriers cost more than the parallelism gains.
PER_ITEM = {"gpu": False, "cpu": True}
_I32 = np.int32
_I64 = np.int64
_MAT = [None, _I64, _I64, _I64, _I64]
_PIV = [None, _I64, _I64]
_TYPES = {"potrf_leaf": [_I32] * 3 + _MAT * 3 + [None],
          "potrf_panel": [_I32] * 3 + _MAT * 3 + [None],
          "tril_blocks": [_I32] * 2 + _MAT * 2,
          "potrf1": [_I32] * 4 + _MAT * 3 + [None],
          "getrf": [_I32] * 3 + _MAT + _PIV + [None],
          "laswp": [_I32] * 6 + _MAT + _PIV,
          "laswp_group": [_I32] * 6 + _MAT + _PIV,
          "getrs1": [_I32] * 3 + _MAT + _PIV + _MAT,
          "getrf1": [_I32] * 4 + _MAT + _PIV + [None],
          "syevj1": [_I32] * 3 + _MAT * 2 + [None, _I64, _I64],
          "pivots_to_perm": [_I32] * 3 + _PIV + [None],
          "gather": [_I32] * 3 + _MAT + _PIV + _MAT,
          "trsm": [_I32] * 6 + _MAT * 2,
          "trsm_tile": [_I32] * 6 + _MAT * 2 + [_I32] + _PIV,
          "getrf_panel": [_I32] * 3 + _MAT + _PIV + [None],
          "getrf_grid": [_I32] * 7 + _MAT + _PIV + [None] * 3 + [_I32, None],
          "geqrf_grid": [_I32] * 4 + _MAT * 3 + _PIV + [None] * 3,
          "trsm_grid": [_I32] * 4 + _MAT * 4 + [None] * 2,
          "sytrd_grid": [_I32] + _MAT + [None] * 8,
          "geqrf_panel": [_I32] * 3 + _MAT * 3 + _PIV,
          "getri_gj": [_I32] * 2 + _MAT * 2 + [None],
          "gesv_gj": [_I32] * 3 + _MAT * 3 + [None]}


def block_size(ctx):
    return BLOCK[device_class(ctx)]


def jacobi_max(ctx):
    return JACOBI_MAX[device_class(ctx)]


def gesvj_fits(ctx, p, m, n, hermitian=False):
    """Whether p m x n SVDs (Hermitian eigenproblems with `hermitian`, m = n) run gesvj."""
    cls = device_class(ctx)
    least, batch = GESVJ_MIN[cls], GESVJ_BATCH[cls]
    k = min(m, n)
    if least is None or k < GESVJ_BATCH_LEAST:
        return False
    batched = batch is not None and p >= batch
    if hermitian:
        return n > JACOBI_MAX[cls] and (batched or n >= GESVJ_EIGH_ONE)
    return k >= least or batched


_SIZES = {}


def _slabs(tb):
    """Elements of trsm_tile's triangle of tb rows in slabs of LEAF_STEP columns."""
    steps = -(-tb // LEAF_STEP)
    return LEAF_STEP * (steps * tb - LEAF_STEP * steps * (steps - 1) // 2)


def _local_sizes(ctx, dtype):
    """(nb, tb, cb, pc, sc): the largest n of potrf_leaf, and of trsm_tile with its columns
    a work-group, and potrf_panel's and laswp_group's columns a work-group: powers of two
    whose local arrays fit the device's local memory (trsm_tile: at most 64 rows, 9.5 KiB of
    float32, so that an SM holds several work-groups of a batch)."""
    key = (ctx.device.cl_device, dtype.itemsize)
    sizes = _SIZES.get(key)
    if sizes is None:
        room = ctx.device.cl_device.local_mem_size - 512
        item = dtype.itemsize
        nb = 64 if (64 * 65 + 3 * 64) * item <= room else 32
        tb, cb = next(((tb, cb) for tb, cb in ((64, 32), (32, 32))
                       if (_slabs(tb) + 2 * LEAF_STEP * cb) * item <= room), (16, 32))
        pc = next((pc for pc in (32, 16) if (nb * (nb + pc + 4)) * item <= room), 8)
        sc = next(sc for sc in (16, 8, 4, 2, 1)
                  if 2 * SWAPS * (sc * item + 8) <= room or sc == 1)
        sizes = _SIZES[key] = (nb, tb, cb, pc, sc)
    return sizes


def _kernel(ctx, name, dtype):
    cls = device_class(ctx)
    ls = LOCAL[cls]
    sizes = _local_sizes(ctx, dtype)
    key = ("linalg", name, dtype, cls, ls, LEAF_STEP, sizes)
    kernel = ctx.kernels.get(key)
    if kernel is None:  # one program per dtype and device class holds its kernels: one build
        nb, tb, cb, pc, sc = sizes
        program = get_program(ctx, key[:1] + key[2:], "linalg.cl.mako", dtype=dtype.name,
                              ls=ls, nb=nb, tb=tb, cb=cb, kb=LEAF_STEP, pc=pc, swaps=SWAPS,
                              sc=sc, gpu=cls == "gpu")
        kernel = kernel_from(ctx, key, program, name, _TYPES[name])
    return kernel, ls


def _panel_spec(dtype, m, w, qr=False):
    """(ls, rpt, lw, ch) of the GPU panel kernels for m x w panels (getrf's, or geqrf's with
    `qr`), None where they don't fit (a work-item's rpt rows of lw columns in PANEL_WORDS
    registers)."""
    if w > PANEL_WIDTH or m < w:
        return None
    ls, rpt = (64, 1) if m <= 64 else (PANEL_THREADS, next(
        (r for r in PANEL_ROWS if r * PANEL_THREADS >= m), -(-m // PANEL_THREADS)))
    words = dtype.itemsize // 4
    lw = min(8, PANEL_WORDS // (rpt * words), PANEL_LOCAL // (ls * dtype.itemsize))
    ch = min(4, PANEL_WORDS // 4 // (rpt * words))
    if qr:
        ch = min(ch, PANEL_LOCAL // (ls * max(lw, 1) * dtype.itemsize))
    return (ls, rpt, lw, max(ch, 1)) if lw >= 1 else None


def _unrolled(ctx):
    """Whether the register-resident kernels' loops are unrolled on ctx (PANEL_UNROLL)."""
    unroll = PANEL_UNROLL
    if unroll is None:
        unroll = "Portable Computing Language" not in ctx.device.platform
    return bool(unroll)


def _panel_kernel(ctx, name, dtype, spec):
    key = ("linalg-panel", name, dtype.name, spec)
    kernel = ctx.kernels.get(key)
    if kernel is None:
        ls, rpt, lw, ch = spec
        unroll = _unrolled(ctx)
        program = get_program(ctx, ("linalg-panel", name, dtype.name, spec, unroll),
                              "linalg.cl.mako", dtype=dtype.name, ls=ls, part=name,
                              rpt=rpt, lw=lw, pw=PANEL_WIDTH, ch=ch, unroll=unroll)
        kernel = kernel_from(ctx, key, program, name, _TYPES[name])
    return kernel


class _Grid(NamedTuple):
    """getrf_grid's and geqrf_grid's geometry and scratch for the panels of one matrix: rows
    a work-group, leading work-items (WARP, or 1: portable), barrier counters (one a panel,
    zeroed, then getrf_grid's candidates' rows), the candidates' values and rows (or
    geqrf_grid's partial sums), the work-groups they are sized for (the first panel's)."""
    rows: int
    warp: int
    panels: int
    ints: object
    values: object
    groups: int


def _grid(a, warp=None, rows=None, qr=False):
    """The _Grid of getrf_grid (geqrf_grid with `qr`) for the panels of `a`, or None where
    it does not apply: NVIDIA GPUs (getrf_grid: where its probe passes), one matrix, at most
    one work-group per compute unit; `warp` given (tests): anywhere, `rows` a work-group."""
    p, m, n = a.shape
    ctx = a.context
    nb = block_size(ctx)
    name = "geqrf_grid" if qr else "getrf_grid"
    cus = ctx.device.compute_units
    rw = rows or min(max(GRID_ROWS[name], 1 << (-(-m // cus) - 1).bit_length()),
                     GRID_TILE // (nb * a.dtype.itemsize))
    groups = -(-m // rw)
    if warp is None:
        if (p != 1 or not _grid_device(ctx) or groups > min(cus, GRID_LOCAL[name])
                or not (qr or _grid_ok(ctx, a.dtype, rw))):
            return None
        warp = 1 if qr else GRID_WARP
    panels = -(-min(m, n) // nb)
    ints = zeros((panels + 2 * groups,), np.int32, context=ctx)
    # (getrf_grid's candidates 2 groups + 2 (groups + 1) nb, geqrf_grid's 2 (groups + 1) nb)
    values = empty((2 * groups + 2 * (groups + 1) * nb,), a.dtype, context=ctx)
    return _Grid(rw, warp, panels, ints, values, groups)


def _grid_kernel(ctx, name, dtype, **shape):
    """The grid kernel `name` (getrf_grid, geqrf_grid, trsm_grid) of dtype, of one `shape`
    (the template's pw, rw, warp, rc, lc)."""
    key = ("linalg-grid", name, dtype.name, *sorted(shape.items()))
    kernel = ctx.kernels.get(key)
    if kernel is None:
        program = get_program(ctx, key, "linalg.cl.mako", dtype=dtype.name,
                              ls=GRID_LOCAL[name], part=name,
                              fence=device_fence(ctx.device.nv_capability),
                              acqrel=device_acqrel(ctx.device.nv_capability),
                              redux=device_redux(ctx.device.nv_capability), **shape)
        kernel = kernel_from(ctx, key, program, name, _TYPES[name])
    return kernel


def _grid_device(ctx):
    """Whether ctx's device takes the kernels whose work-groups wait on each other (GRID):
    NVIDIA GPUs, where a compute unit is a multiprocessor that holds a work-group."""
    return GRID and device_class(ctx) == "gpu" and blas.gemm_class(ctx) == "nvidia"


def _grid_ok(ctx, dtype, rw):
    """Whether getrf_grid with GRID_WARP leaders builds and factors a probe panel (three
    work-groups) as getrf_panel does (the same pivots, values within 100 eps); once per
    context and dtype (ctx.state), never an error for the user."""
    key = ("getrf_grid", dtype.name, rw)
    if key not in ctx.state:
        ok = False
        try:
            rng = np.random.default_rng(7)
            m, w = 3 * rw - 5, block_size(ctx)
            host = rng.standard_normal((1, m, w)).astype(dtype)
            got, want = to_device(host, ctx), to_device(host, ctx)
            pg, pw = (empty((1, w), np.int32, context=ctx) for _ in range(2))
            info = zeros((1,), np.int32, context=ctx)
            grid = _grid(got, warp=GRID_WARP, rows=rw)
            _grid_panel(got, pg, info, 0, grid)
            _panel(want, pw, info, 0)
            g, h = got.get(), want.get()
            ok = bool(np.array_equal(pg.get(), pw.get()) and info.get()[0] == 0 and
                      np.max(np.abs(g - h)) <= 100 * np.finfo(dtype).eps * np.max(np.abs(h)))
        except Exception:
            ok = False
        ctx.state[key] = ok
    return ctx.state[key]


def _grid_panel(a, piv, info, base, grid, left=0, right=0, order=None):
    """getrf_grid on the panel `a` (1, rows, w) whose first row and column are the matrix's
    `base`; its row swaps also applied to the `left` columns before it and the `right`
    after it (of a's rows), and to `order` (getrf's) where given."""
    _, m, w = a.shape
    ctx = a.context
    nb = block_size(ctx)
    sc = GRID_SWAP_COLUMNS
    kernel = _grid_kernel(ctx, "getrf_grid", a.dtype, pw=nb, rw=grid.rows, warp=grid.warp,
                          sc=sc)
    groups = max(-(-m // grid.rows), min(grid.groups, -(-(left + right) // (2 * sc))))
    ls = GRID_LOCAL["getrf_grid"]
    item = piv.itemsize
    enqueue(ctx, kernel, (ls * groups,), (ls,),
            [m, w, base, grid.panels, base // nb, left, right, *_mat(a), piv.storage,
             piv.offset // item, piv.strides[0] // item, info.storage, grid.ints.storage,
             grid.values.storage, int(order is not None),
             (grid.ints if order is None else order).storage],
            (), (a.storage, piv.storage, info.storage, grid.ints.storage,
                 grid.values.storage, *(() if order is None else (order.storage,))))


def _real_of(dtype):
    """The real dtype of dtype's values (float32 for complex64)."""
    return np.dtype(dtype.char.lower()) if dtype.kind == "c" else dtype


def _mat(x):
    """A 3-d array's kernel arguments: storage, element offset, batch/row/column strides."""
    item = x.itemsize
    return [x.storage, x.offset // item, *(s // item for s in x.strides)]


def _vec(x):
    """A 2-d array's kernel arguments: storage, element offset, batch stride."""
    item = x.itemsize
    return [x.storage, x.offset // item, x.strides[0] // item]


def _sub(x, r0, r1, c0, c1):
    """x[:, r0:r1, c0:c1] of a 3-d array (0 <= r0 <= r1 <= rows, the same for columns),
    without the indexing machinery: the blocked loops make hundreds of these."""
    _, sr, sc = x.strides
    return x._view((x.shape[0], r1 - r0, c1 - c0), x.strides, x.offset + r0 * sr + c0 * sc)


def _columns(n, ls):
    return -(-max(n, 1) // ls) * ls


def _split(n, leaf):
    """Where a recursive algorithm splits n > leaf: a multiple of leaf near n / 2."""
    return -(-(n // 2) // leaf) * leaf


def _transposed(x):
    """x.swapaxes(1, 2) of a 3-d array without the axis machinery (the blocked loops make
    hundreds)."""
    sb, sr, sc = x.strides
    return x._view((x.shape[0], x.shape[2], x.shape[1]), (sb, sc, sr), x.offset)


def _adjoint(x):
    """x^H of a 3-d array as a GEMM operand: a transposed view (real), a conjugated copy
    (complex)."""
    t = _transposed(x)
    return UFUNCS["conjugate"](t) if x.dtype.kind == "c" else t


def identity(p, n, dtype, ctx):
    """p identity matrices (p, n, n)."""
    eye = zeros((p, n, n), dtype, context=ctx)
    st = eye.strides
    eye._view((p, n), (st[0], st[1] + st[2])).fill(1)
    return eye


# ---------------------------------------------------------------- Cholesky

def potrf(a, info):
    """The lower Cholesky factor L (strict upper triangle zero) of the (p, n, n) array `a`
    (its lower triangle is read; `a` is overwritten); info[b] set at the first failure."""
    p, n = a.shape[0], a.shape[-1]
    if p == 0 or n == 0:
        return a
    ctx = a.context
    cls = device_class(ctx)
    nb = min(block_size(ctx), _local_sizes(ctx, a.dtype)[0]) if cls == "gpu" else \
        block_size(ctx)
    if n <= nb:
        _potrf_leaf(a, a, None, info, 0)
        return a
    if CHOL_TRSM[cls]:
        return _potrf_in_place(a, info, nb, CHOL_OUTER[cls] * nb, SYRK_DEPTH[cls])
    low = zeros(a.shape, a.dtype, context=ctx)
    w = empty((p, nb, nb), a.dtype, context=ctx)
    outer = CHOL_OUTER[cls] * nb
    for k0 in range(0, n, outer):
        e0 = min(k0 + outer, n)
        for k in range(k0, e0, nb):
            e = min(k + nb, n)
            wk = _sub(w, 0, e - k, 0, e - k)
            _potrf_leaf(_sub(a, k, e, k, e), _sub(low, k, e, k, e), wk if e < n else None,
                        info, k)
            if e == n:
                break
            # L21 = A21 L11^-H, one GEMM with the diagonal block's inverse (MAGMA's way)
            l21 = _sub(low, e, n, k, e)
            blas.gemm_into(1, _sub(a, e, n, k, e), wk, 0, l21)
            if e < e0:  # the rest of this panel
                blas.gemm_into(-1, l21, _adjoint(_sub(low, e, e0, k, e)), 1,
                               _sub(a, e, n, e, e0))
        if e0 < n:
            syrk_lower(-1, _sub(low, e0, n, k0, e0), _sub(a, e0, n, e0, n), SYRK_DEPTH[cls])
    return low


def _potrf_in_place(a, info, nb, outer, depth):
    """potrf's blocked loop in place, a diagonal block and the panel below it (a triangular
    solve) in one launch (potrf_panel), whose factor goes to d until the end."""
    p, n = a.shape[0], a.shape[-1]
    ctx = a.context
    d = empty((p, n, nb), a.dtype, context=ctx)
    for k0 in range(0, n, outer):
        e0 = min(k0 + outer, n)
        for k in range(k0, e0, nb):
            e = min(k + nb, n)
            l21 = _sub(a, e, n, k, e)
            _potrf_panel(_sub(a, k, e, k, e), _sub(d, k, e, 0, e - k), l21, info, k)
            if e == n:
                break
            if e < e0:
                blas.gemm_into(-1, l21, _adjoint(_sub(a, e, e0, k, e)), 1, _sub(a, e, n, e, e0))
        if e0 < n:
            syrk_lower(-1, _sub(a, e0, n, k0, e0), _sub(a, e0, n, e0, n), depth)
    kernel, ls = _kernel(ctx, "tril_blocks", a.dtype)
    enqueue(ctx, kernel, (_columns(n, ls), n, p), (ls, 1, 1), [n, nb, *_mat(a), *_mat(d)],
            (a.storage, d.storage), (a.storage,))
    return a


def _potrf_panel(a, low, x, info, base):
    """low = the Cholesky factor of the (p, n, n) view a, x = x L^-H for the (p, m, n) view
    x (the panel below a); one launch."""
    p, n, m = a.shape[0], a.shape[-1], x.shape[1]
    ctx = a.context
    kernel, ls = _kernel(ctx, "potrf_panel", a.dtype)
    groups = -(-max(m, 1) // _local_sizes(ctx, a.dtype)[3])
    enqueue(ctx, kernel, (groups * ls, p), (ls, 1),
            [n, m, base, *_mat(a), *_mat(low), *_mat(_transposed(x)), info.storage],
            (a.storage, x.storage), (low.storage, x.storage, info.storage))


def _potrf_leaf(a, low, w, info, base):
    """low = the Cholesky factor of the (p, n, n) view a (may be a itself), w = its inverse's
    adjoint (when w is not None); one launch."""
    p, n = a.shape[0], a.shape[-1]
    ctx = a.context
    want = w is not None
    args = [*_mat(a), *_mat(low), *_mat(w if want else low), info.storage]
    writes = (low.storage, info.storage) + ((w.storage,) if want else ())
    if PER_ITEM[device_class(ctx)]:
        kernel, ls = _kernel(ctx, "potrf1", a.dtype)
        enqueue(ctx, kernel, (_columns(p, ls),), (ls,), [p, n, base, int(want), *args],
                (a.storage,), writes)
    else:
        kernel, ls = _kernel(ctx, "potrf_leaf", a.dtype)
        enqueue(ctx, kernel, (ls * p,), (ls,), [n, base, int(want), *args], (a.storage,),
                writes)


def syrk_lower(alpha, x, c, depth=3):
    """c += alpha x x^H on the lower triangle of c (its upper triangle gets some of it too):
    split in halves `depth` times, the off-diagonal blocks as GEMMs."""
    m = c.shape[-1]
    if depth == 0 or m <= 128:
        blas.gemm_into(alpha, x, _adjoint(x), 1, c)
        return
    h, k = m // 2, x.shape[2]
    top, bottom = _sub(x, 0, h, 0, k), _sub(x, h, m, 0, k)
    syrk_lower(alpha, top, _sub(c, 0, h, 0, h), depth - 1)
    blas.gemm_into(alpha, bottom, _adjoint(top), 1, _sub(c, h, m, 0, h))
    syrk_lower(alpha, bottom, _sub(c, h, m, h, m), depth - 1)


# ---------------------------------------------------------------- LU

def getrf(a, piv, info):
    """In-place LU with partial pivoting of the (p, m, n) view `a`; piv (p, min(m, n)) int32
    gets LAPACK's pivots (0-based): row k was swapped with row piv[k], in order. Returns the
    rows' order where the panels kept it on the way (getrf_grid: one matrix on NVIDIA GPUs),
    else None: (2, m) int32, row i of the factors' P A is row order[0, i] of A, and
    order[1] the inverse permutation (what getrs and getri would otherwise work out from
    piv)."""
    p, m, n = a.shape
    kmin = min(m, n)
    if p == 0 or kmin == 0:
        return None
    nb = block_size(a.context)
    if n <= nb and m <= nb:  # one launch for the batch
        _panel(a, piv, info, 0, leaf=n)
        return None
    outer = LU_OUTER[device_class(a.context)] * nb
    grid = _grid(a)
    order = empty((2, m), np.int32, context=a.context) if grid else None
    for k0 in range(0, kmin, outer):
        e0 = min(k0 + outer, kmin)
        for k in range(k0, e0, nb):
            e = min(k + nb, kmin)
            pk = piv[:, k:e]
            if grid:  # (the row swaps of the whole matrix in the same launch)
                _grid_panel(_sub(a, k, m, k, e), pk, info, k, grid, k, n - e, order)
            else:
                _panel(_sub(a, k, m, k, e), pk, info, k)
                laswp(_sub(a, k, m, 0, n), pk, k, skip=(k, e))  # (the panel's own: done)
            if e < e0:  # the rest of the outer panel
                u12 = _sub(a, k, e, e, e0)
                trsm(_sub(a, k, e, k, e), u12, lower=True, unit=True)
                blas.gemm_into(-1, _sub(a, e, m, k, e), u12, 1, _sub(a, e, m, e, e0))
        if e0 < n:
            u12 = _sub(a, k0, e0, e0, n)
            trsm(_sub(a, k0, e0, k0, e0), u12, lower=True, unit=True)
            if e0 < m:
                blas.gemm_into(-1, _sub(a, e0, m, k0, e0), u12, 1, _sub(a, e0, m, e0, n))
    if grid:
        _check_grid(info, f"LU of a {m} x {n} matrix", -(-m // grid.rows))
    return order


def _panel(a, piv, info, base, leaf=None):
    """LU of the panel `a` (p, rows, w), its row swaps applied to all its columns; its first
    row and column are row and column `base` of the matrix. GPUs: one launch (getrf_panel)
    where it fits; else recursive halves (LAPACK's getrf2), the leaves (PANEL_LEAF columns,
    or `leaf`) by the one-matrix kernel, the rest triangular solves and GEMMs."""
    p, m, w = a.shape
    ctx = a.context
    item = piv.itemsize
    tail = [*_mat(a), piv.storage, piv.offset // item, piv.strides[0] // item, info.storage]
    writes = (a.storage, piv.storage, info.storage)
    gpu = not PER_ITEM[device_class(ctx)]
    spec = gpu and _panel_spec(a.dtype, m, w)
    if spec:
        kernel = _panel_kernel(ctx, "getrf_panel", a.dtype, spec)
        enqueue(ctx, kernel, (spec[0] * p,), (spec[0],), [m, w, base, *tail], (), writes)
        return
    if w <= (leaf or PANEL_LEAF):
        if gpu:
            kernel, ls = _kernel(ctx, "getrf", a.dtype)
            enqueue(ctx, kernel, (ls * p,), (ls,), [m, w, base, *tail], (), writes)
        else:
            kernel, ls = _kernel(ctx, "getrf1", a.dtype)
            enqueue(ctx, kernel, (_columns(p, ls),), (ls,), [p, m, w, base, *tail], (),
                    writes)
        return
    h = w // 2
    _panel(a[:, :, :h], piv[:, :h], info, base)
    right = a[:, :, h:]
    laswp(right, piv[:, :h], base)
    trsm(a[:, :h, :h], right[:, :h], lower=True, unit=True)
    blas.gemm_into(-1, a[:, h:, :h], right[:, :h], 1, right[:, h:])
    _panel(right[:, h:], piv[:, h:], info, base + h)
    laswp(a[:, h:, :h], piv[:, h:], base + h)


def laswp(b, piv, rows_base=0, reverse=False, skip=(0, 0)):
    """The row swaps of piv (p, k) (rows numbered from rows_base) applied to b (p, r, c), in
    order or, with `reverse`, last first; the columns in [skip[0], skip[1]) are left. GPUs
    take laswp_group for up to SWAPS swaps (all of a column's moves at once), CPUs the swaps
    one after the other (cached)."""
    p, _, c = b.shape
    ncols = c - (skip[1] - skip[0])
    npiv = piv.shape[1]
    if p == 0 or ncols <= 0 or npiv == 0:
        return b
    ctx = b.context
    args = [rows_base, npiv, ncols, int(reverse), *skip, *_mat(b), *_vec(piv)]
    if device_class(ctx) == "gpu" and npiv <= SWAPS:
        kernel, ls = _kernel(ctx, "laswp_group", b.dtype)
        size = (-(-ncols // _local_sizes(ctx, b.dtype)[4]) * ls, p)
    else:
        kernel, ls = _kernel(ctx, "laswp", b.dtype)
        ls = min(ls, -(-ncols // 32) * 32)
        size = (_columns(ncols, ls), p)
    enqueue(ctx, kernel, size, (ls, 1), args, (piv.storage,), (b.storage,))
    return b


def _permuted(b, piv, by_cols=False, reverse=False, order=None):
    """b with piv's swaps (p, n) applied to its rows (or columns, last swap first with
    `reverse`): in place by laswp for n up to the block size, else one gather into a new
    array (a swap at a time would run n steps per column), by getrf's `order` where given."""
    p, r, c = b.shape
    n = piv.shape[1]
    if p == 0 or r == 0 or c == 0 or (n <= block_size(b.context) and order is None):
        view = b.swapaxes(1, 2) if by_cols else b
        laswp(view, piv, reverse=reverse)
        return b
    ctx = b.context
    if order is not None:
        perm = order[int(reverse)].reshape((1, n))
    else:
        perm = empty((p, n), np.int32, context=ctx)
        kernel, ls = _kernel(ctx, "pivots_to_perm", b.dtype)
        enqueue(ctx, kernel, (_columns(n, ls), p), (ls, 1),
                [p, n, int(reverse), *_vec(piv), perm.storage], (piv.storage,),
                (perm.storage,))
    return gather_rows(b, perm, empty(b.shape, b.dtype, context=ctx), by_cols)


def _trsm_leaf(ctx, dtype):
    cls = device_class(ctx)
    leaf = BLOCK[cls] * TRSM_LEAF[cls]
    return min(leaf, _local_sizes(ctx, dtype)[1]) if cls == "gpu" else leaf


def _trsm_kernel(t, b, lower, unit, conj_t, ident=False, dg=None):
    """b = t^-1 b (or t^-1 with `ident`) for n up to the leaf size: one launch. GPUs: with
    dg (p, n), the diagonal's inverses are dg's (larft)."""
    p, n, r = b.shape
    ctx = b.context
    args = [n, r, int(lower), int(unit), int(conj_t), int(ident), *_mat(t), *_mat(b)]
    if PER_ITEM[device_class(ctx)]:
        kernel, ls = _kernel(ctx, "trsm", b.dtype)
        ls = min(ls, -(-r // 32) * 32)  # few right-hand sides: narrow work-groups
        size = (_columns(r, ls), p)
    else:
        kernel, ls = _kernel(ctx, "trsm_tile", b.dtype)
        size = (-(-r // _local_sizes(ctx, b.dtype)[2]) * ls, p)
        args += [0, b.storage, 0, 0] if dg is None else [1, *_vec(dg)]
    enqueue(ctx, kernel, size, (ls, 1), args, (t.storage,), (b.storage,))


def trsm(t, b, lower, unit=False, conj_t=False, dg=None):
    """b = t^-1 b in place (t: (p or 1, n, n) lower or upper triangular, b: (p, n, r));
    conj_t: conj(t); dg (p, n), GPUs: the diagonal's inverses (t's diagonal unread).
    Recursive halves above the leaf size: the leaves by the kernel, the rest one GEMM a
    level."""
    p, n, r = b.shape
    if p == 0 or n == 0 or r == 0:
        return b
    if t.shape[0] != p:
        t = t._view((p, n, n), (0, *t.strides[1:]))
    leaf = _trsm_leaf(b.context, b.dtype)
    if n <= leaf:
        _trsm_kernel(t, b, lower, unit, conj_t, dg=dg)
        return b
    h = _split(n, leaf)
    top, bottom = _sub(b, 0, h, 0, r), _sub(b, h, n, 0, r)
    first, second = (top, bottom) if lower else (bottom, top)
    t11, t22 = _sub(t, 0, h, 0, h), _sub(t, h, n, h, n)
    d1, d2 = (None, None) if dg is None else (dg[:, :h], dg[:, h:])
    trsm(t11 if lower else t22, first, lower, unit, conj_t, d1 if lower else d2)
    off = _sub(t, h, n, 0, h) if lower else _sub(t, 0, h, h, n)
    if conj_t and t.dtype.kind == "c":
        off = UFUNCS["conjugate"](off)
    blas.gemm_into(-1, off, first, 1, second)
    trsm(t22 if lower else t11, second, lower, unit, conj_t, d2 if lower else d1)
    return b


def _trtri_unit_lower(t, x, leaves=True):
    """x = t^-1 for unit lower triangular t (p, n, n); x's strict upper triangle must be
    zero. Recursive halves: X21 = -X22 T21 X11, two GEMMs a level; the leaves (the diagonal
    blocks, every one starting at a multiple of the leaf size) first, for one matrix in one
    launch (two with a ragged last block)."""
    p, n, _ = t.shape
    leaf = _trsm_leaf(t.context, t.dtype)
    if leaves and p == 1 and n > leaf:
        full = n // leaf
        sr, sc = t.strides[1:]
        xr, xc = x.strides[1:]
        _trsm_kernel(t._view((full, leaf, leaf), (leaf * (sr + sc), sr, sc)),
                     x._view((full, leaf, leaf), (leaf * (xr + xc), xr, xc)),
                     True, True, False, ident=True)
        if full * leaf < n:
            k = full * leaf
            _trsm_kernel(_sub(t, k, n, k, n), _sub(x, k, n, k, n), True, True, False,
                         ident=True)
        leaves = False
    if n <= leaf:
        if leaves:
            _trsm_kernel(t, x, True, True, False, ident=True)
        return x
    h = _split(n, leaf)
    x11, x22 = _sub(x, 0, h, 0, h), _sub(x, h, n, h, n)
    _trtri_unit_lower(_sub(t, 0, h, 0, h), x11, leaves)
    _trtri_unit_lower(_sub(t, h, n, h, n), x22, leaves)
    tmp = empty((p, n - h, h), t.dtype, context=t.context)
    blas.gemm_into(1, _sub(t, h, n, 0, h), x11, 0, tmp)
    blas.gemm_into(-1, x22, tmp, 0, _sub(x, h, n, 0, h))
    return x


def getrs(lu, piv, b, order=None):
    """A^-1 b from A's LU factors (getrf's lu and piv, and its order where it gave one), b:
    (p, n, r); b is overwritten, the solution returned (b itself or a new array)."""
    p, n, r = b.shape
    ctx = b.context
    if PER_ITEM[device_class(ctx)] and n <= block_size(ctx) and p * r:
        kernel, ls = _kernel(ctx, "getrs1", b.dtype)
        enqueue(ctx, kernel, (_columns(p, ls),), (ls,),
                [p, n, r, *_mat(lu), *_vec(piv), *_mat(b)], (lu.storage, piv.storage),
                (b.storage,))
        return b
    b = _permuted(b, piv, order=order)
    leaf = _trsm_leaf(ctx, b.dtype)
    groups = (p == 1 and n > leaf and r <= _trsm_grid_rhs(ctx, b.dtype)[0]
              and _trsm_groups(ctx, -(-n // leaf)))
    if groups:
        nblk = -(-n // leaf)  # a flag a block of rows, a set a solve
        ints, info = zeros((2 * nblk,), np.int32, context=ctx), zeros((1,), np.int32, context=ctx)
        y = _trsm_grid(lu, b, True, True, groups, ints, 0, info)
        x = _trsm_grid(lu, y, False, False, groups, ints, nblk, info)
        _check_grid(info, f"triangular solves of {n} rows", groups)
        return x
    trsm(lu, b, lower=True, unit=True)
    trsm(lu, b, lower=False)
    return b


def _trsm_groups(ctx, nblk):
    """trsm_grid's work-groups for nblk blocks of rows (one a block, at most one a compute
    unit), None where it does not apply."""
    return min(nblk, ctx.device.compute_units) if _grid_device(ctx) else None


def _trsm_grid_rhs(ctx, dtype):
    """(rc, lc) of trsm_grid: right-hand sides at most, columns of the triangle's block a
    pass through local memory."""
    nb, item = _trsm_leaf(ctx, dtype), dtype.itemsize
    rc = min(GRID_RHS, GRID_TILE // (2 * nb * item))
    lc = max(1, (GRID_BYTES - 2 * nb * rc * item) // (nb * item))
    return rc, min(nb, 1 << (lc.bit_length() - 1))


def _trsm_grid(t, b, lower, unit, groups, ints, at, info):
    """t^-1 b (t: (1, n, n) triangular, b: (1, n, r), r <= rc) into a new array by one
    launch of trsm_grid, after the diagonal blocks' inverses (two launches): each block's
    solve a product by its inverse (MAGMA's way; a leaf of trsm_tile runs one barrier step
    a row), a work-group a block of rows, each waiting for the blocks it needs by their
    flags (zeroed ints[at:at + blocks]); info[0] -1 where they did not all run at once (the
    caller reads it)."""
    _, n, r = b.shape
    ctx = b.context
    leaf = _trsm_leaf(ctx, b.dtype)
    full, nblk = n // leaf, -(-n // leaf)
    sr, sc = t.strides[1:]
    inverses = empty((nblk, leaf, leaf), t.dtype, context=ctx)
    if full:
        blocks = t._view((full, leaf, leaf), (leaf * (sr + sc), sr, sc))
        _trsm_kernel(blocks, inverses[:full], lower, unit, False, ident=True)
    if full < nblk:  # the ragged last block
        k = full * leaf
        _trsm_kernel(_sub(t, k, n, k, n), _sub(inverses[full:], 0, n - k, 0, n - k), lower,
                     unit, False, ident=True)
    x = empty(b.shape, b.dtype, context=ctx)
    rc, lc = _trsm_grid_rhs(ctx, b.dtype)
    kernel = _grid_kernel(ctx, "trsm_grid", b.dtype, pw=leaf, rc=rc, lc=lc)
    ls = GRID_LOCAL["trsm_grid"]
    enqueue(ctx, kernel, (ls * groups,), (ls,),
            [n, r, int(lower), at, *_mat(t), *_mat(inverses),
             *_mat(b), *_mat(x), ints.storage, info.storage], (t.storage, inverses.storage),
            (b.storage, x.storage, ints.storage, info.storage))
    return x


def _check_grid(info, what, groups):
    """DeviceTimeout where a grid kernel's work-groups did not all run at once (info -1)."""
    if info.get()[0] == -1:
        raise DeviceTimeout(
            f"{what}: the {groups} work-groups of a kernel that needs them at once did "
            f"not all run (the device was held by other work); nothing was computed. "
            f"gpuarr.factorizations.GRID = False turns such kernels off")


def getri(lu, piv, order=None):
    """A^-1 from A's LU factors (and getrf's order where it gave one), LAPACK's way (~2 n^3
    flops with the factorization, where solving with the identity takes ~2.7): inv(U)
    inv(L) P, inv(L) recursive."""
    p, n, _ = lu.shape
    ctx = lu.context
    if n <= block_size(ctx) or p == 0:
        return getrs(lu, piv, identity(p, n, lu.dtype, ctx))
    x = zeros((p, n, n), lu.dtype, context=ctx)
    _trtri_unit_lower(lu, x)
    trsm(lu, x, lower=False)
    return _permuted(x, piv, by_cols=True, reverse=True, order=order)


def gauss_jordan_fits(ctx, n, dtype, nrhs=0):
    """Whether `inverse` (and, with nrhs right-hand sides, `solve_small`) take n x n
    matrices of `dtype` on this device: n <= GJ_MAX, and a work-item's row(s) at most
    GJ_BYTES."""
    if not 0 < n <= GJ_MAX[device_class(ctx)] or nrhs > max(GJ_ROWS):
        return False
    width = next(r for r in GJ_ROWS if r >= max(n, nrhs))
    return width * np.dtype(dtype).itemsize * (2 if nrhs else 1) <= GJ_BYTES


def _gj_kernel(ctx, dtype, width, solve):
    """(kernel, work-group size, work-items a matrix) of getri_gj / gesv_gj for rows of
    `width` values (the matrix's n, and the right-hand sides)."""
    nm = next(r for r in GJ_ROWS if r >= width)
    room = ctx.device.cl_device.local_mem_size - 512
    ls = max(GJ_LOCAL, nm)
    while ls > nm and ls // nm * nm * ((nm + 3) * dtype.itemsize + 8) > room:
        ls //= 2
    unroll = _unrolled(ctx)
    name = "gesv_gj" if solve else "getri_gj"
    key = ("linalg-gj", name, dtype.name, ls, nm, unroll)
    kernel = ctx.kernels.get(key)
    if kernel is None:
        program = get_program(ctx, key, "linalg.cl.mako", dtype=dtype.name, ls=ls,
                              part="getri_gj", nm=nm, unroll=unroll, solve=solve)
        kernel = kernel_from(ctx, key, program, name, _TYPES[name])
    return kernel, ls, nm


def inverse(a, info):
    """A new C-contiguous (p, n, n) array of the inverses of the (p, n, n) array `a` (any
    strides; n <= the largest of GJ_ROWS) by one launch of getri_gj; info[b] = k + 1 where
    getrf would find its first zero pivot U[k, k] (that matrix's result is not finite)."""
    p, n, _ = a.shape
    ctx = a.context
    x = empty((p, n, n), a.dtype, context=ctx)
    if p and n:
        kernel, ls, nm = _gj_kernel(ctx, a.dtype, n, False)
        enqueue(ctx, kernel, (-(-p // (ls // nm)) * ls,), (ls,),
                [p, n, *_mat(a), *_mat(x), info.storage], (a.storage,),
                (x.storage, info.storage))
    return x


def solve_small(a, b, info):
    """A new C-contiguous (p, n, r) array x with a x = b for the (p, n, n) array `a` and the
    (p, n, r) array b (any strides; n and r <= the largest of GJ_ROWS) by one launch of
    gesv_gj; info as `inverse`'s."""
    p, n, r = b.shape
    ctx = a.context
    x = empty((p, n, r), a.dtype, context=ctx)
    if p and n and r:
        kernel, ls, nm = _gj_kernel(ctx, a.dtype, max(n, r), True)
        enqueue(ctx, kernel, (-(-p // (ls // nm)) * ls,), (ls,),
                [p, n, r, *_mat(a), *_mat(b), *_mat(x), info.storage],
                (a.storage, b.storage), (x.storage, info.storage))
    return x


# ---------------------------------------------------------------- eigenvalues

def syevj(a, upper=False):
    """(eigenvalues ascending (p, n), eigenvectors (p, n, n)) of the Hermitian matrices of
    the (p, n, n) array `a` (its lower triangle, or upper; `a` is overwritten): cyclic
    Jacobi until the off-diagonal mass is below eps^2 ||A||^2, one work-item per matrix."""
    p, n, _ = a.shape
    ctx = a.context
    real = _real_of(a.dtype)
    w = empty((p, n), real, context=ctx)
    v = empty((p, n, n), a.dtype, context=ctx)
    if p and n:
        kernel, ls = _kernel(ctx, "syevj1", a.dtype)
        ls = min(ls, 32)
        enqueue(ctx, kernel, (_columns(p, ls),), (ls,),
                [p, n, int(upper), *_mat(a), *_mat(v), w.storage, 0, n], (),
                (a.storage, v.storage, w.storage))
    return w, v


# ---------------------------------------------------------------- one-sided Jacobi

def gesvj_rows(n):
    """The rows of gesvj's arrays for n vectors: whole blocks, an even number of them."""
    return -(-max(n, 1) // (2 * GESVJ_BLOCK)) * 2 * GESVJ_BLOCK


def _gesvj_kernel(ctx, dtype):
    """gesvj_round of dtype: tiles of GESVJ_TILE bytes (halved until they fit beside the
    Gram matrix and its rotation in local memory)."""
    ls = GESVJ_LOCAL[device_class(ctx)]
    jb = GESVJ_BLOCK
    item = dtype.itemsize
    # (the tile holds the Gram matrix's partial sums: ls / jb^2 of them, 2 jb x 2 jb each)
    least = max(16, ls // (jb * jb) * 2 * jb)
    tc = max(GESVJ_TILE // (2 * jb * item), least)
    room = ctx.device.cl_device.local_mem_size - 1024 - 2 * (2 * jb) * (2 * jb + 1) * item
    while tc > least and 2 * jb * (tc + 1) * item > room:
        tc //= 2
    # (GPUs only: CPU compilers take 10-25 s (Intel's) to minutes (PoCL's) on the unrolled
    # prefetch, and a CPU gains nothing from it)
    unroll = _unrolled(ctx) and device_class(ctx) == "gpu"
    key = ("linalg-gesvj", dtype.name, ls, jb, tc, unroll)
    kernel = ctx.kernels.get(key)
    if kernel is None:
        program = get_program(ctx, key, "linalg.cl.mako", dtype=dtype.name, ls=ls,
                              part="gesvj", jb=jb, tc=tc, unroll=unroll)
        kernel = kernel_from(ctx, key, program, "gesvj_round",
                             [_I32] * 5 + [_real_of(dtype), None] + _MAT * 2 + [None, _I32, None])
    return kernel, ls


def _circle(nblocks):
    """The round-robin pairing of nblocks (even) blocks: (rounds, pairs, 2) int32, every two
    blocks paired once in nblocks - 1 rounds of disjoint pairs."""
    last = nblocks - 1
    r = np.arange(last)[:, None]
    k = np.arange(1, nblocks // 2)[None, :]
    fixed = np.stack([np.arange(last), np.full(last, last)], axis=-1)[:, None, :]
    others = np.stack(np.broadcast_arrays((r + k) % last, (r - k) % last), axis=-1)
    return np.ascontiguousarray(np.concatenate([fixed, others], axis=1), dtype=np.int32)


def gesvj(x, v=None, tol=None):
    """One-sided block Jacobi on the rows of x (p, rows, len), rows = gesvj_rows(n) (rows
    past n zero): rotates them, and v's rows (p, rows, vlen) by the same unitary matrix,
    until every two are orthogonal to `tol` (default sqrt(len) eps) relative to their
    lengths. A sweep is rows / GESVJ_BLOCK - 1 launches. From GESVJ_ORDER rows, the host
    reads after each sweep whether anything rotated and the lengths, and the next sweep
    takes the rows longest first (de Rijk's order: a third fewer sweeps); below it, where a
    sweep is short beside that round trip, the next sweep is queued before the read (one
    sweep more at the end, its rounds checks only). Returns (whether each matrix converged
    within GESVJ_SWEEPS sweeps (numpy bools), x, v): x and v reordered (new arrays, or the
    same)."""
    p, rows, length = x.shape
    ctx = x.context
    nblocks = rows // GESVJ_BLOCK
    if not (p and length) or nblocks < 2:
        return np.ones(p, bool), x, v
    kernel, ls = _gesvj_kernel(ctx, x.dtype)
    table = _circle(nblocks)
    rounds, npairs = table.shape[:2]
    pairs = to_device(table.ravel(), ctx)
    tol = float(np.sqrt(length) * np.finfo(x.dtype).eps if tol is None else tol)
    flags = zeros((GESVJ_SWEEPS, p), np.int32, context=ctx)
    norms = empty((p, rows), _real_of(x.dtype), context=ctx)
    ordered = rows >= GESVJ_ORDER
    unmoved = np.arange(rows)
    moved = np.ones(p, np.int32)
    for s in range(GESVJ_SWEEPS):
        vv, vlen = (x, 0) if v is None else (v, v.shape[2])
        args = [npairs, length, vlen, 0, GESVJ_INNER, tol, pairs.storage, *_mat(x), *_mat(vv),
                flags.storage, s * p, norms.storage]
        for r in range(rounds):
            args[3] = r
            enqueue(ctx, kernel, (p * npairs * ls,), (ls,), args, (),
                    (x.storage, vv.storage, pairs.storage, flags.storage, norms.storage))
        if not ordered:
            if s:  # the previous sweep's flags, this one queued
                moved = flags[s - 1].get()
                if not moved.any():
                    break
            continue
        moved = flags[s].get()
        if not moved.any():
            break
        order = np.argsort(-norms.get(), axis=-1, kind="stable")
        if not np.array_equal(order, np.broadcast_to(unmoved, order.shape)):
            perm = to_device(order.astype(np.int32), ctx)
            x = gather_rows(x, perm, empty(x.shape, x.dtype, context=ctx))
            if v is not None:
                v = gather_rows(v, perm, empty(v.shape, v.dtype, context=ctx))
    else:  # every sweep ran: the last one's flags (not read yet where queued ahead)
        if not ordered:
            moved = flags[GESVJ_SWEEPS - 1].get()
    return moved == 0, x, v


def gather_rows(x, perm, out, by_cols=False):
    """out[b, i, :] = x[b, perm[b, i], :] (by_cols: out[b, :, j] = x[b, :, perm[b, j]]) for
    the (p, r, c) arrays x and out and the int32 perm (p, r or c) (any strides along p):
    one launch."""
    p, r, c = out.shape
    if not (p and r and c):
        return out
    ctx = x.context
    kernel, ls = _kernel(ctx, "gather", x.dtype)
    ls = min(ls, -(-c // 32) * 32)
    enqueue(ctx, kernel, (_columns(c, ls), r, p), (ls, 1, 1),
            [r, c, int(by_cols), *_mat(x), *_vec(perm), *_mat(out)],
            (x.storage, perm.storage), (out.storage,))
    return out


# ---------------------------------------------------------------- Householder QR

def _larft(v, tau):
    """LAPACK's larft (forward, columnwise) on the host: T (p, k, k) upper triangular with
    H1 H2 ... Hk = I - V T V^H, from the reflectors V (p, m, k) and their taus (p, k)."""
    return _larft_gram(np.conj(v.swapaxes(1, 2)) @ v, tau)


def _larft_gram(gram, tau):
    """_larft's T from V^H V (p, k, k) and the taus."""
    p, k, _ = gram.shape
    t = np.zeros((p, k, k), gram.dtype)
    for i in range(k):
        t[:, i, i] = tau[:, i]
        if i:
            w = np.einsum("pij,pj->pi", t[:, :i, :i], gram[:, :i, i])
            t[:, :i, i] = -tau[:, i, None] * w
    return t


def _reflectors(h, rows):
    """V (p, rows, k) from numpy's raw QR output h (p, k, rows): unit lower trapezoidal."""
    v = np.tril(h.swapaxes(1, 2), -1)
    k = v.shape[2]
    v[:, np.arange(k), np.arange(k)] = 1
    return v


def _host_panel(a, k, e):
    """QR of the panel a[:, k:, k:e] by the host's LAPACK (numpy): R into a, and the block
    reflector's (V, T, T^H, V^H) on the device."""
    ctx = a.context
    h, tau = np.linalg.qr(a[:, k:, k:e].get(), mode="raw")
    v = _reflectors(h, a.shape[1] - k)
    t = _larft(v, tau)
    a[:, k:, k:e] = np.triu(h.swapaxes(1, 2))
    return (to_device(v, ctx), to_device(t, ctx),
            to_device(np.ascontiguousarray(np.conj(t.swapaxes(1, 2))), ctx),
            to_device(np.ascontiguousarray(np.conj(v.swapaxes(1, 2))), ctx))


def _device_panel(a, k, e, spec, grid=None, info=None):
    """QR of the panel a[:, k:, k:e] by geqrf_panel, or geqrf_grid with `grid` (one launch;
    info[0] -1 where its work-groups did not all run at once), then T from V^H V (a GEMM) by
    larft: (V, T, T^H, V^H) on the device."""
    p, m, _ = a.shape
    ctx, dt = a.context, a.dtype
    rows, w = m - k, e - k
    panel = _sub(a, k, m, k, e)
    v = empty((p, rows, w), dt, context=ctx)
    vh = empty((p, w, rows), dt, context=ctx) if dt.kind == "c" else None
    tau = empty((p, w), dt, context=ctx)
    args = [*_mat(panel), *_mat(v), *_mat(v if vh is None else vh), *_vec(tau)]
    writes = (a.storage, v.storage, tau.storage) + (() if vh is None else (vh.storage,))
    if grid:
        kernel = _grid_kernel(ctx, "geqrf_grid", dt, pw=block_size(ctx), rw=grid.rows,
                              warp=grid.warp)
        groups, ls = -(-rows // grid.rows), GRID_LOCAL["geqrf_grid"]
        enqueue(ctx, kernel, (ls * groups,), (ls,),
                [rows, w, int(vh is not None), k // block_size(ctx), *args,
                 grid.ints.storage, grid.values.storage, info.storage], (),
                (*writes, grid.ints.storage, grid.values.storage, info.storage))
    else:
        kernel = _panel_kernel(ctx, "geqrf_panel", dt, spec)
        enqueue(ctx, kernel, (spec[0] * p,), (spec[0],), [rows, w, int(vh is not None), *args],
                (), writes)
    if vh is None:
        vh = _transposed(v)
    t = block_t(v, vh, tau)
    return v, t, _adjoint(t), vh


def block_t(v, vh, tau):
    """T (p, k, k) of the block reflector H1 H2 ... Hk = I - V T V^H from V (p, m, k), V^H
    and the taus (p, k), LAPACK's larft on the device: T^-1 = diag(1 / tau) + the strict
    upper triangle of V^H V (a GEMM and a triangular solve)."""
    p, _, w = v.shape
    ctx, dt = v.context, v.dtype
    gram = empty((p, w, w), dt, context=ctx)
    blas.gemm_into(1, vh, v, 0, gram)
    if PER_ITEM[device_class(ctx)]:  # (the one-work-item trsm takes no dg)
        return to_device(_larft_gram(gram.get(), tau.get()), ctx)
    if w <= _trsm_leaf(ctx, dt):
        t = empty((p, w, w), dt, context=ctx)
        _trsm_kernel(gram, t, False, False, False, ident=True, dg=tau)
        return t
    return trsm(gram, identity(p, w, dt, ctx), lower=False, dg=tau)


def geqrf(a):
    """In-place Householder QR of the (p, m, n) contiguous array `a`: R on and above the
    diagonal; returns the blocks [(k, V, T, V^H)] of reflectors (device arrays) whose
    product is Q. Panels by geqrf_panel on GPUs (where it fits), else by the host's LAPACK;
    the trailing updates are GEMMs."""
    p, m, n = a.shape
    kmin = min(m, n)
    ctx = a.context
    nb = QR_BLOCK[device_class(ctx)] * block_size(ctx)
    gpu = not PER_ITEM[device_class(ctx)]
    blocks = []
    if p == 0:
        return blocks
    grid = gpu and nb == block_size(ctx) and _grid(a, qr=True)
    info = grid and zeros((1,), np.int32, context=ctx)
    for k in range(0, kmin, nb):
        e = min(k + nb, kmin)
        spec = gpu and _panel_spec(a.dtype, m - k, e - k, qr=True)
        v, t, th, vh = (_device_panel(a, k, e, spec, grid, info) if spec or grid else
                        _host_panel(a, k, e))
        blocks.append((k, v, t, vh))
        if e < n:
            apply_block(v, th, vh, _sub(a, k, m, e, n))
    if grid:
        _check_grid(info, f"QR of a {m} x {n} matrix", -(-m // grid.rows))
    return blocks


def sytrd_fits(ctx, n, dtype, groups=None):
    """(groups, mc, rows, rch, rb) of sytrd_grid for one n x n matrix on ctx (groups given:
    tests, anywhere), or None where it does not apply: NVIDIA GPUs (one work-group a
    multiprocessor, at most GRID_LOCAL of them), n up to SYTRD_MAX."""
    ls = GRID_LOCAL["sytrd_grid"]
    if groups is None:
        if not _grid_device(ctx) or n > SYTRD_MAX:
            return None
        groups = min(ctx.device.compute_units, ls)
    groups = max(1, min(groups, n))
    # (powers of two: few builds)
    mc, rows = (1 << max(-(-n // k) - 1, 0).bit_length() for k in (ls, groups))
    # (the row sums' buffer within SYTRD_REDUCE and the device's local memory, beside the
    # rows' four vectors)
    room = min(SYTRD_REDUCE, ctx.device.cl_device.local_mem_size - 4 * rows * dtype.itemsize
               - 512)
    rch = max(2, min(rows, 1 << (room // (ls * dtype.itemsize)).bit_length() - 1))
    rb = max(1, min(rch, SYTRD_LOADS // (mc * dtype.itemsize)))
    return groups, mc, max(rows, rch), rch, rb


def sytrd(a, fits):
    """Householder tridiagonalization of the Hermitian (n, n) contiguous array `a` (both
    triangles; overwritten) by sytrd_grid (one launch; `fits` from sytrd_fits): (d, e, tau,
    vt, check) with Q^H A Q = the tridiagonal matrix of diagonal d and off-diagonal e
    (real), Q = H0 H1 ... H(n-2), H_k = I - tau_k v_k v_k^H, v_k row k of vt (n - 1, n);
    check() raises DeviceTimeout where the work-groups did not all run at once (it waits
    for the device: call it once the rest is queued)."""
    n = a.shape[0]
    ctx, dt = a.context, a.dtype
    groups, mc, rows, rch, rb = fits
    rdt = _real_of(dt)
    d, e = empty((n,), rdt, context=ctx), empty((max(n - 1, 0),), rdt, context=ctx)
    tau = empty((max(n - 1, 0),), dt, context=ctx)
    vt = empty((max(n - 1, 1), n), dt, context=ctx)
    ints = zeros((1,), np.int32, context=ctx)
    info = zeros((1,), np.int32, context=ctx)
    pv, kv = empty((2 * n,), dt, context=ctx), empty((2 * groups,), dt, context=ctx)
    kernel = _grid_kernel(ctx, "sytrd_grid", dt, mc=mc, rows=rows, rch=rch, rb=rb)
    ls = GRID_LOCAL["sytrd_grid"]
    mat = a._view((1, n, n), (0, *a.strides))
    outs = (a.storage, d.storage, e.storage, tau.storage, vt.storage, ints.storage,
            pv.storage, kv.storage, info.storage)
    enqueue(ctx, kernel, (ls * groups,), (ls,),
            [n, *_mat(mat), *outs[1:]], (), outs)
    return d, e, tau, vt, lambda: _check_grid(
        info, f"tridiagonalization of a {n} x {n} matrix", groups)


def apply_block(v, t, vh, c):
    """c = (I - V T V^H) c, three GEMMs (pass T^H for the adjoint reflector)."""
    p, _, k = v.shape
    w = empty((p, k, c.shape[2]), c.dtype, context=c.context)
    blas.gemm_into(1, vh, c, 0, w)
    w2 = empty(w.shape, c.dtype, context=c.context)
    blas.gemm_into(1, t, w, 0, w2)
    blas.gemm_into(-1, v, w2, 1, c)
    return c


def orgqr(blocks, p, m, cols, dtype, ctx):
    """Q[:, :, :cols] = H1 H2 ... Hk applied to the identity's first `cols` columns."""
    q = zeros((p, m, cols), dtype, context=ctx)
    if p == 0 or m == 0 or cols == 0:
        return q
    st = q.strides
    q._view((p, min(m, cols)), (st[0], st[1] + st[2])).fill(1)
    for k, v, t, vh in reversed(blocks):
        apply_block(v, t, vh, _sub(q, k, m, k, cols))
    return q
