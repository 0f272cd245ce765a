"""OpenCL drivers installed by pip, registered with the ICD loader.

The loader bundled with pyopencl's wheel (ocl-icd) finds drivers through the `.icd` files of
/etc/OpenCL/vendors, or of the folder that OCL_ICD_VENDORS names, and (pyopencl's addition)
pip's PoCL. Intel's CPU OpenCL runtime from pip (`pip install "gpuarr[cpu]"`: intel-opencl-rt
and intel-cmplr-lib-rt) ships an `.icd` file naming a placeholder path, so the loader never
finds it. Before the first platform query, `register()` writes a vendors folder of gpuarr's
own (`$XDG_CACHE_HOME/gpuarr/icd/<digest of the source folder's path>`): a copy of each
entry of the folder the loader would have read, then one entry per pip driver naming its real
library, and points OCL_ICD_VENDORS at it. The loader (ocl-icd 2.3) numbers platforms by
their devices (more GPUs first, then more devices), ties in the order it loaded them: this
folder's entries by name (the system's, then pip's drivers), then pip's PoCL.

The loader reads the variable once, at the process's first OpenCL call: a program that
queried platforms through pyopencl before gpuarr did sees no pip driver. A single `.icd` file
in OCL_ICD_VENDORS is the user's explicit choice and is left alone.
"""

import contextlib
import hashlib
import importlib.metadata
import os
import tempfile

from . import config

__all__ = ["PIP_DRIVERS", "driver_library", "register"]

# pip distribution -> the driver library it installs under <prefix>/lib
PIP_DRIVERS = {"intel-opencl-rt": "libintelocl.so"}
_SYSTEM_VENDORS = "/etc/OpenCL/vendors"
_OWN_PREFIX = "zz-gpuarr-"  # sorts after the system's entries

_registered = None  # the folder register() chose, "" when it chose none


def driver_library(distribution, library):
    """The installed path of `library` shipped by pip distribution `distribution`, or None."""
    try:
        dist = importlib.metadata.distribution(distribution)
    except importlib.metadata.PackageNotFoundError:
        return None
    for f in dist.files or ():
        if f.name == library:
            path = os.path.abspath(str(dist.locate_file(f)))
            if os.path.isfile(path):
                return path
    return None


def _read_entries(folder):
    entries = {}
    with contextlib.suppress(OSError):
        for name in sorted(os.listdir(folder)):
            if not name.endswith(".icd") or name.startswith(_OWN_PREFIX):
                continue
            with contextlib.suppress(OSError, UnicodeDecodeError), \
                    open(os.path.join(folder, name)) as f:
                entries[name] = f.read().strip()
    return entries


def _write_entries(folder, entries):
    """Make `folder`'s .icd files exactly `entries` ({file name: library path}); each file is
    replaced atomically, so a concurrent loader never reads half an entry."""
    for name in set(os.listdir(folder)) - set(entries):
        if name.endswith(".icd"):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(folder, name))
    for name, library in entries.items():
        path = os.path.join(folder, name)
        with contextlib.suppress(OSError), open(path) as f:
            if f.read().strip() == library:
                continue
        fd, tmp = tempfile.mkstemp(dir=folder, suffix=".tmp")
        with os.fdopen(fd, "w") as f:
            f.write(library + "\n")
        os.replace(tmp, path)


def register():
    """Register pip-installed drivers with the ICD loader (once per process).

    Returns the vendors folder now in OCL_ICD_VENDORS, or None where no pip driver is
    installed, OCL_ICD_VENDORS names a single file, or no private folder could be made.
    """
    global _registered
    if _registered is None:
        _registered = _register() or ""
    return _registered or None


def _register():
    libraries = {d: p for d, lib in PIP_DRIVERS.items() if (p := driver_library(d, lib))}
    if not libraries:
        return None
    source = (os.environ.get("OCL_ICD_VENDORS") or os.environ.get("OPENCL_VENDOR_PATH")
              or _SYSTEM_VENDORS)
    if os.path.isfile(source):
        return None
    # One folder per source folder: processes started with different OCL_ICD_VENDORS must not
    # rewrite each other's list. A child that inherited one of these folders keeps it.
    root = config.cache_path("icd")
    source = os.path.abspath(source)
    if os.path.dirname(source) == root:
        folder = source
    else:
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        folder = os.path.join(root, digest)
    folder = config.private_dir(folder, "the OpenCL driver list (gpuarr.icd)")
    if folder is None:
        return None
    entries = _read_entries(source)
    entries.update({f"{_OWN_PREFIX}{d}.icd": p for d, p in libraries.items()})
    try:
        _write_entries(folder, entries)
    except OSError:
        return None
    os.environ["OCL_ICD_VENDORS"] = folder
    return folder
