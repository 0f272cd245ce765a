"""OpenCL C snippets of the ufuncs, one table: name -> {dtype kind: (expression, helpers)}.

Kinds are numpy's: b bool, i signed, u unsigned, f float (float16 computes in float),
c complex; '*' serves every kind not listed. In an expression {0}, {1}, {2} stand for the
inputs (already in the loop dtype numpy's resolution chose), {T} for the compute type of the
first input's loop dtype. `helpers` name functions of ufunc_helpers.cl.mako emitted for T.
A ufunc/kind pair missing from the table is not supported and raises UnsupportedError.
"""

import numpy as np

__all__ = ["OPS", "expression", "operation", "snippet"]

_F = "f"


def _same(expr, helpers=()):
    return {"*": (expr, tuple(helpers))}


# The complex helper of each elementary function (ufunc_helpers.cl.mako), after the helpers
# it calls: C99 Annex G's special values and branch cuts, as numpy's complex loops give.
_COMPLEX = {
    "sqrt": ("csqrt",), "exp": ("cexp",), "exp2": ("cexp", "cexp2"),
    "expm1": ("cexp", "cexpm1"), "log": ("clog",), "log2": ("clog", "clog2"),
    "log10": ("clog", "clog10"), "log1p": ("clog", "clog1p"),
    "sinh": ("csinh",), "cosh": ("ccosh",), "tanh": ("ctanh",),
    "sin": ("csinh", "csin"), "cos": ("ccosh", "ccos"), "tan": ("ctanh", "ctan"),
    "arccos": ("csqrt", "cacos"), "arccosh": ("csqrt", "cacos", "cacosh"),
    "arcsinh": ("csqrt", "casin_finite", "casinh"),
    "arcsin": ("csqrt", "casin_finite", "casinh", "casin"),
    "arctanh": ("catanh",), "arctan": ("catanh", "catan"),
}
_CPOW = ("ga_cpow_{T}({0}, {1})", ("cmul", "cdiv", "cmul_inf", "cexp", "clog", "cpow"))


# The logarithms go through ufunc_helpers' 'logs' (a vectorisable log on PoCL's CPUs).
_LOGS = ("log", "log2", "log10", "log1p")


def _float(fn, name=None):
    """OpenCL's `fn` for floats (the logarithms through helper 'logs'); the complex helper of
    ufunc `name` where it has one."""
    table = {_F: (f"ga_{fn}_{{T}}({{0}})", ("logs",)) if fn in _LOGS else (f"{fn}({{0}})", ())}
    if name in _COMPLEX:
        helpers = _COMPLEX[name]
        table["c"] = (f"ga_{helpers[-1]}_{{T}}({{0}})", helpers)
    return table


# Ties give the second operand, as numpy's loops do (maximum(-0.0, 0.0) is 0.0).
_NAN_MAX = "((({0}) > ({1}) || isnan({0})) ? ({0}) : ({1}))"
_NAN_MIN = "((({0}) < ({1}) || isnan({0})) ? ({0}) : ({1}))"

