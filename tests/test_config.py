"""Flags: GPUARR_FLAGS and the rc file, every key's values, and every malformed case."""

import os

import numpy as np
import pytest
from conftest import USABLE, using_flags

import gpuarr as ga
from gpuarr import config
from gpuarr.errors import FlagError, GpuArrayError

NO_RC = {"GPUARRRC": os.devnull}
ALL_KEYS = ("array_api_version", "assert_no_cpu_op", "blas_backend", "comm_timeout",
            "compile_cache_dir",
            "context_sharing", "contexts",
            "device",
            "device_probe", "floatX", "force_device", "gemm_precision", "preallocate",
            "print_active_device", "profile", "tuning_dir")


def load(flags=None, rc=None):
    env = {"GPUARRRC": str(rc) if rc is not None else os.devnull}
    if flags is not None:
        env[config.ENV_VAR] = flags
    return config.load(env=env)


def write_rc(tmp_path, text, name="gpuarrrc"):
    path = tmp_path / name
    path.write_text(text)
    return path


# ---------------------------------------------------------------- defaults and sources

def test_flag_error_is_a_value_error():
    assert issubclass(FlagError, ValueError)
    assert issubclass(FlagError, GpuArrayError)


def test_defaults_without_env_or_rc():
    f = load()
    assert f == config.Flags(device="", contexts={}, floatX="auto", force_device=False,
                             preallocate=0.0, print_active_device=True, compile_cache_dir="")


def test_every_documented_key_is_a_flag():
    assert sorted(config.FLAGS) == sorted(ALL_KEYS)


def test_parse_flags_returns_only_the_keys_given():
    assert config.parse_flags("") == {}
    assert config.parse_flags("floatX=float64") == {"floatX": "float64"}
    assert config.parse_flags(" floatX = float64 , , device=cl0:1 ,") == {
        "floatX": "float64", "device": "cl0:1"}


def test_parse_flags_values_are_typed():
    got = config.parse_flags("device=cl1:2,contexts=dev0->cl0:0,floatX=float64,force_device=yes,"
                             "preallocate=0.25,print_active_device=0,compile_cache_dir=/tmp/k")
    assert got == {"device": "cl1:2", "contexts": {"dev0": "cl0:0"}, "floatX": "float64",
                   "force_device": True, "preallocate": 0.25, "print_active_device": False,
                   "compile_cache_dir": "/tmp/k"}
    assert type(got["preallocate"]) is float
    assert type(got["force_device"]) is bool


@pytest.mark.parametrize(("text", "expected"), [
    ("cl0:0", "cl0:0"),
    ("cl1:3", "cl1:3"),
    ("cl12:10", "cl12:10"),
    ("cl:nvidia", "cl:nvidia"),
    ("cl:Portable Computing", "cl:Portable Computing"),
    ("cpu", "cpu"),
    (" cl0:1 ", "cl0:1"),
    ("", ""),
    ("  ", ""),
])
def test_device_flag(text, expected):
    assert config.parse_flags(f"device={text}") == {"device": expected}
    assert load(f"device={text}").device == expected


@pytest.mark.parametrize(("text", "expected"), [
    ("dev0->cl0:0;dev1->cl1:0", {"dev0": "cl0:0", "dev1": "cl1:0"}),
    ("dev0->cl0:0;dev1->cl0:0;dev2->cl0:0", {"dev0": "cl0:0", "dev1": "cl0:0", "dev2": "cl0:0"}),
    (" dev0 -> cl0:1 ; gpu_a->cl:nvidia ;", {"dev0": "cl0:1", "gpu_a": "cl:nvidia"}),
    ("", {}),
])
def test_contexts_flag(text, expected):
    assert load(f"contexts={text}").contexts == expected


def test_contexts_flag_keeps_order():
    got = load("contexts=zz->cl0:0;aa->cl0:1;mm->cl0:0").contexts
    assert list(got) == ["zz", "aa", "mm"]


@pytest.mark.parametrize("value", ["auto", "float32", "float64"])
def test_float_x_flag(value):
    assert load(f"floatX={value}").floatX == value


@pytest.mark.parametrize("key", ["force_device", "print_active_device"])
@pytest.mark.parametrize(("text", "expected"), [
    ("true", True), ("True", True), ("TRUE", True), ("1", True), ("yes", True), ("on", True),
    ("false", False), ("False", False), ("0", False), ("no", False), ("NO", False),
    ("off", False),
])
def test_bool_flags(key, text, expected):
    got = getattr(load(f"{key}={text}"), key)
    assert got is expected


