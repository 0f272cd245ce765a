"""gpuarr.icd: pip-installed OpenCL drivers registered with the ICD loader."""

import os

import pytest

import gpuarr as ga
from gpuarr import context, icd


@pytest.fixture
def fake_driver(tmp_path, monkeypatch):
    """A system vendors folder with two entries, a pip driver library, and a private cache."""
    system = tmp_path / "vendors"
    system.mkdir()
    (system / "pocl.icd").write_text("libpocl.so.2\n")
    (system / "nvidia.icd").write_text("libnvidia-opencl.so.1\n")
    (system / "README").write_text("not an entry\n")
    library = tmp_path / "site" / "lib" / "libintelocl.so"
    library.parent.mkdir(parents=True)
    library.write_bytes(b"")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(system))
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setattr(icd, "driver_library",
                        lambda dist, lib: str(library) if dist == "intel-opencl-rt" else None)
    return system, library


def entries(folder):
    return {name: open(os.path.join(folder, name)).read().strip()
            for name in sorted(os.listdir(folder))}


def test_register_keeps_the_system_drivers_and_adds_the_pip_one(fake_driver):
    system, library = fake_driver
    folder = icd._register()
    assert os.path.dirname(folder) == str(system.parent / "cache" / "gpuarr" / "icd")
    assert os.environ["OCL_ICD_VENDORS"] == folder
    assert entries(folder) == {"nvidia.icd": "libnvidia-opencl.so.1", "pocl.icd": "libpocl.so.2",
                               "zz-gpuarr-intel-opencl-rt.icd": str(library)}
    # the loader lists platforms by entry name: the system's keep their numbers
    assert sorted(entries(folder))[-1].startswith("zz-gpuarr-")
    assert os.stat(folder).st_mode & 0o077 == 0  # private: a planted entry would be loaded


def test_register_again_follows_the_system_folder(fake_driver):
    system, _ = fake_driver
    folder = icd._register()
    (system / "nvidia.icd").unlink()
    (system / "oclgrind.icd").write_text("liboclgrind-rt-icd.so\n")
    # the folder it made is now OCL_ICD_VENDORS; a second process reads its own entries back
    assert icd._register() == folder
    assert set(entries(folder)) == {"nvidia.icd", "pocl.icd", "zz-gpuarr-intel-opencl-rt.icd"}
    os.environ["OCL_ICD_VENDORS"] = str(system)
    assert icd._register() == folder
    assert set(entries(folder)) == {"oclgrind.icd", "pocl.icd", "zz-gpuarr-intel-opencl-rt.icd"}
    # another source folder gets a list of its own: processes do not rewrite each other's
    other = system.parent / "other"
    other.mkdir()
    os.environ["OCL_ICD_VENDORS"] = str(other)
    elsewhere = icd._register()
    assert elsewhere != folder and set(entries(elsewhere)) == {"zz-gpuarr-intel-opencl-rt.icd"}
    assert set(entries(folder)) == {"oclgrind.icd", "pocl.icd", "zz-gpuarr-intel-opencl-rt.icd"}


def test_register_leaves_a_single_icd_file_and_no_driver_alone(fake_driver, monkeypatch):
    system, _ = fake_driver
    monkeypatch.setenv("OCL_ICD_VENDORS", str(system / "pocl.icd"))
    assert icd._register() is None
    assert os.environ["OCL_ICD_VENDORS"] == str(system / "pocl.icd")
    monkeypatch.setenv("OCL_ICD_VENDORS", str(system))
    monkeypatch.setattr(icd, "driver_library", lambda dist, lib: None)
    assert icd._register() is None
    assert os.environ["OCL_ICD_VENDORS"] == str(system)


def test_driver_library_finds_a_file_of_an_installed_distribution():
    import pyopencl

    found = icd.driver_library("pyopencl", "__init__.py")
    assert found is not None and os.path.samefile(found, pyopencl.__file__)
    assert icd.driver_library("pyopencl", "no_such_library.so") is None
    assert icd.driver_library("no-such-distribution-of-gpuarr-tests", "x.so") is None


@pytest.mark.skipif(icd.driver_library("intel-opencl-rt", "libintelocl.so") is None,
                    reason="Intel's CPU runtime is not installed (pip install 'gpuarr[cpu]')")
def test_pip_installed_intel_runtime_is_a_usable_device():
    intel = [d for d in ga.list_devices() if d.platform.startswith("Intel(R) OpenCL")]
    assert intel, "intel-opencl-rt is installed but the ICD loader did not list it"
    assert any(d.usable and d.type == "CPU" for d in intel)


class _Named:
    def __init__(self, name="", version=""):
        self.name, self.version = name, version


def test_a_generic_target_pocl_is_called_slow_and_names_the_fix():
    pocl = _Named("Portable Computing Language")
    generic = _Named(version="OpenCL 3.0 PoCL HSTR: pthread-x86_64-unknown-linux-gnu-generic")
    native = _Named(version="OpenCL 3.0 PoCL HSTR: pthread-x86_64-pc-linux-gnu-skylake-avx512")
    advice = context._slow_reason(pocl, generic)
    assert "generic" in advice and 'pip install "gpuarr[cpu]"' in advice
    assert context._slow_reason(pocl, native) == ""
    assert context._slow_reason(_Named("Intel(R) OpenCL"), generic) == ""
