"""The package's shape: the layers of docs/architecture.md hold for every import (those inside
functions too), no import cycle, every module in the diagram; GpuArray is declared, not
assembled at import; and each ufunc of the table reaches the namespace, the operators and
the symbolic layer."""

import ast
import operator
import pathlib
import re

import numpy as np
import pytest

import gpuarr as ga
import gpuarr.symbolic as T
from gpuarr import array_api, protocols, ufuncs
from gpuarr.array import GpuArray
from gpuarr.base import ArrayBase
from gpuarr.symbolic import elemwise as symbolic_elemwise
from gpuarr.symbolic.variables import TensorVariable, VariableMethods

PACKAGE = pathlib.Path(ga.__file__).parent
DOC = PACKAGE.parent / "docs" / "architecture.md"


# ---------------------------------------------------------------- the layers

def _modules(package=PACKAGE):
    """{'gpuarr.base': gpuarr/base.py, 'gpuarr.symbolic': gpuarr/symbolic/__init__.py, ...}"""
    found = {}
    for path in sorted(package.rglob("*.py")):
        parts = path.relative_to(package.parent).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def _imports(name, path, modules):
    """The gpuarr modules `name` imports anywhere in its source (functions included); a
    module of a subpackage brings in the subpackage's __init__ too."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[:len(package.split(".")) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            subs = [f"{target}.{a.name}" for a in node.names if f"{target}.{a.name}" in modules]
            found.update(subs or [target])
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    result = set()
    for target in found:
        if target.partition(".")[0] != "gpuarr":
            continue
        while target not in modules:  # `from gpuarr.x import name`: name is no module
            target = target.rpartition(".")[0]
        # the parent packages that importing `target` runs, up to the importer's own
        parts = target.split(".")
        for k in range(2, len(parts) + 1):
            parent = ".".join(parts[:k])
            if not (name == parent or name.startswith(parent + ".")):
                result.add(parent)
    result.discard(name)
    return result


def _diagram():
    """[(module, layer name)] from docs/architecture.md's diagram, top line first."""
    text = DOC.read_text()
    block = re.search(r"```text\n(.*?)```", text, re.S)
    assert block, "docs/architecture.md has no ```text diagram"
    rows, layer = [], None
    for line in block.group(1).splitlines():
        if not line.strip():
            continue
        head = re.match(r"== (\d+) (.+?) =+$", line)
        if head:
            layer = head.group(2)
            continue
        m = re.match(r"(\S+)\s{2,}\S", line)
        assert m and layer, f"docs/architecture.md: cannot read diagram line {line!r}"
        rows.append(("gpuarr" if m.group(1) == "gpuarr" else "gpuarr." + m.group(1), layer))
    return rows


def test_diagram_lists_every_module_once():
    modules = _modules()
    listed = [m for m, _ in _diagram()]
    dup = {m for m in listed if listed.count(m) > 1}
    assert not dup, f"docs/architecture.md lists these modules twice: {sorted(dup)}"
    missing = sorted(set(modules) - set(listed))
    assert not missing, (f"modules missing from docs/architecture.md's diagram (give each a "
                         f"line in its layer): {missing}")
    stale = sorted(set(listed) - set(modules))
    assert not stale, f"docs/architecture.md's diagram names modules that do not exist: {stale}"


def test_imports_go_down_the_diagram():
    """A module imports only modules listed below it (a lower layer, or lower in its own)."""
    modules = _modules()
    rows = _diagram()
    height = {m: len(rows) - k for k, (m, _) in enumerate(rows)}  # bottom line: 1
    layer = dict(rows)
    bad = []
    for name, path in modules.items():
        for target in sorted(_imports(name, path, modules)):
            if name in height and target in height and height[target] >= height[name]:
                bad.append(f"{name} ({layer[name]}) imports {target} ({layer[target]}), "
                           f"which the diagram lists above it")
    assert not bad, "imports going up docs/architecture.md's diagram:\n" + "\n".join(bad)


