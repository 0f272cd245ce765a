"""debugprint: the graph of a variable, of several, or of a compiled function, as Theano
prints it (one line per node, inputs indented below, `[id X]` naming repeated nodes)."""

import string
import sys

from .function import Function

__all__ = ["debugprint"]


def _ids():
    letters = string.ascii_uppercase
    k = 0
    while True:
        n, name = k, ""
        while True:
            name = letters[n % 26] + name
            n = n // 26 - 1
            if n < 0:
                break
        yield name
        k += 1


def debugprint(obj, file=None, print_type=False):
    """Print the graph of `obj` (a variable, a list of them, or a compiled function) and
    return the text. A function's nodes end with their position in its toposort."""
    order = None
    if isinstance(obj, Function):
        outputs = obj.maker.fgraph.outputs
        order = {node: k for k, node in enumerate(obj.maker.fgraph.toposort())}
    elif isinstance(obj, list | tuple):
        outputs = list(obj)
    else:
        outputs = [obj]
    ids, names, done, lines = _ids(), {}, set(), []

    def ident(v):
        key = v.owner if v.owner is not None else v
        if key not in names:
            names[key] = next(ids)
        return names[key]

    def label(v):
        kind = f" <{v.type}>" if print_type else ""
        if v.owner is None:
            return f"{v} [id {ident(v)}]{kind}"
        node = v.owner
        out = f".{v.index}" if len(node.outputs) > 1 else ""
        pos = f"   {order[node]}" if order is not None and node in order else ""
        return f"{node.op}{out} [id {ident(v)}] '{v.name or ''}'{kind}{pos}"

    def walk(v, first, rest):
        lines.append(first + label(v))
        node = v.owner
        if node is None or node in done:
            return
        done.add(node)
        for k, child in enumerate(node.inputs):
            last = k == len(node.inputs) - 1
            walk(child, rest + " |", rest + ("  " if last else " |"))
    for v in outputs:
        walk(v, "", "")
    text = "\n".join(lines)
    print(text, file=sys.stdout if file is None else file)
    return text