OPS = {
    # arithmetic
    "add": {"b": ("(({0}) | ({1}))", ()), "*": ("(({0}) + ({1}))", ())},
    "subtract": _same("(({0}) - ({1}))"),
    "multiply": {"b": ("(({0}) & ({1}))", ()), "c": ("ga_cmul_{T}({0}, {1})", ("cmul",)),
                 "*": ("(({0}) * ({1}))", ())},
    "true_divide": {_F: ("(({0}) / ({1}))", ()), "c": ("ga_cdiv_{T}({0}, {1})", ("cdiv",))},
    "floor_divide": {"i": ("ga_floordiv_{T}({0}, {1})", ("floordiv",)),
                     "u": ("(({1}) == 0 ? ({T})0 : ({T})(({0}) / ({1})))", ()),
                     _F: ("ga_floordivf_{T}({0}, {1})", ("floordivf",))},
    "remainder": {"i": ("ga_mod_{T}({0}, {1})", ("mod",)),
                  "u": ("(({1}) == 0 ? ({T})0 : ({T})(({0}) % ({1})))", ()),
                  _F: ("ga_modf_{T}({0}, {1})", ("modf",))},
    "fmod": {"i": ("ga_fmod_int_{T}({0}, {1})", ("fmod_int",)),
             "u": ("(({1}) == 0 ? ({T})0 : ({T})(({0}) % ({1})))", ()),
             _F: ("fmod({0}, {1})", ())},
    "power": {"i": ("ga_ipow_{T}({0}, {1})", ("ipow",)), "u": ("ga_ipow_{T}({0}, {1})", ("ipow",)),
              _F: ("ga_pow_{T}({0}, {1})", ("logs", "pow")), "c": _CPOW},
    "float_power": {_F: ("pow({0}, {1})", ()), "c": _CPOW},
    "negative": {"i": ("(({T})-({0}))", ()), "u": ("(({T})-({0}))", ()), _F: ("(-({0}))", ()),
                 "c": ("(-({0}))", ())},
    "positive": {"i": ("({0})", ()), "u": ("({0})", ()), _F: ("({0})", ()), "c": ("({0})", ())},
    "absolute": {"b": ("({0})", ()), "u": ("({0})", ()), "i": ("(({T})abs({0}))", ()),
                 _F: ("fabs({0})", ()), "c": ("hypot(({0}).s0, ({0}).s1)", ())},
    "fabs": _float("fabs"),
    "sign": {"i": ("(({T})((({0}) > 0) - (({0}) < 0)))", ()), "u": ("(({T})(({0}) > 0))", ()),
             _F: ("(isnan({0}) ? ({0}) : ({T})((({0}) > 0) - (({0}) < 0)))", ()),
             "c": ("ga_csign_{T}({0})", ("csign",))},
    "reciprocal": {"i": ("(({0}) == 0 ? ({T})0 : ({T})(1 / ({0})))", ()),
                   "u": ("(({0}) == 0 ? ({T})0 : ({T})(1 / ({0})))", ()),
                   _F: ("(1 / ({0}))", ()), "c": ("ga_cdiv_{T}(({T})(1, 0), {0})", ("cdiv",))},
    "square": {"b": ("({0})", ()), "c": ("ga_cmul_{T}({0}, {0})", ("cmul",)),
               "*": ("(({0}) * ({0}))", ())},
    # exponents, logarithms, trigonometry
    **{name: _float(fn, name) for name, fn in [
        ("sqrt", "sqrt"), ("cbrt", "cbrt"), ("exp", "exp"), ("exp2", "exp2"), ("expm1", "expm1"),
        ("log", "log"), ("log2", "log2"), ("log10", "log10"), ("log1p", "log1p"),
        ("sin", "sin"), ("cos", "cos"), ("tan", "tan"), ("arcsin", "asin"), ("arccos", "acos"),
        ("arctan", "atan"), ("sinh", "sinh"), ("cosh", "cosh"), ("tanh", "tanh"),
        ("arcsinh", "asinh"), ("arccosh", "acosh"), ("arctanh", "atanh"),
    ]},
    "rint": {_F: ("rint({0})", ()), "c": ("(({T})(rint(({0}).s0), rint(({0}).s1)))", ())},
    # numpy 2 keeps integers as they are (its integer loops are the identity)
    **{name: {_F: (f"{name}({{0}})", ()), "b": ("({0})", ()), "i": ("({0})", ()),
              "u": ("({0})", ())} for name in ("floor", "ceil", "trunc")},
    "logaddexp": {_F: ("ga_logaddexp_{T}({0}, {1})", ("logaddexp",))},
    "logaddexp2": {_F: ("ga_logaddexp2_{T}({0}, {1})", ("logaddexp2",))},
    "arctan2": {_F: ("atan2({0}, {1})", ())},
    "hypot": {_F: ("hypot({0}, {1})", ())},
    "deg2rad": {_F: ("(({0}) * ({T})0.017453292519943295)", ())},
    "rad2deg": {_F: ("(({0}) * ({T})57.29577951308232)", ())},
    "copysign": {_F: ("copysign({0}, {1})", ())},
    "nextafter": {_F: ("nextafter({0}, {1})", ())},
    # numpy < 2.5 returns x for equal float16 operands (C, and later numpy, return y)
    "_nextafter_half": {_F: ("ga_nextafter_half_{T}({0}, {1})", (
        "nextafter_half_keep_x" if np.signbit(np.nextafter(np.float16(-0.0), np.float16(0.0)))
        else "nextafter_half",))},
    "ldexp": {_F: ("ldexp({0}, (int)clamp((long)({1}), (long)INT_MIN, (long)INT_MAX))", ())},
    "heaviside": {_F: ("(isnan({0}) ? ({0}) : ({0}) == 0 ? ({1}) : ({T})(({0}) > 0))", ())},
    # comparisons and extrema
    "maximum": {"c": None, _F: (_NAN_MAX, ()), "b": ("(({0}) | ({1}))", ()),
                "*": ("(({0}) >= ({1}) ? ({0}) : ({1}))", ())},
    "minimum": {"c": None, _F: (_NAN_MIN, ()), "b": ("(({0}) & ({1}))", ()),
                "*": ("(({0}) <= ({1}) ? ({0}) : ({1}))", ())},
    "fmax": {"c": None, _F: ("((({0}) >= ({1}) || isnan({1})) ? ({0}) : ({1}))", ()),
             "b": ("(({0}) | ({1}))", ()), "*": ("(({0}) >= ({1}) ? ({0}) : ({1}))", ())},
    "fmin": {"c": None, _F: ("((({0}) <= ({1}) || isnan({1})) ? ({0}) : ({1}))", ()),
             "b": ("(({0}) & ({1}))", ()), "*": ("(({0}) <= ({1}) ? ({0}) : ({1}))", ())},
    "clip": {"c": None, _F: (_NAN_MIN.format(_NAN_MAX, "{2}"), ()),
             "*": ("min(max(({0}), ({1})), ({2}))", ())},
    "greater": {"c": None, "*": ("(({0}) > ({1}))", ())},
    "greater_equal": {"c": None, "*": ("(({0}) >= ({1}))", ())},
    "less": {"c": None, "*": ("(({0}) < ({1}))", ())},
    "less_equal": {"c": None, "*": ("(({0}) <= ({1}))", ())},
    "equal": {"c": ("((({0}).s0 == ({1}).s0) & (({0}).s1 == ({1}).s1))", ()),
              "*": ("(({0}) == ({1}))", ())},
    "not_equal": {"c": ("((({0}).s0 != ({1}).s0) | (({0}).s1 != ({1}).s1))", ()),
                  "*": ("(({0}) != ({1}))", ())},
    "isnan": {_F: ("isnan({0})", ()), "c": ("(isnan(({0}).s0) | isnan(({0}).s1))", ()),
              "*": ("0", ())},
    "isinf": {_F: ("isinf({0})", ()), "c": ("(isinf(({0}).s0) | isinf(({0}).s1))", ()),
              "*": ("0", ())},
    "isfinite": {_F: ("isfinite({0})", ()),
                 "c": ("(isfinite(({0}).s0) & isfinite(({0}).s1))", ()), "*": ("1", ())},
    "signbit": {_F: ("signbit({0})", ())},
    # logic and bits
    "logical_and": {"c": None, "*": ("(({0}) && ({1}))", ())},
    "logical_or": {"c": None, "*": ("(({0}) || ({1}))", ())},
    "logical_xor": {"c": None, "*": ("(!({0}) != !({1}))", ())},
    "logical_not": {"c": None, "*": ("(!({0}))", ())},
    "bitwise_and": {"b": ("(({0}) & ({1}))", ()), "i": ("(({0}) & ({1}))", ()),
                    "u": ("(({0}) & ({1}))", ())},
    "bitwise_or": {"b": ("(({0}) | ({1}))", ()), "i": ("(({0}) | ({1}))", ()),
                   "u": ("(({0}) | ({1}))", ())},
    "bitwise_xor": {"b": ("(({0}) ^ ({1}))", ()), "i": ("(({0}) ^ ({1}))", ()),
                    "u": ("(({0}) ^ ({1}))", ())},
    "invert": {"b": ("(!({0}))", ()), "i": ("(({T})~({0}))", ()), "u": ("(({T})~({0}))", ())},
    "left_shift": {"i": ("ga_lshift_{T}({0}, {1})", ("lshift",)),
                   "u": ("ga_lshift_{T}({0}, {1})", ("lshift",))},
    "right_shift": {"i": ("ga_rshift_{T}({0}, {1})", ("rshift",)),
                    "u": ("ga_rshift_{T}({0}, {1})", ("rshift",))},
    # complex parts
    "conjugate": {"c": ("(({T})(({0}).s0, -({0}).s1))", ()), "*": ("({0})", ())},
    "where": _same("(({0}) ? ({1}) : ({2}))"),
    "_round_scale": {_F: ("(scale >= 0 ? rint(({0}) * scale) / scale "
                          ": rint(({0}) / -scale) * -scale)", ())},
    "_nan_to_num": {_F: ("(isnan({0}) ? ({T})nan_value : isinf({0}) ? "
                         "(({0}) > 0 ? ({T})posinf : ({T})neginf) : ({0}))", ())},
}