def _cycles(graph):
    """The strongly connected components of more than one module (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on.add(v)
        for w in graph[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in graph:
        if v not in index:
            visit(v)
    return found


def test_no_import_cycle():
    modules = _modules()
    graph = {name: _imports(name, path, modules) for name, path in modules.items()}
    cycles = _cycles(graph)
    assert not cycles, "import cycles (deferred imports count):\n" + "\n".join(
        f"{c}: " + "; ".join(f"{a} -> {sorted(graph[a] & set(c))}" for a in c) for c in cycles)


def test_cycle_finder_finds_a_deferred_cycle(tmp_path):
    """The checks above see imports inside functions."""
    pkg = tmp_path / "gpuarr"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from . import b\n")
    (pkg / "b.py").write_text("def f():\n    from .a import g\n")
    modules = _modules(pkg)
    graph = {n: _imports(n, p, modules) for n, p in modules.items()}
    assert _cycles(graph) == [["gpuarr.a", "gpuarr.b"]]


def test_nothing_is_attached_at_import():
    """Classes are declared whole and namespaces named: no setattr on a class of the
    package, no globals().update, no _install."""
    pattern = re.compile(r"setattr\(\s*(cls|GpuArray|ArrayBase|Symbol|Variable)\b"
                         r"|globals\(\)\.update|vars\(\)\.update|def _install")
    hits = [f"{p.relative_to(PACKAGE.parent)}:{k}: {line.strip()}"
            for p in sorted(PACKAGE.rglob("*.py"))
            for k, line in enumerate(p.read_text().splitlines(), 1) if pattern.search(line)]
    assert not hits, "\n".join(hits)


def test_every_module_has_all():
    missing = [name for name, path in _modules().items()
               if not re.search(r"^__all__ = ", path.read_text(), re.M)]
    assert not missing, f"modules without __all__: {missing}"


def test_the_array_class_is_the_factorys():
    """Engines make GpuArrays through base's factory; a later subclass does not replace it."""
    class Mine(GpuArray):
        pass

    assert issubclass(GpuArray, ArrayBase)
    assert type(ArrayBase._empty(ga.get_context(), (2,), np.dtype(np.float32))) is GpuArray
    x = ga.zeros(3, np.float32)
    assert type(x) is GpuArray and type(x[1:]) is GpuArray and type(x + 1) is GpuArray
    with pytest.raises(TypeError, match="already"):
        class Other(ArrayBase, concrete=True):
            pass


# ---------------------------------------------------------------- the ufunc table

class _Recorder(ufuncs.Symbol):
    """A traced operand: a gpuarr ufunc called with it returns the ufunc's name."""

    dtype = np.dtype(np.float64)

    def record(self, ufunc, args):
        return ufunc.name


class _NumpyCalled(Exception):
    pass


class _NumpyProbe(np.ndarray):
    """An ndarray whose operators tell which numpy ufunc they call."""

    def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
        raise _NumpyCalled(ufunc)


_BINARY = ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "lshift",
           "rshift", "and", "xor", "or")
_DUNDERS = ([f"__{p}{d}__" for d in _BINARY for p in ("", "r", "i")]
            + [f"__{d}__" for d in ("neg", "pos", "abs", "invert", "lt", "le", "eq", "ne",
                                    "gt", "ge")])


def _numpy_operators():
    """{dunder: the numpy ufunc ndarray's operator calls}."""
    probe = np.zeros(1).view(_NumpyProbe)
    found = {}
    for dunder in _DUNDERS:
        method = getattr(probe, dunder, None)
        if method is None:
            continue
        unary = dunder[2:-2] in ("neg", "pos", "abs", "invert")
        try:
            method() if unary else method(1)
        except _NumpyCalled as called:
            found[dunder] = called.args[0]
    return found


NUMPY_OPERATORS = _numpy_operators()
UNARY_DUNDERS = {"__neg__", "__pos__", "__abs__", "__invert__"}


def test_numpy_operator_probe_sees_the_operators():
    assert NUMPY_OPERATORS["__add__"] is np.add
    assert NUMPY_OPERATORS["__rsub__"] is np.subtract
    assert NUMPY_OPERATORS["__itruediv__"] is np.true_divide
    assert NUMPY_OPERATORS["__invert__"] is np.invert
    assert NUMPY_OPERATORS["__ge__"] is np.greater_equal


@pytest.mark.parametrize("name", sorted(ufuncs.UFUNCS))
def test_ufunc_reaches_the_namespace(name):
    uf = ufuncs.UFUNCS[name]
    assert name in ga.__all__ and name in dir(ga)
    got = getattr(ga, name)
    # a later family may take the name over (the Array API's clip takes min=/max=)
    assert got is uf or got is array_api.FUNCTIONS.get(name), (name, got)
    namespace = {}
    exec(f"from gpuarr import {name} as found", namespace)
    assert namespace["found"] is got
    if uf.np_ufunc is not None:  # numpy's ufunc on a GpuArray reaches this one
        assert ufuncs.lookup(uf.np_ufunc.__name__) is uf


