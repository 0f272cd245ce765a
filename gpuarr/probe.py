"""The device probe: before a CPU device is first used, build and run gpuarr's kinds of kernel
on it in a subprocess (`gpuarr.probe_run`), so that a driver that dies compiling or running
them (PoCL's "LLVM ERROR: Cannot select", stack smashing) costs one child process and not the
user's interpreter. The verdict is kept on disk per (platform, device, driver version, ICD
library): the probe runs once per device and driver, ever. `context.list_devices` applies it.

GPUs are not probed (flag device_probe=all probes them too): their compilers are the vendor's
own for the chip they find, while the failures this guards against come from a CPU compiler
(PoCL's LLVM) guessing a target for a host CPU newer than itself; a GPU probe would also open
a second GPU context in another process.

A child that crashes, errs, computes a wrong result or hangs past TIMEOUT_S once it reached
its device fails the device, and that verdict is kept; one that cannot run at all (no Python
executable, gpuarr not importable there) says nothing about the driver: nothing is kept and
the device keeps the name-based guess (`context._unusable_reason`). Verdicts live in
`<compile_cache_dir>/probe` when flag compile_cache_dir is set, else in
`$XDG_CACHE_HOME/gpuarr/probe` (`~/.cache/gpuarr/probe`); deleting a file probes again. A
folder that config.private_dir refuses (another user's, or writable by group or others: a
planted "ok" would let a crashing driver through) is not used: the probe runs, nothing is kept.
"""

import contextlib
import ctypes
import dataclasses
import hashlib
import json
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

from . import config

__all__ = ["CHILD_ENV", "PROBE_VERSION", "TIMEOUT_S", "Verdict", "cache_dir", "command",
           "driver_key", "first_error_line", "in_child", "library_path", "probe_devices"]

PROBE_VERSION = 1  # bump when the probe's kernels change: older verdicts are then ignored
TIMEOUT_S = 300  # a cold probe takes seconds; a hung driver is a failed probe
CHILD_ENV = "GPUARR_PROBE_CHILD"  # set in the child: it probes nothing and trusts its device

# What marks the line that says why a child died: LLVM's and clang's errors, glibc's
# "*** stack smashing detected ***", Python's fatal errors and exceptions.
_ERROR_LINE = re.compile(r"error|detected|fatal|abort|segmentation|exception|wrong result",
                         re.I)
_MAX_REASON = 240


@dataclasses.dataclass(frozen=True)
class Verdict:
    """A device's probe result. state: 'ok', 'failed' or 'skipped' (not probed, `reason`
    says why); `reason` for 'failed' is the probe's first error line."""

    state: str
    reason: str = ""
    seconds: float = 0.0
    cached: bool = False

    @property
    def failed(self):
        return self.state == "failed"

    def describe(self):
        """Short form for `python -m gpuarr info`: 'ok (cached)', 'ok (2.1 s)', 'failed',
        'not probed (GPU)'."""
        if self.state == "skipped":
            return f"not probed ({self.reason})"
        return f"{self.state} ({'cached' if self.cached else f'{self.seconds:.1f} s'})"


def in_child():
    """Whether this process is a probe's child (which must not probe in turn)."""
    return os.environ.get(CHILD_ENV) == "1"


def cache_dir():
    """Where verdicts are kept: <compile_cache_dir>/probe, else $XDG_CACHE_HOME/gpuarr/probe."""
    if config.flags.compile_cache_dir:
        return os.path.join(os.path.expanduser(config.flags.compile_cache_dir), "probe")
    return config.cache_path("probe")


class _DlInfo(ctypes.Structure):
    _fields_ = [("dli_fname", ctypes.c_char_p), ("dli_fbase", ctypes.c_void_p),
                ("dli_sname", ctypes.c_char_p), ("dli_saddr", ctypes.c_void_p)]


