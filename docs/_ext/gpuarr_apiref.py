"""The API reference's pages, generated from the package's exports at every build.

What is public: `gpuarr.__all__` (less the submodules it names) and the `__all__` of the
namespaces, which are the submodules `gpuarr.__all__` names and EXTRA_NAMESPACES (less their
ALL_CAPS constants, which are settings of the engines, not API), plus the few classes users
import from engine modules (EXTRA). Each name goes to one group of GROUPS, in numpy's order:
first by numpy's category for the name (BY_NAME), else by the module that defines it
(BY_MODULE), else to "other". A name added to a module's `__all__`, or a namespace added to
`gpuarr.__all__`, therefore lands in the reference with no edit here.

`write(srcdir)` writes `reference/generated/`: one page per group (`gNN-slug.rst`, which
`reference/index.md` takes in by a glob), with a summary table per section and each name's
documentation below it. (One page per name, numpy's layout, made every page carry a sidebar
of 600 entries and the build take minutes.)
tests/test_docs.py imports this module to compare the reference with the exports.
"""

import importlib
import inspect
import shutil
from pathlib import Path

import numpy as np

# Namespaces documented name by name: the submodules gpuarr.__all__ names (namespaces()),
# and these, which it does not.
EXTRA_NAMESPACES = ["symbolic", "dask_backend"]
# The group of each namespace's names; a namespace not listed goes to "other".
NAMESPACE_GROUP = {"linalg": "linalg", "blas": "linalg", "fft": "fft", "random": "random",
                   "collectives": "collectives", "errors": "errors", "config": "devices",
                   "symbolic": "symbolic", "dask_backend": "dask"}
# Public classes of engine modules that gpuarr's namespace does not re-export.
EXTRA = ["gpuarr.reduction.ReductionKernel", "gpuarr.reduction.ScanKernel",
         "gpuarr.fusion.Fused"]

# (slug, title, intro); the order is the reference's.
GROUPS = [
    ("array", "The GpuArray", "The array class: layout, transfers, views and its methods."),
    ("creation", "Array creation", "New arrays: from host data, filled, ranges, grids."),
    ("manipulation", "Array manipulation",
     "Shape, transposition, joining, splitting, tiling, flipping. Views where numpy "
     "returns views."),
    ("ufuncs", "Mathematical functions (ufuncs)",
     "numpy's ufuncs: `out=`, `dtype=`, `casting=`, `where=`, numpy 2's promotion and "
     "broadcasting. The Array API's spellings (`acos`, `pow`, `bitwise_invert`, ...) are "
     "the same objects."),
    ("math", "Mathematical routines",
     "Differences and integrals, vector products, convolution, interpolation, polynomials, "
     "special functions and tolerance comparisons, composed on the device."),
    ("reductions", "Reductions and statistics",
     "Sums, extrema, means, variances and scans over any axes; the result stays on the "
     "device (a 0-d array for a full reduction)."),
    ("sorting", "Sorting, searching and counting", "Radix sort on the device, "
     "searchsorted, unique, arg-extrema and nonzero."),
    ("sets", "Set routines", "Membership and set operations, by sorting on the device."),
    ("indexing", "Indexing routines",
     "Integer and boolean indexing as functions (`x[key]` does the same)."),
    ("linalg", "Linear algebra", "Products, einsum, `gpuarr.linalg` and pygpu's BLAS "
     "names in `gpuarr.blas`."),
    ("fft", "Discrete Fourier transform (gpuarr.fft)", "numpy.fft's names."),
    ("random", "Random sampling (gpuarr.random)",
     "Philox4x32-10 counter-based generator: the same numbers on every device."),
    ("io", "Input and output",
     "numpy's file formats, read and written through the host, and memory overlap "
     "(`may_share_memory`, `shares_memory`). Pickling and DLPack: docs/compatibility.md."),
    ("dtypes", "Data types and constants",
     "dtype objects (numpy's), dtype routines and numpy's constants."),
    ("devices", "Devices, contexts and flags",
     "Listing devices, opening named contexts, the flags (`gpuarr.config`)."),
    ("kernels", "Kernels", "Your own elementwise, reduction and scan kernels, and `fuse`."),
    ("collectives", "Collectives (gpuarr.collectives)",
     "pygpu's collectives between contexts of one process and across MPI processes."),
    ("errors", "Errors (gpuarr.errors)",
     "Every exception gpuarr raises; each also derives from the matching builtin."),
    ("symbolic", "Symbolic layer (gpuarr.symbolic)",
     "Theano-style graphs: variables, shared variables, function, grad (docs/symbolic.md)."),
    ("dask", "dask.array and dask.distributed (gpuarr.dask_backend)",
     "gpuarr chunks in dask arrays: the array backend, the worker plugin (docs/dask.md); "
     "needs the extra `gpuarr[dask]`."),
    ("other", "Other names", "Public names no group claims yet."),
]
TITLES = {slug: title for slug, title, _ in GROUPS}


