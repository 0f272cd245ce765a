"""Issue 30's figures on one host with two GPUs, as one report (stand-alone).

    source .device/env.sh && GPUARR_FLAGS="contexts=dev0->cl0:0;dev1->cl0:1" \\
        python3 benchmarks/multi_gpu_report.py [--repeats 5] [--no-sweep] [--no-mpi | --mpi-only]

It prints, measured in the same run:
  1. the two contexts (each GPU should have a cl.Context of its own);
  2. x.transfer(dst) of 256 MiB and 1 GiB then a sum on the destination, both ways, beside
     raw pyopencl's pinned d2h, pinned h2d and host-staged copy (the bound; target >= 0.85);
  3. collectives.all_reduce of 1, 16 and 256 MiB float32 over the two (targets: 256 MiB
     >= 20 GB/s algbw, 1 MiB <= 0.3 ms), as chosen and with each algorithm forced;
  4. a sweep of gpuarr.staging's settings (chunk size, slots, whose pinned memory), so that
     the defaults can follow the best;
  5. GpuComm.all_reduce over MPI, one rank per GPU, if mpi4py and mpiexec are there (it
     starts `mpiexec -n 2` on this script with --mpi; --mpi-only runs this part alone): the
     defaults, MPI messages through pinned buffers (MPI or kernels reducing) and the shared
     window (three piece sizes), at 1, 16 and 256 MiB (targets as in 3.); else says why.
Then a verdict line per target. On PoCL (POCL_DEVICES="pthread pthread", flag
context_sharing=never) it runs as a smoke test: `--quick` shrinks the sizes.
"""

import argparse
import contextlib
import os
import shutil
import subprocess
import sys
import textwrap
import time
import traceback

os.environ.setdefault("POCL_DEVICES", "pthread pthread")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np

import gpuarr as ga
from gpuarr import collectives, staging

MiB = 1 << 20


def contexts(names):
    ctxs = [ga.get_context(n) for n in names]
    for c in ctxs:
        d = c.device.cl_device
        print(f"  {c.name}: {c.devname} {c.device.describe()}, host memory: "
              f"{bool(d.host_unified_memory)}, {c.device.global_mem / 2**30:.0f} GiB")
    own = len({id(c.cl_context) for c in ctxs}) == len(ctxs)
    print(f"  cl.Contexts: {'one per device' if own else 'SHARED (the staged path is not used)'}")
    return ctxs


def transfers(ctxs, sizes, repeats):
    from bench_transfer import peer_rows
    ratios = []
    for src, dst in ((ctxs[0], ctxs[1]), (ctxs[1], ctxs[0])):
        rows = peer_rows(src, dst, sizes, repeats, log=lambda s: print("  " + s))
        ratios.append(rows[-1][1]["x bound"])
    return min(ratios)


def all_reduces(ctxs, sizes, repeats):
    from bench_collectives import staged_rows
    rows = dict(staged_rows([c.name for c in ctxs], sizes, repeats,
                            log=lambda s: print("  " + s)))
    return rows


def sweep(ctxs, transfer_bytes, reduce_bytes, repeats):
    """gpuarr's figures under each setting of gpuarr.staging: the best is the default to keep."""
    from bench_collectives import all_reduce_times
    from bench_transfer import transfer_and_sum
    saved = staging.CHUNK_BYTES, staging.SLOTS, staging.PINNED_ON
    print(f"  {'chunk MiB':>9s} {'slots':>5s} {'pinned on':>9s} {'transfer GB/s':>13s} "
          f"{'all_reduce GB/s':>15s}  ({transfer_bytes >> 20} MiB, {reduce_bytes >> 20} MiB)")
    results = []
    try:
        for chunk in (4 * MiB, 16 * MiB, 64 * MiB):
            for slots in (2, 4):
                for owner in ("source", "target"):
                    staging.CHUNK_BYTES, staging.SLOTS, staging.PINNED_ON = chunk, slots, owner
                    t = transfer_and_sum(ctxs[0], ctxs[1], transfer_bytes, repeats)
                    r = min(all_reduce_times(ctxs, reduce_bytes, repeats).values())
                    results.append((chunk, slots, owner, transfer_bytes / t / 1e9,
                                    reduce_bytes / r / 1e9))
                    print(f"  {chunk >> 20:9d} {slots:5d} {owner:>9s} {results[-1][3]:13.2f} "
                          f"{results[-1][4]:15.2f}", flush=True)
    finally:
        staging.CHUNK_BYTES, staging.SLOTS, staging.PINNED_ON = saved
        for c in ctxs:
            c.state.pop("staging_slots", None)  # (the sweep's slots: gone with the settings)
    best = max(results, key=lambda r: r[3] + r[4])
    print(f"  best: CHUNK_BYTES={best[0] >> 20} MiB, SLOTS={best[1]}, PINNED_ON={best[2]!r} "
          f"(defaults: {saved[0] >> 20} MiB, {saved[1]}, {saved[2]!r})")


