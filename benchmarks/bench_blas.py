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

The cases live in gpuarr/bench.py; the script takes `python -m gpuarr bench`'s flags too
(e.g. --only square). CLBlast and cuBLAS figures of the GPU machine: .device/anchors.py.
"""

import argparse
import itertools
import sys

from gpuarr import bench, blas, get_context

FAMILIES = ("gemm",)


def test_bench(bench_case):
    bench_case()


def _ints(text):
    """'a=1,b=2' -> {'a': 1, 'b': 2}"""
    return {k: int(v) for k, v in (kv.split("=") for kv in text.split(","))}


def main(argv=None):
    parser = argparse.ArgumentParser(add_help=False)
    parser.add_argument("--tile", action="append", default=[])
    parser.add_argument("--gemv", action="append", default=[])
    parser.add_argument("--no-mma-mid", action="store_true")
    args, rest = parser.parse_known_args(argv)
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
