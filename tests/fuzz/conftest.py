"""Hypothesis profiles of the differential fuzz tests (tests/fuzz/).

    python -m pytest -q tests/fuzz                               # ci: fixed seed, 505 cases
    python -m pytest -q tests/fuzz --hypothesis-profile=long     # 17,170 random cases

Each test runs `settings.max_examples * weight` cases of the active profile (see
support.fuzz_settings); `ci` is also what the whole suite's `pytest -q` uses. Name the
folder when loading `long`: these profiles are registered only once this file is read.
"""

from hypothesis import HealthCheck, settings

_COMMON = dict(deadline=None, database=None, print_blob=True,
               suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large,
                                      HealthCheck.filter_too_much,
                                      HealthCheck.function_scoped_fixture])

settings.register_profile("ci", derandomize=True, max_examples=50, **_COMMON)
settings.register_profile("long", derandomize=False, max_examples=1700, **_COMMON)
