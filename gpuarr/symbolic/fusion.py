"""Elementwise fusion: connected GpuElemwise nodes of one context become one node whose
program runs as a single kernel (gpuarr.fuse), reading each input once and writing only
the values read elsewhere (several outputs when needed).

A producer joins its consumer's group unless that would make a cycle (a path from the
producer to the group through an op outside it), or the group would need more than
MAX_OPERANDS arrays. A value read outside the group becomes an extra output only when its
broadcastable pattern is the group's: every output of one kernel has the kernel's shape.
Then sibling groups merge (same context, no path between them) when they read a common
input of their own pattern, which proves that their outputs have one shape.
"""

from .elemwise import GpuElemwise, Program
from .graph import toposort

__all__ = ["MAX_OPERANDS", "fuse_elemwise"]

MAX_OPERANDS = 32


def _is_elemwise(node, ctx=None):
    return node is not None and isinstance(node.op, GpuElemwise) and (
        ctx is None or node.op.ctx is ctx)


class _Group:
    def __init__(self, node):
        self.nodes = {node}
        self.pattern = (node.outputs[0].ndim, node.outputs[0].broadcastable)
        self.ctx = node.op.ctx


def fuse_elemwise(outputs):
    """`outputs` computed with fused GpuElemwise nodes."""
    order = toposort(outputs)
    pos = {node: k for k, node in enumerate(order)}
    readers = {}
    for node in order:
        for v in node.inputs:
            readers.setdefault(v, []).append(node)
    wanted = set(outputs)
    group_of = {}

    def reaches(group):
        """Whether a path leaves the group and comes back (fusing would make a cycle)."""
        limit = max(pos[n] for n in group.nodes)
        stack = [r for n in group.nodes for o in n.outputs for r in readers.get(o, ())
                 if r not in group.nodes]
        seen = set()
        while stack:
            n = stack.pop()
            if n in group.nodes:
                return True
            if n in seen or pos[n] > limit:
                continue
            seen.add(n)
            stack += [r for o in n.outputs for r in readers.get(o, ())]
        return False

    def operands(group):
        ins = {v for n in group.nodes for v in n.inputs
               if v.owner not in group.nodes and not (v.ndim == 0 and v.type.on_host)}
        outs = {o for n in group.nodes for o in n.outputs
                if o in wanted or any(r not in group.nodes for r in readers.get(o, ()))}
        return len(ins) + len(outs)

    def absorb(p, group):
        read_outside = any(o in wanted or any(r not in group.nodes for r in readers.get(o, ()))
                           for o in p.outputs)
        if read_outside and (p.outputs[0].ndim, p.outputs[0].broadcastable) != group.pattern:
            return False
        group.nodes.add(p)
        if operands(group) > MAX_OPERANDS or reaches(group):
            group.nodes.discard(p)
            return False
        group_of[p] = group
        return True

    for node in reversed(order):
        if not _is_elemwise(node) or node in group_of:
            continue
        # join the group of a producer (fused earlier into a later consumer's group) ...
        group = next((group_of[v.owner] for v in node.inputs if v.owner in group_of
                      and group_of[v.owner].ctx is node.op.ctx
                      and absorb(node, group_of[v.owner])), None)
        if group is None:  # ... or start one
            group = group_of[node] = _Group(node)
        grown = True
        while grown:
            grown = False
            for member in sorted(group.nodes, key=pos.get, reverse=True):
                for v in member.inputs:
                    p = v.owner
                    if (_is_elemwise(p, group.ctx) and p not in group_of
                            and absorb(p, group)):
                        grown = True

    # Siblings: groups that read a common input of their own broadcastable pattern compute
    # values of that input's shape, so one kernel can serve them (reading it once).
    groups = list(dict.fromkeys(group_of.values()))
    by_input = {}
    for group in groups:
        for v in {v for n in group.nodes for v in n.inputs if v.owner not in group.nodes}:
            if (v.ndim, v.broadcastable) == group.pattern:
                by_input.setdefault(v, []).append(group)
    merged = set()
    for group in groups:
        if id(group) in merged:
            continue
        for v in [v for v, gs in by_input.items() if group in gs]:
            for other in by_input[v]:
                if (other is group or id(other) in merged or other.ctx is not group.ctx
                        or other.pattern != group.pattern):
                    continue
                group.nodes |= other.nodes
                if operands(group) > MAX_OPERANDS or reaches(group):
                    group.nodes -= other.nodes
                    continue
                merged.add(id(other))
                for n in other.nodes:
                    group_of[n] = group
    return _rebuild(outputs, order, pos, group_of, readers, wanted)


def _rebuild(outputs, order, pos, group_of, readers, wanted):
    groups = {id(g): g for g in group_of.values() if len(g.nodes) > 1}
    memo = {}
    # A fused node is built when its last member comes up in the order; its members'
    # outputs read elsewhere may be needed earlier by nodes placed between members, so
    # nodes are emitted in an order where every group sits after all its external inputs.
    for item in _super_order(order, group_of, groups):
        if isinstance(item, _Group):
            _emit_group(item, pos, readers, wanted, memo)
        else:
            new_inputs = [memo.get(v, v) for v in item.inputs]
            if all(a is b for a, b in zip(new_inputs, item.inputs)):
                outs = item.outputs
            else:
                outs = item.op.make_node(*new_inputs).outputs
            memo.update(zip(item.outputs, outs))
    return [memo.get(v, v) for v in outputs]


def _super_order(order, group_of, groups):
    """The nodes, with each fused group as one item, in a topological order."""
    def item_of(node):
        g = group_of.get(node)
        return g if g is not None and id(g) in groups else node

    def deps(item):
        nodes = item.nodes if isinstance(item, _Group) else (item,)
        for n in nodes:
            for v in n.inputs:
                if v.owner is not None:
                    d = item_of(v.owner)
                    if d is not item:
                        yield d

    found, done = [], set()
    for start in map(item_of, order):
        if id(start) in done:
            continue
        stack, active = [(start, deps(start))], {id(start)}
        while stack:
            item, it = stack[-1]
            for d in it:
                if id(d) not in done and id(d) not in active:
                    active.add(id(d))
                    stack.append((d, deps(d)))
                    break
            else:
                stack.pop()
                done.add(id(item))
                found.append(item)
    return found


def _emit_group(group, pos, readers, wanted, memo):
    members = sorted(group.nodes, key=pos.get)
    inputs, consts, steps, where = [], [], [], {}
    for node in members:
        prog = node.op.program
        local = {}
        for k, v in enumerate(node.inputs):
            if v in where:
                local[("i", k)] = where[v]
            else:
                new = memo.get(v, v)
                if new not in inputs:
                    inputs.append(new)
                local[("i", k)] = ("i", inputs.index(new))
        for k, c in enumerate(prog.consts):
            local[("c", k)] = ("c", len(consts))
            consts.append(c)
        for k, (name, refs) in enumerate(prog.steps):
            local[("s", k)] = ("s", len(steps))
            steps.append((name, tuple(local[r] for r in refs)))
        for o, ref in zip(node.outputs, prog.outs):
            where[o] = local[ref]
    outs = [o for n in members for o in n.outputs
            if o in wanted or any(r not in group.nodes for r in readers.get(o, ()))]
    program = Program(tuple(consts), tuple(type(c) for c in consts), tuple(steps),
                      tuple(where[o] for o in outs))
    fused = GpuElemwise(program)
    fused.ctx = group.ctx
    node = fused.make_node(*inputs)
    for old, new in zip(outs, node.outputs):
        new.name = old.name
        memo[old] = new