def library_path(cl_platform):
    """The file of the OpenCL driver (ICD) behind `cl_platform`, '' where unknown.

    Every ICD object starts with a pointer to its driver's dispatch table, whose second entry
    is the driver's clGetPlatformInfo; dladdr names the library that holds it. This tells
    apart two installs of one driver (pip's PoCL and the distribution's)."""
    if not sys.platform.startswith("linux"):
        return ""
    try:
        table = ctypes.c_void_p.from_address(cl_platform.int_ptr).value
        entry = ctypes.c_void_p.from_address(table + ctypes.sizeof(ctypes.c_void_p)).value
        info = _DlInfo()
        dladdr = ctypes.CDLL(None).dladdr
        dladdr.argtypes = [ctypes.c_void_p, ctypes.POINTER(_DlInfo)]
        if not entry or not dladdr(entry, ctypes.byref(info)) or not info.dli_fname:
            return ""
        return os.path.realpath(os.fsdecode(info.dli_fname))
    except (AttributeError, OSError, TypeError, ValueError):
        return ""


def driver_key(info):
    """What a verdict is kept under: platform, device, driver version and the driver's
    library (path, size, modification time), and the probe's version."""
    platform, device = info.cl_platform, info.cl_device
    lib = library_path(platform)
    try:
        st = os.stat(lib) if lib else None
    except OSError:
        st = None
    return {"platform": platform.name.strip(), "platform_version": platform.version.strip(),
            "device": device.name.strip(), "device_version": device.version.strip(),
            "driver_version": device.driver_version.strip(), "library": lib,
            "library_stat": [st.st_size, int(st.st_mtime)] if st else None,
            "probe_version": PROBE_VERSION}


def _key_file(key):
    digest = hashlib.sha1(json.dumps(key, sort_keys=True).encode()).hexdigest()[:20]
    return os.path.join(cache_dir(), f"{digest}.json")


def command(info):
    """The child's command line for DeviceInfo `info` (tests replace it by one that crashes)."""
    return [sys.executable, "-m", "gpuarr.probe_run", str(info.platform_index),
            str(info.device_index), info.platform, info.device_name]


def _child_env():
    """The parent's environment, with the flags the child's kernels depend on passed
    explicitly (the rc file is not read there) and probing off."""
    f = config.flags
    flags = [f"compile_cache_dir={f.compile_cache_dir}", f"tuning_dir={f.tuning_dir}",
             f"blas_backend={f.blas_backend}", f"gemm_precision={f.gemm_precision}",
             "print_active_device=False", "device_probe=off"]
    return dict(os.environ, **{config.ENV_VAR: ",".join(flags), config.RC_ENV_VAR: os.devnull,
                               CHILD_ENV: "1", "PYTHONFAULTHANDLER": "1"})