def _words(text):
    return text.split()


_CREATION = _words("""array asarray asanyarray ascontiguousarray empty empty_like zeros zeros_like
ones ones_like full full_like arange linspace logspace geomspace eye identity meshgrid tri diag
diagflat from_dlpack frombuffer copy""")
_MANIPULATION = _words("""reshape ravel squeeze expand_dims swapaxes transpose moveaxis permute_dims
broadcast_to broadcast_arrays atleast_1d atleast_2d atleast_3d concatenate concat stack
unstack vstack hstack dstack column_stack split array_split hsplit vsplit dsplit tile repeat
flip fliplr flipud roll pad tril triu matrix_transpose broadcast_shapes""")
_UFUNC_LIKE = _words("around round fix real imag nan_to_num clip where")
_SORTING = _words("""sort argsort partition argpartition searchsorted unique unique_all
unique_counts unique_inverse unique_values argmax argmin nonzero argwhere flatnonzero count_nonzero
lexsort""")
_INDEXING = _words("take take_along_axis put compress select")
_LINALG = _words("dot vdot inner outer matmul tensordot einsum einsum_path vecdot diagonal trace")
_DTYPES = _words("""astype can_cast result_type finfo iinfo isdtype common_type min_scalar_type
iscomplexobj isrealobj""")
_REDUCTIONS = _words("cumulative_sum cumulative_prod")
_DEVICES = _words("__array_namespace_info__ set_array_api_version")

BY_NAME = {
    **dict.fromkeys(_CREATION, "creation"), **dict.fromkeys(_MANIPULATION, "manipulation"),
    **dict.fromkeys(_UFUNC_LIKE, "ufuncs"), **dict.fromkeys(_SORTING, "sorting"),
    **dict.fromkeys(_INDEXING, "indexing"), **dict.fromkeys(_LINALG, "linalg"),
    **dict.fromkeys(_DTYPES, "dtypes"), **dict.fromkeys(_REDUCTIONS, "reductions"),
    **dict.fromkeys(_DEVICES, "devices"),
}
BY_MODULE = {
    "gpuarr.array": "array", "gpuarr.base": "creation", "gpuarr.manipulation": "manipulation",
    "gpuarr.ufuncs": "ufuncs", "gpuarr.reduction": "reductions", "gpuarr.sorting": "sorting",
    "gpuarr.indexing": "indexing", "gpuarr.blas": "linalg", "gpuarr.contraction": "linalg",
    "gpuarr.linalg": "linalg", "gpuarr.fft": "fft", "gpuarr.random": "random",
    "gpuarr.dtypes": "dtypes", "gpuarr.context": "devices", "gpuarr.config": "devices",
    "gpuarr.elemwise": "kernels", "gpuarr.fusion": "kernels",
    "gpuarr.statistics": "reductions", "gpuarr.setops": "sets", "gpuarr.editing": "manipulation",
    "gpuarr.numerical": "math", "gpuarr.polynomials": "math", "gpuarr.indextricks": "indexing",
    "gpuarr.inquiry": "array",
    "gpuarr.collectives": "collectives", "gpuarr.errors": "errors", "gpuarr.interop": "io",
}
KERNELS = {"ElemwiseKernel", "ReductionKernel", "ScanKernel", "fuse", "Fused"}

