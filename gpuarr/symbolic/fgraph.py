"""FunctionGraph (the graph a function computes) and `rebuild`, the one way rewrites
make a new graph from an old one (the user's graph is never changed)."""

from .graph import clients, toposort

__all__ = ["FunctionGraph", "rebuild", "remake"]


class FunctionGraph:
    """inputs: the function's inputs, then the shared variables it reads; outputs: the
    function's outputs, then the new values of its updates."""

    def __init__(self, inputs, outputs):
        self.inputs = list(inputs)
        self.outputs = list(outputs)
        self._order = toposort(self.outputs)
        self._clients = clients(self._order)

    def toposort(self):
        """The applied nodes, each after those computing its inputs."""
        return list(self._order)

    @property
    def apply_nodes(self):
        return set(self._order)

    @property
    def variables(self):
        found = set(self.inputs) | set(self.outputs)
        for node in self._order:
            found.update(node.inputs)
            found.update(node.outputs)
        return found

    def clients(self, var):
        return list(self._clients.get(var, ()))

    def __repr__(self):
        return f"FunctionGraph({', '.join(str(n) for n in self._order)})"


def remake(node, inputs, op=None):
    """The outputs of `op` (default node.op) on `inputs`: node's own when nothing changed."""
    op = node.op if op is None else op
    if op is node.op and all(a is b for a, b in zip(inputs, node.inputs)):
        return node.outputs
    new = op.make_node(*inputs).outputs
    for old, var in zip(node.outputs, new):
        if var.name is None:
            var.name = old.name
    return new


def rebuild(outputs, transform, memo=None):
    """A new graph for `outputs`: transform(node, new_inputs) gives the new outputs of each
    node, visited in topological order. `memo` maps old variables to given replacements;
    the walk does not go behind them."""
    memo = dict(memo or {})
    for node in toposort(outputs, blockers=memo):
        outs = transform(node, [memo.get(v, v) for v in node.inputs])
        for old, new in zip(node.outputs, outs):
            memo.setdefault(old, new)
    return [memo.get(v, v) for v in outputs], memo
