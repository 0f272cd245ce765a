"""all_reduce bus bandwidth, 2(n-1)/n x bytes / time, over message sizes, for both transports.

    python benchmarks/bench_collectives.py [--min 4K] [--max 256M] [--repeats 5] [--device D]
        in one process, the ranks being the chosen device and the next usable device of its
        platform (POCL_DEVICES="pthread pthread" gives two on PoCL): ring and tree beside
        each other (the case "all_reduce" of gpuarr/bench.py; the command's flags work too)
    mpiexec -n 2 python benchmarks/bench_collectives.py --mpi [--min 4K] [--max 256M]
        across processes: GpuComm.all_reduce (staging and reduce_on variants) beside numpy
        arrays all-reduced with mpi4py in the same run (the host-only figure)
    pytest benchmarks/bench_collectives.py [--bench-size=quick]     (in one process)

Sizes take K, M and G suffixes; `--max 64K` makes a smoke run. float32 sums throughout.

Measured on PoCL (2-core VM, shared; bus GB/s, noisy to +-30%):
  over MPI, 2 ranks    numpy  pieces  auto/host  pinned/host  auto/device
      1 MiB             6.50    6.88       2.67         2.67         1.33
     16 MiB             4.93    5.66       4.03         3.47         2.59
     64 MiB             2.15    5.80       4.05         3.26         2.32
    256 MiB             2.21    5.42       4.12         2.75         2.91
  (auto maps PoCL's memory for MPI; small messages pay PoCL's ~50 us per command: 4 KiB
  at 0.02 against numpy's 0.8)
  in one process, 2 devices (tree / ring): 4 MiB 10.5 / 7.8, 16 MiB 7.0 / 6.8,
  64 MiB 5.5 / 5.6, 256 MiB 5.6 / 5.6
"""

import argparse
import os
import sys
import time

os.environ.setdefault("POCL_DEVICES", "pthread pthread")

import numpy as np

import gpuarr as ga
from gpuarr import bench, collectives

FAMILIES = ("collectives",)


def sizes_between(lo, hi):
    out = []
    n = lo
    while n <= hi:
        out.append(n)
        n *= 4
    return out


def busbw(nbytes, ranks, seconds):
    return 2 * (ranks - 1) / ranks * nbytes / seconds / 1e9


def best(fn, repeats, sync=None):
    fn()
    if sync:
        sync()
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        fn()
        if sync:
            sync()
        times.append(time.perf_counter() - t0)
    return min(times)


VARIANTS = [("auto", "host"), ("map", "host"), ("pinned", "host"), ("auto", "device")]


def mpi_row(comm, nbytes, repeats):
    """Bus GB/s of numpy arrays all-reduced by mpi4py (whole, then in CHUNK_BYTES pieces)
    and of GpuComm.all_reduce in each of VARIANTS."""
    from mpi4py import MPI

    world, ctx, n = comm.mpi_comm, comm.context, comm.count
    host = np.ones(nbytes // 4, np.float32)
    host_out = np.empty_like(host)
    per = collectives.CHUNK_BYTES // 4

    def host_only():
        world.Allreduce(host, host_out, MPI.SUM)

    def host_pieces():
        for a in range(0, host.size, per):
            world.Allreduce(host[a:a + per], host_out[a:a + per], MPI.SUM)

    def timed(fn):
        world.Barrier()
        return max(world.allgather(best(fn, repeats, ctx.sync)))

    times = [timed(host_only), timed(host_pieces)]
    x = ga.asarray(host, context=ctx)
    out = ga.empty_like(x)
    for staging, reduce_on in VARIANTS:
        comm.staging, comm.reduce_on = staging, reduce_on
        times.append(timed(lambda: comm.all_reduce(x, "sum", dest=out)))
        assert float(out[-1]) == n
    comm.staging, comm.reduce_on = "auto", "host"
    return [busbw(nbytes, n, t) for t in times]


def over_mpi(sizes, repeats):
    from mpi4py import MPI

    world = MPI.COMM_WORLD
    usable = [d for d in ga.list_devices() if d.usable]
    ctx = ga.init(usable[world.rank % len(usable)].name)
    comm = collectives.GpuComm.from_mpi(world, ctx)
    if world.rank == 0:
        print(f"over MPI, {comm.count} ranks on {ctx.devname} ({ctx.device.device_name}); bus "
              f"GB/s. numpy: one mpi4py Allreduce of numpy arrays; pieces: the same in "
              f"{collectives.CHUNK_BYTES >> 20} MiB pieces; x numpy: auto/host over numpy")
        print(f"{'bytes':>10s} {'numpy':>7s} {'pieces':>7s} "
              + " ".join(f"{s + '/' + r:>12s}" for s, r in VARIANTS) + f" {'x numpy':>8s}")
    for nbytes in sizes:
        row = mpi_row(comm, nbytes, repeats)
        if world.rank == 0:
            print(f"{nbytes:10d} {row[0]:7.2f} {row[1]:7.2f} "
                  + " ".join(f"{g:12.2f}" for g in row[2:]) + f" {row[2] / row[0]:8.2f}",
                  flush=True)


def test_bench(bench_case):
    bench_case()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpi", action="store_true", help="the MPI transport (under mpiexec)")
    parser.add_argument("--min", default="4K")
    parser.add_argument("--max", default="256M")
    parser.add_argument("--repeats", type=int, default=5)
    args, rest = parser.parse_known_args(argv)
    sizes = sizes_between(bench.parse_value(args.min), bench.parse_value(args.max))
    if args.mpi:
        return over_mpi(sizes, args.repeats)
    return bench.script(FAMILIES, [f"--set=nbytes={','.join(map(str, sizes))}",
                                   f"--repeats={args.repeats}", *rest])


if __name__ == "__main__":
    sys.exit(main())