def first_error_line(text):
    """The line of a child's output (or an exception's message) that says what went wrong:
    the first that looks like an error, else the last non-empty one; shortened."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    line = next((ln for ln in lines if _ERROR_LINE.search(ln)), lines[-1] if lines else "")
    return line if len(line) <= _MAX_REASON else line[:_MAX_REASON - 3] + "..."


def _signal_name(code):
    try:
        return signal.Signals(-code).name
    except ValueError:
        return f"signal {-code}"


def _read(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def _write(path, record):
    """Write `record` atomically; False where the directory cannot be written."""
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=os.path.dirname(path), suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            json.dump(record, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
        return True
    except OSError:
        return False


@contextlib.contextmanager
def _locked(folder):
    """Hold the exclusive lock of the verdicts' folder (another process probing waits, then
    reads the verdicts it wrote); no lock where locking is unavailable."""
    try:
        import fcntl
        os.makedirs(folder, exist_ok=True)
        f = open(os.path.join(folder, ".lock"), "w")  # noqa: SIM115 - closed below
    except (ImportError, OSError):
        yield
        return
    try:
        fcntl.flock(f, fcntl.LOCK_EX)
        yield
    finally:
        f.close()


def _verdict(record, cached):
    return Verdict(record["state"], record.get("reason", ""), record.get("seconds", 0.0),
                   cached)


def _wanted(info):
    mode = config.flags.device_probe
    if mode == "off":
        return "flag device_probe=off"
    if mode == "cpu" and info.type != "CPU":
        return info.type
    return ""


class _Run:
    """One child probing one device, its output in temporary files (pipes could fill)."""

    def __init__(self, info):
        self.out = tempfile.TemporaryFile("w+")  # noqa: SIM115 - closed in _text
        self.err = tempfile.TemporaryFile("w+")  # noqa: SIM115
        self.t0 = time.perf_counter()
        try:
            if not sys.executable:
                raise OSError("no Python executable (sys.executable is empty)")
            self.proc = subprocess.Popen(command(info), stdout=self.out, stderr=self.err,
                                         stdin=subprocess.DEVNULL, env=_child_env())
            self.error = ""
        except OSError as e:
            self.proc, self.error = None, f"cannot start the probe: {e}"

    def wait(self):
        """The record of the child's verdict: state 'ok', 'failed' (a crash, an error or a
        hang once the child reached its device), or 'skipped' (the child could not run at all:
        no verdict, the driver is trusted and the probe runs again next time)."""
        code = None
        if self.proc is not None:
            try:
                code = self.proc.wait(timeout=max(1.0, TIMEOUT_S - self.elapsed()))
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
                self.error = f"the probe did not finish within {TIMEOUT_S} s"
        seconds = round(self.elapsed(), 2)
        out, err = self._text(self.out), self._text(self.err)
        if code == 0 and not self.error and out.rstrip().endswith("probe ok"):
            return {"state": "ok", "seconds": seconds}
        steps = [ln[5:].strip() for ln in out.splitlines() if ln.startswith("step ")]
        reason = self.error or first_error_line(err) or first_error_line(out)
        if self.proc is None or (code is not None and code > 0 and not steps):
            return {"state": "skipped", "reason": f"the probe could not run: {reason}"}
        if code is not None and code < 0:
            reason = f"{reason or 'no message'} ({_signal_name(code)})"
        elif code and not reason:
            reason = f"the probe exited with code {code}"
        if steps:
            reason += f" [probe step: {steps[-1]}]"
        return {"state": "failed", "reason": reason, "seconds": seconds}

    def elapsed(self):
        return time.perf_counter() - self.t0

    @staticmethod
    def _text(f):
        f.seek(0)
        text = f.read()
        f.close()
        return text


def probe_devices(infos):
    """A Verdict for each DeviceInfo of `infos` (same order): cached where a verdict exists,
    else probed, the devices of different drivers in parallel, one child per driver."""
    verdicts = [None] * len(infos)
    todo = {}  # key file -> (key, [indices])
    for i, info in enumerate(infos):
        why = "probe child" if in_child() else _wanted(info)
        if why:
            verdicts[i] = Verdict("skipped", why)
            continue
        key = driver_key(info)
        todo.setdefault(_key_file(key), (key, []))[1].append(i)
    kept = bool(todo) and config.private_dir(cache_dir(), "device-probe verdicts") is not None
    with contextlib.ExitStack() as stack:
        locked, runs = False, {}
        for path in sorted(todo):
            record = _read(path) if kept else None
            if record is None and kept and not locked:
                # another process may be probing: wait for it, then read what it found
                stack.enter_context(_locked(os.path.dirname(path)))
                locked = True
                record = _read(path)
            if record is not None and record.get("key") == todo[path][0]:
                for i in todo[path][1]:
                    verdicts[i] = _verdict(record, cached=True)
            else:
                runs[path] = _Run(infos[todo[path][1][0]])
        for path, run in runs.items():
            key, indices = todo[path]
            record = dict(run.wait(), key=key, time=time.strftime("%Y-%m-%d %H:%M:%S"))
            if record["state"] != "skipped" and kept:
                _write(path, record)
            for i in indices:
                verdicts[i] = _verdict(record, cached=False)
    return verdicts