@pytest.mark.parametrize(("text", "expected"), [
    ("0", 0.0), ("0.5", 0.5), ("1", 1.0), ("512", 512.0), ("-1", -1.0), ("1e3", 1000.0),
])
def test_preallocate_flag(text, expected):
    got = load(f"preallocate={text}").preallocate
    assert got == expected
    assert isinstance(got, float)


def test_compile_cache_dir_flag(tmp_path):
    assert load(f"compile_cache_dir={tmp_path}").compile_cache_dir == str(tmp_path)
    assert load("compile_cache_dir=").compile_cache_dir == ""


def test_module_attributes_expose_the_flags():
    text = ("device=cl0:1,contexts=dev0->cl0:0;dev1->cl0:0,floatX=float64,force_device=1,"
            "preallocate=0.5,print_active_device=no,compile_cache_dir=/tmp/gpuarr-kc")
    with using_flags(text) as f:
        assert config.flags is f
        assert config.device == "cl0:1"
        assert config.contexts == {"dev0": "cl0:0", "dev1": "cl0:0"}
        assert config.floatX == "float64"
        assert config.force_device is True
        assert config.preallocate == 0.5
        assert config.print_active_device is False
        assert config.compile_cache_dir == "/tmp/gpuarr-kc"
    with using_flags(""):
        assert config.flags.floatX == "auto"  # the default: float64 where the device has fp64
        assert config.floatX == "float64"
        assert config.device == ""
        assert config.print_active_device is True


@pytest.mark.parametrize("float_x", ["float32", "float64"])
def test_float_x_sets_the_default_float_dtype(float_x):
    with using_flags(f"floatX={float_x},print_active_device=False"):
        c = ga.init(USABLE[0].name)
        if float_x == "float64" and not c.fp64:
            pytest.skip("no fp64 on this device")
        assert ga.empty(3, context=c).dtype == np.dtype(float_x)
        assert ga.asarray([1.5, 2.5], context=c).dtype == np.dtype(float_x)
        assert ga.asarray(np.ones(2, np.float64), context=c).dtype == np.float64


def test_module_getattr_rejects_unknown_names():
    with pytest.raises(AttributeError, match="no_such_flag"):
        _ = config.no_such_flag


def test_reload_installs_and_returns_new_flags():
    saved = config.flags
    try:
        got = config.reload({**NO_RC, config.ENV_VAR: "floatX=float64"})
        assert got is config.flags
        assert config.floatX == "float64"
    finally:
        config.flags = saved


# ---------------------------------------------------------------- the rc file

def test_read_rc_global_section(tmp_path):
    path = write_rc(tmp_path, "[global]\nfloatX = float64\ndevice = cl0:1\n"
                              "contexts = dev0->cl0:0;dev1->cl0:1\nforce_device = yes\n"
                              "preallocate = 512\n")
    assert config.read_rc(str(path)) == {
        "floatX": "float64", "device": "cl0:1", "contexts": {"dev0": "cl0:0", "dev1": "cl0:1"},
        "force_device": True, "preallocate": 512.0}


def test_read_rc_missing_file_is_empty(tmp_path):
    assert config.read_rc(str(tmp_path / "absent")) == {}


def test_read_rc_ignores_other_sections(tmp_path):
    path = write_rc(tmp_path, "[other]\nfloatX = float64\nnot_a_flag = 1\n")
    assert config.read_rc(str(path)) == {}
    path = write_rc(tmp_path, "[other]\nnot_a_flag = 1\n[global]\nfloatX = float64\n", "b")
    assert config.read_rc(str(path)) == {"floatX": "float64"}


def test_rc_path_from_gpuarrrc(tmp_path):
    assert config.rc_path({"GPUARRRC": str(tmp_path / "x")}) == str(tmp_path / "x")
    home = config.rc_path({})
    assert home == os.path.join(os.path.expanduser("~"), ".gpuarrrc")


def test_load_reads_rc_named_by_gpuarrrc(tmp_path):
    path = write_rc(tmp_path, "[global]\nfloatX = float64\nprint_active_device = false\n"
                              "contexts = a->cl0:0;b->cl0:0\n")
    f = load(rc=path)
    assert f.floatX == "float64"
    assert f.print_active_device is False
    assert f.contexts == {"a": "cl0:0", "b": "cl0:0"}
    assert f.device == ""  # not in either source: the default