# Subsections of the ufunc group, as numpy's "Mathematical functions" page has them.
UFUNC_SECTIONS = [
    ("Arithmetic", """add subtract multiply divide true_divide floor_divide remainder mod fmod
    power pow float_power negative positive absolute abs fabs sign reciprocal square sqrt cbrt
    conjugate conj heaviside real imag clip nan_to_num"""),
    ("Exponents and logarithms", """exp exp2 expm1 log log2 log10 log1p logaddexp
    logaddexp2"""),
    ("Trigonometric and hyperbolic", """sin cos tan arcsin arccos arctan arctan2 asin acos
    atan atan2 hypot sinh cosh tanh arcsinh arccosh arctanh asinh acosh atanh deg2rad rad2deg
    degrees radians"""),
    ("Rounding and floating point", """floor ceil trunc rint around round fix maximum minimum
    fmax fmin isnan isinf isfinite signbit copysign nextafter ldexp"""),
    ("Comparison and logic", """greater greater_equal less less_equal equal not_equal
    logical_and logical_or logical_xor logical_not where"""),
    ("Bitwise", """bitwise_and bitwise_or bitwise_xor invert bitwise_not bitwise_invert
    left_shift right_shift bitwise_left_shift bitwise_right_shift"""),
]


def _is_module(obj):
    return inspect.ismodule(obj)


def _defining_module(obj):
    if inspect.isfunction(obj) or inspect.isclass(obj):
        return obj.__module__
    return type(obj).__module__


def namespaces():
    """The submodules documented name by name: those gpuarr.__all__ names, then
    EXTRA_NAMESPACES."""
    import gpuarr

    subs = [n for n in gpuarr.__all__ if _is_module(getattr(gpuarr, n))]
    return subs + [n for n in EXTRA_NAMESPACES if n not in subs]


def public_api():
    """{qualified name: object} of every public name, in a stable order."""
    import gpuarr

    names = {}
    for name in gpuarr.__all__:
        obj = getattr(gpuarr, name)
        if not _is_module(obj):
            names[f"gpuarr.{name}"] = obj
    for sub in namespaces():
        module = importlib.import_module(f"gpuarr.{sub}")
        for name in module.__all__:
            obj = getattr(module, name)
            if name.isupper() or _is_module(obj):
                continue
            names[f"gpuarr.{sub}.{name}"] = obj
    for qualified in EXTRA:
        module, _, name = qualified.rpartition(".")
        names[qualified] = getattr(importlib.import_module(module), name)
    return names


def group_of(qualified, obj):
    """The slug of the group that documents `qualified`."""
    parts = qualified.split(".")
    name = parts[-1]
    if len(parts) > 2:  # a name of a namespace: its section
        sub = parts[1]
        if name in KERNELS and sub != "symbolic":
            return "kernels"
        return NAMESPACE_GROUP.get(sub, "other")
    if name in KERNELS:
        return "kernels"
    if name in BY_NAME:
        return BY_NAME[name]
    if isinstance(obj, np.dtype | float) or obj is None:
        return "dtypes"
    from gpuarr.ufuncs import Ufunc

    if isinstance(obj, Ufunc):
        return "ufuncs"
    return BY_MODULE.get(_defining_module(obj), "other")


def grouped():
    """{slug: [qualified names]} over GROUPS, every public name in exactly one group."""
    groups = {slug: [] for slug, _, _ in GROUPS}
    for qualified, obj in public_api().items():
        groups[group_of(qualified, obj)].append(qualified)
    return groups


def kind_of(obj):
    """How a page documents obj: 'class', 'exception', 'function' or 'data'."""
    from gpuarr.ufuncs import Ufunc

    if inspect.isclass(obj):
        return "exception" if issubclass(obj, BaseException) else "class"
    if inspect.isfunction(obj) or inspect.isbuiltin(obj) or isinstance(obj, Ufunc):
        return "function"
    if callable(obj) and not isinstance(obj, np.dtype):
        return "function"
    return "data"


