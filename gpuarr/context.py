"""Devices, named contexts, queues and memory.

A device is named `cl<platform>:<device>` in the order OpenCL reports them, or picked by
`cl:<text>` (first device whose platform or device name contains the text). There is one
`Context` per device, reachable under any number of names. Each GPU has a `cl.Context` of its
own (in one shared by two GPUs, NVIDIA's driver moves buffers between them through the host
at ~1 GB/s); devices of one platform whose memory is host memory (CPUs) share one, so copies
between them are single `enqueue_copy` calls (flag context_sharing=never gives them one each).
Copies between contexts go through pinned host memory (gpuarr.staging). Each `Context` has its
own in-order queue (and a second one for staged copies out) and memory pool.
"""

import contextlib
import ctypes
import dataclasses
import gc
import os
import sys
import threading
import warnings

import pyopencl as cl
import pyopencl.tools as cl_tools

from . import config, icd, probe
from .caches import Cache
from .errors import (
    ArgumentTypeError,
    ContextNotDefined,
    DeviceNotFound,
    DeviceUnusableError,
    ForkedProcessError,
    OutOfMemory,
)
from .memory import Arena, Storage

__all__ = ["Context", "DeviceInfo", "contexts", "default_context", "find_device", "get_context",
           "init", "list_devices"]

# Entries each per-context cache keeps at most. A program costs its binary (kernels keep
# theirs alive while cached); a plan or a ufunc's loop a few hundred bytes.
_CACHE_BOUNDS = {"programs": 512, "kernels": 4096, "plans": 4096, "ufunc_calls": 2048}


@dataclasses.dataclass(frozen=True)
class DeviceInfo:
    """What `list_devices()` reports for one OpenCL device."""

    name: str
    platform_index: int
    device_index: int
    platform: str
    vendor: str
    device_name: str
    type: str
    compute_units: int
    global_mem: int
    max_alloc: int
    fp64: bool
    opencl_version: str
    usable: bool
    note: str
    cl_platform: cl.Platform = dataclasses.field(repr=False, compare=False)
    cl_device: cl.Device = dataclasses.field(repr=False, compare=False)
    # The device probe's verdict (gpuarr.probe), as `python -m gpuarr info` shows it.
    probe: str = dataclasses.field(default="", compare=False)
    # For a usable device: what would run gpuarr faster on it ("" when nothing known would).
    advice: str = dataclasses.field(default="", compare=False)

    @property
    def is_gpu(self):
        return self.type == "GPU"

    @property
    def nv_capability(self):
        """(major, minor) compute capability of an NVIDIA GPU, else None."""
        if not self.is_gpu or "nvidia" not in self.vendor.lower():
            return None
        try:
            return (self.cl_device.compute_capability_major_nv,
                    self.cl_device.compute_capability_minor_nv)
        except Exception:  # no cl_nv_device_attribute_query: pyopencl and drivers differ in
            return None    # what they raise (AttributeError, cl.LogicError, cl.RuntimeError)

    @property
    def float_vector(self):
        """The float32 elements of the device's native vector (0 where it does not say)."""
        try:
            return self.cl_device.native_vector_width_float
        except Exception:  # drivers and pyopencl differ in what they raise
            return 0

    def describe(self):
        """`<device name> (<platform>, OpenCL x.y)`, as the init log prints it."""
        return f"{self.device_name} ({self.platform}, {self.opencl_version})"

    def matches(self, text):
        text = text.lower()
        fields = (self.platform, self.vendor, self.cl_platform.version, self.device_name)
        return any(text in f.lower() for f in fields)


def _is_pocl(platform_name):
    return "Portable Computing Language" in platform_name


def _default_rank(info):
    """Sort key of the default device: GPUs first, then Intel's CPU runtime (it vectorises
    OpenCL's elementary functions, which PoCL calls per element: float32 sin 33x, arctan 67x
    faster on one Zen 5, docs/cpu_devices.md), then the platforms' order."""
    return (not info.is_gpu, not info.platform.startswith("Intel(R) OpenCL"))


_CPU_INSTALLS = ('Intel\'s CPU OpenCL runtime (pip install "gpuarr[cpu]"; any x86-64 CPU) or a '
                 "PoCL built on a newer LLVM (Debian/Ubuntu: apt-get install pocl-opencl-icd; "
                 "conda: conda install -c conda-forge pocl); see docs/cpu_devices.md")


