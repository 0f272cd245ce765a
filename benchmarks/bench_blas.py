"""GEMM and friends: gpuarr beside numpy and cupy (and CLBlast through gpuarr's flag
blas_backend=clblast where libclblast loads; the tensor-core precisions where they run), in
TFLOP/s or GB/s: square products (SGEMM 256-2048 on CPUs, to 8192 on GPUs; DGEMM 1024-8192 on
GPUs), tall-skinny (2^22 x 64) @ (64 x 64), x.T @ x of 2^22 x 64, gemv 16384^2, batched
64^3 (plain, and broadcast (b, 1, 64, 64) @ (1, b, 64, 64)), and small squares 16-1024 as
time per call (many calls, one sync: the host cost; 16x16 is the latency family's x @ y).

    pytest benchmarks/bench_blas.py [--bench-size=quick] [--bench-devices=cl0:0]
    python benchmarks/bench_blas.py [--device cl:nvidia] [--sizes 1024,2048]
        [--tile mwg=128,nwg=128,kwg=16,mdimc=16,ndimc=16 ...]   (sweeps the big GEMM tile)
        [--gemv local=256,unroll=4,vector_bytes=16,least_row_items=32 ...]   (GEMV_SHAPES)
        [--no-mma-mid]   (tensor cores: the big tile only, not MMA_MID_TILES)
    python benchmarks/bench_blas.py --narrow [--device cl0:0] [--repeats 15]
        (narrow outputs and transposed layouts beside numpy in the same process, best of
        --repeats, with the dispatch table's choice: a markdown table)

The cases live in gpuarr/bench.py; the script takes `python -m gpuarr bench`'s flags too
(e.g. --only square). CLBlast and cuBLAS figures of the GPU machine: .device/anchors.py.
"""

import argparse
import itertools
import sys
import time

import numpy as np

import gpuarr as ga
from gpuarr import bench, blas, get_context

FAMILIES = ("gemm",)


def test_bench(bench_case):
    bench_case()


def _ints(text):
    """'a=1,b=2' -> {'a': 1, 'b': 2}"""
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


# (label, shapes of a and b, views of a and b, the product) for --narrow: issue 22's MLP
# shapes (h @ W, W.T @ h.T, x.T @ dh), GEMV through transposes, few columns in each layout
_T = lambda x: x.T  # noqa: E731
_SAME = lambda x: x  # noqa: E731
_DOT = lambda xp, a, b: xp.dot(a, b)  # noqa: E731
_MATMUL = lambda xp, a, b: a @ b  # noqa: E731
NARROW_CASES = [
    ("h @ W, 2000x500 @ 500x10", (2000, 500), (500, 10), _SAME, _SAME, _MATMUL),
    ("W.T @ h.T, 10x500 @ 500x2000", (500, 10), (2000, 500), _T, _T, _MATMUL),
    ("h @ W.T (W 10x500)", (2000, 500), (10, 500), _SAME, _T, _MATMUL),
    ("F-order h @ W", (500, 2000), (500, 10), _T, _SAME, _MATMUL),
    *((f"h @ W, {n} columns", (2000, 500), (500, n), _SAME, _SAME, _MATMUL)
      for n in (1, 2, 4, 32)),
    *((f"F-order h @ W, {n} columns", (500, 2000), (500, n), _T, _SAME, _MATMUL)
      for n in (1, 2, 4, 32)),
    ("W(4 rows) @ h, 4x500 @ 500x2000", (4, 500), (500, 2000), _SAME, _SAME, _MATMUL),
    ("dot(U.T, x), U 500x500", (500, 500), (500,), _T, _SAME, _DOT),
    ("dot(x, U)", (500,), (500, 500), _SAME, _SAME, _DOT),
    ("dot(U, x)", (500, 500), (500,), _SAME, _SAME, _DOT),
    ("dot(U.T, x), U 4096x4096", (4096, 4096), (4096,), _T, _SAME, _DOT),
    ("x.T @ dh, 784x2000 @ 2000x500", (2000, 784), (2000, 500), _T, _SAME, _MATMUL),
]


