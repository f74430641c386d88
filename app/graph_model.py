"""The autograd graph of the step in view, held once for every view that shows it.

The window feeds a :class:`GraphModel` each graph change once: a whole graph when another
step comes into view (:meth:`GraphModel.set_graph`), a pause's diff otherwise
(:meth:`GraphModel.apply_diff`). The graph view draws it and the Backward panel names where
gradients go from the same object; neither keeps a copy. Besides the graph it owns what the
learner points at in it: the selected node, the highlighted ones, the node a backward
replay is at, and the leaves a backward would write ``.grad`` into.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from app.events import Event
from app.graph_format import reachable

EMPTY: dict[str, Any] = {"nodes": [], "edges": [], "roots": {}, "leaves": {}}


class GraphModel:
    """One graph, its marks, and an :class:`~app.events.Event` for each kind of change.

    Events
    ------
    replaced()
        A whole graph replaced the one before (read :attr:`nodes`, :attr:`new`).
    changed(diff)
        A pause's diff was applied; ``diff`` says what was added, removed and updated.
    selected(node_id)
        The learner selected a node (None: no node).
    highlighted()
        :attr:`highlighted` changed.
    active_changed(node_id)
        A backward replay moved to another node (None: no replay).
    leaves_waiting()
        :attr:`waiting_leaves` or :attr:`in_backward` changed.
    """

    def __init__(self) -> None:
        self.nodes: dict[int, dict[str, Any]] = {}
        """Node dicts by id, in the order the lesson made them."""
        self.roots: dict[str, int] = {}
        """Variable name → the node of its ``grad_fn`` (or its leaf)."""
        self.leaves: dict[int, str] = {}
        """Leaf node id → the variable it accumulates into."""
        self.new: set[int] = set()
        """The nodes the step in view made."""
        self.past: int | None = None
        """The run's step whose recorded graph this is; None for the live graph."""
        self.selected: int | None = None
        self.active: int | None = None
        """The node a backward replay is at."""
        self.highlighted: set[int] = set()
        self.highlighted_variable: str | None = None
        """The variable whose subgraph :attr:`highlighted` is, kept through later diffs."""
        self.waiting_leaves: list[str] = []
        """The step's tensors that require grad and have no ``grad_fn``: where a backward would write."""
        self.used_leaves: list[str] = []
        """Those of :attr:`waiting_leaves` that have a ``.grad`` already: a graph that used them is gone."""
        self.in_backward = False
        self.replaced = Event()
        self.changed = Event()
        self.selected_changed = Event()
        self.highlight_changed = Event()
        self.active_changed = Event()
        self.leaves_waiting = Event()

    # ---- the graph ------------------------------------------------------------------------

    def set_graph(self, graph: Mapping[str, Any], new: Iterable[int] = (), past: int | None = None) -> None:
        """Replace the graph by ``graph`` (``{"nodes", "edges", "roots", "leaves"}``).

        ``new`` are the nodes the step made; ``past`` the run's step when this is a recorded graph.
        """
        self.past = past
        self.nodes = {int(node["id"]): node for node in graph.get("nodes", [])}
        self.roots = dict(graph.get("roots", {}))
        self.leaves = {int(i): name for i, name in graph.get("leaves", {}).items()}
        self.new = {int(i) for i in new} & self.nodes.keys()
        self.selected = self.selected if self.selected in self.nodes else None
        self.active = None
        self._rehighlight()
        self.replaced.emit()

    def clear(self) -> None:
        """No graph (a new run, before its first pause)."""
        self.set_graph(EMPTY)
        self.set_waiting_leaves([])

    def apply_diff(self, diff: Mapping[str, Any]) -> None:
        """Bring the graph up to date with one pause's diff.

        An unchanged diff still ends the last step's "new" marks. Nodes removed lose their
        selection and replay marks; a highlighted variable's subgraph follows the change.
        """
        self.new = set()
        if diff.get("changed", True):
            for node_id in diff.get("removed", []):
                self.nodes.pop(int(node_id), None)
            for node in diff.get("added", []):
                self.nodes[int(node["id"])] = node
                self.new.add(int(node["id"]))
            for node in diff.get("updated", []):
                if int(node["id"]) in self.nodes:
                    self.nodes[int(node["id"])] = node
            self.roots = dict(diff.get("roots", self.roots))
            self.leaves = {int(i): name for i, name in diff.get("leaves", self.leaves).items()}
            for node_id, name in self.leaves.items():  # a leaf renamed without being sent again
                node = self.nodes.get(node_id)
                if node is not None and node.get("variable") != name:
                    self.nodes[node_id] = {**node, "variable": name}
            if self.selected not in self.nodes:
                self.selected = None
            if self.active not in self.nodes:
                self.active = None
        self.changed.emit(diff)
        if self.highlighted_variable is not None and diff.get("changed", True):
            self._rehighlight()
            self.highlight_changed.emit()

    def creation_order(self) -> list[int]:
        """The nodes in the order the lesson made them: by autograd's sequence number, a leaf just before
        the first node that uses it (a leaf's node has no number; it is made on first use)."""
        def key(node_id: int) -> tuple[float, int]:
            seq = self.nodes[node_id].get("seq")
            if seq is None:
                users = [self.nodes[i].get("seq") for i in self.consumers(node_id)]
                numbered = [s for s in users if s is not None]
                seq = min(numbered) - 0.5 if numbered else float("inf")
            return (seq, node_id)
        return sorted(self.nodes, key=key)

    def edges(self) -> list[tuple[int, int, int]]:
        """``(from_id, to_id, input_nr)`` for each node's inputs that are in the graph, in node order."""
        return [(node_id, child, nr) for node_id, node in self.nodes.items()
                for child, nr in node.get("next", ()) if child in self.nodes]

    def inputs(self, node_id: int) -> list[int]:
        """The nodes ``node_id``'s gradients flow to (its ``next_functions`` in the graph), in order."""
        return [child for child, _ in self.nodes.get(node_id, {}).get("next", ()) if child in self.nodes]

    def consumers(self, node_id: int) -> list[int]:
        """The nodes that take ``node_id``'s output as an input, in creation order."""
        return [other for other, node in self.nodes.items()
                if any(child == node_id for child, _ in node.get("next", ()))]

    def step_from(self, node_id: int | None, way: str) -> int | None:
        """The node one keyboard step from ``node_id`` along the graph, or None when there is none.

        ``way`` is "input" (the first node its gradients flow to), "consumer" (the first node
        that takes its output), "next" or "previous" (a sibling: the next or previous input of
        the same consumer, wrapping around). From no node, any way leads to the newest output.
        """
        if node_id not in self.nodes:
            outputs = [i for i in self.nodes if not self.consumers(i)]
            return outputs[-1] if outputs else None
        if way == "input":
            return next(iter(self.inputs(node_id)), None)
        consumers = self.consumers(node_id)
        if way == "consumer":
            return consumers[0] if consumers else None
        siblings = self.inputs(consumers[0]) if consumers else [i for i in self.nodes if not self.consumers(i)]
        if len(siblings) < 2:
            return None
        shift = 1 if way == "next" else -1
        return siblings[(siblings.index(node_id) + shift) % len(siblings)]

    def reach(self, node_id: int) -> set[int]:
        """``node_id`` and every node its gradients reach."""
        return set(reachable([node_id], self.inputs)) if node_id in self.nodes else set()

    def node_of(self, variable: str) -> int | None:
        """The node a variable names: its ``grad_fn`` or, for a leaf, its leaf node."""
        node_id = self.roots.get(variable)
        if node_id is None:
            node_id = next((i for i, name in self.leaves.items() if name == variable), None)
        if node_id is None:
            node_id = next((i for i, node in self.nodes.items() if node.get("variable") == variable), None)
        return node_id if node_id in self.nodes else None

    def names_of(self, node_id: int) -> list[str]:
        """The variables that name ``node_id`` (its ``grad_fn`` holders, or the leaf's variable)."""
        node = self.nodes.get(node_id, {})
        names = [name for name, root in self.roots.items() if root == node_id]
        leaf = self.leaves.get(node_id) or node.get("variable")
        return names or ([leaf] if leaf else [])

    # ---- what the learner points at -------------------------------------------------------

    def select(self, node_id: int | None) -> None:
        """Select a node (None: none); a node not in the graph selects nothing."""
        node_id = node_id if node_id in self.nodes else None
        if node_id != self.selected:
            self.selected = node_id
            self.selected_changed.emit(node_id)

    def highlight(self, ids: Iterable[int]) -> None:
        """Outline these nodes (an empty list clears the highlight)."""
        self.highlighted_variable = None
        self._set_highlight({int(i) for i in ids} & self.nodes.keys())

    def highlight_variable(self, name: str | None) -> None:
        """Outline a variable's subgraph (its node and all it reaches), kept through later diffs; None clears."""
        self.highlighted_variable = name
        self._set_highlight(self._variable_subgraph())

    def set_active(self, node_id: int | None) -> None:
        """Mark the node a backward replay is at (None: no replay)."""
        node_id = node_id if node_id in self.nodes else None
        if node_id != self.active:
            self.active = node_id
            self.active_changed.emit(node_id)

    def set_waiting_leaves(self, names: list[str], in_backward: bool = False, used: list[str] | None = None) -> None:
        """The step's leaves a backward would write ``.grad`` into, whether a backward pass is running, and those of
        the leaves that have a ``.grad`` already (a backward ran through a graph that used them, freed since)."""
        used = list(used or ())
        if names != self.waiting_leaves or in_backward != self.in_backward or used != self.used_leaves:
            self.waiting_leaves, self.in_backward, self.used_leaves = list(names), in_backward, used
            self.leaves_waiting.emit()

    def _variable_subgraph(self) -> set[int]:
        name = self.highlighted_variable
        node_id = self.node_of(name) if name is not None else None
        return self.reach(node_id) if node_id is not None else set()

    def _rehighlight(self) -> None:
        if self.highlighted_variable is not None:
            self.highlighted = self._variable_subgraph()
        else:
            self.highlighted &= self.nodes.keys()

    def _set_highlight(self, ids: set[int]) -> None:
        if ids != self.highlighted:
            self.highlighted = ids
            self.highlight_changed.emit()
