"""What a new process pays before its first result: import gpuarr, then StandardScaler-like
work (mean, var, divide, sqrt and a Gram matrix of 2000x20 float64) and its read-back, in a
fresh interpreter each time (docs/compatibility.md, "Cold start").

    python benchmarks/cold_start.py [--runs 3] [--device cl:nvidia] [--cold]

--cold first empties the caches a new process would use (a private PoCL cache folder and
XDG_CACHE_HOME in a temporary directory), so the first run pays for every kernel build.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import time

CHILD = """
import time
t0 = time.perf_counter()
import numpy as np
import gpuarr as ga
t1 = time.perf_counter()
x = ga.asarray(np.random.default_rng(0).standard_normal((2000, 20)))
z = (x - x.mean(axis=0)) / ga.sqrt(x.var(axis=0))
(z.T @ z).get()
print(f"{t1 - t0:.3f} {time.perf_counter() - t1:.3f}")
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--device", help="device string (default: flag device)")
    parser.add_argument("--cold", action="store_true", help="start from empty caches")
    args = parser.parse_args(argv)
    env = dict(os.environ)
    if args.device:
        env["GPUARR_FLAGS"] = ",".join(f for f in (env.get("GPUARR_FLAGS"),
                                                   f"device={args.device}") if f)
    with tempfile.TemporaryDirectory() as tmp:
        if args.cold:
            env.update(POCL_CACHE_DIR=os.path.join(tmp, "pocl"), XDG_CACHE_HOME=tmp)
        print(f"{'run':>4} {'import s':>9} {'work s':>7} {'process s':>10}")
        for run in range(args.runs):
            t0 = time.perf_counter()
            out = subprocess.run([sys.executable, "-c", CHILD], env=env, capture_output=True,
                                 text=True, check=True).stdout.split()
            wall = time.perf_counter() - t0
            print(f"{run + 1:4d} {float(out[0]):9.3f} {float(out[1]):7.3f} {wall:10.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
