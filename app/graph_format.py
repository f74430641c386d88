"""The graph as both processes write and read it: which variables name a node, and what a node reaches.

The lesson process describes its autograd graph in these terms (``app.lesson.autograd_graph``)
and the app reads them back (:mod:`app.history`, :mod:`app.graph_model`); the helpers here
work on either side's nodes, so the two sides cannot drift apart.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from typing import TypeVar

Node = TypeVar("Node", bound=Hashable)


def names_by_node(roots: dict[str, int]) -> dict[int, list[str]]:
    """The variables naming each node, in ``roots`` order (as the graph tracker lists them)."""
    by_node: dict[int, list[str]] = {}
    for name, node_id in roots.items():
        by_node.setdefault(node_id, []).append(name)
    return by_node


def reachable(starts: Iterable[Node], successors: Callable[[Node], Iterable[Node]]) -> list[Node]:
    """Every node reachable from ``starts`` (each once, starts first, depth first) through ``successors``."""
    seen: set[Node] = set()
    order: list[Node] = []
    stack = list(starts)
    while stack:
        node = stack.pop()
        if node in seen:
            continue
        seen.add(node)
        order.append(node)
        stack.extend(successors(node))
    return order
