"""YAML read with a bound on alias expansion, so a 1 KB file of nested anchors cannot take the bot down.

PyYAML builds an alias as a shared reference, so parsing a "billion laughs" file is cheap; what is
not is everything after it (walking refs, rendering, storing), which sees every expansion. Each
composed document is measured before it is built: the nodes it stands for, counting an alias once
per use, may exceed the distinct nodes of the file only by a bounded allowance. Recursive aliases
(a node containing itself) are refused too: a walker over them never ends.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import yaml
from yaml.nodes import MappingNode, Node, SequenceNode

# Legitimate anchors (`<<: *defaults` in every entity) grow with the file; a bomb does not.
EXTRA_NODES_ALLOWED = 100_000
EXTRA_PER_DISTINCT_NODE = 10


class AliasBombError(yaml.MarkedYAMLError):
    """A document whose aliases expand past the bound, or refer to themselves; marked where it starts."""


class _Budget:
    def __init__(self) -> None:
        self.distinct = 0
        self.expanded = 0

    def over(self) -> bool:
        return self.expanded > EXTRA_NODES_ALLOWED + EXTRA_PER_DISTINCT_NODE * self.distinct


def load_all_bounded(text: str, loader: Any) -> Iterator[object]:
    """`yaml.load_all(text, Loader=loader)`, raising AliasBombError for a document past the bound."""
    if "&" not in text:  # no anchor, so no alias: nothing to measure (the cold load of a big catalog)
        yield from yaml.load_all(text, Loader=loader)
        return
    parser = loader(text)
    budget = _Budget()
    try:
        while parser.check_node():
            node = parser.get_node()
            if node is not None:
                measure(node, budget)
            yield parser.construct_document(node)
    finally:
        parser.dispose()


def compose_bounded(text: str, loader: Any) -> Node | None:
    """`yaml.compose(text, Loader=loader)`, raising AliasBombError past the bound."""
    node: Node | None = yaml.compose(text, Loader=loader)
    if node is not None and "&" in text:
        measure(node, _Budget())
    return node


def measure(root: Node, budget: _Budget) -> None:
    """Add the document's distinct and expanded node counts to `budget`; raise once it is over.

    Iterative, with the size of each distinct node computed once: linear in the distinct nodes.
    """
    sizes: dict[int, int] = {}
    open_nodes: set[int] = set()
    stack: list[tuple[Node, Iterator[Node]]] = [(root, _children(root))]
    open_nodes.add(id(root))
    while stack:
        node, children = stack[-1]
        child = next(children, None)
        if child is None:
            stack.pop()
            open_nodes.discard(id(node))
            sizes[id(node)] = 1 + sum(sizes[id(c)] for c in _children(node))
            budget.distinct += 1
            continue
        if id(child) in open_nodes:
            raise _refused(child, "an alias refers to the node that contains it (a recursive alias)")
        if id(child) not in sizes:
            open_nodes.add(id(child))
            stack.append((child, _children(child)))
    budget.expanded += sizes[id(root)]
    if budget.over():
        allowed = EXTRA_NODES_ALLOWED + EXTRA_PER_DISTINCT_NODE * budget.distinct
        raise _refused(root, f"its aliases expand to more than {allowed:,} nodes (a YAML alias bomb?)")


def _children(node: Node) -> Iterator[Node]:
    if isinstance(node, SequenceNode):
        yield from node.value
    elif isinstance(node, MappingNode):
        for key, value in node.value:
            yield key
            yield value


def _refused(node: Node, problem: str) -> AliasBombError:
    return AliasBombError(None, None, f"refused: {problem}", node.start_mark)