def needs_docstring(obj):
    """Whether obj is documented by its own docstring (functions, classes, ufuncs), not by
    a line of the reference (constants, dtypes)."""
    return kind_of(obj) != "data"


def own_doc(obj):
    """obj's own docstring ('' when it has none; a class does not inherit its base's)."""
    doc = obj.__dict__.get("__doc__") if inspect.isclass(obj) else getattr(obj, "__doc__", None)
    return inspect.cleandoc(doc) if isinstance(doc, str) else ""


def data_description(qualified, obj):
    """The line the reference gives a constant."""
    if isinstance(obj, np.dtype):
        return f"``numpy.dtype('{obj.name}')``: numpy's dtype object, usable wherever a " \
               "dtype is taken."
    if obj is None:
        return "``None``, as numpy's: ``x[:, newaxis]`` adds an axis of length 1."
    if isinstance(obj, float):
        return f"numpy's constant, ``{obj!r}``."
    return f"Value: ``{obj!r}``."


def _ufunc_signature(obj):
    args = ", ".join(["x"] if obj.nin == 1 else [f"x{i + 1}" for i in range(obj.nin)])
    return f"({args}, /, out=None, *, dtype=None, casting='same_kind', where=True)"


def _entry(qualified, obj):
    """The rst documenting one name on its group page (after `currentmodule` of its
    module)."""
    name = qualified.rpartition(".")[2]
    kind = kind_of(obj)
    from gpuarr.ufuncs import Ufunc

    if isinstance(obj, Ufunc):
        return f".. autofunction:: {name}{_ufunc_signature(obj)}\n"
    if kind == "data":
        return f".. data:: {name}\n\n   {data_description(qualified, obj)}\n"
    if kind == "exception":
        return f".. autoexception:: {name}\n   :show-inheritance:\n"
    if kind == "class":
        text = f".. autoclass:: {name}\n   :members:\n"
        if obj.__bases__ != (object,):
            text += "   :show-inheritance:\n"
        if obj.__module__ == "gpuarr.array":  # GpuArray: its mixins' methods too, in a table
            text += "   :inherited-members:\n   :undoc-members:\n"
            text += "   :special-members: __getitem__, __setitem__, __array_namespace__\n"
            members = sorted(n for n in dir(obj) if not n.startswith("_"))
            text += "\n   .. rubric:: Members\n\n   .. autosummary::\n\n"
            text += "".join(f"      ~{name}.{m}\n" for m in members)
        return text
    return f".. autofunction:: {name}\n"


def _underline(text, char):
    return f"{text}\n{char * len(text)}\n"


def _sections(slug, names, api):
    """[(heading, names)] of a group page ('' for a page of one section)."""
    if slug == "ufuncs":
        sections, rest = [], list(names)
        for heading, members in UFUNC_SECTIONS:
            members = set(members.split())
            chosen = [q for q in rest if q.rpartition(".")[2] in members]
            rest = [q for q in rest if q not in chosen]
            sections.append((heading, chosen))
        return [*sections, ("Other ufuncs", rest)]
    if slug in ("linalg", "devices", "kernels", "symbolic"):
        sections = {}
        for q in names:
            parts = q.split(".")
            if slug == "symbolic":
                key = _defining_module(api[q]).replace("gpuarr.symbolic.", "")
                key = f"gpuarr.symbolic ({key})" if key != "gpuarr.symbolic" else key
            else:
                key = "gpuarr" if len(parts) == 2 else ".".join(parts[:2])
            sections.setdefault(key, []).append(q)
        return list(sections.items())
    return [("", names)]


