"""Flags: read once from env GPUARR_FLAGS and ~/.gpuarrrc ([global]); the env wins.

    GPUARR_FLAGS="device=cl0:0,contexts=dev0->cl0:0;dev1->cl0:1,floatX=float32"

The parsed values are attributes of this module and of `flags`, except that
`gpuarr.config.floatX` is a dtype name (`float_x()`: flag floatX=auto, the default, reads
float64) while `flags.floatX` is the flag as set.
`reload()` reads both sources again (tests use it after changing the environment).

Every value is checked at load: a bad one raises one ConfigError naming the flag, the value,
where it came from (GPUARR_FLAGS, or the rc file and line) and the accepted values.
`private_dir` is the one check of the directories gpuarr keeps files in (flag
compile_cache_dir, the tuning store, the device probe's verdicts).
"""

import configparser
import contextlib
import dataclasses
import math
import os
import re
import stat
import warnings
from collections.abc import Callable, Mapping

from .errors import ConfigError, FlagError

__all__ = [
    "ENV_VAR", "FLAGS", "MAX_RC_BYTES", "MIN_PREALLOCATE_FRACTION", "RC_ENV_VAR", "DeviceSpec",
    "Flag", "Flags", "UnsafeDirectoryWarning", "check_context_name", "flags", "float_x", "load",
    "parse_device", "parse_flags", "private_dir", "rc_path", "read_rc", "reload",
]

ENV_VAR = "GPUARR_FLAGS"
RC_ENV_VAR = "GPUARRRC"

_DEVICE_RE = re.compile(r"^cl(\d+):(\d+)$")
_MATCH_RE = re.compile(r"^cl:(.+)$")
_NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_TRUE = ("true", "1", "yes", "on")
_FALSE = ("false", "0", "no", "off")
_BOOLS = f"{', '.join(_TRUE)} (true) or {', '.join(_FALSE)} (false)"
MAX_RC_BYTES = 1 << 20  # an rc file is a few lines; anything larger is not one
# preallocate in (0, 1] is a fraction of device memory; below this it is a typo (1e-12 made an
# arena of 0 bytes), not a size: sizes are MiB over 1
MIN_PREALLOCATE_FRACTION = 1e-4


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
    raise ValueError(f"expected {_BOOLS}")


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
    if text not in ("auto", "float32", "float64"):
        raise ValueError("expected auto, float32 or float64")
    return text


def _parse_preallocate(text):
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a number") from None
    if not math.isfinite(value):
        raise ValueError("expected a finite number")
    if 0 < value < MIN_PREALLOCATE_FRACTION:
        raise ValueError(f"a fraction of device memory under {MIN_PREALLOCATE_FRACTION} "
                         f"preallocates (next to) nothing")
    return value


def _parse_seconds(text):
    try:
        value = float(text)
    except ValueError:
        raise ValueError("expected a number of seconds") from None
    if not value > 0:  # nan too
        raise ValueError("expected a number of seconds over 0 (inf: no deadline)")
    return value


def _parse_path(text):
    text = text.strip()
    if "\0" in text:
        raise ValueError("a path cannot hold a NUL character")
    return text


def _choice(*values):
    def parse(text):
        text = text.strip()
        if text not in values:
            raise ValueError(f"expected {', '.join(values[:-1])} or {values[-1]}")
        return text
    parse.accepts = f"{', '.join(values[:-1])} or {values[-1]}"
    return parse


@dataclasses.dataclass(frozen=True)
class Flag:
    default: object
    parse: Callable[[str], object]
    doc: str
    accepts: str = ""  # what ConfigError lists as the accepted values (else parse.accepts)

    def accepted(self):
        return self.accepts or getattr(self.parse, "accepts", "")


_PATH = "a directory path, or empty for the default"


