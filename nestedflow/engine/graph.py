"""A deployment at a glance: a stack's dependency graph with each resource's
live state and check results (``nestedflow stack graph``).

:func:`build` reads the graph (nested stacks inside the resources that own
them); :func:`to_text` draws it for an 80-column terminal, one line per
resource in dependency order; :func:`to_dot` writes graphviz DOT, coloured
by state, each nested stack a cluster inside its parent resource.
"""

import dataclasses

from nestedflow import states
from nestedflow.db import check_results

#: Fill colours by status (and INIT: never acted on).
COLOURS = {states.COMPLETE: "palegreen", states.FAILED: "salmon", states.IN_PROGRESS: "gold",
           states.INIT: "lightgrey"}
#: Terminal marks by status.
MARKS = {states.COMPLETE: "+", states.FAILED: "!", states.IN_PROGRESS: "~", states.INIT: " "}


@dataclasses.dataclass
class Node:
    name: str
    type: str
    action: str
    status: str
    physical_id: str | None
    requires: list
    #: Latest result of each check: [(phase, check, status, message)].
    checks: list
    #: The nested stack this resource owns, if any.
    child: "Graph | None" = None

    @property
    def state(self):
        return states.INIT if self.action == states.INIT else f"{self.action}_{self.status}"

    @property
    def colour_key(self):
        return states.INIT if self.action == states.INIT else self.status

    @property
    def failed_checks(self):
        return [c for c in self.checks if c[2] == "FAIL"]


@dataclasses.dataclass
class Graph:
    id: str
    name: str
    state: str
    status_reason: str
    #: In dependency order: every node after those it requires.
    nodes: list


def build(engine, stack_id, context=None, max_depth=5):
    """The graph of ``stack_id`` and (down to ``max_depth``) its nested stacks."""
    return _build(engine, engine.get_stack(stack_id, context=context).id, max_depth)


def _build(engine, stack_id, depth):
    db = engine.db
    stack = db.get_stack(stack_id)
    rows = db.list_resources(stack_id)
    names = {row.id: row.name for row in rows}
    latest = {}
    for result in check_results.list_results(db, stack_id):
        latest[(result.resource_name, result.phase, result.check_name)] = result
    children = {}
    if depth > 0:
        children = {child.owner_resource: child for child in db.list_children(stack_id)
                    if child.deleted_at is None}
    nodes = {}
    for row in rows:
        checks = [(r.phase, r.check_name, r.status, r.message)
                  for (name, _, _), r in sorted(latest.items()) if name == row.name]
        child = children.get(row.name)
        nodes[row.name] = Node(
            name=row.name, type=row.type, action=row.action, status=row.status,
            physical_id=row.physical_id,
            requires=sorted(names[i] for i in row.requires if i in names),
            checks=checks, child=_build(engine, child.id, depth - 1) if child else None)
    return Graph(id=stack.id, name=stack.name, state=f"{stack.action}_{stack.status}",
                 status_reason=stack.status_reason or "", nodes=_ordered(nodes))


def _ordered(nodes):
    """Dependency order, by name within a level (a cycle cannot be stored)."""
    level = {}

    def depth(name, seen=()):
        if name not in level:
            deps = [d for d in nodes[name].requires if d in nodes and d not in seen]
            level[name] = 1 + max((depth(d, (*seen, name)) for d in deps), default=-1)
        return level[name]

    return sorted(nodes.values(), key=lambda node: (depth(node.name), node.name))


# -- terminal -----------------------------------------------------------------

def to_text(graph, width=80):
    """Lines for a terminal ``width`` columns wide."""
    lines = [_fit(f"{graph.name}  {graph.state}", width)]
    if graph.status_reason and not graph.state.endswith("_COMPLETE"):
        lines.append(_fit(f"  {graph.status_reason}", width))
    lines.extend(_node_lines(graph, "", width))
    return lines