def test_env_wins_over_rc(tmp_path):
    path = write_rc(tmp_path, "[global]\nfloatX = float64\ndevice = cl0:1\npreallocate = 512\n")
    f = load("floatX=float32,preallocate=-1", rc=path)
    assert f.floatX == "float32"
    assert f.preallocate == -1.0
    assert f.device == "cl0:1"  # only in the rc file: kept


def test_using_flags_reads_rc(tmp_path):
    path = write_rc(tmp_path, "[global]\nfloatX = float64\n")
    with using_flags("", rc_path=path):
        assert config.floatX == "float64"
    with using_flags("floatX=float32", rc_path=path):
        assert config.floatX == "float32"


@pytest.mark.parametrize(("text", "quoted"), [
    ("[global]\nno_such_flag = 1\n", "'no_such_flag'"),
    ("[global]\nfloatX = float16\n", "'float16'"),
    ("floatX = float64\n", "floatX"),  # no section header
    ("[global]\nthis line has no separator\n", "this line has no separator"),
    ("[global]\nfloatX = float32\nfloatX = float64\n", "floatX"),  # duplicate key
])
def test_bad_rc_file_raises_flag_error(tmp_path, text, quoted):
    path = write_rc(tmp_path, text)
    with pytest.raises(FlagError) as info:
        config.read_rc(str(path))
    msg = str(info.value)
    assert quoted in msg
    assert str(path) in msg
    with pytest.raises(FlagError):
        load(rc=path)


@pytest.mark.parametrize(("key", "value", "quoted"), [
    ("floatX", "float16", "'float16'"),
    ("preallocate", "lots", "'lots'"),
    ("device", "gpu0", "'gpu0'"),
    ("contexts", "cpu->cl0:0", "'cpu'"),
    ("contexts", "dev0->cuda0", "'cuda0'"),
])
def test_bad_value_names_its_flag_and_source(tmp_path, key, value, quoted):
    """A bad value says which flag and which source (GPUARR_FLAGS or the rc file) held it."""
    with pytest.raises(FlagError) as info:
        config.parse_flags(f"{key}={value}")
    assert quoted in str(info.value)
    assert key in str(info.value) and config.ENV_VAR in str(info.value), str(info.value)
    path = write_rc(tmp_path, f"[global]\n{key} = {value}\n")
    with pytest.raises(FlagError) as info:
        config.read_rc(str(path))
    assert key in str(info.value) and str(path) in str(info.value), str(info.value)


def test_unknown_key_in_rc_lists_valid_flags(tmp_path):
    path = write_rc(tmp_path, "[global]\nfloat_x = float64\n")
    with pytest.raises(FlagError) as info:
        config.read_rc(str(path))
    for key in ALL_KEYS:
        assert key in str(info.value)


# ---------------------------------------------------------------- malformed flags

def test_unknown_key_lists_valid_flags():
    with pytest.raises(FlagError) as info:
        config.parse_flags("floatx=float32")
    msg = str(info.value)
    assert "'floatx'" in msg
    assert config.ENV_VAR in msg
    for key in ALL_KEYS:
        assert key in msg


