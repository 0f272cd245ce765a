"""The one place that renders Mako templates, builds OpenCL programs and caches kernels.

Stages: render (pure, memoized on the template name and frozen parameters) -> build (per
context, each kernel kept in `context.kernels` as a `launch.Launcher`) -> disk (the drivers'
own caches, or pyopencl's under flag compile_cache_dir, where config.private_dir accepts it:
binaries planted there would run). The hot path is one dict lookup.
"""

import functools
import hashlib
import os
import shutil
import warnings

import pyopencl as cl
from mako.lookup import TemplateLookup

from .. import config
from ..errors import KernelBuildError
from ..launch import Launcher

__all__ = ["build", "get_kernel", "get_program", "kernel_from", "numbered", "render"]

_HERE = os.path.dirname(os.path.abspath(__file__))


@functools.cache
def _lookup():
    """Mako's lookup of this folder's templates. Mako compiles each template to a Python
    module (0.03-0.05 s apiece); those are kept in a private folder of gpuarr's cache, one
    per templates folder (two installs' templates never share one) and text of the
    templates, so that a new process imports them instead. (Mako's own check compares
    whole seconds of modification times: a template changed in the second its module was
    written kept the old module.) The modules of the folder's earlier texts are removed."""
    folder = config.cache_path("mako", hashlib.sha256(_HERE.encode()).hexdigest()[:16])
    text = hashlib.sha256()
    for name in sorted(os.listdir(_HERE)):
        if name.endswith(".mako"):
            with open(os.path.join(_HERE, name), "rb") as f:
                text.update(name.encode() + b"\0" + f.read())
    version = text.hexdigest()[:16]
    modules = config.private_dir(os.path.join(folder, version), "compiled Mako templates")
    if modules:
        for old in set(os.listdir(folder)) - {version}:
            _remove(os.path.join(folder, old))
    return TemplateLookup(directories=[_HERE], module_directory=modules,
                          strict_undefined=True, input_encoding="utf-8")


def _remove(path):
    """Remove a file, link (not what it points to) or folder, as far as it can be: what is
    left stays (gone already, another process's; not ours to remove)."""
    try:
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        else:
            os.remove(path)
    except OSError:
        pass


def _freeze(value):
    if isinstance(value, list | tuple):
        return tuple(_freeze(v) for v in value)
    return value


@functools.lru_cache(maxsize=4096)
def _render(template, params):
    return _lookup().get_template(template).render(**dict(params))


def render(template, **params):
    """OpenCL source of `template` (a file in this folder) with `params`."""
    return _render(template, tuple(sorted((k, _freeze(v)) for k, v in params.items())))


def numbered(source):
    return "\n".join(f"{n:4d}| {line}" for n, line in enumerate(source.splitlines(), 1))


def _cache_dir():
    """Flag compile_cache_dir where config.private_dir accepts it (else None, warned once:
    pyopencl then leaves caching to the driver)."""
    path = config.flags.compile_cache_dir
    return config.private_dir(path, "compiled kernels (flag compile_cache_dir)") if path else None


def build(context, source, options=()):
    """Build `source` for `context`'s device; KernelBuildError with log and source on failure."""
    program = cl.Program(context.cl_context, source)
    try:
        with warnings.catch_warnings():
            # Drivers chat on success (NVIDIA: "overriding noinline attribute"); failures
            # raise below with the whole log.
            warnings.simplefilter("ignore", cl.CompilerWarning)
            return program.build(
                options=[*context.build_options, *options],
                devices=[context.device.cl_device],
                cache_dir=_cache_dir(),
            )
    except cl.Error as e:
        raise KernelBuildError(
            f"OpenCL build failed on {context.devname} ({context.device.device_name}):\n"
            f"{str(e).splitlines()[0]}\n--- build log ---\n{_build_log(program, context, e)}\n"
            f"--- generated source ---\n{numbered(source)}"
        ) from None


def _build_log(program, context, error):
    """The driver's build log; else pyopencl's message, which carries it on some drivers
    (Intel's CPU runtime) and lacks it on others (NVIDIA)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # "Pre-build attribute access defeats caching"
            log = program._get_prg().get_build_info(
                context.device.cl_device, cl.program_build_info.LOG).strip()
    except (cl.Error, AttributeError) as e:
        log = f"(unavailable: {e})"
    return log or str(error).strip() or "(empty)"


def get_program(context, key, template, **params):
    """The program cached under `key` on `context` (one program may define several kernels),
    rendered from `template` and built on first use."""
    program = context.programs.get(key)
    if program is None:
        program = context.programs.setdefault(key, build(context, render(template, **params)))
    return program


def kernel_from(context, key, program, name, scalar_arg_dtypes):
    """The `Launcher` of kernel `name` of `program`, cached under `key` on `context`.
    Threads that built it at once all take the first one stored."""
    return context.kernels.setdefault(key, Launcher(cl.Kernel(program, name), scalar_arg_dtypes))


def get_kernel(context, key, template, scalar_arg_dtypes, **params):
    """The `Launcher` cached under `key` on `context`, rendered and built on first use.

    `key` is the caller's hashable summary of `params` (so a hit costs one lookup);
    `params["name"]` names the kernel. `scalar_arg_dtypes` lists the numpy dtype of each
    scalar argument and None for each buffer, so that calls can pass Python numbers.
    """
    kernel = context.kernels.get(key)
    if kernel is None:
        program = build(context, render(template, **params))
        kernel = kernel_from(context, key, program, params["name"], scalar_arg_dtypes)
    return kernel