def _node_lines(graph, indent, width):
    lines = []
    name_width = min(28, max((len(n.name) for n in graph.nodes), default=4))
    for node in graph.nodes:
        checks = ""
        if node.checks:
            passed = sum(c[2] == "PASS" for c in node.checks)
            checks = f" checks {passed}/{len(node.checks)}"
        after = f" <- {', '.join(node.requires)}" if node.requires else ""
        lines.append(_fit(f"{indent}[{MARKS[node.colour_key]}] {node.name:<{name_width}} "
                          f"{node.state:<16}{checks}{after}", width))
        for phase, check, _, message in node.failed_checks:
            lines.append(_fit(f"{indent}      {phase}-check {check!r} FAIL: {message}", width))
        if node.child is not None:
            lines.append(_fit(f"{indent}    {node.child.name}  {node.child.state}", width))
            lines.extend(_node_lines(node.child, indent + "    ", width))
    return lines


def _fit(line, width):
    line = line.rstrip()
    return line if len(line) <= width else line[:width - 3] + "..."


# -- DOT ----------------------------------------------------------------------

def to_dot(graph):
    """graphviz DOT: nodes filled by state, edges from a resource to what it
    requires, nested stacks as clusters inside the resource owning them."""
    out = ["digraph stack {", "  compound=true;", "  rankdir=BT;",
           '  node [shape=box, style="rounded,filled", fontname="Helvetica"];',
           f"  label={_quote(f'{graph.name} {graph.state}')}; labelloc=t;"]
    edges = []
    _dot_body(graph, out, edges, "  ")
    out.extend(edges)
    out.append("}")
    return "\n".join(out) + "\n"


def _node_id(graph, node):
    return _quote(f"{graph.id}/{node.name}")


def _anchor(graph, node):
    """What edges attach to: the node, or a nested stack cluster's anchor."""
    if node.child is None:
        return _node_id(graph, node), ""
    return _quote(f"{graph.id}/{node.name}/anchor"), f"cluster_{_safe(graph.id, node.name)}"


def _dot_body(graph, out, edges, indent):
    by_name = {node.name: node for node in graph.nodes}
    for node in graph.nodes:
        label = _label(node)
        colour = COLOURS[node.colour_key]
        if node.child is None:
            pen = ', color="red3", penwidth=2' if node.failed_checks else ""
            out.append(f"{indent}{_node_id(graph, node)} [label={_quote(label)}, "
                       f"fillcolor={colour}{pen}];")
        else:
            anchor, cluster = _anchor(graph, node)
            out.append(f"{indent}subgraph {cluster} {{")
            out.append(f"{indent}  label={_quote(label)}; style=filled; fillcolor={colour};")
            out.append(f"{indent}  {anchor} [shape=point, style=invis, label=\"\"];")
            _dot_body(node.child, out, edges, indent + "  ")
            out.append(f"{indent}}}")
        for dep in node.requires:
            if dep not in by_name:
                continue
            src, src_cluster = _anchor(graph, node)
            dst, dst_cluster = _anchor(graph, by_name[dep])
            attrs = []
            if src_cluster:
                attrs.append(f"ltail={src_cluster}")
            if dst_cluster:
                attrs.append(f"lhead={dst_cluster}")
            suffix = f" [{', '.join(attrs)}]" if attrs else ""
            edges.append(f"  {src} -> {dst}{suffix};")


def _label(node):
    parts = [node.name, node.type, node.state]
    if node.checks:
        passed = sum(c[2] == "PASS" for c in node.checks)
        parts.append(f"checks {passed}/{len(node.checks)} passed")
    parts.extend(f"FAIL {phase}-check {check}" for phase, check, _, _ in node.failed_checks)
    return "\n".join(parts)


def _quote(text):
    escaped = str(text).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
    return f'"{escaped}"'


def _safe(*parts):
    return "_".join("".join(c if c.isalnum() else "_" for c in part) for part in parts)