@pytest.mark.parametrize(("text", "fragments"), [
    # entries without '='
    ("floatX", ["'floatX'", "key=value"]),
    ("floatX=float32,force_device", ["'force_device'", "key=value"]),
    # contexts
    ("contexts=dev0-cl0:0", ["'dev0-cl0:0'", "name->device"]),
    ("contexts=dev0->cl0:0;dev1=cl0:1", ["'dev1=cl0:1'"]),
    ("contexts=->cl0:0", ["'->cl0:0'", "name->device"]),
    ("contexts=dev0->", ["'dev0->'", "name->device"]),
    ("contexts=dev0->cl0:0;dev0->cl0:1", ["'dev0'"]),
    ("contexts=dev0->cl0:0;dev0->cl0:0", ["'dev0'"]),
    ("contexts=cpu->cl0:0", ["'cpu'"]),
    ("contexts=cl0->cl0:0", ["'cl0'"]),
    ("contexts=clx->cl0:0", ["'clx'"]),
    ("contexts=dev-0->cl0:0", ["'dev-0'"]),
    ("contexts=dev0->cpu", ["'dev0'", "cpu"]),
    ("contexts=dev0->gpu0", ["'gpu0'", "cl<platform>:<device>"]),
    ("contexts=dev0->cl0", ["'cl0'", "cl<platform>:<device>"]),
    # device
    ("device=gpu0", ["'gpu0'", "cl<platform>:<device>", "cl:<text>", "cpu"]),
    ("device=cl0", ["'cl0'", "cl<platform>:<device>", "cl:<text>", "cpu"]),
    ("device=cl0:x", ["'cl0:x'", "cl<platform>:<device>"]),
    ("device=cuda0", ["'cuda0'", "cl<platform>:<device>"]),
    ("device=cl:", ["'cl:'", "cl<platform>:<device>"]),
    ("device=cl0:0:0", ["'cl0:0:0'"]),
    # floatX
    ("floatX=float16", ["'float16'", "float32", "float64"]),
    ("floatX=int32", ["'int32'", "float32", "float64"]),
    ("floatX=", ["''", "float32", "float64"]),
    # booleans
    ("force_device=maybe", ["'maybe'", "force_device", "true", "false"]),
    ("print_active_device=maybe", ["'maybe'", "print_active_device", "true", "false"]),
    ("force_device=", ["''", "force_device", "true", "false"]),
    # preallocate
    ("preallocate=lots", ["'lots'", "preallocate"]),
    ("preallocate=nan", ["'nan'", "preallocate"]),
    ("preallocate=", ["''", "preallocate"]),
])
def test_malformed_flag_raises_flag_error(text, fragments):
    with pytest.raises(FlagError) as info:
        config.parse_flags(text)
    assert isinstance(info.value, ValueError)
    msg = str(info.value)
    for frag in fragments:
        assert frag in msg, (frag, msg)
    with pytest.raises(ValueError):
        load(text)


def test_malformed_flag_leaves_installed_flags_alone():
    saved = config.flags
    with pytest.raises(FlagError):
        config.reload({**NO_RC, config.ENV_VAR: "floatX=int8"})
    assert config.flags is saved


# ---------------------------------------------------------------- parse_device

@pytest.mark.parametrize(("text", "platform", "device", "match", "is_cpu"), [
    ("cl0:0", 0, 0, None, False),
    ("cl1:3", 1, 3, None, False),
    ("cl10:20", 10, 20, None, False),
    (" cl2:5 ", 2, 5, None, False),
    ("cl:nvidia", None, None, "nvidia", False),
    ("cl:NVIDIA GeForce RTX", None, None, "NVIDIA GeForce RTX", False),
    ("cl:0", None, None, "0", False),
    ("cpu", None, None, None, True),
])
def test_parse_device_valid(text, platform, device, match, is_cpu):
    spec = config.parse_device(text)
    assert isinstance(spec, config.DeviceSpec)
    assert spec.text == text.strip()
    assert (spec.platform, spec.device, spec.match, spec.is_cpu) == (
        platform, device, match, is_cpu)


@pytest.mark.parametrize("text", [
    "", "gpu0", "cl0", "cl0:x", "cuda0", "cl:", "clx:0", "cl-1:0", "cl0:-1", "cl0:0:0",
    "opencl0:0", "cl 0:0", "cl0 :0", "0:0", "cpu0",
])
def test_parse_device_invalid(text):
    with pytest.raises(FlagError) as info:
        config.parse_device(text)
    msg = str(info.value)
    assert repr(text.strip()) in msg
    assert "cl<platform>:<device>" in msg
    assert "cpu" in msg


# ---------------------------------------------------------------- check_context_name

@pytest.mark.parametrize("name", ["dev0", "dev1", "gpu_a", "_x", "Dev", "c", "cpux_", "x" * 40])
def test_check_context_name_valid(name):
    assert config.check_context_name(name) == name


@pytest.mark.parametrize("name", ["cpu", "cl", "cl0", "clx", "cl_dev", "cl12"])
def test_check_context_name_reserved(name):
    with pytest.raises(FlagError) as info:
        config.check_context_name(name)
    msg = str(info.value)
    assert repr(name) in msg
    assert "reserved" in msg


@pytest.mark.parametrize("name", ["", "0dev", "dev-0", "dev 0", "a.b", "dev0:0", "cl0:0",
                                  "dev0\n", "\ndev0", "dev0->cl0:0"])
def test_check_context_name_invalid(name):
    with pytest.raises(FlagError) as info:
        config.check_context_name(name)
    assert repr(name) in str(info.value)

