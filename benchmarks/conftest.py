"""pytest-benchmark suite over the cases of gpuarr/bench.py (the table `python -m gpuarr bench`
runs too), parametrized over backends: numpy, gpuarr and pyopencl.array on each chosen device,
cupy when it finds a CUDA device.

    pytest benchmarks/                                       # full sizes, every usable device
    pytest benchmarks/bench_elemwise.py --bench-size=quick --bench-devices=cl0:0
    pytest benchmarks/ --benchmark-disable --bench-size=tiny # checks every case, times nothing

Options (and environment variables): --bench-size tiny|quick|full (GPUARR_BENCH_SIZE, default
full), --bench-devices cl0:0,cl:nvidia,... or default (GPUARR_BENCH_DEVICES, default every
usable device), --bench-libs numpy,gpuarr,pyopencl,cupy (GPUARR_BENCH_LIBS). Each group is one
operation at one size across backends; after the run a table gives GB/s or TFLOP/s, the
speedup over numpy and the ratio to the device's copy bandwidth or to the best peer.
"""

import os

# Two PoCL devices per platform, so that the collectives have two contexts in one process.
os.environ.setdefault("POCL_DEVICES", "pthread pthread")

import pytest

from gpuarr import bench as cases

ROUNDS = {"tiny": 1, "quick": 3, "full": 10}  # latency cases: rounds of `calls` calls
_chosen = {}
_results = []


def pytest_addoption(parser):
    group = parser.getgroup("gpuarr bench")
    group.addoption("--bench-size", choices=cases.SIZES,
                    default=os.environ.get(cases.SIZE_ENV) or "full",
                    help=f"size class (env {cases.SIZE_ENV}; default full)")
    group.addoption("--bench-devices", default=os.environ.get("GPUARR_BENCH_DEVICES"),
                    help="comma separated device strings or context names, or 'default' "
                         "(env GPUARR_BENCH_DEVICES; default every usable device)")
    group.addoption("--bench-libs", default=os.environ.get("GPUARR_BENCH_LIBS"),
                    help="comma separated, of numpy,gpuarr,pyopencl,cupy (env "
                         "GPUARR_BENCH_LIBS; default all there)")


def _selection(config):
    if not _chosen:
        contexts = cases.devices(config.getoption("bench_devices"))
        _chosen.update(contexts=contexts,
                       backends=cases.backends(contexts, config.getoption("bench_libs")))
    return _chosen


def pytest_generate_tests(metafunc):
    """Parametrize `bench_case` over the cases of the module's FAMILIES."""
    if "bench_case" in metafunc.fixturenames:
        chosen = _selection(metafunc.config)
        insts = cases.instances(metafunc.config.getoption("bench_size"), chosen["backends"],
                                chosen["contexts"], families=metafunc.module.FAMILIES)
        metafunc.parametrize("bench_case", insts, ids=[i.id for i in insts], indirect=True)


@pytest.fixture
def bench_case(request, benchmark):
    """A function that sets the case up, checks it against numpy, then times it."""
    inst = request.param

    def run():
        try:
            timed = inst.prepare()
        except cases.Skip as e:
            pytest.skip(str(e))
        benchmark.group = inst.group
        benchmark.extra_info.update({k: v for k, v in inst.result().items()
                                     if k not in ("seconds", "status", "note")})
        if timed.calls == 1 or benchmark.disabled:
            benchmark(timed.round)
        else:  # many calls, one sync: pytest-benchmark reports the time per call
            benchmark.pedantic(timed.stepper(), iterations=timed.calls,
                               rounds=ROUNDS[inst.size], warmup_rounds=1)
            inst.backend.sync(None)
        if not benchmark.disabled and benchmark.stats:
            _results.append(inst.result(benchmark.stats.stats.min))
    return run


def pytest_terminal_summary(terminalreporter):
    if _results:
        terminalreporter.section("gpuarr bench: throughput, speedup over numpy, ratios")
        terminalreporter.write_line(cases.text(_results))
