"""Module attributes looked up in a table on first use (PEP 562), for the namespaces whose
families come from one table (gpuarr, gpuarr.symbolic)."""

__all__ = ["table_attributes"]


def table_attributes(module_globals, table):
    """(__getattr__, __dir__) for the module of `module_globals` whose names of `table` are
    found there on first use and then kept as module attributes: a later lookup costs a
    plain attribute's ~6 ns instead of the ~250 ns of a __getattr__ call."""
    module = module_globals["__name__"]

    def __getattr__(name):
        try:
            value = table[name]
        except KeyError:
            raise AttributeError(f"module {module!r} has no attribute {name!r}") from None
        module_globals[name] = value
        return value

    def __dir__():
        return sorted({*module_globals, *table})

    return __getattr__, __dir__