FLAGS = {
    "device": Flag("", _parse_device_flag,
                   "default context: cl<p>:<d>, cl:<text>, or cpu (no device); "
                   "empty picks the first GPU, else Intel's CPU runtime, else the first usable "
                   "device",
                   "empty, cl<platform>:<device> (e.g. cl0:0), cl:<text> (e.g. cl:nvidia) "
                   "or cpu"),
    "contexts": Flag({}, _parse_contexts, "named contexts: dev0->cl0:0;dev1->cl0:1",
                     "name->device entries separated by ';', e.g. dev0->cl0:0;dev1->cl0:1"),
    "floatX": Flag("auto", _parse_float_x,
                   "default float dtype: auto (float64 where the device has fp64, as numpy's "
                   "and Theano's, else float32), float32 or float64",
                   "auto, float32 or float64"),
    "force_device": Flag(False, _parse_bool, "raise instead of falling back to another device",
                         _BOOLS),
    "preallocate": Flag(0.0, _parse_preallocate,
                        "0: pool, no preallocation; 0<x<=1: fraction of device memory; "
                        ">1: MiB; <0: no pool",
                        f"a finite number: 0 (pool, no preallocation), a fraction of device "
                        f"memory from {MIN_PREALLOCATE_FRACTION} to 1, MiB over 1, or "
                        f"negative (no pool)"),
    "print_active_device": Flag(True, _parse_bool, "log the device of each new context",
                                _BOOLS),
    "compile_cache_dir": Flag("", _parse_path,
                              "directory for compiled kernels ('' = drivers' own)", _PATH),
    "tuning_dir": Flag("", _parse_path, "directory of tuned kernel parameters "
                       "('' = $XDG_CACHE_HOME/gpuarr/tuning or ~/.cache/gpuarr/tuning)", _PATH),
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
                    "and print the time per op at exit", _BOOLS),
    "device_probe": Flag("cpu", _choice("cpu", "all", "off"),
                         "check devices in a subprocess before first use (gpuarr.probe): "
                         "cpu (CPU devices), all, or off"),
    "context_sharing": Flag("auto", _choice("auto", "never"),
                            "devices of one platform whose memory is host memory (CPUs) "
                            "share a cl.Context: auto, or never (one per device; copies "
                            "between them are staged through pinned host memory as GPUs' are)"),
    "array_api_version": Flag("2025.12", _choice("2021.12", "2022.12", "2023.12", "2024.12",
                                                 "2025.12"),
                              "the Array API standard version gpuarr follows where versions "
                              "differ (gpuarr.__array_api_version__; docs/array_api.md)"),
    "comm_timeout": Flag(300.0, _parse_seconds,
                         "seconds an MPI collective (gpuarr.collectives.GpuComm) waits for "
                         "every rank before all raise CommTimeout", "a number of seconds over 0, "
                         "or inf (no deadline)"),
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
    comm_timeout: float = 300.0
    context_sharing: str = "auto"
    array_api_version: str = "2025.12"


def parse_flags(text, source=ENV_VAR):
    """Parse `key=value,key=value` into a dict of typed values (only the keys given)."""
    raw = {}
    for item in filter(None, (i.strip() for i in text.split(","))):
        key, eq, value = item.partition("=")
        if not eq:
            raise ConfigError(f"malformed flag {item!r} in {source}: expected key=value, "
                              f"e.g. {ENV_VAR}=floatX=float32,force_device=true")
        raw[key.strip()] = value
    return _typed(raw, source)


def _typed(raw, source, lines=None):
    """{key: typed value} of {key: text}; ConfigError naming the flag, the value, where it
    came from (`source`, with the line of `lines[key]` when given) and the accepted values."""
    values = {}
    for key, text in raw.items():
        where = f"{source} line {lines[key]}" if lines and key in lines else source
        if key not in FLAGS:
            raise ConfigError(
                f"unknown flag {key!r} in {where}; valid flags: {', '.join(sorted(FLAGS))}"
            )
        flag = FLAGS[key]
        try:
            values[key] = flag.parse(text)
        except ValueError as e:
            accepted = flag.accepted()
            also = "" if accepted in str(e) else f"; accepted values: {accepted}"
            raise ConfigError(f"bad value {text!r} for flag {key} in {where}: {e}{also}") \
                from None
    return values