def _advice(info):
    """What to install when `info`'s driver cannot run gpuarr's kernels."""
    if _is_pocl(info.platform):
        return f"install {_CPU_INSTALLS}"
    if info.type == "CPU":
        return f"update the {info.platform} driver, or install {_CPU_INSTALLS}"
    return (f"update the {info.platform} driver, or pick another device "
            f"(python -m gpuarr info lists them)")


def _unusable_reason(platform, device):
    # The guess used where the probe is off (flag device_probe=off): PoCL built against an
    # LLVM that predates the host CPU targets "generic", which its own compiler then rejects
    # ("unknown target CPU 'generic'"): every build would fail.
    if _is_pocl(platform.name) and device.version.endswith("-generic"):
        return ("PoCL's LLVM does not know this CPU and cannot compile kernels for it; "
                "install a newer PoCL (e.g. your distribution's pocl-opencl-icd)")
    return ""


def _slow_reason(platform, device):
    """Why a working device runs far below its CPU's speed, naming the install that fixes it."""
    if _is_pocl(platform.name) and device.version.endswith("-generic"):
        return ("its PoCL compiles for a generic x86-64 target (no AVX2/AVX-512 vectors; "
                "exp about 7x slower than it could); for a faster CPU device install "
                + _CPU_INSTALLS)
    return ""


def _probed(found):
    """`found` with the device probe's verdicts applied (gpuarr.probe): a failed probe makes
    a device unusable, a passed one overrides _unusable_reason's guess."""
    if probe.in_child():  # the probe's own process tries its device whatever the guess
        return [dataclasses.replace(d, usable=True, note="", probe="probing") for d in found]
    out = []
    for d, v in zip(found, probe.probe_devices(found)):
        if v.failed:
            d = dataclasses.replace(d, usable=False,
                                    note=f"its probe failed: {v.reason}; {_advice(d)}")
        elif v.state == "ok":
            d = dataclasses.replace(d, usable=True, note="")
        out.append(dataclasses.replace(d, probe=v.describe()))
    return out


def _device_type(bits):
    for flag, name in ((cl.device_type.GPU, "GPU"), (cl.device_type.CPU, "CPU"),
                       (cl.device_type.ACCELERATOR, "ACCELERATOR")):
        if bits & flag:
            return name
    return "OTHER"


def _describe(p_index, platform, d_index, device):
    version = device.version.split()
    note = _unusable_reason(platform, device)
    return DeviceInfo(
        name=f"cl{p_index}:{d_index}",
        platform_index=p_index,
        device_index=d_index,
        platform=platform.name.strip(),
        vendor=platform.vendor.strip(),
        device_name=device.name.strip(),
        type=_device_type(device.type),
        compute_units=device.max_compute_units,
        global_mem=device.global_mem_size,
        max_alloc=device.max_mem_alloc_size,
        fp64="cl_khr_fp64" in device.extensions.split() or device.double_fp_config != 0,
        opencl_version=" ".join(version[:2]),
        usable=not note,
        note=note,
        advice=_slow_reason(platform, device),
        cl_platform=platform,
        cl_device=device,
    )


_lock = threading.RLock()
_devices = None
# (platform index, None) -> the cl.Context its devices of host memory share;
# (platform index, device index) -> a device's own cl.Context
_cl_contexts = {}
_by_device = {}  # 'cl0:0' -> Context
_by_name = {}  # 'dev0' -> Context
_driver_loaded = False  # cl.get_platforms ran here: the drivers started their threads
_forked_from = None  # the parent's pid, in a process forked after the drivers were loaded


def _route_driver_caches(path):
    """Point the drivers' own kernel caches at flag compile_cache_dir (read at driver start).

    pyopencl leaves caching to drivers that cache builds themselves (PoCL, NVIDIA), so the
    flag reaches them through their environment variables.
    """
    path = path and config.private_dir(path, "compiled kernels (flag compile_cache_dir)")
    if path:
        os.environ.setdefault("POCL_CACHE_DIR", os.path.join(path, "pocl"))
        os.environ.setdefault("CUDA_CACHE_PATH", os.path.join(path, "nvidia"))


