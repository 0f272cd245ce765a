"""The device probe (gpuarr.probe): a driver that crashes costs one child process, its verdict
is kept per driver, and a failed device is skipped by default and refused when named."""

import json
import os
import pathlib
import re
import subprocess
import sys

import pytest
from conftest import USABLE, using_flags

import gpuarr as ga
from gpuarr import context, probe
from gpuarr.errors import DeviceNotFound, DeviceUnusableError, GpuArrayError

ROOT = pathlib.Path(__file__).resolve().parents[1]
QUIET = "print_active_device=False"
# What PoCL 3.0 printed on AMD Zen 4 before it aborted the interpreter.
LLVM_ERROR = ("LLVM ERROR: Cannot select: 0x5581d0: v16f32 = fma ... "
              "In function: _Z7_cl_fmaDv16_fS_S_")
CRASH = ("import os, sys; print('step gemm float32 1024x1024', flush=True); "
         f"sys.stderr.write({LLVM_ERROR!r} + '\\n'); sys.stderr.flush(); os.abort()")
PASS = "print('step fma'); print('probe ok')"


def same_driver(a, b):
    return (a.platform, a.device_name) == (b.platform, b.device_name)


@pytest.fixture
def verdicts(tmp_path, monkeypatch):
    """Verdicts kept in a fresh folder (not the user's cache)."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    return tmp_path / "gpuarr" / "probe"


def fake_probes(monkeypatch, crashing):
    """Replace the probe's command: the driver of DeviceInfo `crashing` aborts as PoCL did,
    every other device passes. Returns the list of devices the fake probed."""
    ran = []

    def command(info):
        ran.append(info.name)
        return [sys.executable, "-c", CRASH if same_driver(info, crashing) else PASS]

    monkeypatch.setattr(probe, "command", command)
    return ran


def test_error_class():
    assert issubclass(DeviceUnusableError, RuntimeError)
    assert issubclass(DeviceUnusableError, DeviceNotFound)  # code catching absent devices
    assert issubclass(DeviceUnusableError, GpuArrayError)


def test_crashing_probe_marks_the_device_unusable(verdicts, monkeypatch):
    target = USABLE[0]
    ran = fake_probes(monkeypatch, target)
    with using_flags(f"device_probe=all,{QUIET}"):
        devices = ga.list_devices()
        failed = [d for d in devices if same_driver(d, target)]
        assert failed and all(not d.usable for d in failed)
        for d in failed:
            assert d.probe.startswith("failed (")
            assert "LLVM ERROR: Cannot select" in d.note and "SIGABRT" in d.note
            assert "gemm float32 1024x1024" in d.note  # the step it died in
            assert "install" in d.note  # and what to do
        assert all(d.usable and d.probe.startswith("ok (") for d in devices if d not in failed)
        # one child per driver, not per device (POCL_DEVICES='pthread pthread')
        assert len(ran) == len({(d.platform, d.device_name) for d in devices})

        # Default selection skips it; naming it raises and says why and what to install.
        others = [d for d in devices if d.usable]
        if others:
            assert ga.get_context().devname == next((d for d in others if d.is_gpu),
                                                    others[0]).name
        else:
            with pytest.raises(DeviceUnusableError, match="LLVM ERROR"):
                ga.get_context()
        with pytest.raises(DeviceUnusableError) as info:
            ga.init(target.name)
        msg = str(info.value)
        assert target.name in msg and "unusable" in msg and "LLVM ERROR: Cannot select" in msg
        assert "install" in msg
        assert "\n" not in msg
    with using_flags(f"device={target.name},force_device=yes,{QUIET}"), \
            pytest.raises(DeviceUnusableError, match="LLVM ERROR"):
        ga.get_context()


def test_verdicts_are_kept_per_driver(verdicts, monkeypatch):
    target = USABLE[0]
    ran = fake_probes(monkeypatch, target)
    with using_flags(f"device_probe=all,{QUIET}"):
        first = ga.list_devices()
    records = [json.loads(p.read_text()) for p in sorted(verdicts.glob("*.json"))]
    assert len(records) == len(ran)
    for r in records:
        assert r["key"]["probe_version"] == probe.PROBE_VERSION
        assert r["key"]["driver_version"] and "library" in r["key"]
        assert r["state"] in ("ok", "failed")

    def never(info):
        raise AssertionError(f"probed {info.name} again")

    monkeypatch.setattr(probe, "command", never)
    with using_flags(f"device_probe=all,{QUIET}"):
        again = ga.list_devices()
    assert [(d.name, d.usable, d.note) for d in again] == [(d.name, d.usable, d.note)
                                                            for d in first]
    assert all(d.probe.endswith("(cached)") for d in again)


def test_probe_off_and_gpus(verdicts, monkeypatch):
    monkeypatch.setattr(probe, "command", lambda info: pytest.fail("probed with the flag off"))
    with using_flags(f"device_probe=off,{QUIET}"):
        assert all(d.probe == "not probed (flag device_probe=off)" for d in ga.list_devices())
    monkeypatch.setattr(probe, "command", lambda info: [sys.executable, "-c", PASS])
    with using_flags(QUIET):  # the default, device_probe=cpu: GPUs are not probed
        for d in ga.list_devices():
            assert d.probe == "not probed (GPU)" if d.is_gpu else d.probe.startswith("ok (")


def test_hung_probe_fails_after_the_timeout(verdicts, monkeypatch):
    target = USABLE[0]
    monkeypatch.setattr(probe, "TIMEOUT_S", 1)
    monkeypatch.setattr(probe, "command", lambda info: [
        sys.executable, "-c", "import time; print('step atomics', flush=True); time.sleep(60)"
        if same_driver(info, target) else PASS])
    with using_flags(f"device_probe=all,{QUIET}"):
        d = context.find_device(target.name)
    assert not d.usable
    assert "did not finish within 1 s" in d.note and "atomics" in d.note


def test_first_error_line():
    assert probe.first_error_line("step x\nLLVM ERROR: Cannot select\nStack dump:\n") == \
        "LLVM ERROR: Cannot select"
    assert probe.first_error_line("*** stack smashing detected ***: terminated\n"
                                  "Fatal Python error: Aborted\n") == \
        "*** stack smashing detected ***: terminated"
    assert probe.first_error_line("just\nthe last line\n") == "the last line"
    assert len(probe.first_error_line("error: " + "x" * 1000)) == 240
    assert probe.first_error_line("") == ""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="dladdr: Linux only here")
def test_library_path_names_the_driver_file():
    for d in ga.list_devices():
        path = probe.library_path(d.cl_platform)
        assert os.path.isfile(path), (d.name, path)


def test_the_real_probe_passes_on_a_usable_cpu_device():
    d = next((d for d in USABLE if d.type == "CPU"), None)
    if d is None:
        pytest.skip("no usable CPU device")
    env = dict(os.environ, **{probe.CHILD_ENV: "1", "GPUARR_FLAGS": QUIET,
                              "GPUARRRC": os.devnull})
    r = subprocess.run(probe.command(d), cwd=ROOT, env=env, capture_output=True, text=True,
                       timeout=probe.TIMEOUT_S)
    assert r.returncode == 0, r.stderr
    assert r.stdout.rstrip().endswith("probe ok")
    assert "step gemm float32 1024x1024" in r.stdout


def test_no_usable_device_skips_the_tests_in_one_line(tmp_path):
    """With every driver's verdict failed, `gpuarr check` says so in one line and the tests
    skip (never abort)."""
    for d in ga.list_devices():
        key = probe.driver_key(d)
        path = tmp_path / "gpuarr" / "probe" / os.path.basename(probe._key_file(key))
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"state": "failed", "reason": "fake crash", "key": key}))
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path), GPUARRRC=os.devnull, GPUARR_FLAGS="")
    env.pop("GPUARR_TEST_DEVICE", None)
    r = subprocess.run([sys.executable, "-m", "gpuarr", "check"], cwd=ROOT, env=env,
                       capture_output=True, text=True, timeout=120)
    assert r.returncode == 2
    assert r.stderr.count("\n") == 1 and "no usable OpenCL device" in r.stderr
    assert "fake crash" in r.stderr and "Traceback" not in r.stderr
    r = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                        "tests/test_symbolic.py", "tests/test_errors.py"],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "no usable OpenCL device" in r.stdout and "fake crash" in r.stdout
    assert " skipped" in r.stdout and "passed" not in r.stdout
    assert not re.search(r"\d+ (error|failed)", r.stdout)


def test_a_probe_that_cannot_run_leaves_no_verdict(verdicts, monkeypatch):
    """A child that fails before reaching its device (no Python, no gpuarr) says nothing about
    the driver: the device keeps its usability, nothing is kept, the next process tries again."""
    monkeypatch.setattr(probe, "command", lambda info: [
        sys.executable, "-c", "import sys; sys.exit('ModuleNotFoundError: no gpuarr')"])
    with using_flags(f"device_probe=all,{QUIET}"):
        d = context.find_device(USABLE[0].name)
    assert d.usable
    assert d.probe.startswith("not probed (the probe could not run: ModuleNotFoundError")
    assert not list(verdicts.glob("*.json"))
