"""Flags: read once from env GPUARR_FLAGS and ~/.gpuarrrc ([global]); the env wins.

    GPUARR_FLAGS="device=cl0:0,contexts=dev0->cl0:0;dev1->cl0:1,floatX=float32"

The parsed values are attributes of this module (`gpuarr.config.floatX`) and of `flags`.
`reload()` reads both sources again (tests use it after changing the environment).
"""

import configparser
import dataclasses
import os
import re
from collections.abc import Callable, Mapping

from .errors import FlagError

__all__ = [
    "ENV_VAR", "FLAGS", "RC_ENV_VAR", "DeviceSpec", "Flag", "Flags", "check_context_name", "flags",
    "load", "parse_device", "parse_flags", "rc_path", "read_rc", "reload",
]

ENV_VAR = "GPUARR_FLAGS"
RC_ENV_VAR = "GPUARRRC"

_DEVICE_RE = re.compile(r"^cl(\d+):(\d+)$")
_MATCH_RE = re.compile(r"^cl:(.+)$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")


@dataclasses.dataclass(frozen=True)
class DeviceSpec:
    """A parsed device string: `cl<p>:<d>`, `cl:<text>` or `cpu`."""

    text: str
    platform: int | None = None
    device: int | None = None
    match: str | None = None

    @property
    def is_cpu(self):
        return self.text == "cpu"


def parse_device(text):
    """Parse a device string, raising ValueError (FlagError) quoting it when malformed."""
    text = text.strip()
    if text == "cpu":
        return DeviceSpec("cpu")
    m = _DEVICE_RE.fullmatch(text)
    if m:
        return DeviceSpec(text, platform=int(m.group(1)), device=int(m.group(2)))
    m = _MATCH_RE.fullmatch(text)
    if m:
        return DeviceSpec(text, match=m.group(1))
    raise FlagError(
        f"malformed device {text!r}: expected cl<platform>:<device> (e.g. cl0:0), "
        f"cl:<text> (e.g. cl:nvidia) or cpu"
    )


def check_context_name(name):
    """Raise FlagError unless `name` may name a context (not `cpu`, not `cl...`)."""
    if not _NAME_RE.fullmatch(name):
        raise FlagError(
            f"invalid context name {name!r}: use letters, digits and '_', e.g. dev0"
        )
    if name == "cpu" or name.startswith("cl"):
        raise FlagError(
            f"reserved context name {name!r}: 'cpu' and names starting with 'cl' "
            f"are device names; pick another, e.g. dev0"
        )
    return name


def _parse_bool(text):
    low = text.strip().lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    raise ValueError(f"expected one of {', '.join(_TRUE + _FALSE)}")


def _parse_device_flag(text):
    return "" if not text.strip() else parse_device(text).text


def _parse_contexts(text):
    mapping = {}
    for entry in filter(None, (e.strip() for e in text.split(";"))):
        name, arrow, dev = entry.partition("->")
        if not arrow or not name.strip() or not dev.strip():
            raise ValueError(f"malformed entry {entry!r}: expected name->device, e.g. dev0->cl0:0")
        name = check_context_name(name.strip())
        if name in mapping:
            raise ValueError(f"context name {name!r} is mapped twice")
        spec = parse_device(dev)
        if spec.is_cpu:
            raise ValueError(f"context {name!r} cannot map to 'cpu': name an OpenCL device")
        mapping[name] = spec.text
    return mapping


def _parse_float_x(text):
    text = text.strip()
    if text not in ("float32", "float64"):
        raise ValueError("expected float32 or float64")
    return text


def _parse_preallocate(text):
    value = float(text)
    if value != value:
        raise ValueError("expected a number")
    return value


def _choice(*values):
    def parse(text):
        text = text.strip()
        if text not in values:
            raise ValueError(f"expected {', '.join(values[:-1])} or {values[-1]}")
        return text
    return parse


@dataclasses.dataclass(frozen=True)
class Flag:
    default: object
    parse: Callable[[str], object]
    doc: str


