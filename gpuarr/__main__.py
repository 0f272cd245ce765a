"""python -m gpuarr info | check [--device DEV]"""

import argparse
import sys
import time

import numpy as np

from . import config
from .context import get_context, list_devices
from .errors import GpuArrayError

CHECK_SIZE = 10 * 30 * 768  # 230,400 values, as in Theano's classic check
CHECK_LOOPS = 1000


def info():
    rows = [("name", "platform", "device", "type", "CUs", "memory", "fp64", "OpenCL")]
    for d in list_devices():
        rows.append((d.name, d.platform, d.device_name, d.type, str(d.compute_units),
                     f"{d.global_mem / 2**30:.1f} GiB", "yes" if d.fp64 else "no",
                     d.opencl_version))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    for r in rows:
        print("  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip())
    if len(rows) == 1:
        print("(no OpenCL device found)")
    for d in list_devices():
        if not d.usable:
            print(f"note: {d.name} is unusable: {d.note}")
    flags = config.flags
    auto = "auto (first GPU, else first usable device)"
    print(f"\ndefault device (flag device): {flags.device or auto}")
    for name, dev in flags.contexts.items():
        print(f"context {name} -> {dev}")
    print(f"floatX: {flags.floatX}")
    return 0


def check(device):
    """Theano's classic check: exp of 230,400 floatX values, 1000 times."""
    from .array import asarray
    from .ufuncs import UFUNCS

    dtype = np.dtype(config.floatX)
    rng = np.random.default_rng(22)
    host = rng.random(CHECK_SIZE, dtype=np.float64).astype(dtype)
    expected = np.exp(host)
    device = device or config.flags.device
    if device == "cpu":
        t0 = time.perf_counter()
        for _ in range(CHECK_LOOPS):
            result = np.exp(host)
        elapsed = time.perf_counter() - t0
        used = "Used the cpu"
    else:
        ctx = get_context(device or None)
        x = asarray(host, context=ctx)
        exp = UFUNCS["exp"]
        y = exp(x)  # builds the kernel outside the timed loop
        ctx.sync()
        t0 = time.perf_counter()
        for _ in range(CHECK_LOOPS):
            y = exp(x)
        y.sync()
        elapsed = time.perf_counter() - t0
        result = y.get()
        used = f"Used the device {ctx.devname} ({ctx.device.device_name})"
    print(f"Looping {CHECK_LOOPS} times took {elapsed:.3f} seconds")
    print(f"Result is {result[:5]}")
    print(used)
    if not np.allclose(result, expected, rtol=1e-5, atol=0):
        worst = np.max(np.abs(result - expected) / np.abs(expected))
        print(f"FAILED: result differs from numpy (max relative error {worst:.3g})")
        return 1
    print("Result matches numpy")
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m gpuarr", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("info", help="list OpenCL devices and the context mapping")
    p_check = sub.add_parser("check", help="run exp 1000 times on a device, compare with numpy")
    p_check.add_argument("--device", help="device string (cl0:0, cl:nvidia), context name or cpu")
    args = parser.parse_args(argv)
    try:
        return info() if args.command == "info" else check(args.device)
    except GpuArrayError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
