"""Data-parallel least squares by minibatch SGD: each rank takes its share of every
minibatch and the gradients are summed across ranks with GpuComm.all_reduce.

    mpiexec -n 2 python examples/sgd_allreduce.py [--steps 60] [--check]

Every rank builds the same synthetic problem (y = X w_true + noise, seeded) and keeps on its
device only its rows of each minibatch. A step computes the local gradient sum
X_r^T (X_r w - y_r), all-reduces it, and divides by the minibatch size: the same step as one
process with the whole minibatch. --check trains that single process on rank 0 as well and
asserts both runs end on the same weights.
"""

import argparse
import os
import sys

os.environ.setdefault("GPUARR_FLAGS", "print_active_device=False")

import numpy as np
from mpi4py import MPI

import gpuarr as ga
from gpuarr.collectives import GpuComm


def problem(rows, features, seed=0):
    """The data every rank can rebuild: X, y and the weights that made y."""
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((rows, features))
    w_true = rng.standard_normal(features)
    y = x @ w_true + 0.01 * rng.standard_normal(rows)
    return x, y, w_true


def train(x, y, batch, steps, lr, ctx, comm=None):
    """SGD over consecutive minibatches of `batch` rows (this rank's share of each when
    `comm` is given); returns the weights on the host."""
    ranks, rank = (comm.count, comm.rank) if comm else (1, 0)
    share = batch // ranks
    batches = x.shape[0] // batch
    # this rank's rows of every minibatch, laid out minibatch after minibatch
    mine = np.concatenate([np.arange(b * batch + rank * share, b * batch + (rank + 1) * share)
                           for b in range(batches)])
    xd = ga.asarray(x[mine], context=ctx)
    yd = ga.asarray(y[mine], context=ctx)
    w = ga.zeros(x.shape[1], x.dtype, context=ctx)
    for step in range(steps):
        b = step % batches
        xb, yb = xd[b * share:(b + 1) * share], yd[b * share:(b + 1) * share]
        grad = xb.T @ (xb @ w - yb)  # the gradient's sum over this rank's rows
        if comm is not None:
            grad = comm.all_reduce(grad, "sum")
        w -= (lr / batch) * grad
    return w.get()


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2048)
    parser.add_argument("--features", type=int, default=16)
    parser.add_argument("--batch", type=int, default=256)
    parser.add_argument("--steps", type=int, default=60)
    parser.add_argument("--lr", type=float, default=0.5)
    parser.add_argument("--check", action="store_true",
                        help="also train one process on the whole minibatches (rank 0) and "
                             "compare the weights")
    args = parser.parse_args(argv)
    world = MPI.COMM_WORLD
    if args.batch % world.size:
        sys.exit(f"--batch {args.batch} must be a multiple of the {world.size} ranks")
    usable = [d for d in ga.list_devices() if d.usable]
    ctx = ga.init(usable[world.rank % len(usable)].name)
    comm = GpuComm.from_mpi(world, ctx)
    x, y, w_true = problem(args.rows, args.features)
    if not ctx.fp64:  # e.g. most Intel GPUs
        x, y = x.astype(np.float32), y.astype(np.float32)
    w = train(x, y, args.batch, args.steps, args.lr, ctx, comm)
    if comm.rank == 0:
        loss = float(np.mean((x @ w - y) ** 2))
        print(f"{comm.count} ranks, {args.steps} steps: loss {loss:.3e}, "
              f"|w - w_true| = {np.linalg.norm(w - w_true):.2e}")
        if args.check:
            single = train(x, y, args.batch, args.steps, args.lr, ctx)
            diff = float(np.max(np.abs(w - single)))
            print(f"one rank, whole minibatches: max |w - w_single| = {diff:.1e}")
            if not np.allclose(w, single, rtol=1e-9 if ctx.fp64 else 1e-4, atol=1e-12):
                sys.exit("the data-parallel weights differ from the single-rank ones")


if __name__ == "__main__":
    main()