def list_devices():
    """Every OpenCL device, in platform/device order, as `DeviceInfo`."""
    global _devices, _driver_loaded
    with _lock:
        if _devices is None:
            found = []
            _route_driver_caches(config.flags.compile_cache_dir)
            icd.register()
            _driver_loaded = True
            if _forked_from is not None:
                raise _fork_error()
            try:
                platforms = cl.get_platforms()
            except cl.Error:
                platforms = []
            for p_index, platform in enumerate(platforms):
                try:
                    devices = platform.get_devices()
                except cl.Error:
                    devices = []
                found += [_describe(p_index, platform, d, dev) for d, dev in enumerate(devices)]
            _devices = tuple(_probed(found))
        return list(_devices)


def _device_table():
    return ", ".join(f"{d.name} ({d.device_name})" for d in list_devices()) or "none"


def find_device(text):
    """The `DeviceInfo` a device string names; DeviceNotFound if absent or malformed."""
    try:
        spec = config.parse_device(text) if isinstance(text, str) else None
    except ValueError as e:
        raise DeviceNotFound(str(e)) from None
    if spec is None or spec.is_cpu:
        raise DeviceNotFound(
            f"{text!r} names no OpenCL device; expected cl<platform>:<device> or cl:<text>"
        )
    for info in list_devices():
        if spec.match is not None:
            if info.matches(spec.match):
                return info
        elif (info.platform_index, info.device_index) == (spec.platform, spec.device):
            return info
    raise DeviceNotFound(f"no device {spec.text!r} on this machine; devices: {_device_table()}")


def _usable_device(info):
    if not info.usable:
        raise DeviceUnusableError(f"device {info.name} ({info.device_name}, {info.platform} "
                                  f"{info.cl_device.driver_version}) is unusable: {info.note}")
    return info


def auto_device():
    """The `DeviceInfo` of the default device where flag `device` is unset (or names none)."""
    devices = list_devices()
    usable = [d for d in devices if d.usable]
    if not usable:
        if not devices:
            raise DeviceNotFound("no OpenCL device on this machine (pip install "
                                 "pocl-binary-distribution gives a CPU device)")
        notes = {}  # devices of one driver (POCL_DEVICES='pthread pthread') share a note
        for d in devices:
            notes.setdefault((d.device_name, d.note), []).append(d.name)
        why = "; ".join(f"{', '.join(names)} ({device}): {note}"
                        for (device, note), names in notes.items())
        raise DeviceUnusableError(f"no usable OpenCL device on this machine: {why}")
    return min(usable, key=_default_rank)  # the first of the best rank


def _flagged_device(text, what):
    """Resolve a device named by the flags, falling back unless force_device is set."""
    try:
        return _usable_device(find_device(text))
    except DeviceNotFound as e:
        if config.flags.force_device:
            raise
        fallback = auto_device()
        warnings.warn(f"{e} (named by {what}); falling back to {fallback.name}", stacklevel=3)
        return fallback


