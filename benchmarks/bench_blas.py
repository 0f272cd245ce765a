"""GEMM and friends: gpuarr beside numpy (and CLBlast/cuBLAS via .device/anchors.py on the GPU
machine), in TFLOP/s or GB/s.

    python -m pytest benchmarks/bench_blas.py --benchmark-enable
    python benchmarks/bench_blas.py [--device cl:nvidia] [--sizes 1024,2048]
        [--tile mwg=128,nwg=128,kwg=16,mdimc=16,ndimc=16 ...]   (sweeps the big GEMM tile)
        [--gemv local=256,unroll=4,vector_bytes=16,least_row_items=32 ...]   (GEMV_SHAPES)
"""

import argparse
import dataclasses
import itertools
import time

import numpy as np
import pytest
from ratios import best_time, run_case

import gpuarr as ga
from gpuarr import blas, config

SIZES = (1024, 2048)


def workloads(ctx, sizes, dtypes=("float32", "float64")):
    """name -> (flops or bytes, unit, {library: callable})."""
    rng = np.random.default_rng(0)
    cases = {}
    for dt in dtypes:
        if dt == "float64" and not ctx.fp64:
            continue
        for n in sizes:
            h = rng.random((n, n)).astype(dt)
            x = ga.asarray(h, context=ctx)
            np.testing.assert_allclose((x @ x)[:64].get(), h[:64] @ h, rtol=1e-4)
            fns = {"gpuarr": lambda x=x: (x @ x).sync()}
            if n <= 2048:  # numpy's time on bigger ones says nothing new
                fns["numpy"] = lambda h=h: h @ h
            cases[f"{dt} gemm {n}"] = (2 * n**3, "TFLOP/s", fns)
            if dt == "float32" and blas._mma_ok(ctx, "tf32"):
                # the default (gemm_precision=auto) beside the other float32 precisions
                cases[f"{dt} gemm {n} by precision"] = (2 * n**3, "TFLOP/s", {
                    flag: lambda x=x, flag=flag: with_precision(flag, lambda: (x @ x).sync())
                    for flag in ("auto", "fp32", "3xtf32", "tf32")})
    side = max(sizes) * 2
    hm = rng.random((side, side), dtype=np.float32)
    hv = rng.random(side, dtype=np.float32)
    mat, vec = ga.asarray(hm, context=ctx), ga.asarray(hv, context=ctx)
    np.testing.assert_allclose(blas.gemv(1.0, mat, vec)[:64].get(), hm[:64] @ hv, rtol=1e-4)
    copy = ga.empty_like(mat)

    def buffer_copy():
        copy._assign(mat)
        ctx.sync()

    cases[f"gemv {side} (read GB/s)"] = (4 * side * side, "GB/s", {
        "gpuarr": lambda: blas.gemv(1.0, mat, vec).sync(),
        "copy (read+write / 2)": buffer_copy})
    batch = ga.asarray(rng.random((4096, 64, 64), dtype=np.float32), context=ctx)
    one = batch[0]

    def loop():
        for i in range(batch.shape[0]):
            blas.gemm(1.0, batch[i], one)
        ctx.sync()

    cases["batched 4096 x 64^3"] = (2 * 4096 * 64**3, "TFLOP/s", {
        "gpuarr": lambda: blas.gemm_batched(1.0, batch, batch).sync(),
        "python loop": loop})
    return cases


def with_precision(flag, fn):
    """fn() with the gemm_precision flag set to `flag`."""
    saved = config.flags
    config.flags = dataclasses.replace(saved, gemm_precision=flag)
    try:
        return fn()
    finally:
        config.flags = saved


def print_table(cases, repeats):
    for name, (work, unit, fns) in cases.items():
        times = {lib: best_time(fn, repeats) for lib, fn in fns.items()}
        cells = "  ".join(f"{lib} {work / t / 1e12 if unit == 'TFLOP/s' else work / t / 1e9:8.3f}"
                          for lib, t in times.items())
        first = next(iter(times))
        print(f"{name:28s} {unit:8s} {cells}   others/{first} time: " + " ".join(
            f"{times[lib] / times[first]:.2f}" for lib in times if lib != first))


@pytest.fixture(scope="module")
def cases():
    return {k: (w, fns) for k, (w, _, fns) in workloads(ga.get_context(), SIZES).items()}


@pytest.mark.parametrize("name", [f"float32 gemm {n}" for n in SIZES])
@pytest.mark.parametrize("lib", ["gpuarr", "numpy"])
def test_gemm(benchmark, cases, name, lib):
    run_case(benchmark, cases, name, lib)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--device", default=None)
    parser.add_argument("--sizes", default="1024,2048")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--tile", action="append", default=[])
    parser.add_argument("--gemv", action="append", default=[])
    args = parser.parse_args()
    ctx = ga.get_context(args.device)
    print(f"device {ctx.devname}: {ctx.device.describe()}")
    sizes = [int(s) for s in args.sizes.split(",")]
    cls = blas.device_class(ctx)
    gemv_shape = blas.GEMV_SHAPES[cls]
    for tile, shape in itertools.product(args.tile or [None], args.gemv or [None]):
        if tile:
            blas.GEMM_TILES[cls]["big"] = dict(blas.GEMM_TILES[cls]["big"], **_ints(tile))
            print("big tile:", blas.GEMM_TILES[cls]["big"])
        if shape:
            blas.GEMV_SHAPES[cls] = dict(gemv_shape, **_ints(shape))
            print("gemv shape:", blas.GEMV_SHAPES[cls])
        t0 = time.perf_counter()
        print_table(workloads(ctx, sizes), args.repeats)
        print(f"({time.perf_counter() - t0:.1f} s)")


def _ints(text):
    """'a=1,b=2' -> {'a': 1, 'b': 2}"""
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


if __name__ == "__main__":
    main()
