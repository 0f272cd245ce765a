"""Print the name (cl<p>:<d>) of the first usable device of one CPU driver, for CI's runs of
the suite on each: `pip-pocl` (pocl-binary-distribution, inside pyopencl's package),
`system-pocl` (a PoCL installed outside Python, e.g. apt's pocl-opencl-icd) or `intel`
(Intel's CPU runtime); `default`: the default device (the tests' device when
GPUARR_TEST_DEVICE is unset). With none usable, print why on stderr and exit 1."""

import os
import sys

# As tests/conftest.py: two devices a PoCL platform. The platforms' order (and so the names
# printed here) changes with it: without it, cl2:0 here was pip's PoCL and, in the tests,
# Intel's runtime.
os.environ.setdefault("POCL_DEVICES", "pthread pthread")

import pyopencl

import gpuarr as ga
from gpuarr import context, probe
from gpuarr.errors import DeviceNotFound

PIP_PACKAGE = os.path.realpath(os.path.dirname(pyopencl.__file__))


def kind_of(device):
    if device.platform.startswith("Intel(R) OpenCL"):
        return "intel"
    if "Portable Computing Language" in device.platform:
        inside = probe.library_path(device.cl_platform).startswith(PIP_PACKAGE + os.sep)
        return "pip-pocl" if inside else "system-pocl"
    return "other"


def main(kind):
    if kind == "default":
        try:
            print(context.auto_device().name)
            return 0
        except DeviceNotFound as e:
            print(e, file=sys.stderr)
            return 1
    devices = [d for d in ga.list_devices() if kind_of(d) == kind]
    usable = [d for d in devices if d.usable]
    if usable:
        print(usable[0].name)
        return 0
    why = "; ".join(f"{d.name} ({d.device_name}): {d.note}" for d in devices) or "not installed"
    print(f"no usable {kind} device: {why}", file=sys.stderr)
    return 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