def _best(ctx, repeats, fn, *args):
    fn(*args)
    ctx.sync()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        fn(*args)
        ctx.sync()
        times.append(time.perf_counter() - start)
    return min(times)


def narrow_table(device=None, repeats=15):
    """Print NARROW_CASES (float32, float64, and complex64 for the GEMVs) as a markdown
    table: gpuarr's and numpy's best time, their ratio and the dispatch table's entry."""
    ctx = get_context(device)
    print(f"{ctx.device.device_name}; numpy {np.__version__}; best of {repeats}\n")
    print("| product | dtype | gpuarr | numpy | gpuarr / numpy | entry |")
    print("| --- | --- | ---: | ---: | ---: | --- |")
    rng = np.random.default_rng(0)
    for label, sa, sb, va, vb, op in NARROW_CASES:
        dts = [np.float32, np.float64] + ([np.complex64] if op is _DOT else [])
        for dt in dts:
            ha, hb = ((rng.random(s) - 0.5).astype(dt) for s in (sa, sb))
            da, db = va(ga.asarray(ha, context=ctx)), vb(ga.asarray(hb, context=ctx))
            ha, hb = va(ha), vb(hb)
            got = _best(ctx, repeats, op, ga, da, db)
            want = _best(ctx, repeats, op, np, ha, hb)
            err = np.max(np.abs(op(ga, da, db).get() - op(np, ha, hb)))
            assert err <= 1e-3 * np.max(np.abs(op(np, ha, hb))), (label, dt, err)
            print(f"| {label} | {np.dtype(dt).name} | {got * 1e3:.3f} ms | "
                  f"{want * 1e3:.3f} ms | {got / want:.2f} | {_entry(da, db)} |", flush=True)


def _entry(a, b):
    """The dispatch table's entry for a @ b (real operands; complex ones run real GEMMs)."""
    if a.dtype.kind == "c":
        return "(real GEMMs)"
    av, bv, shape, levels = blas._matmul_operands(a, b)
    c = blas._result_view(ga.empty(shape, a.dtype, context=a.context), levels, av, bv)
    return blas._choose(a.storage.context, av, bv, c, False)[0].name


def main(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tile", action="append", default=[])
    parser.add_argument("--gemv", action="append", default=[])
    parser.add_argument("--no-mma-mid", action="store_true")
    parser.add_argument("--narrow", action="store_true")
    parser.add_argument("--repeats", type=int, default=15)
    args, rest = parser.parse_known_args(argv)
    if args.narrow:
        devices = [v for i, v in enumerate(rest) if i and rest[i - 1] == "--device"]
        return narrow_table(devices[0] if devices else None, args.repeats)
    if args.no_mma_mid:
        blas.MMA_MID_TILES.clear()
        blas.forget_plans()
    if not args.tile and not args.gemv:
        return bench.script(FAMILIES, rest, sizes="n={}")
    devices = [v for i, v in enumerate(rest) if i and rest[i - 1] == "--device"]
    cls = blas.device_class(get_context(devices[0] if devices else None))
    gemv_shape = blas.GEMV_SHAPES[cls]
    status = 0
    for tile, shape in itertools.product(args.tile or [None], args.gemv or [None]):
        if tile:
            blas.GEMM_TILES[cls]["big"] = dict(blas.GEMM_TILES[cls]["big"], **_ints(tile))
            print("big tile:", blas.GEMM_TILES[cls]["big"])
        if shape:
            blas.GEMV_SHAPES[cls] = dict(gemv_shape, **_ints(shape))
            print("gemv shape:", blas.GEMV_SHAPES[cls])
        blas.forget_plans()  # the products kept plans of the tables before
        status |= bench.script(FAMILIES, rest, sizes="n={}")
    return status


if __name__ == "__main__":
    sys.exit(main())
