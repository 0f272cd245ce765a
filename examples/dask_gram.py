"""Out of core with dask.distributed: the column means and the Gram matrix x.T @ x of an array
several times larger than the device memory each worker may use, on a LocalCluster with one
worker per OpenCL device (docs/dask.md).

    python examples/dask_gram.py [--cap-mib 16] [--times 4] [--cols 64] [--devices cl0:0,cl0:1]
                                 [--check]

Each worker is bound to its device by gpuarr.dask_backend.BindDevice with the flag
preallocate=<cap> (an arena of that many MiB; what does not fit would come from the pool,
which the run checks stayed empty). x (float32, rows x cols) is `times` times the caps of all
workers together; its chunks are drawn on the workers' devices (da.random on the gpuarr
backend), reduced there, and only (cols,) and (cols, cols) results cross to this process.
--check computes both again with numpy chunks (the same random numbers, moved to the host
chunk by chunk) in float64 and compares. Devices: the usable GPUs, else every usable device
(PoCL: POCL_DEVICES="pthread pthread" gives two, the default here).
"""

import argparse
import os
import sys
import time

os.environ.setdefault("POCL_DEVICES", "pthread pthread")

import dask
import dask.array as da
import numpy as np
from distributed import Client, LocalCluster

import gpuarr as ga
from gpuarr.dask_backend import BindDevice, register


def default_devices():
    usable = [d for d in ga.list_devices() if d.usable]
    return [d.name for d in ([d for d in usable if d.type == "GPU"] or usable)]


def held_mib():
    """This worker's device memory held by gpuarr (arena + pool), MiB."""
    return ga.get_context().held_bytes / 2**20


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--cap-mib", type=int, default=16, help="device memory cap per worker")
    p.add_argument("--times", type=float, default=4, help="array size / all workers' caps")
    p.add_argument("--cols", type=int, default=64)
    p.add_argument("--devices", help="comma separated (default: usable GPUs, else all)")
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--check", action="store_true", help="compare with numpy chunks")
    args = p.parse_args(argv)
    register()  # the "gpuarr" array backend also where gpuarr runs from a source tree
    if args.cap_mib <= 1:  # preallocate reads 0 to 1 as a fraction of the device's memory
        p.error(f"--cap-mib {args.cap_mib}: give more than 1 MiB")

    devices = args.devices.split(",") if args.devices else default_devices()
    cap = args.cap_mib * 2**20
    itemsize = np.dtype(np.float32).itemsize
    rows = int(args.times * cap * len(devices) / (args.cols * itemsize))
    chunk_rows = max(1, cap // 8 // (args.cols * itemsize))  # 1/8 of the cap per chunk
    nbytes = rows * args.cols * itemsize
    print(f"x: {rows} x {args.cols} float32, {nbytes / 2**20:.0f} MiB in chunks of "
          f"{chunk_rows} rows; {len(devices)} workers ({', '.join(devices)}), each capped at "
          f"{args.cap_mib} MiB: {nbytes / cap:.1f}x one cap, {nbytes / cap / len(devices):.1f}x "
          f"all")

    with LocalCluster(n_workers=len(devices), threads_per_worker=1, processes=True,
                      dashboard_address=None) as cluster, Client(cluster) as client:
        client.register_plugin(BindDevice(devices, flags=f"preallocate={args.cap_mib}"))
        with dask.config.set({"array.backend": "gpuarr"}):
            x = da.random.default_rng(args.seed).standard_normal(
                (rows, args.cols), chunks=(chunk_rows, args.cols), dtype=np.float32)
        for run in ("first (kernel builds)", "second"):
            t = time.perf_counter()
            mean, gram = da.compute(x.mean(axis=0), x.T @ x)
            seconds = time.perf_counter() - t
            print(f"mean and x.T @ x, {run} run: {seconds:.2f} s, {nbytes / seconds / 1e9:.2f} "
                  f"GB/s of x; results: {type(gram).__name__}s {mean.shape} and {gram.shape}")
        held = client.run(held_mib)
        for worker, mib in sorted(held.items()):
            print(f"  {worker}: device memory held {mib:.1f} MiB (cap {args.cap_mib})")
        ok = all(mib <= args.cap_mib for mib in held.values())
        if not ok:
            print("device memory went past the cap")
        if args.check:
            xn = x.to_backend("numpy").astype(np.float64)
            mean_np, gram_np = da.compute(xn.mean(axis=0), xn.T @ xn)
            same = (np.allclose(mean.get(), mean_np, rtol=1e-4, atol=1e-5)
                    and np.allclose(gram.get(), gram_np, rtol=1e-4, atol=1e-2))
            print("check against numpy chunks:", "ok" if same else "MISMATCH")
            ok = ok and same
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