@pytest.mark.parametrize("alias", sorted(ufuncs.ALIASES))
def test_ufunc_alias_reaches_the_namespace(alias):
    assert getattr(ga, alias) is ufuncs.UFUNCS[ufuncs.ALIASES[alias]]
    assert alias in ga.__all__


@pytest.mark.parametrize("dunder", sorted(NUMPY_OPERATORS))
def test_gpuarray_operator_calls_the_ufunc_numpy_calls(dunder):
    """Where numpy's ndarray has an operator for a ufunc gpuarr has, GpuArray has it too
    and calls that ufunc (x op= y included, through the Array API's dtype check)."""
    uf = ufuncs.lookup(NUMPY_OPERATORS[dunder].__name__)
    if uf is None:  # np.matmul and the like: not an elementwise ufunc of the table
        assert hasattr(GpuArray, dunder)
        return
    method = getattr(GpuArray, dunder)
    rec = _Recorder()
    assert (method(rec) if dunder in UNARY_DUNDERS else method(rec, 1)) == uf.name


def test_operator_tables_and_classes_agree():
    """UfuncOperators spells out exactly the operators of ufuncs.py's tables."""
    tables = ufuncs._BINARY_OPERATORS + ufuncs._UNARY_OPERATORS + ufuncs._COMPARISONS
    expected = {f"__{p}{d}__" for d, _ in ufuncs._BINARY_OPERATORS for p in ("", "r", "i")}
    expected |= {f"__{d}__" for d, _ in ufuncs._UNARY_OPERATORS + ufuncs._COMPARISONS}
    defined = {k for k in vars(ufuncs.UfuncOperators) if k.startswith("__") and k not in (
        "__module__", "__qualname__", "__doc__", "__dict__", "__weakref__", "__hash__",
        "__array_ufunc__", "__firstlineno__", "__static_attributes__")}
    assert defined == expected
    for dunder, name in tables:
        assert name in ufuncs.UFUNCS, (dunder, name)


@pytest.mark.parametrize("name", sorted(ufuncs.UFUNCS))
def test_ufunc_reaches_the_symbolic_layer(name):
    uf = ufuncs.UFUNCS[name]
    op = getattr(T, name)
    assert op is symbolic_elemwise.FUNCTIONS[name] and name in T.__all__
    for dt in ("float64", "int64", "bool"):
        try:
            uf.resolve((np.dtype(dt),) * uf.nin)
        except ga.errors.UnsupportedError:
            continue
        break
    args = [T.tensor(dt, (False,), name=f"x{k}") for k in range(uf.nin)]
    out = op(*args)
    assert isinstance(out, T.Variable) and out.dtype == np.dtype(uf.resolve(
        tuple(np.dtype(dt) for _ in args))[1])


_SYMBOLIC_OPERATORS = [(d, n) for d, n in ufuncs._BINARY_OPERATORS + ufuncs._COMPARISONS
                       if d not in ("eq", "ne")]  # == stays identity on variables


@pytest.mark.parametrize(("dunder", "name"), _SYMBOLIC_OPERATORS)
def test_symbolic_operator_builds_the_ufuncs_op(dunder, name):
    x, y = T.lvector("x"), T.lvector("y")
    want = symbolic_elemwise.FUNCTIONS[name]
    for prefix in ("", "r", "i"):
        method = getattr(TensorVariable, f"__{prefix}{dunder}__", None)
        if method is None:
            assert dunder in dict(ufuncs._COMPARISONS) and prefix
            continue
        got = method(x, y).owner
        ref = (want(y, x) if prefix == "r" else want(x, y)).owner
        assert got.op == ref.op and got.inputs == ref.inputs, (dunder, prefix)


@pytest.mark.parametrize(("dunder", "name"), ufuncs._UNARY_OPERATORS)
def test_symbolic_unary_operator_builds_the_ufuncs_op(dunder, name):
    x = T.lvector("x")
    got = getattr(VariableMethods, f"__{dunder}__")(x).owner
    assert got.op == symbolic_elemwise.FUNCTIONS[name](x).owner.op


def test_namespace_lookup_stays_cheap():
    """A table name, once looked up, is a plain module attribute."""
    ga.exp  # noqa: B018 (the first lookup)
    assert vars(ga)["exp"] is ufuncs.UFUNCS["exp"]
    with pytest.raises(AttributeError, match="no_such_name"):
        ga.no_such_name  # noqa: B018


def test_numpy_function_table_reaches_table_names():
    """numpy's __array_function__ finds gpuarr's table-driven names."""
    table = protocols.table()
    assert table[np.sum].fn is ga.sum and table[np.concatenate].fn is ga.concatenate
    assert operator.contains(table, np.take)