class Context:
    """One device: its queue, memory and compiled kernels. Get one with `init`/`get_context`."""

    def __init__(self, info, cl_context):
        self.device = info
        self.cl_context = cl_context
        self.queue = cl.CommandQueue(cl_context, info.cl_device)
        self._copy_queue = None
        self.names = []
        # Bounded caches, one per kind (`caches`); a dropped entry is rebuilt on next use.
        self.programs = Cache("programs", _CACHE_BOUNDS["programs"])  # gpuarr.kernels
        self.kernels = Cache("kernels", _CACHE_BOUNDS["kernels"])  # launch.Launcher by key
        self.plans = Cache("plans", _CACHE_BOUNDS["plans"])  # launch plans per layout
        self.ufunc_calls = Cache("ufunc_calls", _CACHE_BOUNDS["ufunc_calls"])  # gpuarr.ufuncs
        # Objects kept for the context's life: scratch arrays, probe results.
        self.state = {}
        self.host_memory = _host_memory(info)  # the device's memory is the host's
        # Held by every command gpuarr enqueues on this context (launch.py, CLBlast, and
        # allocation: pyopencl's ImmediateAllocator enqueues a small non-blocking write to
        # make the driver allocate at once). With several threads on one queue (dask's
        # threaded scheduler), NVIDIA's driver crashed, in a thread of its own, when a
        # blocking copy overlapped another thread's launches or allocations.
        self.launch_lock = threading.RLock()
        d = info.cl_device
        self.max_work_group_size = d.max_work_group_size
        self.base_align = max(d.mem_base_addr_align // 8, 1)
        # One fixed work-group size per device: PoCL compiles a kernel once per local size.
        self.local_size = min(256 if info.is_gpu else 1024, d.max_work_group_size)
        # Contiguous elementwise kernels take this many elements per work-item (GPUs gain
        # memory-level parallelism; PoCL vectorises across work-items instead).
        self.per_item = 4 if info.is_gpu else 1
        # numpy's float32 division and sqrt are correctly rounded; OpenCL's need asking.
        exact = d.single_fp_config & cl.device_fp_config.CORRECTLY_ROUNDED_DIVIDE_SQRT
        self.build_options = ("-cl-fp32-correctly-rounded-divide-sqrt",) if exact else ()
        if _is_pocl(info.platform):
            # -w: PoCL's compiler prints "N warnings generated." on stderr, which gpuarr's
            # builds otherwise keep quiet (AVX2 ABI notes on 16-wide vectors); -DGA_OWN_LOG:
            # ufunc_helpers' own logarithms (CPUs)
            self.build_options += ("-w",) if info.is_gpu else ("-w", "-DGA_OWN_LOG")
        self._arena = None
        self._pool = None
        self._allocator = cl_tools.ImmediateAllocator(self.queue)
        prealloc = config.flags.preallocate
        if prealloc >= 0:
            self._pool = cl_tools.MemoryPool(self._allocator)
        if prealloc > 0:
            nbytes = int(prealloc * info.global_mem if prealloc <= 1 else prealloc * 2**20)
            self._arena = Arena(self._allocate_plain(min(nbytes, info.max_alloc)), self.base_align)

    devname = property(lambda self: self.device.name, doc="'cl0:0'")

    @property
    def copy_queue(self):
        """A second in-order queue on the device, made on first use: staged copies out of
        the device run there, beside the writes into it on `queue`."""
        if self._copy_queue is None:
            with _lock:
                if self._copy_queue is None:
                    self._copy_queue = cl.CommandQueue(self.cl_context, self.device.cl_device)
        return self._copy_queue
    fp64 = property(lambda self: self.device.fp64)
    total_gmem = property(lambda self: self.device.global_mem)

    @property
    def name(self):
        """The first name this context was given, else its device name."""
        return self.names[0] if self.names else self.devname

    @property
    def held_bytes(self):
        """Bytes the pool and arena hold from the device, in use or free for reuse."""
        pool = self._pool.managed_bytes if self._pool else 0
        return int(pool) + (self._arena.nbytes if self._arena else 0)

    @property
    def active_bytes(self):
        """Bytes of the pool and arena in use by live arrays (0 with the pool off)."""
        pool = self._pool.active_bytes if self._pool else 0
        return int(pool) + (self._arena.active_bytes if self._arena else 0)

    def _allocate_plain(self, nbytes):
        try:
            return self._allocator(nbytes)
        except cl.Error as e:
            raise self._oom(nbytes, e) from None

    def _oom(self, nbytes, cause=""):
        return OutOfMemory(
            f"cannot allocate {nbytes} bytes ({nbytes / 2**20:.1f} MiB) on {self.devname} "
            f"({self.device.device_name}, {self.total_gmem / 2**20:.0f} MiB, "
            f"largest allocation {self.device.max_alloc / 2**20:.0f} MiB, "
            f"{self.active_bytes / 2**20:.1f} MiB in use){': ' + str(cause) if cause else ''}"
        )

    def allocate(self, nbytes):
        """`Storage` of `nbytes` (arena, then pool, then the driver); OutOfMemory if none."""
        if nbytes == 0:
            return Storage(self, None, 0)
        if nbytes > self.device.max_alloc:
            raise self._oom(nbytes)
        with self.launch_lock:  # the allocator enqueues a write (see launch_lock)
            if self._arena is not None:
                block = self._arena.allocate(nbytes)
                if block is not None:
                    return Storage(self, block[0], nbytes, release=block[1])
            if self._pool is None:
                return Storage(self, self._allocate_plain(nbytes), nbytes)
            try:
                return Storage(self, self._pool.allocate(nbytes), nbytes)
            except cl.Error as e:
                raise self._oom(nbytes, e) from None

    @property
    def caches(self):
        """The context's bounded caches (each has .stats())."""
        return (self.programs, self.kernels, self.plans, self.ufunc_calls)

    def free_held(self):
        """Give the pool's unused blocks back to the driver."""
        if self._pool is not None:
            self._pool.free_held()

    def sync(self):
        """Wait until everything enqueued on this context's queues has finished."""
        self.queue.finish()
        if self._copy_queue is not None:
            self._copy_queue.finish()

    def __repr__(self):
        return f"<gpuarr.Context {self.name!r} on {self.devname}: {self.device.describe()}>"


# ---------------------------------------------------------------- os.fork()

def _fork_error(ctx=None):
    where = f"device {ctx.devname} ({ctx.device.device_name})" if ctx is not None else \
        "OpenCL"
    return ForkedProcessError(
        f"this process (pid {os.getpid()}) was forked from pid {_forked_from} after gpuarr "
        f"had loaded the OpenCL driver there: the driver's threads and queues did not come "
        f"along, so {where} cannot be used here (the call would hang). Start worker "
        f"processes with multiprocessing's 'spawn' or 'forkserver' start method "
        f"(multiprocessing.get_context('spawn')), or fork before the parent first uses "
        f"gpuarr (list_devices, init, the first array) and create the contexts in the children")


def _forked_use(ctx):
    raise _fork_error(ctx)


class _ForkedContext(Context):
    """What a Context becomes in a forked child: the driver's objects it holds (queue,
    cl.Context, memory) raise ForkedProcessError when used. They are properties, which win
    over the instance's own attributes, so the objects themselves stay referenced: releasing
    the parent's queue in the child could block too. The parent's Context class is
    untouched: its hot path pays nothing for this."""

    queue = property(_forked_use)
    copy_queue = property(_forked_use)
    cl_context = property(_forked_use)
    _allocator = property(_forked_use)
    _pool = property(_forked_use)
    _arena = property(_forked_use)


def _after_fork_in_child():
    """os.register_at_fork hook: in a child of a process that loaded the drivers, every
    context and every later device call raises ForkedProcessError instead of hanging."""
    global _forked_from, _lock
    _lock = threading.RLock()  # another thread of the parent may have held it at the fork
    if not _driver_loaded:
        return  # nothing was started: the child may use OpenCL as any fresh process
    _forked_from = os.getppid()
    for ctx in list(_by_device.values()):
        ctx.__class__ = _ForkedContext
        ctx.launch_lock = threading.RLock()  # (as _lock: calls reach _forked_use, not a hang)
    _keep_inherited_driver_objects()


def _keep_inherited_driver_objects():
    """Keep every object holding the parent's driver handles alive for the child's life.

    Releasing them in the child (at its exit, or when an array is freed) calls the driver:
    on NVIDIA's the child segfaults and the parent's context breaks (its next read fails
    with OUT_OF_RESOURCES, measured on an H200). A leaked reference is never released; the
    child's exit frees the memory without the driver's help. Contexts hold the queues,
    pools, arenas and kernels; storages the buffers and events of live arrays."""
    inherited = [*_by_device.values(), *_cl_contexts.values()]
    inherited += [o for o in gc.get_objects() if o.__class__ is Storage]
    for obj in inherited:
        ctypes.pythonapi.Py_IncRef(ctypes.py_object(obj))


def _before_fork():
    """os.register_at_fork hook: finish the queues, so that the events a child inherits are
    complete and waiting on one there (GpuArray.sync) returns instead of hanging."""
    for ctx in list(_by_device.values()):
        if ctx.__class__ is Context:
            with contextlib.suppress(Exception):  # a failing queue must not fail the fork
                ctx.queue.finish()


if hasattr(os, "register_at_fork"):
    os.register_at_fork(before=_before_fork, after_in_child=_after_fork_in_child)


def _host_memory(info):
    """Whether `info`'s memory is host memory (a CPU device, an integrated GPU)."""
    if info.type == "CPU":
        return True
    try:
        return bool(info.cl_device.host_unified_memory)
    except cl.Error:  # (deprecated since OpenCL 2.0: a driver may refuse the query)
        return False


def _shares_context(info):
    """Whether `info` joins its platform's shared cl.Context (flag context_sharing)."""
    return config.flags.context_sharing == "auto" and _host_memory(info)


def _cl_context_for(info):
    """The cl.Context of device `info`: its platform's shared one, or one of its own."""
    if not _shares_context(info):
        key = (info.platform_index, info.device_index)
        if key not in _cl_contexts:
            _cl_contexts[key] = cl.Context([info.cl_device])
        return _cl_contexts[key]
    key = (info.platform_index, None)
    if key not in _cl_contexts:
        devices = [d.cl_device for d in list_devices() if d.platform_index == info.platform_index
                   and d.usable and _shares_context(d)]
        _cl_contexts[key] = cl.Context(devices)
    return _cl_contexts[key]


def _context_for(info, log_name=None):
    with _lock:
        ctx = _by_device.get(info.name)
        new = ctx is None or (log_name is not None and log_name not in ctx.names)
        if ctx is None:
            ctx = _by_device[info.name] = Context(info, _cl_context_for(info))
        if new and config.flags.print_active_device:
            who = f"Mapped name {log_name} to device" if log_name else "Using device"
            print(f"{who} {info.name}: {info.describe()}", file=sys.stderr)
        return ctx


def _bind(name, ctx):
    config.check_context_name(name)
    bound = _by_name.get(name)
    if bound is not None and bound is not ctx:
        raise ContextNotDefined(
            f"context name {name!r} is already mapped to {bound.devname}; cannot map it to "
            f"{ctx.devname}"
        )
    _by_name[name] = ctx
    if name not in ctx.names:
        ctx.names.append(name)
    return ctx


def init(dev, name=None):
    """Open (or reuse) the context of device `dev`, optionally under `name`.

    Raises DeviceNotFound if the device is absent or unusable: an explicit choice never
    falls back to another device.
    """
    if _forked_from is not None:
        raise _fork_error(_by_name.get(name))
    info = _usable_device(find_device(dev))
    with _lock:
        if name is not None:
            config.check_context_name(name)
            bound = _by_name.get(name)
            if bound is not None and bound.device.name != info.name:
                raise ContextNotDefined(f"context name {name!r} is already mapped to "
                                        f"{bound.devname}; cannot map it to {info.name}")
        ctx = _context_for(info, log_name=name)
        return _bind(name, ctx) if name is not None else ctx


def _defined_names():
    return sorted({n for n in _by_name if n is not None} | set(config.flags.contexts))


def default_context():
    """The context of flag `device` (created on first use)."""
    if _forked_from is not None:
        raise _fork_error(_by_name.get(None))
    with _lock:
        ctx = _by_name.get(None)
        if ctx is not None:
            return ctx
        text = config.flags.device
        if text == "cpu":
            raise ContextNotDefined(
                "the default device is 'cpu' (flag device=cpu), which has no OpenCL context; "
                "pass context= or set GPUARR_FLAGS=device=cl0:0"
            )
        info = _flagged_device(text, "flag device") if text else auto_device()
        ctx = _by_name[None] = _context_for(info)
        return ctx


def get_context(name=None):
    """A context by name, device string or Context; None gives the default context."""
    if name is None:
        return default_context()
    if isinstance(name, Context):
        return name
    if not isinstance(name, str):
        raise ArgumentTypeError(
            f"context must be a name, a device string or a Context, not {name!r}")
    if _forked_from is not None:
        raise _fork_error(_by_name.get(name))
    with _lock:
        ctx = _by_name.get(name)
        if ctx is not None:
            return ctx
        mapped = config.flags.contexts.get(name)
        if mapped is not None:
            info = _flagged_device(mapped, f"flag contexts ({name}->{mapped})")
            return _bind(name, _context_for(info, log_name=name))
    if name.startswith("cl"):
        return init(name)
    raise ContextNotDefined(
        f"unknown context name {name!r}; defined: {', '.join(_defined_names()) or 'none'} "
        f"(define one with gpuarr.init(dev, name=...) or the flag contexts=name->cl0:0)"
    )


def contexts():
    """The named contexts opened so far: {name: Context}."""
    with _lock:
        return {n: c for n, c in _by_name.items() if n is not None}


def _reset():
    """Forget every context (tests only); devices are enumerated again."""
    global _devices
    with _lock:
        for ctx in _by_device.values():
            ctx.sync()
        _by_device.clear()
        _by_name.clear()
        _cl_contexts.clear()
        _devices = None
