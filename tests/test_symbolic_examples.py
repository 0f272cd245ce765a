"""The programs of examples/ (Theano's GPU tutorial on gpuarr.symbolic), run as their users
run them: a fresh Python with GPUARR_FLAGS, short loops through ITERS, STEPS and N."""

import os
import subprocess
import sys

import pytest
from conftest import USABLE, same_platform_pair

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DEVICE = f"device={USABLE[0].name}"


def run(script, flags="", args=(), **env):
    """stdout of examples/`script` run with GPUARR_FLAGS=flags (and `env`)."""
    environ = dict(os.environ, GPUARRRC=os.devnull, **env,
                   GPUARR_FLAGS=",".join(f for f in ("print_active_device=False", flags) if f))
    proc = subprocess.run([sys.executable, os.path.join("examples", script), *args], cwd=ROOT,
                          env=environ, capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"{script} failed:\n{proc.stdout}\n{proc.stderr}"
    return proc.stdout


@pytest.mark.parametrize(("flags", "used"), [(DEVICE, "Used the gpu"),
                                             ("device=cpu", "Used the cpu")])
def test_gpu_check(flags, used):
    out = run("gpu_check.py", flags, ITERS="3")
    assert out.splitlines()[-1] == used
    assert "Looping 3 times took" in out and "Result is [" in out


@pytest.mark.parametrize("args", [(), ("gpu_from_host",)])
def test_gpu_check_device_resident(args):
    # config.floatX: float64 by default (flag floatX=auto), as Theano's; float32 on request
    float_x = "float64" if USABLE[0].fp64 else "float32"
    out = run("gpu_check_device.py", f"{DEVICE},floatX={float_x}" if float_x == "float32"
              else DEVICE, args, ITERS="3")
    assert "Result type is GpuArray" in out and out.splitlines()[-1] == "Used the gpu"
    assert out.splitlines()[0] == (f"[GpuElemwise{{exp}}<{USABLE[0].name}>(<GpuArrayType"
                                   f"<None>({float_x}, vector)>)]")


def test_transfers():
    out = run("transfers.py", DEVICE)
    assert "a.transfer(None) gives a GpuArray" in out
    assert "round trip: 1 transfer node(s)" in out and out.splitlines()[-1] == "transfers ok"


def test_multi_device():
    pair = same_platform_pair()
    if pair is None:
        pytest.skip("needs two devices of one platform")
    out = run("multi_device.py", f"contexts=dev0->{pair[0].name};dev1->{pair[1].name}", N="32")
    assert "GpuDot22<dev0>" in out and "GpuDot22<dev1>" in out
    assert "dev0 product ok: True" in out and "dev1 product ok: True" in out


@pytest.mark.parametrize(("flags", "used"), [(DEVICE, "Used the gpu"),
                                             ("device=cpu", "Used the cpu")])
def test_logistic_regression(flags, used):
    out = run("logistic_regression.py", flags, STEPS="5")
    assert out.splitlines()[0] == used
    assert "weights match the numpy reference: True" in out
    assert "predictions match the numpy reference: True" in out