def _group_page(slug, title, intro, names, api):
    lines = [".. This page is generated by docs/_ext/gpuarr_apiref.py at every build.", "",
             _underline(title, "="), intro, ""]
    if not names:
        return "\n".join([*lines, "No names in this group.", ""])
    for heading, members in _sections(slug, names, api):
        if not members:
            continue
        if heading:
            lines.append(_underline(heading, "-"))
        # full names in the table, so no current module (autosummary warns on a prefix)
        lines += [".. currentmodule:: None", "", ".. autosummary::", ""]
        lines += [f"   {q}" for q in members] + [""]
        module = None
        for q in members:
            if q.rpartition(".")[0] != module:
                module = q.rpartition(".")[0]
                lines += [f".. currentmodule:: {module}", ""]
            lines += [_entry(q, api[q]), ""]
    return "\n".join(lines)


def write(srcdir):
    """Write reference/generated/ under srcdir (the docs folder), replacing what was there:
    one page per group, `gNN-slug.rst`, documenting each of its names."""
    out = Path(srcdir) / "reference" / "generated"
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    api = public_api()
    groups = grouped()
    for number, (slug, title, intro) in enumerate(GROUPS, 1):
        if slug == "other" and not groups[slug]:
            continue
        page = _group_page(slug, title, intro, groups[slug], api)
        (out / f"g{number:02d}-{slug}.rst").write_text(page)
    return out


# ---------------------------------------------------------------- docstrings as markdown-ish rst

_SECTION = {"Parameters", "Returns", "Yields", "Raises", "Examples", "Example", "Notes",
            "See Also", "Attributes", "Methods", "Warns", "Other Parameters", "References"}
_INLINE = None


def _escape_inline(line):
    """Escape `*` and `|` outside backtick spans: prose such as f(*args) or |x| is not
    rst markup in gpuarr's docstrings."""
    global _INLINE
    if _INLINE is None:
        import re

        _INLINE = re.compile(r"(`+)(.+?)\1|(?<!\\)([*|])")
    return _INLINE.sub(lambda m: m.group(0) if m.group(1) else "\\" + m.group(3), line)


def _indent(line):
    return len(line) - len(line.lstrip())


def rst_lines(lines):
    """gpuarr's docstrings (plain text, code in backticks, examples indented as in markdown)
    as rst for napoleon: an indented block after a blank line below an unindented paragraph,
    before the first numpy-style section, becomes a literal block; `*` and `|` in prose are
    escaped. Doctest blocks, literal blocks and directives are left as they are."""
    out = []
    in_sections = in_doctest = False
    literal = None  # the indent of the line that opened the current literal block
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            in_doctest = False
            out.append(line)
            continue
        following = lines[i + 1].strip() if i + 1 < len(lines) else ""
        if stripped in _SECTION and following and set(following) == {"-"}:
            in_sections = True
        if literal is not None and _indent(line) <= literal:
            literal = None
        if stripped.startswith(">>>"):
            in_doctest = True
        if (literal is None and not in_doctest and not in_sections and _indent(line) > 0
                and out and not out[-1].strip()):
            previous = next((p for p in reversed(out) if p.strip()), None)
            if previous is not None and _indent(previous) == 0:
                out[-1:] = ["", "::", ""]
                literal = 0
        if literal is not None or in_doctest or stripped.startswith(".. "):
            out.append(line)
        else:
            out.append(_escape_inline(line))
        if literal is None and not in_doctest and stripped.endswith("::"):
            literal = _indent(line)
    return out


def numpy_summary(ufunc):
    """The one-line summary of numpy's docstring of the ufunc ('Add arguments
    element-wise.'), or '' where numpy has none."""
    doc = getattr(getattr(ufunc, "np_ufunc", None), "__doc__", None) or ""
    paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip()]
    # numpy's ufunc docstrings open with the signature, then the summary
    for paragraph in paragraphs[:3]:
        if "(" in paragraph.split("\n")[0] and paragraph.rstrip().endswith(")"):
            continue
        return " ".join(paragraph.split())
    return ""


def process_docstring(app, what, name, obj, options, lines):
    """autodoc-process-docstring, before napoleon: see rst_lines. A ufunc's page and
    summary start with numpy's summary of it."""
    from gpuarr.ufuncs import Ufunc

    if isinstance(obj, Ufunc) and numpy_summary(obj):
        lines[:0] = [numpy_summary(obj), ""]
    lines[:] = rst_lines(lines)
