"""GEMM on NVIDIA tensor cores (kernels/gemm_mma.cl.mako): the probes and their fallback
everywhere; on an NVIDIA device of compute capability 8.0+, every precision (float64 DMMA,
float32 as 3xTF32 and as TF32) against float64 numpy, with the error envelope printed."""

import dataclasses
import itertools
import re

import numpy as np
import pytest

import gpuarr as ga
from gpuarr import blas, config
from gpuarr.kernels import render

PRECISIONS = ("f64", "3xtf32", "tf32")
DTYPE = {"f64": np.float64, "3xtf32": np.float32, "tf32": np.float32}
SIZES = (1, 7, 129, 257, 1000)


def _data(shape, seed, dtype=np.float64):
    return (np.random.default_rng(seed).random(shape) - 0.5).astype(dtype)


def _error(got, a, b, c=None, alpha=1.0, beta=0.0):
    """Largest error relative to the magnitudes summed: |alpha| |a| @ |b| + |beta| |c| (the
    forward error bound's scale, so that cancellation is not counted against the kernel)."""
    a, b = a.astype(np.float64), b.astype(np.float64)
    ref = alpha * (a @ b)
    scale = abs(alpha) * (np.abs(a) @ np.abs(b))
    if c is not None:
        ref, scale = ref + beta * c, scale + abs(beta) * np.abs(c)
    return float(np.max(np.abs(got - ref) / np.maximum(scale, 1e-300)))


def _capable(ctx, prec="f64"):
    cc = blas._nv_capability(ctx)
    return cc is not None and cc >= (8, 0) and (prec != "f64" or ctx.fp64)


@pytest.fixture(params=PRECISIONS)
def mma(ctx, request):
    """(precision, MMA_TILES entry in use on ctx's device); skips elsewhere."""
    prec = request.param
    if not _capable(ctx, prec):
        pytest.skip(f"needs an NVIDIA device with compute capability 8.0+ (mma.sync): "
                    f"{ctx.devname} is {ctx.device.device_name}")
    tile = blas._mma_tile(ctx, prec)
    assert tile is not None, f"the {prec} tensor-core probe failed on a capable NVIDIA device"
    return prec, tile


@pytest.fixture
def precision(monkeypatch):
    """Set the gemm_precision flag for one test."""
    def set_flag(value):
        monkeypatch.setattr(config, "flags",
                            dataclasses.replace(config.flags, gemm_precision=value))
    return set_flag


def _simt(ctx, alpha, a, b, beta, c):
    """The portable kernel's result (the tensor-core paths off)."""
    out = ga.asarray(c, context=ctx)
    tile = blas._tile(ctx, out.dtype, c.shape[1], c.shape[2])
    blas._gemm_tiled(ctx, alpha, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), beta,
                     out, tile)
    return out.get()


def _mma(ctx, prec, tile, alpha, a, b, beta, c):
    out = ga.asarray(c, context=ctx)
    blas._gemm_mma(ctx, alpha, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), beta,
                   out, prec, tile)
    return out.get()


@pytest.mark.parametrize("prec", PRECISIONS)
def test_probe(ctx, prec):
    assert blas._mma_ok(ctx, prec) is _capable(ctx, prec)
    assert blas._mma_ok(ctx, prec) is _capable(ctx, prec)  # cached


@pytest.mark.parametrize("prec,entry", [(p, e) for p in PRECISIONS for e in blas.MMA_TILES[p]],
                         ids=lambda v: v if isinstance(v, str) else f"sm{v}x")
@pytest.mark.parametrize("variant", [(True, False, 4, "regs", False),
                                     (False, True, 1, "async", True)],
                         ids=["aligned", "ragged-transposed-async"])