def rc_path(env=None):
    """The rc file's path: $GPUARRRC, else ~/.gpuarrrc (`env`: the environment to read)."""
    env = os.environ if env is None else env
    return env.get(RC_ENV_VAR) or os.path.join(os.path.expanduser("~"), ".gpuarrrc")


def _rc_text(path):
    """The text of the rc file at `path`, None where there is none (absent, os.devnull);
    ConfigError where it is not a regular file, is larger than MAX_RC_BYTES, cannot be read
    or is not UTF-8. Opened without blocking: a FIFO there must not hang the import."""
    if path == os.devnull:
        return None
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    except FileNotFoundError:
        return None
    except OSError as e:
        raise ConfigError(f"cannot read the rc file {path}: {e.strerror}; fix its "
                          f"permissions, or set {RC_ENV_VAR}={os.devnull} to read none") from None
    if not stat.S_ISREG(os.fstat(fd).st_mode):
        os.close(fd)
        raise ConfigError(f"the rc file {path} is not a regular file; accepted: a text file "
                          f"with a [global] section, or {RC_ENV_VAR}={os.devnull} to read none")
    with os.fdopen(fd, "rb") as f:
        try:
            data = f.read(MAX_RC_BYTES + 1)
        except OSError as e:
            raise ConfigError(f"cannot read the rc file {path}: {e.strerror}") from None
    if len(data) > MAX_RC_BYTES:
        raise ConfigError(f"the rc file {path} is over {MAX_RC_BYTES} bytes: not an rc file "
                          f"of gpuarr's")
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        line = data.count(b"\n", 0, e.start) + 1
        raise ConfigError(f"the rc file {path} line {line} is not UTF-8 ({e.reason} at byte "
                          f"{e.start}); save it as UTF-8") from None


def _rc_index(text):
    """({section: line of its header}, {key of [global]: its line}), the first of each."""
    sections, keys, section = {}, {}, None
    for number, line in enumerate(text.splitlines(), 1):
        stripped = line.strip()
        if not stripped or stripped[0] in "#;" or line[0].isspace():
            continue  # blank, comment, or a value's continuation
        m = re.match(r"\[(.+)\]", stripped)
        if m:
            section = m.group(1)
            sections.setdefault(section, number)
        elif section == "global":
            keys.setdefault(re.split(r"[=:]", stripped, maxsplit=1)[0].strip(), number)
    return sections, keys


def read_rc(path):
    """Typed values from the [global] section of an rc file; {} if it does not exist.
    Other sections are ignored, but not a misspelt [global] ([Global], [ global ])."""
    text = _rc_text(path)
    if text is None:
        return {}
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # keys are case-sensitive (floatX)
    try:
        parser.read_string(text, source=path)
    except configparser.Error as e:
        raise ConfigError(f"cannot parse {path}: {e}") from None
    sections, lines = _rc_index(text)
    for section in parser.sections():
        if section != "global" and section.strip().lower() == "global":
            raise ConfigError(f"section [{section}] in {path} line {sections.get(section, '?')}"
                              f" is not read: flags go under [global] (lower case)")
    if not parser.has_section("global"):
        return {}
    return _typed(dict(parser.items("global")), path, lines)


def load(env=None):
    """Flags from the rc file overlaid with GPUARR_FLAGS (env wins). An rc file named by
    GPUARRRC must exist (os.devnull: none)."""
    env = os.environ if env is None else env
    values = {key: flag.default for key, flag in FLAGS.items()}
    path = rc_path(env)
    if env.get(RC_ENV_VAR) and path != os.devnull and not os.path.exists(path):
        raise ConfigError(f"{RC_ENV_VAR}={path} names no file; accepted: the path of an rc "
                          f"file, {os.devnull} for none, or unset (~/.gpuarrrc)")
    values.update(read_rc(path))
    values.update(parse_flags(env.get(ENV_VAR, "")))
    return Flags(**values)


