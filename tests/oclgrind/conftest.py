"""Run tests/oclgrind on the Oclgrind platform only, and fail a test on any Oclgrind report.

.ci/run registers Oclgrind (an OpenCL device simulator) through OCL_ICD_VENDORS, turns on
its API and data-race checks (OCLGRIND_CHECK_API=1, OCLGRIND_DATA_RACES=1) and runs

    PYOPENCL_NO_CACHE=1 GPUARR_TEST_DEVICE=cl:Oclgrind python -m pytest -q tests/oclgrind

(PYOPENCL_NO_CACHE: programs built from pyopencl's binary cache carry no source, and the
reviewed reports below are recognised by the source lines Oclgrind quotes.)

Oclgrind writes each report (invalid or out-of-bounds access, data race, barrier divergence,
API misuse, fatal error) to stderr; the fixture below reads the test's stderr and fails on
any text left after removing the two kinds of report reviewed as harmless (ALLOWED).
"""

import re

import pytest
from conftest import USABLE

ON_OCLGRIND = USABLE[0].platform == "Oclgrind"

# Reviewed reports, each (why, predicate on a report's text):
ALLOWED = [
    # pyopencl asks every device for NVIDIA's CL_DEVICE_COMPUTE_CAPABILITY_*_NV (to detect
    # NVIDIA GPUs) and catches the CL_INVALID_VALUE other devices answer.
    ("pyopencl's vendor probe",
     lambda r: r.startswith("Oclgrind - OpenCL runtime error detected")
     and "Function: clGetDeviceInfo" in r and "CL_INVALID_VALUE" in r and "'param_name'" in r),
    # The one-launch reduction (reduction.cl.mako, finish=True): each work-group stores its
    # partial, mem_fence, atomic_inc of the output's counter; the last group reads the
    # partials (volatile) and resets the counter. OpenCL 1.2 has no ordering between
    # work-groups, so Oclgrind calls this hand-off a race; only these statements may race.
    ("reduction's inter-group hand-off",
     lambda r: "data race" in r.splitlines()[0] and "Kernel: reduce" in r
     and _statements(r) and _statements(r) <= _HANDOFF),
]

_HANDOFF = {
    "part_p[p * ga_m + o] = acc;",
    "part_idx[p * ga_m + o] = idx;",
    "ga_last = atomic_inc(&counters[o]) == (uint)(ga_parts - 1);",
    "const T w = ((volatile __global T *)part_p)[q * ga_m + o];",
    "GA_COMBINE(acc, idx, w, ((volatile __global long *)part_idx)[q * ga_m + o])",
    "if (lid == 0) counters[o] = 0;",
}


def _statements(report):
    """The source lines a report quotes (after 'At line N of input.cl:'), types as T."""
    lines = report.splitlines()
    found = {lines[k + 1].strip() for k, line in enumerate(lines[:-1])
             if re.match(r"\s*At line \d+", line)}
    return {re.sub(r"\b(float|double|int|uint|long|ulong|short|ushort|char|uchar|half)\b "
                   r"(w =|\*\)part_p)", r"T \2", s) for s in found}


def reports(text):
    """Oclgrind's reports in `text`: blocks that start at an unindented line."""
    blocks = []
    for line in text.splitlines():
        if line.strip() and not line[0].isspace():
            blocks.append(line)
        elif blocks:
            blocks[-1] += "\n" + line
    return [b.strip() for b in blocks]


def unexpected(text):
    """The reports in `text` that no ALLOWED entry covers."""
    return [r for r in reports(text) if not any(ok(r) for _, ok in ALLOWED)]


def pytest_collection_modifyitems(config, items):
    if ON_OCLGRIND:
        return
    skip = pytest.mark.skip(reason="Oclgrind checks: .ci/run runs these on the Oclgrind "
                                   "platform (GPUARR_TEST_DEVICE=cl:Oclgrind)")
    for item in items:
        if "tests/oclgrind/" in str(item.fspath).replace("\\", "/"):
            item.add_marker(skip)


@pytest.fixture(autouse=True)
def oclgrind_clean(ctx, capfd):
    """Fail the test if Oclgrind reported anything while it ran."""
    capfd.readouterr()
    yield
    ctx.sync()
    err = capfd.readouterr().err
    bad = unexpected(err)
    hint = "\n\n(set PYOPENCL_NO_CACHE=1 to let Oclgrind quote the source)" \
        if "(source not available)" in err else ""
    assert not bad, "Oclgrind reported:\n\n" + "\n\n".join(bad) + hint