def mpi_rank_main(names, sizes, repeats):
    """Under mpiexec: GpuComm.all_reduce, one rank per context of `names`, in each variant."""
    from mpi4py import MPI
    world = MPI.COMM_WORLD
    ctx = ga.get_context(names[world.rank % len(names)])
    comm = collectives.GpuComm.from_mpi(world, ctx)
    # (label, reduce_on, staging, chunk_bytes)
    variants = [("auto", "auto", "auto", None), ("host", "host", "pinned", None),
                ("device", "device", "pinned", None), ("shared", "device", "shared", None),
                ("shared 2M", "device", "shared", 2 * MiB),
                ("shared 32M", "device", "shared", 32 * MiB)]
    if world.rank == 0:
        room = collectives._shm_room()
        print(f"  GpuComm over {world.size} ranks ({', '.join(names[:world.size])}), all on one "
              f"host: {comm._one_host}; /dev/shm free: "
              f"{'-' if room is None else f'{room / 2**30:.1f} GiB'}; auto takes "
              f"{comm._mode(max(sizes))!r}. ms and algbw GB/s, best of {repeats}. host: "
              f"MPI reduces; device: MPI moves, kernels reduce; shared: an MPI shared window, "
              f"no MPI messages (chunk {comm._chunk_bytes() >> 20} MiB a piece unless named)")
        print(f"  {'bytes':>10s} " + " ".join(f"{v[0]:>17s}" for v in variants))
    table = {}
    for nbytes in sizes:
        x = ga.empty(nbytes // 4, "float32", context=ctx)
        x.fill(world.rank + 1)
        out = ga.empty_like(x)
        cells, notes = [], []
        for label, reduce_on, staging_mode, chunk in variants:
            comm.reduce_on, comm.staging, comm.chunk_bytes = reduce_on, staging_mode, chunk
            times, error = [], None
            try:
                for k in range(repeats + 1):
                    world.Barrier()
                    t0 = time.perf_counter()
                    comm.all_reduce(x, "sum", dest=out)
                    ctx.sync()
                    if k:
                        times.append(time.perf_counter() - t0)
                want = world.size * (world.size + 1) / 2
                if float(out[-1].get()) != want or float(out[0].get()) != want:
                    error = f"wrong sums {float(out[0].get())}, {float(out[-1].get())}"
            except Exception as e:  # (one variant's failure: the others still run)
                error = f"{type(e).__name__}: {e}"
            errors = world.allgather(error)
            if any(errors):
                cells.append(None)
                notes.append(f"{label}: {next(e for e in errors if e)}"[:300])
                if comm._broken is not None:  # (every rank failed in it: a new one)
                    comm = collectives.GpuComm.from_mpi(world, ctx)
                continue
            cells.append(max(world.allgather(min(times))))
            if staging_mode == "shared" and not comm._window[2] and world.rank == 0:
                notes.append(f"{label}: the shared window is NOT pinned (pageable copies)")
        if world.rank == 0:
            print(f"  {nbytes:10d} " + " ".join(
                f"{'failed':>17s}" if t is None else f"{t * 1e3:8.3f} {nbytes / t / 1e9:8.2f}"
                for t in cells), flush=True)
            for note in notes:
                print(f"    {note}", flush=True)
            table[nbytes] = cells
    if world.rank == 0:
        mpi_verdicts(table, [v[0] for v in variants])


def mpi_verdicts(table, labels):
    """The MPI targets: 256 MiB >= 20 GB/s algbw, 1 MiB <= 0.3 ms, by the defaults (auto)
    and by the best variant."""
    for nbytes, what, value, ok in (
            (256 * MiB, "256 MiB", lambda t: f"{256 * MiB / t / 1e9:.2f} GB/s algbw",
             lambda t: 256 * MiB / t / 1e9 >= 20),
            (MiB, "1 MiB", lambda t: f"{t * 1e3:.3f} ms", lambda t: t * 1e3 <= 0.3)):
        cells = table.get(nbytes)
        if cells is None:  # (--quick)
            continue
        if cells[0] is None:
            print(f"VERDICT mpi all_reduce {what}: not measured by the defaults: FAIL")
            continue
        best = min((t, k) for k, t in enumerate(cells) if t is not None)
        target = ">= 20 GB/s" if nbytes > MiB else "<= 0.3 ms"
        print(f"VERDICT mpi all_reduce {what} (target {target}): defaults "
              f"{value(cells[0])}: {'PASS' if ok(cells[0]) else 'FAIL'}; best variant "
              f"{labels[best[1]]!r} {value(best[0])}: {'PASS' if ok(best[0]) else 'FAIL'}",
              flush=True)


def over_mpi(args):
    try:
        import mpi4py  # noqa: F401
    except ImportError:
        print("  skipped: mpi4py is not installed (pip install mpi4py mpich, then run "
              "this script again)")
        return
    beside = os.path.join(os.path.dirname(sys.executable), "mpiexec")
    mpiexec = beside if os.path.exists(beside) else shutil.which("mpiexec")
    if mpiexec is None:
        print("  skipped: no mpiexec beside python or on PATH")
        return
    cmd = [mpiexec, "-n", "2", sys.executable, os.path.abspath(__file__), "--mpi",
           "--contexts", args.contexts, "--repeats", str(args.repeats)]
    if args.quick:
        cmd.append("--quick")
    print("  " + " ".join(cmd), flush=True)
    try:
        done = subprocess.run(cmd, timeout=900)
        if done.returncode:
            print(f"  mpiexec exited with {done.returncode}")
    except subprocess.TimeoutExpired:
        print("  mpiexec did not finish within 900 s")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--contexts", default="dev0,dev1", help="the two contexts (flag contexts)")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--quick", action="store_true", help="small sizes (a smoke test)")
    p.add_argument("--no-sweep", action="store_true")
    p.add_argument("--no-mpi", action="store_true")
    p.add_argument("--mpi-only", action="store_true", help="only the MPI section (5.)")
    p.add_argument("--mpi", action="store_true", help=argparse.SUPPRESS)  # a rank's part
    args = p.parse_args(argv)
    names = args.contexts.split(",")
    scale = 1 / 64 if args.quick else 1
    reduce_sizes = [max(int(s * scale), 4096) for s in (MiB, 16 * MiB, 256 * MiB)]
    if args.quick:
        reduce_sizes[0] = MiB  # the 1 MiB latency target stays measured
    if args.mpi:
        mpi_rank_main(names, reduce_sizes, args.repeats)
        return 0
    print(f"gpuarr {ga.__version__}, numpy {np.__version__}, python {sys.version.split()[0]}, "
          f"GPUARR_FLAGS={os.environ.get('GPUARR_FLAGS', '')!r}")
    if args.mpi_only:
        with section("5. GpuComm.all_reduce over MPI, one rank per GPU"):
            over_mpi(args)
        return 0
    print("1. contexts")
    ctxs = contexts(names)
    verdicts = []
    with section("2. device -> device transfer, then a sum on the destination (GB/s)"):
        ratio = transfers(ctxs, [int(s * scale) for s in (256 * MiB, 1 << 30)], args.repeats)
        verdicts.append(f"VERDICT transfer: {ratio:.3f} of the pinned host-staged bound "
                        f"(target >= 0.85): {'PASS' if ratio >= 0.85 else 'FAIL'}")
    with section("3. all_reduce in one process"):
        rows = all_reduces(ctxs, reduce_sizes, args.repeats)
        big = reduce_sizes[-1] / rows[reduce_sizes[-1]]["auto"] / 1e9
        small = rows[MiB]["auto"] * 1e3
        verdicts.append(f"VERDICT all_reduce {reduce_sizes[-1] >> 20} MiB: {big:.2f} GB/s "
                        f"algbw (target >= 20): {'PASS' if big >= 20 else 'FAIL'}")
        verdicts.append(f"VERDICT all_reduce 1 MiB: {small:.3f} ms (target <= 0.3): "
                        f"{'PASS' if small <= 0.3 else 'FAIL'}")
    if not args.no_sweep:
        with section("4. gpuarr.staging's settings"):
            sweep(ctxs, int((1 << 30) * scale), reduce_sizes[-1], args.repeats)
    print("\n".join(verdicts), flush=True)
    if not args.no_mpi:
        with section("5. GpuComm.all_reduce over MPI, one rank per GPU"):
            over_mpi(args)
    return 0


@contextlib.contextmanager
def section(title):
    """A part of the report: its failure is printed, and the report goes on."""
    print(title, flush=True)
    try:
        yield
    except Exception:
        print("  FAILED:\n" + textwrap.indent(traceback.format_exc(), "    "), flush=True)


if __name__ == "__main__":
    sys.exit(main())