def test_template_renders(prec, entry, variant):
    a_mk, b_nk, vec, copy, edge = variant
    tile = dict(blas.MMA_TILES[prec][entry], copy=copy, stages=3)
    vec = min(vec, 2) if prec == "f64" else vec
    src = render("gemm_mma.cl.mako", name="gemm_mma", **tile, prec=prec, a_mk=a_mk, b_nk=b_nk,
                 vec=vec, edge_mn=edge, edge_vec=edge, edge_k=edge, use_beta=edge)
    types = "f64.f64.f64.f64" if prec == "f64" else "f32.tf32.tf32.f32"
    mma = f"mma.sync.aligned.{tile['shape']}.row.col.{types}"
    assert mma in src and "__kernel" in src
    assert ("cp.async" in src) == (copy == "async")
    mbar = tile.get("sync") == "mbar" and copy == "regs" and tile["pipeline"]
    assert ("mbarrier.try_wait" in src) == mbar
    # the refill of the registers: under a branch with barriers, branch-free with mbarriers
    # (so that the compiler schedules the copies among the products)
    refill_branch = f"if (k0 + {2 * tile['bk']} < K)" in src
    assert refill_branch == (copy == "regs" and tile["pipeline"] and not mbar)
    assert ("cvt.rna.tf32.f32" in src) == (prec != "f64")
    # one mma per tile of a warp and k step, three for 3xTF32
    mm_, kk_ = int(tile["shape"][1:].split("n")[0]), int(tile["shape"].split("k")[1])
    tiles = (tile["bm"] // tile["wm"] // mm_) * (tile["bn"] // tile["wn"] // 8)
    per_step = 3 if prec == "3xtf32" else 1
    assert src.count(mma) == per_step * tiles * tile["bk"] // kk_


@pytest.mark.parametrize("flag", ["auto", "3xtf32", "tf32"])
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_fallback_identical(ctx, device_class, precision, flag, dtype):
    """Where the probe fails (every device but NVIDIA's), products are the portable kernels'
    bit for bit, whatever the precision flag asks for."""
    prec = blas._mma_precision(np.dtype(dtype)) if flag == "auto" else flag
    if _capable(ctx, prec or "f64"):
        pytest.skip("the device runs the tensor-core kernels")
    precision(flag)
    m, k, n = 260, 70, 270
    a, b, c = _data((m, k), 1, dtype), _data((k, n), 2, dtype), _data((m, n), 3, dtype)
    A, B, C = (ga.asarray(x, context=ctx) for x in (a, b, c))
    got = blas.gemm(0.5, A, B, -1.0, C).get()
    precision("fp32")
    np.testing.assert_array_equal(got, blas.gemm(0.5, A, B, -1.0, C).get())
    assert _error(got, a, b, c, 0.5, -1.0) < (1e-14 if dtype == np.float64 else 1e-6)


def test_precision_flag(precision):
    """Which path the flag picks for each dtype (what runs also needs the probe)."""
    f32, f64 = np.dtype(np.float32), np.dtype(np.float64)
    for flag, want in (("auto", blas.AUTO_FLOAT32_PRECISION), ("fp32", None),
                       ("3xtf32", "3xtf32"), ("tf32", "tf32")):
        precision(flag)
        assert blas._mma_precision(f32) == want and blas._mma_precision(f64) == "f64"
    assert blas._mma_precision(np.dtype(np.float16)) is None
    with pytest.raises(ga.errors.FlagError, match="gemm_precision"):
        config.parse_flags("gemm_precision=fast")


# Largest error (relative to |a| @ |b|) each precision may show next to the portable kernel of
# its dtype: float64 and 3xTF32 within a small factor of it, TF32 within its 10-bit mantissa.
def _bound(prec, simt_err, k):
    if prec == "tf32":
        return 2.0 ** -10 + 4 * k * 2.0 ** -24
    return max(4 * simt_err, 1e-14 if prec == "f64" else 1e-6)


@pytest.mark.parametrize("shape", list(itertools.product(SIZES, repeat=3)), ids=str)
def test_mma_shapes(ctx, mma, shape):
    """The kernel itself on every shape (ragged tiles included), next to the SIMT kernel."""
    prec, tile = mma
    m, k, n = shape
    dt = DTYPE[prec]
    a, b, c = _data((1, m, k), 4, dt), _data((1, k, n), 5, dt), _data((1, m, n), 6, dt)
    err = _error(_mma(ctx, prec, tile, 0.5, a, b, -1.0, c), a, b, c, 0.5, -1.0)
    simt_err = _error(_simt(ctx, 0.5, a, b, -1.0, c), a, b, c, 0.5, -1.0)
    print(f"{prec} {shape}: error {err:.2e}, SIMT {simt_err:.2e}")
    assert err <= _bound(prec, simt_err, k), (err, simt_err)


@pytest.mark.parametrize("alpha,beta", list(itertools.product((0, 1, -1, 0.5), repeat=2)))
@pytest.mark.parametrize("trans_a,trans_b", list(itertools.product((False, True), repeat=2)))
def test_mma_gemm(ctx, mma, precision, alpha, beta, trans_a, trans_b):
    """blas.gemm on a big ragged product (the tensor-core path): transposes, alpha, beta."""
    prec, tile = mma
    precision("fp32" if prec == "f64" else prec)
    dt = DTYPE[prec]
    m, k, n = 257, 1000, 129 + tile["bn"]
    a = _data((k, m) if trans_a else (m, k), 7, dt)
    b = _data((n, k) if trans_b else (k, n), 8, dt)
    c = _data((m, n), 9, dt)
    a_, b_ = (a.T if trans_a else a), (b.T if trans_b else b)
    got = blas.gemm(alpha, ga.asarray(a, context=ctx), ga.asarray(b, context=ctx), beta,
                    ga.asarray(c, context=ctx), trans_a=trans_a, trans_b=trans_b).get()
    err = _error(got, a_, b_, c, alpha, beta) if alpha or beta else float(np.max(np.abs(got)))
    print(f"{prec} alpha={alpha} beta={beta} trans_a={trans_a} trans_b={trans_b}: "
          f"error {err:.2e}")
    assert err < _bound(prec, 1e-14 if prec == "f64" else 2e-7, k)


@pytest.mark.parametrize("padded", [False, True], ids=["clamped", "ragged"])
def test_vector_chunks_at_the_edges(ctx, mma, padded):
    """Operands loaded along m (A transposed) and n in vectors, M and N not multiples of the
    tile: where M and N are multiples of the vector, chunks past the edge clamp whole and
    go unchecked (edge_vec off); views of padded arrays whose M and N are not (the vector
    width coming from their strides) check each chunk (edge_vec on)."""
    prec, tile = mma
    dt = DTYPE[prec]
    vec = 16 // np.dtype(dt).itemsize
    m, k, n = 2 * tile["bm"] + (1 if padded else vec), 40, 2 * tile["bn"] + (3 if padded else vec)
    pad = (-m % vec, -n % vec) if padded else (0, 0)
    at = _data((1, k, m + pad[0]), 12, dt)
    bp = _data((1, k, n + pad[1]), 13, dt)
    c = _data((1, m, n), 14, dt)
    a, b = at[:, :, :m].transpose(0, 2, 1), bp[:, :, :n]
    A = ga.asarray(at, context=ctx)[:, :, :m].transpose(0, 2, 1)
    B = ga.asarray(bp, context=ctx)[:, :, :n]
    C = ga.asarray(c, context=ctx)
    plan = blas._mma_plan(ctx, A, B, C, True, prec, tile)
    params = dict(next(key for key, kernel in ctx.kernels.items()
                       if kernel is plan.launcher)[1])
    assert (params["vec"], params["edge_mn"], params["edge_vec"]) == (vec, True, padded)
    got = plan.launch(0.5, A, B, -1.0, C).get()
    err = _error(got, a, b, c, 0.5, -1.0)
    simt_err = _error(_simt(ctx, 0.5, a, b, -1.0, c), a, b, c, 0.5, -1.0)
    print(f"{prec} {m}x{k}x{n} padded={padded}: error {err:.2e}, SIMT {simt_err:.2e}")
    assert err <= _bound(prec, simt_err, k), (err, simt_err)


def test_mma_batched_broadcast(ctx, mma, precision):
    prec, _ = mma
    precision("fp32" if prec == "f64" else prec)
    dt = DTYPE[prec]
    a, b = _data((2, 1, 300, 257), 10, dt), _data((3, 257, 140), 11, dt)
    got = (ga.asarray(a, context=ctx) @ ga.asarray(b, context=ctx)).get()
    ref = a.astype(np.float64) @ b
    err = float(np.max(np.abs(got - ref) / (np.abs(a) @ np.abs(b))))
    print(f"{prec} batched (2, 1, 300, 257) @ (3, 257, 140): error {err:.2e}")
    assert got.shape == ref.shape and err < _bound(prec, 2e-7, 257)


def test_dispatch_table_takes_tensor_cores(ctx, mma, precision, monkeypatch):
    """Where the probe passed, the dispatch table takes products from the tile up to the
    tensor cores, batches of two levels as one (copied, or as views for smaller products:
    broadcast ones stay on the portable kernels' two levels), smaller products elsewhere;
    a repeated product runs its kept plan."""
    prec, tile = mma
    precision("auto" if prec == "f64" else prec)
    dt = DTYPE[prec]

    def family(m, n, batch=1, levels=1, broadcast=True):
        a = ga.zeros((batch, m, 40), dt, context=ctx)
        b = ga.zeros((batch if levels == 1 else 1, 40, n), dt, context=ctx)
        c = ga.empty((batch, m, n) if levels == 1 else (batch, 2, m, n), dt, context=ctx)
        if levels == 2 and broadcast:  # (batch, 1, m, k) @ (1, 2, k, n)
            a = ga.broadcast_to(a[:, None], (batch, 2, m, 40))
            b = ga.broadcast_to(b[None], (batch, 2, 40, n))
        elif levels == 2:
            a = ga.zeros((batch, 2, m, 40), dt, context=ctx)
            b = ga.zeros((batch, 2, 40, n), dt, context=ctx)
        return blas._choose(ctx, a, b, c, False)[0].name

    assert family(64, 64, batch=1024, levels=2) not in ("flatten", "mma")
    assert family(64, 64, batch=1024, levels=2, broadcast=False) == "flatten"

    assert family(tile["bm"], tile["bn"]) == family(4096, 4096) == "mma"
    assert family(tile["bm"], tile["bn"], batch=3) == "mma"
    assert family(tile["bm"] - 1, tile["bn"]) != "mma"
    assert family(tile["bm"], tile["bn"], batch=3, levels=2) == "flatten"
    launches = []
    real = blas.GemmPlan.launch
    monkeypatch.setattr(blas.GemmPlan, "launch",
                        lambda plan, *args: launches.append(plan.family) or real(plan, *args))
    a = ga.asarray(_data((tile["bm"], 64), 17, dt), context=ctx)
    b = ga.asarray(_data((64, tile["bn"]), 18, dt), context=ctx)
    for _ in range(3):
        a @ b
    assert launches == ["mma"] * 3


def test_mid_sized_products_take_the_mid_tile(ctx, monkeypatch, request):
    """The tensor-core tile by estimate: the mid tile where the big one leaves most of 132
    compute units idle (128 to 1024) and for short k (the big tile's fixed cost unhidden),
    the big one from 2048 and for batches of 1024; the mid tile only where its own probe
    passes. Every MMA_MID_TILES entry passes the template."""
    for prec, tiles in blas.MMA_MID_TILES.items():
        shape_class = f"mma_{prec}"
        dt = "float64" if prec == "f64" else "float32"
        for tile in tiles.values():
            switches = {k: int(v) if isinstance(v, bool) else v for k, v in tile.items()}
            blas.check_tile(ctx, dt, shape_class, switches, "nvidia")
    request.addfinalizer(blas.forget_plans)  # the pretended probes are not kept
    monkeypatch.setattr(ctx, "device", dataclasses.replace(ctx.device, compute_units=132))
    monkeypatch.setattr(blas, "_nv_capability", lambda c: (9, 0))
    passing = {64, 128}  # the tiles (by bm) whose probe passes
    monkeypatch.setattr(blas, "_mma_probe", lambda c, prec, tile: tile["bm"] in passing)

    def bm(side, dtype=np.float32, batch=1, k=None):
        c = ga.empty((1, 1, 1), dtype, context=ctx)
        p = blas.Problem(ctx, "nvidia", {}, c, c, c, batch, side, side, k or side, False, True)
        return blas._mma_choice(p)[1]["bm"]

    if ctx.fp64:
        assert bm(256, np.float64) == bm(4096, np.float64, k=64) == 64
    assert bm(128) == bm(256) == bm(1024) == bm(4096, k=64) == bm(4096, k=128) == 64
    assert bm(2048) == bm(4096) == bm(4096, k=512) == bm(1024, batch=8) == 128
    passing.discard(64)
    blas.forget_plans()
    assert bm(256) == 128


def _cases(dt):
    """(name, a, b): random; ill-conditioned (rows and columns scaled over 12 decades, entries
    that cancel); large K."""
    rng = np.random.default_rng(12)
    random = (_data((1, 512, 512), 13), _data((1, 512, 512), 14))
    a = (rng.standard_normal((512, 512)) * 10.0 ** rng.uniform(-6, 6, (512, 1)))
    b = rng.standard_normal((512, 512)) * 10.0 ** rng.uniform(-6, 6, (1, 512))
    b[1::2] = -b[::2] * (1 + 1e-3 * rng.standard_normal((256, 512)))  # pairs that cancel
    ill = (a[None], b[None])
    large_k = (_data((1, 256, 65536), 15), _data((1, 65536, 256), 16))
    return [(name, x.astype(dt), y.astype(dt))
            for name, (x, y) in (("random", random), ("ill-conditioned", ill),
                                 ("large-K", large_k))]


def test_error_envelope(ctx, mma):
    """Each precision's error next to the portable kernel's on the same data, printed; 3xTF32
    stays within the SIMT float32 kernel's envelope, which is what lets it be the default."""
    prec, tile = mma
    lines = []
    for name, a, b in _cases(DTYPE[prec]):
        c = np.zeros((1, a.shape[1], b.shape[2]), a.dtype)
        err = _error(_mma(ctx, prec, tile, 1.0, a, b, 0.0, c), a, b)
        simt_err = _error(_simt(ctx, 1.0, a, b, 0.0, c), a, b)
        lines.append(f"{prec:7s} {name:16s} error {err:.2e}  SIMT {simt_err:.2e}  "
                     f"ratio {err / simt_err:.2f}")
        assert err <= _bound(prec, simt_err, a.shape[2]), lines[-1]
    print("\n".join(lines))


def _local_layout(prec, tile, a_mk, b_nk, swizzle):
    """Emulate the rendered kernel's local memory on the host: for every work-item, the
    (row, column) its chunks are stored at, and its fragment reads in order, as the
    (operand, logical row, logical k) element each finds; plus the most distinct addresses a
    read puts on one bank (32-bit banks; float64 reads go in half-warp phases)."""
    f64 = prec == "f64"
    src = render("gemm_mma.cl.mako", name="k", **dict(tile, swizzle=swizzle), prec=prec,
                 a_mk=a_mk, b_nk=b_nk, vec=2 if f64 else 4, edge_mn=False, edge_vec=False,
                 edge_k=False, use_beta=False)
    rows = {op: int(re.search(rf"{op}lm\[\d+\]\[\d+\]\[(\d+)\]", src).group(1)) for op in "AB"}
    setup = [line.strip().removeprefix("const int ").rstrip(";") for line in src.splitlines()
             if re.match(r"\s*const int (wr|[ab]_(kk|mm|nn|lc|sw))", line)]
    reads = re.findall(r"= (?:as_uint|tf32)?\(?([AB])l\[([^\]]+)\]\[([^\]]+)\]\)?;", src)
    threads = 32 * tile["wm"] * tile["wn"]
    found, worst = {}, 1

    def names(tid):
        env = dict(tid=tid, lane=tid % 32, warp=tid // 32, g=tid % 32 // 4, t=tid % 4)
        for line in setup:
            for part in re.split(r",\s(?=\w+ = )", line):
                name, expr = part.split(" = ", 1)
                env[name] = eval(expr.replace("/", "//"), {}, env)
        return env
    envs = [names(tid) for tid in range(threads)]
    stored = {}
    for env in envs:
        for op, x, mk in (("A", "mm", a_mk), ("B", "nn", b_nk)):
            for r in itertools.count():
                if f"{op.lower()}_kk{r}" not in env:
                    break
                kk, xx = env[f"{op.lower()}_kk{r}"], env[f"{op.lower()}_{x}{r}"]
                for e in range(2 if f64 else 4):
                    at = (xx if mk else kk, env[f"{op.lower()}_lc{r}"] + e)
                    assert at[1] < rows[op] and (op, at) not in stored
                    stored[op, at] = (op, xx + (0 if mk else e), kk + (e if mk else 0))
    for n, (op, row, col) in enumerate(reads):
        phase_banks = {}
        for tid, env in enumerate(envs):
            at = (eval(row.replace("/", "//"), {}, env), eval(col.replace("/", "//"), {}, env))
            found[tid, n] = stored[op, at]
            word = (at[0] * rows[op] + at[1]) * (2 if f64 else 1)
            phase = tid // (16 if f64 else 32)
            for w in range(word, word + (2 if f64 else 1)):
                phase_banks.setdefault((phase, w % 32), set()).add(word)
        worst = max(worst, max(len(v) for v in phase_banks.values()))
    return found, worst


@pytest.mark.parametrize("prec", ["f64", "tf32"])
@pytest.mark.parametrize("a_mk,b_nk", list(itertools.product((True, False), repeat=2)))
def test_swizzled_layout(prec, a_mk, b_nk):
    """The unpadded XOR-swizzled local layout (host emulation of the rendered index
    expressions): every fragment read finds the element the padded layout gives it, and no
    read has bank conflicts in either layout."""
    tile = blas.MMA_TILES[prec][max(blas.MMA_TILES[prec])]
    padded, padded_worst = _local_layout(prec, tile, a_mk, b_nk, False)
    swizzled, swizzled_worst = _local_layout(prec, tile, a_mk, b_nk, True)
    assert swizzled == padded
    assert padded_worst == swizzled_worst == 1