def reload(env=None):
    """Read the flags again; returns and installs the new values."""
    global flags
    flags = load(env)
    return flags


# ---------------------------------------------------------------- directories of gpuarr's files

class UnsafeDirectoryWarning(UserWarning):
    """A directory gpuarr would keep files in is refused (see `private_dir`): not used."""


_refused = set()  # (path, reason) warned about once


def _refuse(path, what, reason, fix):
    if (path, reason) not in _refused:
        _refused.add((path, reason))
        warnings.warn(f"not using {path} for {what}: {reason}; {fix}", UnsafeDirectoryWarning,
                      stacklevel=3)
    return None


def _make_private(path):
    """Create `path` and its missing parents, each 0700."""
    missing, head = [], path
    while head and not os.path.lexists(head):
        missing.append(head)
        parent = os.path.dirname(head)
        if parent == head:
            break
        head = parent
    for folder in reversed(missing):
        with contextlib.suppress(FileExistsError):  # made meanwhile by another process
            os.mkdir(folder, 0o700)


def cache_path(*parts):
    """gpuarr's folder of cached files: $XDG_CACHE_HOME/gpuarr/<parts>, else
    ~/.cache/gpuarr/<parts> (not created here: private_dir checks and creates it)."""
    cache = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(cache, "gpuarr", *parts)


def private_dir(path, what, create=True):
    """`path` if it is a directory fit to keep `what` in (compiled kernels, tuned parameters,
    probe verdicts): owned by this user (or root) and not writable by group or others, the
    rule ssh applies to ~/.ssh; else None, with one UnsafeDirectoryWarning naming it: another
    user could plant files there (a planted kernel binary runs as this user). A missing one
    is created 0700 (its missing parents too), or with `create` false gives None quietly."""
    path = os.path.normpath(os.path.expanduser(path))
    try:
        st = os.stat(path)
    except FileNotFoundError:
        if not create:
            return None
        try:
            _make_private(path)
            st = os.stat(path)
        except OSError as e:
            return _refuse(path, what, f"cannot create it ({e.strerror})",
                           "set a writable directory in its flag")
    except OSError as e:
        return _refuse(path, what, f"cannot inspect it ({e.strerror})",
                       "set a directory of your own in its flag")
    if not stat.S_ISDIR(st.st_mode):
        return _refuse(path, what, "it is not a directory", "remove it or set another")
    if not hasattr(os, "geteuid"):
        return path  # Windows: access is by ACLs, not owner and mode bits
    if st.st_uid not in (os.geteuid(), 0):
        return _refuse(path, what, f"it is owned by uid {st.st_uid}, not by this user "
                       f"(uid {os.geteuid()})", "use a directory of your own")
    if st.st_mode & 0o022:
        who = " and ".join(w for w, bit in (("group", 0o020), ("others", 0o002))
                           if st.st_mode & bit)
        return _refuse(path, what, f"it is writable by {who} (mode "
                       f"{stat.S_IMODE(st.st_mode):o})", f"run chmod go-w {path}")
    return path


def _current():
    return globals().get("flags") or reload()


def float_x(fp64=True):
    """The name of the default float dtype (flag floatX) on a device with (`fp64`) or
    without float64: the flag's value, or for `auto` float64 where the device has fp64,
    else float32. `gpuarr.config.floatX` is `float_x()`: the name on the host (numpy,
    the symbolic layer's types); `gpuarr.dtypes.float_x(context)` the dtype on a device."""
    setting = _current().floatX
    if setting == "auto":
        return "float64" if fp64 else "float32"
    return setting


def __getattr__(name):
    # The flags load on first use, so that `python -m gpuarr` can report bad flags.
    if name == "flags":
        return reload()
    if name == "floatX":  # a dtype name, as Theano's: auto resolves to float64 here
        return float_x()
    if name in FLAGS:
        return getattr(_current(), name)
    raise AttributeError(f"module 'gpuarr.config' has no attribute {name!r}")