def snippet(name, kind):
    """(expression, helpers) for ufunc `name` on loop kind `kind`, or None if unsupported."""
    table = OPS[name]
    return table.get(kind, table.get("*")) if kind in table or "*" in table else None


# Comparisons of a signed with an unsigned integer, exact as numpy 2 makes them:
# name -> (signed first, unsigned first); {s} is the signed operand, {u} the unsigned one.
_MIXED_SIGN = {
    "less": ("({s} < 0 || (ulong)({s}) < {u})", "({s} >= 0 && {u} < (ulong)({s}))"),
    "less_equal": ("({s} < 0 || (ulong)({s}) <= {u})", "({s} >= 0 && {u} <= (ulong)({s}))"),
    "greater": ("({s} >= 0 && (ulong)({s}) > {u})", "({s} < 0 || {u} > (ulong)({s}))"),
    "greater_equal": ("({s} >= 0 && (ulong)({s}) >= {u})", "({s} < 0 || {u} >= (ulong)({s}))"),
    "equal": ("({s} >= 0 && (ulong)({s}) == {u})",) * 2,
    "not_equal": ("({s} < 0 || (ulong)({s}) != {u})",) * 2,
}


def expression(name, operands, kind_dtype, loops=None):
    """(expression, helpers) of ufunc `name` over the OpenCL operand expressions, or None.

    kind_dtype: the dtype name whose kind picks the snippet and whose compute type is {T};
    loops: the operands' loop dtype names, where they differ (mixed-sign comparisons).
    """
    from ..dtypes import compute_type

    if loops and name in _MIXED_SIGN and len(loops) == 2:
        kinds = "".join(np.dtype(d).kind for d in loops)
        if kinds in ("iu", "ui"):
            a, b = (f"({o})" for o in operands)
            signed_first = kinds == "iu"
            template = _MIXED_SIGN[name][0 if signed_first else 1]
            s, u = (a, b) if signed_first else (b, a)
            return template.format(s=s, u=u), ()
    if name == "nextafter" and kind_dtype == "float16":
        name = "_nextafter_half"
    found = snippet(name, np.dtype(kind_dtype).kind)
    if found is None:
        return None
    expr, helpers = found
    t = compute_type(kind_dtype)
    return expr.format(*operands, T=t), tuple((h, t) for h in helpers)


def operation(name, in_loops, kind_dtype):
    """(statement, helpers) for ufunc `name`: `out0 = <snippet>;` over in0.., or None."""
    found = expression(name, [f"in{k}" for k in range(len(in_loops))], kind_dtype, in_loops)
    if found is None:
        return None
    return f"out0 = {found[0]};", found[1]