FLAGS = {
    "device": Flag("", _parse_device_flag,
                   "default context: cl<p>:<d>, cl:<text>, or cpu (no device); "
                   "empty picks the first GPU, else the first usable device"),
    "contexts": Flag({}, _parse_contexts, "named contexts: dev0->cl0:0;dev1->cl0:1"),
    "floatX": Flag("float32", _parse_float_x, "default float dtype: float32 or float64"),
    "force_device": Flag(False, _parse_bool, "raise instead of falling back to another device"),
    "preallocate": Flag(0.0, _parse_preallocate,
                        "0: pool, no preallocation; 0<x<=1: fraction of device memory; "
                        ">1: MiB; <0: no pool"),
    "print_active_device": Flag(True, _parse_bool, "log the device of each new context"),
    "compile_cache_dir": Flag("", str.strip, "directory for compiled kernels ('' = drivers' own)"),
    "tuning_dir": Flag("", str.strip, "directory of tuned kernel parameters "
                       "('' = $XDG_CACHE_HOME/gpuarr/tuning or ~/.cache/gpuarr/tuning)"),
    "blas_backend": Flag("auto", _choice("auto", "gpuarr", "clblast"),
                         "GEMM: auto (the tuner's pick per shape class), gpuarr, or clblast"),
    "gemm_precision": Flag("auto", _choice("auto", "fp32", "3xtf32", "tf32"),
                           "float32 GEMM on NVIDIA tensor cores: auto (3xtf32 where it "
                           "qualifies), fp32 (never), 3xtf32 (float32 accuracy), tf32 "
                           "(10-bit mantissa products: faster, less precise)"),
    "assert_no_cpu_op": Flag("ignore", _choice("ignore", "warn", "raise"),
                             "gpuarr.symbolic: warn or raise when a compiled function leaves "
                             "ops on the host"),
    "profile": Flag(False, _parse_bool, "gpuarr.symbolic: profile every compiled function "
                    "and print the time per op at exit"),
    "device_probe": Flag("cpu", _choice("cpu", "all", "off"),
                         "check devices in a subprocess before first use (gpuarr.probe): "
                         "cpu (CPU devices), all, or off"),
}


@dataclasses.dataclass(frozen=True)
class Flags:
    device: str
    contexts: Mapping[str, str]
    floatX: str
    force_device: bool
    preallocate: float
    print_active_device: bool
    compile_cache_dir: str
    tuning_dir: str = ""
    blas_backend: str = "auto"
    gemm_precision: str = "auto"
    assert_no_cpu_op: str = "ignore"
    profile: bool = False
    device_probe: str = "cpu"


def parse_flags(text, source=ENV_VAR):
    """Parse `key=value,key=value` into a dict of typed values (only the keys given)."""
    raw = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise FlagError(f"malformed flag {item!r} in {source}: expected key=value")
        raw[key.strip()] = value
    return _typed(raw, source)


def _typed(raw, source):
    values = {}
    for key, text in raw.items():
        if key not in FLAGS:
            raise FlagError(
                f"unknown flag {key!r} in {source}; valid flags: {', '.join(sorted(FLAGS))}"
            )
        try:
            values[key] = FLAGS[key].parse(text)
        except ValueError as e:
            raise FlagError(f"bad value {text!r} for flag {key} in {source}: {e}") from None
    return values


def rc_path(env=None):
    env = os.environ if env is None else env
    return env.get(RC_ENV_VAR) or os.path.join(os.path.expanduser("~"), ".gpuarrrc")


def read_rc(path):
    """Typed values from the [global] section of an rc file; {} if it does not exist."""
    if not os.path.isfile(path):
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive (floatX)
    try:
        parser.read(path)
    except configparser.Error as e:
        raise FlagError(f"cannot parse {path}: {e}") from None
    if not parser.has_section("global"):
        return {}
    return _typed(dict(parser.items("global")), path)


def load(env=None):
    """Flags from the rc file overlaid with GPUARR_FLAGS (env wins)."""
    env = os.environ if env is None else env
    values = {key: flag.default for key, flag in FLAGS.items()}
    values.update(read_rc(rc_path(env)))
    values.update(parse_flags(env.get(ENV_VAR, "")))
    return Flags(**values)


def reload(env=None):
    """Read the flags again; returns and installs the new values."""
    global flags
    flags = load(env)
    return flags


def __getattr__(name):
    # The flags load on first use, so that `python -m gpuarr` can report bad flags.
    if name == "flags":
        return reload()
    if name in FLAGS:
        return getattr(reload() if "flags" not in globals() else globals()["flags"], name)
    raise AttributeError(f"module 'gpuarr.config' has no attribute {name!r}")
