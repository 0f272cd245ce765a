"""all_reduce bus bandwidth, 2(n-1)/n x bytes / time, over message sizes, for both transports.

    python benchmarks/bench_collectives.py [--min 4K] [--max 256M] [--repeats 5] [--device D]
        in one process, the ranks being the chosen device and the next usable device of its
        platform (POCL_DEVICES="pthread pthread" gives two on PoCL): ring and tree beside
        each other (the case "all_reduce" of gpuarr/bench.py; the command's flags work too)
    python benchmarks/bench_collectives.py --contexts dev0,dev1 [--sizes 1M,16M,256M]
        in one process over the named contexts (GPUs: a cl.Context each, the data staged
        through pinned host memory): all_reduce's time and algorithm bandwidth (bytes / time),
        as chosen (auto) and forced whole-to-every-rank or reduce-scatter + all-gather,
        beside the floor: the longer of a pinned device -> host and a pinned host -> device
        copy of the bytes (raw pyopencl; each rank of two sends and receives them all)
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

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))  # bench_transfer beside it

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


VARIANTS = [("auto", "auto"), ("pinned", "host"), ("pinned", "device"), ("shared", "device"),
            ("map", "host"), ("map", "device")]


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
    comm.staging, comm.reduce_on = "auto", "auto"
    return [busbw(nbytes, n, t) for t in times], times


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
    rows = []
    for nbytes in sizes:
        row, times = mpi_row(comm, nbytes, repeats)
        rows.append((nbytes, times))
        if world.rank == 0:
            print(f"{nbytes:10d} {row[0]:7.2f} {row[1]:7.2f} "
                  + " ".join(f"{g:12.2f}" for g in row[2:]) + f" {row[2] / row[0]:8.2f}",
                  flush=True)
    return rows


SPLITS = {"auto": None, "whole": 1 << 62, "split": 0}


def all_reduce_times(ctxs, nbytes, repeats):
    """{variant of SPLITS: seconds} of all_reduce over `ctxs`, `nbytes` of float32 each."""
    xs = [ga.empty(nbytes // 4, "float32", context=c) for c in ctxs]
    for r, x in enumerate(xs):
        x.fill(r + 1)
    outs = [ga.empty_like(x) for x in xs]
    want = len(ctxs) * (len(ctxs) + 1) / 2

    def sync():
        for c in ctxs:
            c.sync()

    times = {}
    for name, split in SPLITS.items():
        saved = collectives.RING_BYTES
        if split is not None:
            collectives.RING_BYTES = split
        try:
            times[name] = best(lambda: collectives.all_reduce(xs, "sum", dest=outs), repeats,
                               sync)
            assert all(float(o[-1].get()) == want and float(o[0].get()) == want
                       for o in outs), name
        finally:
            collectives.RING_BYTES = saved
    return times


def staged_rows(names, sizes, repeats, log=print):
    """all_reduce (float32 sums) over the contexts `names`, one row per size: the time and
    algorithm GB/s of each of SPLITS, and the floor (see the module's docstring)."""
    from bench_transfer import Raw

    ctxs = [ga.get_context(c) for c in names]
    shared = all(c.cl_context is ctxs[0].cl_context for c in ctxs)
    log(f"all_reduce sum float32 over {', '.join(f'{c.name} ({c.devname})' for c in ctxs)}; "
        f"{'one shared cl.Context' if shared else 'a cl.Context each'}; ms and algbw GB/s "
        f"(bytes / time), best of {repeats}; staging.CHUNK_BYTES "
        f"{collectives.staging.CHUNK_BYTES >> 20} MiB, RING_BYTES "
        f"{collectives.RING_BYTES >> 20} MiB")
    log(f"{'bytes':>12s} " + " ".join(f"{k + ' ms':>10s} {k + ' GB/s':>11s}" for k in SPLITS)
        + f" {'floor ms':>11s}")
    rows = []
    for nbytes in sizes:
        row = all_reduce_times(ctxs, nbytes, repeats)
        raw = Raw(ctxs[0], ctxs[1], nbytes)
        row["floor"] = max(best(raw.d2h, repeats), best(raw.h2d, repeats))
        del raw
        rows.append((nbytes, row))
        log(f"{nbytes:12d} " + " ".join(f"{row[k] * 1e3:10.3f} {nbytes / row[k] / 1e9:11.2f}"
                                         for k in SPLITS)
            + f" {row['floor'] * 1e3:11.3f}")
    return rows


def test_bench(bench_case):
    bench_case()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--mpi", action="store_true", help="the MPI transport (under mpiexec)")
    parser.add_argument("--min", default="4K")
    parser.add_argument("--max", default="256M")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--contexts", help="in one process over these contexts: dev0,dev1")
    parser.add_argument("--sizes", default="1M,16M,256M", help="with --contexts")
    args, rest = parser.parse_known_args(argv)
    if args.contexts:
        staged_rows(args.contexts.split(","), [bench.parse_value(s) for s in
                                               args.sizes.split(",")], args.repeats)
        return 0
    sizes = sizes_between(bench.parse_value(args.min), bench.parse_value(args.max))
    if args.mpi:
        over_mpi(sizes, args.repeats)
        return 0
    return bench.script(FAMILIES, [f"--set=nbytes={','.join(map(str, sizes))}",
                                   f"--repeats={args.repeats}", *rest])


if __name__ == "__main__":
    sys.exit(main())
